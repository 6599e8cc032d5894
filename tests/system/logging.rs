//! Every log line written while serving a request carries that request's id, the same id
//! the answer's `X-Request-Id` header gives.

use db::testing::TestDatabase;
use e2e::Service;

#[tokio::test]
async fn a_requests_log_lines_carry_its_request_id() {
    let database = TestDatabase::empty("logging").await;
    let service = Service::start("point-service", database.url(), &[("RUST_LOG", "debug")]).await;
    let response = service.get("/no/such/route").await;
    let request_id = response.headers()["x-request-id"]
        .to_str()
        .unwrap()
        .to_owned();
    assert_eq!(response.status(), 404);

    // The refusal is logged inside the request's span.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let lines: Vec<serde_json::Value> = service
        .logs()
        .iter()
        .filter_map(|line| serde_json::from_str(line).ok())
        .filter(|line: &serde_json::Value| line["message"] == "request refused")
        .collect();
    assert!(
        !lines.is_empty(),
        "no log line for the refused request:\n{}",
        service.logs().join("\n")
    );
    for line in lines {
        let root = &line["spans"][0];
        assert_eq!(root["request_id"], request_id.as_str(), "{line}");
        assert_eq!(root["http.target"], "/no/such/route", "{line}");
    }
}
