//! Clients generated from the published documents (`docs/api/`, `make api-documents`) by
//! the generators the app and admin teams use, each pinned and installed on first use under
//! target/api-clients (`generated_clients/*/` say how):
//! - TypeScript (openapi-typescript, openapi-fetch, `tsc --strict`): a journey that calls
//!   every app and admin route and reads every answer field, each through an exact-type
//!   check, must compile; so an untyped answer, an optional key that is always there, a free
//!   string for a closed set or an id typed `string` fails it.
//! - Python (openapi-python-client): the app's journey and an operator assigning children,
//!   against the running stack, every answer a generated model and every field read checked
//!   as declared required, of the right type (enums for closed sets, nullable where the spec
//!   says so).

use std::path::{Path, PathBuf};
use std::process::Command;

use e2e::stack::Stack;
use e2e::{DemoDatabases, operator_token};

fn here() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn clients_dir() -> PathBuf {
    here().join("../target/api-clients")
}

/// Runs `command` to its end, off the test's threads; fails the test with its output.
async fn passes(mut command: Command, what: &str) {
    let output = tokio::task::spawn_blocking(move || command.output())
        .await
        .unwrap()
        .expect("bash runs");
    assert!(
        output.status.success(),
        "{what} failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[tokio::test]
async fn a_typescript_client_types_every_answer_of_the_journey() {
    let mut command = Command::new("bash");
    command
        .arg(here().join("system/generated_clients/typescript/check.sh"))
        .env("API_CLIENTS_DIR", clients_dir());
    passes(command, "the TypeScript journey's type check").await;
}

#[tokio::test]
async fn a_python_client_drives_the_journey_against_the_services() {
    let databases = DemoDatabases::create("python_client").await;
    let stack = Stack::start(&databases.urls()).await;
    let mut command = Command::new("bash");
    command
        .arg(here().join("system/generated_clients/python/run.sh"))
        .env("API_CLIENTS_DIR", clients_dir())
        .env("AUTH_URL", &stack.auth.base)
        .env("ORDER_URL", &stack.order.base)
        .env("OPERATOR_URL", &stack.operator.base)
        .env("SANDBOX_URL", &stack.sandbox.base)
        .env("OPERATOR_TOKEN", operator_token("admin", "journey", 1))
        .env(
            "SUPER_ADMIN_TOKEN",
            operator_token("super_admin", "journey-issuer", 1),
        );
    passes(command, "the Python journey through the generated clients").await;
}
