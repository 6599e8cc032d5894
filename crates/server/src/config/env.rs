//! The reader of the environment: each value by its variable's name, every problem recorded
//! and reported together by [`Env::finish`].

use std::collections::HashMap;
use std::fmt;

/// Every problem found, one per line, each naming its variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError(pub Vec<String>);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.join("\n"))
    }
}

impl std::error::Error for ConfigError {}

/// Reads variables and records what is wrong with them.
pub struct Env {
    vars: HashMap<String, String>,
    errors: Vec<String>,
}

impl Env {
    pub fn from_process() -> Self {
        Self::from_vars(std::env::vars())
    }

    pub fn from_vars<K: Into<String>, V: Into<String>>(
        vars: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        Self {
            vars: vars
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
            errors: Vec::new(),
        }
    }

    /// The raw value; an empty value counts as unset.
    pub fn optional(&self, name: &str) -> Option<String> {
        self.vars.get(name).filter(|v| !v.is_empty()).cloned()
    }

    /// A value that must be set.
    pub fn required(&mut self, name: &str) -> String {
        match self.optional(name) {
            Some(v) => v,
            None => {
                self.errors.push(format!("{name} is required but not set"));
                String::new()
            }
        }
    }

    /// A value read by `parse`, or `default` when unset or invalid. `parse` explains what it
    /// expected.
    pub fn parse_or<T>(
        &mut self,
        name: &str,
        default: T,
        parse: impl Fn(&str) -> Result<T, String>,
    ) -> T {
        self.read(name, parse, true).unwrap_or(default)
    }

    /// The value read by `parse`, or `None` when unset or invalid; the problem names the
    /// variable, and its raw value only when `show` (a secret's is never shown).
    pub(super) fn read<T>(
        &mut self,
        name: &str,
        parse: impl Fn(&str) -> Result<T, String>,
        show: bool,
    ) -> Option<T> {
        let raw = self.optional(name)?;
        parse(&raw)
            .map_err(|expected| {
                self.errors.push(if show {
                    format!("{name}={raw:?} is invalid: {expected}")
                } else {
                    format!("{name} is invalid: {expected}")
                })
            })
            .ok()
    }

    /// One of `choices`, by its name, or `default` when unset.
    pub fn one_of<T: Copy>(&mut self, name: &str, default: T, choices: &[(&str, T)]) -> T {
        self.parse_or(name, default, |raw| {
            choices
                .iter()
                .find(|(choice, _)| *choice == raw)
                .map(|(_, value)| *value)
                .ok_or_else(|| {
                    let names: Vec<&str> = choices.iter().map(|(choice, _)| *choice).collect();
                    let expected = match names.split_last() {
                        Some((last, rest)) if !rest.is_empty() => {
                            format!("{} or {last}", rest.join(", "))
                        }
                        _ => names.concat(),
                    };
                    format!("expected {expected}, got {raw:?}")
                })
        })
    }

    /// An integer in `range`, or `default` when unset.
    pub fn int_or(
        &mut self,
        name: &str,
        default: u64,
        range: std::ops::RangeInclusive<u64>,
    ) -> u64 {
        let (lo, hi) = (*range.start(), *range.end());
        self.parse_or(name, default, |raw| {
            raw.parse::<u64>()
                .ok()
                .filter(|v| range.contains(v))
                .ok_or_else(|| format!("expected an integer from {lo} to {hi}"))
        })
    }

    /// A duration in ms from `name` (`default` when unset), within `range` ms.
    pub fn millis_or(
        &mut self,
        name: &str,
        default: std::time::Duration,
        range: std::ops::RangeInclusive<u64>,
    ) -> std::time::Duration {
        let default = u64::try_from(default.as_millis()).unwrap_or(u64::MAX);
        std::time::Duration::from_millis(self.int_or(name, default, range))
    }

    /// A duration in whole seconds from `name` (`default` when unset), within `range` s.
    pub fn secs_or(
        &mut self,
        name: &str,
        default: std::time::Duration,
        range: std::ops::RangeInclusive<u64>,
    ) -> std::time::Duration {
        std::time::Duration::from_secs(self.int_or(name, default.as_secs(), range))
    }

    /// How long to wait for another service, in ms from `name` (`default` when unset): at
    /// least 10 ms, and shorter than the grace a stopping server gives the requests it serves
    /// ([`crate::run::SHUTDOWN_TIMEOUT`]), so that a request still waiting is answered before
    /// the process ends; a longer wait is a start-up error that says so.
    pub fn call_wait(&mut self, name: &str, default: std::time::Duration) -> std::time::Duration {
        let grace = crate::run::SHUTDOWN_TIMEOUT;
        let most = u64::try_from(grace.as_millis()).unwrap_or(u64::MAX) - 1;
        let default = u64::try_from(default.as_millis()).unwrap_or(most);
        let wait = self.int_or(name, default, 10..=u64::MAX);
        if wait > most {
            self.error(format!(
                "{name} must be at most {most} ms: a stopping server serves a request for at \
                 most {} s (SHUTDOWN_TIMEOUT), so a longer wait would be cut off unanswered",
                grace.as_secs()
            ));
        }
        std::time::Duration::from_millis(wait.min(most))
    }

    /// A switch that is on only for the exact text `true` (the spec's rule for flags).
    pub fn flag(&self, name: &str) -> bool {
        self.optional(name).as_deref() == Some("true")
    }

    /// Records a problem found by the caller's own checks.
    pub fn error(&mut self, message: impl Into<String>) {
        self.errors.push(message.into());
    }

    /// `value` if nothing was wrong, else every problem found.
    pub fn finish<T>(self, value: T) -> Result<T, ConfigError> {
        if self.errors.is_empty() {
            Ok(value)
        } else {
            Err(ConfigError(self.errors))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::env;

    #[test]
    fn a_choice_is_read_by_its_name_and_a_wrong_one_lists_the_names() {
        let choices = [("a", 1), ("b", 2), ("c", 3)];
        let mut e = env(&[("PICK", "b"), ("WRONG", "d")]);
        assert_eq!(e.one_of("PICK", 0, &choices), 2);
        assert_eq!(e.one_of("UNSET", 0, &choices), 0);
        assert_eq!(e.one_of("WRONG", 0, &choices), 0);
        assert_eq!(
            e.finish(()).unwrap_err().to_string(),
            "WRONG=\"d\" is invalid: expected a, b or c, got \"d\""
        );
    }

    #[test]
    fn flags_are_on_only_for_exact_true() {
        let e = env(&[("A", "true"), ("B", "TRUE"), ("C", "1"), ("D", " true")]);
        assert!(e.flag("A"));
        assert!(!e.flag("B") && !e.flag("C") && !e.flag("D") && !e.flag("E"));
    }
}
