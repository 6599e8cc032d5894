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
