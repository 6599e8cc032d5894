#!/usr/bin/env python3
"""The database connection budget of rendered Kubernetes manifests (`kubectl kustomize`).

    connection-budget.py RENDER.yaml...

For each render, the worst case (`pods_at_worst` and `per_pod` are the rule, written once):

- a Deployment that talks to PostgreSQL runs, during a rollout at the autoscaler's maximum,
  maxReplicas pods plus maxSurge new ones, while the pods the last step retired (at most
  maxSurge + maxUnavailable) still hold their pools through preStop and their drain;
- a pod holds its pool (DATABASE_POOL_SIZE), or while it starts one connection per init
  container that reaches the database (wait-for-migrations), never both at once;
- a Job (the migrations) or a CronJob (a command-line tool: audit, unapplied-captures) holds
  one connection per container that reaches the database, a CronJob once per run
  (concurrencyPolicy Forbid or Replace) or twice (Allow: a run may overlap the next);
- CronJobs that run once a day (`M H * * *`) with a startingDeadlineSeconds and an
  activeDeadlineSeconds hold their connection only inside their run's window: from the
  scheduled time until it may start no later, plus its deadline and its pods' grace period.
  Of those, in one timeZone, only the most whose windows meet at one instant count
  (`daily_window`, `busiest_instant`); any other CronJob counts as always running.

Those that go through PgBouncer (their DATABASE_URL is a `*_POOLED_DATABASE_URL` key) count
against PgBouncer's max_client_conn instead, and PgBouncer's own pods count (pods x databases x
(default_pool_size + reserve_pool_size)) against the server. The server's side must stay within
max_connections less reserved_connections, both read from the ConfigMap `postgres-limits`, or,
when the render holds a CloudNativePG Cluster, from its PostgreSQL parameters (max_connections
less superuser_reserved_connections and reserved_connections).
Prints the sums; exits 1 if a render does not fit.
"""

import configparser
import math
import sys

import renders  # scripts/renders.py, beside this script

POOLED_SUFFIX = "_POOLED_DATABASE_URL"
DIRECT_SUFFIX = "_DATABASE_URL"
BINARY_DEFAULT_POOL = 10  # DATABASE_POOL_SIZE when a service's ConfigMap does not set it


def rolling(deployment, replicas, field, default, rounding):
    """maxSurge (rounded up) or maxUnavailable (rounded down), as Kubernetes reads them."""
    value = deployment["spec"].get("strategy", {}).get("rollingUpdate", {}).get(field, default)
    if isinstance(value, str) and value.endswith("%"):
        return rounding(replicas * int(value[:-1]) / 100)
    return int(value)


def pods_at_worst(deployment, replicas):
    """(surge, retiring): the pods a rollout adds beyond `replicas`, and the old pods it has
    retired that may still be terminating with their pools open. Recreate stops every old
    pod before it starts the new ones."""
    if deployment["spec"].get("strategy", {}).get("type") == "Recreate":
        return 0, 0
    surge = rolling(deployment, replicas, "maxSurge", "25%", math.ceil)
    unavailable = rolling(deployment, replicas, "maxUnavailable", "25%", math.floor)
    return surge, max(surge + unavailable, 1)


def reaches_database(container):
    return any(e["name"] == "DATABASE_URL" for e in container.get("env", []))


def per_pod(pod, pool):
    """A pod's connections at most: its pool, or one per init container that reaches the
    database (they run, one after the other, before the pool exists)."""
    init = sum(1 for c in pod.get("initContainers", []) if reaches_database(c))
    return max(pool, min(init, 1))


def per_run(job_spec):
    return sum(1 for c in job_spec["template"]["spec"]["containers"] if reaches_database(c))


DAY = 24 * 3600


def daily_window(cron):
    """(timeZone, start, end) in seconds of the day of a once-a-day CronJob's run: it starts at
    the scheduled time or, late, within startingDeadlineSeconds (else it is skipped), and its
    Job ends by activeDeadlineSeconds plus its pods' termination grace period. None for any
    other CronJob (another schedule, or no bound on when it starts or how long it runs)."""
    spec = cron["spec"]
    job = spec["jobTemplate"]["spec"]
    fields = spec["schedule"].split()
    if len(fields) != 5 or fields[2:] != ["*", "*", "*"] or not all(f.isdigit() for f in fields[:2]):
        return None
    if "startingDeadlineSeconds" not in spec or "activeDeadlineSeconds" not in job:
        return None
    minute, hour = int(fields[0]), int(fields[1])
    if minute > 59 or hour > 23:
        return None
    start = hour * 3600 + minute * 60
    grace = job["template"]["spec"].get("terminationGracePeriodSeconds", 30)
    length = int(spec["startingDeadlineSeconds"]) + int(job["activeDeadlineSeconds"]) + int(grace)
    if length >= DAY:
        return None
    return spec.get("timeZone", "UTC"), start, start + length


def busiest_instant(windows):
    """The most connections held at one instant by runs with these (start, end, connections)
    windows of one day (a window may run past midnight). The busiest instant is some run's
    start."""
    def covers(window, t):
        start, end, _ = window
        return start <= t < end or start <= t + DAY < end
    return max((sum(w[2] for w in windows if covers(w, start)) for start, _, _ in windows), default=0)


def cronjob_connections(cronjobs):
    """What the CronJobs hold at most at once: the daily ones' busiest instant per timeZone,
    the others all the time."""
    by_zone, always = {}, 0
    for cron in cronjobs:
        each = per_run(cron["spec"]["jobTemplate"]["spec"])
        if cron["spec"].get("concurrencyPolicy", "Allow") == "Allow":
            each *= 2
        window = daily_window(cron)
        if window is None:
            always += each
        else:
            zone, start, end = window
            by_zone.setdefault(zone, []).append((start, end, each))
    return always + sum(busiest_instant(windows) for windows in by_zone.values())


def check(path):
    by_kind, configmaps = renders.read(path)
    limits = next((data for name, data in configmaps.items() if name.startswith("postgres-limits")), None)
    clusters = by_kind.get("Cluster", [])
    if clusters:
        # The databases on CloudNativePG (k8s/components/cloudnative-pg): the server's limits are
        # the Cluster's own parameters, with PostgreSQL's defaults where it sets none.
        parameters = clusters[0]["spec"].get("postgresql", {}).get("parameters", {})
        limits = {"max_connections": parameters.get("max_connections", "100"),
                  "reserved_connections": str(int(parameters.get("superuser_reserved_connections", "3"))
                                              + int(parameters.get("reserved_connections", "0")))}
    if limits is None:
        return [f"{path}: no ConfigMap postgres-limits (max_connections, reserved_connections)"], []
    budget = int(limits["max_connections"]) - int(limits["reserved_connections"])
    hpa_max = {h["spec"]["scaleTargetRef"]["name"]: h["spec"]["maxReplicas"]
               for h in by_kind.get("HorizontalPodAutoscaler", [])}

    lines, errors = [], []
    server, clients = 0, 0
    pooled_databases = set()
    bouncer = None
    for dep in by_kind.get("Deployment", []):
        name = dep["metadata"]["name"]
        pod = dep["spec"]["template"]["spec"]
        replicas = hpa_max.get(name, dep["spec"].get("replicas", 1))
        surge, retiring = pods_at_worst(dep, replicas)
        pods = replicas + surge + retiring
        if dep["metadata"].get("labels", {}).get("app.kubernetes.io/name") == "pgbouncer":
            bouncer = (dep, pods)
            continue
        container = pod["containers"][0]
        url = next((e for e in container.get("env", []) if e["name"] == "DATABASE_URL"), None)
        if url is None:
            continue
        key = url["valueFrom"]["secretKeyRef"]["key"]
        pool = BINARY_DEFAULT_POOL
        for source in container.get("envFrom", []):
            data = configmaps.get(source.get("configMapRef", {}).get("name"), {})
            pool = int(data.get("DATABASE_POOL_SIZE", pool))
        each = per_pod(pod, pool)
        n = pods * each
        shown = f"  {name:<18} ({replicas} + {surge} surge + {retiring} terminating) x {each} = {n}"
        if key.endswith(POOLED_SUFFIX):
            clients += n
            pooled_databases.add(key[: -len(POOLED_SUFFIX)])
            lines.append(shown + " to PgBouncer")
        else:
            server += n
            lines.append(shown)
    jobs = sum(per_run(j["spec"]) for j in by_kind.get("Job", []))
    server += jobs
    lines.append(f"  {'Jobs':<18} {jobs}")
    cron = cronjob_connections(by_kind.get("CronJob", []))
    server += cron
    lines.append(f"  {'CronJobs':<18} {cron}")

    if clients:
        if bouncer is None:
            errors.append(f"{path}: Deployments use {POOLED_SUFFIX} keys but no PgBouncer is rendered")
        else:
            dep, pods = bouncer
            ini_name = next(v["configMap"]["name"] for v in dep["spec"]["template"]["spec"]["volumes"]
                            if "configMap" in v)
            ini = configparser.ConfigParser(interpolation=None)
            ini.read_string(configmaps[ini_name]["pgbouncer.ini"])
            settings = ini["pgbouncer"]
            per_pool = int(settings.get("default_pool_size", 20)) + int(settings.get("reserve_pool_size", 0))
            max_client = int(settings.get("max_client_conn", 100))
            n = pods * len(pooled_databases) * per_pool
            server += n
            lines.append(f"  {'pgbouncer':<18} {pods} pods x {len(pooled_databases)} databases x "
                         f"{per_pool} server connections = {n}")
            lines.append(f"  services to PgBouncer: {clients} of max_client_conn {max_client} (one pod may get them all)")
            if clients > max_client:
                errors.append(f"{path}: {clients} service connections to PgBouncer exceed its max_client_conn {max_client}")
    lines.append(f"  to PostgreSQL: {server} of {budget} (max_connections {limits['max_connections']} "
                 f"less {limits['reserved_connections']} reserved)")
    if server > budget:
        errors.append(f"{path}: {server} connections to PostgreSQL at the autoscalers' maximum exceed "
                      f"max_connections less the reserve ({budget}): lower maxReplicas or DATABASE_POOL_SIZE, "
                      f"raise max_connections, or put PgBouncer in front (k8s/components/pgbouncer)")
    return errors, lines


def main():
    failed = False
    for path in sys.argv[1:]:
        errors, lines = check(path)
        print(f"connection budget of {path}:")
        for line in lines:
            print(line)
        for e in errors:
            print(f"connection-budget: {e}", file=sys.stderr)
        failed |= bool(errors)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
