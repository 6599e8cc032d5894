//! The loyalty back office's offer routes as the operator service serves them: the token
//! and role checks before anything is relayed, the path's offer id, what the point service
//! is sent (its own credential, made for the request and vouching for the operator's id and
//! role, the body as sent), which of its answers pass on and which become ours.

use operator_service::auth::Role;
use serde_json::{Value, json};

use crate::helpers::*;

const OFFER: &str = "64b7f0c2a1b2c3d4e5f60718";

/// A back-office route: method, path, body, the roles it admits, the service it is relayed
/// to.
type Route = (
    &'static str,
    String,
    Option<Value>,
    fn(Role) -> bool,
    &'static str,
);

const POINTS: &str = "point service";
const CATALOG: &str = "order service";

fn routes() -> Vec<Route> {
    let everyone: fn(Role) -> bool = |_| true;
    let admins: fn(Role) -> bool = Role::is_admin;
    let super_admin: fn(Role) -> bool = |role| role == Role::SuperAdmin;
    vec![
        ("GET", "/offers".to_owned(), None, everyone, POINTS),
        ("GET", "/loyalty/audit".to_owned(), None, admins, POINTS),
        (
            "GET",
            "/loyalty/client-reads".to_owned(),
            None,
            super_admin,
            POINTS,
        ),
        (
            "POST",
            "/expiry-policy/dry-run".to_owned(),
            Some(json!({"expiry": "inactivity", "inactivityDays": 30, "version": 1})),
            super_admin,
            POINTS,
        ),
        (
            "POST",
            "/offers".to_owned(),
            Some(json!({"pointAmount": 1, "amount": 1})),
            admins,
            POINTS,
        ),
        (
            "PATCH",
            format!("/offers/{OFFER}"),
            Some(json!({"active": false})),
            admins,
            POINTS,
        ),
        ("DELETE", format!("/offers/{OFFER}"), None, admins, POINTS),
        ("GET", "/occasions".to_owned(), None, everyone, POINTS),
        (
            "POST",
            "/occasions".to_owned(),
            Some(json!({"occasionEn": "Eid"})),
            admins,
            POINTS,
        ),
        (
            "PATCH",
            format!("/occasions/{OFFER}"),
            Some(json!({"active": true})),
            admins,
            POINTS,
        ),
        (
            "DELETE",
            format!("/occasions/{OFFER}"),
            None,
            admins,
            POINTS,
        ),
        ("GET", "/expiry-policy".to_owned(), None, everyone, POINTS),
        (
            "GET",
            "/clients/1001/points".to_owned(),
            None,
            admins,
            POINTS,
        ),
        (
            "PUT",
            "/expiry-policy".to_owned(),
            Some(json!({"expiry": "never", "inactivityDays": null, "version": 0})),
            admins,
            POINTS,
        ),
        (
            "POST",
            "/clients/1001/adjustments".to_owned(),
            Some(json!({"points": "-5", "reason": "x", "reference": "r"})),
            super_admin,
            POINTS,
        ),
        (
            "GET",
            "/gift-code-batches".to_owned(),
            None,
            admins,
            CATALOG,
        ),
        (
            "POST",
            "/gift-code-batches".to_owned(),
            Some(json!({"reference": "r", "count": 1, "points": 1})),
            super_admin,
            CATALOG,
        ),
        (
            "GET",
            "/gift-code-batches/7".to_owned(),
            None,
            super_admin,
            CATALOG,
        ),
        (
            "DELETE",
            "/gift-code-batches/7".to_owned(),
            None,
            super_admin,
            CATALOG,
        ),
        ("GET", "/earn-rates".to_owned(), None, everyone, CATALOG),
        (
            "PUT",
            "/earn-rates".to_owned(),
            Some(json!({"rates": [], "version": 0})),
            admins,
            CATALOG,
        ),
        (
            "GET",
            "/loyalty/catalog-audit".to_owned(),
            None,
            admins,
            CATALOG,
        ),
    ]
}

#[tokio::test]
async fn every_role_on_every_back_office_route_and_nothing_relayed_before_the_checks() {
    let app = spawn_app().await;
    let forbidden =
        json!({"statusCode": 403, "message": "Forbidden resource", "error": "Forbidden"});
    for (method, path, body, admits, keeper) in routes() {
        assert_eq!(
            app.call(method, &path, None, body.as_ref()).await,
            (
                401,
                json!({"statusCode": 401, "message": "Unauthorized", "error": "Unauthorized"})
            ),
            "{method} {path}"
        );
        for role in Role::ALL {
            let (status, answer) = app.call(method, &path, Some(role), body.as_ref()).await;
            if !admits(role) {
                assert_eq!(
                    (status, &answer),
                    (403, &forbidden),
                    "{method} {path} {role:?}"
                );
                continue;
            }
            assert_eq!(status, 200, "{method} {path} {role:?}: {answer}");
            let suffix = match path.as_str() {
                "/loyalty/audit" => "/audit",
                "/loyalty/catalog-audit" => "/catalog-audit",
                "/loyalty/client-reads" => "/client-reads",
                other => other,
            };
            assert_eq!(answer["service"], json!(keeper), "{method} {path}");
            assert_eq!(answer["method"], json!(method));
            assert_eq!(
                answer["path"],
                json!(format!("/internal/v1/back-office{suffix}"))
            );
            // The operator service's own credential, made for this very request.
            assert_eq!(answer["caller"], json!("operator-service"));
            let query = answer["query"].as_str().unwrap();
            let sent = match query {
                "" => answer["path"].as_str().unwrap().to_owned(),
                query => format!("{}?{query}", answer["path"].as_str().unwrap()),
            };
            assert_eq!(answer["request"], json!(format!("{method} {sent}")));
            assert_eq!(answer["body"], body.clone().unwrap_or(Value::Null));
            // A change names its operator for the audit row, and so do a read of a batch's
            // codes (who saw vouchers) and of a client's points (who looked), and the read of
            // who looked (super_admin's, checked again by the keeper); any other read names
            // none.
            let recorded = path.starts_with("/gift-code-batches/")
                || path.starts_with("/clients/")
                || path == "/loyalty/client-reads";
            let named = if method == "GET" && !recorded {
                (Value::Null, Value::Null)
            } else {
                (json!("op-1"), json!(role.as_str()))
            };
            assert_eq!(
                (answer["operatorId"].clone(), answer["operatorRole"].clone()),
                named
            );
        }
    }
}

#[tokio::test]
async fn an_offer_id_that_is_not_24_hex_names_no_offer_and_no_other_path() {
    let app = spawn_app().await;
    for id in [
        "abc",
        "..%2F..%2Fcredits",
        "64b7f0c2a1b2c3d4e5f6071g",
        "64b7f0c2a1b2c3d4e5f607180",
    ] {
        for method in ["PATCH", "DELETE"] {
            let body = json!({"active": true});
            let (status, answer) = app
                .admin(method, &format!("/offers/{id}"), Some(&body))
                .await;
            assert_eq!(status, 404, "{method} {id}: {answer}");
            assert_eq!(answer["statusCode"], json!(404));
            assert!(
                answer["message"].as_str().unwrap().starts_with("offer ")
                    && answer["message"].as_str().unwrap().ends_with(" not found"),
                "{answer}"
            );
        }
    }
    // Upper case is an id (the point service reads it in either case).
    let upper = OFFER.to_uppercase();
    let (status, answer) = app.admin("DELETE", &format!("/offers/{upper}"), None).await;
    assert_eq!(
        (status, &answer["path"]),
        (
            200,
            &json!(format!("/internal/v1/back-office/offers/{upper}"))
        )
    );
}

#[tokio::test]
async fn the_back_offices_refusals_pass_on_and_the_point_services_failures_are_ours() {
    let app = spawn_app().await;
    assert_eq!(
        app.admin("DELETE", &format!("/offers/{REFUSED_OFFER}"), None)
            .await,
        (
            404,
            json!({"statusCode": 404, "message": format!("offer {REFUSED_OFFER} not found"),
                   "error": "Not Found"})
        )
    );
    let failed = |status: u16| {
        json!({"statusCode": 502, "message": format!("the point service failed ({status})"),
               "error": "Bad Gateway"})
    };
    // A busy keeper is our busy answer, which the panel may send again.
    assert_eq!(
        app.admin("DELETE", &format!("/offers/{FAILING_OFFER}"), None)
            .await,
        (
            503,
            json!({"statusCode": 503, "message": db::BUSY_MESSAGE, "error": "Service Unavailable"})
        )
    );
    // A 401 from the point service is our credential refused, never the panel's.
    assert_eq!(
        app.admin("DELETE", &format!("/offers/{WRONG_TOKEN_OFFER}"), None)
            .await,
        (502, failed(401))
    );
}

#[tokio::test]
async fn without_the_point_service_configured_the_back_office_says_what_is_missing() {
    let nothing = spawn_app_with(None).await;
    assert_eq!(
        nothing.admin("GET", "/offers", None).await,
        (
            500,
            json!({"statusCode": 500,
                   "message": "POINT_SERVICE_URL is not set: the loyalty back office cannot reach the point service",
                   "error": "Internal Server Error"})
        )
    );
    // A port nothing listens on: bound, then let go.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let unreachable = spawn_app_with(Some(closed)).await;
    assert_eq!(
        unreachable.admin("GET", "/offers", None).await,
        (
            502,
            json!({"statusCode": 502, "message": "the point service could not be reached",
                   "error": "Bad Gateway"})
        )
    );
    // The service hierarchy does not need the point service.
    assert_eq!(nothing.admin("GET", "/services", None).await.0, 200);
}

#[tokio::test]
async fn a_keeper_that_does_not_answer_within_the_wait_is_a_504_that_says_to_read_back() {
    // Connections complete in the listener's backlog; nothing ever answers them.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", silent.local_addr().unwrap());
    let wait = std::time::Duration::from_millis(300);
    let app = spawn_app_waiting(Some(url.clone()), Some(url), wait).await;
    let timed_out = |service: &str| {
        json!({"statusCode": 504,
               "message": format!("the {service} did not answer in time: the change may have been \
                                   made, read it back before sending it again"),
               "error": "Gateway Timeout"})
    };
    assert_eq!(
        app.admin("GET", "/offers", None).await,
        (504, timed_out("point service"))
    );
    let rates = json!({"version": 1, "rates": []});
    assert_eq!(
        app.admin("PUT", "/earn-rates", Some(&rates)).await,
        (504, timed_out("order service"))
    );
    drop(silent);
}

#[tokio::test]
async fn a_client_id_that_is_not_a_positive_integer_names_no_client_and_no_other_path() {
    let app = spawn_app().await;
    let adjust = |id: &str| {
        let path = format!("/clients/{id}/adjustments");
        let app = &app;
        async move {
            app.call(
                "POST",
                &path,
                Some(Role::SuperAdmin),
                Some(&json!({"points": 1})),
            )
            .await
        }
    };
    for id in [
        "0",
        "-1",
        "1.5",
        "abc",
        "..%2F..%2Fcredits",
        "9223372036854775808",
    ] {
        let (status, answer) = adjust(id).await;
        assert_eq!(status, 404, "{id}: {answer}");
        assert!(
            answer["message"].as_str().unwrap().starts_with("client ")
                && answer["message"].as_str().unwrap().ends_with(" not found"),
            "{answer}"
        );
    }
    assert_eq!(
        adjust("1001").await.1["path"],
        json!("/internal/v1/back-office/clients/1001/adjustments")
    );
}

#[tokio::test]
async fn an_occasion_id_that_is_not_24_hex_names_no_occasion() {
    let app = spawn_app().await;
    for id in ["abc", "..%2F..%2Fcredits", "64b7f0c2a1b2c3d4e5f6080g"] {
        let (status, answer) = app
            .admin(
                "PATCH",
                &format!("/occasions/{id}"),
                Some(&json!({"active": true})),
            )
            .await;
        assert_eq!(status, 404, "{id}: {answer}");
        assert!(
            answer["message"].as_str().unwrap().starts_with("occasion "),
            "{answer}"
        );
    }
}

#[tokio::test]
async fn a_clients_points_are_asked_with_the_page_and_limit_only() {
    let app = spawn_app().await;
    let (status, answer) = app
        .admin(
            "GET",
            "/clients/1001/points?limit=5&page=2&x=%26y%3D1&page=9",
            None,
        )
        .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        (&answer["path"], &answer["query"]),
        (
            &json!("/internal/v1/back-office/clients/1001/points"),
            &json!("limit=5&page=2&page=9")
        )
    );
    assert_eq!(app.admin("GET", "/clients/0/points", None).await.0, 404);
}

#[tokio::test]
async fn a_batchs_csv_is_super_admins_and_passes_on_as_csv() {
    let app = spawn_app().await;
    for role in Role::ALL {
        let response = app
            .client
            .get(format!(
                "{}/api/v1/operator/gift-code-batches/7/codes.csv",
                app.base
            ))
            .bearer_auth(app.token(role))
            .send()
            .await
            .unwrap();
        if role != Role::SuperAdmin {
            assert_eq!(response.status(), 403, "{role:?}");
            continue;
        }
        assert_eq!(response.status(), 200);
        assert_eq!(
            response.headers()["content-type"],
            "text/csv; charset=utf-8"
        );
        assert_eq!(
            response.headers()["content-disposition"],
            "attachment; filename=\"b.csv\""
        );
        assert_eq!(response.headers()["cache-control"], "no-store");
        assert_eq!(
            response.text().await.unwrap(),
            "code,points,expires_at\nA-1,5,\n"
        );
    }
}

#[tokio::test]
async fn a_batch_id_that_is_not_a_positive_integer_names_no_batch_and_no_other_path() {
    let app = spawn_app().await;
    for id in [
        "0",
        "-1",
        "1.5",
        "abc",
        "..%2Fearn-rates",
        "+7",
        "99999999999999999999",
    ] {
        for (method, path) in [
            ("GET", format!("/gift-code-batches/{id}")),
            ("GET", format!("/gift-code-batches/{id}/codes.csv")),
            ("DELETE", format!("/gift-code-batches/{id}")),
        ] {
            let (status, answer) = app.call(method, &path, Some(Role::SuperAdmin), None).await;
            let sent = percent_decode(id);
            assert_eq!(
                (status, answer),
                (
                    404,
                    json!({"statusCode": 404,
                           "message": format!("gift-code batch {sent} does not exist"),
                           "error": "Not Found",
                           "code": "BATCH_NOT_FOUND"})
                ),
                "{method} {path}"
            );
        }
    }
}

/// The id as the router hands it to the handler (percent-decoded).
fn percent_decode(id: &str) -> String {
    id.replace("%2F", "/")
}

#[tokio::test]
async fn without_the_order_service_configured_its_routes_say_so_and_the_rest_work() {
    let app = spawn_app_with(Some(String::from("http://127.0.0.1:9"))).await;
    for (method, path, role) in [
        ("GET", "/earn-rates", Role::DataEntry),
        ("GET", "/gift-code-batches", Role::Admin),
        ("GET", "/gift-code-batches/1/codes.csv", Role::SuperAdmin),
    ] {
        assert_eq!(
            app.call(method, path, Some(role), None).await,
            (
                500,
                testkit::operator_error(
                    500,
                    "ORDER_SERVICE_URL is not set: the loyalty back office cannot reach the order service",
                    "Internal Server Error"
                )
            ),
            "{path}"
        );
    }
    assert_eq!(app.admin("GET", "/services", None).await.0, 200);
}

#[tokio::test]
async fn a_list_asks_its_keeper_for_the_page_and_limit_only() {
    let app = spawn_app().await;
    for (path, relayed) in [
        ("/loyalty/audit", "/audit"),
        ("/loyalty/catalog-audit", "/catalog-audit"),
        ("/gift-code-batches", "/gift-code-batches"),
    ] {
        for (query, sent) in [
            ("", "page=1&limit=10"),
            ("?page=3&limit=25&x=1", "page=3&limit=25"),
            ("?page=abc&limit=500&limit=2", "page=1&limit=100"),
            ("?page=2%26limit%3D1", "page=1&limit=10"),
        ] {
            let (status, answer) = app
                .call(
                    "GET",
                    &format!("{path}{query}"),
                    Some(Role::SuperAdmin),
                    None,
                )
                .await;
            assert_eq!(status, 200, "{path}{query}: {answer}");
            assert_eq!(
                (&answer["path"], &answer["query"]),
                (
                    &json!(format!("/internal/v1/back-office{relayed}")),
                    &json!(sent)
                ),
                "{path}{query}"
            );
        }
    }
}

#[tokio::test]
async fn a_body_over_64_kib_is_refused_before_the_token_and_the_role_are_read() {
    let app = spawn_app().await;
    let big = json!({"pointAmount": "1", "amount": "1", "note": "x".repeat(70 * 1024)});
    for role in [None, Some(Role::DataEntry), Some(Role::SuperAdmin)] {
        let (status, _) = app.call("POST", "/offers", role, Some(&big)).await;
        assert_eq!(status, 413, "{role:?}");
    }
}
