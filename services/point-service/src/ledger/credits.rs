//! `POST /internal/v1/credits` (no HTTP in here): credit a client once per reference. The
//! same reference again answers the first result and credits nothing; with another client
//! or amount it is a conflict.

use bigdecimal::BigDecimal;
use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use domain::Points;
use serde::Serialize;

use crate::db::schema::internal_credits;
use crate::error::PointError;
use crate::ledger::{self, Entry, Kind};

/// What the route reads, as its 400 says it.
pub const EXPECTED_BODY: &str = "expected {client_id: positive integer, points: positive decimal \
                                 text, reference: text, reason: \"gift_card\"}";

envelope::refusals! {
    /// Why the internal credit route credits nothing.
    pub enum CreditRefusal in B {
        /// A field missing or of another kind ([`EXPECTED_BODY`]).
        BadBody => 400, [EXPECTED_BODY];
        /// The reference was used before with another client or amount.
        ReferenceUsed(reference: String) => 409,
            "reference {reference} was already used for another credit";
    }
}

envelope::answer_set! {
    /// The route's 400 as the document shows it: [`EXPECTED_BODY`] as sent (a refusal's answer
    /// would show its braces as a template's).
    pub BadBodyAnswer, envelope::Envelope::B, {
        "400" => format!("`{EXPECTED_BODY}`"),
    }
}

/// The credit: the client, the points credited, the caller's reference and the balance
/// after it.
#[derive(Debug, Serialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct Credited {
    pub client_id: i64,
    pub points: String,
    pub reference: String,
    pub balance: String,
}

/// Credits `points` to `client_id` once for `reference`: the same credit again answers the
/// first result and appends nothing.
pub async fn credit(
    conn: &mut AsyncPgConnection,
    client_id: i64,
    points: &BigDecimal,
    reference: &str,
) -> Result<Credited, PointError> {
    conn.transaction(async |conn| {
        let mut account = ledger::lock_account(conn, client_id).await?;
        // The reference's key serialises two credits with one reference, whatever their
        // clients (whose account locks do not meet): the second insert waits for the first
        // transaction, then inserts nothing and reads the first's row below.
        let claimed = diesel::insert_into(internal_credits::table)
            .values((
                internal_credits::reference.eq(reference),
                internal_credits::client_id.eq(client_id),
                internal_credits::points.eq(points),
                internal_credits::reason.eq("gift_card"),
                // Set below, once the entry is written, in this same transaction.
                internal_credits::balance_after.eq(BigDecimal::from(0)),
            ))
            .on_conflict_do_nothing()
            .execute(conn)
            .await?;
        if claimed == 0 {
            let (earlier_client, earlier_points, balance_after): (i64, BigDecimal, BigDecimal) =
                internal_credits::table
                    .find(reference)
                    .select((
                        internal_credits::client_id,
                        internal_credits::points,
                        internal_credits::balance_after,
                    ))
                    .first(conn)
                    .await?;
            if earlier_client != client_id || &earlier_points != points {
                let used = CreditRefusal::ReferenceUsed(reference.to_owned());
                return Err(PointError::Refused(used.into()));
            }
            return Ok(answer(client_id, points, reference, balance_after));
        }
        let balance = ledger::append(
            conn,
            &mut account,
            Entry {
                kind: Kind::GiftCardCredit,
                points: points.clone(),
                order: None,
                reference: Some(reference),
                at: None,
            },
        )
        .await?;
        diesel::update(internal_credits::table.find(reference))
            .set(internal_credits::balance_after.eq(&balance))
            .execute(conn)
            .await?;
        Ok(answer(client_id, points, reference, balance))
    })
    .await
}

fn answer(client_id: i64, points: &BigDecimal, reference: &str, balance: BigDecimal) -> Credited {
    Credited {
        client_id,
        points: Points::new(points.clone()).to_text(),
        reference: reference.to_owned(),
        balance: Points::new(balance).to_text(),
    }
}
