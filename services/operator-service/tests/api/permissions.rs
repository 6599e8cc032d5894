//! 401 without a valid token; each role × route.

use operator_service::auth::Role;
use serde_json::{Value, json};

use crate::helpers::*;

#[tokio::test]
async fn no_bad_or_expired_tokens_get_401() {
    let app = spawn_app().await;
    let unauthorized = (
        401,
        json!({"statusCode": 401, "message": "Unauthorized", "error": "Unauthorized"}),
    );
    assert_eq!(app.call("GET", "/services", None, None).await, unauthorized);
    let expired = app.keys.issue("op", Role::Admin, -1).unwrap();
    let other = operator_service::auth::OperatorKeys::new(b"another-secret-0123456789abcdef")
        .issue("op", Role::Admin, 1)
        .unwrap();
    for token in [expired, other, "garbage".to_owned()] {
        let response = app
            .client
            .get(format!("{}/api/v1/operator/services", app.base))
            .bearer_auth(token)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 401);
        assert_eq!(response.json::<Value>().await.unwrap(), unauthorized.1);
    }
}

#[tokio::test]
async fn every_role_on_every_route() {
    let app = spawn_app().await;
    let forbidden = (
        403,
        json!({"statusCode": 403, "message": "Forbidden resource", "error": "Forbidden"}),
    );
    // (method, path, body, who may): reads are for everyone, the rest for admins only.
    let routes: [(&str, &str, Option<Value>, bool); 8] = [
        ("GET", "/services", None, true),
        ("GET", "/services/all/without-pagination", None, true),
        ("GET", "/services/1", None, true),
        (
            "POST",
            "/services",
            Some(json!({"title": "x", "titleTranslated": "y"})),
            false,
        ),
        ("PATCH", "/services/3", Some(json!({"ordering": 9})), false),
        ("GET", "/services/1/children", None, false),
        (
            "PATCH",
            "/services/1/children",
            Some(json!({"unassignServiceIds": [999]})),
            false,
        ),
        ("GET", "/audit", None, false),
    ];
    for role in Role::ALL {
        for (method, path, body, everyone) in &routes {
            let (status, answer) = app.call(method, path, Some(role), body.as_ref()).await;
            if role.is_admin() || *everyone {
                assert!(
                    (200..300).contains(&status),
                    "{} {method} {path}: {status} {answer}",
                    role.as_str()
                );
            } else {
                assert_eq!(
                    (status, answer),
                    forbidden,
                    "{} {method} {path}",
                    role.as_str()
                );
            }
        }
    }
}
