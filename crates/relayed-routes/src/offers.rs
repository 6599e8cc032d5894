//! What the app shows before an order: `GET /point-offers`, `GET /point-offers/{id}`,
//! `GET /point-occasions`; and why an offer or an occasion a request names is refused.

use bigdecimal::BigDecimal;
use envelope::Refuses;
use serde::Serialize;
use utoipa::{IntoParams, ToSchema};

/// A point offer as the app sees it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Offer {
    /// 24 hex characters.
    pub id: String,
    /// Points the recipient gets: the exact decimal as a JSON number in plain notation,
    /// integral values as integers (`7.75`, `100`, never `100.0` or an exponent). It may
    /// have more digits than a double holds: read it as a decimal.
    #[serde(serialize_with = "crate::wire::as_number")]
    #[schema(value_type = f64, format = "decimal")]
    pub point_amount: BigDecimal,
    /// Points the payer is charged with `point`, exactly; same form as `point_amount`.
    #[serde(serialize_with = "crate::wire::as_optional_number")]
    #[schema(value_type = Option<f64>, format = "decimal", required)]
    pub purchased_point_amount: Option<BigDecimal>,
    /// SAR, exactly two decimals; a card payment asks for exactly 100 times this in
    /// halalas (`amount_minor`). Prices in fractions of a halala are refused when loaded,
    /// never rounded.
    #[serde(serialize_with = "crate::wire::as_money")]
    #[schema(value_type = String)]
    pub amount: BigDecimal,
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

envelope::refusals! {
    /// An offer a request names that is not on sale (missing, inactive or deleted), named
    /// by its id as it was sent.
    pub enum OfferRefusal in B {
        UnknownOffer(id: String) => 404, "point offer {id} not found or inactive";
    }
}

envelope::refusals! {
    /// An occasion an order or a gift message names that is missing or inactive, named by
    /// its id as it was sent.
    pub enum OccasionRefusal in B {
        UnknownOccasion(id: String) => 400, "point occasion {id} not found or inactive";
    }
}

envelope::refusals! {
    /// An offer id in the path that is not 24 hex characters (no details).
    pub enum OfferIdRefusal in B {
        BadOfferId => 400, "point offer id must be a 24-character hex ObjectId";
    }
}

/// What asking for one offer refuses.
type OfferRefusals = Refuses<(OfferIdRefusal, OfferRefusal)>;

/// The offer's id in the path.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
pub struct OfferPath {
    /// 24 hex characters, either case.
    #[param(example = "64b7f0c2a1b2c3d4e5f60718")]
    pub id: String,
}

/// The occasions' query.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
pub struct LanguageQuery {
    /// `ar` (trimmed, any case) for Arabic labels; anything else English; never an error
    /// (sent twice, the first counts).
    pub language: Option<String>,
}

/// Active point offers (query keys are ignored)
///
/// Active, non-deleted offers by sequence, then legacy id, then id. Query keys are ignored.
#[utoipa::path(get, path = "/point-offers",
    responses((status = 200, description = "the active offers", body = [Offer])))]
pub fn list_point_offers() {}

/// One point offer
#[utoipa::path(get, path = "/point-offers/{id}", responses(OfferRefusals, (status = 200, body = Offer)))]
pub fn get_point_offer() {}

/// Active point occasions
#[utoipa::path(get, path = "/point-occasions", params(LanguageQuery),
    responses((status = 200, description = "labels in the asked language", body = [Occasion])))]
pub fn list_point_occasions() {}
