//! `POST /internal/v1/credits`: idempotent by reference.

use serde_json::{Value, json};

use service_identity::Service;

use crate::helpers::*;

/// `body` to the credits route, with `token` as its `Authorization`, or the order
/// service's own credential made for it ([`ORDER`]).
async fn credit(app: &TestApp, body: &Value, token: Option<&str>) -> (u16, Value) {
    let text = body.to_string();
    let mut request = app
        .client
        .post(app.url(paths::CREDITS))
        .header("content-type", "application/json")
        .body(text.clone());
    match token {
        Some(ORDER) => request = request.header("authorization", from_order(&text)),
        Some(token) => request = request.header("authorization", token),
        None => {}
    }
    answer(request.send().await.unwrap()).await
}

/// Stands for the order service's own credential, made for the request sent.
const ORDER: &str = "the order service's";

#[tokio::test]
async fn a_reference_credits_once_and_answers_the_first_result_again() {
    let app = spawn_app().await;
    let body = json!({"client_id": OMAR, "points": "100", "reference": "gift-card:1", "reason": "gift_card"});
    let first = credit(&app, &body, Some(ORDER)).await;
    assert_eq!(
        first,
        (
            200,
            json!({"client_id": OMAR, "points": "100", "reference": "gift-card:1", "balance": "100"})
        )
    );
    app.order(SARA, &order_body(OMAR, "point")).await;
    assert_eq!(
        credit(&app, &body, Some(ORDER)).await,
        first,
        "the first answer, balance included"
    );
    assert_eq!(app.balance_of(OMAR).await, "200");

    let other_amount = json!({"client_id": OMAR, "points": "50", "reference": "gift-card:1", "reason": "gift_card"});
    assert_eq!(credit(&app, &other_amount, Some(ORDER)).await.0, 409);
    let other_client = json!({"client_id": NOURA, "points": "100", "reference": "gift-card:1", "reason": "gift_card"});
    assert_eq!(credit(&app, &other_client, Some(ORDER)).await.0, 409);
}

#[tokio::test]
async fn only_the_order_service_credits_and_the_body_is_checked() {
    let app = spawn_app().await;
    let body = json!({"client_id": OMAR, "points": "100", "reference": "gift-card:2", "reason": "gift_card"});
    let unauthenticated = error_b("UNAUTHORIZED", "invalid service credential");
    let for_auth = testkit::identity::authorization(Service::Order, Service::Auth);
    for authorization in [None, Some("Bearer wrong"), Some(for_auth.as_str())] {
        assert_eq!(
            credit(&app, &body, authorization).await,
            (401, unauthenticated.clone()),
            "{authorization:?}"
        );
    }
    // Every other service's own credential: the operator service (which may call the back
    // office), the auth service, the point service calling itself.
    for caller in [Service::Operator, Service::Auth, Service::Point] {
        let authorization = testkit::identity::authorization(caller, Service::Point);
        assert_eq!(
            credit(&app, &body, Some(&authorization)).await,
            (
                403,
                error_b("FORBIDDEN", "the calling service may not call this route")
            ),
            "{caller}"
        );
    }
    // The order service's own credential, made for another body, for no request, or for
    // another path: 401, nothing credited.
    let smaller = json!({"client_id": OMAR, "points": "1", "reference": "gift-card:2", "reason": "gift_card"});
    let other_body = from_order(&smaller.to_string());
    let plain = testkit::identity::authorization(Service::Order, Service::Point);
    let elsewhere = testkit::identity::signer(Service::Order).vouch(
        Service::Point,
        None,
        "POST",
        "/internal/v1/credits/",
        body.to_string().as_bytes(),
    );
    for authorization in [&other_body, &plain, &elsewhere] {
        assert_eq!(
            credit(&app, &body, Some(authorization)).await,
            (401, unauthenticated.clone())
        );
    }
    assert_eq!(
        credit(
            &app,
            &json!({"client_id": OMAR, "points": "-1", "reference": "r", "reason": "gift_card"}),
            Some(ORDER)
        )
        .await
        .0,
        400
    );
    assert_eq!(app.balance_of(OMAR).await, "0");
}

/// One reference sent for two clients, or two amounts, at the same moment: one wins (200),
/// the other gets 409, never a 500 from the reference's unique key; one credit is written.
#[tokio::test]
async fn the_same_reference_raced_for_two_clients_or_amounts_is_one_200_and_one_409() {
    let app = std::sync::Arc::new(spawn_app().await);
    for round in 0..30 {
        let reference = format!("gift-card:race-{round}");
        let bodies = if round % 2 == 0 {
            [
                json!({"client_id": OMAR, "points": "100", "reference": reference, "reason": "gift_card"}),
                json!({"client_id": NOURA, "points": "100", "reference": reference, "reason": "gift_card"}),
            ]
        } else {
            [
                json!({"client_id": OMAR, "points": "100", "reference": reference, "reason": "gift_card"}),
                json!({"client_id": OMAR, "points": "50", "reference": reference, "reason": "gift_card"}),
            ]
        };
        let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(2));
        let racers: Vec<_> = bodies
            .into_iter()
            .map(|body| {
                let (app, barrier) = (app.clone(), barrier.clone());
                tokio::spawn(async move {
                    let request = app
                        .client
                        .post(app.url(paths::CREDITS))
                        .header("authorization", from_order(&body.to_string()))
                        .header("content-type", "application/json")
                        .body(body.to_string());
                    barrier.wait().await;
                    answer(request.send().await.unwrap()).await
                })
            })
            .collect();
        let mut statuses = Vec::new();
        for racer in racers {
            let (status, body) = racer.await.unwrap();
            assert!(
                status == 200 || status == 409,
                "round {round}: {status} {body}"
            );
            statuses.push(status);
        }
        statuses.sort_unstable();
        assert_eq!(statuses, [200, 409], "round {round}");
        assert_eq!(
            app.count(&format!(
                "SELECT count(*) AS n FROM point_entries WHERE reference = '{reference}'"
            ))
            .await,
            1
        );
    }
}

/// The gift-card credit sends a code's exact points as text; they are credited exactly
/// (the answer's texts are the spec's 4-decimal ones), and the same reference with the
/// rounded amount is another amount (409), not the same credit.
#[tokio::test]
async fn points_text_is_credited_exactly() {
    let app = spawn_app().await;
    for (reference, points, answered) in [
        ("gift-card:1", "1.23456", "1.2346"),
        ("gift-card:2", "0.00001", "0"),
    ] {
        let body = json!({"client_id": OMAR, "points": points, "reference": reference, "reason": "gift_card"});
        let (status, answer) = credit(&app, &body, Some(ORDER)).await;
        assert_eq!((status, answer["points"].clone()), (200, json!(answered)));
    }
    assert_eq!(
        app.count(
            "SELECT count(*) AS n FROM point_entries WHERE client_id = 1002 \
             AND points IN (1.23456, 0.00001)"
        )
        .await,
        2
    );
    assert_eq!(app.balance_of(OMAR).await, "1.2346");
    let rounded = json!({"client_id": OMAR, "points": "1.2346", "reference": "gift-card:1", "reason": "gift_card"});
    assert_eq!(credit(&app, &rounded, Some(ORDER)).await.0, 409);
}
