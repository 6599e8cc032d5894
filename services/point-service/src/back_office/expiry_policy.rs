//! The expiry policy as the back office reads and replaces it (`point_settings`, the one row
//! the balance's expiry date and the nightly expiry run read, so a replacement is what they
//! use next). A replacement names the version it was made from: under the row's lock (or,
//! with no row yet, the singleton key) a stale one is refused, and the new version is the
//! sequence's next (never one handed out before, whatever a seed deleted). With its audit
//! row, in one transaction. A shortening is a super_admin's, and if the next expiry run would
//! take points under it, made only with the figures of its dry run (`dry_run`), walked just
//! before.

use ::back_office::audit::Action;
use back_office::expiry_policy::{ExpiryChange, ExpiryDryRun, ExpiryPolicy, ExpiryPolicyRefusal};
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde_json::Value;

use crate::db::schema::point_settings;
use crate::error::PointError;
use crate::expiry::preview;
use crate::expiry::rule::Policy;
use ::back_office::audit::{self, snapshot};
use back_office::access::ActingOperator;
use back_office::role::Role;

type Row = (String, Option<i32>, i32, DateTime<Utc>);

const COLUMNS: (
    point_settings::expiry,
    point_settings::inactivity_days,
    point_settings::version,
    point_settings::updated_at,
) = (
    point_settings::expiry,
    point_settings::inactivity_days,
    point_settings::version,
    point_settings::updated_at,
);

/// The policy of `row`; no row is "never set": points never expire, version 0.
fn policy(row: Option<Row>) -> ExpiryPolicy {
    match row {
        Some((expiry, inactivity_days, version, updated_at)) => ExpiryPolicy {
            // A `never` row may carry days from a fixture; they mean nothing there.
            inactivity_days: inactivity_days.filter(|_| expiry == "inactivity"),
            expiry,
            version,
            updated_at: Some(updated_at),
        },
        None => ExpiryPolicy {
            expiry: "never".to_owned(),
            inactivity_days: None,
            version: 0,
            updated_at: None,
        },
    }
}

/// What the next expiry run would take under `change`'s policy.
pub async fn dry_run(
    conn: &mut AsyncPgConnection,
    change: &ExpiryChange,
) -> QueryResult<ExpiryDryRun> {
    let policy = change
        .inactivity_days
        .and_then(|days| u64::try_from(days).ok())
        .map(Policy::after_days);
    let take = preview::next_run(conn, policy).await?;
    Ok(ExpiryDryRun {
        as_of: take.as_of,
        clients: take.clients,
        points: back_office::decimal_text(&take.points),
    })
}

pub async fn read(conn: &mut AsyncPgConnection) -> QueryResult<ExpiryPolicy> {
    let row: Option<Row> = point_settings::table
        .select(COLUMNS)
        .first(conn)
        .await
        .optional()?;
    Ok(policy(row))
}

pub async fn replace(
    conn: &mut AsyncPgConnection,
    operator: &ActingOperator,
    change: ExpiryChange,
) -> Result<ExpiryPolicy, PointError> {
    // What the next run would take, walked before the policy's lock is taken and outside the
    // change's transaction: the walk reads every holder, and nothing should wait on it.
    let current = read(conn).await?;
    let preview = match change.shortens(&current) {
        Some(_) if operator.role == Role::SuperAdmin => Some(dry_run(conn, &change).await?),
        _ => None,
    };
    let (after, shortened) = conn
        .transaction(async |conn| {
            let current: Option<Row> = point_settings::table
                .select(COLUMNS)
                .for_update()
                .first(conn)
                .await
                .optional()?;
            let before = policy(current);
            if change.version != before.version {
                return Err(ExpiryPolicyRefusal::Stale(change.version, before.version).into());
            }
            let shortened = change.shortens(&before);
            if let Some(refusal) = shortened.clone()
                && operator.role != Role::SuperAdmin
            {
                return Err(refusal.into());
            }
            if shortened.is_some() {
                // Points the next run would take: only with the dry run's figures, as of now (the
                // version checked above is the one the walk read under).
                let run = match &preview {
                    Some(run) => run.clone(),
                    None => dry_run(conn, &change).await?,
                };
                change.confirms(&run)?;
            }
            let values = (
                point_settings::expiry.eq(change.expiry),
                point_settings::inactivity_days.eq(change.inactivity_days),
                point_settings::updated_at.eq(diesel::dsl::now),
            );
            let next = diesel::dsl::sql::<diesel::sql_types::Integer>(
                "nextval('point_settings_version')::integer",
            );
            let written: Option<Row> = if before.version == 0 {
                // No row to lock: the singleton key decides between two first policies.
                diesel::insert_into(point_settings::table)
                    .values((values, point_settings::version.eq(next)))
                    .on_conflict_do_nothing()
                    .returning(COLUMNS)
                    .get_result(conn)
                    .await
                    .optional()?
            } else {
                diesel::update(point_settings::table)
                    .set((values, point_settings::version.eq(next)))
                    .returning(COLUMNS)
                    .get_result(conn)
                    .await
                    .optional()?
            };
            let Some(written) = written else {
                let now = read(conn).await?;
                return Err(ExpiryPolicyRefusal::Stale(change.version, now.version).into());
            };
            let after = policy(Some(written));
            let before_snapshot = if before.version == 0 {
                Value::Null
            } else {
                snapshot(&before)
            };
            audit::record(
                conn,
                operator,
                Action::ExpiryPolicyReplace,
                "settings:expiry",
                before_snapshot,
                snapshot(&after),
            )
            .await?;
            Ok::<_, PointError>((after, shortened.is_some().then_some(before.inactivity_days)))
        })
        .await?;
    if let Some(days_before) = shortened {
        // Counted once it is made: a stale try, a refused or failed one passed nothing.
        super::Guardrail::ExpiryShortened.passed();
        tracing::warn!(
            operator.id = %operator.id,
            expiry.days = after.inactivity_days,
            expiry.days_before = days_before,
            guardrail = super::Guardrail::ExpiryShortened.as_str(),
            "a super_admin shortened the expiry window: points expire sooner"
        );
    }
    Ok(after)
}
