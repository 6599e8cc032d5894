//! `GET /internal/v1/clients/{id}` for the other services.

use serde_json::json;

use crate::helpers::*;

#[tokio::test]
async fn answers_the_bare_profile_with_the_internal_token_only() {
    let app = spawn_app().await;
    let (status, body) = answer(app.internal_client("1002", Some(INTERNAL)).await).await;
    assert_eq!(status, 200);
    assert_eq!(keys(&body), PROFILE_KEYS);
    assert_eq!(body["client_id"], OMAR);
    let (status, body) = answer(app.internal_client("4242", Some(INTERNAL)).await).await;
    assert_eq!(
        (status, without_stack(body)),
        (404, json!({"status": 404, "message": "client not found"}))
    );
    assert_eq!(app.internal_client("1002", None).await.status(), 401);
    assert_eq!(
        app.internal_client("1002", Some("wrong")).await.status(),
        401
    );
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
        for token in [None, Some(INTERNAL)] {
            let mut request = app
                .client
                .get(app.url(&format!("/internal/v1/clients/{target}")));
            if let Some(token) = token {
                request = request.header("x-internal-token", token);
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
