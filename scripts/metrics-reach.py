#!/usr/bin/env python3
"""Who may reach the services' /metrics in rendered Kubernetes manifests (`kubectl kustomize`),
as network-config-analyzer (NCA, np-guard's NetworkPolicy analyzer) evaluates the rendered
NetworkPolicies. No cluster is needed.

    metrics-reach.py RENDER.yaml...        (run with the Python that has NCA installed)

In each render, with a few pods added around it:
- Prometheus: a pod as prometheus-operator makes it for kube-prometheus-stack, in the namespace
  and with the labels the render's NetworkPolicy `prometheus-scrape` names (its `from`
  entries; the only place they are configured, k8s/components/monitoring/network-policy.yaml).
  A render without that policy gets kube-prometheus-stack's defaults (namespace `monitoring`,
  `app.kubernetes.io/name: prometheus`);
- strangers: a pod in another namespace; a pod in the services' namespace with none of their
  labels; Alertmanager and Grafana beside Prometheus; a pod labelled like Prometheus in
  another namespace;

NCA must find that
1. Prometheus may connect to every pod the PodMonitor scrapes, on the port it scrapes
   (`permits`);
2. no stranger may connect to any pod of the namespace, on any port (`forbids`);
3. Prometheus may connect to nothing else: no other port of those pods, no other pod of the
   namespace (`forbids`).
Each is a set of NetworkPolicies written here as a specification (the connections it allows
are the question), and NCA answers whether the render's policies permit or forbid them.
Prints one line per render; on a failure NCA's report (the connections in question) and exit 1.
"""

import os
import re
import subprocess
import sys
import tempfile

import yaml

POLICY = "prometheus-scrape"
ROLE = "loyalty.test/role"  # marks the added pods for the specification policies
# kube-prometheus-stack installed as release `kube-prometheus-stack` into `monitoring`: the
# labels prometheus-operator puts on the Prometheus pods of the chart's Prometheus resource.
DEFAULT_PROMETHEUS = ({"kubernetes.io/metadata.name": "monitoring"}, {"app.kubernetes.io/name": "prometheus"})
OPERATOR_LABELS = {
    "app.kubernetes.io/name": "prometheus",
    "app.kubernetes.io/instance": "kube-prometheus-stack-prometheus",
    "app.kubernetes.io/managed-by": "prometheus-operator",
    "operator.prometheus.io/name": "kube-prometheus-stack-prometheus",
    "operator.prometheus.io/shard": "0",
    "prometheus": "kube-prometheus-stack-prometheus",
}
ELSEWHERE = "loyalty-test-elsewhere"
NOISE = re.compile(r"Warning: (A (namespace|pod)Selector selects no pods|Rule selects no pods|No ingress-nginx pods)")


def fail(message):
    print(f"metrics-reach: {message}", file=sys.stderr)
    sys.exit(1)


def prometheus_of(docs, namespace):
    """[(namespace labels, pod labels)] of each Prometheus the render lets in, and where from."""
    policies = [d for d in docs if d["kind"] == "NetworkPolicy" and d["metadata"]["name"] == POLICY]
    if not policies:
        return [DEFAULT_PROMETHEUS], f"no NetworkPolicy {POLICY}: kube-prometheus-stack's defaults"
    found = []
    for rule in policies[0]["spec"].get("ingress", []):
        for peer in rule.get("from", []):  # (a rule without `from` lets in every pod: query 2 says so)
            if "ipBlock" in peer:
                fail(f"{POLICY}: an ipBlock is no Prometheus pod this check can place: {peer}")
            selectors = [peer.get("namespaceSelector") or {}, peer.get("podSelector") or {}]
            if any(s.get("matchExpressions") for s in selectors):
                fail(f"{POLICY}: only matchLabels can be turned into a pod here: {peer}")
            ns_labels, pod_labels = (s.get("matchLabels", {}) for s in selectors)
            if "namespaceSelector" not in peer:
                fail(f"{POLICY}: a `from` entry without a namespaceSelector lets in pods of the services' own "
                     f"namespace ({namespace}), which is no Prometheus: {peer}")
            found.append((ns_labels, pod_labels))
    if not found:
        return [DEFAULT_PROMETHEUS], f"NetworkPolicy {POLICY} names no Prometheus: kube-prometheus-stack's defaults"
    return found, f"NetworkPolicy {POLICY}"


def pod(name, namespace, labels):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace, "labels": labels},
            "spec": {"containers": [{"name": "main", "image": "example.invalid/image"}]}}


def namespace_doc(labels):
    name = labels.get("kubernetes.io/metadata.name", "prometheus")
    return name, {"apiVersion": "v1", "kind": "Namespace",
                  "metadata": {"name": name, "labels": {**labels, "kubernetes.io/metadata.name": name}}}


def policy(name, namespace, pod_selector, peer_role, ports=None):
    """A specification: pods marked `peer_role`, in any namespace, to pod_selector's pods."""
    rule = {"from": [{"namespaceSelector": {}, "podSelector": {"matchLabels": {ROLE: peer_role}}}]}
    if ports is not None:
        rule["ports"] = ports
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"podSelector": pod_selector, "policyTypes": ["Ingress"], "ingress": [rule]}}


def all_but(port):
    """Every TCP port but `port`, and every UDP and SCTP port."""
    ranges = [(1, port - 1), (port + 1, 65535)]
    ports = [{"protocol": "TCP", "port": a, "endPort": b} for a, b in ranges if a <= b]
    return ports + [{"protocol": "UDP"}, {"protocol": "SCTP"}]


def scraped(docs):
    """{Deployment: (pod labels, port number)} of what the PodMonitor scrapes."""
    monitors = [d for d in docs if d["kind"] == "PodMonitor"]
    if len(monitors) != 1:
        fail(f"expected one PodMonitor, found {len(monitors)}")
    spec = monitors[0]["spec"]
    selector = spec["selector"].get("matchLabels", {})
    if not selector or spec["selector"].get("matchExpressions"):
        fail("the PodMonitor's selector is not plain matchLabels")
    port_names = {e["port"] for e in spec["podMetricsEndpoints"]}
    found = {}
    for dep in (d for d in docs if d["kind"] == "Deployment"):
        template = dep["spec"]["template"]
        labels = template["metadata"]["labels"]
        if selector.items() <= labels.items():
            ports = [p["containerPort"] for c in template["spec"]["containers"] for p in c.get("ports", [])
                     if p.get("name") in port_names]
            if len(ports) != 1:
                fail(f"Deployment {dep['metadata']['name']}: {len(ports)} ports named {sorted(port_names)}")
            found[dep["metadata"]["name"]] = (labels, ports[0])
    if not found:
        fail("the PodMonitor scrapes no Deployment")
    return selector, found


def check(render, nca, work):
    with open(render) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    namespaces = [d["metadata"]["name"] for d in docs if d["kind"] == "Namespace"]
    if len(namespaces) != 1:
        fail(f"{render}: expected one Namespace, found {namespaces}")
    ns = namespaces[0]
    selector, targets = scraped(docs)
    prometheus, source = prometheus_of(docs, ns)

    # The pods around the render.
    added, spaces = [], {ELSEWHERE: namespace_doc({"kubernetes.io/metadata.name": ELSEWHERE})[1]}
    for i, (ns_labels, pod_labels) in enumerate(prometheus):
        space, doc = namespace_doc(ns_labels)
        spaces[space] = doc
        labels = {**OPERATOR_LABELS, **pod_labels}
        added.append(pod(f"prometheus-{i}", space, {**labels, ROLE: "prometheus"}))
        # Prometheus's neighbours, and a pod labelled like it where it does not run.
        alertmanager = {**OPERATOR_LABELS, "app.kubernetes.io/name": "alertmanager",
                        "app.kubernetes.io/instance": "kube-prometheus-stack-alertmanager"}
        added.append(pod(f"alertmanager-{i}", space, {**alertmanager, ROLE: "stranger"}))
        added.append(pod(f"grafana-{i}", space, {"app.kubernetes.io/name": "grafana", ROLE: "stranger"}))
        added.append(pod(f"prometheus-lookalike-{i}", ELSEWHERE, {**labels, ROLE: "stranger"}))
    added.append(pod("stranger", ELSEWHERE, {ROLE: "stranger"}))
    added.append(pod("stranger", ns, {ROLE: "stranger"}))

    # The specifications.
    scrape = [policy(f"scrape-{name}", ns, {"matchLabels": labels}, "prometheus", [{"protocol": "TCP", "port": port}])
              for name, (labels, port) in sorted(targets.items())]
    strangers = [policy("strangers", ns, {}, "stranger")]
    # Every pod the PodMonitor does not select (one policy per label it requires: a pod that
    # lacks any of them), and every other port of those it does.
    rest = [policy(f"not-scraped-{i}", ns, {"matchExpressions": [{"key": k, "operator": "NotIn", "values": [v]}]},
                   "prometheus") for i, (k, v) in enumerate(sorted(selector.items()))]
    rest += [policy(f"other-ports-{name}", ns, {"matchLabels": labels}, "prometheus", all_but(port))
             for name, (labels, port) in sorted(targets.items())]

    shown = os.path.basename(render)
    base = os.path.join(work, shown.rsplit(".", 1)[0])
    files = {}
    for key, content in [("topology", list(spaces.values()) + added), ("scrape", scrape),
                         ("strangers", strangers), ("rest", rest)]:
        files[key] = f"{base}-{key}.yaml"
        with open(files[key], "w") as f:
            yaml.safe_dump_all(content, f, sort_keys=False)
    topology = [os.path.abspath(render), files["topology"]]
    # A query that NCA could not run (an empty specification) fails too; on a failure NCA lists
    # every connection in question, not only the first.
    query = {"expected": 0, "expectedNotExecuted": 0, "outputConfiguration": {"fullExplanation": True}}
    scheme = {
        "namespaceList": topology,
        "podList": topology,
        "networkConfigList": [
            {"name": "render", "networkPolicyList": [os.path.abspath(render)]},
            {"name": "prometheus-scrapes", "networkPolicyList": [files["scrape"]]},
            {"name": "strangers-reach", "networkPolicyList": [files["strangers"]]},
            {"name": "prometheus-reaches-more", "networkPolicyList": [files["rest"]]},
        ],
        "queries": [
            {"name": "1-prometheus-may-scrape-each-service", "permits": ["render", "prometheus-scrapes"], **query},
            {"name": "2-no-stranger-may-connect", "forbids": ["render", "strangers-reach"], **query},
            {"name": "3-prometheus-may-connect-to-nothing-else", "forbids": ["render", "prometheus-reaches-more"],
             **query},
        ],
    }
    files["scheme"] = f"{base}-scheme.yaml"
    with open(files["scheme"], "w") as f:
        yaml.safe_dump(scheme, f, sort_keys=False)
    run = subprocess.run([nca, "--scheme", files["scheme"]], capture_output=True, text=True)
    where = ", ".join(f"{d['metadata']['namespace']}/{d['metadata']['name']}" for d in added
                      if d["metadata"]["labels"][ROLE] == "prometheus")
    if run.returncode != 0:
        # Less NCA's remarks on the render's selectors that match none of these few pods.
        report = [line for line in (run.stdout + run.stderr).splitlines()
                  if line.strip() and not NOISE.search(line)]
        print("\n".join(report), file=sys.stderr)
        print(f"metrics-reach: {shown}: {run.returncode} of the 3 queries failed (above; Prometheus as {where}, "
              f"from {source})", file=sys.stderr)
        return False
    reached = ", ".join(f"{name} {port}" for name, (_, port) in sorted(targets.items()))
    print(f"{shown}: Prometheus ({where}, from {source}) reaches {reached} and nothing else; strangers reach nothing")
    return True


def main():
    if len(sys.argv) < 2:
        fail("usage: metrics-reach.py RENDER.yaml...")
    nca = os.path.join(os.path.dirname(sys.executable), "nca")
    if not os.access(nca, os.X_OK):
        fail(f"{nca} not found: run this with the Python of a virtualenv holding network-config-analyzer")
    with tempfile.TemporaryDirectory() as work:
        passed = [check(render, nca, work) for render in sys.argv[1:]]
    sys.exit(0 if all(passed) else 1)


if __name__ == "__main__":
    main()
