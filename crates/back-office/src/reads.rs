//! Who looked at which client's points (docs/decisions.md, "Reads leave a trace"): every read
//! of a client's balance and history through the back office is recorded before it is
//! answered, to the point service's `back_office_reads` (append-only), a trail of its own that
//! only a super_admin reads.

use chrono::{DateTime, Utc};
use diesel::QueryResult;
use diesel::sql_types::{BigInt, Text, Timestamptz};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde::Serialize;
use utoipa::ToSchema;

use crate::access::ActingOperator;
use crate::paging::Paging;
use crate::role::Role;

/// One read, in this key order.
#[derive(Debug, Clone, Serialize, diesel::QueryableByName, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = ClientRead)]
pub struct Read {
    #[diesel(sql_type = BigInt)]
    pub id: i64,
    /// The operator token's `sub`.
    #[diesel(sql_type = Text)]
    pub operator_id: String,
    /// The operator token's role.
    #[diesel(sql_type = Text)]
    pub role: Role,
    /// The client whose points were read.
    #[diesel(sql_type = BigInt)]
    pub client_id: i64,
    #[diesel(sql_type = Timestamptz)]
    pub read_at: DateTime<Utc>,
}

/// A page of the reads, newest first.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = ClientReadsPage)]
pub struct Page {
    pub data: Vec<Read>,
    pub meta: domain::PageMeta,
}

/// Records that `operator` read `client_id`'s points; the read is answered only once this
/// row is written.
pub async fn record(
    conn: &mut AsyncPgConnection,
    operator: &ActingOperator,
    client_id: i64,
) -> QueryResult<()> {
    diesel::sql_query(
        "INSERT INTO back_office_reads (operator_id, role, client_id) VALUES ($1, $2, $3)",
    )
    .bind::<Text, _>(&operator.id)
    .bind::<Text, _>(operator.role.as_str())
    .bind::<BigInt, _>(client_id)
    .execute(conn)
    .await
    .map(drop)
}

/// A page of the reads, newest first.
pub async fn page(conn: &mut AsyncPgConnection, paging: Paging) -> QueryResult<Page> {
    let columns = "id, operator_id, role, client_id, created_at AS read_at";
    let (data, meta) = paging
        .newest_first(conn, columns, "back_office_reads")
        .await?;
    Ok(Page { data, meta })
}
