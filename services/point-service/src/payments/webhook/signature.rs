//! The webhook's `X-Signature`: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`
//! over the raw body with `PAYMENT_WEBHOOK_SECRET`. A timestamp more than
//! [`TOLERANCE_SECONDS`] from our clock is refused, so that a captured request cannot be
//! replayed later; every refusal is counted by its [`Fault`].

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

pub const TOLERANCE_SECONDS: u64 = 300;

/// The header as the document describes it.
pub fn header_text() -> String {
    format!(
        "t=<unix seconds>,v1=<hex HMAC-SHA256 of \"<t>.<raw body>\">; at most \
         {TOLERANCE_SECONDS} s old"
    )
}

/// Why a delivery's `X-Signature` was refused: the label of
/// `payment_webhook_signature_failures_total{reason}`, which tells an on-call engineer a clock
/// (stale) from a secret (mismatch) from a sender that is not the payment service (missing,
/// malformed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    Missing,
    Malformed,
    Stale,
    Mismatch,
}

impl Fault {
    pub const ALL: [Fault; 4] = [
        Fault::Missing,
        Fault::Malformed,
        Fault::Stale,
        Fault::Mismatch,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Fault::Missing => "missing",
            Fault::Malformed => "malformed",
            Fault::Stale => "stale",
            Fault::Mismatch => "mismatch",
        }
    }

    /// Counts one refused delivery.
    pub fn count(self) {
        metrics::counter!(SIGNATURE_FAILURES, "reason" => self.as_str()).increment(1);
    }
}

/// Deliveries refused for their signature, by [`Fault`] reason.
pub const SIGNATURE_FAILURES: &str = "payment_webhook_signature_failures_total";

/// Checks `X-Signature` against the raw body in constant time.
pub fn verify(secret: &[u8], header: Option<&str>, body: &[u8], now: i64) -> Result<(), Fault> {
    let header = header.ok_or(Fault::Missing)?;
    let mut timestamp = None;
    let mut signature = None;
    for part in header.split(',') {
        match part.trim().split_once('=') {
            Some(("t", t)) => timestamp = t.parse::<i64>().ok(),
            Some(("v1", v)) => signature = hex::decode(v).ok(),
            _ => {}
        }
    }
    let (Some(timestamp), Some(signature)) = (timestamp, signature) else {
        return Err(Fault::Malformed);
    };
    // The signature first, the age second: `t` is only the gateway's once the signature
    // over it holds, so `stale` counts the gateway's late deliveries alone and anyone else's
    // attempt is a `mismatch` (the alerts and the runbook tell the two apart).
    let Ok(mut mac) = <Hmac<Sha256> as KeyInit>::new_from_slice(secret) else {
        return Err(Fault::Mismatch);
    };
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    mac.verify_slice(&signature).map_err(|_| Fault::Mismatch)?;
    // `(now - t).abs()` overflows for t = i64::MIN and others.
    if now.abs_diff(timestamp) > TOLERANCE_SECONDS {
        return Err(Fault::Stale);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sign(secret: &[u8], t: i64, body: &[u8]) -> String {
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(secret).unwrap();
        mac.update(format!("{t}.").as_bytes());
        mac.update(body);
        format!("t={t},v1={}", hex::encode(mac.finalize().into_bytes()))
    }

    #[test]
    fn a_fresh_signature_over_the_raw_body_passes() {
        let header = sign(b"s", 1000, b"{}");
        assert_eq!(verify(b"s", Some(&header), b"{}", 1000), Ok(()));
        assert_eq!(verify(b"s", Some(&header), b"{}", 1300), Ok(()));
        assert_eq!(
            verify(b"s", Some(&header), b"{}", 700),
            Ok(()),
            "300 s ahead of our clock"
        );
    }

    #[test]
    fn stale_forged_or_missing_signatures_fail_each_with_its_reason() {
        use Fault::*;
        let header = sign(b"s", 1000, b"{}");
        let refused = |secret: &[u8], header: Option<&str>, body: &[u8], now| {
            verify(secret, header, body, now).unwrap_err()
        };
        assert_eq!(refused(b"s", Some(&header), b"{}", 1301), Stale);
        assert_eq!(
            refused(b"s", Some(&header), b"{}", 699),
            Stale,
            "301 s ahead"
        );
        assert_eq!(
            refused(b"s", Some(&header), b"{} ", 1000),
            Mismatch,
            "body changed"
        );
        assert_eq!(
            refused(b"other", Some(&header), b"{}", 1000),
            Mismatch,
            "other secret"
        );
        assert_eq!(
            refused(b"other", Some(&header), b"{}", 1301),
            Mismatch,
            "an old timestamp under another secret is anyone's, not the gateway's late delivery"
        );
        assert_eq!(refused(b"s", None, b"{}", 1000), Missing);
        assert_eq!(refused(b"s", Some("t=1000"), b"{}", 1000), Malformed);
        assert_eq!(refused(b"s", Some("garbage"), b"{}", 1000), Malformed);
    }

    #[test]
    fn extreme_timestamps_fail_without_overflow() {
        for t in [i64::MIN, i64::MIN + 1, -1, i64::MAX] {
            let header = sign(b"s", t, b"{}");
            for now in [i64::MIN, -1, 0, 1_700_000_000, i64::MAX] {
                assert_eq!(
                    verify(b"s", Some(&header), b"{}", now).is_ok(),
                    now.abs_diff(t) <= TOLERANCE_SECONDS,
                    "t={t} now={now}"
                );
            }
        }
    }
}
