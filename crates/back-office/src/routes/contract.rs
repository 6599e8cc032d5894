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
        match self.method {
            HttpMethod::Get => "GET",
            HttpMethod::Post => "POST",
            HttpMethod::Put => "PUT",
            HttpMethod::Patch => "PATCH",
            HttpMethod::Delete => "DELETE",
            HttpMethod::Options => "OPTIONS",
            HttpMethod::Head => "HEAD",
            HttpMethod::Trace => "TRACE",
        }
    }

    /// A change: the route reads a JSON body.
    pub fn takes_body(&self) -> bool {
        matches!(
            self.method,
            HttpMethod::Post | HttpMethod::Put | HttpMethod::Patch
        )
    }

    /// # Panics
    /// When a function's attribute does not describe exactly one operation: a programming
    /// error that every test of the crate meets first.
    fn of(route: Route) -> Self {
        let document = route.document();
        let mut paths = document.paths.paths.into_iter();
        let (Some((path, item)), None) = (paths.next(), paths.next()) else {
            panic!("{route:?}: an operation function describes one path");
        };
        let operations = [
            (HttpMethod::Get, item.get),
            (HttpMethod::Post, item.post),
            (HttpMethod::Put, item.put),
            (HttpMethod::Patch, item.patch),
            (HttpMethod::Delete, item.delete),
        ];
        let mut operations = operations
            .into_iter()
            .filter_map(|(method, operation)| Some((method, operation?)));
        let (Some((method, mut operation)), None) = (operations.next(), operations.next()) else {
            panic!("{route:?}: an operation function describes one method");
        };
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
            method,
            path,
            operation,
            schemas: document
                .components
                .map(|components| components.schemas.into_iter().collect::<Vec<_>>())
                .unwrap_or_default()
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
