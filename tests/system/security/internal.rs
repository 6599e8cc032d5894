//! The internal routes: never through the relay, never with a client's header, never
//! without the caller's own credential, never from a caller the route does not list.

use std::time::Duration;

use e2e::demo::{LEGACY_ORDER, SARA};
use serde_json::{Value, json};
use testkit::{error_b, error_c, unauthorization, without_stack};

use service_identity::Service;

use super::system;

/// The `Authorization` of a call from `caller` to `callee`, from the development issuer the
/// system runs with (`scripts/dev.env`).
fn from(caller: Service, callee: Service) -> String {
    testkit::identity::authorization(caller, callee)
}

/// The order service's credential for one credit, `body` as sent: made for that request alone.
fn credit_of(body: &Value) -> String {
    testkit::identity::signer(Service::Order).vouch(
        Service::Point,
        None,
        "POST",
        "/internal/v1/credits",
        body.to_string().as_bytes(),
    )
}

/// One HTTP/1.1 request written by hand, so that the path goes out exactly as given
/// (an HTTP client would resolve `..` and `%2e%2e` first): `(status, body)`.
async fn raw_request(
    base: &str,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, Value) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let address = base.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let mut request = format!(
        "{method} {target} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer))
        .await
        .unwrap()
        .unwrap();
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let (head, mut content) = answer.split_once("\r\n\r\n").unwrap();
    let status: u16 = head.split(' ').nth(1).unwrap().parse().unwrap();
    let chunked = head.lines().any(|l| {
        l.to_ascii_lowercase()
            .starts_with("transfer-encoding: chunked")
    });
    let mut text = String::new();
    if chunked {
        while let Some((size, rest)) = content.split_once("\r\n") {
            let size = usize::from_str_radix(size.trim(), 16).unwrap();
            if size == 0 {
                break;
            }
            text.push_str(&rest[..size]);
            content = &rest[size + 2..];
        }
    } else {
        text = content.to_owned();
    }
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// 5. The internal routes serve the services only. Through the order service, nothing
/// under `/internal` (or `/webhooks`) is reachable by any path trick, even with a real
/// service credential: the answer is a 404 in the envelope of whoever answered it and no
/// credit lands. The relay drops a client's `X-Internal-Token` (checked on the real
/// order-service binary in front of a recording stand-in for the point service). Called
/// directly, both internal routes answer the exact 401 of their envelope without a
/// credential, with a forged one, one made for another service, or a client's or an
/// operator's token instead; the exact 403 to a service the route does not list (the
/// operator service's own credential on credits, the auth service's on the profile); and
/// change nothing; the listed callers' own credentials work (so the refusals are theirs).
#[tokio::test]
async fn internal_routes_are_unreachable_from_outside_and_guarded_by_their_callers() {
    let sys = system(None).await;
    let sara_before = sys.balance(SARA).await;
    let credit = json!({"client_id": 1001, "points": "1000", "reference": "gift-card:mallory", "reason": "gift_card"});
    let order_to_point = from(Service::Order, Service::Point);
    let token = [("Authorization", order_to_point.as_str())];

    // Straight at the order service, with a real credential.
    for (method, path) in [
        ("POST", "/internal/v1/credits"),
        ("GET", "/internal/v1/clients/1001"),
        ("POST", "/webhooks/v1/payments"),
        ("POST", "/internal/v1/credits/"),
        ("POST", "/INTERNAL/v1/credits"),
    ] {
        let (status, answer) = sys
            .stack
            .call(method, &sys.order(path), None, &token, Some(&credit))
            .await;
        assert_eq!(
            (status, answer),
            (404, error_c(404, &format!("Cannot {method} {path}"))),
            "{method} {path}"
        );
    }
    // Path tricks written by hand: each is the order service's own 404, or reaches the
    // point service as a point route and is its 404 — never the internal route.
    let body = credit.to_string();
    let headers = [
        ("X-Internal-Token", "a-guess-at-the-old-shared-token"),
        (
            "Authorization",
            "Bearer legacy-token-of-sara-0123456789abcdef",
        ),
    ];
    let tricks: Vec<(&str, (u16, Value))> = vec![
        (
            "/api/v2/client/../../internal/v1/credits",
            (
                404,
                error_c(404, "Cannot POST /api/v2/client/../../internal/v1/credits"),
            ),
        ),
        (
            "//internal/v1/credits",
            (404, error_c(404, "Cannot POST //internal/v1/credits")),
        ),
        (
            "/api/v2/client/point-orders/../../../../internal/v1/credits",
            (
                404,
                error_c(
                    404,
                    "Cannot POST /api/v2/client/point-orders/../../../../internal/v1/credits",
                ),
            ),
        ),
        (
            "/api/v2/client/point-orders/%2e%2e/%2e%2e/%2e%2e/%2e%2e/internal/v1/credits",
            (
                404,
                error_c(
                    404,
                    "Cannot POST /api/v2/client/point-orders/%2e%2e/%2e%2e/%2e%2e/%2e%2e/internal/v1/credits",
                ),
            ),
        ),
        // Relayed byte for byte: `%2e%2e` is the order id the point service looks up.
        (
            "/api/v2/client/point-orders/%2e%2e/pay/card",
            (404, error_b("NOT_FOUND", "point order not found")),
        ),
        (
            "/api/v2/client/point-orders/%2E%2E/pay/session",
            (404, error_b("NOT_FOUND", "point order not found")),
        ),
        (
            "/api/v2/client/point-orders/..%2f..%2f..%2f..%2finternal%2fv1%2fcredits/pay/card",
            (404, error_b("NOT_FOUND", "point order not found")),
        ),
        (
            "/api/v2/client/point-orders/%2e%2e%2f%2e%2e%2f%2e%2e%2f%2e%2e%2finternal%2fv1%2fcredits/pay/card",
            (404, error_b("NOT_FOUND", "point order not found")),
        ),
        (
            "/api/v2/client/point-orders?x=/../../internal/v1/credits",
            (400, Value::Null),
        ),
    ];
    for (path, expected) in &tricks {
        let answer = raw_request(&sys.stack.order.base, "POST", path, &headers, &body).await;
        if expected.1.is_null() {
            // The create route itself, with a body that is no order: its 400.
            assert_eq!(
                (answer.0, &answer.1["error"]["message"]),
                (expected.0, &json!("Invalid point-order body")),
                "{path}"
            );
        } else {
            assert_eq!(&answer, expected, "{path}");
        }
    }
    assert_eq!(sys.balance(SARA).await, sara_before, "nothing credited");
    assert_eq!(
        sys.points_db
            .count("SELECT count(*) AS n FROM internal_credits")
            .await,
        0
    );

    // The relay never forwards X-Internal-Token: the real order-service binary in front
    // of a stand-in point service that records what it gets.
    let seen: std::sync::Arc<std::sync::Mutex<Vec<Vec<String>>>> = Default::default();
    let recorder = {
        let seen = seen.clone();
        server::spawn_local(move || {
            let seen = seen.clone();
            actix_web::App::new().default_service(actix_web::web::to(
                move |req: actix_web::HttpRequest| {
                    let seen = seen.clone();
                    async move {
                        let names = req
                            .headers()
                            .keys()
                            .map(|k| k.as_str().to_owned())
                            .collect();
                        seen.lock().unwrap().push(names);
                        actix_web::HttpResponse::Ok().json(json!({}))
                    }
                },
            ))
        })
        .unwrap()
    };
    let relay = e2e::Service::start(
        "order-service",
        sys.catalog_db.url(),
        &[
            ("POINT_SERVICE_URL", &recorder),
            ("AUTH_SERVICE_URL", &sys.stack.auth.base),
        ],
    )
    .await;
    for (method, path) in [
        ("GET", "/api/v2/client/points".to_owned()),
        ("POST", "/api/v2/client/point-orders".to_owned()),
        (
            "POST",
            format!("/api/v2/client/point-orders/{LEGACY_ORDER}/pay/card"),
        ),
    ] {
        let response = relay
            .client()
            .request(method.parse().unwrap(), format!("{}{path}", relay.base))
            .bearer_auth(SARA)
            .header("X-Internal-Token", "a-guess-at-the-old-shared-token")
            .header("X-Signature", "t=1,v1=00")
            .header("Cookie", "session=1")
            .header("X-Forwarded-For", "10.0.0.1")
            .json(&credit)
            .send()
            .await
            .unwrap();
        assert_eq!(
            response.status(),
            200,
            "{method} {path} reached the recorder"
        );
    }
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 3);
    for names in &seen {
        assert!(names.iter().any(|n| n == "authorization"), "{names:?}");
        for dropped in [
            "x-internal-token",
            "x-signature",
            "cookie",
            "x-forwarded-for",
        ] {
            assert!(
                !names.iter().any(|n| n == dropped),
                "{dropped} was forwarded: {names:?}"
            );
        }
    }
    drop(relay);

    // Called directly, each internal route refuses anything but a listed caller's own
    // credential.
    let sara_primary = sys.primary(SARA).await;
    let bearer_sara = format!("Bearer {sara_primary}");
    let operator = format!("Bearer {}", super::operator_token("super_admin", 1));
    // A real credential with one letter of its signature changed.
    let mut forged = order_to_point.clone();
    let last = forged.pop().unwrap();
    forged.push(if last == 'A' { 'B' } else { 'A' });
    let order_to_auth = from(Service::Order, Service::Auth);
    let order_to_order = from(Service::Order, Service::Order);
    let other_credit = credit_of(
        &json!({"client_id": 1001, "points": "1", "reference": "gift-card:mallory", "reason": "gift_card"}),
    );
    // The shared secret every service once held (scripts/dev.env's, before each service had
    // its own credential).
    let old_shared = "dev-only-internal-token-change-me-00000000000";
    let old_bearer = format!("Bearer {old_shared}");
    let attempts: Vec<(&str, Vec<(&str, &str)>)> = vec![
        ("no header", vec![]),
        ("an empty bearer", vec![("Authorization", "Bearer ")]),
        ("a forged credential", vec![("Authorization", &forged)]),
        ("the old shared token", vec![("Authorization", &old_bearer)]),
        (
            "the old shared token's header",
            vec![("X-Internal-Token", old_shared)],
        ),
        (
            "a client's legacy token",
            vec![(
                "Authorization",
                "Bearer legacy-token-of-sara-0123456789abcdef",
            )],
        ),
        (
            "a client's primary token",
            vec![("Authorization", &bearer_sara)],
        ),
        ("an operator's token", vec![("Authorization", &operator)]),
        (
            "a SQL string",
            vec![("Authorization", "Bearer ' OR 1=1 --")],
        ),
        (
            "the order service's credential for itself",
            vec![("Authorization", &order_to_order)],
        ),
        (
            "the order service's credential made for no request",
            vec![("Authorization", &order_to_point)],
        ),
        (
            "the order service's credential made for another credit",
            vec![("Authorization", &other_credit)],
        ),
    ];
    let profile = sys.auth("/internal/v1/clients/1001");
    let credits = format!("{}/internal/v1/credits", sys.stack.points.base);
    for (what, headers) in &attempts {
        let (status, answer) = sys.stack.call("GET", &profile, None, headers, None).await;
        assert_eq!(
            (status, without_stack(answer)),
            (401, unauthorization()),
            "auth: {what}"
        );
        assert_eq!(
            sys.stack
                .call("POST", &credits, None, headers, Some(&credit))
                .await,
            (401, error_b("UNAUTHORIZED", "invalid service credential")),
            "points: {what}"
        );
    }
    // Made for the auth service: refused by the point service (401), and the other way.
    let for_auth = [("Authorization", order_to_auth.as_str())];
    assert_eq!(
        sys.stack
            .call("POST", &credits, None, &for_auth, Some(&credit))
            .await,
        (401, error_b("UNAUTHORIZED", "invalid service credential"))
    );
    let (status, _) = sys.stack.call("GET", &profile, None, &token, None).await;
    assert_eq!(
        status, 401,
        "a credential for the point service, at the auth service"
    );
    // Good credentials of services the routes do not list: 403.
    let not_admitted = "the calling service may not call this route";
    for caller in [Service::Operator, Service::Auth, Service::Point] {
        let own = from(caller, Service::Point);
        let headers = [("Authorization", own.as_str())];
        assert_eq!(
            sys.stack
                .call("POST", &credits, None, &headers, Some(&credit))
                .await,
            (403, error_b("FORBIDDEN", not_admitted)),
            "credits from the {caller}"
        );
    }
    for caller in [Service::Operator, Service::Auth] {
        let own = from(caller, Service::Auth);
        let headers = [("Authorization", own.as_str())];
        let (status, answer) = sys.stack.call("GET", &profile, None, &headers, None).await;
        assert_eq!(
            (status, without_stack(answer)),
            (403, json!({"status": 403, "message": not_admitted})),
            "the profile for the {caller}"
        );
    }
    assert_eq!(sys.balance(SARA).await, sara_before, "nothing credited");
    assert_eq!(
        sys.points_db
            .count("SELECT count(*) AS n FROM internal_credits")
            .await,
        0
    );
    // The listed callers: the profile for the point and the order service, the credit for
    // the order service (so the refusals above were the credential's).
    for caller in [Service::Point, Service::Order] {
        let own = from(caller, Service::Auth);
        let headers = [("Authorization", own.as_str())];
        let (status, found) = sys.stack.call("GET", &profile, None, &headers, None).await;
        assert_eq!(
            (status, &found["client_id"]),
            (200, &json!(1001)),
            "{caller}"
        );
    }
    let made_for_it = [("Authorization", credit_of(&credit))];
    let made_for_it: Vec<(&str, &str)> =
        made_for_it.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (status, credited) = sys
        .stack
        .call("POST", &credits, None, &made_for_it, Some(&credit))
        .await;
    assert_eq!(
        (status, &credited["balance"]),
        (200, &json!("1630.5")),
        "{credited}"
    );
}
