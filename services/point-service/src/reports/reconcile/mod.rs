//! `point-service reconcile [--date YYYY-MM-DD]`, the daily settlement check (docs/design.md,
//! "Payment service"): a UTC day's captures at the payment service against the ledger's card
//! credits. Every capture of the day is credited or listed for refund, every credit applied
//! that day has its capture in that day's settlement or the day before's, amounts and
//! currencies agree, and no payment is credited twice. Each difference is one line on
//! stdout; the outcome is written to `settlement_checks`, which every replica exports as
//! gauges (`payments::sync::gauges`).
//!
//! Both days' settlements are read whole, every page, before the database is opened: no
//! connection waits on the payment service. A page that cannot be read concludes nothing.

mod compare;

use std::collections::HashSet;
use std::process::ExitCode;
use std::time::Duration;

use chrono::{NaiveDate, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use server::Env;

pub use compare::{Credit, Difference, Kind, Ledger, Report, compare};

use crate::db::schema::{payment_events, unapplied_captures};
use crate::payments::client::{PaymentClient, Settled};

/// Exit code of a day that differs.
pub const DIFFERS: u8 = 1;
/// Exit code of a check that concluded nothing (settlement or database unreadable), or of
/// bad arguments or configuration.
pub const UNCONCLUDED: u8 = 2;

/// The payment service, as the check reads it: the two variables of `config.rs`, without the
/// service's secrets.
#[derive(Debug, Clone)]
pub struct Settings {
    /// `PAYMENT_SERVICE_URL`, required here.
    pub url: String,
    /// `PAYMENT_SERVICE_TIMEOUT_MS`, the bound on each page's call.
    pub timeout: Duration,
}

impl Settings {
    pub fn from_env(env: &mut Env) -> Self {
        if env.optional("PAYMENT_SERVICE_URL").is_none() {
            env.error("PAYMENT_SERVICE_URL is required but not set");
        }
        let url = env.url("PAYMENT_SERVICE_URL").unwrap_or_default();
        let timeout = env.millis_or(
            "PAYMENT_SERVICE_TIMEOUT_MS",
            Duration::from_millis(10_000),
            100..=120_000,
        );
        Self { url, timeout }
    }

    /// From the process's environment; on a problem, each on stderr and the exit code 2.
    pub fn from_process() -> Result<Self, ExitCode> {
        let mut env = Env::from_process();
        let settings = Self::from_env(&mut env);
        env.finish(settings).map_err(|e| {
            for line in e.0 {
                eprintln!("{}: configuration error: {line}", crate::SERVICE);
            }
            ExitCode::from(UNCONCLUDED)
        })
    }
}

/// The outcome column of `settlement_checks`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Agrees,
    Differs,
    Unreadable,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Agrees => "agrees",
            Outcome::Differs => "differs",
            Outcome::Unreadable => "unreadable",
        }
    }
}

/// A settlement that could not be read whole.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the settlement of {day} cannot be read (page {page}): {reason}")]
pub struct Unreadable {
    pub day: NaiveDate,
    pub page: usize,
    pub reason: String,
}

/// Every page of `day`'s settlement, in the order served.
pub async fn settlement(
    client: &PaymentClient,
    day: NaiveDate,
) -> Result<Vec<Settled>, Unreadable> {
    let mut captures = Vec::new();
    let mut cursor: Option<String> = None;
    let mut cursors = HashSet::new();
    for page in 1.. {
        let unreadable = |reason: String| Unreadable { day, page, reason };
        let answer = client
            .settlement_page(day, cursor.as_deref())
            .await
            .map_err(|e| unreadable(e.to_string()))?;
        captures.extend(answer.data);
        match answer.next {
            None => break,
            Some(next) if !cursors.insert(next.clone()) => {
                return Err(unreadable(format!(
                    "the payment service gave the cursor {next:?} again"
                )));
            }
            Some(next) => cursor = Some(next),
        }
    }
    Ok(captures)
}

/// `day`'s settlement and the day before's, each whole.
pub async fn settlements(
    client: &PaymentClient,
    day: NaiveDate,
) -> Result<(Vec<Settled>, Vec<Settled>), Unreadable> {
    let settled = settlement(client, day).await?;
    let before = match day.pred_opt() {
        Some(before) => settlement(client, before).await?,
        None => Vec::new(),
    };
    Ok((settled, before))
}

/// The credits and listings that bear on `day`, given the payments of its settlement.
pub async fn ledger(
    conn: &mut AsyncPgConnection,
    day: NaiveDate,
    settled: &[Settled],
) -> QueryResult<Ledger> {
    let (start, end) = compare::bounds(day);
    let ids: Vec<&str> = settled.iter().map(|s| s.id.as_str()).collect();
    // The payments credited that day, so that each one's other credits, on any day, are
    // read too: a payment credited twice is found by the run of either credit's day.
    let that_day = diesel::alias!(payment_events as that_day);
    let credited_that_day = that_day
        .filter(that_day.field(payment_events::kind).eq("payment_captured"))
        .filter(that_day.field(payment_events::outcome).eq("captured"))
        .filter(that_day.field(payment_events::received_at).ge(start))
        .filter(that_day.field(payment_events::received_at).lt(end))
        .select(that_day.field(payment_events::payment_id));
    let credits = payment_events::table
        .filter(payment_events::kind.eq("payment_captured"))
        .filter(payment_events::outcome.eq("captured"))
        .filter(
            payment_events::payment_id
                .eq_any(&ids)
                .or(payment_events::payment_id.eq_any(credited_that_day))
                .or(payment_events::received_at
                    .ge(start)
                    .and(payment_events::received_at.lt(end))
                    .nullable()),
        )
        .order((payment_events::received_at, payment_events::id))
        .select((
            payment_events::id,
            payment_events::reference,
            payment_events::payment_id,
            payment_events::amount_minor,
            payment_events::currency,
            payment_events::received_at,
        ))
        .load(conn)
        .await?;
    let listed: Vec<Option<String>> = unapplied_captures::table
        .filter(unapplied_captures::payment_id.eq_any(&ids))
        .select(unapplied_captures::payment_id)
        .load(conn)
        .await?;
    Ok(Ledger {
        credits,
        listed: listed.into_iter().flatten().collect(),
    })
}

/// Writes the run's outcome for `day`: the latest run of a day replaces the one before,
/// except that a run that could not read the settlement never replaces one that concluded
/// (a day found differing stays so until a run concludes otherwise).
pub async fn record(
    conn: &mut AsyncPgConnection,
    day: NaiveDate,
    outcome: Outcome,
    differences: usize,
) -> QueryResult<()> {
    let differences = i32::try_from(differences).unwrap_or(i32::MAX);
    diesel::sql_query(
        "INSERT INTO settlement_checks (day, outcome, differences) VALUES ($1, $2, $3) \
         ON CONFLICT (day) DO UPDATE \
         SET checked_at = now(), outcome = EXCLUDED.outcome, differences = EXCLUDED.differences \
         WHERE EXCLUDED.outcome <> 'unreadable' OR settlement_checks.outcome = 'unreadable'",
    )
    .bind::<diesel::sql_types::Date, _>(day)
    .bind::<diesel::sql_types::Text, _>(outcome.as_str())
    .bind::<diesel::sql_types::Integer, _>(differences)
    .execute(conn)
    .await?;
    Ok(())
}

/// Yesterday by the UTC clock: the latest day whose settlement is whole.
pub fn yesterday() -> NaiveDate {
    let today = Utc::now().date_naive();
    today.pred_opt().unwrap_or(today)
}

/// `point-service reconcile`: checks `day` (default yesterday, UTC), prints one line per
/// difference and the summary, records the outcome. Exit 0 agrees, 1 differs, 2 nothing
/// concluded (the reason on stderr).
pub async fn command(
    database: &db::PoolSettings,
    settings: &Settings,
    day: Option<NaiveDate>,
) -> ExitCode {
    let day = day.unwrap_or_else(yesterday);
    let today = Utc::now().date_naive();
    if day > today {
        eprintln!(
            "{}: --date {day} has not begun (the UTC date is {today})",
            crate::SERVICE
        );
        return ExitCode::from(UNCONCLUDED);
    }
    if day == today {
        // Allowed (a soak checks the day it ran), but only what is settled so far is read.
        eprintln!(
            "{}: --date {day} is today (UTC): its settlement so far is checked; run it again once the day is over",
            crate::SERVICE
        );
    }
    let http =
        match telemetry::client::http_client(settings.timeout, telemetry::client::DEFAULT_IDLE) {
            Ok(http) => http,
            Err(e) => return unconcluded(&format!("cannot build the HTTP client: {e}")),
        };
    let client = PaymentClient::new(Some(settings.url.clone()), http);
    let read = settlements(&client, day).await;
    let mut conn = match db::connect(database).await {
        Ok(conn) => conn,
        Err(e) => {
            if let Err(unreadable) = &read {
                eprintln!("{}: {unreadable}", crate::SERVICE);
            }
            return unconcluded(&format!("cannot connect to the database: {e}"));
        }
    };
    let (settled, before) = match read {
        Ok(read) => read,
        Err(unreadable) => {
            tracing::error!(
                settlement.day = %day, error.message = %unreadable,
                "reconcile: settlement unreadable, nothing concluded"
            );
            if let Err(e) = record(&mut conn, day, Outcome::Unreadable, 0).await {
                eprintln!("{}: cannot record the outcome: {e}", crate::SERVICE);
            }
            eprintln!("{}: {unreadable}; nothing concluded", crate::SERVICE);
            return ExitCode::from(UNCONCLUDED);
        }
    };
    let report = match ledger(&mut conn, day, &settled).await {
        Ok(ledger) => compare(day, &settled, &before, &ledger),
        Err(e) => return unconcluded(&format!("cannot read the ledger: {e}")),
    };
    let n = report.differences.len();
    let outcome = if n == 0 {
        Outcome::Agrees
    } else {
        Outcome::Differs
    };
    if let Err(e) = record(&mut conn, day, outcome, n).await {
        return unconcluded(&format!("cannot record the outcome: {e}"));
    }
    for difference in &report.differences {
        println!("{}", difference.line());
    }
    let summary = report.summary(day);
    println!("{summary}");
    if n == 0 {
        tracing::info!(settlement.day = %day, "reconcile: {summary}");
        ExitCode::SUCCESS
    } else {
        tracing::warn!(settlement.day = %day, differences = n, "reconcile: {summary}");
        ExitCode::from(DIFFERS)
    }
}

/// A check that could not run: the reason logged and on stderr, exit 2.
fn unconcluded(reason: &str) -> ExitCode {
    tracing::error!(error.message = %reason, "reconcile: nothing concluded");
    eprintln!("{}: {reason}; nothing concluded", crate::SERVICE);
    ExitCode::from(UNCONCLUDED)
}
