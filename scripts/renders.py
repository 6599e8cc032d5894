"""A render of the Kubernetes manifests (`kubectl kustomize`, a RENDER.yaml argument), read once
for the checks that take one: connection-budget.py and service-identities.py. Imported by them
(it lies beside them, on their sys.path), not run.
"""

import yaml


def read(path):
    """(by_kind, configmaps) of the render at `path`: its documents by kind, each kind's in the
    render's order, and each ConfigMap's data by name ({} where it has none). Empty documents
    (a stray `---`) are left out. Written once so that both checks see the same render."""
    with open(path) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    by_kind = {}
    for d in docs:
        by_kind.setdefault(d["kind"], []).append(d)
    configmaps = {c["metadata"]["name"]: c.get("data", {}) for c in by_kind.get("ConfigMap", [])}
    return by_kind, configmaps
