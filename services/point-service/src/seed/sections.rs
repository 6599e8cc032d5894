//! The rows of the fixture's sections as `seed` reads them, and the rules a row keeps to
//! load: amounts of points are read exactly (`9.125` is the decimal 9.125, `server::seed`)
//! and are positive where the ledger or an offer needs them so.

use std::fmt::Display;

use chrono::{DateTime, Utc};
use domain::{Money, ObjectId, Points};
use serde::Deserialize;
use server::seed::Broken;
use uuid::Uuid;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Settings {
    pub(super) expiry: Expiry,
    pub(super) inactivity_days: Option<i32>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "lowercase")]
pub(super) enum Expiry {
    Never,
    Inactivity,
}

#[derive(Deserialize)]
pub(super) struct Transaction {
    pub(super) client_id: domain::ClientId,
    pub(super) kind: Kind,
    pub(super) points: Points,
    pub(super) created_at: DateTime<Utc>,
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "lowercase")]
pub(super) enum Kind {
    Earn,
    Spend,
    Adjustment,
}

#[derive(Deserialize)]
pub(super) struct Offer {
    pub(super) id: ObjectId,
    pub(super) point_amount: Points,
    pub(super) purchased_point_amount: Option<Points>,
    pub(super) amount: Money,
    pub(super) sequence: Option<i32>,
    pub(super) legacy_id: Option<i32>,
    #[serde(default = "yes")]
    pub(super) active: bool,
    #[serde(default)]
    pub(super) deleted: bool,
}

#[derive(Deserialize)]
pub(super) struct Occasion {
    pub(super) id: ObjectId,
    pub(super) occasion_en: String,
    pub(super) occasion_ar: Option<String>,
    #[serde(default)]
    pub(super) is_custom: i16,
    #[serde(default = "yes")]
    pub(super) active: bool,
}

#[derive(Deserialize)]
pub(super) struct Faq {
    pub(super) question_en: String,
    pub(super) answer_en: String,
    pub(super) question_ar: String,
    pub(super) answer_ar: String,
}

#[derive(Deserialize)]
pub(super) struct LegacyOrder {
    pub(super) correlation_id: Uuid,
    pub(super) payer_id: domain::ClientId,
    pub(super) recipient_id: domain::ClientId,
    pub(super) status: String,
    pub(super) payment_status: Option<String>,
    pub(super) point_amount: Points,
    pub(super) purchased_point_amount: Option<Points>,
    pub(super) money_amount: Money,
    pub(super) payment_type: String,
    pub(super) order_type: String,
}

fn yes() -> bool {
    true
}

/// Refuses zero and negative amounts of points.
fn positive(field: &'static str, points: &Points) -> Result<(), Broken> {
    if points.is_negative() || *points == Points::zero() {
        return Err((
            field,
            format!("must be a positive number of points, got {}", Exact(points)),
        ));
    }
    Ok(())
}

/// An offer's or an order's points, and its price in points when it has one: both positive.
fn amounts(point_amount: &Points, purchased_point_amount: Option<&Points>) -> Result<(), Broken> {
    positive("point_amount", point_amount)?;
    purchased_point_amount.map_or(Ok(()), |price| positive("purchased_point_amount", price))
}

impl Transaction {
    pub(super) fn check(&self) -> Result<(), Broken> {
        match self.kind {
            Kind::Earn | Kind::Spend => positive("points", &self.points),
            Kind::Adjustment => Ok(()),
        }
    }
}

impl Offer {
    pub(super) fn check(&self) -> Result<(), Broken> {
        amounts(&self.point_amount, self.purchased_point_amount.as_ref())
    }
}

impl Occasion {
    pub(super) fn check(&self) -> Result<(), Broken> {
        if !matches!(self.is_custom, 0 | 1) {
            return Err((
                "is_custom",
                format!("must be 0 or 1, got {}", self.is_custom),
            ));
        }
        Ok(())
    }
}

impl LegacyOrder {
    pub(super) fn check(&self) -> Result<(), Broken> {
        amounts(&self.point_amount, self.purchased_point_amount.as_ref())
    }
}

/// For the report's `got …`: points as their exact decimal.
struct Exact<'a>(&'a Points);

impl Display for Exact<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.as_decimal().normalized().to_plain_string())
    }
}
