//! Offers, occasions and the FAQ: what the app shows before an order.

use bigdecimal::BigDecimal;
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde::Serialize;
use utoipa::ToSchema;

use crate::db::schema::{point_occasions, point_offers, points_faq};
use crate::error::PointError;
use crate::numbers::{as_money, as_number, as_optional_number};

/// A point offer as the app sees it.
#[derive(Debug, Clone, Serialize, Queryable, Selectable, ToSchema)]
#[diesel(table_name = point_offers)]
pub struct Offer {
    /// 24 hex characters.
    pub id: String,
    /// Points the recipient gets: the exact decimal as a JSON number in plain notation,
    /// integral values as integers (`7.75`, `100`, never `100.0` or an exponent). It may
    /// have more digits than a double holds: read it as a decimal.
    #[serde(serialize_with = "as_number")]
    #[schema(value_type = f64)]
    pub point_amount: BigDecimal,
    /// Points the payer is charged with `point`, exactly; same form as `point_amount`.
    #[serde(serialize_with = "as_optional_number")]
    #[schema(value_type = Option<f64>)]
    pub purchased_point_amount: Option<BigDecimal>,
    /// SAR, exactly two decimals; a card payment asks for exactly 100 times this in
    /// halalas (`amount_minor`). Prices in fractions of a halala are refused when loaded,
    /// never rounded.
    #[serde(serialize_with = "as_money")]
    #[schema(value_type = String)]
    pub amount: BigDecimal,
}

/// Active, non-deleted offers: by sequence, then legacy id, then id (missing ones last).
pub async fn list(conn: &mut AsyncPgConnection) -> QueryResult<Vec<Offer>> {
    point_offers::table
        .filter(point_offers::active.and(point_offers::deleted.eq(false)))
        .order((
            point_offers::sequence.asc().nulls_last(),
            point_offers::legacy_id.asc().nulls_last(),
            point_offers::id.asc(),
        ))
        .select(Offer::as_select())
        .load(conn)
        .await
}

/// An active, non-deleted offer by its id in either case; else the 404 `point offer <id> not
/// found or inactive`, with the id as it was sent.
pub async fn find_active(conn: &mut AsyncPgConnection, id: &str) -> Result<Offer, PointError> {
    point_offers::table
        .find(id.to_ascii_lowercase())
        .filter(point_offers::active.and(point_offers::deleted.eq(false)))
        .select(Offer::as_select())
        .first(conn)
        .await
        .optional()?
        .ok_or_else(|| PointError::NotFound(format!("point offer {id} not found or inactive")))
}

#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = point_occasions)]
pub struct OccasionRow {
    pub id: String,
    pub occasion_en: String,
    pub occasion_ar: Option<String>,
    pub is_custom: i16,
}

/// An occasion as the app sees it: `occasion` in the asked language, `occasion_en` always.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Occasion {
    pub id: String,
    pub occasion: String,
    pub occasion_en: String,
    /// 0 or 1.
    pub is_custom: i16,
}

impl OccasionRow {
    /// Labels trimmed; Arabic when asked and present, else English.
    pub fn view(&self, arabic: bool) -> Occasion {
        let english = self.occasion_en.trim().to_owned();
        let arabic_label = self
            .occasion_ar
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty());
        let occasion = match (arabic, arabic_label) {
            (true, Some(label)) => label.to_owned(),
            _ => english.clone(),
        };
        Occasion {
            id: self.id.clone(),
            occasion,
            occasion_en: english,
            is_custom: self.is_custom,
        }
    }
}

/// `language`: after trimming and lower-casing, exactly `ar` means Arabic.
pub fn wants_arabic(language: Option<&str>) -> bool {
    language.is_some_and(|l| l.trim().to_lowercase() == "ar")
}

pub async fn active_occasions(conn: &mut AsyncPgConnection) -> QueryResult<Vec<OccasionRow>> {
    point_occasions::table
        .filter(point_occasions::active)
        .order(point_occasions::id)
        .select(OccasionRow::as_select())
        .load(conn)
        .await
}

/// An active occasion by its id in either case; else the 400 `point occasion <id> not found
/// or inactive` (an order names it in its body), with the id as it was sent.
pub async fn find_active_occasion(
    conn: &mut AsyncPgConnection,
    id: &str,
) -> Result<OccasionRow, PointError> {
    point_occasions::table
        .find(id.to_ascii_lowercase())
        .filter(point_occasions::active)
        .select(OccasionRow::as_select())
        .first(conn)
        .await
        .optional()?
        .ok_or_else(|| PointError::Validation(format!("point occasion {id} not found or inactive")))
}

#[derive(Debug, Serialize, Queryable, Selectable, ToSchema)]
#[diesel(table_name = points_faq)]
pub struct Faq {
    pub question_en: String,
    pub answer_en: String,
    pub question_ar: String,
    pub answer_ar: String,
}

pub async fn faq(conn: &mut AsyncPgConnection) -> QueryResult<Vec<Faq>> {
    points_faq::table
        .order(points_faq::position)
        .select(Faq::as_select())
        .load(conn)
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn language_is_arabic_only_for_ar() {
        assert!(wants_arabic(Some(" AR ")));
        assert!(!wants_arabic(Some("ar-SA")));
        assert!(!wants_arabic(None));
    }

    #[test]
    fn labels_are_trimmed_and_fall_back_to_english() {
        let row = OccasionRow {
            id: "x".into(),
            occasion_en: " Birthday ".into(),
            occasion_ar: None,
            is_custom: 0,
        };
        assert_eq!(row.view(true).occasion, "Birthday");
        let row = OccasionRow {
            occasion_ar: Some(" عيد ".into()),
            ..row
        };
        assert_eq!(row.view(true).occasion, "عيد");
        assert_eq!(row.view(false).occasion, "Birthday");
    }
}
