//! `GET /internal/v1/clients/{id}` for the other services.

use serde_json::json;

use crate::helpers::*;

#[tokio::test]
async fn answers_the_bare_profile_with_the_internal_token_only() {
    let app = spawn_app().await;
    let get = |id: &str, token: Option<&str>| {
        let mut request = app
            .client
            .get(app.url(&format!("/internal/v1/clients/{id}")));
        if let Some(token) = token {
            request = request.header("x-internal-token", token);
        }
        request.send()
    };
    let (status, body) = answer(get("1002", Some(INTERNAL)).await.unwrap()).await;
    assert_eq!(status, 200);
    assert_eq!(keys(&body), PROFILE_KEYS);
    assert_eq!(body["client_id"], OMAR);
    let (status, body) = answer(get("4242", Some(INTERNAL)).await.unwrap()).await;
    assert_eq!(
        (status, without_stack(body)),
        (404, json!({"status": 404, "message": "client not found"}))
    );
    assert_eq!(get("1002", None).await.unwrap().status(), 401);
    assert_eq!(get("1002", Some("wrong")).await.unwrap().status(), 401);
}
