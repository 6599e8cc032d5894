//! The contract of the loyalty back office (docs/decisions.md, "The loyalty back office"):
//! the operator routes over points data, which the operator service serves under
//! `/api/v1/operator` (tokens and roles are checked there, in one place) and relays to the
//! point service's [`INTERNAL_PREFIX`], where the data lives and each change is written with
//! its audit row in one transaction. Here: the operator's identity as it travels, the bodies
//! (read and checked here, so that each refusal's message is written once), the answers and
//! the refusals. The refusals are the operator API's (`{statusCode, message, error}`): the
//! point service answers them so, and the operator service passes them on unchanged.

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
pub mod role;
pub mod routes;

use bigdecimal::BigDecimal;

/// Where the point service serves the back office's routes (`X-Internal-Token`, never
/// exposed through an ingress): its routes' paths begin so.
pub const INTERNAL_PREFIX: &str = "/internal/v1/back-office";

/// The operator a relayed change is made for (the token's `sub`): the audit row's who.
pub const OPERATOR_ID_HEADER: &str = "x-operator-id";
/// The operator's role, as the token names it.
pub const OPERATOR_ROLE_HEADER: &str = "x-operator-role";

/// A decimal as the back office writes it: exact, in plain notation, without trailing
/// zeros (`100`, `12.345`); an amount of SAR keeps its two decimals (`domain::Money`).
pub fn decimal_text(value: &BigDecimal) -> String {
    value.normalized().to_plain_string()
}
