//! Probes: many requests, each with how it must be answered, sent a few at a time, and
//! what failed described (the odd-input and body-limit tests).

use futures_util::StreamExt;
use serde_json::Value;
use testkit::without_stack;

use super::System;

pub(super) type Rule = Box<dyn Fn(u16, &Value) -> bool + Send + Sync>;

/// One request (method, URL, bearer token, JSON body) and how it must be answered.
pub(super) type Probe = (String, String, Option<String>, Option<Value>, Expect);

/// How an odd input must be answered.
pub(super) enum Expect {
    /// Exactly this status and body (`stack` removed).
    Exactly(u16, Value),
    /// A rule, described.
    Rule(String, Rule),
}

pub(super) fn rule(
    what: impl Into<String>,
    check: impl Fn(u16, &Value) -> bool + Send + Sync + 'static,
) -> Expect {
    Expect::Rule(what.into(), Box::new(check))
}

/// Runs the probes and fails the test with every probe not answered as it must be.
pub(super) async fn assert_answered(sys: &System, probes: &[Probe]) {
    let found = failures(sys, probes).await;
    assert!(
        found.is_empty(),
        "{} of {} probes failed:\n{}",
        found.len(),
        probes.len(),
        found.join("\n")
    );
}

/// Runs the probes a few at a time and returns what failed, described.
async fn failures(sys: &System, probes: &[Probe]) -> Vec<String> {
    futures_util::stream::iter(probes)
        .map(|(method, url, token, body, expect)| async move {
            let (status, answer) = sys.call(method, url, token.as_deref(), body.as_ref()).await;
            let answer = without_stack(answer);
            let (ok, wanted) = match expect {
                Expect::Exactly(s, b) => ((status, &answer) == (*s, b), format!("{s} {b}")),
                Expect::Rule(what, check) => (check(status, &answer), what.clone()),
            };
            (!ok).then(|| {
                let url: String = url.chars().take(150).collect();
                let body: String = body
                    .as_ref()
                    .map(|b| b.to_string().chars().take(120).collect())
                    .unwrap_or_default();
                let answer: String = answer.to_string().chars().take(300).collect();
                format!(
                    "{method} {url} {body}: {status} {answer}; expected {}",
                    wanted.chars().take(300).collect::<String>()
                )
            })
        })
        .buffer_unordered(8)
        .filter_map(std::future::ready)
        .collect()
        .await
}
