//! Gift-code batches: codes issued at once for a campaign or a print run, each worth the
//! same points, redeemed by the app's gift-card route (a code once, ever). The order service
//! keeps them (the `catalog` database); only super_admin issues, reads or withdraws them: an
//! unused code is a bearer voucher, so whoever reads it holds its points (docs/decisions.md,
//! "The loyalty back office").
//!
//! A code is `<prefix>-` (when the batch has a prefix) and [`RANDOM_GROUPS`] groups of
//! [`GROUP_LENGTH`] symbols drawn from [`ALPHABET`] by a cryptographic generator: 80 random
//! bits, so that the wrong-code limits leave guessing hopeless (the arithmetic is in
//! docs/decisions.md).

use chrono::{DateTime, DurationRound, TimeDelta, Timelike, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use crate::body;

/// The symbols of a code's random part: Crockford's base 32 (digits and capitals without
/// I, L, O and U, which read as 1, 1, 0 and V), so a printed code is typed back right.
pub const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
/// Groups of the random part, joined by `-`.
pub const RANDOM_GROUPS: usize = 4;
/// Symbols per group: 4 groups of 4 symbols of 5 bits are 80 random bits.
pub const GROUP_LENGTH: usize = 4;
/// The most codes one batch issues: a print run, not a database dump.
pub const MAX_COUNT: i64 = 10_000;
/// The longest prefix.
pub const MAX_PREFIX: usize = 12;

/// A batch as the back office answers it, in this key order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = GiftCodeBatch)]
pub struct BatchRecord {
    pub id: i64,
    /// The issuer's reference, trimmed, in NFKC form (`body::reference`).
    pub reference: String,
    /// How many codes it issued.
    pub count: i32,
    /// The points each code credits, as exact text.
    #[schema(format = "decimal", example = "100")]
    pub points: String,
    /// What each code begins with, before `-`; null for none.
    #[schema(required)]
    pub prefix: Option<String>,
    /// When its codes stop being redeemable; null for never.
    #[schema(required)]
    pub expires_at: Option<DateTime<Utc>>,
    /// The token's `sub` of the operator who issued it.
    pub created_by: String,
    pub created_at: DateTime<Utc>,
    /// Its codes by state, now.
    pub codes: CodeCounts,
}

/// How many of a batch's codes are in each state.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = GiftCodeCounts)]
pub struct CodeCounts {
    pub unused: i64,
    pub being_credited: i64,
    pub credited: i64,
    pub withdrawn: i64,
    pub expired: i64,
}

db::text_enum! {
    /// A code's state, as the answers and the catalog's `gift_card_code_states` view write
    /// it. A word the code does not know is an error, never a default: a code read as
    /// `unused` by mistake would be exported as a voucher.
    pub enum CodeState as "GiftCodeState", "A code's state." {
        /// Nobody redeemed it; redeemable.
        Unused => "unused",
        /// Redeemed; its credit is being sent (or retried) to where the points go.
        BeingCredited => "being_credited",
        /// Redeemed and credited.
        Credited => "credited",
        /// Withdrawn unused: the app answers 404 for it.
        Withdrawn => "withdrawn",
        /// Expired unused: the app answers 404 for it.
        Expired => "expired",
    }
}

/// One code of a batch, in this key order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = GiftCode)]
pub struct CodeRecord {
    pub code: String,
    pub state: CodeState,
    /// The client who redeemed it; null while nobody did.
    #[schema(required)]
    pub client_id: Option<i64>,
    /// When it was redeemed; null while it was not.
    #[schema(required)]
    pub redeemed_at: Option<DateTime<Utc>>,
    /// When its points were credited; null until they were.
    #[schema(required)]
    pub credited_at: Option<DateTime<Utc>>,
}

/// A page of the batches, newest first.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = GiftCodeBatchList)]
pub struct BatchList {
    pub data: Vec<BatchRecord>,
    pub meta: domain::PageMeta,
}

/// A batch with each of its codes, in code order.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[schema(as = GiftCodeBatchCodes)]
pub struct BatchCodes {
    pub batch: BatchRecord,
    pub codes: Vec<CodeRecord>,
}

/// The body of a batch: `reference`, `count` and `points` required; `prefix` and
/// `expiresAt` may be left out or null.
#[derive(ToSchema)]
#[schema(rename_all = "camelCase", as = GiftCodeBatchBody)]
#[allow(dead_code)] // the document's view: the body is read from its JSON by `BatchFields::read`
pub struct BatchBody {
    /// The issuer's own reference (1 to 200 characters): sending the batch again with it
    /// answers the first batch and issues nothing. Kept in Unicode's NFKC form, so references
    /// that read the same are one; one with a character that renders as nothing is refused.
    #[schema(example = "ramadan-2027-print")]
    reference: String,
    /// How many codes, 1 to 10000.
    count: i32,
    /// The points each code credits, above 0, at most 4 decimals, as text or a JSON number.
    #[schema(format = "decimal", example = "100")]
    points: String,
    /// 1 to 12 capital letters and digits that each code begins with.
    #[schema(example = "RMDN")]
    prefix: Option<String>,
    /// When the codes stop being redeemable, with its offset, in the future.
    expires_at: Option<DateTime<Utc>>,
}

/// The keys of a batch's body, in the order they are checked.
pub const KEYS: [&str; 5] = ["reference", "count", "points", "prefix", "expiresAt"];

envelope::refusals! {
    /// Why a batch is not issued, checked in this order: the body (its form, then each key in
    /// [`KEYS`]' order), then the reference, then (a new batch) that `expiresAt` is to come.
    pub enum BatchRefusal in BackOffice {
        NotAnObject => 400 "NOT_AN_OBJECT", [body::NOT_AN_OBJECT];
        UnknownKey(key: String) => 400 "UNKNOWN_FIELD", "{key} is not a field of a gift-code batch";
        BadReference => 400 "INVALID_REFERENCE", "reference must be text of 1 to 200 visible characters";
        BadCount => 400 "INVALID_COUNT", "count must be an integer from 1 to 10000";
        BadPoints => 400 "INVALID_POINTS",
            "points must be a decimal above 0 and at most 1000000000, with at most 4 decimals";
        BadPrefix => 400 "INVALID_PREFIX", "prefix must be null or 1 to 12 capital letters and digits";
        BadExpiry => 400 "INVALID_EXPIRES_AT",
            "expiresAt must be null or a date-time with its offset (RFC 3339) in the future";
        ReferenceUsed(reference: String) => 409 "REFERENCE_USED",
            "reference {reference} was already used for another batch";
    }
}

envelope::refusals! {
    /// Why a batch cannot be read or changed.
    pub enum BatchLookupRefusal in BackOffice {
        /// No batch has the id (or it is not a positive integer), as sent.
        UnknownBatch(id: String) => 404 "BATCH_NOT_FOUND", "gift-code batch {id} does not exist";
    }
}

/// A batch's body, read.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchFields {
    pub reference: String,
    pub count: i32,
    pub points: bigdecimal::BigDecimal,
    pub prefix: Option<String>,
    pub expires_at: Option<DateTime<Utc>>,
}

impl BatchFields {
    /// Reads a batch's body. `expiresAt` is kept to the microsecond, as the database keeps
    /// it (so that the same body again is the same batch); whether it is in the future is
    /// [`BatchFields::check_future`]'s, asked of a new batch only (a retry after the time
    /// passed still answers the batch it made).
    pub fn read(body: &Value) -> Result<BatchFields, BatchRefusal> {
        let map = body::object(
            body,
            &KEYS,
            BatchRefusal::NotAnObject,
            BatchRefusal::UnknownKey,
        )?;
        let null = Value::Null;
        let field = |key: &str| map.get(key).unwrap_or(&null);
        let reference =
            body::reference(field("reference"), 200).ok_or(BatchRefusal::BadReference)?;
        let count = field("count")
            .as_i64()
            .filter(|count| (1..=MAX_COUNT).contains(count))
            .and_then(|count| i32::try_from(count).ok())
            .ok_or(BatchRefusal::BadCount)?;
        let points = body::positive_points(field("points")).ok_or(BatchRefusal::BadPoints)?;
        let prefix = match field("prefix") {
            Value::Null => None,
            Value::String(prefix)
                if (1..=MAX_PREFIX).contains(&prefix.len())
                    && prefix
                        .bytes()
                        .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit()) =>
            {
                Some(prefix.clone())
            }
            _ => return Err(BatchRefusal::BadPrefix),
        };
        let expires_at = match field("expiresAt") {
            Value::Null => None,
            Value::String(text) => Some(
                DateTime::parse_from_rfc3339(text)
                    .ok()
                    // A leap second (`:60`) names no instant the database keeps.
                    .filter(|at| at.nanosecond() < 1_000_000_000)
                    .and_then(|at| {
                        at.with_timezone(&Utc)
                            .duration_trunc(TimeDelta::microseconds(1))
                            .ok()
                    })
                    .ok_or(BatchRefusal::BadExpiry)?,
            ),
            _ => return Err(BatchRefusal::BadExpiry),
        };
        Ok(BatchFields {
            reference,
            count,
            points,
            prefix,
            expires_at,
        })
    }

    /// `BadExpiry` unless `expiresAt` is after `now` (or there is none).
    pub fn check_future(&self, now: DateTime<Utc>) -> Result<(), BatchRefusal> {
        match self.expires_at {
            Some(at) if at <= now => Err(BatchRefusal::BadExpiry),
            _ => Ok(()),
        }
    }

    /// Whether `batch` is what this body would issue (a retry of it, not another batch
    /// under a reference already used).
    pub fn issued(&self, batch: &BatchRecord) -> bool {
        batch.count == self.count
            && batch.points == crate::decimal_text(&self.points)
            && batch.prefix == self.prefix
            && batch.expires_at == self.expires_at
    }
}

/// A new code: the prefix, then the random part from `random` (one symbol per call, from
/// [`ALPHABET`]).
pub fn code(prefix: Option<&str>, mut random: impl FnMut() -> u8) -> String {
    let groups: Vec<String> = (0..RANDOM_GROUPS)
        .map(|_| (0..GROUP_LENGTH).map(|_| char::from(random())).collect())
        .collect();
    match prefix {
        Some(prefix) => format!("{prefix}-{}", groups.join("-")),
        None => groups.join("-"),
    }
}

impl crate::audit::Audited for BatchRecord {
    fn subject(&self) -> String {
        format!("gift-code-batch:{}", self.id)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn now() -> DateTime<Utc> {
        "2027-01-01T00:00:00Z".parse().unwrap()
    }

    #[test]
    fn each_refusal_in_its_order() {
        use BatchRefusal::*;
        let ok = json!({"reference": "r", "count": 2, "points": "10.5"});
        let with = |key: &str, value: Value| {
            let mut body = ok.clone();
            body[key] = value;
            body
        };
        let cases = [
            (json!([]), NotAnObject),
            (with("codes", json!(1)), UnknownKey("codes".into())),
            (json!({"count": 0}), BadReference),
            (with("reference", json!("a\u{200b}")), BadReference),
            (with("count", json!(0)), BadCount),
            (with("count", json!(10_001)), BadCount),
            (with("count", json!(1.5)), BadCount),
            (with("points", json!(0)), BadPoints),
            (with("points", json!("1.00001")), BadPoints),
            (with("prefix", json!("ab")), BadPrefix),
            (with("prefix", json!("")), BadPrefix),
            (with("prefix", json!("ABCDEFGHIJKLM")), BadPrefix),
            (with("prefix", json!("A-B")), BadPrefix),
            (with("expiresAt", json!("2027-06-30T23:59:60Z")), BadExpiry),
            (with("expiresAt", json!("2027-06-01")), BadExpiry),
            (with("expiresAt", json!(1)), BadExpiry),
        ];
        for (body, refusal) in cases {
            assert_eq!(BatchFields::read(&body), Err(refusal), "{body}");
        }
        let read = BatchFields::read(
            &json!({"reference": " r ", "count": 10000, "points": 0.0001, "prefix": "RMDN27",
                    "expiresAt": "2027-01-01T03:00:01.0000005+03:00"}),
        )
        .unwrap();
        assert_eq!(read.reference, "r");
        assert_eq!(read.count, 10_000);
        assert_eq!(crate::decimal_text(&read.points), "0.0001");
        assert_eq!(read.prefix.as_deref(), Some("RMDN27"));
        assert_eq!(
            read.expires_at,
            Some("2027-01-01T00:00:01Z".parse().unwrap())
        );
        assert_eq!(read.check_future(now()), Ok(()));
        let past = BatchFields::read(
            &json!({"reference": "r", "count": 1, "points": 1, "expiresAt": "2026-12-31T23:59:59Z"}),
        )
        .unwrap();
        assert_eq!(past.check_future(now()), Err(BatchRefusal::BadExpiry));
    }

    #[test]
    fn a_code_is_its_prefix_and_four_groups_of_four_symbols() {
        let mut symbols = ALPHABET.iter().copied().cycle();
        let mut next = || symbols.next().unwrap();
        assert_eq!(code(Some("GIFT"), &mut next), "GIFT-0123-4567-89AB-CDEF");
        assert_eq!(code(None, &mut next), "GHJK-MNPQ-RSTV-WXYZ");
    }
}
