//! The operator service and the order service on one catalog database: a service made a
//! child leaves the app's home list at once. The operator token comes from the binary's
//! own `token` subcommand.

use e2e::{Service, demo_database, operator_token};
use serde_json::{Value, json};

#[tokio::test]
async fn a_role_change_to_child_removes_the_service_from_the_home_list_at_once() {
    let catalog = demo_database(&["order-service", "operator-service"], "catalog").await;
    let order = Service::start("order-service", catalog.url(), &[]).await;
    let operator = Service::start("operator-service", catalog.url(), &[]).await;

    let token = operator_token("admin", "e2e", 12);

    let home = |order: &Service| {
        let url = format!("{}/api/v2/client/system-categories", order.base);
        async move {
            let body: Value = reqwest::get(url).await.unwrap().json().await.unwrap();
            testkit::ids(&body)
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

    let data_entry = operator_token("data_entry", "e2e", 12);
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
