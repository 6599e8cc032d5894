//! The contract of the point routes the app reaches through the order service: the prefix,
//! the routes (each a method and a path; two of them pay routes), each route's OpenAPI
//! operation (the `#[utoipa::path]` of a contract function here, with the route's rules in
//! its doc comment), the bodies and answers on the wire, and the refusals with their
//! messages. The point service serves these routes with its handlers attached to these
//! operations; the order service relays and documents them from here, without linking the
//! point service.
//!
//! No database mapping and no handler lives here: the point service reads its rows and
//! builds these types, so that the contract changes only when the wire does.

mod answers;
pub mod closed_sets;
pub mod offers;
pub mod orders;
pub mod pay;
pub mod points;
mod wire;

use std::sync::LazyLock;

use utoipa::openapi::path::{HttpMethod, Operation, Parameter};
use utoipa::openapi::schema::{AnyOf, Schema};
use utoipa::openapi::security::SecurityRequirement;
use utoipa::openapi::{Ref, RefOr};
use utoipa::{IntoParams, PartialSchema, ToSchema};

pub use answers::{CallerAnswers, PayAnswers};

/// The prefix both services serve these routes under.
pub const PREFIX: &str = "/api/v2/client";

/// The security scheme every relayed route takes: the caller's legacy token, which the
/// point service resolves through the auth service. Each service's document declares it.
pub const SECURITY_SCHEME: &str = server::token_schemes::LEGACY.name();

/// One relayed route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    Balance,
    History,
    Faq,
    Offers,
    Offer,
    Occasions,
    CreateOrder,
    Description,
    Order,
    PayCard,
    PaySession,
}

impl Route {
    /// Every relayed route, in declaration order, which is actix's matching order:
    /// `/point-orders/description` comes before `/point-orders/{correlation_id}`.
    pub const ALL: [Self; 11] = [
        Self::Balance,
        Self::History,
        Self::Faq,
        Self::Offers,
        Self::Offer,
        Self::Occasions,
        Self::CreateOrder,
        Self::Description,
        Self::Order,
        Self::PayCard,
        Self::PaySession,
    ];

    /// The two pay routes, which call the payment service (the relay waits longer for them).
    pub fn is_pay(self) -> bool {
        matches!(self, Self::PayCard | Self::PaySession)
    }

    /// The route's contract, read from its function's attribute.
    pub fn contract(self) -> &'static Contract {
        &CONTRACTS[self as usize]
    }

    /// The document's tag: the feature the route belongs to, a generated client's group.
    const fn tag(self) -> &'static str {
        match self {
            Self::Balance | Self::History | Self::Faq => "points",
            Self::Offers | Self::Offer | Self::Occasions => "offers",
            Self::CreateOrder | Self::Description | Self::Order => "point orders",
            Self::PayCard | Self::PaySession => "payments",
        }
    }

    /// The path's parameter, by what it names: written once for the routes that share it.
    fn path_parameters(self) -> Vec<Parameter> {
        match self {
            Self::Offer => offers::OfferPath::into_params(|| None),
            Self::Order | Self::PayCard | Self::PaySession => {
                orders::OrderPath::into_params(|| None)
            }
            _ => Vec::new(),
        }
    }

    /// What the attribute of the route's contract function says.
    fn described(self) -> server::Described {
        macro_rules! document {
            ($($contract:ident)::+) => {
                server::described!($($contract)::+)
            };
        }
        match self {
            Self::Balance => document!(points::get_point_balance),
            Self::History => document!(points::get_point_history),
            Self::Faq => document!(points::get_points_faq),
            Self::Offers => document!(offers::list_point_offers),
            Self::Offer => document!(offers::get_point_offer),
            Self::Occasions => document!(offers::list_point_occasions),
            Self::CreateOrder => document!(orders::create_point_order),
            Self::Description => document!(orders::describe_point_order),
            Self::Order => document!(orders::get_point_order),
            Self::PayCard => document!(pay::pay_point_order_by_card),
            Self::PaySession => document!(pay::start_point_order_payment_session),
        }
    }
}

/// A route as both services list it: method, path, operation and the schemas it names.
pub struct Contract {
    pub method: HttpMethod,
    /// Relative to [`PREFIX`] (no segment carries a regex).
    pub path: String,
    /// [`PREFIX`] and the path: what actix matches, and the route's name in metrics.
    pub pattern: String,
    /// With the legacy token ([`SECURITY_SCHEME`]) that every relayed route takes.
    pub operation: Operation,
    /// The schemas the operation names (and those they name), for a document's components.
    pub schemas: Vec<(String, RefOr<Schema>)>,
}

static CONTRACTS: LazyLock<Vec<Contract>> = LazyLock::new(|| {
    Route::ALL
        .iter()
        .map(|route| Contract::of(*route))
        .collect()
});

impl Contract {
    /// # Panics
    /// When a contract function's attribute does not describe exactly one GET or POST: a
    /// programming error that every test of the crate meets first.
    fn of(route: Route) -> Self {
        let server::Described {
            method,
            path,
            mut operation,
            mut schemas,
        } = route.described();
        assert!(
            matches!(method, HttpMethod::Get | HttpMethod::Post),
            "{route:?}: a contract function describes one GET or POST"
        );
        operation.tags = Some(vec![route.tag().to_owned()]);
        let parameters = route.path_parameters();
        if !parameters.is_empty() {
            let own = operation.parameters.take().unwrap_or_default();
            let path = parameters.into_iter().map(RefOr::T);
            operation.parameters = Some(path.chain(own).collect());
        }
        // What every relayed route answers, under the route's own.
        server::routes::answers_under::<CallerAnswers>(&mut operation);
        operation.security = Some(vec![SecurityRequirement::new(
            SECURITY_SCHEME,
            Vec::<String>::new(),
        )]);
        if route.is_pay() {
            or_payment_service(&mut operation);
            // Named by `PayAnswers`' 4XX, which the attribute cannot collect.
            schemas.push((
                pay::PaymentServiceError::name().into_owned(),
                pay::PaymentServiceError::schema(),
            ));
            pay::PaymentServiceError::schemas(&mut schemas);
        }
        Self {
            method,
            pattern: format!("{PREFIX}{path}"),
            path,
            operation,
            schemas,
        }
    }
}

/// A pay route passes the payment service's 4xx on with its status and body as they came, so
/// each of its own 4xx answers may be the payment service's too (`4XX` covers the others).
fn or_payment_service(operation: &mut Operation) {
    for (status, answer) in &mut operation.responses.responses {
        let RefOr::T(answer) = answer else { continue };
        if !status.starts_with('4') || status == "4XX" {
            continue;
        }
        answer.description.push_str(
            "; or the payment service's own, passed on as it came (`PaymentServiceError`)",
        );
        for content in answer.content.values_mut() {
            let RefOr::T(content) = content else { continue };
            let Some(ours) = content.schema.take() else {
                continue;
            };
            let mut either = AnyOf::new();
            match ours {
                RefOr::T(Schema::AnyOf(choices)) => either.items.extend(choices.items),
                ours => either.items.push(ours),
            }
            either
                .items
                .push(Ref::from_schema_name("PaymentServiceError").into());
            content.schema = Some(Schema::AnyOf(either).into());
        }
    }
}

#[cfg(test)]
mod tests;
