//! What `auth-service housekeeping` deletes, and after how long: the one place the auth
//! database's retention is written. Each row is kept twice as long as the longest window
//! any rule reads it in (docs/decisions.md, "Housekeeping").
//!
//! Never deleted here: `clients`, `addresses`, and `legacy_tokens` (they stay valid, as the
//! legacy system's did; the exchange-token limit bounds how fast they grow).

use std::time::Duration;

use housekeeping::Rule;

pub const RULES: &[Rule] = &[
    // SMS sent, codes tried and unknown phones: the OTP limits count the last hour
    // (`otp::recent`, `otp::unknown_phones`; docs/decisions.md, "auth-service", rate limits
    // per rolling hour).
    Rule {
        table: "otp_events",
        age: "created_at",
        keep: Duration::from_secs(2 * 3600),
    },
    // Client lookups and legacy tokens minted: counted per client and rolling hour
    // (`client_limits`, CLIENT_LOOKUPS_PER_CLIENT_PER_HOUR, LEGACY_TOKENS_PER_CLIENT_PER_HOUR).
    Rule {
        table: "client_events",
        age: "created_at",
        keep: Duration::from_secs(2 * 3600),
    },
    // Login codes: read only while unexpired (a code lives 3 minutes, docs/design.md "OTP
    // login"); the 5-wrong-tries lock-out is the code's own count and dies with it. Aged by
    // `expires_at`, so a row goes one lifetime after its expiry.
    Rule {
        table: "otp_codes",
        age: "expires_at",
        keep: Duration::from_secs(3 * 60),
    },
];

#[cfg(test)]
mod tests {
    #[test]
    fn a_code_outlives_its_lifetime_twice() {
        let lifetime = crate::otp::CODE_LIFETIME.to_std().unwrap_or_default();
        let rule = super::RULES.iter().find(|r| r.table == "otp_codes");
        // Aged from its expiry, which is already one lifetime after the code was made.
        assert!(rule.is_some_and(|r| r.keep + lifetime >= 2 * lifetime));
    }
}
