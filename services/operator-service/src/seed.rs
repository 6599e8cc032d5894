//! `operator-service seed FILE`: the fixture's `services` section of the `catalog`
//! database, upserted by id (the order service loads the other catalog sections).

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde::Deserialize;
use serde_json::Value;
use server::SeedReport;
use server::seed::{SeedFuture, read, rows, write};

use catalog_db::schema::services;

#[derive(Deserialize, Insertable, AsChangeset)]
#[diesel(table_name = services, treat_none_as_null = true)]
struct Service {
    id: i64,
    title: String,
    #[serde(rename = "titleTranslated")]
    title_translated: String,
    status: String,
    #[serde(default)]
    logo: String,
    logo_variants: Option<serde_json::Value>,
    #[serde(default)]
    ordering: i32,
    #[serde(rename = "hierarchyRole", default = "parent")]
    hierarchy_role: String,
    image: Option<String>,
    image_en: Option<String>,
    thumbnail: Option<String>,
    thumbnail_en: Option<String>,
    url: Option<String>,
    background_image_url: Option<String>,
    #[serde(rename = "serviceType", default = "default_type")]
    service_type: String,
}

#[derive(Deserialize)]
struct Parent {
    id: i64,
    #[serde(rename = "parentId")]
    parent_id: Option<i64>,
}

fn parent() -> String {
    "parent".to_owned()
}

fn default_type() -> String {
    "default".to_owned()
}

/// Loads the section inside the caller's transaction. Rows go in first without parents and
/// the parents are set in a second pass, so a child may come before its parent in the file.
/// A bad row (or a parent the database refuses) is reported and skipped (`server::seed`).
pub fn load<'c>(conn: &'c mut AsyncPgConnection, fixture: &'c Value) -> SeedFuture<'c> {
    Box::pin(async move {
        let mut report = SeedReport::default();
        let rows = rows::<Service>(fixture, "services", "id", &mut report);
        // Children of the fixture's services are released first, so that a parent that the
        // fixture makes a standalone can leave its role (the database refuses it otherwise).
        let ids: Vec<i64> = rows.iter().map(|(_, s)| s.id).collect();
        diesel::update(
            services::table.filter(
                services::parent_id
                    .eq_any(&ids)
                    .or(services::id.eq_any(&ids)),
            ),
        )
        .set(services::parent_id.eq(None::<i64>))
        .execute(conn)
        .await?;
        let mut loaded = Vec::new();
        for (at, service) in &rows {
            let values = (service, services::parent_id.eq(None::<i64>));
            let changes = (values, services::updated_at.eq(diesel::dsl::now));
            let written = write(conn, &mut report, at, |conn| {
                server::upsert!(conn, services::table, values, services::id, changes)
            });
            if written.await?.is_some() {
                loaded.push(at.clone());
            }
        }
        for at in &loaded {
            let item = &fixture["services"][at.index.unwrap_or_default()];
            let row = match read::<Parent>(item) {
                Ok(row) => row,
                Err((field, why)) => {
                    report.reject(at, field.as_deref(), why);
                    continue;
                }
            };
            if let Some(parent_id) = row.parent_id {
                write(conn, &mut report, at, |conn| {
                    diesel::update(services::table.find(row.id))
                        .set(services::parent_id.eq(parent_id))
                        .execute(conn)
                })
                .await?;
            }
        }
        // Explicit ids do not move the identity sequence; move it past them so that the
        // next service created through the API gets a free id.
        diesel::sql_query(
            "SELECT setval(pg_get_serial_sequence('services', 'id'), \
             GREATEST((SELECT max(id) FROM services), 1))",
        )
        .execute(conn)
        .await?;
        report.line(format!("services: {} upserted", loaded.len()));
        Ok(report)
    })
}
