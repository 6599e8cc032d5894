//! A parent's children as operators see and change them: the candidates and the assignment
//! (no HTTP in here).

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Nullable, Text};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde_json::{Value, json};

use catalog_db::ServiceRow;
use catalog_db::schema::services;

use crate::auth::Operator;
use crate::error::OpError;
use crate::hierarchy::audit::{self, Change};
use crate::hierarchy::children::ChildrenRefusal;
use crate::hierarchy::lookup;
use crate::hierarchy::services::like_pattern;
use crate::query::{Page, PageMeta};

/// The candidate children of a parent: role child, unassigned or already this parent's.
pub async fn candidates(
    conn: &mut AsyncPgConnection,
    parent: i64,
    search: Option<&str>,
    status: Option<&str>,
    page: &Page,
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

/// Check 5: only a parent has children.
pub fn require_parent(row: &ServiceRow) -> Result<(), ChildrenRefusal> {
    if row.hierarchy_role == "parent" {
        Ok(())
    } else {
        Err(ChildrenRefusal::NotAParent)
    }
}

#[derive(QueryableByName)]
struct ChildIds {
    #[diesel(sql_type = Nullable<Text>)]
    ids: Option<String>,
}

/// The parent's children before the write, for the audit trail.
async fn children_before(conn: &mut AsyncPgConnection, parent: i64) -> QueryResult<Vec<Value>> {
    let ids = diesel::sql_query(
        "SELECT string_agg(id::text, ',') AS ids FROM services WHERE parent_id = $1",
    )
    .bind::<BigInt, _>(parent)
    .get_result::<ChildIds>(conn)
    .await?
    .ids;
    Ok(ids
        .map(|ids| {
            ids.split(',')
                .map(|id| Value::from(id.parse::<i64>().unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default())
}

/// Check 6: the assign ids that do not exist, are not `child` or belong to another parent,
/// in the order sent; `locked` holds the rows of the assign ids that exist.
fn unassignable(assign: &[i64], locked: &[ServiceRow], parent: i64) -> Result<(), ChildrenRefusal> {
    let assignable = |id: i64| {
        locked.iter().any(|row| {
            row.id == id
                && row.hierarchy_role == "child"
                && row.parent_id.is_none_or(|p| p == parent)
        })
    };
    let refused: Vec<String> = assign
        .iter()
        .filter(|id| !assignable(**id))
        .map(ToString::to_string)
        .collect();
    if refused.is_empty() {
        Ok(())
    } else {
        Err(ChildrenRefusal::Unassignable(refused.join(",")))
    }
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
        require_parent(&lookup::lock(conn, parent).await?)?;
        let mut sorted = assign.to_vec();
        sorted.sort_unstable();
        let locked: Vec<ServiceRow> = services::table
            .filter(services::id.eq_any(&sorted))
            .order(services::id)
            .select(ServiceRow::as_select())
            .for_update()
            .load(conn)
            .await?;
        unassignable(assign, &locked, parent)?;
        let before = children_before(conn, parent).await?;
        if !assign.is_empty() {
            diesel::update(services::table.filter(services::id.eq_any(assign)))
                .set((
                    services::parent_id.eq(parent),
                    services::updated_at.eq(diesel::dsl::now),
                ))
                .execute(conn)
                .await?;
        }
        if !unassign.is_empty() {
            let released = services::table
                .filter(services::id.eq_any(unassign))
                .filter(services::parent_id.eq(parent));
            diesel::update(released)
                .set((
                    services::parent_id.eq(None::<i64>),
                    services::updated_at.eq(diesel::dsl::now),
                ))
                .execute(conn)
                .await?;
        }
        let after: Vec<i64> = services::table
            .filter(services::parent_id.eq(parent))
            .order(services::id)
            .select(services::id)
            .load(conn)
            .await?;
        let mut ids = vec![parent];
        ids.extend(assign);
        ids.extend(unassign);
        let change = Change {
            before: json!({"parentId": parent, "children": before}),
            after: json!({"parentId": parent, "children": after}),
        };
        audit::record(conn, operator, "service.children", &ids, change).await
    })
    .await
}
