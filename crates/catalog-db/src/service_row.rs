//! A row of `services` as both services read it: the operator service shows all of it, the
//! order service the app's part (`system_categories`).

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde_json::Value;

use crate::schema::services;

#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = services)]
pub struct ServiceRow {
    pub id: i64,
    pub title: String,
    pub title_translated: String,
    pub status: String,
    pub logo: String,
    pub logo_variants: Option<Value>,
    pub ordering: i32,
    pub hierarchy_role: String,
    pub parent_id: Option<i64>,
    pub image: Option<String>,
    pub image_en: Option<String>,
    pub thumbnail: Option<String>,
    pub thumbnail_en: Option<String>,
    pub url: Option<String>,
    pub background_image_url: Option<String>,
    pub service_type: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl ServiceRow {
    /// The service `id`, if there is one.
    pub async fn find(conn: &mut AsyncPgConnection, id: i64) -> QueryResult<Option<Self>> {
        services::table
            .find(id)
            .select(Self::as_select())
            .first(conn)
            .await
            .optional()
    }
}
