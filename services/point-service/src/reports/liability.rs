//! `point-service liability`: the points the programme owes, for finance, from the ledger's
//! entries alone (not the cached balances), in one snapshot.
//!
//! For a period of Riyadh dates (both included; an open end is the ledger's first or last
//! entry): the balances at its start, the movements inside it, and the balances at its end,
//! split into what clients hold (positive balances, and how many clients hold them) and
//! what they owe (negative balances). Amounts are points text, as the balance answers them.
//!
//! Points are issued when they enter the programme: an earn, a gift-card credit, the credit
//! of a card-paid order (`purchase` or `gift_received` of an order whose `payment_type` is
//! `checkout`). A point order paid with points issues nothing: it moves points from the
//! payer (`gift_sent`, debited) to the recipient (`gift_received`, credited), and burns the
//! difference; the two are reported as transfers. The figures roll forward:
//!
//! `closing = opening + issued + credited - debited - spent - expired + adjusted`
//!
//! where `adjusted` is the signed net of the seeded legacy adjustments and of support's
//! adjustments through the back office, each on a line of its own.
//!
//! An entry the report cannot place (a kind it does not know, a credit of no card or point
//! order) fails it rather than leave points out.

use bigdecimal::{BigDecimal, Zero};
use chrono::{DateTime, NaiveDate, Utc};
use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Nullable, Numeric, Text, Timestamptz};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::Points;

use crate::ledger::Kind;
use crate::orders::PaymentType;
use crate::riyadh;

/// Riyadh dates, both included; `None` is an open end.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Period {
    pub from: Option<NaiveDate>,
    pub to: Option<NaiveDate>,
}

impl Period {
    /// The instants `start <= entry < end` of the period.
    fn bounds(self) -> (Option<DateTime<Utc>>, Option<DateTime<Utc>>) {
        (
            self.from.and_then(riyadh::day_start),
            self.to
                .and_then(|to| to.succ_opt())
                .and_then(riyadh::day_start),
        )
    }
}

/// The report's figures; outflows (debited, spent, expired) are positive amounts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Liability {
    pub period: Period,
    /// The sum of all balances when the period starts.
    pub opening: BigDecimal,
    pub issued: Issued,
    /// Credited to recipients of point orders paid with points.
    pub transfers_credited: BigDecimal,
    /// Debited from payers of point orders paid with points.
    pub transfers_debited: BigDecimal,
    pub spent: BigDecimal,
    pub expired: BigDecimal,
    /// The signed net of adjustments: seeded legacy ones, and support's.
    pub adjusted: BigDecimal,
    /// The signed net of support's adjustments alone (within `adjusted`).
    pub support_adjusted: BigDecimal,
    /// The sum of all balances when the period ends.
    pub closing: BigDecimal,
    /// Positive balances at the end, and the clients holding them.
    pub outstanding: BigDecimal,
    pub holders: i64,
    /// Negative balances at the end (a negative sum), and the clients below zero.
    pub negative: BigDecimal,
    pub negative_clients: i64,
}

/// Points that entered the programme.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Issued {
    pub earn: BigDecimal,
    pub gift_card_credit: BigDecimal,
    /// Credits of card-paid orders (`purchase`, `gift_received`).
    pub card_orders: BigDecimal,
}

impl Issued {
    pub fn total(&self) -> BigDecimal {
        &self.earn + &self.gift_card_credit + &self.card_orders
    }
}

impl Liability {
    /// Adds one kind's signed sum over the period, for entries of orders paid by
    /// `payment_type` (`None`: entries of no order).
    fn add(
        &mut self,
        kind: Kind,
        payment_type: Option<PaymentType>,
        points: BigDecimal,
    ) -> Result<(), LiabilityError> {
        match (kind, payment_type) {
            (Kind::Earn, _) => self.issued.earn += points,
            (Kind::GiftCardCredit, _) => self.issued.gift_card_credit += points,
            (Kind::Purchase | Kind::GiftReceived, Some(PaymentType::Checkout)) => {
                self.issued.card_orders += points
            }
            (Kind::Purchase | Kind::GiftReceived, Some(PaymentType::Point)) => {
                self.transfers_credited += points
            }
            (Kind::Purchase | Kind::GiftReceived, None) => {
                return Err(LiabilityError::UnplacedCredit {
                    kind: kind.as_str(),
                    payment_type: None,
                });
            }
            (Kind::GiftSent, _) => self.transfers_debited -= points,
            (Kind::Spend, _) => self.spent -= points,
            (Kind::Expiry, _) => self.expired -= points,
            (Kind::Adjustment, _) => self.adjusted += points,
            (Kind::SupportAdjustment, _) => {
                self.support_adjusted += &points;
                self.adjusted += points;
            }
        }
        Ok(())
    }

    /// The report, tab-separated: `section<TAB>name<TAB>value`.
    pub fn lines(&self) -> Vec<String> {
        let text = |points: &BigDecimal| Points::new(points.clone()).to_text();
        let date = |date: Option<NaiveDate>| date.map_or("-".to_owned(), riyadh::text);
        vec![
            format!("period\tfrom\t{}", date(self.period.from)),
            format!("period\tto\t{}", date(self.period.to)),
            format!("opening\tbalance\t{}", text(&self.opening)),
            format!("issued\tearn\t{}", text(&self.issued.earn)),
            format!(
                "issued\tgift_card_credit\t{}",
                text(&self.issued.gift_card_credit)
            ),
            format!("issued\tcard_orders\t{}", text(&self.issued.card_orders)),
            format!("issued\ttotal\t{}", text(&self.issued.total())),
            format!("transfers\tcredited\t{}", text(&self.transfers_credited)),
            format!("transfers\tdebited\t{}", text(&self.transfers_debited)),
            format!("spent\tspend\t{}", text(&self.spent)),
            format!("expired\texpiry\t{}", text(&self.expired)),
            format!("adjusted\tadjustment\t{}", text(&self.adjusted)),
            format!(
                "adjusted\tsupport_adjustment\t{}",
                text(&self.support_adjusted)
            ),
            format!("closing\tbalance\t{}", text(&self.closing)),
            format!("outstanding\tpoints\t{}", text(&self.outstanding)),
            format!("outstanding\tclients\t{}", self.holders),
            format!("negative\tpoints\t{}", text(&self.negative)),
            format!("negative\tclients\t{}", self.negative_clients),
        ]
    }
}

#[derive(QueryableByName)]
struct Movement {
    #[diesel(sql_type = Text)]
    kind: String,
    /// The payment type of the entry's order; none for entries of no order.
    #[diesel(sql_type = Nullable<Text>)]
    payment_type: Option<PaymentType>,
    #[diesel(sql_type = Numeric)]
    points: BigDecimal,
}

#[derive(QueryableByName)]
struct Sum {
    #[diesel(sql_type = Numeric)]
    points: BigDecimal,
}

#[derive(QueryableByName)]
struct Closing {
    #[diesel(sql_type = Numeric)]
    closing: BigDecimal,
    #[diesel(sql_type = Numeric)]
    outstanding: BigDecimal,
    #[diesel(sql_type = BigInt)]
    holders: i64,
    #[diesel(sql_type = Numeric)]
    negative: BigDecimal,
    #[diesel(sql_type = BigInt)]
    negative_clients: i64,
}

#[derive(Debug, thiserror::Error)]
pub enum LiabilityError {
    #[error("--from {0} is after --to {1}")]
    EmptyPeriod(NaiveDate, NaiveDate),
    #[error("the ledger holds entries of kind {0:?}, which this report does not know")]
    UnknownKind(String),
    #[error(
        "the ledger holds {kind} entries of {}, which this report cannot place (issued or transferred)",
        payment_type.as_deref().map_or("no order".to_owned(), |t| format!("orders paid by {t:?}"))
    )]
    UnplacedCredit {
        kind: &'static str,
        payment_type: Option<String>,
    },
    #[error("cannot read the ledger: {0}")]
    Database(#[from] diesel::result::Error),
}

/// The figures for `period`, all from one repeatable-read snapshot.
pub async fn report(
    conn: &mut AsyncPgConnection,
    period: Period,
) -> Result<Liability, LiabilityError> {
    if let (Some(from), Some(to)) = (period.from, period.to)
        && from > to
    {
        return Err(LiabilityError::EmptyPeriod(from, to));
    }
    let (start, end) = period.bounds();
    conn.build_transaction()
        .repeatable_read()
        .read_only()
        .run(async |conn| {
            let opening = match start {
                None => BigDecimal::zero(),
                Some(start) => {
                    diesel::sql_query(
                        "SELECT COALESCE(sum(points), 0) AS points FROM point_entries WHERE created_at < $1",
                    )
                    .bind::<Timestamptz, _>(start)
                    .get_result::<Sum>(conn)
                    .await?
                    .points
                }
            };
            let rows: Vec<Movement> = diesel::sql_query(
                "SELECT e.kind, o.payment_type, sum(e.points) AS points
                 FROM point_entries e
                 LEFT JOIN point_orders o ON o.correlation_id = e.order_correlation_id
                 WHERE ($1::timestamptz IS NULL OR e.created_at >= $1)
                   AND ($2::timestamptz IS NULL OR e.created_at < $2)
                 GROUP BY e.kind, o.payment_type",
            )
            .bind::<Nullable<Timestamptz>, _>(start)
            .bind::<Nullable<Timestamptz>, _>(end)
            .load(conn)
            .await?;
            let mut liability = Liability {
                period,
                opening,
                ..Liability::default()
            };
            for row in rows {
                let kind = Kind::parse(&row.kind).ok_or(LiabilityError::UnknownKind(row.kind))?;
                liability.add(kind, row.payment_type, row.points)?;
            }
            let closing: Closing = diesel::sql_query(
                "SELECT COALESCE(sum(b), 0) AS closing,
                        COALESCE(sum(b) FILTER (WHERE b > 0), 0) AS outstanding,
                        count(*) FILTER (WHERE b > 0) AS holders,
                        COALESCE(sum(b) FILTER (WHERE b < 0), 0) AS negative,
                        count(*) FILTER (WHERE b < 0) AS negative_clients
                 FROM (SELECT sum(points) AS b FROM point_entries
                       WHERE ($1::timestamptz IS NULL OR created_at < $1)
                       GROUP BY client_id) balances",
            )
            .bind::<Nullable<Timestamptz>, _>(end)
            .get_result(conn)
            .await?;
            Ok(Liability {
                closing: closing.closing,
                outstanding: closing.outstanding,
                holders: closing.holders,
                negative: closing.negative,
                negative_clients: closing.negative_clients,
                ..liability
            })
        })
        .await
}

/// `point-service liability [--from D] [--to D]` on the database of `database`.
pub async fn command(database: &db::PoolSettings, period: Period) -> Result<(), String> {
    let mut conn = db::connect(database)
        .await
        .map_err(|e| format!("cannot connect to the database: {e}"))?;
    let liability = report(&mut conn, period).await.map_err(|e| e.to_string())?;
    for line in liability.lines() {
        println!("{line}");
    }
    Ok(())
}
