//! Services for the app: the home list, a service's detail, a parent's children.

use serde_json::json;

use crate::helpers::*;

async fn services(app: &TestApp) {
    app.sql(
        "INSERT INTO services (id, title, title_translated, status, ordering, hierarchy_role, \
         image, image_en, thumbnail, thumbnail_en, url, background_image_url, logo) VALUES \
         (1, 'مطاعم', 'Restaurants', 'active', 2, 'parent', 'i1', 'i1en', 't1', NULL, 'u1', 'b1', 'l1'), \
         (2, 'صيدلية', 'Pharmacy', 'active', 1, 'standalone', 'i2', NULL, 't2', NULL, 'u2', 'b2', 'l2'), \
         (3, 'مخفي', 'Hidden', 'hidden', 0, 'parent', 'i3', NULL, 't3', NULL, 'u3', 'b3', 'l3'), \
         (4, 'برجر', 'Burgers', 'active', 2, 'child', 'i4', 'i4en', 't4', 't4en', 'u4', 'b4', 'l4'), \
         (5, 'قهوة', 'Coffee', 'active', 1, 'child', 'i5', NULL, 't5', NULL, 'u5', 'b5', 'l5'), \
         (6, 'مغلق', 'Closed child', 'hidden', 0, 'child', 'i6', NULL, 't6', NULL, 'u6', 'b6', 'l6'), \
         (7, 'يتيم', 'Unassigned child', 'active', 0, 'child', 'i7', NULL, 't7', NULL, 'u7', 'b7', 'l7'); \
         UPDATE services SET parent_id = 1 WHERE id IN (4, 5, 6);",
    )
    .await;
}

#[tokio::test]
async fn the_home_list_is_active_services_never_children() {
    let app = spawn_app().await;
    services(&app).await;
    let (status, body) = app.system_categories().await;
    assert_eq!(status, 200);
    let ids: Vec<i64> = body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, [2, 1]);
}

#[tokio::test]
async fn children_have_exactly_the_ten_fields_in_display_order() {
    let app = spawn_app().await;
    services(&app).await;
    let (status, body) = app.children(1, "").await;
    assert_eq!(status, 200);
    assert_eq!(
        body.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["data"]
    );
    assert_eq!(
        body["data"],
        json!([
            {"id": 5, "title": "قهوة", "titleTranslated": "Coffee", "image": "i5", "thumbnail": "t5", "url": "u5",
             "background_image_url": "b5", "serviceType": "default", "status": "active", "ordering": 1},
            {"id": 4, "title": "برجر", "titleTranslated": "Burgers", "image": "i4", "thumbnail": "t4", "url": "u4",
             "background_image_url": "b4", "serviceType": "default", "status": "active", "ordering": 2}
        ])
    );
    let (_, english) = app.children(1, "language=en-GB").await;
    assert_eq!(
        (
            english["data"][1]["image"].clone(),
            english["data"][1]["thumbnail"].clone()
        ),
        (json!("i4en"), json!("t4en"))
    );
    assert_eq!(
        english["data"][0]["image"], "i5",
        "Arabic artwork when there is no English one"
    );
}

#[tokio::test]
async fn no_children_is_an_empty_list_and_an_unknown_service_404() {
    let app = spawn_app().await;
    services(&app).await;
    assert_eq!(app.children(2, "").await, (200, json!({"data": []})));
    assert_eq!(
        app.children(999, "").await,
        error_c(404, "Service is not found")
    );
    assert_eq!(
        app.get("/api/v2/client/system-categories/abc/children")
            .await,
        error_c(404, "Service is not found")
    );
}

/// What a test can see of the 30 seconds without waiting them on the real clock (moka's,
/// which it cannot set): the cache the service builds keeps an entry 30 seconds, and an
/// answer comes from it, by service id and language choice. That an entry then expires is
/// moka's own rule.
#[tokio::test]
async fn children_come_from_a_cache_by_service_and_language_that_keeps_an_answer_thirty_seconds() {
    assert_eq!(
        order_service::system_categories::children_cache()
            .policy()
            .time_to_live(),
        Some(std::time::Duration::from_secs(30))
    );
    let app = spawn_app().await;
    services(&app).await;
    let (_, before) = app.children(1, "").await;
    app.sql("UPDATE services SET parent_id = NULL WHERE id = 4")
        .await;
    let (_, after) = app.children(1, "").await;
    assert_eq!(before, after, "served from the cache");
    let (_, english) = app.children(1, "language=en-GB").await;
    assert_eq!(
        english["data"].as_array().unwrap().len(),
        1,
        "another cache key reads the database"
    );
}

#[tokio::test]
async fn the_detail_has_image_and_thumbnail() {
    let app = spawn_app().await;
    services(&app).await;
    let (status, body) = app.system_category(1).await;
    assert_eq!(status, 200);
    assert_eq!(
        (
            body["image"].clone(),
            body["thumbnail"].clone(),
            body["logo"].clone()
        ),
        (json!("i1"), json!("t1"), json!("l1"))
    );
    assert_eq!(
        app.system_category(999).await,
        error_c(404, "Service is not found")
    );
}
