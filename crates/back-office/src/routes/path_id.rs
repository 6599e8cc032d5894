//! A back-office path's `{id}`: what it names, the one rule that reads it on both sides of
//! the relay, and the 404 of an id that names nothing.

use envelope::Refused;
use utoipa::IntoParams;
use utoipa::openapi::path::Parameter;

use crate::clients::ClientRefusal;
use crate::gift_codes::BatchLookupRefusal;
use crate::occasions::OccasionRefusal;
use crate::offers::OfferRefusal;

/// What a route's `{id}` names, and so how it is read and what refuses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathId {
    /// 24 hex characters.
    Offer,
    /// 24 hex characters.
    Occasion,
    /// A positive integer ([`positive_integer`]).
    Client,
    /// A positive integer ([`positive_integer`]).
    Batch,
}

impl PathId {
    /// The id as the keeper's path takes it, or the refusal of the thing it does not name
    /// (404, the id as sent). Nothing else reaches a keeper's path: no `/`, `.` or `%`.
    pub fn read(self, raw: &str) -> Result<String, Refused> {
        let hex = || domain::ObjectId::is_valid(raw).then(|| raw.to_owned());
        let number = || positive_integer(raw).map(|id| id.to_string());
        let unknown = raw.to_owned();
        match self {
            PathId::Offer => hex().ok_or_else(|| OfferRefusal::UnknownOffer(unknown).into()),
            PathId::Occasion => {
                hex().ok_or_else(|| OccasionRefusal::UnknownOccasion(unknown).into())
            }
            PathId::Client => number().ok_or_else(|| ClientRefusal::UnknownClient(unknown).into()),
            PathId::Batch => {
                number().ok_or_else(|| BatchLookupRefusal::UnknownBatch(unknown).into())
            }
        }
    }

    /// The path parameter as the document shows it.
    pub(super) fn parameters(self) -> Vec<Parameter> {
        match self {
            PathId::Offer | PathId::Occasion => HexId::into_params(|| None),
            PathId::Client => ClientPath::into_params(|| None),
            PathId::Batch => BatchPath::into_params(|| None),
        }
    }
}

/// The one rule for a numeric id in a back-office path (a client's, a batch's): decimal
/// digits only (no sign, space or fraction), above zero, within a 64-bit integer.
pub fn positive_integer(raw: &str) -> Option<i64> {
    raw.parse::<domain::ClientId>()
        .ok()
        .map(domain::ClientId::get)
}

/// A path's `{id}` as sent, decoded as `web::Path` decodes it (`%2F` is `/`, which every id
/// rule refuses): what the operator service reads with [`PathId::read`] and a keeper refuses
/// in its own words. An extractor of its own, not `web::Path<String>`, so that a document
/// shows the parameter once, as the route's `params` type says ([`HexId`], [`ClientPath`],
/// [`BatchPath`]).
pub struct IdText(String);

impl IdText {
    pub fn of(req: &actix_web::HttpRequest) -> Self {
        #[derive(serde::Deserialize)]
        struct Id {
            id: String,
        }
        IdText(
            req.match_info()
                .load::<Id>()
                .map(|path| path.id)
                .unwrap_or_default(),
        )
    }
}

impl std::ops::Deref for IdText {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl actix_web::FromRequest for IdText {
    type Error = std::convert::Infallible;
    type Future = std::future::Ready<Result<Self, Self::Error>>;

    fn from_request(req: &actix_web::HttpRequest, _: &mut actix_web::dev::Payload) -> Self::Future {
        std::future::ready(Ok(IdText::of(req)))
    }
}

/// An offer's or an occasion's id in the path.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)]
pub struct HexId {
    /// 24 hex characters.
    #[param(pattern = "^[0-9a-fA-F]{24}$", example = "65f0a1b2c3d4e5f6a7b8c9d0")]
    id: String,
}

/// A client's id in the path.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)]
pub struct ClientPath {
    /// The client id: a positive integer (anything else is 404).
    #[param(value_type = i64, minimum = 1, example = 1001)]
    id: String,
}

/// A batch's id in the path.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)]
pub struct BatchPath {
    /// The batch id: a positive integer (anything else is 404).
    #[param(value_type = i64, minimum = 1, example = 7)]
    id: String,
}
