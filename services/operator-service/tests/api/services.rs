//! The services list, detail, create and PATCH, with the role transitions.

use serde_json::json;

use crate::helpers::*;

#[tokio::test]
async fn the_list_is_paged_and_filtered_by_roles_repeated_or_comma_separated() {
    let app = spawn_app().await;
    let (status, body) = app.admin("GET", "/services?page=2&limit=3", None).await;
    assert_eq!(status, 200);
    assert_eq!(
        body["meta"],
        json!({"totalItems": 8, "page": 2, "itemsPerPage": 3, "totalPages": 3})
    );
    let (_, parents) = app
        .admin("GET", "/services?hierarchy_role=parent", None)
        .await;
    assert_eq!(ids(&parents["data"]), [1, 2]);
    let (_, mixed) = app
        .admin(
            "GET",
            "/services?hierarchy_role=parent&hierarchy_role=standalone",
            None,
        )
        .await;
    let (_, comma) = app
        .admin("GET", "/services?hierarchy_role=parent,standalone", None)
        .await;
    assert_eq!(ids(&mixed["data"]), [1, 2, 3, 8]);
    assert_eq!(mixed, comma);
    let (_, found) = app
        .admin("GET", "/services?search=FRU&status=active", None)
        .await;
    assert_eq!(ids(&found["data"]), [7]);
    let (_, none) = app.admin("GET", "/services?search=%25", None).await;
    assert_eq!(ids(&none["data"]), Vec::<i64>::new(), "% matches itself");
    assert_eq!(
        app.admin("GET", "/services?hierarchy_role=parent,root", None)
            .await,
        bad_request("each value in hierarchy_role must be a valid enum value")
    );
}

#[tokio::test]
async fn without_pagination_rows_have_no_hierarchy_fields() {
    let app = spawn_app().await;
    let (status, body) = app
        .admin(
            "GET",
            "/services/all/without-pagination?hierarchy_role=child",
            None,
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(ids(&body), [5, 7, 4, 6]);
    for row in body.as_array().unwrap() {
        assert!(
            row.get("hierarchyRole").is_none() && row.get("parentId").is_none(),
            "{row}"
        );
        assert!(row.get("title").is_some() && row.get("titleTranslated").is_some());
    }
    assert_eq!(
        app.admin(
            "GET",
            "/services/all/without-pagination?hierarchy_role=x",
            None
        )
        .await
        .0,
        400
    );
}

#[tokio::test]
async fn detail_uses_title_and_title_translated_and_a_string_parent_id() {
    let app = spawn_app().await;
    let (status, body) = app.admin("GET", "/services/4", None).await;
    assert_eq!(status, 200);
    assert_eq!(
        (
            body["title"].clone(),
            body["titleTranslated"].clone(),
            body["hierarchyRole"].clone(),
            body["parentId"].clone()
        ),
        (
            json!("عربي 4"),
            json!("Burgers"),
            json!("child"),
            json!("1")
        )
    );
    assert!(body.get("name_ar").is_none() && body.get("name_en").is_none());
    assert_eq!(
        app.admin("GET", "/services/999", None).await,
        (
            404,
            json!({"statusCode": 404, "message": "Service is not found", "error": "Not Found"})
        )
    );
}

#[tokio::test]
async fn create_defaults_to_parent_and_ignores_parent_id() {
    let app = spawn_app().await;
    let (status, body) = app
        .admin(
            "POST",
            "/services",
            Some(&json!({"title": "قهوة", "titleTranslated": "Cafe", "parentId": 1})),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(
        (
            body["hierarchyRole"].clone(),
            body["parentId"].clone(),
            body["status"].clone()
        ),
        (json!("parent"), json!(null), json!("active"))
    );
    assert_eq!(body["id"], 9, "ids continue after the fixture's");
    assert_eq!(
        app.admin("POST", "/services", Some(&json!({"title": "x"})))
            .await,
        bad_request("titleTranslated should not be empty")
    );
}

#[tokio::test]
async fn patch_refuses_unknown_keys_after_stripping_parent_id() {
    let app = spawn_app().await;
    let (status, body) = app
        .admin(
            "PATCH",
            "/services/6",
            Some(&json!({"parentId": 2, "ordering": 7})),
        )
        .await;
    assert_eq!(
        (status, body["parentId"].clone(), body["ordering"].clone()),
        (200, json!(null), json!(7))
    );
    assert_eq!(
        app.admin(
            "PATCH",
            "/services/6",
            Some(&json!({"parentId": 2, "color": "red"}))
        )
        .await,
        bad_request("property color should not exist")
    );
    assert_eq!(
        app.admin("PATCH", "/services/999", Some(&json!({"ordering": 1})))
            .await
            .0,
        404
    );
}

#[tokio::test]
async fn a_parent_leaving_the_role_releases_all_its_children_who_stay_children() {
    for new_role in ["standalone", "child"] {
        let app = spawn_app().await;
        let (status, body) = app
            .admin(
                "PATCH",
                "/services/1",
                Some(&json!({"hierarchyRole": new_role})),
            )
            .await;
        assert_eq!(
            (
                status,
                body["hierarchyRole"].clone(),
                body["parentId"].clone()
            ),
            (200, json!(new_role), json!(null))
        );
        assert_eq!(app.place(4).await, ("child".to_owned(), json!(null)));
        assert_eq!(app.place(5).await, ("child".to_owned(), json!(null)));
        assert_eq!(
            app.place(7).await,
            ("child".to_owned(), json!("2")),
            "another parent's child is untouched"
        );
    }
}

#[tokio::test]
async fn a_child_leaving_the_role_is_detached() {
    for new_role in ["parent", "standalone"] {
        let app = spawn_app().await;
        app.admin(
            "PATCH",
            "/services/4",
            Some(&json!({"hierarchyRole": new_role})),
        )
        .await;
        assert_eq!(app.place(4).await, (new_role.to_owned(), json!(null)));
    }
}

#[tokio::test]
async fn any_service_may_become_a_child_which_waits_unassigned() {
    let app = spawn_app().await;
    app.admin(
        "PATCH",
        "/services/3",
        Some(&json!({"hierarchyRole": "child"})),
    )
    .await;
    assert_eq!(app.place(3).await, ("child".to_owned(), json!(null)));
    // Keeping the role changes nothing about the parent.
    app.admin(
        "PATCH",
        "/services/4",
        Some(&json!({"hierarchyRole": "child", "ordering": 9})),
    )
    .await;
    assert_eq!(app.place(4).await, ("child".to_owned(), json!("1")));
}

#[tokio::test]
async fn the_database_holds_the_hierarchy_rules_too() {
    let app = spawn_app().await;
    let refused = app
        .sql("UPDATE services SET parent_id = 3 WHERE id = 6")
        .await
        .unwrap_err();
    assert!(refused.contains("not a parent"), "{refused}");
    let refused = app
        .sql("UPDATE services SET hierarchy_role = 'standalone' WHERE id = 1")
        .await
        .unwrap_err();
    assert!(refused.contains("still has children"), "{refused}");
    assert!(
        app.sql("UPDATE services SET parent_id = 1 WHERE id = 3")
            .await
            .is_err(),
        "only a child holds a parent"
    );
}

#[tokio::test]
async fn writes_leave_an_audit_trail() {
    let app = spawn_app().await;
    app.admin(
        "PATCH",
        "/services/1",
        Some(&json!({"hierarchyRole": "standalone"})),
    )
    .await;
    app.admin(
        "PATCH",
        "/services/2/children",
        Some(&json!({"assignServiceIds": [6]})),
    )
    .await;
    let (status, body) = app.admin("GET", "/audit", None).await;
    assert_eq!(status, 200);
    let entries = body["data"].as_array().unwrap();
    assert_eq!(entries.len(), 2);
    assert_eq!(
        (
            entries[0]["action"].clone(),
            entries[0]["operatorId"].clone(),
            entries[0]["role"].clone()
        ),
        (json!("service.children"), json!("op-1"), json!("admin"))
    );
    assert_eq!(entries[0]["after"]["children"], json!([6, 7]));
    assert_eq!(entries[1]["serviceIds"], json!([1, 4, 5]));
    assert_eq!(entries[1]["before"]["service"]["hierarchyRole"], "parent");
}
