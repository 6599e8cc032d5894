#!/usr/bin/env bash
# The alert rules and the monitoring manifests, checked without a cluster (make test):
#   1. promtool check rules: deploy/prometheus/alerts.yml parses (PromQL, templates);
#   2. promtool test rules: deploy/prometheus/alerts.test.yml and alerts.days.test.yml (the
#      tests whose series span days, evaluated at a coarser step), in which each alert fires
#      when its condition holds and stays silent when it does not;
#   3. every alert has a severity (critical or warning), a summary, a description, a unit
#      test that expects it to fire, and an absolute runbook_url, <base>#<section>: one base
#      for every alert (the address of docs/runbook.md that alerts.yml's header states, which
#      the Kustomize overlays replace with their own) and a section that exists in
#      docs/runbook.md;
#   4. every dashboard name the runbook gives in italics is a panel or row of the dashboard;
#   5. k8s/components/monitoring's generated copies are what deploy/ makes of them
#      (scripts/monitoring-manifests.sh --check).
# The queries of the rules and of the dashboard (deploy/grafana/loyalty.json) are checked
# against the metrics the running services export by the end-to-end test
# tests/system/monitoring.rs, which also has a real Prometheus fire an alert.
#
# promtool comes from Debian's `prometheus` package (installed when missing; the end-to-end
# test runs its `prometheus`); PyYAML from a cached virtualenv, pinned below.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO"

PYYAML_VERSION=6.0.3
venv=${XDG_CACHE_HOME:-$HOME/.cache}/loyalty-tools/monitoring-venv

require_commands promtool:prometheus prometheus:prometheus
pinned_venv "$venv" "PyYAML==$PYYAML_VERSION"

echo "== promtool check rules"
promtool check rules deploy/prometheus/alerts.yml
echo "== promtool test rules"
# Run from the file's directory: its rule_files are relative to it.
(cd deploy/prometheus && promtool test rules alerts.test.yml alerts.days.test.yml)

echo "== alert labels, annotations, tests and runbook sections"
"$venv/bin/python" - deploy/prometheus/alerts.yml docs/runbook.md deploy/prometheus/alerts.test.yml \
    deploy/prometheus/alerts.days.test.yml <<'PY'
import re
import sys

import yaml

rules_path, runbook_path, *tests_paths = sys.argv[1:]
with open(rules_path) as f:
    rules_text = f.read()
rules = [r for g in yaml.safe_load(rules_text)["groups"] for r in g["rules"] if "alert" in r]
header = "".join(line for line in rules_text.splitlines(True) if line.startswith("#"))
tests = []
for tests_path in tests_paths:
    with open(tests_path) as f:
        tests += yaml.safe_load(f)["tests"]
with open(runbook_path) as f:
    headings = [line.lstrip("#").strip() for line in f if line.startswith("#")]


def anchor(heading):
    """The anchor GitHub (and most Markdown renderers) give a heading."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


anchors = {anchor(h) for h in headings}
tested = {t["alertname"] for test in tests for t in test.get("alert_rule_test", []) if t.get("exp_alerts")}
errors = []
# The one base: the first alert's, which every other must share and the header must state.
base = rules[0].get("annotations", {}).get("runbook_url", "").partition("#")[0] if rules else ""
if not re.fullmatch(r"https://\S+/docs/runbook\.md", base):
    errors.append(f"the runbook base {base!r} is not an https:// address of docs/runbook.md")
if base not in header:
    errors.append(f"the header of {rules_path} does not state the runbook base {base}")
for rule in rules:
    name = rule["alert"]
    if rule.get("labels", {}).get("severity") not in ("critical", "warning"):
        errors.append(f"{name}: severity must be critical or warning")
    annotations = rule.get("annotations", {})
    for key in ("summary", "description", "runbook_url"):
        if not annotations.get(key):
            errors.append(f"{name}: no {key}")
    url = annotations.get("runbook_url", "")
    page, _, section = url.partition("#")
    if page != base or section not in anchors:
        errors.append(f"{name}: runbook_url {url} is not {base}#<a section of docs/runbook.md>")
    if name not in tested:
        errors.append(f"{name}: no test in {' or '.join(tests_paths)} expects it to fire")
for e in errors:
    print(f"check-monitoring: {e}", file=sys.stderr)
if errors:
    sys.exit(1)
print(f"{len(rules)} alerts, each with its labels, annotations, test and runbook section under {base}")
PY

echo "== dashboard names the documents use"
# Every name in italics in the runbook is a panel or row of deploy/grafana/loyalty.json (or the
# dashboard itself), except the few it names that are not on the dashboard: an on-call
# engineer looks for exactly that title.
"$venv/bin/python" - deploy/grafana/loyalty.json docs/runbook.md <<'PY'
import json
import re
import sys

dashboard_path, runbook_path = sys.argv[1:]
NOT_PANELS = {
    "Loyalty",  # Grafana's folder
    "Status → Targets",  # Prometheus's own page
    "Last error",  # a column of that page
}
with open(dashboard_path) as f:
    dashboard = json.load(f)


def titles(panels):
    for panel in panels:
        yield panel.get("title")
        yield from titles(panel.get("panels", []))


known = set(titles(dashboard["panels"])) | {dashboard["title"]}
with open(runbook_path) as f:
    text = re.sub(r"\*\*[^*]+\*\*", "", f.read())  # bold is not a name
named = {re.sub(r"\s+", " ", m) for m in re.findall(r"(?<![*\w])\*([^*\n][^*]*?)\*(?![*\w])", text)}
wrong = sorted(named - known - NOT_PANELS)
for name in wrong:
    print(f"check-monitoring: {runbook_path} names *{name}*, which is no panel of {dashboard_path}", file=sys.stderr)
if wrong:
    sys.exit(1)
print(f"{len(named & known)} dashboard names in {runbook_path}, each a panel, row or the dashboard")
PY

echo "== generated manifests"
scripts/monitoring-manifests.sh --check
echo "== monitoring checks passed"
