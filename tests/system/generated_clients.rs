//! A client generated from each service's own OpenAPI document by a real generator
//! (openapi-python-client, in a virtualenv under target/api-clients made on first use) walks
//! the README walkthrough (`walkthrough.rs`) against the running stack, every answer a typed
//! model: the documents are complete enough for an app team to use as they are, the order
//! service's alone covering everything the app calls (`generated_clients/run.sh` and
//! `walkthrough.py` say how).

use std::path::Path;
use std::process::Command;

use e2e::demo_database;
use e2e::stack::{Databases, Stack};

#[tokio::test]
async fn clients_generated_from_the_documents_walk_through_the_readme() {
    let auth_db = demo_database(&["auth-service"], "auth").await;
    let points_db = demo_database(&["point-service"], "points").await;
    let catalog_db = demo_database(&["order-service", "operator-service"], "catalog").await;
    let stack = Stack::start(&Databases {
        auth: auth_db.url().to_owned(),
        points: points_db.url().to_owned(),
        catalog: catalog_db.url().to_owned(),
    })
    .await;
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut command = Command::new("bash");
    command
        .arg(here.join("system/generated_clients/run.sh"))
        .env("API_CLIENTS_DIR", here.join("../target/api-clients"))
        .env("AUTH_URL", &stack.auth.base)
        .env("POINT_URL", &stack.points.base)
        .env("ORDER_URL", &stack.order.base)
        .env("OPERATOR_URL", &stack.operator.base)
        .env("SANDBOX_URL", &stack.sandbox.base);
    let output = tokio::task::spawn_blocking(move || command.output())
        .await
        .unwrap()
        .expect("bash runs");
    assert!(
        output.status.success(),
        "the walkthrough through the generated clients failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
