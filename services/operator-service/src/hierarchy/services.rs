//! Services as operators see and change them (no HTTP in here).

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde::Serialize;
use serde_json::{Value, json};

use catalog_db::ServiceRow;
use catalog_db::schema::services;

use crate::auth::Operator;
use crate::error::OpError;
use crate::hierarchy::audit::{self, Change};
use crate::hierarchy::body::ServiceFields;
use crate::hierarchy::lookup;
use crate::hierarchy::service_schemas::{HierarchyRole, ServiceStatus};
use crate::query::{ListQuery, PageMeta};

/// A service in the operator API, in this key order. `hierarchyRole` and `parentId` are
/// left out on the variant list only; `isSelected` is there on children candidates only.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = Service)]
pub struct ServiceView {
    pub id: i64,
    /// Arabic name.
    pub title: String,
    /// English name.
    #[serde(rename = "titleTranslated")]
    pub title_translated: String,
    #[schema(value_type = ServiceStatus)]
    pub status: String,
    /// URL; `""` when none.
    pub logo: String,
    /// Any JSON, or null.
    #[schema(required)]
    pub logo_variants: Option<Value>,
    pub ordering: i32,
    /// Always `child` on a candidate. Not on the variant list (`None` there).
    #[serde(rename = "hierarchyRole", skip_serializing_if = "Option::is_none")]
    #[schema(required, value_type = HierarchyRole)]
    pub hierarchy_role: Option<String>,
    /// The parent's id as text (a stringified bigint), or null; not on the variant list
    /// (`None` there). Incidental: never valid to send, do not build logic on it.
    #[serde(rename = "parentId", skip_serializing_if = "Option::is_none")]
    #[schema(required, value_type = Option<String>)]
    pub parent_id: Option<Option<String>>,
    /// Candidates only (`None` elsewhere): see `service_schemas::Candidate`.
    #[serde(rename = "isSelected", skip_serializing_if = "Option::is_none")]
    #[schema(ignore)]
    pub is_selected: Option<bool>,
    #[schema(required)]
    pub image: Option<String>,
    #[schema(required)]
    pub image_en: Option<String>,
    #[schema(required)]
    pub thumbnail: Option<String>,
    #[schema(required)]
    pub thumbnail_en: Option<String>,
    #[schema(required)]
    pub url: Option<String>,
    #[schema(required)]
    pub background_image_url: Option<String>,
    /// `default` seen.
    #[serde(rename = "serviceType")]
    pub service_type: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl From<&ServiceRow> for ServiceView {
    fn from(row: &ServiceRow) -> Self {
        ServiceView {
            id: row.id,
            title: row.title.clone(),
            title_translated: row.title_translated.clone(),
            status: row.status.clone(),
            logo: row.logo.clone(),
            logo_variants: row.logo_variants.clone(),
            ordering: row.ordering,
            hierarchy_role: Some(row.hierarchy_role.clone()),
            parent_id: Some(row.parent_id.map(|p| p.to_string())),
            is_selected: None,
            image: row.image.clone(),
            image_en: row.image_en.clone(),
            thumbnail: row.thumbnail.clone(),
            thumbnail_en: row.thumbnail_en.clone(),
            url: row.url.clone(),
            background_image_url: row.background_image_url.clone(),
            service_type: row.service_type.clone(),
            created_at: row.created_at,
            updated_at: row.updated_at,
        }
    }
}

impl ServiceView {
    /// The variant list's rows: no `hierarchyRole`, no `parentId`.
    pub fn without_hierarchy(row: &ServiceRow) -> Self {
        ServiceView {
            hierarchy_role: None,
            parent_id: None,
            ..ServiceView::from(row)
        }
    }
}

/// What the audit trail keeps of a service's place in the hierarchy.
pub fn hierarchy(row: &ServiceRow) -> Value {
    json!({"id": row.id, "hierarchyRole": row.hierarchy_role, "parentId": row.parent_id})
}

/// `%`, `_` and `\` match themselves in a search.
pub fn like_pattern(search: &str) -> String {
    let escaped: String = search
        .chars()
        .flat_map(|c| {
            if matches!(c, '%' | '_' | '\\') {
                vec!['\\', c]
            } else {
                vec![c]
            }
        })
        .collect();
    format!("%{escaped}%")
}

/// The filtered rows of the list routes (`page` none: all of them).
pub async fn list(
    conn: &mut AsyncPgConnection,
    query: &ListQuery,
    paged: bool,
) -> QueryResult<(Vec<ServiceRow>, PageMeta)> {
    let filtered = || {
        let mut q = services::table.into_boxed();
        if let Some(roles) = &query.roles {
            q = q.filter(services::hierarchy_role.eq_any(roles.clone()));
        }
        if let Some(status) = &query.status {
            q = q.filter(services::status.eq(status.clone()));
        }
        if let Some(search) = &query.search {
            let pattern = like_pattern(search);
            q = q.filter(
                services::title
                    .ilike(pattern.clone())
                    .or(services::title_translated.ilike(pattern)),
            );
        }
        q
    };
    let total: i64 = filtered().count().get_result(conn).await?;
    let mut rows = filtered()
        .order((services::ordering, services::id))
        .select(ServiceRow::as_select());
    if paged {
        rows = rows.limit(query.page.limit).offset(query.page.offset());
    }
    let rows = rows.load(conn).await?;
    Ok((rows, query.page.meta(total)))
}

pub async fn create(
    conn: &mut AsyncPgConnection,
    operator: &Operator,
    fields: ServiceFields,
) -> Result<ServiceRow, OpError> {
    conn.transaction(async |conn| {
        let id: i64 = diesel::insert_into(services::table)
            .values((
                services::title.eq(fields.title.clone().unwrap_or_default()),
                services::title_translated.eq(fields.title_translated.clone().unwrap_or_default()),
            ))
            .returning(services::id)
            .get_result(conn)
            .await?;
        diesel::update(services::table.find(id))
            .set(&fields)
            .execute(conn)
            .await?;
        let created = lookup::lock(conn, id).await?;
        audit::record(
            conn,
            operator,
            "service.create",
            &[id],
            Change {
                before: Value::Null,
                after: hierarchy(&created),
            },
        )
        .await?;
        Ok(created)
    })
    .await
}

/// PATCH: the fields sent, and the role's side effects in the same transaction — a parent
/// leaving the role releases all its children; a child leaving the role is detached.
pub async fn update(
    conn: &mut AsyncPgConnection,
    operator: &Operator,
    id: i64,
    fields: ServiceFields,
) -> Result<ServiceRow, OpError> {
    conn.transaction(async |conn| {
        let before = lookup::lock(conn, id).await?;
        let mut released: Vec<ServiceRow> = Vec::new();
        let new_role = fields
            .hierarchy_role
            .as_deref()
            .filter(|r| *r != before.hierarchy_role);
        if let Some(role) = new_role {
            if before.hierarchy_role == "parent" {
                released = diesel::update(services::table.filter(services::parent_id.eq(id)))
                    .set((
                        services::parent_id.eq(None::<i64>),
                        services::updated_at.eq(diesel::dsl::now),
                    ))
                    .returning(ServiceRow::as_returning())
                    .get_results(conn)
                    .await?;
            }
            if before.hierarchy_role == "child" || role != "child" {
                diesel::update(services::table.find(id))
                    .set(services::parent_id.eq(None::<i64>))
                    .execute(conn)
                    .await?;
            }
        }
        diesel::update(services::table.find(id))
            .set((&fields, services::updated_at.eq(diesel::dsl::now)))
            .execute(conn)
            .await?;
        let after = lookup::lock(conn, id).await?;
        released.sort_by_key(|r| r.id);
        let released: Vec<i64> = released.iter().map(|r| r.id).collect();
        let mut ids = vec![id];
        ids.extend(&released);
        let change = Change {
            before: json!({"service": hierarchy(&before), "releasedChildren": released}),
            after: hierarchy(&after),
        };
        audit::record(conn, operator, "service.update", &ids, change).await?;
        Ok(after)
    })
    .await
}

#[cfg(test)]
mod tests {
    #[test]
    fn search_metacharacters_match_themselves() {
        assert_eq!(super::like_pattern("50%_off\\"), "%50\\%\\_off\\\\%");
    }
}
