//! Secret values: kept out of `Debug` output and logs, and refused in production when they
//! are the development ones.

use std::fmt;

use super::{AppEnv, Env};

/// A secret value: never in `Debug` output or logs.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

impl Env {
    /// A secret value read by `parse`, or `None` when unset or invalid; an invalid one is not
    /// repeated in the error, which goes to the log.
    pub fn secret_parse<T>(
        &mut self,
        name: &str,
        parse: impl Fn(&str) -> Result<T, String>,
    ) -> Option<T> {
        self.read(name, parse, false)
    }

    /// A required secret. In production a development secret (the `dev-only` marker that
    /// `make run` uses) or a short one refuses to start.
    pub fn secret(&mut self, name: &str, app_env: AppEnv) -> Secret {
        let value = self.required(name);
        if !value.is_empty()
            && app_env == AppEnv::Production
            && (value.contains("dev-only") || value.len() < 32)
        {
            self.error(format!(
                "{name} holds a development secret; production needs at least 32 random characters"
            ));
        }
        Secret(value)
    }
}

#[cfg(test)]
mod tests {
    use super::super::env;
    use super::*;

    #[test]
    fn an_invalid_secret_value_is_not_repeated() {
        let mut e = env(&[("CODE", "12a4")]);
        let parsed = e.secret_parse("CODE", |_| Err::<u8, _>("expected 4 digits".into()));
        assert_eq!(parsed, None);
        assert_eq!(
            e.finish(()).unwrap_err().to_string(),
            "CODE is invalid: expected 4 digits"
        );
    }

    #[test]
    fn production_refuses_development_secrets() {
        let mut e = env(&[("S", "dev-only-secret-please-change-me-000000")]);
        e.secret("S", AppEnv::Production);
        assert_eq!(e.finish(()).unwrap_err().0.len(), 1);

        let mut e = env(&[("S", "short")]);
        e.secret("S", AppEnv::Production);
        assert!(e.finish(()).is_err());

        let mut e = env(&[("S", "dev-only-secret")]);
        let s = e.secret("S", AppEnv::Development);
        assert_eq!(format!("{s:?}"), "Secret(<redacted>)");
        assert!(e.finish(()).is_ok());
    }
}
