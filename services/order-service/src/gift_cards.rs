//! Gift-card codes (no HTTP in here: a refusal is a [`RedeemRefusal`]): a code is redeemed
//! once, ever; wrong codes are limited per client and per client address so codes cannot be
//! guessed; the credit goes to the point service or to the legacy add-point call, and is
//! retried until it lands.
//!
//! A redemption records where it is credited (the point service or the legacy system, from
//! `USE_POINT_SERVICE` of the replica that makes it) and its reference (`gift-card:<code>`)
//! when it is made; every try sends that reference there, whatever `USE_POINT_SERVICE`
//! says by then or on another replica (`credit`).
//!
//! A redemption is `pending` until its credit lands, then `credited`. While pending, it is
//! either being credited (its lease is held by the redeeming request or by one replica's
//! retry task) or waiting for its next try. Exactly one answer per redemption is 200: the
//! request that credits it answers 200; when the retry task credited it instead, the
//! owner's next request answers 200 (`answered_at` records that it was given). Every other
//! request for the code gets 409.

pub mod credit;
pub mod retry;
pub mod tries;

use bigdecimal::BigDecimal;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Bool, Numeric, Text};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use domain::Points;
use serde::Serialize;
use serde_json::Value;

use catalog_db::RedemptionStatus;
use catalog_db::schema::{gift_card_codes, gift_card_redemptions};

use crate::config::GiftCardRetry;
use crate::error::OrderError;
use crate::gift_cards::credit::{By, CreditTarget, Lease};
use crate::gift_cards::tries::Limits;
use crate::state::Credit;

/// The answer to a redemption, in this key order.
#[derive(Debug, Serialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct Redeemed {
    /// The same text on every redemption ([`REDEEMED`]).
    pub message: &'static str,
    /// The code as redeemed (trimmed).
    pub code: String,
    /// The points credited, as points text.
    pub points: String,
}

/// [`Redeemed`]'s message.
pub const REDEEMED: &str = "The code was redeemed";

/// The 200 as the document describes it.
pub fn redeemed_answer() -> String {
    format!("`{{message: \"{REDEEMED}\", code, points}}`: the code was redeemed and credited")
}

envelope::answer_set! {
    /// The 502 as the document describes it ([`OrderError::CreditPending`]).
    pub PendingAnswer, envelope::Envelope::C, {
        "502" => {
            let pending = OrderError::CreditPending(String::new());
            format!(
                "`{pending}`: the credit call failed, timed out or did not answer 2xx; the redemption \
                 stays the caller's, pending: the service retries it on its own, and the caller's retry \
                 resumes it (200 once credited, if no 200 was given for it yet)"
            )
        },
    }
}

envelope::refusals! {
    /// Why a redemption is refused.
    pub enum RedeemRefusal in C {
        /// The body has no code: missing, not a string, empty once trimmed or longer than
        /// [`MAX_CODE_LENGTH`] (a body that is not JSON counts as none).
        NoCode => 400, "code is required";
        /// No such code, or an inactive (withdrawn) or expired code with no redemption
        /// (counted as a wrong try).
        UnknownCode => 404, "The code not exist";
        /// Redeemed by another client, or credited and its 200 already given.
        Used => 409, "The code has already been used";
        /// The caller's own redemption of it is being credited right now (by another of the
        /// caller's requests or by the service's retry), so the retry tells the outcome.
        InProgress => 409, "The code is being redeemed, try again shortly";
    }
}

/// The longest code once trimmed, in bytes (UTF-8).
pub const MAX_CODE_LENGTH: usize = 100;

/// The code a redemption's body names: its `code`, trimmed.
pub fn code_in(body: &Value) -> Result<&str, RedeemRefusal> {
    body.get("code")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|c| !c.is_empty() && c.len() <= MAX_CODE_LENGTH)
        .ok_or(RedeemRefusal::NoCode)
}

/// What a claim leaves the request to do.
enum Claimed {
    /// Send the credit (a new redemption, or the caller's own pending one that nobody holds).
    Credit(Lease),
    /// The retry task credited the caller's redemption and no 200 was given for it yet:
    /// this answer is that 200.
    Answer(BigDecimal),
}

/// The code's redemption, as found under its row lock.
#[derive(QueryableByName)]
struct Existing {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = BigInt)]
    client_id: i64,
    #[diesel(sql_type = Numeric)]
    points: BigDecimal,
    #[diesel(sql_type = Text)]
    status: RedemptionStatus,
    /// Its 200 was given.
    #[diesel(sql_type = Bool)]
    answered: bool,
    /// A request or a retry task is crediting it (the database's clock decides, as it does
    /// for every holder).
    #[diesel(sql_type = Bool)]
    held: bool,
}

/// Looks the code up and claims it in one transaction: the wrong-code limits (under the
/// client's and the address's locks, held to the end), then the code, then the redemption.
/// The code's unique redemption row decides between concurrent requests: the first inserts
/// it holding the lease; the others wait for that insert, then read the row under its lock.
/// A redemption that exists decides even when its code was deactivated since: its owner
/// resumes it rather than being told the code does not exist.
///
/// A new redemption is credited to `target` under `gift-card:<code>` for good (`code` is
/// byte for byte the stored one: it was found by equality); one made before targets were
/// recorded gets `target` at this try if it has none yet.
async fn claim(
    conn: &mut AsyncPgConnection,
    client_id: i64,
    code: &str,
    ip: &str,
    limits: Limits,
    target: CreditTarget,
    lease: std::time::Duration,
) -> Result<Claimed, OrderError> {
    conn.transaction::<_, OrderError, _>(async |conn| {
        tries::lock_and_check(conn, client_id, ip, limits).await?;
        // Under a share lock: a withdrawal of the code waits for this claim to end, and this
        // claim for a withdrawal's (then finding the code inactive), so a code is never both
        // withdrawn and redeemed (`back_office::gift_codes::withdraw`).
        let points: Option<BigDecimal> = gift_card_codes::table
            .find(code)
            .filter(gift_card_codes::active)
            .filter(
                gift_card_codes::expires_at
                    .is_null()
                    .or(gift_card_codes::expires_at.gt(diesel::dsl::now)),
            )
            .select(gift_card_codes::points)
            .for_share()
            .first(conn)
            .await
            .optional()?;
        if let Some(points) = &points
            && let Some(lease) =
                credit::take_new(conn, code, client_id, points, target, lease).await?
        {
            return Ok(Ok(Claimed::Credit(lease)));
        }
        let existing: Option<Existing> = diesel::sql_query(
            "SELECT id, client_id, points, status, answered_at IS NOT NULL AS answered, \
                    COALESCE(lease_until > now(), false) AS held \
             FROM gift_card_redemptions WHERE code = $1 FOR UPDATE",
        )
        .bind::<Text, _>(code)
        .get_result(conn)
        .await
        .optional()?;
        let Some(existing) = existing else {
            tries::record_wrong(conn, client_id, ip).await?;
            // The try is committed with the 404 (an error would roll it back).
            return Ok(Err(RedeemRefusal::UnknownCode.into()));
        };
        if existing.client_id != client_id {
            return Ok(Err(RedeemRefusal::Used.into()));
        }
        if existing.status == RedemptionStatus::Credited {
            if existing.answered {
                return Ok(Err(RedeemRefusal::Used.into()));
            }
            diesel::update(gift_card_redemptions::table.find(existing.id))
                .set(gift_card_redemptions::answered_at.eq(diesel::dsl::now))
                .execute(conn)
                .await?;
            return Ok(Ok(Claimed::Answer(existing.points)));
        }
        if existing.held {
            return Ok(Err(RedeemRefusal::InProgress.into()));
        }
        Ok(Ok(Claimed::Credit(
            credit::take_locked(conn, existing.id, target, lease).await?,
        )))
    })
    .await?
}

/// `POST /gift-card-code` after the caller is known.
pub async fn redeem(
    pool: &db::Pool,
    credit: &Credit,
    retry: &GiftCardRetry,
    client_id: i64,
    code: &str,
    ip: &str,
    limits: Limits,
) -> Result<Redeemed, OrderError> {
    let claimed = {
        let mut conn = pool.get().await?;
        claim(
            &mut conn,
            client_id,
            code,
            ip,
            limits,
            credit.target,
            retry.lease,
        )
        .await?
    };
    let lease = match claimed {
        Claimed::Answer(points) => return Ok(redeemed(code, points)),
        Claimed::Credit(lease) => lease,
    };
    // The connection is back in the pool while the credit call is in flight.
    let outcome = credit::send(credit, &lease).await;
    credit::report(By::Request, &lease, &outcome, retry);
    match outcome {
        Ok(()) => {
            let mut conn = pool.get().await?;
            if credit::credited(&mut conn, lease.id, true).await? {
                Ok(redeemed(code, lease.points))
            } else {
                // A retry task took over after this request's lease ran out, and the owner's
                // other request was given the 200.
                Err(RedeemRefusal::Used.into())
            }
        }
        Err(error) => {
            // Not giving the lease back only delays the next try until the lease runs out;
            // the answer stays what the client must know: not credited yet.
            let released = match pool.get().await {
                Ok(mut conn) => {
                    let backoff = error.backoff(retry, lease.attempt);
                    credit::release(&mut conn, &lease, backoff, &error)
                        .await
                        .map_err(OrderError::from)
                }
                Err(e) => Err(OrderError::from(e)),
            };
            if let Err(e) = released {
                tracing::warn!(
                    redemption.id = lease.id,
                    error.message = %e,
                    "gift-card lease not given back; it runs out on its own"
                );
            }
            Err(OrderError::CreditPending(error.to_string()))
        }
    }
}

fn redeemed(code: &str, points: BigDecimal) -> Redeemed {
    Redeemed {
        message: REDEEMED,
        code: code.to_owned(),
        points: Points::new(points).to_text(),
    }
}
