//! Which metric and label names a PromQL expression reads, checked against what the services
//! really export (their `/metrics` text), so that a dashboard panel or an alert rule cannot
//! name a metric or a label that does not exist (a typo, a renamed metric) and silently show
//! nothing.

use std::collections::{BTreeMap, BTreeSet};

use promql_parser::label::Matchers;
use promql_parser::parser::{self, Expr, LabelModifier, VectorSelector};

/// Labels Prometheus gives every series from its scrape target, not the services' own.
pub const TARGET_LABELS: [&str; 4] = ["job", "instance", "namespace", "pod"];

/// The series Prometheus writes itself for each scrape target (`up`: 1 when the scrape
/// succeeded), which the alerts on silence read: they carry the target's labels only.
pub const SCRAPE_SERIES: [&str; 1] = ["up"];

/// kube-state-metrics' metrics (the scheduled-job alerts read them): not the services', so
/// their names are left to the rules' unit tests (deploy/prometheus/alerts*.test.yml).
pub const KUBE_STATE_METRICS: &str = "kube_";

/// Every metric name in some `/metrics` text, with the label names its series carry.
#[derive(Debug, Default)]
pub struct Exported {
    metrics: BTreeMap<String, BTreeSet<String>>,
}

impl Exported {
    /// Reads Prometheus text exposition (several services' texts, one after the other).
    pub fn from_text(text: &str) -> Exported {
        let mut exported = Exported::default();
        for line in text.lines().map(str::trim) {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let end = line.find(['{', ' ']).unwrap_or(line.len());
            let labels = exported.metrics.entry(line[..end].to_owned()).or_default();
            if line[end..].starts_with('{') {
                labels.extend(label_names(&line[end + 1..]));
            }
        }
        exported
    }

    pub fn has(&self, metric: &str) -> bool {
        self.metrics.contains_key(metric)
    }
}

/// The label names of `a="x",b="y\"z"} 1` (what follows a series' `{`).
fn label_names(mut rest: &str) -> Vec<String> {
    let mut names = Vec::new();
    while let Some((name, after)) = rest.split_once("=\"") {
        names.push(name.trim_start_matches(',').trim().to_owned());
        // The value runs to the first quote not escaped by a backslash.
        let mut escaped = false;
        let close = after
            .char_indices()
            .find(|&(_, c)| {
                let closes = c == '"' && !escaped;
                escaped = c == '\\' && !escaped;
                closes
            })
            .map_or(after.len(), |(i, _)| i);
        rest = &after[(close + 1).min(after.len())..];
        if rest.starts_with('}') {
            break;
        }
    }
    names
}

/// What is wrong with `expr` against `exported`: it does not parse, or it names a metric
/// the services do not export, or a label that none of the metrics it reads carries.
pub fn problems(expr: &str, exported: &Exported) -> Vec<String> {
    let ast = match parser::parse(expr) {
        Ok(ast) => ast,
        Err(e) => return vec![format!("does not parse: {e}")],
    };
    let mut found = Found::default();
    found.walk(&ast);
    let mut problems = Vec::new();
    let mut readable: BTreeSet<&str> = TARGET_LABELS.into_iter().collect();
    let mut reads_kube_state = false;
    for (metric, labels) in &found.selectors {
        if metric.starts_with(KUBE_STATE_METRICS) {
            reads_kube_state = true;
            continue;
        }
        if SCRAPE_SERIES.contains(&metric.as_str()) {
            for label in labels {
                if !TARGET_LABELS.contains(&label.as_str()) {
                    problems.push(format!("{metric} has no label {label}"));
                }
            }
            continue;
        }
        let Some(has) = exported.metrics.get(metric) else {
            problems.push(format!("no service exports the metric {metric}"));
            continue;
        };
        readable.extend(has.iter().map(String::as_str));
        for label in labels {
            if !has.contains(label) && !TARGET_LABELS.contains(&label.as_str()) {
                problems.push(format!("{metric} has no label {label}"));
            }
        }
    }
    if !reads_kube_state {
        for label in &found.grouping {
            if !readable.contains(label.as_str()) {
                problems.push(format!(
                    "groups or matches on {label}, which none of its metrics has"
                ));
            }
        }
    }
    problems
}

/// The selectors (metric, label names matched) and the labels grouped or matched on.
#[derive(Default)]
struct Found {
    selectors: Vec<(String, Vec<String>)>,
    grouping: Vec<String>,
}

impl Found {
    fn walk(&mut self, expr: &Expr) {
        match expr {
            Expr::Aggregate(a) => {
                self.modifier(a.modifier.as_ref());
                self.walk(&a.expr);
                if let Some(param) = &a.param {
                    self.walk(param);
                }
            }
            Expr::Unary(u) => self.walk(&u.expr),
            Expr::Binary(b) => {
                if let Some(modifier) = &b.modifier {
                    self.modifier(modifier.matching.as_ref());
                    if let Some(labels) = modifier.card.labels() {
                        self.grouping.extend(labels.labels.iter().cloned());
                    }
                }
                self.walk(&b.lhs);
                self.walk(&b.rhs);
            }
            Expr::Paren(p) => self.walk(&p.expr),
            Expr::Subquery(s) => self.walk(&s.expr),
            Expr::VectorSelector(vs) => self.selector(vs),
            Expr::MatrixSelector(ms) => self.selector(&ms.vs),
            Expr::Call(call) => call.args.args.iter().for_each(|arg| self.walk(arg)),
            Expr::NumberLiteral(_) | Expr::StringLiteral(_) | Expr::Extension(_) => {}
        }
    }

    fn modifier(&mut self, modifier: Option<&LabelModifier>) {
        if let Some(modifier) = modifier {
            self.grouping
                .extend(modifier.labels().labels.iter().cloned());
        }
    }

    fn selector(&mut self, vs: &VectorSelector) {
        let matchers = all_matchers(&vs.matchers);
        let name = vs.name.clone().or_else(|| {
            matchers
                .iter()
                .find(|m| m.name == "__name__")
                .map(|m| m.value.clone())
        });
        let labels = matchers
            .iter()
            .map(|m| m.name.clone())
            .filter(|l| l != "__name__")
            .collect();
        self.selectors.push((name.unwrap_or_default(), labels));
    }
}

fn all_matchers(matchers: &Matchers) -> Vec<&promql_parser::label::Matcher> {
    matchers
        .matchers
        .iter()
        .chain(matchers.or_matchers.iter().flatten())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "# TYPE http_requests_total counter\n\
        http_requests_total{method=\"GET\",route=\"/a/{id}\",status=\"200\"} 3\n\
        http_request_duration_seconds_bucket{method=\"GET\",route=\"/a/{id}\",status=\"200\",le=\"0.5\"} 1\n\
        db_pool_connections{state=\"in_use\"} 1\n";

    #[test]
    fn label_names_are_read_past_braces_and_escaped_quotes_in_values() {
        assert_eq!(
            label_names("a=\"x{y}\",b=\"q\\\"z,c=\\\"\",c=\"\"} 1"),
            ["a", "b", "c"]
        );
    }

    #[test]
    fn a_query_on_exported_names_has_no_problem() {
        let exported = Exported::from_text(TEXT);
        let expr = "histogram_quantile(0.95, sum by (job, route, le) \
            (rate(http_request_duration_seconds_bucket{namespace=~\"x\", route!=\"/readyz\"}[5m]))) \
            / on (job) group_left sum by (job) (db_pool_connections{state=\"in_use\"})";
        assert_eq!(problems(expr, &exported), Vec::<String>::new());
    }

    #[test]
    fn a_misspelt_metric_or_label_or_a_bad_query_is_a_problem() {
        let exported = Exported::from_text(TEXT);
        assert_eq!(
            problems("rate(http_request_total[5m])", &exported),
            ["no service exports the metric http_request_total"]
        );
        assert_eq!(
            problems("http_requests_total{stauts=\"500\"}", &exported),
            ["http_requests_total has no label stauts"]
        );
        assert_eq!(
            problems("sum by (kind) (http_requests_total)", &exported),
            ["groups or matches on kind, which none of its metrics has"]
        );
        assert!(problems("sum by (job (x)", &exported)[0].starts_with("does not parse"));
        // kube-state-metrics' names are not the services' to export.
        assert!(problems("kube_job_failed{condition=\"true\"} == 1", &exported).is_empty());
        // Nor is Prometheus's own `up`, which has the target's labels and no other.
        assert!(
            problems(
                "sum by (namespace, job) (up{job=\"a\"}) == 0 or absent(up{job=\"b\"})",
                &exported
            )
            .is_empty()
        );
        assert_eq!(
            problems("up{route=\"/x\"} == 0", &exported),
            ["up has no label route"]
        );
    }
}
