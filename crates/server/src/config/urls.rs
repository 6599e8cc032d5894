//! URLs of other services and collectors: `http(s)://` only, and reported without the parts
//! that may hold a credential.

use super::Env;

impl Env {
    /// A `http(s)://` URL, or `None` when unset. An invalid one is reported by its scheme and
    /// host only, like `DATABASE_URL`: its user info, path or query may hold a credential
    /// (`SMS_HTTP_URL` may carry the provider's key), and the error goes to the log.
    pub fn url(&mut self, name: &str) -> Option<String> {
        let raw = self.optional(name)?;
        let shown = match url::Url::parse(&raw) {
            Ok(u) if u.scheme() == "http" || u.scheme() == "https" => {
                return Some(raw.trim_end_matches('/').to_owned());
            }
            Ok(u) => format!("{}://{}", u.scheme(), u.host_str().unwrap_or_default()),
            // The parser's reason names no part of the value ("relative URL without a base").
            Err(e) => e.to_string(),
        };
        self.error(format!(
            "{name} is invalid ({shown}): expected an http:// or https:// URL"
        ));
        None
    }
}

#[cfg(test)]
mod tests {
    use super::super::env;

    #[test]
    fn an_invalid_url_is_reported_by_scheme_and_host_only() {
        let secret_parts = ["provider-key-123", "user", "hunter2", "/send/path"];
        let cases = [
            (
                "ftp://user:hunter2@sms.example.com/send/path?key=provider-key-123",
                "SMS_HTTP_URL is invalid (ftp://sms.example.com): \
                 expected an http:// or https:// URL",
            ),
            (
                "sms.example.com/send/path?key=provider-key-123",
                "SMS_HTTP_URL is invalid (relative URL without a base): \
                 expected an http:// or https:// URL",
            ),
            (
                "https://user:hunter2@sms.example.com:99999/send/path?key=provider-key-123",
                "SMS_HTTP_URL is invalid (invalid port number): \
                 expected an http:// or https:// URL",
            ),
        ];
        for (raw, expected) in cases {
            let mut e = env(&[("SMS_HTTP_URL", raw)]);
            assert_eq!(e.url("SMS_HTTP_URL"), None);
            let message = e.finish(()).unwrap_err().to_string();
            assert_eq!(message, expected);
            for part in secret_parts {
                assert!(!message.contains(part), "{message}");
            }
        }
        let mut e = env(&[("SMS_HTTP_URL", "https://sms.example.com/send?key=k/")]);
        assert_eq!(
            e.url("SMS_HTTP_URL").as_deref(),
            Some("https://sms.example.com/send?key=k")
        );
    }
}
