//! `point-service liability`: the points the programme owes, for finance, from the ledger's
//! entries alone (not the cached balances), in one snapshot.
//!
//! For a period of Riyadh dates (both included; an open end is the ledger's first or last
//! entry): the balances at its start, the movements inside it by kind, and the balances at
//! its end, split into what clients hold (positive balances, and how many clients hold
//! them) and what they owe (negative balances). Amounts are points text, as the balance
//! answers them. The figures roll forward:
//! `closing = opening + issued total - spent - gifted - expired + adjusted`.

use std::collections::BTreeMap;

use bigdecimal::{BigDecimal, Zero};
use chrono::{DateTime, NaiveDate, Utc};
use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Nullable, Numeric, Text, Timestamptz};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::Points;

use crate::ledger::Kind;
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

/// The report's figures (positive amounts for what left balances: spent, gifted, expired).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Liability {
    pub period: Period,
    /// The sum of all balances when the period starts.
    pub opening: BigDecimal,
    /// Each kind's signed sum over the period (kinds with no entry are absent).
    pub movements: BTreeMap<&'static str, BigDecimal>,
    /// The sum of all balances when the period ends.
    pub closing: BigDecimal,
    /// Positive balances at the end, and the clients holding them.
    pub outstanding: BigDecimal,
    pub holders: i64,
    /// Negative balances at the end (a negative sum), and the clients below zero.
    pub negative: BigDecimal,
    pub negative_clients: i64,
}

/// Kinds that bring points in, as `issued` lists them.
pub const ISSUED: [Kind; 4] = [
    Kind::Earn,
    Kind::Purchase,
    Kind::GiftReceived,
    Kind::GiftCardCredit,
];

impl Liability {
    /// A kind's signed sum over the period.
    pub fn movement(&self, kind: Kind) -> BigDecimal {
        self.movements
            .get(kind.as_str())
            .cloned()
            .unwrap_or_default()
    }

    pub fn issued(&self) -> BigDecimal {
        ISSUED.iter().map(|kind| self.movement(*kind)).sum()
    }

    /// The report, tab-separated: `section<TAB>name<TAB>value`.
    pub fn lines(&self) -> Vec<String> {
        let text = |points: &BigDecimal| Points::new(points.clone()).to_text();
        let date = |date: Option<NaiveDate>| date.map_or("-".to_owned(), riyadh::text);
        let mut lines = vec![
            format!("period\tfrom\t{}", date(self.period.from)),
            format!("period\tto\t{}", date(self.period.to)),
            format!("opening\tbalance\t{}", text(&self.opening)),
        ];
        for kind in ISSUED {
            lines.push(format!(
                "issued\t{}\t{}",
                kind.as_str(),
                text(&self.movement(kind))
            ));
        }
        lines.push(format!("issued\ttotal\t{}", text(&self.issued())));
        for (section, kind) in [
            ("spent", Kind::Spend),
            ("gifted", Kind::GiftSent),
            ("expired", Kind::Expiry),
        ] {
            lines.push(format!(
                "{section}\t{}\t{}",
                kind.as_str(),
                text(&-self.movement(kind))
            ));
        }
        lines.extend([
            format!(
                "adjusted\tadjustment\t{}",
                text(&self.movement(Kind::Adjustment))
            ),
            format!("closing\tbalance\t{}", text(&self.closing)),
            format!("outstanding\tpoints\t{}", text(&self.outstanding)),
            format!("outstanding\tclients\t{}", self.holders),
            format!("negative\tpoints\t{}", text(&self.negative)),
            format!("negative\tclients\t{}", self.negative_clients),
        ]);
        lines
    }
}

#[derive(QueryableByName)]
struct Movement {
    #[diesel(sql_type = Text)]
    kind: String,
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
                "SELECT kind, sum(points) AS points FROM point_entries
                 WHERE ($1::timestamptz IS NULL OR created_at >= $1)
                   AND ($2::timestamptz IS NULL OR created_at < $2)
                 GROUP BY kind",
            )
            .bind::<Nullable<Timestamptz>, _>(start)
            .bind::<Nullable<Timestamptz>, _>(end)
            .load(conn)
            .await?;
            let mut movements = BTreeMap::new();
            for row in rows {
                let kind = Kind::parse(&row.kind).ok_or(LiabilityError::UnknownKind(row.kind))?;
                movements.insert(kind.as_str(), row.points);
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
                period,
                opening,
                movements,
                closing: closing.closing,
                outstanding: closing.outstanding,
                holders: closing.holders,
                negative: closing.negative,
                negative_clients: closing.negative_clients,
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
