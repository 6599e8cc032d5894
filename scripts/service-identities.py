#!/usr/bin/env python3
"""Each service its own identity, in rendered Kubernetes manifests (`kubectl kustomize`).

    service-identities.py CALLERS BINARY RENDER.yaml...

CALLERS is what `service-identity callers` prints: one line per called service, the service
then the services that may call it, the list the code writes once
(crates/service-identity/src/service.rs). BINARY is the `service-identity` binary, whose
`trust-entry` gives the public half of a key. Each RENDER is named dev.yaml or prod.yaml
(the overlay it renders). For each render (docs/design.md, "Service identity"; k8s/README.md,
"Service identity"):

- every pod runs under a ServiceAccount, each Deployment under one of its own (rendered, not
  `default`), and no two services' pods share one;
- every service that calls another reads SERVICE_IDENTITY_KEY from a Secret of its own
  (secretKeyRef), which no other service's pod reads, and no other service reads the variable:
  no pod holds anything that lets it call as another service. Where the render carries the
  Secrets (dev), each holds that key alone and no two hold the same one;
- every called service reads SERVICE_IDENTITY_TRUST from a ConfigMap of its own (or a literal
  value) that the render holds: public keys, so they may be shown, and then this check can read
  them (a Secret made out of band it could not). The services its entries name are exactly the
  callers CALLERS gives it: no more (a caller the code does not admit would still get 403, but
  its key has no business there), no fewer (its calls would get 401). The value `dev-only`,
  the development issuer's keys of every service, is refused: it names no caller, so nothing
  could be compared; the dev overlay names its callers' development keys one by one instead.
  A service nobody calls reads no trust list;
- where the render holds both halves (dev, whose identity Secrets it generates), each callee
  trusts the public half of each of its callers' keys, so the calls it admits pass;
- in prod, no entry is the development issuer's (a production start refuses it). Entries whose
  key id is `EDIT` are the prod overlay's placeholders (k8s/README.md, "Production", step 3):
  noted, not refused, like the overlay's other EDIT marks.

Two keys of one caller in a trust list (a rotation: old and new) count as that caller once.
Exits 1, naming the service, if a render breaks a rule.
"""

import base64
import os
import re
import subprocess
import sys

import renders  # scripts/renders.py, beside this script

KEY, TRUST = "SERVICE_IDENTITY_KEY", "SERVICE_IDENTITY_TRUST"
KEY_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")  # crates/service-identity/src/keys.rs, key_id
PLACEHOLDER = "EDIT"  # the prod overlay's key id until the real entries are pasted in

errors = []


def check(ok, message):
    if not ok:
        errors.append(message)


def unbase64url(text):
    """base64url without padding (RFC 8037's `x` and `d`); None if it is not."""
    if not re.fullmatch(r"[A-Za-z0-9_-]*", text):
        return None
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except ValueError:
        return None


DEV_ONLY = "dev-only"  # crates/service-identity/src/keys.rs, DEV_ONLY
BINARY = None  # the `service-identity` binary (argv[2]), which derives public keys


def own_key(value, service):
    """(key id, public key) of a SERVICE_IDENTITY_KEY value, or None if it is not one: the
    binary's own `trust-entry`, so that no key arithmetic is written twice."""
    done = subprocess.run([BINARY, "trust-entry", service, value], capture_output=True, text=True)
    if done.returncode != 0:
        return None
    _, key_id, public = done.stdout.strip().split(":", 2)
    return key_id, unbase64url(public)


def read_callers(path):
    callers_of = {}
    with open(path) as f:
        for line in f:
            if line.split():
                callee, *callers = line.split()
                callers_of[callee] = set(callers)
    if not callers_of:
        sys.exit(f"service-identities: {path}: no callee listed (is it `service-identity callers`?)")
    return callers_of


def binary_of(image):
    """loyalty/auth-service:0.1.0 (or registry/.../auth-service@sha256:...) -> auth-service."""
    return image.rsplit("/", 1)[-1].split("@")[0].split(":")[0]


def source_of(container, variable, configmaps):
    """Where a container's variable comes from: ("value", text), ("secret", name, key),
    ("configmap", name, key), ("other",) or None. `env` wins over envFrom, as in Kubernetes."""
    for e in container.get("env", []):
        if e["name"] == variable:
            if "value" in e:
                return ("value", e["value"])
            ref = e.get("valueFrom", {})
            if "secretKeyRef" in ref:
                return ("secret", ref["secretKeyRef"]["name"], ref["secretKeyRef"]["key"])
            if "configMapKeyRef" in ref:
                return ("configmap", ref["configMapKeyRef"]["name"], ref["configMapKeyRef"]["key"])
            return ("other",)
    for source in container.get("envFrom", []):
        prefix = source.get("prefix", "")
        ref = source.get("configMapRef")
        if ref and variable.startswith(prefix) and variable[len(prefix):] in configmaps.get(ref["name"], {}):
            return ("configmap", ref["name"], variable[len(prefix):])
        if source.get("secretRef"):
            # Which keys a Secret made out of band holds, a render cannot say; check-deploy's
            # project rules refuse envFrom Secrets anyway.
            return ("other",)
    return None


def pods(by_kind):
    """(kind, name, service, pod spec) of every workload; the service is its first
    container's binary (a CronJob or a migration Job runs one of the services' images)."""
    for kind in ("Deployment", "Job", "CronJob"):
        for doc in by_kind.get(kind, []):
            spec = doc["spec"]
            if kind == "CronJob":
                spec = spec["jobTemplate"]["spec"]
            pod = spec["template"]["spec"]
            yield kind, doc["metadata"]["name"], binary_of(pod["containers"][0]["image"]), pod


def references(pod, kind):
    """The names of the Secrets (kind "secret") or ConfigMaps ("configmap") a pod reads."""
    ref_key, env_from_key, volume_key, name_key = {
        "secret": ("secretKeyRef", "secretRef", "secret", "secretName"),
        "configmap": ("configMapKeyRef", "configMapRef", "configMap", "name"),
    }[kind]
    names = set()
    for c in pod.get("initContainers", []) + pod["containers"]:
        names |= {e["valueFrom"][ref_key]["name"] for e in c.get("env", []) if ref_key in e.get("valueFrom", {})}
        names |= {s[env_from_key]["name"] for s in c.get("envFrom", []) if env_from_key in s}
    for v in pod.get("volumes", []):
        if volume_key in v:
            names.add(v[volume_key][name_key])
        for s in v.get("projected", {}).get("sources", []):
            if volume_key in s:
                names.add(s[volume_key]["name"])
    return names


def check_render(path, callers_of):
    overlay = os.path.basename(path).split(".")[0]  # dev.yaml, prod.yaml
    assert overlay in ("dev", "prod"), path
    where = f"[{overlay}]"
    errors_before = len(errors)
    by_kind, configmaps = renders.read(path)
    secrets = {s["metadata"]["name"]: {k: base64.b64decode(v).decode() for k, v in s.get("data", {}).items()}
               | s.get("stringData", {}) for s in by_kind.get("Secret", [])}
    accounts = {a["metadata"]["name"] for a in by_kind.get("ServiceAccount", [])}
    workloads = list(pods(by_kind))
    deployments = {name: pod for kind, name, _, pod in workloads if kind == "Deployment"}
    calling = set().union(*callers_of.values())
    ours = calling | set(callers_of)

    def main_container(service):
        pod = deployments[service]
        return next((c for c in pod["containers"] if c["name"] == service), pod["containers"][0])

    for service in sorted(ours - set(deployments)):
        check(False, f"{where} no Deployment {service}, which `service-identity callers` names")

    # ServiceAccounts: each Deployment its own, and no two services' pods under one (a pod
    # without serviceAccountName runs as `default`, an account like the others here).
    users = {}
    for kind, name, service, pod in workloads:
        account = pod.get("serviceAccountName") or "default"
        users.setdefault(account, set()).add(service)
        if kind == "Deployment":
            check(account != "default",
                  f"{where} Deployment {name} has no ServiceAccount of its own (serviceAccountName)")
            check(account == "default" or account in accounts,
                  f"{where} Deployment {name}: its ServiceAccount {account} is not rendered")
    for account, services in sorted(users.items()):
        check(len(services) == 1, f"{where} {' and '.join(sorted(services))} share the ServiceAccount {account}: "
                                  f"each service runs under its own")

    # Who reads which Secret and ConfigMap.
    secret_readers, configmap_readers = {}, {}
    for kind, name, service, pod in workloads:
        for secret in references(pod, "secret"):
            secret_readers.setdefault(secret, set()).add(service)
        for configmap in references(pod, "configmap"):
            configmap_readers.setdefault(configmap, set()).add(service)

    # Identity keys: each calling service's from a Secret of its own.
    identity = {}  # service -> its identity Secret
    for service in sorted(calling & set(deployments)):
        callees = sorted(callee for callee, callers in callers_of.items() if service in callers)
        source = source_of(main_container(service), KEY, configmaps)
        if source is None or source[0] != "secret":
            check(False, f"{where} {service} calls {', '.join(callees)} but does not read {KEY} from a Secret of its "
                         f"own (secretKeyRef){'' if source is None else ': it comes from a ' + source[0]}")
            continue
        identity[service] = source[1]
        others = secret_readers.get(source[1], set()) - {service}
        check(not others, f"{where} {service}'s identity Secret {source[1]} is also read by "
                          f"{', '.join(sorted(others))}, which could then call as {service}")
    holders = {}
    for service, secret in identity.items():
        holders.setdefault(secret, []).append(service)
    for secret, services in sorted(holders.items()):
        check(len(services) == 1, f"{where} {' and '.join(sorted(services))} share the identity Secret {secret}: "
                                  f"each calling service needs its own")
    for kind, name, service, pod in workloads:
        for c in pod.get("initContainers", []) + pod["containers"]:
            source = source_of(c, KEY, configmaps)
            if source is None or (kind == "Deployment" and service in calling and c is main_container(name)):
                continue  # a calling service's own container: checked above
            if service not in calling:
                check(False, f"{where} {kind} {name}/{c['name']} reads {KEY}, but {service} calls no service "
                             f"(`service-identity callers`): a key nobody trusts")
            elif service in identity:
                check(source[:2] == ("secret", identity[service]),
                      f"{where} {kind} {name}/{c['name']} reads {KEY} elsewhere than {service}'s identity Secret "
                      f"{identity[service]}")
    # Where the render carries the Secrets (dev): each holds the key alone, and a key of its own.
    public_of = {}  # service -> (key id, public key) of its identity key
    for service, secret in sorted(identity.items()):
        if overlay == "dev":
            check(secret in secrets, f"{where} {service}: its identity Secret {secret} is not rendered")
        if secret not in secrets:
            continue
        data = secrets[secret]
        check(set(data) == {KEY}, f"{where} {service}'s identity Secret {secret} holds {', '.join(sorted(data))}; "
                                  f"it must hold {KEY} alone")
        value = data.get(KEY, "")
        key = own_key(value, service)
        check(key is not None,
              f"{where} {service}: {KEY} in {secret} is neither {DEV_ONLY} nor <key id>:<private key>")
        if key:
            public_of[service] = key
        check(overlay == "dev" or value != DEV_ONLY,
              f"{where} {service}: {KEY} is {DEV_ONLY} (production refuses it)")
    seen = {}
    for service, (_, public) in sorted(public_of.items()):
        check(public not in seen, f"{where} {seen.get(public)} and {service} hold the same identity key")
        seen.setdefault(public, service)

    # Trust lists: each called service's in a ConfigMap of its own, naming exactly its callers.
    placeholders = []
    for service in sorted(set(deployments) & ours):
        source = source_of(main_container(service), TRUST, configmaps)
        expected = callers_of.get(service)
        if not expected:
            check(source is None,
                  f"{where} {service} reads {TRUST}, but no service may call it (`service-identity callers`)")
            continue
        if source is None or source[0] not in ("configmap", "value"):
            came = "" if source is None else f" (it comes from a {source[0]})"
            check(False, f"{where} {service} is called by {', '.join(sorted(expected))} but does not read {TRUST} "
                         f"from a ConfigMap{came}: its trust list must be in the render, to be compared with the "
                         f"code's callers")
            continue
        if source[0] == "configmap":
            name = source[1]
            if name not in configmaps:
                check(False, f"{where} {service}: its trust list, ConfigMap {name}, is not rendered")
                continue
            others = configmap_readers.get(name, set()) - {service}
            check(not others, f"{where} {service}'s trust list {name} is also read by {', '.join(sorted(others))}")
            value = configmaps[name].get(source[2], "")
        else:
            value = source[1]
        if value.strip() == DEV_ONLY:
            check(False, f"{where} {service}: {TRUST} is `{DEV_ONLY}`, the development keys of every service, "
                         f"which says nothing of who may call it: name its callers' keys "
                         f"({', '.join(sorted(expected))}; in development `<service>:{DEV_ONLY}:<public key>`)")
            continue
        named, kids, trusted = set(), set(), set()
        for entry in (e.strip() for e in value.split(",")):
            if not entry:
                continue
            parts = entry.split(":", 2)
            if len(parts) != 3:
                check(False, f"{where} {service}: trust entry {entry!r} is not <service>:<key id>:<public key>")
                continue
            caller, key_id, public = parts
            check(caller in ours, f"{where} {service}: trust entry {entry!r} names {caller}, not one of our services")
            check(KEY_ID.fullmatch(key_id), f"{where} {service}: trust entry {entry!r}: key id {key_id!r} is not "
                                            f"1 to 64 letters, digits, dots, underscores or hyphens")
            check(f"{caller}:{key_id}" not in kids, f"{where} {service}: {caller}'s key {key_id} is named twice")
            kids.add(f"{caller}:{key_id}")
            named.add(caller)
            if key_id == PLACEHOLDER and overlay == "prod":
                placeholders.append(service)
                continue
            raw = unbase64url(public)
            check(raw is not None and len(raw) == 32,
                  f"{where} {service}: trust entry {entry!r}: the public key is not 32 bytes of base64url")
            check(overlay == "dev" or key_id != DEV_ONLY,
                  f"{where} {service} trusts {caller}'s development key ({DEV_ONLY}), which production refuses")
            trusted.add((caller, key_id, raw))
        extra, missing = sorted(named - expected), sorted(expected - named)
        check(not extra and not missing,
              f"{where} {service} trusts the keys of {', '.join(sorted(named)) or 'no service'}, but the code admits "
              f"{', '.join(sorted(expected))} (`service-identity callers`)"
              + (f"; not a caller: {', '.join(extra)}" if extra else "")
              + (f"; missing: {', '.join(missing)}" if missing else ""))
        # Both halves in the render (dev): each caller's key must be among those trusted.
        for caller in sorted(expected & set(public_of)):
            key_id, public = public_of[caller]
            check((caller, key_id, public) in trusted,
                  f"{where} {service} does not trust {caller}'s key {key_id} ({identity[caller]}): "
                  f"its calls would get 401")
    if placeholders:
        print(f"{where} note: EDIT placeholders in the trust lists of {', '.join(sorted(set(placeholders)))}: "
              f"replace them before the first deploy (k8s/README.md, \"Production\", step 3)")
    if len(errors) == errors_before:
        print(f"{where} {len(deployments)} Deployments, each under its own ServiceAccount; "
              f"{', '.join(sorted(identity))} each sign with a key of their own; "
              f"the trust lists name the callers `service-identity callers` gives")


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    global BINARY
    callers_of = read_callers(sys.argv[1])
    BINARY = sys.argv[2]
    for path in sys.argv[3:]:
        check_render(path, callers_of)
    for e in errors:
        print(f"service-identities: {e}", file=sys.stderr)
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
