//! Services (system categories) as the app sees them: the home list (active, never a
//! child), one service's detail, and a parent's children with a 30-second cache per
//! replica (the spec's; the answer may lag an operator's change by that much).

use std::sync::Arc;
use std::time::Duration;

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde::Serialize;

use catalog_db::ServiceRow;
use catalog_db::schema::services;

envelope::refusals! {
    /// Why a service's detail or children are refused (the operator service sends the same
    /// message in its own envelope).
    pub enum ServiceRefusal in C {
        /// No such service, or an id that is not a positive integer.
        UnknownService => 404, [catalog_db::SERVICE_NOT_FOUND];
    }
}

/// A service id from the path: a positive integer, else no service has it.
pub fn service_id(raw: &str) -> Result<i64, ServiceRefusal> {
    raw.parse::<i64>()
        .ok()
        .filter(|id| *id > 0)
        .ok_or(ServiceRefusal::UnknownService)
}

/// How long a children list is served from memory.
pub const CHILDREN_TTL: Duration = Duration::from_secs(30);

/// The ten fields of a client service item, in order. No hierarchy field goes to clients.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct ServiceItem {
    pub id: i64,
    /// Arabic name.
    pub title: String,
    /// English name.
    #[serde(rename = "titleTranslated")]
    pub title_translated: String,
    /// URL; `image_en` instead with `language=en-GB` when set; `""` when none.
    pub image: String,
    /// URL; `thumbnail_en` instead with `language=en-GB` when set; `""` when none.
    pub thumbnail: String,
    /// `""` when none.
    pub url: String,
    /// `""` when none.
    pub background_image_url: String,
    /// `default` seen.
    #[serde(rename = "serviceType")]
    pub service_type: String,
    /// `active` or `hidden`.
    pub status: String,
    pub ordering: i32,
}

/// The detail: the item's fields plus the logo.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct ServiceDetail {
    #[serde(flatten)]
    pub item: ServiceItem,
    /// URL.
    pub logo: String,
}

/// `language`: exactly `en-GB` serves the English artwork when there is some.
pub fn wants_english(language: Option<&str>) -> bool {
    language == Some("en-GB")
}

impl ServiceItem {
    /// The item of `row`, with the English artwork when `english` and there is some.
    pub fn of(row: &ServiceRow, english: bool) -> Self {
        let pick = |arabic: &Option<String>, english_art: &Option<String>| {
            let english_art = english_art.as_deref().filter(|s| english && !s.is_empty());
            english_art
                .or(arabic.as_deref())
                .unwrap_or_default()
                .to_owned()
        };
        ServiceItem {
            id: row.id,
            title: row.title.clone(),
            title_translated: row.title_translated.clone(),
            image: pick(&row.image, &row.image_en),
            thumbnail: pick(&row.thumbnail, &row.thumbnail_en),
            url: row.url.clone().unwrap_or_default(),
            background_image_url: row.background_image_url.clone().unwrap_or_default(),
            service_type: row.service_type.clone(),
            status: row.status.clone(),
            ordering: row.ordering,
        }
    }
}

/// The items of `rows`, with the English artwork when `english` and there is some.
fn items(rows: &[ServiceRow], english: bool) -> Vec<ServiceItem> {
    rows.iter()
        .map(|row| ServiceItem::of(row, english))
        .collect()
}

/// The home list: active services that are not children, in display order.
pub async fn home(conn: &mut AsyncPgConnection, english: bool) -> QueryResult<Vec<ServiceItem>> {
    let rows = services::table
        .filter(
            services::status
                .eq("active")
                .and(services::hierarchy_role.ne("child")),
        )
        .order((services::ordering, services::id))
        .select(ServiceRow::as_select())
        .load(conn)
        .await?;
    Ok(items(&rows, english))
}

/// A service's active children in display order, or `None` when the service does not exist.
pub async fn children(
    conn: &mut AsyncPgConnection,
    id: i64,
    english: bool,
) -> QueryResult<Option<Vec<ServiceItem>>> {
    let exists: i64 = services::table
        .filter(services::id.eq(id))
        .count()
        .get_result(conn)
        .await?;
    if exists == 0 {
        return Ok(None);
    }
    let rows = services::table
        .filter(
            services::parent_id
                .eq(id)
                .and(services::hierarchy_role.eq("child"))
                .and(services::status.eq("active")),
        )
        .order((services::ordering, services::id))
        .select(ServiceRow::as_select())
        .load(conn)
        .await?;
    Ok(Some(items(&rows, english)))
}

/// Children lists by (service id, English?), for 30 seconds.
pub type ChildrenCache = moka::future::Cache<(i64, bool), Arc<Option<Vec<ServiceItem>>>>;

pub fn children_cache() -> ChildrenCache {
    moka::future::Cache::builder()
        .max_capacity(10_000)
        .time_to_live(CHILDREN_TTL)
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row() -> ServiceRow {
        ServiceRow {
            id: 1,
            title: "مطاعم".into(),
            title_translated: "Restaurants".into(),
            status: "active".into(),
            logo: "l".into(),
            logo_variants: None,
            ordering: 1,
            hierarchy_role: "parent".into(),
            parent_id: None,
            image: Some("ar.png".into()),
            image_en: Some("en.png".into()),
            thumbnail: Some("t-ar.png".into()),
            thumbnail_en: None,
            url: None,
            background_image_url: Some("bg".into()),
            service_type: "default".into(),
            created_at: chrono::DateTime::UNIX_EPOCH,
            updated_at: chrono::DateTime::UNIX_EPOCH,
        }
    }

    #[test]
    fn en_gb_serves_english_artwork_when_it_exists() {
        let english = ServiceItem::of(&row(), wants_english(Some("en-GB")));
        assert_eq!(
            (english.image.as_str(), english.thumbnail.as_str()),
            ("en.png", "t-ar.png")
        );
        let arabic = ServiceItem::of(&row(), wants_english(Some("en")));
        assert_eq!(arabic.image, "ar.png");
    }
}
