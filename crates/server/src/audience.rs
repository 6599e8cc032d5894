//! Who calls a route: the mobile app, the admin panel, another service (or the payment
//! service), or the platform's probes. Each scope of a route list names its audience (a route
//! may name another), every operation of a service's document carries it as `x-audience`,
//! and the documents by audience (`docs/api/`, built by the `api-documents` crate) are cut
//! from the services' documents by it: one declaration, beside the route, decides where a
//! route is published.

use utoipa::openapi::extensions::Extensions;
use utoipa::openapi::path::Operation;

/// The extension on every operation of a service's document that names its audience.
pub const EXTENSION: &str = "x-audience";

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Audience {
    /// The mobile app: the auth service's client routes and everything under the order
    /// service's /api/v2/client (the relayed point routes included).
    App,
    /// The admin panel: the operator service.
    Admin,
    /// Other services and the payment service: /internal, the payment webhook, the auth
    /// service's caller lookup, and the point routes as the point service itself serves them
    /// (the order service's relay calls them; the app never does).
    Internal,
    /// The platform: probes and metrics.
    Operations,
    /// The payment sandbox, which plays the payment service in development and tests only.
    Development,
}

impl Audience {
    pub const ALL: [Self; 5] = [
        Self::App,
        Self::Admin,
        Self::Internal,
        Self::Operations,
        Self::Development,
    ];

    /// The name in `x-audience` and of the document in `docs/api/`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::App => "app",
            Self::Admin => "admin",
            Self::Internal => "internal",
            Self::Operations => "operations",
            Self::Development => "development",
        }
    }

    /// The audience `x-audience` names (as written by [`Self::as_str`]).
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|audience| audience.as_str() == name)
    }

    /// Writes the audience into `operation`'s `x-audience`.
    pub fn mark(self, operation: &mut Operation) {
        operation
            .extensions
            .get_or_insert_with(Extensions::default)
            .insert(EXTENSION.to_owned(), self.as_str().into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_operation_carries_its_audience() {
        for audience in Audience::ALL {
            let mut operation = Operation::default();
            audience.mark(&mut operation);
            let json = serde_json::to_value(&operation).unwrap();
            assert_eq!(
                Audience::named(json[EXTENSION].as_str().unwrap()),
                Some(audience)
            );
        }
    }
}
