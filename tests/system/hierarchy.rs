//! The operator service and the order service on one catalog database: a service made a
//! child leaves the app's home list at once. The operator token comes from the binary's
//! own `token` subcommand.

use e2e::{OPERATOR_SECRET, Service, binary, demo_database};
use serde_json::{Value, json};

#[tokio::test]
async fn a_role_change_to_child_removes_the_service_from_the_home_list_at_once() {
    let catalog = demo_database(&["order-service", "operator-service"], "catalog").await;
    let order = Service::start("order-service", catalog.url(), &[]).await;
    let operator = Service::start("operator-service", catalog.url(), &[]).await;

    let token = std::process::Command::new(binary("operator-service"))
        .args(["token", "--role", "admin", "--sub", "e2e"])
        .env("OPERATOR_JWT_SECRET", OPERATOR_SECRET)
        .output()
        .unwrap();
    assert!(
        token.status.success(),
        "{}",
        String::from_utf8_lossy(&token.stderr)
    );
    let token = String::from_utf8(token.stdout).unwrap().trim().to_owned();

    let home = |order: &Service| {
        let url = format!("{}/api/v2/client/system-categories", order.base);
        async move {
            let body: Value = reqwest::get(url).await.unwrap().json().await.unwrap();
            body["data"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["id"].as_i64().unwrap())
                .collect::<Vec<_>>()
        }
    };
    // The demo's Pharmacies (3) is a standalone service on the home list.
    assert!(home(&order).await.contains(&3));
    let response = operator
        .client()
        .patch(format!("{}/api/v1/operator/services/3", operator.base))
        .bearer_auth(&token)
        .json(&json!({"hierarchyRole": "child"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert!(
        !home(&order).await.contains(&3),
        "a child never appears on the home list"
    );

    let forbidden = std::process::Command::new(binary("operator-service"))
        .args(["token", "--role", "data_entry", "--sub", "e2e"])
        .env("OPERATOR_JWT_SECRET", OPERATOR_SECRET)
        .output()
        .unwrap();
    let data_entry = String::from_utf8(forbidden.stdout)
        .unwrap()
        .trim()
        .to_owned();
    let response = operator
        .client()
        .patch(format!("{}/api/v1/operator/services/3", operator.base))
        .bearer_auth(data_entry)
        .json(&json!({"hierarchyRole": "standalone"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 403);
}
