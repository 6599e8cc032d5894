//! The order service in front of the real point service (itself behind the real auth
//! service): every relayed route answers the same through the relay as straight from the
//! point service; a gift-card code tried twenty times at once answers 200 once and credits
//! once; and with the point service gone the relay answers 502.

use e2e::demo::{LEGACY_ORDER, OCCASION, OFFER_100, SARA};
use e2e::{Service, demo_database};
use futures_util::future::join_all;
use serde_json::{Value, json};

async fn call(
    client: &reqwest::Client,
    method: &str,
    url: String,
    body: Option<&Value>,
) -> (u16, String, String) {
    let mut request = client
        .request(method.parse().unwrap(), url)
        .bearer_auth(SARA);
    if let Some(body) = body {
        request = request.json(body);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (status, content_type, response.text().await.unwrap())
}

#[tokio::test]
async fn the_relay_answers_exactly_what_the_point_service_answers() {
    let auth_db = demo_database(&["auth-service"], "auth").await;
    let points_db = demo_database(&["point-service"], "points").await;
    let catalog_db = demo_database(&["order-service", "operator-service"], "catalog").await;
    let auth = Service::start("auth-service", auth_db.url(), &[]).await;
    // Card payments off so that the pay routes answer without a payment service.
    let points = Service::start(
        "point-service",
        points_db.url(),
        &[
            ("AUTH_SERVICE_URL", &auth.base),
            ("POINT_ORDER_CARD_ENABLED", "false"),
        ],
    )
    .await;
    let order = Service::start(
        "order-service",
        catalog_db.url(),
        &[
            ("POINT_SERVICE_URL", &points.base),
            ("AUTH_SERVICE_URL", &auth.base),
        ],
    )
    .await;
    let client = reqwest::Client::new();

    let bad_body = json!({"point_offer_id": 3, "payment_type": "card"});
    let describe = json!({"point_offer_id": OFFER_100, "point_occasion_id": OCCASION});
    let requests: Vec<(&str, String, Option<Value>)> = vec![
        ("GET", "/api/v2/client/points".into(), None),
        (
            "GET",
            "/api/v2/client/point-history?page=1&limit=2".into(),
            None,
        ),
        ("GET", "/api/v2/client/points-faq".into(), None),
        ("GET", "/api/v2/client/point-offers".into(), None),
        (
            "GET",
            "/api/v2/client/point-offers/64B7F0C2A1B2C3D4E5F60718".into(),
            None,
        ),
        ("GET", "/api/v2/client/point-offers/3".into(), None),
        (
            "GET",
            "/api/v2/client/point-occasions?language=ar".into(),
            None,
        ),
        ("POST", "/api/v2/client/point-orders".into(), Some(bad_body)),
        (
            "POST",
            "/api/v2/client/point-orders/description".into(),
            Some(describe),
        ),
        (
            "GET",
            format!("/api/v2/client/point-orders/{LEGACY_ORDER}"),
            None,
        ),
        (
            "POST",
            format!("/api/v2/client/point-orders/{LEGACY_ORDER}/pay/card"),
            Some(json!({"id": "c", "cvv": "123"})),
        ),
        (
            "POST",
            format!("/api/v2/client/point-orders/{LEGACY_ORDER}/pay/session"),
            Some(json!({})),
        ),
    ];
    for (method, path, body) in &requests {
        let direct = call(
            &client,
            method,
            format!("{}{path}", points.base),
            body.as_ref(),
        )
        .await;
        let relayed = call(
            &client,
            method,
            format!("{}{path}", order.base),
            body.as_ref(),
        )
        .await;
        assert_eq!(relayed, direct, "{method} {path}");
        assert!(
            direct.1.starts_with("application/json"),
            "{method} {path}: {direct:?}"
        );
    }

    // Twenty tries of one code at once, by the same client: exactly one 200 (docs/design.md: a
    // gift code is single-use; the rest get 409 while it is credited and after), one credit.
    let before: Value = client
        .get(format!("{}/api/v2/client/points", order.base))
        .bearer_auth(SARA)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let tries = (0..20).map(|_| {
        client
            .post(format!("{}/api/v2/client/gift-card-code", order.base))
            .bearer_auth(SARA)
            .json(&json!({"code": "WELCOME-100"}))
            .send()
    });
    let statuses: Vec<u16> = join_all(tries)
        .await
        .into_iter()
        .map(|r| r.unwrap().status().as_u16())
        .collect();
    assert_eq!(
        statuses.iter().filter(|s| **s == 200).count(),
        1,
        "{statuses:?}"
    );
    assert!(
        statuses.iter().all(|s| *s == 200 || *s == 409),
        "{statuses:?}"
    );
    let after: Value = client
        .get(format!("{}/api/v2/client/points", order.base))
        .bearer_auth(SARA)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        (before["points"].clone(), after["points"].clone()),
        (json!("630.5"), json!("730.5")),
        "credited once"
    );

    // The point service goes away: 502 in envelope B.
    let status = points.terminate().await;
    assert!(status.success());
    let (status, _, body) = call(
        &client,
        "GET",
        format!("{}/api/v2/client/points", order.base),
        None,
    )
    .await;
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        (
            status,
            body["success"].clone(),
            body["error"]["code"].clone()
        ),
        (502, json!(false), json!("POINT_SERVICE_UNAVAILABLE"))
    );
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Point service unavailable: ")
    );
}
