//! `GET /internal/v1/clients/{id}` for the other services.

use serde_json::json;

use crate::helpers::*;

#[tokio::test]
async fn answers_the_bare_profile_to_the_point_and_order_services_only() {
    let app = spawn_app().await;
    for caller in [Service::Point, Service::Order] {
        let (status, body) = answer(app.internal_client("1002", Some(&from(caller))).await).await;
        assert_eq!(status, 200, "{caller}");
        assert_eq!(keys(&body), PROFILE_KEYS);
        assert_eq!(body["client_id"], OMAR);
        let (status, body) = answer(app.internal_client("4242", Some(&from(caller))).await).await;
        assert_eq!(
            (status, without_stack(body)),
            (404, json!({"status": 404, "message": "client not found"}))
        );
    }
    // A good credential of a service the route does not list: 403, nothing read.
    for caller in [Service::Operator, Service::Auth] {
        let (status, body) = answer(app.internal_client("1002", Some(&from(caller))).await).await;
        assert_eq!(
            (status, without_stack(body)),
            (
                403,
                json!({"status": 403, "message": "the calling service may not call this route"})
            ),
            "{caller}"
        );
    }
    // None, a forged one, the point service's credential for another callee: 401.
    let for_point = testkit::identity::authorization(Service::Order, Service::Point);
    for authorization in [None, Some("Bearer wrong"), Some(for_point.as_str())] {
        let (status, body) = answer(app.internal_client("1002", authorization).await).await;
        assert_eq!(
            (status, without_stack(body)),
            (401, json!({"status": 401, "message": "Unauthorization"})),
            "{authorization:?}"
        );
    }
}

/// The route takes digits only, so a target that climbs with encoded separators
/// (`1%2F..%2F..%2F..%2F..%2Fapi%2Fv1%2Fclients`, which a proxy matching on the decoded,
/// dot-resolved path reads as `/api/v1/clients`) matches no route at all: it never reaches the
/// handler, and so never even its token check (which would answer 401 to the caller).
#[tokio::test]
async fn an_id_that_is_not_digits_matches_no_route() {
    let app = spawn_app().await;
    let targets = [
        "1%2F..%2F..%2F..%2F..%2Fapi%2Fv1%2Fclients",
        "1%2f..%2f..%2f..%2f..%2fapi%2fv1%2fclients",
        "1%5C..%5C..%5C..%5C..%5Capi%5Cv1%5Cclients",
        "1002%2F",
        "%2B1002",
        "1002abc",
        "-1002",
    ];
    for target in targets {
        for token in [None, Some(from(Service::Point))] {
            let mut request = app
                .client
                .get(app.url(&format!("/internal/v1/clients/{target}")));
            if let Some(token) = &token {
                request = request.header("authorization", token);
            }
            let (status, body) = answer(request.send().await.unwrap()).await;
            assert_eq!(status, 404, "{target} with {token:?}: {body}");
            assert!(
                body["message"]
                    .as_str()
                    .unwrap()
                    .starts_with("Cannot GET /internal/v1/clients/"),
                "{target} with {token:?} reached the handler: {body}"
            );
        }
    }
}
