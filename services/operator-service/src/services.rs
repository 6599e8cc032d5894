//! Services as operators see and change them (no HTTP in here).

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Nullable, Text};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde::Serialize;
use serde_json::{Map, Value};

use catalog_db::ServiceRow;
use catalog_db::schema::services;

use crate::audit::{self, Change};
use crate::auth::Operator;
use crate::body::ServiceFields;
use crate::error::OpError;
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
    /// `active` or `hidden`.
    pub status: String,
    /// URL; `""` when none.
    pub logo: String,
    /// Any JSON, or null.
    #[schema(required)]
    pub logo_variants: Option<Value>,
    pub ordering: i32,
    /// `parent`, `standalone` or `child` (always `child` on a candidate); not on the
    /// variant list.
    #[serde(rename = "hierarchyRole", skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub hierarchy_role: Option<String>,
    /// The parent's id as text (a stringified bigint), or null; not on the variant list.
    /// Incidental: never valid to send, do not build logic on it.
    #[serde(rename = "parentId", skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub parent_id: Option<Option<String>>,
    /// Candidates only: true when the row already belongs to the parent in the path.
    #[serde(rename = "isSelected", skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
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
    serde_json::json!({"id": row.id, "hierarchyRole": row.hierarchy_role, "parentId": row.parent_id})
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

async fn lock(conn: &mut AsyncPgConnection, id: i64) -> Result<ServiceRow, OpError> {
    services::table
        .find(id)
        .select(ServiceRow::as_select())
        .for_update()
        .first(conn)
        .await
        .optional()?
        .ok_or(OpError::NotFound)
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
        let created = lock(conn, id).await?;
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
        let before = lock(conn, id).await?;
        let mut released: Vec<ServiceRow> = Vec::new();
        if let Some(role) = fields.hierarchy_role.as_deref().filter(|r| *r != before.hierarchy_role) {
            if before.hierarchy_role == "parent" {
                released = diesel::update(services::table.filter(services::parent_id.eq(id)))
                    .set((services::parent_id.eq(None::<i64>), services::updated_at.eq(diesel::dsl::now)))
                    .returning(ServiceRow::as_returning())
                    .get_results(conn)
                    .await?;
            }
            if before.hierarchy_role == "child" || role != "child" {
                diesel::update(services::table.find(id)).set(services::parent_id.eq(None::<i64>)).execute(conn).await?;
            }
        }
        diesel::update(services::table.find(id)).set((&fields, services::updated_at.eq(diesel::dsl::now))).execute(conn).await?;
        let after = lock(conn, id).await?;
        released.sort_by_key(|r| r.id);
        let mut ids = vec![id];
        ids.extend(released.iter().map(|r| r.id));
        let change = Change {
            before: serde_json::json!({"service": hierarchy(&before), "releasedChildren": released.iter().map(|r| r.id).collect::<Vec<_>>()}),
            after: hierarchy(&after),
        };
        audit::record(conn, operator, "service.update", &ids, change).await?;
        Ok(after)
    })
    .await
}

/// The candidate children of a parent: role child, unassigned or already this parent's.
pub async fn candidates(
    conn: &mut AsyncPgConnection,
    parent: i64,
    search: Option<&str>,
    status: Option<&str>,
    page: &crate::query::Page,
) -> QueryResult<(Vec<ServiceRow>, PageMeta)> {
    let filtered = || {
        let mut q = services::table
            .filter(services::hierarchy_role.eq("child"))
            .filter(
                services::parent_id
                    .is_null()
                    .or(services::parent_id.eq(parent)),
            )
            .into_boxed();
        if let Some(search) = search {
            let pattern = like_pattern(search);
            q = q.filter(
                services::title
                    .ilike(pattern.clone())
                    .or(services::title_translated.ilike(pattern)),
            );
        }
        if let Some(status) = status {
            q = q.filter(services::status.eq(status.to_owned()));
        }
        q
    };
    let total: i64 = filtered().count().get_result(conn).await?;
    let rows = filtered()
        .order((services::ordering, services::id))
        .limit(page.limit)
        .offset(page.offset())
        .select(ServiceRow::as_select())
        .load(conn)
        .await?;
    Ok((rows, page.meta(total)))
}

#[derive(QueryableByName)]
struct Bad {
    #[diesel(sql_type = Nullable<Text>)]
    ids: Option<String>,
}

/// Assign and unassign children, after the spec's six checks (1 to 3 by the caller, before
/// the parent is read). Checks 4 to 6 and the writes run in one transaction that locks the
/// parent and the services to assign (in id order), so two operators assigning one child
/// to two parents at once take turns and the second sees the first one's parent.
pub async fn set_children(
    conn: &mut AsyncPgConnection,
    operator: &Operator,
    parent: i64,
    assign: &[i64],
    unassign: &[i64],
) -> Result<(), OpError> {
    conn.transaction(async |conn| {
        let parent_row = lock(conn, parent).await?;
        if parent_row.hierarchy_role != "parent" {
            return Err(OpError::BadRequest(crate::children::NOT_A_PARENT.into()));
        }
        let mut sorted = assign.to_vec();
        sorted.sort_unstable();
        let locked: Vec<ServiceRow> = services::table
            .filter(services::id.eq_any(&sorted))
            .order(services::id)
            .select(ServiceRow::as_select())
            .for_update()
            .load(conn)
            .await?;
        let bad: Vec<String> = assign
            .iter()
            .filter(|id| {
                !locked.iter().any(|row| {
                    row.id == **id && row.hierarchy_role == "child" && row.parent_id.is_none_or(|p| p == parent)
                })
            })
            .map(ToString::to_string)
            .collect();
        if !bad.is_empty() {
            return Err(OpError::BadRequest(format!(
                "Some services cannot be assigned: they do not exist, are not child services, or already belong to another parent: {}",
                bad.join(",")
            )));
        }
        let before: Vec<Value> = diesel::sql_query(
            "SELECT string_agg(id::text, ',') AS ids FROM services WHERE parent_id = $1",
        )
        .bind::<diesel::sql_types::BigInt, _>(parent)
        .get_result::<Bad>(conn)
        .await?
        .ids
        .map(|ids| ids.split(',').map(|id| Value::from(id.parse::<i64>().unwrap_or_default())).collect())
        .unwrap_or_default();
        if !assign.is_empty() {
            diesel::update(services::table.filter(services::id.eq_any(assign)))
                .set((services::parent_id.eq(parent), services::updated_at.eq(diesel::dsl::now)))
                .execute(conn)
                .await?;
        }
        if !unassign.is_empty() {
            diesel::update(services::table.filter(services::id.eq_any(unassign)).filter(services::parent_id.eq(parent)))
                .set((services::parent_id.eq(None::<i64>), services::updated_at.eq(diesel::dsl::now)))
                .execute(conn)
                .await?;
        }
        let after: Vec<i64> = services::table.filter(services::parent_id.eq(parent)).order(services::id).select(services::id).load(conn).await?;
        let mut ids = vec![parent];
        ids.extend(assign);
        ids.extend(unassign);
        let change = Change { before: serde_json::json!({"parentId": parent, "children": before}), after: serde_json::json!({"parentId": parent, "children": after}) };
        audit::record(conn, operator, "service.children", &ids, change).await
    })
    .await
}

/// A body as a map (for the unknown-key check).
pub type Body = Map<String, Value>;

#[cfg(test)]
mod tests {
    #[test]
    fn search_metacharacters_match_themselves() {
        assert_eq!(super::like_pattern("50%_off\\"), "%50\\%\\_off\\\\%");
    }
}
