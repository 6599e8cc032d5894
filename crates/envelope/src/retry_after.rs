//! `Retry-After` on a 429 (RFC 9110 §10.2.3, delta-seconds): when the limit that refused the
//! request would let it through. Each limiter computes the wait from the same rows that
//! decided the refusal; this type only rounds it and writes the header.

use actix_web::HttpResponse;
use actix_web::http::header::{HeaderValue, RETRY_AFTER};

/// Whole seconds to wait, at least 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryAfter(u64);

impl RetryAfter {
    /// From the seconds a limiter computed, already rounded up (`ceil` in SQL): a wait that
    /// is over, or unknown (`None`), is 1 second, the least the header can say.
    pub fn seconds(wait: Option<i64>) -> Self {
        Self(wait.and_then(|s| u64::try_from(s).ok()).unwrap_or(0).max(1))
    }

    pub fn as_secs(self) -> u64 {
        self.0
    }

    /// Adds the header to an answer.
    pub fn set_on(self, response: &mut HttpResponse) {
        response
            .headers_mut()
            .insert(RETRY_AFTER, HeaderValue::from(self.0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_is_whole_seconds_and_never_below_one() {
        assert_eq!(RetryAfter::seconds(Some(2400)).as_secs(), 2400);
        assert_eq!(RetryAfter::seconds(Some(0)).as_secs(), 1);
        assert_eq!(RetryAfter::seconds(Some(-3)).as_secs(), 1);
        assert_eq!(RetryAfter::seconds(None).as_secs(), 1);
        let mut response = HttpResponse::TooManyRequests().finish();
        RetryAfter::seconds(Some(61)).set_on(&mut response);
        assert_eq!(response.headers().get(RETRY_AFTER).unwrap(), "61");
    }
}
