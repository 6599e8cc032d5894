#!/usr/bin/env bash
# Static checks of the container and Kubernetes files. No Docker engine and no cluster are
# needed (the development machines have neither):
#   1. checkov on deploy/Dockerfile and deploy/pgbouncer.Dockerfile;
#   2. `kubectl kustomize` of k8s/overlays/dev and k8s/overlays/prod (and of
#      k8s/tests/pgbouncer-at-scale, the PgBouncer component on prod), and every rendered
#      document validated offline by kubernetes-validate --strict against one Kubernetes version;
#      prometheus-operator's kinds (PrometheusRule, PodMonitor), which it has no schema for, by
#      the operator's CRD models (cloudcoil-models-prometheus-operator), unknown fields refused;
#   3. checkov on the rendered manifests (skips and their reasons: k8s/.checkov.yaml);
#   4. this project's own rules (no sandbox in prod, no /internal on the Ingress, grace
#      periods, probes, migration waits, each service only its own variables, default deny
#      both ways, X-Forwarded-For trusted only in prod, ...), and each service its own
#      identity (scripts/service-identities.py): its own ServiceAccount and key Secret, and
#      each called service's trust list naming exactly the callers the code admits
#      (`service-identity callers`, from the built binary, else `cargo run`);
#   5. who may reach the services' /metrics (scripts/metrics-reach.py): network-config-analyzer
#      evaluates each render's NetworkPolicies and must find that Prometheus may connect to
#      every port the PodMonitor scrapes and to nothing else, and that other pods may not;
#   6. the connection budget (scripts/connection-budget.py): each render's pools at the
#      autoscalers' maximum fit PostgreSQL's max_connections less a reserve, and the
#      deliberately over-budget k8s/tests/over-budget and k8s/tests/cronjob-over-budget are
#      refused;
#   7. with CHECK_DOCUMENT_FIGURES=1 (make test), the figures k8s/README.md and
#      docs/scaling.md give (each render's count, the pools) are the ones the renders and
#      k8s/base/config decide.
# The validators are installed on first use into cached virtualenvs, pinned below; a
# virtualenv is rebuilt only when a pin (or the Python version) changes.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO"

CHECKOV_VERSION=3.3.30
KUBERNETES_VALIDATE_VERSION=1.37.0
# Pydantic models generated from prometheus-operator's CRDs (v0.80.1): the schemas of
# PrometheusRule and PodMonitor. The newest releases need Python 3.14; this one runs on 3.11.
PROMETHEUS_OPERATOR_MODELS_VERSION=0.80.1.0
# The Kubernetes version the manifests are validated against (kubernetes-validate bundles
# its schemas, so this needs no network). 1.30 is the minimum the manifests need
# (the preStop `sleep` action); keep this at the oldest cluster version we deploy to.
KUBERNETES_VERSION=1.32.0
# np-guard's NetworkPolicy analyzer (NCA): evaluates the rendered policies offline. In a
# virtualenv of its own: it pins its dependencies exactly (PyYAML among them), checkov too.
NETWORK_CONFIG_ANALYZER_VERSION=2.1.0

venv=${XDG_CACHE_HOME:-$HOME/.cache}/loyalty-tools/venv
nca_venv=${XDG_CACHE_HOME:-$HOME/.cache}/loyalty-tools/nca-venv

# --- tools ----------------------------------------------------------------------------------
command -v kubectl >/dev/null || fail "kubectl not found. It renders the Kustomize overlays (kustomize is built in).
Install it, e.g.:
  curl -fsSLO https://dl.k8s.io/release/v${KUBERNETES_VERSION}/bin/linux/amd64/kubectl
  sudo install -m 0755 kubectl /usr/local/bin/kubectl
or see https://kubernetes.io/docs/tasks/tools/"

pinned_venv "$venv" "checkov==$CHECKOV_VERSION" "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION" \
    "cloudcoil-models-prometheus-operator==$PROMETHEUS_OPERATOR_MODELS_VERSION"
pinned_venv "$nca_venv" "network-config-analyzer==$NETWORK_CONFIG_ANALYZER_VERSION"

# checkov: no downloads from Prisma Cloud (guidelines, custom policies; --skip-download too)
# and no query to PyPI for a newer version, so the run works offline and never waits on the
# network. kubernetes-validate bundles its schemas and makes no network call at all.
export BC_SKIP_MAPPING=TRUE CKV_SKIP_PACKAGE_UPDATE_CHECK=TRUE
checkov() {
    "$venv/bin/checkov" --skip-download --compact --quiet "$@"
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# cloudnative_pg_check RENDER...: scripts/cloudnative-pg/validate.mjs with its pinned packages
# (npm ci into a cache, redone only when package-lock.json changes), then tsc over the typed
# documents it writes.
cloudnative_pg_check() {
    local tools=${XDG_CACHE_HOME:-$HOME/.cache}/loyalty-tools/cloudnative-pg src=scripts/cloudnative-pg
    pinned_node_modules "$tools" "$src"
    local run
    run=$(mktemp -d "$tools/run.XXXXXX")
    cp "$src/validate.mjs" "$run/"
    printf '{"compilerOptions": {"strict": true, "noEmit": true, "module": "NodeNext", "moduleResolution": "NodeNext", "target": "ES2022", "skipLibCheck": true}, "files": ["check.ts"]}\n' >"$run/tsconfig.json"
    local status=0
    node "$run/validate.mjs" "$run" "$@" || status=1
    if [ "$status" -eq 0 ] && ! (cd "$run" && "$tools/node_modules/.bin/tsc" -p . --pretty false); then
        status=1
    fi
    rm -rf "$run"
    [ "$status" -eq 0 ] || fail "the CloudNativePG documents do not match the operator's API (above)"
}

# --- 1 ---------------------------------------------------------------------------------------
echo "== checkov: deploy/Dockerfile, deploy/pgbouncer.Dockerfile"
# CKV_DOCKER_2 (no HEALTHCHECK) is skipped inline in each Dockerfile, with its reason.
checkov --framework dockerfile --file deploy/Dockerfile --file deploy/pgbouncer.Dockerfile

# --- 2 ---------------------------------------------------------------------------------------
for overlay in dev prod; do
    echo "== kustomize: k8s/overlays/$overlay"
    kubectl kustomize "k8s/overlays/$overlay" >"$work/$overlay.yaml"
done
for example in pgbouncer-at-scale over-budget cronjob-over-budget cloudnative-pg-dev cloudnative-pg-prod; do
    echo "== kustomize: k8s/tests/$example"
    kubectl kustomize "k8s/tests/$example" >"$work/$example.yaml"
done
echo "== kubernetes-validate --strict (Kubernetes $KUBERNETES_VERSION)"
# kubernetes-validate only warns on a kind it has no schema for; those are the CRDs'
# documents, which the next step validates. Any other warning fails.
"$venv/bin/kubernetes-validate" --strict --quiet --kubernetes-version "$KUBERNETES_VERSION" \
    "$work/dev.yaml" "$work/prod.yaml" "$work/pgbouncer-at-scale.yaml" \
    "$work/cloudnative-pg-dev.yaml" "$work/cloudnative-pg-prod.yaml" 2>&1 | tee "$work/validate.out"
if grep -v "Couldn't find schema for kind \(PrometheusRule\|PodMonitor\) with api version monitoring.coreos.com/v1" \
    "$work/validate.out" |
    grep -v "Couldn't find schema for kind \(Cluster\|Database\|ScheduledBackup\) with api version postgresql.cnpg.io/v1" |
    grep -q .; then
    fail "kubernetes-validate reported the lines above"
fi
echo "== CloudNativePG kinds (@kubernetes-models/cloudnative-pg, scripts/cloudnative-pg/)"
cloudnative_pg_check "$work/cloudnative-pg-dev.yaml" "$work/cloudnative-pg-prod.yaml"
echo "== prometheus-operator kinds (cloudcoil-models-prometheus-operator $PROMETHEUS_OPERATOR_MODELS_VERSION)"
"$venv/bin/python" - "$work/dev.yaml" "$work/prod.yaml" "$work/pgbouncer-at-scale.yaml" <<'PY'
import sys

import yaml
from cloudcoil.models.prometheus_operator import v1

MODELS = {"PrometheusRule": v1.PrometheusRule, "PodMonitor": v1.PodMonitor}
errors, seen = [], set()
for path in sys.argv[1:]:
    with open(path) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    for doc in docs:
        if doc.get("apiVersion") != "monitoring.coreos.com/v1":
            continue
        where = f"{path}: {doc['kind']} {doc['metadata']['name']}"
        model = MODELS.get(doc["kind"])
        if model is None:
            errors.append(f"{where}: no schema for this kind here")
            continue
        seen.add(doc["kind"])
        try:
            parsed = model.model_validate(doc)
        except Exception as e:  # pydantic's ValidationError lists every bad field
            errors.append(f"{where}: {e}")
            continue
        # The models accept and drop unknown fields; strict as kubernetes-validate --strict:
        # what they read back must be the whole document.
        if parsed.model_dump(by_alias=True, exclude_unset=True, mode="json") != doc:
            errors.append(f"{where}: fields the CRD does not define (a misspelt key?)")
if seen != set(MODELS):
    errors.append(f"expected both {sorted(MODELS)} in the renders, found {sorted(seen)}")
for e in errors:
    print(f"check-deploy: {e}", file=sys.stderr)
sys.exit(1 if errors else 0)
PY

# --- 3 ---------------------------------------------------------------------------------------
echo "== checkov: rendered manifests"
checkov --framework kubernetes --config-file k8s/.checkov.yaml \
    --file "$work/dev.yaml" --file "$work/prod.yaml" --file "$work/pgbouncer-at-scale.yaml"

# --- 4 ---------------------------------------------------------------------------------------
echo "== project rules"
# The rules of this step over the renders given (each named dev.yaml or prod.yaml).
project_rules() {
CONTROLLER_CONFIG=k8s/ingress-nginx/controller-config.yaml ALERT_RULES=deploy/prometheus/alerts.yml \
    "$venv/bin/python" - "$@" <<'PY'
import os
import re
import sys

import yaml

# Every variable a service reads (docs/design.md, services/*/src/config.rs, crates/server config).
COMMON = {"APP_ENV", "BIND_ADDR", "HTTP_WORKERS", "RUST_LOG", "LOG_FORMAT",
          "OTEL_EXPORTER_OTLP_ENDPOINT", "HTTP_MAX_CONNECTIONS", "HTTP_BACKLOG",
          "HTTP_HEAD_TIMEOUT_MS", "HTTP_BODY_TIMEOUT_MS", "HTTP_KEEP_ALIVE_SECS",
          "HTTP_DISCONNECT_TIMEOUT_MS", "HTTP_CALLER_IDLE_SECS", "HTTP_STOP_DRAIN_SECS"}
DB = {"DATABASE_URL", "DATABASE_POOL_SIZE", "DATABASE_STATEMENT_CACHE"}
OWN = {
    "auth-service": COMMON | DB | {
        "AUTH_JWT_SECRET", "SERVICE_IDENTITY_TRUST", "OTP_TEST_CODE", "SMS_PROVIDER", "SMS_HTTP_URL",
        "SMS_HTTP_TIMEOUT_MS", "OTP_SMS_PER_PHONE_PER_HOUR", "OTP_SMS_PER_IP_PER_HOUR",
        "OTP_TRIES_PER_PHONE_PER_HOUR", "OTP_TRIES_PER_IP_PER_HOUR", "OTP_UNKNOWN_PHONES_PER_IP_PER_HOUR",
        "TRUST_X_FORWARDED_FOR",
        "CLIENT_LOOKUPS_PER_CLIENT_PER_HOUR", "LEGACY_TOKENS_PER_CLIENT_PER_HOUR"},
    "order-service": COMMON | DB | {
        "POINT_SERVICE_URL", "POINT_SERVICE_TIMEOUT_MS", "POINT_SERVICE_PAY_TIMEOUT_MS",
        "AUTH_SERVICE_URL", "SERVICE_IDENTITY_KEY", "SERVICE_IDENTITY_TRUST", "USE_POINT_SERVICE", "LEGACY_URL",
        "GIFT_CODE_TRIES_PER_CLIENT_PER_HOUR", "GIFT_CODE_TRIES_PER_IP_PER_HOUR",
        "GIFT_CARD_RETRY_INTERVAL_MS", "GIFT_CARD_RETRY_MAX_BACKOFF_SECONDS",
        "GIFT_CARD_CREDIT_LEASE_SECONDS",
        "TRUST_X_FORWARDED_FOR", "NEAREST_STORE_CACHE_SECONDS",
        "NATS_URL", "EVENTS_POLL_MS", "EVENTS_STREAM_REPLICAS"},
    "point-service": COMMON | DB | {
        "AUTH_SERVICE_URL", "AUTH_SERVICE_TIMEOUT_MS", "AUTH_CALLER_CACHE_SECONDS",
        "SERVICE_IDENTITY_KEY", "SERVICE_IDENTITY_TRUST", "PAYMENT_SERVICE_URL",
        "PAYMENT_SERVICE_TIMEOUT_MS", "PAYMENT_WEBHOOK_SECRET", "POINT_ORDER_POINT_ENABLED",
        "POINT_ORDER_CARD_ENABLED", "PAYMENT_SYNC_AFTER_SECONDS", "PAYMENT_SYNC_INTERVAL_SECONDS",
        "PAYMENT_SYNC_READS_PER_SECOND", "PAYMENT_SYNC_HORIZON_DAYS",
        "POINT_ORDER_BATCH_WINDOW_MS", "POINT_ORDER_BATCH_MAX", "POINT_ORDER_BATCH_LANES",
        "NATS_URL", "EVENTS_POLL_MS", "EVENTS_STREAM_REPLICAS", "EXPIRY_NOTICE_DAYS"},
    "operator-service": COMMON | DB | {"OPERATOR_JWT_SECRET", "POINT_SERVICE_URL", "ORDER_SERVICE_URL",
                                       "SERVICE_IDENTITY_KEY", "BACK_OFFICE_TIMEOUT_MS"},
    "payment-sandbox": COMMON | {
        "PAYMENT_WEBHOOK_SECRET", "POINT_SERVICE_WEBHOOK_URL", "SANDBOX_AUTO_CAPTURE",
        "SANDBOX_PUBLIC_URL"},
}
# The waits for another service that env.call_wait holds below SHUTDOWN_TIMEOUT.
CALL_WAITS = ["POINT_SERVICE_TIMEOUT_MS", "POINT_SERVICE_PAY_TIMEOUT_MS", "BACK_OFFICE_TIMEOUT_MS"]
# What the Ingress may expose, and how.
INGRESS = {
    "/api/v1/clients": ("Prefix", "auth-service"),
    "/api/v2/client": ("Prefix", "order-service"),
    "/api/v1/operator": ("Prefix", "operator-service"),
    "/webhooks/v1/payments": ("Exact", "point-service"),
}
# Request targets the Ingress must refuse (encoded / or \, dot segments) and must pass.
REFUSED_TARGETS = [
    "/internal/v1/clients/1%2F..%2F..%2F..%2F..%2Fapi%2Fv1%2Fclients",
    "/api/v1/clients/1%2f..%2fx", "/api/v1/clients/a%5Cb", "/api/v1/clients/a%5cb",
    "/api/v1/clients/x/../y", "/api/v1/clients/..", "/api/v1/clients/./x",
    "/api/v1/clients/%2e%2E/x", "/api/v1/clients/.%2e", "/api/v1/clients/x/..?a=1",
    "/api/v2/client/point-offers/..\\..\\..\\..\\metrics",
]
PASSED_TARGETS = [
    "/api/v1/clients", "/api/v1/clients/verify-otp?contact_phone=%2B966500000001&code=1234",
    "/api/v1/clients/reset-otp?note=a%2F..", "/api/v1/clients/a..b", "/api/v1/clients/.well",
    "/api/v2/client/point-offers/65f0a1b2c3d4e5f6a7b8c9d0", "/webhooks/v1/payments",
]
# How long a stopped server lets in-flight requests finish, and how much longer than its
# callers' idle time it drains, read where they are written.
with open("crates/server/src/run.rs") as f:
    SHUTDOWN_TIMEOUT = int(re.search(
        r"pub const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs\((\d+)\)", f.read()).group(1))
with open("crates/server/src/config/http_limits.rs") as f:
    limits = f.read()
STOP_MARGIN = int(re.search(r"pub const STOP_MARGIN: Duration = Duration::from_secs\((\d+)\)", limits).group(1))
# The defaults of the server's own ways of closing a connection (http_limits.rs, `Default`).
DEFAULT_KEEP_ALIVE = int(re.search(r"keep_alive: Duration::from_secs\((\d+)\)", limits).group(1))
DEFAULT_HEAD_MS = int(re.search(r"head_timeout: Duration::from_millis\((\d+)\)", limits).group(1))
DATABASES = {"auth-service": "auth", "point-service": "points",
             "order-service": "catalog", "operator-service": "catalog"}

errors = []


def check(ok, message):
    if not ok:
        errors.append(message)


def env_names(where, container, configmaps):
    """Every variable a container gets: its `env` and the keys of its envFrom ConfigMaps."""
    names = {e["name"] for e in container.get("env", [])}
    for source in container.get("envFrom", []):
        ref = source.get("configMapRef")
        check(ref is not None, f"{where} {container['name']}: envFrom other than a ConfigMap")
        if ref:
            check(ref["name"] in configmaps, f"{where} {container['name']}: ConfigMap {ref['name']} is not rendered")
            names |= set(configmaps.get(ref["name"], {}))
    return names


def binary_of(image):
    """loyalty/auth-service:0.1.0 (or registry/.../auth-service@sha256:...) -> auth-service."""
    return image.rsplit("/", 1)[-1].split("@")[0].split(":")[0]


for path in sys.argv[1:]:
    overlay = os.path.basename(path).split(".")[0]  # dev.yaml, prod.yaml
    assert overlay in ("dev", "prod"), path
    with open(path) as f:
        text = f.read()
    docs = [d for d in yaml.safe_load_all(text) if d]
    where = f"[{overlay}]"
    by_kind = {}
    for d in docs:
        by_kind.setdefault(d["kind"], []).append(d)
    configmaps = {c["metadata"]["name"]: c.get("data", {}) for c in by_kind.get("ConfigMap", [])}
    secrets = {s["metadata"]["name"]: s for s in by_kind.get("Secret", [])}

    if overlay == "prod":
        check("payment-sandbox" not in text, f"{where} the prod render mentions payment-sandbox")
        check(not secrets, f"{where} prod must not carry Secrets (they are created out of band): {sorted(secrets)}")
    names = {d["metadata"]["name"] for d in by_kind.get("Deployment", [])}
    expected = set(DATABASES) | ({"payment-sandbox"} if overlay == "dev" else set())
    check(names == expected, f"{where} Deployments {sorted(names)}, expected {sorted(expected)}")
    namespaces = {d["metadata"].get("namespace") for d in docs if d["kind"] != "Namespace"}
    check(len(namespaces) == 1 and None not in namespaces,
          f"{where} every namespaced object must be in one namespace, got {namespaces}")

    # Ingress: only the allowed paths, each to its own service, never /internal or /metrics.
    seen = set()
    for ing in by_kind.get("Ingress", []):
        check(ing["spec"].get("ingressClassName") == "nginx", f"{where} Ingress {ing['metadata']['name']} is not class nginx")
        check("defaultBackend" not in ing["spec"], f"{where} Ingress must not have a defaultBackend")
        for rule in ing["spec"].get("rules", []):
            for p in rule.get("http", {}).get("paths", []):
                route, kind = p.get("path", "/"), p.get("pathType")
                backend = p["backend"]["service"]["name"]
                seen.add(route)
                check(not route.startswith("/internal"), f"{where} Ingress exposes {route}")
                check("metrics" not in route, f"{where} Ingress exposes {route}")
                check(INGRESS.get(route) == (kind, backend),
                      f"{where} Ingress path {route} ({kind} -> {backend}) is not one of {INGRESS}")
    check(seen == set(INGRESS), f"{where} Ingress paths {sorted(seen)}, expected {sorted(INGRESS)}")

    stops = {}  # Deployment -> (preStop seconds, grace period, container)
    for dep in by_kind.get("Deployment", []):
        name = dep["metadata"]["name"]
        pod = dep["spec"]["template"]["spec"]
        grace = pod.get("terminationGracePeriodSeconds", 30)
        check(grace > 20, f"{where} {name}: terminationGracePeriodSeconds {grace} is not above the 20 s pay timeout")
        check(pod.get("automountServiceAccountToken") is False, f"{where} {name}: service account token is mounted")
        for c in pod["containers"]:
            check("livenessProbe" in c and "readinessProbe" in c, f"{where} {name}/{c['name']}: needs both probes")
            check(c.get("livenessProbe", {}).get("httpGet", {}).get("path") == "/healthz", f"{where} {name}: liveness is not /healthz")
            check(c.get("readinessProbe", {}).get("httpGet", {}).get("path") == "/readyz", f"{where} {name}: readiness is not /readyz")
            stop = c.get("lifecycle", {}).get("preStop", {}).get("sleep", {}).get("seconds", 0)
            stops[name] = (stop, grace, c)
            env = {e["name"]: e.get("value") for e in c.get("env", [])}
            for each in [c] + pod.get("initContainers", []):
                allowed = OWN.get(binary_of(each["image"]), set())
                used = env_names(where, each, configmaps)
                check(used <= allowed, f"{where} {name}/{each['name']}: variables it does not read: {sorted(used - allowed)}")
            cm = {}
            for source in c.get("envFrom", []):
                cm.update(configmaps.get(source["configMapRef"]["name"], {}))
            want_env = "production" if overlay == "prod" else "development"
            check(cm.get("APP_ENV", env.get("APP_ENV")) == want_env, f"{where} {name}: APP_ENV is not {want_env}")
            port = c["ports"][0]["containerPort"]
            check(cm.get("BIND_ADDR") == f"0.0.0.0:{port}", f"{where} {name}: BIND_ADDR is not 0.0.0.0:{port}")
            image = c["image"]
            check(":" in image.rsplit("/", 1)[-1] and not image.endswith(":latest"), f"{where} {name}: image {image} has no fixed tag")
            if overlay == "prod":
                check(not image.endswith(":dev"), f"{where} {name}: prod uses the dev image {image}")
        if name in DATABASES:
            inits = pod.get("initContainers", [])
            check(any(i.get("args", [])[:1] == ["wait-for-migrations"] for i in inits),
                  f"{where} {name}: no init container running wait-for-migrations")
            check(all(i["image"] == pod["containers"][0]["image"] for i in inits),
                  f"{where} {name}: the init container must run the same image as the service")

    # The stop (docs/decisions.md, "Lossless rollouts"): every replica's drain outlasts every
    # caller's idle connections (each Deployment's clients and the ingress controller's), and
    # the grace period holds preStop + drain + the in-flight requests' finish.
    with open(os.environ["CONTROLLER_CONFIG"]) as f:
        controller = (yaml.safe_load(f) or {}).get("data", {})
    idles = {"the ingress controller's upstream-keepalive-timeout":
             int(controller.get("upstream-keepalive-timeout", 60))}

    def setting(container, key):
        values = {}
        for source in container.get("envFrom", []):
            values.update(configmaps.get(source["configMapRef"]["name"], {}))
        values.update({e["name"]: e.get("value") for e in container.get("env", [])})
        value = values.get(key)
        return int(value) if value is not None and str(value).isdigit() else None

    for name, (stop, grace, c) in stops.items():
        idle, drain = setting(c, "HTTP_CALLER_IDLE_SECS"), setting(c, "HTTP_STOP_DRAIN_SECS")
        check(idle is not None and drain is not None,
              f"{where} {name}: HTTP_CALLER_IDLE_SECS and HTTP_STOP_DRAIN_SECS must both be set")
        if idle is not None:
            idles[f"{name}'s HTTP_CALLER_IDLE_SECS"] = idle
    longest = max(idles, key=idles.get)
    for name, (stop, grace, c) in stops.items():
        drain = setting(c, "HTTP_STOP_DRAIN_SECS")
        if drain is None:
            continue
        check(drain >= idles[longest] + STOP_MARGIN,
              f"{where} {name}: HTTP_STOP_DRAIN_SECS {drain} must be at least every caller's idle time "
              f"+ {STOP_MARGIN} s (the longest: {longest}, {idles[longest]} s)")
        check(grace > stop + drain + SHUTDOWN_TIMEOUT,
              f"{where} {name}: grace {grace} s must exceed preStop {stop} s + drain {drain} s + "
              f"{SHUTDOWN_TIMEOUT} s for the requests in flight")
        # Nor, in steady state, may its keep-alive or head timeout close a connection a
        # caller still holds.
        keep = setting(c, "HTTP_KEEP_ALIVE_SECS")
        keep = DEFAULT_KEEP_ALIVE if keep is None else keep
        head = setting(c, "HTTP_HEAD_TIMEOUT_MS") or DEFAULT_HEAD_MS
        check(keep == 0 or keep > idles[longest],
              f"{where} {name}: HTTP_KEEP_ALIVE_SECS {keep} must exceed every caller's idle time "
              f"(the longest: {longest}, {idles[longest]} s) or be 0")
        check(head > idles[longest] * 1000,
              f"{where} {name}: HTTP_HEAD_TIMEOUT_MS {head} must exceed every caller's idle time "
              f"(the longest: {longest}, {idles[longest]} s)")
        # A wait for another service ends before a stopping server stops serving the request
        # that waits (the binary refuses to start otherwise: server::Env::call_wait).
        for wait in CALL_WAITS:
            value = setting(c, wait)
            check(value is None or value < SHUTDOWN_TIMEOUT * 1000,
                  f"{where} {name}: {wait} {value} must be below {SHUTDOWN_TIMEOUT * 1000} ms "
                  f"(SHUTDOWN_TIMEOUT)")

    # One migration Job per database, each running `migrate` with its own binary.
    migrated = {}
    for job in by_kind.get("Job", []):
        c = job["spec"]["template"]["spec"]["containers"][0]
        check(c.get("args") == ["migrate"], f"{where} Job {job['metadata']['name']} does not run migrate")
        for key in ("backoffLimit", "activeDeadlineSeconds", "ttlSecondsAfterFinished"):
            check(key in job["spec"], f"{where} Job {job['metadata']['name']} has no {key}")
        binary = binary_of(c["image"])
        migrated[DATABASES.get(binary, "?")] = binary
        used = env_names(where, c, configmaps)
        check(used <= OWN.get(binary, set()), f"{where} Job {job['metadata']['name']}: variables {binary} does not read: {sorted(used - OWN.get(binary, set()))}")
    check(set(migrated) == {"auth", "points", "catalog"}, f"{where} migration Jobs cover {sorted(migrated)}, expected auth, points, catalog")

    # The scheduled jobs: once a day in Riyadh time, never two runs at once, with retries, a
    # deadline and kept history, each on its own service's image and settings (the service
    # its app.kubernetes.io/name label names).
    point = next((d for d in by_kind.get("Deployment", []) if d["metadata"]["name"] == "point-service"), None)
    deployments = {d["metadata"]["name"]: d["spec"]["template"]["spec"]["containers"][0]
                   for d in by_kind.get("Deployment", [])}
    cronjobs = {}
    for cron in by_kind.get("CronJob", []):
        name = cron["metadata"]["name"]
        spec = cron["spec"]
        job = spec["jobTemplate"]["spec"]
        pod = job["template"]["spec"]
        c = pod["containers"][0]
        cronjobs[name] = c.get("args", [])[:1]
        service = cron["metadata"].get("labels", {}).get("app.kubernetes.io/name", "?")
        own = deployments.get(service, {})
        check(spec.get("timeZone") == "Asia/Riyadh", f"{where} CronJob {name}: timeZone is not Asia/Riyadh")
        check(spec.get("concurrencyPolicy") == "Forbid", f"{where} CronJob {name}: concurrencyPolicy is not Forbid")
        for key in ("startingDeadlineSeconds", "successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
            check(key in spec, f"{where} CronJob {name} has no {key}")
        for key in ("backoffLimit", "activeDeadlineSeconds"):
            check(key in job, f"{where} CronJob {name}: its Jobs have no {key}")
        # A finished Job deleted by a TTL takes kube_job_failed with it, and the alert.
        check("ttlSecondsAfterFinished" not in job, f"{where} CronJob {name}: a TTL would clear its failure alert")
        check(pod.get("automountServiceAccountToken") is False, f"{where} CronJob {name}: service account token is mounted")
        check(c["image"] == own.get("image"), f"{where} CronJob {name}: image {c['image']} is not {service}'s {own.get('image')}")
        check(c.get("envFrom") == own.get("envFrom"), f"{where} CronJob {name}: not {service}'s ConfigMap")
        db_url = [e for e in c.get("env", []) if e["name"] == "DATABASE_URL"]
        check(db_url and db_url == [e for e in own.get("env", []) if e["name"] == "DATABASE_URL"],
              f"{where} CronJob {name}: DATABASE_URL is not {service}'s")
        used = env_names(where, c, configmaps)
        check(used <= OWN.get(service, set()), f"{where} CronJob {name}: variables {service} does not read: {sorted(used - OWN.get(service, set()))}")
    check(cronjobs == {"ledger-audit": ["audit"], "points-expiry": ["expire-points"],
                       "payments-settlement": ["reconcile"], "auth-housekeeping": ["housekeeping"],
                       "points-housekeeping": ["housekeeping"], "catalog-housekeeping": ["housekeeping"]},
          f"{where} CronJobs {cronjobs}, expected ledger-audit (audit), points-expiry (expire-points), "
          f"payments-settlement (reconcile) and auth-, points- and catalog-housekeeping (housekeeping)")
    # The alert rules name the CronJobs (kube-state-metrics' owner_name, cronjob labels).
    with open(os.environ["ALERT_RULES"]) as f:
        named = set(re.findall(r'(?:owner_name|cronjob)="([^"]+)"', f.read()))
    check(named and named <= set(cronjobs), f"{where} deploy/prometheus/alerts.yml names CronJobs {sorted(named - set(cronjobs))} that are not rendered")

    # point-service is reachable only from order-service and operator-service pods and the
    # ingress controller (plus the sandbox's webhook in dev), order-service only from
    # operator-service pods (the back office) and the ingress controller; and Prometheus on
    # their metrics ports: whom the monitoring component's prometheus-scrape lets in, and to
    # what, scripts/metrics-reach.py checks. Every policy that selects a service's pods counts,
    # also one that selects more.
    def reachable_from(deployment):
        labels = deployment["spec"]["template"]["metadata"]["labels"] if deployment else {}
        sources = set()
        for pol in by_kind.get("NetworkPolicy", []):
            selector = pol["spec"]["podSelector"]
            if not pol["spec"].get("ingress") or not (selector.get("matchLabels", {}).items() <= labels.items()
                                                      or selector.get("matchExpressions")):
                continue
            if pol["metadata"]["name"] == "prometheus-scrape":
                continue
            for rule in pol["spec"].get("ingress", []):
                check(rule.get("from"), f"{where} NetworkPolicy {pol['metadata']['name']} opens {labels.get('app.kubernetes.io/name')} to everyone")
                for peer in rule.get("from", []):
                    check(set(peer) <= {"podSelector", "namespaceSelector"} and len(peer) == 1,
                          f"{where} NetworkPolicy {pol['metadata']['name']}: unexpected peer {peer}")
                    if "podSelector" in peer:
                        sources.add("pods " + peer["podSelector"].get("matchLabels", {}).get("app.kubernetes.io/name", "<any>"))
                    if "namespaceSelector" in peer:
                        sources.add("namespace " + peer["namespaceSelector"].get("matchLabels", {}).get("kubernetes.io/metadata.name", "<any>"))
        return sources

    allowed_sources = {"pods order-service", "pods operator-service", "namespace ingress-nginx"}
    if overlay == "dev":
        allowed_sources.add("pods payment-sandbox")
    sources = reachable_from(point)
    check(sources == allowed_sources, f"{where} point-service is reachable from {sorted(sources)}, expected {sorted(allowed_sources)}")
    order_deployment = next((d for d in by_kind.get("Deployment", []) if d["metadata"]["name"] == "order-service"), None)
    sources = reachable_from(order_deployment)
    allowed_sources = {"pods operator-service", "namespace ingress-nginx"}
    check(sources == allowed_sources, f"{where} order-service is reachable from {sorted(sources)}, expected {sorted(allowed_sources)}")
    check(any(p["spec"]["podSelector"] == {} and not p["spec"].get("ingress") for p in by_kind.get("NetworkPolicy", [])),
          f"{where} no default-deny NetworkPolicy")
    check(any(p["spec"]["podSelector"] == {} and p["spec"].get("policyTypes") == ["Egress"]
              and not p["spec"].get("egress") for p in by_kind.get("NetworkPolicy", [])),
          f"{where} no default-deny egress NetworkPolicy")

    # X-Forwarded-For is trusted only where the ingress controller is known to overwrite it
    # (the prod overlay; k8s/README.md, "X-Forwarded-For").
    for name, data in configmaps.items():
        if overlay != "prod":
            check(data.get("TRUST_X_FORWARDED_FOR", "false") != "true",
                  f"{where} ConfigMap {name} trusts X-Forwarded-For")

# The controller refuses encoded separators and dot segments before choosing a rule
# (k8s/ingress-nginx/controller-config.yaml): nginx matches on the decoded path but forwards
# the raw target. Its regex is run here on targets that must be refused and ones that must pass.
with open(os.environ["CONTROLLER_CONFIG"]) as f:
    snippet = (yaml.safe_load(f) or {}).get("data", {}).get("server-snippet", "")
found = re.search(r'if \(\$request_uri ~\* "([^"]+)"\) \{\s*return 400;\s*\}', snippet)
check(found, "k8s/ingress-nginx/controller-config.yaml: no server-snippet refusing encoded separators")
if found:
    refuse = re.compile(found.group(1), re.IGNORECASE)
    for target in REFUSED_TARGETS:
        check(refuse.search(target), f"the controller's server-snippet lets {target} through")
    for target in PASSED_TARGETS:
        check(not refuse.search(target), f"the controller's server-snippet refuses {target}")

for e in errors:
    print(f"check-deploy: {e}", file=sys.stderr)
sys.exit(1 if errors else 0)
PY
}
project_rules "$work/dev.yaml" "$work/prod.yaml"
# The stop's rules refuse what they must: a drain no longer than the callers keep an idle
# connection, and a grace period that cannot hold preStop + drain + the requests in flight.
mkdir -p "$work/short-stop"
sed -e 's/HTTP_STOP_DRAIN_SECS: "10"/HTTP_STOP_DRAIN_SECS: "8"/' \
    -e 's/terminationGracePeriodSeconds: 50/terminationGracePeriodSeconds: 35/' \
    "$work/prod.yaml" >"$work/short-stop/prod.yaml"
if project_rules "$work/short-stop/prod.yaml" 2>"$work/short-stop/errors"; then
    fail "a render whose drain (8 s) is less than its callers' idle time (4 s) + 5 s passed"
fi
for refusal in "HTTP_STOP_DRAIN_SECS 8 must be at least every caller's idle time + 5 s" \
    "grace 35 s must exceed preStop 5 s + drain 8 s"; do
    grep -qF "$refusal" "$work/short-stop/errors" ||
        fail "the short-stop render was not refused with: $refusal ($(cat "$work/short-stop/errors"))"
done

echo "== service identities (scripts/service-identities.py, against \`service-identity callers\`)"
# Who may call whom is written once, in code (crates/service-identity/src/service.rs); the
# `service-identity` binary prints it, and gives the public half of each key the renders hold
# (`trust-entry`). `make test` has just built the workspace, binaries and tests in one feature
# set, so its binary is used; run by hand with none, or with one older than its sources, the
# one crate is built here (slower: its dependencies' features are unified apart from the
# workspace's).
identity_bin=${CARGO_TARGET_DIR:-target}/debug/service-identity
if ! [ -x "$identity_bin" ] ||
    [ -n "$(find crates/service-identity/src -newer "$identity_bin" -name '*.rs' | head -1)" ]; then
    command -v cargo >/dev/null ||
        fail "$identity_bin is missing or older than crates/service-identity/src, and there is no cargo to build it"
    cargo build --quiet --locked -p service-identity --bin service-identity
fi
"$identity_bin" callers >"$work/callers"
identities() { "$venv/bin/python" scripts/service-identities.py "$work/callers" "$identity_bin" "$@"; }
identities "$work/dev.yaml" "$work/prod.yaml"
# It refuses what it must: each mutant breaks one rule of a render that has just passed.
identity_mutant() { # MUTANT RENDER: writes $work/MUTANT/<RENDER's file name>
    mkdir -p "$work/$1"
    "$venv/bin/python" - "$1" "$2" "$work/$1/$(basename "$2")" <<'PY'
import re
import sys

import yaml

mutant, source, target = sys.argv[1:]
with open(source) as f:
    docs = [d for d in yaml.safe_load_all(f) if d]
pod = {d["metadata"]["name"]: d["spec"]["template"]["spec"] for d in docs if d["kind"] == "Deployment"}


def ref(service, variable):
    env = next(e for e in pod[service]["containers"][0]["env"] if e["name"] == variable)
    return next(iter(env["valueFrom"].values()))  # its secretKeyRef or configMapKeyRef


def trust(service):
    name = ref(service, "SERVICE_IDENTITY_TRUST")["name"]
    return next(d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"] == name)["data"]


key = "A" * 43  # 32 bytes of base64url: a well-formed public key, nobody's
if mutant == "shared-account":  # order-service's pods under point-service's account
    pod["order-service"]["serviceAccountName"] = pod["point-service"]["serviceAccountName"]
elif mutant == "shared-key":  # operator-service reading order-service's key
    ref("operator-service", "SERVICE_IDENTITY_KEY")["name"] = ref("order-service", "SERVICE_IDENTITY_KEY")["name"]
elif mutant == "extra-caller":  # auth-service trusting a service the code does not admit there
    trust("auth-service")["SERVICE_IDENTITY_TRUST"] += f",operator-service:k1:{key}"
elif mutant == "dev-only-trust":  # every service's development key: names no caller
    trust("point-service")["SERVICE_IDENTITY_TRUST"] = "dev-only"
elif mutant == "wrong-dev-key":  # order-service named, but not with the key it signs with
    data = trust("auth-service")
    data["SERVICE_IDENTITY_TRUST"] = re.sub(r"order-service:dev-only:[^,]+", f"order-service:dev-only:{key}",
                                            data["SERVICE_IDENTITY_TRUST"])
else:
    sys.exit(f"no mutant {mutant}")
with open(target, "w") as f:
    yaml.safe_dump_all(docs, f)
PY
}
while IFS='|' read -r mutant render refusal; do
    identity_mutant "$mutant" "$work/$render.yaml"
    if identities "$work/$mutant/$render.yaml" >/dev/null 2>"$work/$mutant/errors"; then
        fail "scripts/service-identities.py passed the $render render's $mutant mutant"
    fi
    grep -qF "$refusal" "$work/$mutant/errors" ||
        fail "the $render render's $mutant mutant was not refused with: $refusal ($(cat "$work/$mutant/errors"))"
done <<'MUTANTS'
shared-account|prod|order-service and point-service share the ServiceAccount point-service
shared-key|prod|operator-service and order-service share the identity Secret order-service-identity
extra-caller|prod|auth-service trusts the keys of operator-service, order-service, point-service, but the code admits order-service, point-service
dev-only-trust|dev|point-service: SERVICE_IDENTITY_TRUST is `dev-only`
wrong-dev-key|dev|auth-service does not trust order-service's key dev-only
MUTANTS
# --- 5 ---------------------------------------------------------------------------------------
echo "== who may reach /metrics (network-config-analyzer $NETWORK_CONFIG_ANALYZER_VERSION)"
# Fails, with NCA's list of the connections in question, when Prometheus may not scrape a
# service or may connect to anything else, or when a pod that is not Prometheus (in another
# namespace, or in this one without the services' labels) may connect to any pod here.
"$nca_venv/bin/python" scripts/metrics-reach.py "$work/dev.yaml" "$work/prod.yaml" "$work/pgbouncer-at-scale.yaml"

# --- 6 ---------------------------------------------------------------------------------------
echo "== connection budget"
"$venv/bin/python" scripts/connection-budget.py "$work/dev.yaml" "$work/prod.yaml" "$work/pgbouncer-at-scale.yaml" \
    "$work/cloudnative-pg-dev.yaml" "$work/cloudnative-pg-prod.yaml"
# The two self-tests below are about the script (does it refuse what does not fit, does it
# count a CronJob whose runs may overlap twice?), not about this deployment: they are read
# against a server that leaves exactly prod's own count (plus one for the second), so the
# pools, replicas and postgres-limits an operator sets in the prod overlay (k8s/README.md,
# "Production", step 1) do not change what they show.
prod_count=$("$venv/bin/python" scripts/connection-budget.py "$work/prod.yaml" |
    sed -n 's/^ *to PostgreSQL: \([0-9]*\) of .*/\1/p')
server_leaves() { # RENDER CONNECTIONS: the render's postgres-limits, set to leave exactly that many
    "$venv/bin/python" - "$1" "$2" <<'PY'
import sys

import yaml

path, left = sys.argv[1], int(sys.argv[2])
with open(path) as f:
    documents = list(yaml.safe_load_all(f))
for d in documents:
    if d and d.get("kind") == "ConfigMap" and d["metadata"]["name"].startswith("postgres-limits"):
        d["data"]["max_connections"] = str(left + int(d["data"]["reserved_connections"]))
with open(path, "w") as f:
    yaml.safe_dump_all(documents, f)
PY
}
# The check must refuse a deployment that does not fit: prod at 20 pods per autoscaler.
server_leaves "$work/over-budget.yaml" "$prod_count"
if "$venv/bin/python" scripts/connection-budget.py "$work/over-budget.yaml" >/dev/null 2>"$work/over-budget.err"; then
    fail "scripts/connection-budget.py passed k8s/tests/over-budget, which does not fit"
fi
grep -q "exceed max_connections less the reserve" "$work/over-budget.err" ||
    fail "scripts/connection-budget.py refused k8s/tests/over-budget for another reason: $(cat "$work/over-budget.err")"
# ... and one that fits only if a CronJob that may overlap itself is not counted twice.
server_leaves "$work/cronjob-over-budget.yaml" $((prod_count + 1))
if "$venv/bin/python" scripts/connection-budget.py "$work/cronjob-over-budget.yaml" >"$work/cronjob.out" 2>"$work/cronjob.err"; then
    fail "scripts/connection-budget.py passed k8s/tests/cronjob-over-budget, which does not fit"
fi
grep -q "to PostgreSQL: $((prod_count + 2)) of $((prod_count + 1)) " "$work/cronjob.out" ||
    fail "scripts/connection-budget.py miscounted k8s/tests/cronjob-over-budget: $(cat "$work/cronjob.out")"

if [ "${CHECK_DOCUMENT_FIGURES:-}" = 1 ]; then
echo "== the documents' budget figures and pool sizes"
# k8s/README.md and docs/scaling.md quote each render's count and the pools; the renders and
# k8s/base/config decide them. A figure the documents give must be the one computed here.
# Only in `make test` (scripts/test.sh sets CHECK_DOCUMENT_FIGURES=1), on the overlays as this
# repository ships them: an operator's own overlay (k8s/README.md, "Production", step 1)
# legitimately comes to other figures than the documents give.
for render in dev prod over-budget cronjob-over-budget pgbouncer-at-scale; do
    # The over-budget renders exit 1 (above); their sums are printed all the same.
    sums=$("$venv/bin/python" scripts/connection-budget.py "$work/$render.yaml" 2>/dev/null || true)
    sed -n "s/^ *to PostgreSQL: \([0-9]*\) of \([0-9]*\).*/$render \1 \2/p" <<<"$sums"
done >"$work/budgets.txt"
"$venv/bin/python" - "$work/budgets.txt" <<'PY'
import pathlib
import re
import sys

budgets = {render: (int(total), int(limit)) for render, total, limit in
           (line.split() for line in pathlib.Path(sys.argv[1]).read_text().splitlines())}
readme = re.sub(r"\s+", " ", pathlib.Path("k8s/README.md").read_text())
scaling = pathlib.Path("docs/scaling.md").read_text()
errors = []
# docs/scaling.md, "Connection budget": one table row per render, "| <render ...> | total | limit |".
rows = {"dev": "| dev (", "prod": "| prod (", "over-budget": "`k8s/tests/over-budget`",
        "cronjob-over-budget": "`k8s/tests/cronjob-over-budget`", "pgbouncer-at-scale": "`k8s/tests/pgbouncer-at-scale`"}
for render, marker in rows.items():
    total, limit = budgets[render]
    row = next((line for line in scaling.splitlines() if line.startswith("|") and marker in line), None)
    cells = [c.strip() for c in row.strip("|").split("|")] if row else []
    if len(cells) < 3 or not cells[-2].startswith(str(total)) or cells[-1] != str(limit):
        errors.append(f"docs/scaling.md's row for {render} is {row!r}; the render comes to {total} of {limit}")
# k8s/README.md, "Database connections".
total, limit = budgets["prod"]
if f"Prod comes to {total} of {limit}" not in readme:
    errors.append(f"k8s/README.md does not say 'Prod comes to {total} of {limit}'")
if f"dev to {budgets['dev'][0]}" not in readme:
    errors.append(f"k8s/README.md does not say 'dev to {budgets['dev'][0]}'")
total, limit = budgets["cronjob-over-budget"]
if f"CronJob that may overlap itself: {total} of {limit}" not in readme:
    errors.append(f"k8s/README.md does not give k8s/tests/cronjob-over-budget's {total} of {limit}")
# Pool sizes: k8s/base/config/<service>.env decide them.
pools = {}
for env in pathlib.Path("k8s/base/config").glob("*.env"):
    for line in env.read_text().splitlines():
        if line.startswith("DATABASE_POOL_SIZE="):
            pools[env.stem] = int(line.split("=", 1)[1])
said = (f"`DATABASE_POOL_SIZE` is {pools['order-service']} per pod for the order and point services, "
        f"{pools['auth-service']} for auth-service, {pools['operator-service']} for operator-service")
if pools["order-service"] != pools["point-service"] or said not in readme:
    errors.append(f"k8s/README.md does not say: {said}")
for e in errors:
    print(f"check-deploy: {e}", file=sys.stderr)
if errors:
    sys.exit(1)
print(f"budgets {budgets} and pools {pools} as the documents say")
PY
fi

echo "== deploy checks passed"
