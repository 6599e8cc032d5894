//! The guard of `/internal/v1/...` routes: `X-Internal-Token` equal to `INTERNAL_API_TOKEN`,
//! compared in constant time so the token cannot be guessed byte by byte from timings.

use actix_web::HttpRequest;
use subtle::ConstantTimeEq;

use crate::Secret;

pub fn token_matches(req: &HttpRequest, expected: &Secret) -> bool {
    let sent = req
        .headers()
        .get("x-internal-token")
        .map(|v| v.as_bytes())
        .unwrap_or_default();
    bool::from(sent.ct_eq(expected.expose().as_bytes()))
}

#[cfg(test)]
mod tests {
    use actix_web::test::TestRequest;

    use super::token_matches;
    use crate::Secret;

    #[test]
    fn only_the_exact_token_matches() {
        let secret = Secret::new("s3cret");
        let with = |v: &str| {
            TestRequest::default()
                .insert_header(("x-internal-token", v))
                .to_http_request()
        };
        assert!(token_matches(&with("s3cret"), &secret));
        assert!(!token_matches(&with("s3cre"), &secret));
        assert!(!token_matches(&with("s3cret "), &secret));
        assert!(!token_matches(
            &TestRequest::default().to_http_request(),
            &secret
        ));
    }
}
