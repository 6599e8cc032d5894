//! Children candidates and the assign/detach route: the six checks and the concurrency case.

use futures_util::future::join;
use operator_service::auth::Role;
use serde_json::{Value, json};

use crate::helpers::*;

#[tokio::test]
async fn candidates_are_unassigned_children_or_this_parents_with_is_selected() {
    let app = spawn_app().await;
    let (status, body) = app.admin("GET", "/services/1/children", None).await;
    assert_eq!(status, 200);
    assert_eq!(
        body.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["data", "meta"]
    );
    assert_eq!(
        ids(&body["data"]),
        [5, 4, 6],
        "by ordering; 7 belongs to another parent"
    );
    let selected: Vec<Value> = body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["isSelected"].clone())
        .collect();
    assert_eq!(selected, [json!(true), json!(true), json!(false)]);
    assert!(
        body["data"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["hierarchyRole"] == "child")
    );
    assert_eq!(
        body["meta"],
        json!({"totalItems": 3, "page": 1, "itemsPerPage": 10, "totalPages": 1})
    );
    let (_, filtered) = app
        .admin("GET", "/services/1/children?name=SWEE&status=active", None)
        .await;
    assert_eq!(ids(&filtered["data"]), [6]);
    let (_, by_search) = app
        .admin("GET", "/services/1/children?search=coffee", None)
        .await;
    assert_eq!(ids(&by_search["data"]), [5]);
}

#[tokio::test]
async fn malformed_page_and_limit_coerce_never_400() {
    let app = spawn_app().await;
    for query in [
        "?page=abc&limit=xyz",
        "?page=-3&limit=-1",
        "?page=0&limit=0",
        "?page=99999999999999999999&limit=1e12",
    ] {
        let (status, body) = app
            .admin("GET", &format!("/services/1/children{query}"), None)
            .await;
        assert_eq!(status, 200, "{query}: {body}");
    }
}

#[tokio::test]
async fn a_non_parent_is_400_before_anything_else_and_an_unknown_one_404() {
    let app = spawn_app().await;
    let not_parent =
        bad_request("Only a service with hierarchy_role = parent can have child services");
    assert_eq!(
        app.admin("GET", "/services/3/children?page=abc", None)
            .await,
        not_parent
    );
    assert_eq!(
        app.admin("GET", "/services/4/children", None).await,
        not_parent
    );
    assert_eq!(
        app.admin("GET", "/services/999/children", None).await.0,
        404
    );
}

async fn children_of(app: &TestApp, parent: i64) -> Vec<i64> {
    let (_, body) = app
        .admin(
            "GET",
            &format!("/services/{parent}/children?limit=100"),
            None,
        )
        .await;
    body["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["isSelected"] == true)
        .map(|r| r["id"].as_i64().unwrap())
        .collect()
}

#[tokio::test]
async fn the_six_checks_in_order_first_failure_wins_nothing_written() {
    let app = spawn_app().await;
    let patch = |parent: i64, body: Value| {
        let app = &app;
        async move {
            app.admin(
                "PATCH",
                &format!("/services/{parent}/children"),
                Some(&body),
            )
            .await
        }
    };
    // Each body breaks its check and every later one.
    assert_eq!(
        patch(999, json!({})).await,
        bad_request("At least one of assignServiceIds or unassignServiceIds must be provided")
    );
    assert_eq!(
        patch(
            999,
            json!({"assignServiceIds": [999, 7], "unassignServiceIds": [7]})
        )
        .await,
        bad_request("assignServiceIds and unassignServiceIds must not contain the same service id")
    );
    assert_eq!(
        patch(999, json!({"assignServiceIds": [999, 3]})).await,
        bad_request("A service cannot be assigned as a child of itself")
    );
    assert_eq!(
        patch(999, json!({"assignServiceIds": [3]})).await,
        (
            404,
            json!({"statusCode": 404, "message": "Service is not found", "error": "Not Found"})
        )
    );
    assert_eq!(
        patch(3, json!({"assignServiceIds": [8, 7, 404]})).await,
        bad_request("Only a service with hierarchy_role = parent can have child services")
    );
    assert_eq!(
        patch(
            1,
            json!({"assignServiceIds": [6, 8, 7, 404], "unassignServiceIds": [4]})
        )
        .await,
        bad_request(
            "Some services cannot be assigned: they do not exist, are not child services, \
             or already belong to another parent: 8,7,404"
        )
    );
    assert_eq!(
        children_of(&app, 1).await,
        [5, 4],
        "a refused call writes nothing, not even its unassign"
    );
}

#[tokio::test]
async fn assign_is_idempotent_and_unassign_ignores_other_parents_children() {
    let app = spawn_app().await;
    let ok = (
        200,
        json!({"message": "Child services updated successfully", "statusCode": 200}),
    );
    let body = json!({"assignServiceIds": [6, 4], "unassignServiceIds": [7, 5, 12345], "colour": "dropped"});
    assert_eq!(
        app.admin("PATCH", "/services/1/children", Some(&body))
            .await,
        ok
    );
    assert_eq!(children_of(&app, 1).await, [4, 6]);
    assert_eq!(
        app.place(7).await,
        ("child".to_owned(), json!("2")),
        "not this parent's: ignored"
    );
    assert_eq!(app.place(5).await, ("child".to_owned(), json!(null)));
    assert_eq!(
        app.admin(
            "PATCH",
            "/services/1/children",
            Some(&json!({"assignServiceIds": [6]}))
        )
        .await,
        ok
    );
    assert_eq!(children_of(&app, 1).await, [4, 6]);
}

#[tokio::test]
async fn bad_id_lists_are_400() {
    let app = spawn_app().await;
    assert_eq!(
        app.admin(
            "PATCH",
            "/services/1/children",
            Some(&json!({"assignServiceIds": [6, 6]}))
        )
        .await
        .0,
        400
    );
    assert_eq!(
        app.admin(
            "PATCH",
            "/services/1/children",
            Some(&json!({"assignServiceIds": "6"}))
        )
        .await
        .0,
        400
    );
    assert_eq!(
        app.admin(
            "PATCH",
            "/services/1/children",
            Some(&json!({"assignServiceIds": [1.5]}))
        )
        .await
        .0,
        400
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_operators_assigning_one_child_to_two_parents_at_once_one_wins() {
    for _ in 0..5 {
        let app = spawn_app().await;
        let body = json!({"assignServiceIds": [6]});
        let first = app.call(
            "PATCH",
            "/services/1/children",
            Some(Role::Admin),
            Some(&body),
        );
        let second = app.call(
            "PATCH",
            "/services/2/children",
            Some(Role::SuperAdmin),
            Some(&body),
        );
        let (a, b) = join(first, second).await;
        let mut statuses = [a.0, b.0];
        statuses.sort_unstable();
        assert_eq!(statuses, [200, 400], "{a:?} {b:?}");
        let loser = if a.0 == 400 { a.1 } else { b.1 };
        assert!(
            loser["message"]
                .as_str()
                .unwrap()
                .ends_with("already belong to another parent: 6"),
            "{loser}"
        );
        let (_, place) = app.place(6).await;
        assert!(place == json!("1") || place == json!("2"));
        let parents = [
            children_of(&app, 1).await.contains(&6),
            children_of(&app, 2).await.contains(&6),
        ];
        assert_eq!(
            parents.iter().filter(|p| **p).count(),
            1,
            "never a child with two parents"
        );
    }
}
