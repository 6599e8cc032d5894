//! A route's contract: the operation its function's attribute describes, with the path and
//! query parameters its rule gives.

use std::sync::LazyLock;

use utoipa::openapi::RefOr;
use utoipa::openapi::path::{HttpMethod, Operation, Parameter};
use utoipa::openapi::schema::Schema;

use super::{PathId, Route};

/// A route's method, path and operation.
pub struct Contract {
    pub method: HttpMethod,
    /// Relative to [`OPERATOR_PREFIX`].
    pub path: String,
    /// The attribute's, with the rule's path and query parameters; the operator service
    /// adds the security requirement and the answers every route shares.
    pub operation: Operation,
    /// The schemas the operation names (and those they name), the back office's refusal
    /// among them.
    pub schemas: Vec<(String, RefOr<Schema>)>,
}

impl Contract {
    /// The method as HTTP writes it.
    pub fn method_name(&self) -> &'static str {
        server::routes::method_word(&self.method)
    }

    /// A change: the route reads a JSON body.
    pub fn takes_body(&self) -> bool {
        server::routes::takes_body(&self.method)
    }

    fn of(route: Route) -> Self {
        let described = route.described();
        let mut operation = described.operation;
        operation.tags = Some(vec![route.tag().to_owned()]);
        let rule = route.rule();
        let parameters: Vec<Parameter> = rule
            .id
            .map(PathId::parameters)
            .unwrap_or_default()
            .into_iter()
            .chain(rule.query.parameters())
            .collect();
        if !parameters.is_empty() {
            operation.parameters = Some(parameters.into_iter().map(RefOr::T).collect());
        }
        Self {
            method: described.method,
            path: described.path,
            operation,
            schemas: described
                .schemas
                .into_iter()
                .chain(crate::refusal_schemas())
                .collect(),
        }
    }
}

pub(super) static CONTRACTS: LazyLock<Vec<Contract>> = LazyLock::new(|| {
    Route::ALL
        .iter()
        .map(|route| Contract::of(*route))
        .collect()
});
