//! The contract of the loyalty back office (docs/decisions.md, "The loyalty back office"):
//! the operator routes over points data, which the operator service serves under
//! `/api/v1/operator` (tokens and roles are checked there, in one place) and relays to the
//! point service's [`INTERNAL_PREFIX`], where the data lives and each change is written with
//! its audit row in one transaction. Here: the operator's identity as it travels, the bodies
//! (read and checked here, so that each refusal's message is written once), the answers and
//! the refusals. The refusals are the operator API's body with a machine-readable `code`
//! (`{statusCode, message, error, code}`, `envelope::BackOfficeError`): the keepers answer
//! them so, and the operator service passes them on unchanged.

pub mod access;
pub mod adjustments;
pub mod audit;
pub mod body;
pub mod clients;
pub mod earn_rates;
pub mod expiry_policy;
pub mod gift_codes;
pub mod keeper;
pub mod occasions;
pub mod offers;
pub mod paging;
pub mod reads;
pub mod role;
pub mod routes;

use bigdecimal::BigDecimal;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::Schema;

/// Where the point service serves the back office's routes (for the operator service's
/// credential only, never exposed through an ingress): its routes' paths begin so.
pub const INTERNAL_PREFIX: &str = "/internal/v1/back-office";

/// A decimal as the back office writes it: exact, in plain notation, without trailing
/// zeros (`100`, `12.345`); an amount of SAR keeps its two decimals (`domain::Money`).
pub fn decimal_text(value: &BigDecimal) -> String {
    value.normalized().to_plain_string()
}

/// Every refusal of the back office (its status, code and message), as a panel meets them.
pub fn every_refusal() -> Vec<envelope::refusal::Answer> {
    use envelope::Refusal;
    [
        crate::access::BackOfficeRefusal::answers(),
        crate::access::ChangeRefusal::answers(),
        crate::adjustments::AdjustmentRefusal::answers(),
        crate::clients::ClientRefusal::answers(),
        crate::earn_rates::RatesRefusal::answers(),
        crate::expiry_policy::ExpiryPolicyRefusal::answers(),
        crate::gift_codes::BatchRefusal::answers(),
        crate::gift_codes::BatchLookupRefusal::answers(),
        crate::occasions::OccasionRefusal::answers(),
        crate::offers::OfferRefusal::answers(),
    ]
    .concat()
}

/// The back office's refusal body in a document: its `code` one of the back office's.
pub fn refusal_schemas() -> Vec<(String, RefOr<Schema>)> {
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    let mut codes: Vec<&str> = every_refusal().iter().map(|(_, code, _)| *code).collect();
    codes.sort_unstable();
    codes.dedup();
    let mut schemas = envelope::openapi::schemas(envelope::Envelope::BackOffice);
    for (_, schema) in &mut schemas {
        if let RefOr::T(Schema::Object(body)) = schema
            && let Some(RefOr::T(Schema::Object(code))) = body.properties.get("code")
        {
            let described = ObjectBuilder::new()
                .schema_type(Type::String)
                .description(code.description.clone())
                .enum_values(Some(codes.clone()))
                .build();
            body.properties
                .insert("code".to_owned(), RefOr::T(Schema::Object(described)));
        }
    }
    schemas
}

#[cfg(test)]
mod tests {
    use super::every_refusal;

    #[test]
    fn each_refusal_names_its_own_code_and_a_code_keeps_its_status() {
        let mut statuses = std::collections::BTreeMap::new();
        for (status, code, template) in every_refusal() {
            assert_ne!(
                code,
                envelope::refusal::code_for(status),
                "`{template}`: a back-office refusal names its code"
            );
            assert!(
                !code.is_empty() && code.chars().all(|c| c.is_ascii_uppercase() || c == '_'),
                "{code}: capitals and underscores"
            );
            assert_eq!(
                *statuses.entry(code).or_insert(status),
                status,
                "{code}: one status wherever it is given"
            );
        }
    }
}
