//! Offers, occasions and the FAQ: what the app shows before an order.

use bigdecimal::BigDecimal;
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use relayed_routes::offers::{Occasion, OccasionRefusal, Offer, OfferRefusal};
use relayed_routes::points::Faq;

use crate::db::schema::{point_occasions, point_offers, points_faq};
use crate::error::PointError;

/// An offer's columns, in the order of [`Offer`]'s fields.
const OFFER: (
    point_offers::id,
    point_offers::point_amount,
    point_offers::purchased_point_amount,
    point_offers::amount,
) = (
    point_offers::id,
    point_offers::point_amount,
    point_offers::purchased_point_amount,
    point_offers::amount,
);

type OfferRow = (String, BigDecimal, Option<BigDecimal>, BigDecimal);

fn offer((id, point_amount, purchased_point_amount, amount): OfferRow) -> Offer {
    Offer {
        id,
        point_amount,
        purchased_point_amount,
        amount,
    }
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
        .select(OFFER)
        .load(conn)
        .await
        .map(|rows| rows.into_iter().map(offer).collect())
}

/// An active, non-deleted offer by its id in either case; else `UnknownOffer`, with the id
/// as it was sent.
pub async fn find_active(conn: &mut AsyncPgConnection, id: &str) -> Result<Offer, PointError> {
    let row = point_offers::table
        .find(id.to_ascii_lowercase())
        .filter(point_offers::active.and(point_offers::deleted.eq(false)))
        .select(OFFER)
        .first(conn)
        .await
        .optional()?;
    row.map(offer)
        .ok_or_else(|| OfferRefusal::UnknownOffer(id.to_owned()).into())
}

#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = point_occasions)]
pub struct OccasionRow {
    pub id: String,
    pub occasion_en: String,
    pub occasion_ar: Option<String>,
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

/// An active occasion by its id in either case; else `UnknownOccasion` (an order names it in
/// its body), with the id as it was sent.
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
        .ok_or_else(|| OccasionRefusal::UnknownOccasion(id.to_owned()).into())
}

pub async fn faq(conn: &mut AsyncPgConnection) -> QueryResult<Vec<Faq>> {
    let rows: Vec<(String, String, String, String)> = points_faq::table
        .order(points_faq::position)
        .select((
            points_faq::question_en,
            points_faq::answer_en,
            points_faq::question_ar,
            points_faq::answer_ar,
        ))
        .load(conn)
        .await?;
    let faq = rows
        .into_iter()
        .map(|(question_en, answer_en, question_ar, answer_ar)| Faq {
            question_en,
            answer_en,
            question_ar,
            answer_ar,
        });
    Ok(faq.collect())
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
