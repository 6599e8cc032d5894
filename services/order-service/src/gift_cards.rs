//! Gift-card codes (no HTTP answers in here): a code is redeemed once, ever; wrong codes are
//! limited per client and per client address so codes cannot be guessed; the credit goes
//! to the point service (idempotent by redemption id, so a retry after a timeout cannot
//! credit twice) or to the legacy add-point call.

use bigdecimal::BigDecimal;
use chrono::{Duration, Utc};
use diesel::prelude::*;
use diesel::sql_types::Text;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use domain::Points;
use serde::Serialize;
use serde_json::json;

use catalog::schema::{gift_card_codes, gift_card_redemptions, gift_card_tries};

use crate::config::CreditTarget;
use crate::error::OrderError;
use crate::state::Credit;

const WINDOW: Duration = Duration::hours(1);

/// The answer to a redemption.
#[derive(Debug, Serialize, PartialEq, Eq)]
pub struct Redeemed {
    pub message: &'static str,
    pub code: String,
    pub points: String,
}

/// A redemption to credit: new, or this client's own still pending from an earlier try.
struct Claim {
    id: i64,
    points: BigDecimal,
}

/// Refuses when this client or address has tried too many wrong codes in the last hour.
async fn check_tries(
    conn: &mut AsyncPgConnection,
    client_id: i64,
    ip: &str,
    limits: (i64, i64),
) -> Result<(), OrderError> {
    let since = Utc::now() - WINDOW;
    let by_client: i64 = gift_card_tries::table
        .filter(
            gift_card_tries::client_id
                .eq(client_id)
                .and(gift_card_tries::created_at.gt(since)),
        )
        .count()
        .get_result(conn)
        .await?;
    let by_ip: i64 = gift_card_tries::table
        .filter(
            gift_card_tries::ip
                .eq(ip)
                .and(gift_card_tries::created_at.gt(since)),
        )
        .count()
        .get_result(conn)
        .await?;
    if by_client >= limits.0 || by_ip >= limits.1 {
        Err(OrderError::TooManyRequests)
    } else {
        Ok(())
    }
}

/// Claims the code for the client in one transaction: the code's unique redemption row
/// decides between concurrent tries.
async fn claim(
    conn: &mut AsyncPgConnection,
    client_id: i64,
    code: &str,
    ip: &str,
) -> Result<Claim, OrderError> {
    conn.transaction::<_, OrderError, _>(async |conn| {
        let points: Option<BigDecimal> = gift_card_codes::table
            .find(code)
            .filter(gift_card_codes::active)
            .select(gift_card_codes::points)
            .first(conn)
            .await
            .optional()?;
        let Some(points) = points else {
            diesel::insert_into(gift_card_tries::table)
                .values((
                    gift_card_tries::client_id.eq(client_id),
                    gift_card_tries::ip.eq(ip),
                ))
                .execute(conn)
                .await?;
            return Ok(Err(OrderError::NotFound("The code not exist")));
        };
        // Serialises concurrent claims of one code, so the loser sees the winner's row.
        diesel::sql_query("SELECT pg_advisory_xact_lock(hashtext('gift-card:' || $1)::bigint)")
            .bind::<Text, _>(code)
            .execute(conn)
            .await?;
        let existing: Option<(i64, i64, BigDecimal, String)> = gift_card_redemptions::table
            .filter(gift_card_redemptions::code.eq(code))
            .select((
                gift_card_redemptions::id,
                gift_card_redemptions::client_id,
                gift_card_redemptions::points,
                gift_card_redemptions::status,
            ))
            .first(conn)
            .await
            .optional()?;
        Ok(match existing {
            Some((id, owner, points, status)) if owner == client_id && status == "pending" => {
                Ok(Claim { id, points })
            }
            Some(_) => Err(OrderError::Conflict("The code has already been used")),
            None => {
                let id = diesel::insert_into(gift_card_redemptions::table)
                    .values((
                        gift_card_redemptions::code.eq(code),
                        gift_card_redemptions::client_id.eq(client_id),
                        gift_card_redemptions::points.eq(&points),
                    ))
                    .returning(gift_card_redemptions::id)
                    .get_result(conn)
                    .await?;
                Ok(Claim { id, points })
            }
        })
    })
    .await?
}

/// `POST /gift-card-code` after the caller is known.
pub async fn redeem(
    pool: &db::Pool,
    credit: &Credit,
    client_id: i64,
    code: &str,
    ip: &str,
    limits: (i64, i64),
) -> Result<Redeemed, OrderError> {
    let claimed = {
        let mut conn = pool.get().await?;
        check_tries(&mut conn, client_id, ip, limits).await?;
        claim(&mut conn, client_id, code, ip).await?
    };
    // The connection is back in the pool while the credit call is in flight.
    send_credit(credit, client_id, &claimed).await?;
    let mut conn = pool.get().await?;
    diesel::update(gift_card_redemptions::table.find(claimed.id))
        .set((
            gift_card_redemptions::status.eq("credited"),
            gift_card_redemptions::credited_at.eq(diesel::dsl::now),
        ))
        .execute(&mut conn)
        .await?;
    tracing::info!(
        client.id = client_id,
        redemption.id = claimed.id,
        "gift-card code redeemed"
    );
    Ok(Redeemed {
        message: "The code was redeemed",
        code: code.to_owned(),
        points: Points::new(claimed.points).to_text(),
    })
}

async fn send_credit(credit: &Credit, client_id: i64, claimed: &Claim) -> Result<(), OrderError> {
    let reference = format!("gift-card:{}", claimed.id);
    let points = Points::new(claimed.points.clone()).to_text();
    let request = match &credit.target {
        CreditTarget::PointService => credit
            .http
            .post(format!("{}/internal/v1/credits", credit.point_service))
            .header("x-internal-token", credit.internal_token.expose())
            .json(&json!({"client_id": client_id, "points": points, "reference": reference, "reason": "gift_card"})),
        CreditTarget::Legacy(url) => credit
            .http
            .post(format!("{url}/api/v1/points/add"))
            .json(&json!({"client_id": client_id, "points": points, "reference": reference})),
    };
    match request.send().await {
        Ok(response) if response.status().is_success() => Ok(()),
        Ok(response) => Err(OrderError::CreditPending(format!(
            "credit answered {}",
            response.status()
        ))),
        Err(e) => Err(OrderError::CreditPending(format!("credit failed: {e}"))),
    }
}
