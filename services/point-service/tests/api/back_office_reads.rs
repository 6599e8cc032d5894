//! Who looked: every read of a client's points through the back office is recorded with its
//! operator and client before it is answered, in a trail of its own that only a super_admin
//! reads (issue 40).

use serde_json::json;

use crate::back_office::{call, operator_refusal};
use crate::helpers::*;

#[tokio::test]
async fn a_read_of_a_clients_points_is_recorded_and_only_a_super_admin_reads_who_looked() {
    let app = spawn_app().await;
    let reads = || call(reqwest::Method::GET, "/client-reads").by_role("super_admin");
    let (status, none) = reads().send(&app).await;
    assert_eq!((status, &none["data"]), (200, &json!([])), "{none}");

    // Two reads by two operators; a read of a client the auth service does not know is
    // refused before anything is recorded.
    let sara = format!("/clients/{SARA}/points");
    assert_eq!(call(reqwest::Method::GET, &sara).send(&app).await.0, 200);
    let omar = format!("/clients/{OMAR}/points?page=2&limit=1");
    let mut by_another = call(reqwest::Method::GET, &omar).by_role("super_admin");
    by_another.operator = Some(("op-9", "super_admin"));
    assert_eq!(by_another.send(&app).await.0, 200);
    let ghost = format!("/clients/{GHOST}/points");
    assert_eq!(call(reqwest::Method::GET, &ghost).send(&app).await.0, 404);

    let (status, trail) = reads().send(&app).await;
    assert_eq!(status, 200, "{trail}");
    let entries: Vec<(String, String, i64)> = trail["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|read| {
            let keys: Vec<&str> = read
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .collect();
            assert_eq!(
                keys,
                ["id", "operatorId", "role", "clientId", "readAt"],
                "{read}"
            );
            (
                read["operatorId"].as_str().unwrap().to_owned(),
                read["role"].as_str().unwrap().to_owned(),
                read["clientId"].as_i64().unwrap(),
            )
        })
        .collect();
    // Newest first.
    assert_eq!(
        entries,
        [
            ("op-9".to_owned(), "super_admin".to_owned(), OMAR),
            ("op-7".to_owned(), "admin".to_owned(), SARA),
        ]
    );
    assert_eq!(trail["meta"]["totalItems"], 2, "{trail}");

    // Who looked is not an admin's to read, nor anyone's to rewrite.
    for role in ["admin", "data_entry"] {
        assert_eq!(
            call(reqwest::Method::GET, "/client-reads")
                .by_role(role)
                .send(&app)
                .await,
            (
                403,
                operator_refusal(
                    403,
                    "ROLE_REFUSED",
                    &format!("role {role} may not do this in the back office")
                )
            )
        );
    }
    let reads_count = "SELECT count(*) AS n FROM back_office_reads";
    assert_eq!(app.database.count(reads_count).await, 2);
    let mut conn = app.database.connect().await;
    let deleted = diesel_async::RunQueryDsl::execute(
        diesel::sql_query("DELETE FROM back_office_reads"),
        &mut conn,
    )
    .await;
    assert!(deleted.is_err(), "the reads trail is append-only");
    assert_eq!(app.database.count(reads_count).await, 2);
}
