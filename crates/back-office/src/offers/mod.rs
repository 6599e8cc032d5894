//! Offers: what the app sells. The back office lists them all (on sale or not, withdrawn
//! ones last), creates them (the service assigns the 24-hex id), changes them and withdraws
//! them; the app's `GET /point-offers` lists the active ones not withdrawn, from the same
//! rows, so a change is what it lists next.

use bigdecimal::BigDecimal;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use crate::body;

pub mod limit;

/// An offer as the back office sees it, in this key order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OfferRecord {
    /// 24 hex characters, lower case.
    pub id: String,
    /// Points the recipient gets: an exact decimal as text (`"100"`, `"12.5"`).
    #[schema(format = "decimal", example = "100")]
    pub point_amount: String,
    /// Points the payer is charged when paying with points, as text; null when the offer
    /// cannot be paid with points. Never below `pointAmount`.
    #[schema(format = "decimal", example = "120", required)]
    pub purchased_point_amount: Option<String>,
    /// SAR, exactly two decimals (`"15.00"`).
    #[schema(format = "decimal", example = "15.00")]
    pub amount: String,
    /// The app lists offers by sequence (null last), then by id.
    #[schema(required)]
    pub sequence: Option<i32>,
    /// On sale: listed by the app and open to orders.
    pub active: bool,
    /// Withdrawn: never on sale again, kept for the orders that name it.
    pub withdrawn: bool,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// Every offer, on sale or not.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct OfferList {
    pub data: Vec<OfferRecord>,
}

/// The body of a create. Decimals may be sent as text or as JSON numbers, read exactly.
#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
#[allow(dead_code)] // the document's view: the body is read from its JSON by `OfferFields::read`
pub struct OfferCreateBody {
    /// Points the recipient gets.
    #[schema(format = "decimal", example = "100")]
    point_amount: String,
    /// Points the payer is charged with `point`; null or absent: not sold for points. Not
    /// below `pointAmount`.
    #[schema(format = "decimal", example = "120")]
    purchased_point_amount: Option<String>,
    /// SAR, at most two decimals.
    #[schema(format = "decimal", example = "15.00")]
    amount: String,
    /// The app's order; null or absent: after those with one.
    sequence: Option<i32>,
    /// Default true.
    #[schema(nullable = false)]
    active: Option<bool>,
}

/// The body of a change: the keys sent, at least one (null only where a create takes null).
#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
#[allow(dead_code)] // the document's view: the body is read from its JSON by `OfferFields::read`
pub struct OfferChangeBody {
    #[schema(format = "decimal", example = "100", nullable = false)]
    point_amount: Option<String>,
    #[schema(format = "decimal", example = "120")]
    purchased_point_amount: Option<String>,
    #[schema(format = "decimal", example = "15.00", nullable = false)]
    amount: Option<String>,
    sequence: Option<i32>,
    #[schema(nullable = false)]
    active: Option<bool>,
}

/// The keys of an offer's body, in the order they are checked.
pub const KEYS: [&str; 5] = [
    "pointAmount",
    "purchasedPointAmount",
    "amount",
    "sequence",
    "active",
];

envelope::refusals! {
    /// Why an offer's change is refused, checked in this order: the body (its form, then
    /// each key in [`KEYS`]' order, then the keys a create needs, then the points price),
    /// then the offer, then (an admin's) the programme's points per SAR ([`limit`]).
    pub enum OfferRefusal in BackOffice {
        NotAnObject => 400 "NOT_AN_OBJECT", [body::NOT_AN_OBJECT];
        UnknownKey(key: String) => 400 "UNKNOWN_FIELD", "{key} is not a field of an offer";
        NothingToChange => 400 "NOTHING_TO_CHANGE", "the body names no field to change";
        BadPoints(key: &'static str) => 400 "INVALID_POINT_AMOUNT",
            "{key} must be a positive decimal, at most 1000000000, with at most 4 decimals";
        BadPurchasedPoints => 400 "INVALID_PURCHASED_POINT_AMOUNT",
            "purchasedPointAmount must be null or a positive decimal, at most 1000000000, with at most 4 decimals";
        BadAmount => 400 "INVALID_AMOUNT", "amount must be SAR from 0 to 9999999999.99 with at most two decimals";
        BadSequence => 400 "INVALID_SEQUENCE", "sequence must be an integer or null";
        BadActive => 400 "INVALID_ACTIVE", "active must be true or false";
        Missing(key: &'static str) => 400 "FIELD_REQUIRED", "{key} is required";
        /// A points price below what the offer gives would let two clients buy it for each
        /// other, back and forth, and grow their points without end.
        Mints => 400 "OFFER_MINTS_POINTS",
            "purchasedPointAmount must not be below pointAmount: the offer would mint points";
        UnknownOffer(id: String) => 404 "OFFER_NOT_FOUND", "offer {id} not found";
        Withdrawn(id: String) => 409 "OFFER_WITHDRAWN", "offer {id} was withdrawn and cannot change";
        /// More points per SAR than an admin may give ([`limit`]); a super_admin may.
        AboveLimit(points: String, amount: String, limit: String) => 403 "OFFER_ABOVE_POINTS_LIMIT",
            "an offer of {points} points for {amount} SAR gives more points per SAR than the {limit} \
             an admin may give; a super_admin may";
        /// No limit to hold an admin's offer to: none set, and no offer seeded to take it from.
        NoLimit => 403 "OFFER_POINTS_LIMIT_UNSET",
            "no limit of points per SAR is set (OFFER_MAX_POINTS_PER_SAR) or seeded: only a \
             super_admin may make or raise an offer";
    }
}

/// What a body sets; `None` leaves a value as it is (on create, its default).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OfferFields {
    pub point_amount: Option<BigDecimal>,
    pub purchased_point_amount: Option<Option<BigDecimal>>,
    pub amount: Option<BigDecimal>,
    pub sequence: Option<Option<i32>>,
    pub active: Option<bool>,
}

/// An offer's values as they are, or will be after a change.
#[derive(Debug, Clone, PartialEq)]
pub struct OfferValues {
    pub point_amount: BigDecimal,
    pub purchased_point_amount: Option<BigDecimal>,
    pub amount: BigDecimal,
    pub sequence: Option<i32>,
    pub active: bool,
}

impl OfferFields {
    /// Reads a create's body (`create`) or a change's.
    pub fn read(body: &Value, create: bool) -> Result<OfferFields, OfferRefusal> {
        let map = body::object(
            body,
            &KEYS,
            OfferRefusal::NotAnObject,
            OfferRefusal::UnknownKey,
        )?;
        if !create && map.is_empty() {
            return Err(OfferRefusal::NothingToChange);
        }
        let mut fields = OfferFields::default();
        if let Some(value) = map.get("pointAmount") {
            fields.point_amount =
                Some(body::positive_points(value).ok_or(OfferRefusal::BadPoints("pointAmount"))?);
        }
        if let Some(value) = map.get("purchasedPointAmount") {
            fields.purchased_point_amount = Some(match value {
                Value::Null => None,
                value => {
                    Some(body::positive_points(value).ok_or(OfferRefusal::BadPurchasedPoints)?)
                }
            });
        }
        if let Some(value) = map.get("amount") {
            fields.amount = Some(
                body::amount(value)
                    .ok_or(OfferRefusal::BadAmount)?
                    .as_decimal()
                    .clone(),
            );
        }
        if let Some(value) = map.get("sequence") {
            fields.sequence = Some(match value {
                Value::Null => None,
                value => Some(
                    value
                        .as_i64()
                        .and_then(|n| i32::try_from(n).ok())
                        .ok_or(OfferRefusal::BadSequence)?,
                ),
            });
        }
        if let Some(value) = map.get("active") {
            fields.active = Some(value.as_bool().ok_or(OfferRefusal::BadActive)?);
        }
        if create {
            for (key, present) in [
                ("pointAmount", fields.point_amount.is_some()),
                ("amount", fields.amount.is_some()),
            ] {
                if !present {
                    return Err(OfferRefusal::Missing(key));
                }
            }
        }
        Ok(fields)
    }

    /// A new offer's values: the body's, with the defaults (no points price, no sequence,
    /// on sale); `read(_, true)` made sure of the required ones.
    pub fn created(self) -> Result<OfferValues, OfferRefusal> {
        let values = OfferValues {
            point_amount: self
                .point_amount
                .ok_or(OfferRefusal::Missing("pointAmount"))?,
            purchased_point_amount: self.purchased_point_amount.flatten(),
            amount: self.amount.ok_or(OfferRefusal::Missing("amount"))?,
            sequence: self.sequence.flatten(),
            active: self.active.unwrap_or(true),
        };
        values.check_price()?;
        Ok(values)
    }

    /// `current` with this change applied.
    pub fn applied_to(self, current: &OfferValues) -> Result<OfferValues, OfferRefusal> {
        let values = OfferValues {
            point_amount: self
                .point_amount
                .unwrap_or_else(|| current.point_amount.clone()),
            purchased_point_amount: self
                .purchased_point_amount
                .unwrap_or_else(|| current.purchased_point_amount.clone()),
            amount: self.amount.unwrap_or_else(|| current.amount.clone()),
            sequence: self.sequence.unwrap_or(current.sequence),
            active: self.active.unwrap_or(current.active),
        };
        values.check_price()?;
        Ok(values)
    }
}

impl OfferValues {
    /// The points price is refused, not warned about, when it is below what the offer
    /// gives: such an offer bought with points by two clients for each other, back and
    /// forth, creates points each time (docs/decisions.md, "The loyalty back office").
    fn check_price(&self) -> Result<(), OfferRefusal> {
        match &self.purchased_point_amount {
            Some(price) if *price < self.point_amount => Err(OfferRefusal::Mints),
            _ => Ok(()),
        }
    }
}

/// What an offer's trail rows name before its id (`offer:<id>`).
pub const SUBJECT_PREFIX: &str = "offer:";

impl crate::audit::Audited for OfferRecord {
    fn subject(&self) -> String {
        format!("{SUBJECT_PREFIX}{}", self.id)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn read(body: Value, create: bool) -> Result<OfferFields, OfferRefusal> {
        OfferFields::read(&body, create)
    }

    #[test]
    fn each_refusal_in_its_order() {
        use OfferRefusal::*;
        let cases = [
            (json!([]), true, NotAnObject),
            (
                json!({"pointAmount": "x", "price": 1}),
                true,
                UnknownKey("price".into()),
            ),
            (json!({}), false, NothingToChange),
            (
                json!({"pointAmount": "0", "amount": "x"}),
                true,
                BadPoints("pointAmount"),
            ),
            (
                json!({"purchasedPointAmount": -1, "amount": "x"}),
                true,
                BadPurchasedPoints,
            ),
            (json!({"amount": "1.001", "sequence": "1"}), true, BadAmount),
            (json!({"sequence": 2_147_483_648_i64}), false, BadSequence),
            (json!({"sequence": 1.5}), false, BadSequence),
            (json!({"active": "true"}), false, BadActive),
            (json!({"amount": "1"}), true, Missing("pointAmount")),
            (json!({"pointAmount": 1}), true, Missing("amount")),
        ];
        for (body, create, refusal) in cases {
            assert_eq!(read(body.clone(), create), Err(refusal), "{body}");
        }
    }

    #[test]
    fn a_points_price_below_what_the_offer_gives_is_refused_on_create_and_on_change() {
        let created = |body: Value| read(body, true).and_then(OfferFields::created);
        assert_eq!(
            created(json!({"pointAmount": "100", "purchasedPointAmount": "99.99", "amount": 1})),
            Err(OfferRefusal::Mints)
        );
        let offer =
            created(json!({"pointAmount": "100", "purchasedPointAmount": "100", "amount": "15"}))
                .unwrap();
        assert!(offer.active);
        assert_eq!(offer.sequence, None);
        // Raising what it gives above its price is the same mint.
        assert_eq!(
            read(json!({"pointAmount": "100.0001"}), false)
                .and_then(|change| change.applied_to(&offer)),
            Err(OfferRefusal::Mints)
        );
        // No points price cannot mint.
        let unpriced = read(
            json!({"purchasedPointAmount": null, "pointAmount": 500}),
            false,
        )
        .and_then(|change| change.applied_to(&offer))
        .unwrap();
        assert_eq!(unpriced.purchased_point_amount, None);
        assert_eq!(unpriced.amount, offer.amount);
    }
}
