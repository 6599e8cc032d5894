//! `seed` loads the fixture's services, parents after the rows they point at.

use diesel::sql_types::{BigInt, Nullable, Text};
use diesel::{QueryableByName, sql_query};
use diesel_async::RunQueryDsl;
use operator_service::seed;
use serde_json::json;

#[derive(QueryableByName, Debug, PartialEq)]
struct Row {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = Text)]
    hierarchy_role: String,
    #[diesel(sql_type = Nullable<BigInt>)]
    parent_id: Option<i64>,
}

/// This service's loader, as `seed` runs it.
const SEED: testkit::seed::Seeder = testkit::seed::Seeder(seed::load);

fn service(id: i64, role: &str, parent: Option<i64>) -> serde_json::Value {
    json!({"id": id, "title": "مطاعم", "titleTranslated": "Restaurants", "status": "active",
           "logo": "https://example.com/l.png", "ordering": id, "hierarchyRole": role, "parentId": parent,
           "image": null, "image_en": null, "thumbnail": null, "thumbnail_en": null, "url": null,
           "background_image_url": null, "serviceType": "default"})
}

#[tokio::test]
async fn a_child_may_precede_its_parent_and_new_ids_continue_after_the_fixture() {
    let database = ::db::testing::TestDatabase::new(catalog_db::MIGRATIONS).await;
    let mut conn = database.connect().await;
    let fixture = json!({"services": [
        service(2, "child", Some(1)),
        service(1, "parent", None),
        service(3, "standalone", None),
    ]});
    SEED.all(&mut conn, &fixture).await.unwrap();
    SEED.all(&mut conn, &fixture).await.unwrap();
    let rows: Vec<Row> =
        sql_query("SELECT id, hierarchy_role, parent_id FROM services ORDER BY id")
            .load(&mut conn)
            .await
            .unwrap();
    assert_eq!(
        rows,
        [
            Row {
                id: 1,
                hierarchy_role: "parent".into(),
                parent_id: None
            },
            Row {
                id: 2,
                hierarchy_role: "child".into(),
                parent_id: Some(1)
            },
            Row {
                id: 3,
                hierarchy_role: "standalone".into(),
                parent_id: None
            },
        ]
    );
    let next: Row = sql_query(
        "INSERT INTO services (title, title_translated) VALUES ('x', 'x') RETURNING id, hierarchy_role, parent_id",
    )
    .get_result(&mut conn)
    .await
    .unwrap();
    assert_eq!(
        next,
        Row {
            id: 4,
            hierarchy_role: "parent".into(),
            parent_id: None
        },
        "the column default is parent"
    );
}

#[tokio::test]
async fn a_parent_the_database_refuses_is_reported_and_the_rows_still_load() {
    let database = ::db::testing::TestDatabase::new(catalog_db::MIGRATIONS).await;
    let mut conn = database.connect().await;
    let report = SEED
        .report(
            &mut conn,
            &json!({"services": [service(1, "parent", None), service(2, "standalone", Some(1))]}),
        )
        .await
        .unwrap();
    let rejected: Vec<String> = report.rejected.iter().map(ToString::to_string).collect();
    assert_eq!(rejected.len(), 1, "{rejected:?}");
    assert!(
        rejected[0].starts_with("services[1] (id 2): ")
            && rejected[0].contains("services_only_children_have_parents"),
        "{rejected:?}"
    );
    let count: i64 = diesel::select(diesel::dsl::sql::<BigInt>(
        "(SELECT count(*) FROM services WHERE parent_id IS NULL)",
    ))
    .get_result(&mut conn)
    .await
    .unwrap();
    assert_eq!(count, 2, "both services load, without the refused parent");
}
