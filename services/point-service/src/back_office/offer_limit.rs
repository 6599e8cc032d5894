//! The programme's limit of points per SAR on an admin's offer (`back_office::offers::limit`):
//! `OFFER_MAX_POINTS_PER_SAR` when set, else the highest rate, as they are now, of the offers
//! `seed` loaded (no `offer.create` row of the trail names them) that have a price and are not
//! withdrawn. An admin reprices one only to within the limit, so an admin can neither raise
//! the limit nor make an offer above it. A super_admin may go beyond it: counted and
//! logged for the alert ([`Guardrail`]).

use back_office::access::ActingOperator;
use back_office::audit::Action;
use back_office::offers::limit::{self, PointsPerSar};
use back_office::offers::{OfferRefusal, OfferValues, SUBJECT_PREFIX};
use back_office::role::Role;
use bigdecimal::BigDecimal;
use diesel::sql_types::{Numeric, Text};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::Money;

use super::Guardrail;
use crate::error::PointError;

/// A super_admin's offer above the limit: counted and logged once it is made ([`Self::made`]),
/// so that a change that fails or is rolled back passed nothing.
#[must_use]
pub struct Passed {
    rate: PointsPerSar,
    limit: Option<PointsPerSar>,
}

impl Passed {
    pub fn made(self, operator: &ActingOperator) {
        Guardrail::OfferPointsPerSar.passed();
        tracing::warn!(
            operator.id = %operator.id,
            offer.points_per_sar = %self.rate.shown(),
            limit.points_per_sar = %self.limit.as_ref().map_or_else(|| "none".to_owned(), PointsPerSar::shown),
            guardrail = Guardrail::OfferPointsPerSar.as_str(),
            "a super_admin made an offer above the points per SAR an admin may give"
        );
    }
}

/// Whether `operator` may make `offer` (new, or `before` it changed): an admin is refused
/// one above the limit ([`limit::needs_super_admin`]); a super_admin's is [`Passed`].
pub async fn hold(
    conn: &mut AsyncPgConnection,
    operator: &ActingOperator,
    offer: &OfferValues,
    before: Option<&OfferValues>,
    setting: Option<&BigDecimal>,
) -> Result<Option<Passed>, PointError> {
    let limit = match setting {
        Some(points) => Some(PointsPerSar::per_sar(points.clone())),
        None => seeded(conn).await?,
    };
    if !limit::needs_super_admin(offer, before, limit.as_ref()) {
        return Ok(None);
    }
    let rate = PointsPerSar::of(offer);
    if operator.role != Role::SuperAdmin {
        return Err(match limit {
            Some(limit) => OfferRefusal::AboveLimit(
                back_office::decimal_text(&offer.point_amount),
                // SAR as the back office writes it, with its two decimals.
                Money::new(offer.amount.clone()).map_or_else(
                    |_| back_office::decimal_text(&offer.amount),
                    |amount| amount.to_text(),
                ),
                limit.shown(),
            ),
            None => OfferRefusal::NoLimit,
        }
        .into());
    }
    Ok(Some(Passed { rate, limit }))
}

/// The highest rate of the seeded offers on the programme's price list.
async fn seeded(conn: &mut AsyncPgConnection) -> Result<Option<PointsPerSar>, PointError> {
    #[derive(diesel::QueryableByName)]
    struct Seeded {
        #[diesel(sql_type = Numeric)]
        point_amount: BigDecimal,
        #[diesel(sql_type = Numeric)]
        amount: BigDecimal,
    }
    // An offer for 0 SAR would be above every rate (no limit at all); a withdrawn one is no
    // price of the programme's any more.
    let rows: Vec<Seeded> = diesel::sql_query(
        "SELECT o.point_amount, o.amount FROM point_offers o \
         WHERE o.amount > 0 AND NOT o.deleted AND NOT EXISTS \
         (SELECT 1 FROM back_office_audit a WHERE a.action = $1 AND a.subject = $2 || o.id)",
    )
    .bind::<Text, _>(Action::OfferCreate.as_str())
    .bind::<Text, _>(SUBJECT_PREFIX)
    .load(conn)
    .await?;
    Ok(limit::highest(rows.into_iter().map(|row| PointsPerSar {
        points: row.point_amount,
        amount: row.amount,
    })))
}
