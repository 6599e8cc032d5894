//! Gift-code batches: issued with codes from a cryptographic generator, listed with each
//! code's state (the `gift_card_code_states` view says it once), withdrawn unused, exported
//! for printing.
//!
//! A withdrawal never takes a code that is being redeemed: a redemption reads its code under
//! a share lock (`gift_cards::claim`), and a withdrawal first locks the batch's active codes
//! for update, which waits for every claim in flight to end; its change, a statement of its
//! own, then sees their redemptions and keeps those codes. A claim that comes after waits
//! for the withdrawal and finds the code inactive (404).

use back_office::access::ActingOperator;
use back_office::audit;
use back_office::audit::Action;
use back_office::gift_codes::{
    ALPHABET, BatchCodes, BatchFields, BatchList, BatchLookupRefusal, BatchRecord, BatchRefusal,
    CodeCounts, CodeRecord, CodeState,
};
use back_office::paging::Count;
use back_office::paging::Paging;
use bigdecimal::BigDecimal;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Int4, Nullable, Numeric, Text, Timestamptz};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use rand::Rng;

use crate::error::OrderError;

/// How many times a batch draws again for codes that met an existing one (80 random bits
/// make even one such meeting unlikely in the catalog's lifetime).
const DRAWS: usize = 5;

/// A batch's row with its codes counted by state.
#[derive(QueryableByName)]
struct BatchRow {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = Text)]
    reference: String,
    #[diesel(sql_type = Int4)]
    code_count: i32,
    #[diesel(sql_type = Numeric)]
    points: BigDecimal,
    #[diesel(sql_type = Nullable<Text>)]
    prefix: Option<String>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    expires_at: Option<DateTime<Utc>>,
    #[diesel(sql_type = Text)]
    created_by: String,
    #[diesel(sql_type = Timestamptz)]
    created_at: DateTime<Utc>,
    #[diesel(sql_type = BigInt)]
    unused: i64,
    #[diesel(sql_type = BigInt)]
    being_credited: i64,
    #[diesel(sql_type = BigInt)]
    credited: i64,
    #[diesel(sql_type = BigInt)]
    withdrawn: i64,
    #[diesel(sql_type = BigInt)]
    expired: i64,
}

impl From<BatchRow> for BatchRecord {
    fn from(row: BatchRow) -> Self {
        BatchRecord {
            id: row.id,
            reference: row.reference,
            count: row.code_count,
            points: back_office::decimal_text(&row.points),
            prefix: row.prefix,
            expires_at: row.expires_at,
            created_by: row.created_by,
            created_at: row.created_at,
            codes: CodeCounts {
                unused: row.unused,
                being_credited: row.being_credited,
                credited: row.credited,
                withdrawn: row.withdrawn,
                expired: row.expired,
            },
        }
    }
}

/// Batches from `source` (a table expression of `gift_card_batches` rows) with their codes
/// counted by state: each batch's codes only (its index), so the newest batches cost the
/// same however many codes the catalog holds.
fn batches(source: &str) -> String {
    let states = CodeState::ALL.map(CodeState::as_str);
    let columns = states.map(|state| format!("c.{state}")).join(", ");
    let counts = states
        .map(|state| format!("count(*) FILTER (WHERE s.state = '{state}') AS {state}"))
        .join(", ");
    format!(
        "SELECT b.id, b.reference, b.code_count, b.points, b.prefix, b.expires_at, \
                b.created_by, b.created_at, {columns} \
         FROM {source} b CROSS JOIN LATERAL ( \
             SELECT {counts} \
             FROM gift_card_code_states s WHERE s.batch_id = b.id) c"
    )
}

/// The batch with this id, if any.
async fn batch(conn: &mut AsyncPgConnection, id: i64) -> QueryResult<Option<BatchRecord>> {
    let row: Option<BatchRow> =
        diesel::sql_query(batches("(SELECT * FROM gift_card_batches WHERE id = $1)"))
            .bind::<BigInt, _>(id)
            .get_result(conn)
            .await
            .optional()?;
    Ok(row.map(BatchRecord::from))
}

/// The batch the path names: a positive integer that is a batch's id, else `UnknownBatch`
/// with the id as sent.
pub async fn named(conn: &mut AsyncPgConnection, id: &str) -> Result<BatchRecord, OrderError> {
    let unknown = || OrderError::from(BatchLookupRefusal::UnknownBatch(id.to_owned()));
    let Some(number) = back_office::routes::positive_integer(id) else {
        return Err(unknown());
    };
    batch(conn, number).await?.ok_or_else(unknown)
}

/// A page of the batches, newest first.
pub async fn list(conn: &mut AsyncPgConnection, paging: Paging) -> QueryResult<BatchList> {
    let newest =
        "(SELECT * FROM gift_card_batches ORDER BY created_at DESC, id DESC LIMIT $1 OFFSET $2)";
    let rows: Vec<BatchRow> = diesel::sql_query(format!(
        "{} ORDER BY b.created_at DESC, b.id DESC",
        batches(newest)
    ))
    .bind::<BigInt, _>(paging.limit())
    .bind::<BigInt, _>(paging.offset())
    .load(conn)
    .await?;
    let total: Count = diesel::sql_query("SELECT count(*) AS n FROM gift_card_batches")
        .get_result(conn)
        .await?;
    Ok(BatchList {
        data: rows.into_iter().map(BatchRecord::from).collect(),
        meta: paging.meta(total.n),
    })
}

/// A code of a batch as its state says it.
#[derive(QueryableByName)]
struct CodeRow {
    #[diesel(sql_type = Text)]
    code: String,
    #[diesel(sql_type = Text)]
    state: String,
    #[diesel(sql_type = Nullable<BigInt>)]
    client_id: Option<i64>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    redeemed_at: Option<DateTime<Utc>>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    credited_at: Option<DateTime<Utc>>,
}

/// The state as the view writes it; a word the code does not know fails the read (500),
/// never becomes `unused` (which the CSV export would print as a voucher).
fn state(text: &str) -> QueryResult<CodeState> {
    CodeState::from_word(text).ok_or_else(|| {
        diesel::result::Error::DeserializationError(
            format!("gift_card_code_states.state holds {text:?}, which the code does not know")
                .into(),
        )
    })
}

/// The batch with each of its codes, in code order.
async fn codes(conn: &mut AsyncPgConnection, batch: BatchRecord) -> QueryResult<BatchCodes> {
    let rows: Vec<CodeRow> = diesel::sql_query(
        "SELECT code, state, client_id, redeemed_at, credited_at FROM gift_card_code_states \
         WHERE batch_id = $1 ORDER BY code",
    )
    .bind::<BigInt, _>(batch.id)
    .load(conn)
    .await?;
    let codes = rows
        .into_iter()
        .map(|row| {
            Ok(CodeRecord {
                state: state(&row.state)?,
                code: row.code,
                client_id: row.client_id,
                redeemed_at: row.redeemed_at,
                credited_at: row.credited_at,
            })
        })
        .collect::<QueryResult<_>>()?;
    Ok(BatchCodes { batch, codes })
}

/// What an issue did: a new batch, or the one its reference already named.
pub enum Issued {
    New(BatchRecord),
    Again(BatchRecord),
}

/// Issues a batch and records it, in one transaction. Its reference's row is inserted
/// first, so two tries with one reference meet on its key: the second answers the first
/// (the same body) or is refused (another body).
pub async fn issue(
    conn: &mut AsyncPgConnection,
    operator: &ActingOperator,
    fields: BatchFields,
) -> Result<Issued, OrderError> {
    conn.transaction::<_, OrderError, _>(async |conn| {
        let id: Option<i64> = diesel::sql_query(
            "INSERT INTO gift_card_batches (reference, code_count, points, prefix, expires_at, created_by) \
             VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (reference) DO NOTHING RETURNING id",
        )
        .bind::<Text, _>(&fields.reference)
        .bind::<Int4, _>(fields.count)
        .bind::<Numeric, _>(&fields.points)
        .bind::<Nullable<Text>, _>(&fields.prefix)
        .bind::<Nullable<Timestamptz>, _>(fields.expires_at)
        .bind::<Text, _>(&operator.id)
        .get_result::<Inserted>(conn)
        .await
        .optional()?
        .map(|row| row.id);
        let Some(id) = id else {
            let first = first_of(conn, &fields.reference).await?;
            return if fields.issued(&first) {
                Ok(Issued::Again(first))
            } else {
                Err(BatchRefusal::ReferenceUsed(fields.reference).into())
            };
        };
        fields.check_future(chrono::Utc::now())?;
        insert_codes(conn, id, &fields).await?;
        let made = batch(conn, id)
            .await?
            .ok_or_else(|| OrderError::Internal(format!("gift-code batch {id} vanished")))?;
        let made = audit::changed(conn, operator, Action::GiftCodeBatchIssue, None, made).await?;
        tracing::info!(
            gift_code_batch.id = id,
            gift_code_batch.count = made.count,
            gift_code_batch.points = %made.points,
            operator.id = %operator.id,
            "gift-code batch issued"
        );
        Ok(Issued::New(made))
    })
    .await
}

#[derive(QueryableByName)]
struct Inserted {
    #[diesel(sql_type = BigInt)]
    id: i64,
}

/// The batch a reference already names.
async fn first_of(
    conn: &mut AsyncPgConnection,
    reference: &str,
) -> Result<BatchRecord, OrderError> {
    let row: BatchRow = diesel::sql_query(batches(
        "(SELECT * FROM gift_card_batches WHERE reference = $1)",
    ))
    .bind::<Text, _>(reference)
    .get_result(conn)
    .await?;
    Ok(BatchRecord::from(row))
}

/// Draws the batch's codes and inserts them; a code that meets an existing one is drawn
/// again.
async fn insert_codes(
    conn: &mut AsyncPgConnection,
    batch_id: i64,
    fields: &BatchFields,
) -> Result<(), OrderError> {
    let wanted = usize::try_from(fields.count).unwrap_or_default();
    let mut made = 0;
    for _ in 0..DRAWS {
        let codes: Vec<String> = {
            // The thread's generator is a CSPRNG seeded from the operating system's.
            let mut rng = rand::rng();
            (made..wanted)
                .map(|_| {
                    back_office::gift_codes::code(fields.prefix.as_deref(), || {
                        ALPHABET[rng.random_range(0..ALPHABET.len())]
                    })
                })
                .collect()
        };
        made += diesel::sql_query(
            "INSERT INTO gift_card_codes (code, points, active, batch_id, expires_at) \
             SELECT code, $2, true, $3, $4 FROM unnest($1::text[]) AS code \
             ON CONFLICT (code) DO NOTHING",
        )
        .bind::<Array<Text>, _>(&codes)
        .bind::<Numeric, _>(&fields.points)
        .bind::<BigInt, _>(batch_id)
        .bind::<Nullable<Timestamptz>, _>(fields.expires_at)
        .execute(conn)
        .await?;
        if made == wanted {
            return Ok(());
        }
    }
    Err(OrderError::Internal(format!(
        "gift-code batch {batch_id}: {made} of {wanted} codes after {DRAWS} draws"
    )))
}

/// Withdraws the batch's unused codes (a code redeemed, being credited or credited keeps its
/// state) and records it, in one transaction; answers the batch after. The batch's row is
/// locked first, so two withdrawals of it run one after the other, and the record before is
/// read once every claim in flight has ended: the trail says what this withdrawal did, and a
/// withdrawal that found nothing to withdraw records nothing.
pub async fn withdraw(
    conn: &mut AsyncPgConnection,
    operator: &ActingOperator,
    id: &str,
) -> Result<BatchRecord, OrderError> {
    conn.transaction::<_, OrderError, _>(async |conn| {
        let unknown = || OrderError::from(BatchLookupRefusal::UnknownBatch(id.to_owned()));
        let number = back_office::routes::positive_integer(id).ok_or_else(unknown)?;
        let locked: Option<i64> = catalog_db::schema::gift_card_batches::table
            .find(number)
            .select(catalog_db::schema::gift_card_batches::id)
            .for_update()
            .first(conn)
            .await
            .optional()?;
        locked.ok_or_else(unknown)?;
        // Waits for every claim of one of these codes in flight (its share lock) to end.
        diesel::sql_query(
            "SELECT code FROM gift_card_codes WHERE batch_id = $1 AND active ORDER BY code FOR UPDATE",
        )
        .bind::<BigInt, _>(number)
        .execute(conn)
        .await?;
        let before = named(conn, id).await?;
        let withdrawn = diesel::sql_query(
            "UPDATE gift_card_codes c SET active = false, withdrawn_at = now() \
             WHERE c.batch_id = $1 AND c.active \
               AND NOT EXISTS (SELECT 1 FROM gift_card_redemptions r WHERE r.code = c.code)",
        )
        .bind::<BigInt, _>(number)
        .execute(conn)
        .await?;
        let after = named(conn, id).await?;
        if withdrawn == 0 {
            return Ok(after);
        }
        let after = audit::changed(conn, operator, Action::GiftCodeBatchWithdraw, Some(&before), after)
            .await?;
        tracing::info!(
            gift_code_batch.id = number,
            gift_code_batch.withdrawn = withdrawn,
            operator.id = %operator.id,
            "gift-code batch withdrawn"
        );
        Ok(after)
    })
    .await
}

/// The batch with its codes, for `operator`, who is recorded as having read them: an unused
/// code is a voucher, so the trail says who saw which batch's codes (`action`:
/// `gift-code-batch.read` or `gift-code-batch.export`).
pub async fn codes_for(
    conn: &mut AsyncPgConnection,
    operator: &ActingOperator,
    id: &str,
    action: Action,
) -> Result<BatchCodes, OrderError> {
    conn.transaction::<_, OrderError, _>(async |conn| {
        let batch = named(conn, id).await?;
        // A read: the batch as it was read, nothing before it.
        let batch = audit::changed(conn, operator, action, None, batch).await?;
        Ok(codes(conn, batch).await?)
    })
    .await
}

#[cfg(test)]
mod tests {
    use back_office::gift_codes::CodeState;

    /// The words the catalog's `gift_card_code_states` view writes (its `THEN`s and `ELSE`).
    #[test]
    fn the_view_writes_exactly_the_code_states() {
        let migration =
            include_str!("../../../../migrations/catalog/2026-11-28-000090_back_office/up.sql");
        let view = &migration[migration.find("CREATE VIEW gift_card_code_states").unwrap()..];
        let case = &view[view.find("CASE").unwrap()..view.find("END AS state").unwrap()];
        let mut written: Vec<&str> = case
            .split(['\n'])
            .filter_map(|line| {
                line.split(" THEN ")
                    .nth(1)
                    .or(line.trim().strip_prefix("ELSE "))
            })
            .map(|word| word.trim().trim_matches('\''))
            .collect();
        written.sort_unstable();
        let mut known: Vec<&str> = CodeState::ALL.iter().map(|s| s.as_str()).collect();
        known.sort_unstable();
        assert_eq!(written, known);
        assert_eq!(super::state("unused").ok(), Some(CodeState::Unused));
        assert!(super::state("lost").is_err());
    }
}
