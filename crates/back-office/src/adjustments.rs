//! Support's adjustments: a credit or a debit of a client's points, with a reason and a
//! reference of the operator's own. The same reference again answers the first adjustment
//! and moves nothing (a retry after a timeout is safe); with another client, amount or
//! reason it is refused. A debit never takes a balance below zero. Only super_admin may make one
//! (docs/decisions.md, "The loyalty back office").

use bigdecimal::BigDecimal;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use crate::body;

/// An adjustment, in this key order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AdjustmentRecord {
    /// The operator's reference, trimmed, in NFKC form (`body::reference`).
    pub reference: String,
    pub client_id: i64,
    /// Signed points as exact text: positive credited, negative debited.
    #[schema(format = "decimal", example = "-50")]
    pub points: String,
    pub reason: String,
    /// The token's `sub` of the operator who made it.
    pub operator_id: String,
    /// That operator's role.
    pub role: String,
    /// The client's balance right after it, as the balance answers points.
    #[schema(format = "decimal", example = "580.5")]
    pub balance_after: String,
    pub created_at: DateTime<Utc>,
}

/// The body of an adjustment: every key required.
#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
#[allow(dead_code)] // the document's view: the body is read from its JSON by `AdjustmentFields::read`
pub struct AdjustmentBody {
    /// Signed points other than 0, as text or a JSON number (read exactly): positive
    /// credits the client, negative debits.
    #[schema(format = "decimal", example = "-50")]
    points: String,
    /// Why, for the client's file (1 to 500 characters).
    #[schema(example = "mistaken gift-card credit, ticket 4411")]
    reason: String,
    /// The operator's own reference, 1 to 200 characters: sending it again (a retry) makes
    /// no second adjustment. Kept in Unicode's NFKC form, so references that read the same
    /// are one; one with a character that renders as nothing is refused.
    #[schema(example = "ticket-4411")]
    reference: String,
}

/// The keys of an adjustment's body, in the order they are checked.
pub const KEYS: [&str; 3] = ["points", "reason", "reference"];

envelope::refusals! {
    /// Why an adjustment is refused, checked in this order: the body (its form, then each key
    /// in [`KEYS`]' order), the client (`clients::ClientRefusal`), the reference, the balance.
    pub enum AdjustmentRefusal in BackOffice {
        NotAnObject => 400 "NOT_AN_OBJECT", [body::NOT_AN_OBJECT];
        UnknownKey(key: String) => 400 "UNKNOWN_FIELD", "{key} is not a field of an adjustment";
        BadPoints => 400 "INVALID_POINTS",
            "points must be a decimal other than 0 from -1000000000 to 1000000000, with at most 4 \
             decimals: positive credits the client, negative debits";
        BadReason => 400 "INVALID_REASON", "reason must be text of 1 to 500 visible characters";
        BadReference => 400 "INVALID_REFERENCE", "reference must be text of 1 to 200 visible characters";
        ReferenceUsed(reference: String) => 409 "REFERENCE_USED",
            "reference {reference} was already used for another adjustment";
        /// A debit larger than the balance.
        Overdraws(client: i64, balance: String) => 409 "OVERDRAWS_BALANCE",
            "client {client} holds {balance} points: the debit would leave a negative balance";
    }
}

/// An adjustment's body, read.
#[derive(Debug, Clone, PartialEq)]
pub struct AdjustmentFields {
    pub points: BigDecimal,
    pub reason: String,
    pub reference: String,
}

impl AdjustmentFields {
    pub fn read(body: &Value) -> Result<AdjustmentFields, AdjustmentRefusal> {
        let map = body::object(
            body,
            &KEYS,
            AdjustmentRefusal::NotAnObject,
            AdjustmentRefusal::UnknownKey,
        )?;
        let value = |key: &str| map.get(key).unwrap_or(&Value::Null);
        Ok(AdjustmentFields {
            points: body::nonzero_points(value("points")).ok_or(AdjustmentRefusal::BadPoints)?,
            reason: body::text(value("reason"), 500).ok_or(AdjustmentRefusal::BadReason)?,
            reference: body::reference(value("reference"), 200)
                .ok_or(AdjustmentRefusal::BadReference)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn each_refusal_in_its_order() {
        use AdjustmentRefusal::*;
        let long = "x".repeat(501);
        let cases = [
            (json!(null), NotAnObject),
            (json!({"points": 0, "why": "x"}), UnknownKey("why".into())),
            (json!({"points": 0, "reason": ""}), BadPoints),
            (json!({"points": "1e3"}), BadPoints),
            (json!({"reason": "x"}), BadPoints),
            (json!({"points": "-0.5", "reason": " "}), BadReason),
            (json!({"points": "-0.5", "reason": long}), BadReason),
            (
                json!({"points": 2, "reason": "x", "reference": 7}),
                BadReference,
            ),
        ];
        for (body, refusal) in cases {
            assert_eq!(AdjustmentFields::read(&body), Err(refusal), "{body}");
        }
        assert_eq!(
            AdjustmentFields::read(
                &json!({"points": -12.345, "reason": " typo ", "reference": " t-1 "})
            ),
            Ok(AdjustmentFields {
                points: "-12.345".parse().unwrap(),
                reason: "typo".into(),
                reference: "t-1".into(),
            })
        );
    }
}
