//! The client's address, for rate limits.

use actix_web::HttpRequest;

/// The TCP peer, or, behind a proxy that sets it (`trust_forwarded_for`), the first
/// `X-Forwarded-For` hop. Trusting the header without such a proxy would let any client
/// pick its own address and slip past per-address limits.
pub fn client_ip(req: &HttpRequest, trust_forwarded_for: bool) -> String {
    let forwarded = req
        .headers()
        .get("x-forwarded-for")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(',').next())
        .map(str::trim)
        .filter(|v| trust_forwarded_for && !v.is_empty());
    match forwarded {
        Some(first) => first.to_owned(),
        None => req
            .peer_addr()
            .map(|a| a.ip().to_string())
            .unwrap_or_else(|| "unknown".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use actix_web::test::TestRequest;

    use super::client_ip;

    #[test]
    fn the_header_counts_only_when_trusted() {
        let req = TestRequest::default()
            .peer_addr("10.0.0.9:5000".parse().unwrap())
            .insert_header(("x-forwarded-for", "1.2.3.4, 10.0.0.1"))
            .to_http_request();
        assert_eq!(client_ip(&req, true), "1.2.3.4");
        assert_eq!(client_ip(&req, false), "10.0.0.9");
    }
}
