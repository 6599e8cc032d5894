//! A service's `/metrics` as the tests read it: one series' value, or `None` when the
//! service does not export it.

/// The value of the series written exactly as the exposition writes it, labels in their
/// order: `value(&text, r#"otp_sms_sends_total{outcome="sent"}"#)`.
pub fn value(text: &str, series: &str) -> Option<f64> {
    text.lines().find_map(|line| {
        let rest = line.strip_prefix(series)?.strip_prefix(' ')?;
        rest.trim().parse().ok()
    })
}

/// `GET {base}/metrics`, as text.
pub async fn scrape(client: &reqwest::Client, base: &str) -> String {
    client
        .get(format!("{base}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

/// Scrapes `{base}/metrics` until `series` reads `value` (a gauge a serving process sets from
/// the database on its own schedule), for up to 10 s; the page it was found on.
pub async fn wait_for(client: &reqwest::Client, base: &str, series: &str, value: f64) -> String {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let text = scrape(client, base).await;
        if self::value(&text, series) == Some(value) {
            return text;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{series} is not {value} in:\n{text}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// Refuses to go on unless the test has its process to itself, as nextest gives each test
/// (and `make test` requires nextest). The metrics registry is the process's, moved by every
/// app in it: a test that reads exact counts from it would race the other tests of its
/// binary under `cargo test`, which runs them as threads of one process.
pub fn alone_in_the_process() {
    assert_eq!(
        std::env::var("NEXTEST_EXECUTION_MODE").as_deref(),
        Ok("process-per-test"),
        "this test reads the process-wide metrics registry: run it with `cargo nextest run`, \
         which gives each test a process of its own"
    );
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_series_is_found_by_its_whole_name_and_labels() {
        let text = "# TYPE a_total counter\na_total{k=\"x\"} 3\na_total{k=\"xy\"} 5\nab_total 7\n";
        assert_eq!(super::value(text, r#"a_total{k="x"}"#), Some(3.0));
        assert_eq!(super::value(text, r#"a_total{k="xy"}"#), Some(5.0));
        assert_eq!(super::value(text, "ab_total"), Some(7.0));
        assert_eq!(super::value(text, "a_total"), None);
    }
}
