//! The legacy system's version-popup response headers (`new_version`, `old_version`,
//! `has_new_version`, `is_required_update`) are sent by no service
//! (docs/spec/account-session-points.md, Events 2 and Versioning 2): not on a success, not on
//! an error answer of any envelope, not on an answer relayed from the point service, not on
//! the operational routes.

use e2e::DemoDatabases;
use e2e::demo::{OFFER_100, SARA, SARA_PHONE};
use e2e::stack::Stack;
use serde_json::{Value, json};

/// The headers, as the legacy system named them, and as a proxy that turns `_` into `-`
/// would pass them on.
const POPUP_HEADERS: [&str; 8] = [
    "new_version",
    "old_version",
    "has_new_version",
    "is_required_update",
    "new-version",
    "old-version",
    "has-new-version",
    "is-required-update",
];

/// One request: method, URL, bearer token, JSON body, and the status it must get (so that
/// the answer looked at is the one meant: a success, an error of its envelope, a relay).
struct Call {
    method: &'static str,
    url: String,
    token: Option<String>,
    body: Option<Value>,
    status: u16,
}

fn call(method: &'static str, url: String, token: Option<&str>, status: u16) -> Call {
    Call {
        method,
        url,
        token: token.map(str::to_owned),
        body: None,
        status,
    }
}

fn with_body(mut call: Call, body: Value) -> Call {
    call.body = Some(body);
    call
}

#[tokio::test]
async fn no_service_sends_the_legacy_version_popup_headers() {
    let databases = DemoDatabases::create("popup").await;
    let stack = Stack::start(&databases.urls()).await;
    let (auth, points, order, operator, sandbox) = (
        &stack.auth.base,
        &stack.points.base,
        &stack.order.base,
        &stack.operator.base,
        &stack.sandbox.base,
    );
    let admin = e2e::operator_token("admin", "e2e-popup", 1);
    let unknown_order = "0f1c1f9e-2d0b-4b43-9a52-5d2f0c7e8a11";
    let gift = json!({"point_offer_id": OFFER_100, "to_client_id": 1002, "payment_type": "point"});

    let mut calls = Vec::new();
    // Operational routes of every process.
    for base in [auth, points, order, operator, sandbox] {
        calls.push(call("GET", format!("{base}/healthz"), None, 200));
    }
    for base in [auth, points, order, operator] {
        calls.push(call("GET", format!("{base}/readyz"), None, 200));
    }
    calls.push(call("GET", format!("{order}/openapi.json"), None, 200));
    calls.extend([
        // The auth service (envelope A): login, the caller, its errors.
        call(
            "GET",
            format!("{auth}/api/v1/clients/reset-otp?contact_phone={SARA_PHONE}"),
            None,
            200,
        ),
        call(
            "GET",
            format!("{auth}/api/v1/clients/verify-otp?contact_phone={SARA_PHONE}&code=1234"),
            None,
            200,
        ),
        call("GET", format!("{auth}/api/v1/users"), Some(SARA), 200),
        call("GET", format!("{auth}/api/v1/users"), None, 401),
        call(
            "GET",
            format!("{auth}/api/v1/clients/verify-token"),
            Some("not-a-token"),
            401,
        ),
        call("GET", format!("{auth}/api/v1/no-such-route"), None, 404),
        // The point service called directly (envelope B), its webhook.
        call(
            "GET",
            format!("{points}/api/v2/client/points"),
            Some(SARA),
            200,
        ),
        call("GET", format!("{points}/api/v2/client/points"), None, 401),
        call(
            "GET",
            format!("{points}/api/v2/client/point-orders/{unknown_order}"),
            Some(SARA),
            404,
        ),
        with_body(
            call("POST", format!("{points}/webhooks/v1/payments"), None, 401),
            json!({"id": "evt_popup"}),
        ),
        // The order service: relayed answers (a success, a refusal, a validation error, a
        // write) and its own routes and errors (envelope C).
        call(
            "GET",
            format!("{order}/api/v2/client/points"),
            Some(SARA),
            200,
        ),
        call("GET", format!("{order}/api/v2/client/points"), None, 401),
        with_body(
            call(
                "POST",
                format!("{order}/api/v2/client/point-orders"),
                Some(SARA),
                400,
            ),
            json!({}),
        ),
        with_body(
            call(
                "POST",
                format!("{order}/api/v2/client/point-orders"),
                Some(SARA),
                200,
            ),
            gift,
        ),
        call(
            "GET",
            format!("{order}/api/v2/client/point-orders/{unknown_order}"),
            Some(SARA),
            404,
        ),
        call(
            "GET",
            format!("{order}/api/v2/client/system-categories"),
            None,
            200,
        ),
        call(
            "GET",
            format!("{order}/api/v2/client/system-categories/999999/children"),
            None,
            404,
        ),
        with_body(
            call(
                "POST",
                format!("{order}/api/v2/client/gift-card-code"),
                None,
                401,
            ),
            json!({"code": "RAMADAN-250"}),
        ),
        call(
            "GET",
            format!("{order}/api/v2/client/no-such-route"),
            None,
            404,
        ),
        // The operator service (its own envelope).
        call(
            "GET",
            format!("{operator}/api/v1/operator/services"),
            Some(&admin),
            200,
        ),
        call(
            "GET",
            format!("{operator}/api/v1/operator/services"),
            None,
            401,
        ),
        call(
            "GET",
            format!("{operator}/api/v1/operator/services/999999"),
            Some(&admin),
            404,
        ),
        // The payment sandbox.
        call("GET", format!("{sandbox}/no-such-route"), None, 404),
    ]);

    let processes = [
        (auth, "auth-service"),
        (points, "point-service"),
        (order, "order-service"),
        (operator, "operator-service"),
        (sandbox, "payment-sandbox"),
    ];
    let process = |url: &str| {
        processes
            .iter()
            .find(|(base, _)| url.starts_with(base.as_str()))
            .map_or("?", |(_, name)| *name)
    };
    let http = reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(30))
        .build()
        .unwrap();
    let mut wrong = Vec::new();
    for call in &calls {
        let mut request = http.request(call.method.parse().unwrap(), &call.url);
        if let Some(token) = &call.token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = &call.body {
            request = request.json(body);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let sent: Vec<String> = POPUP_HEADERS
            .iter()
            .filter_map(|name| {
                response
                    .headers()
                    .get(*name)
                    .map(|value| format!("{name}: {value:?}"))
            })
            .collect();
        let what = format!("{}: {} {}", process(&call.url), call.method, call.url);
        if status != call.status {
            let body = response.text().await.unwrap_or_default();
            wrong.push(format!(
                "{what}: {status}, not the {} meant: {body}",
                call.status
            ));
        }
        if !sent.is_empty() {
            wrong.push(format!("{what}: sent {}", sent.join(", ")));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
