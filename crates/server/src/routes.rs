//! A service's route list, written once. Each entry is a handler and the operation its
//! `#[utoipa::path]` attribute describes (method, path, parameters, answers); the router
//! ([`Routes::configure`]) and the OpenAPI document ([`Routes::document`]) are both built
//! from the list, so a route cannot be served without being documented or the other way
//! round.
//!
//! ```ignore
//! static ROUTES: LazyLock<Routes> = LazyLock::new(|| {
//!     Routes::new([scope(Audience::App, "/api/v2/client", [route!(points::balance), route!(points::history)])])
//! });
//! ```
//!
//! A path in the attribute is relative to its scope; it may carry actix's regex
//! (`/clients/{id:[0-9]+}`), which the document leaves out (`/clients/{id}`).
//!
//! Why not utoipa-actix-web: its `service(...)` takes handlers declared with actix's
//! `#[get("/path")]` macros, which put the method guard on the resource, so a method a path
//! does not serve falls through to the default service (404) instead of the resource's 405
//! with `Allow`, and two methods on one path become two resources. Here each path is one
//! `web::resource` with one route per method, as the spec's 404/405 rules need.

use std::sync::Arc;

use actix_web::http::Method;
use actix_web::web;
use utoipa::openapi::path::{HttpMethod, Operation};
use utoipa::openapi::schema::Schema;
use utoipa::openapi::{OpenApi, RefOr};

use crate::audience::Audience;
pub use crate::described::{Described, method_word, takes_body};

/// Builds the actix route of one entry, without its method (the list adds it).
type Handler = Arc<dyn Fn() -> actix_web::Route + Send + Sync>;

/// One route: a method on a path, its operation in the document and its handler.
#[derive(Clone)]
pub struct Route {
    method: HttpMethod,
    /// As actix matches it, relative to the scope (may hold a `{name:regex}` segment).
    path: String,
    /// The scope's prefix and the path, as actix matches it; set by [`scope`].
    full: String,
    operation: Operation,
    schemas: Vec<(String, RefOr<Schema>)>,
    /// Its own, or (when `None`) its scope's: set by [`scope`].
    audience: Option<Audience>,
    handler: Handler,
}

impl Route {
    /// A route from its parts, for a handler without an attribute of its own (the order
    /// service's relay serves many paths with one handler).
    pub fn new(
        method: HttpMethod,
        path: impl Into<String>,
        operation: Operation,
        handler: impl Fn() -> actix_web::Route + Send + Sync + 'static,
    ) -> Self {
        let path = path.into();
        Self {
            method,
            full: path.clone(),
            path,
            operation,
            schemas: Vec::new(),
            audience: None,
            handler: Arc::new(handler),
        }
    }

    /// The route of a handler that `described` (its `#[utoipa::path]` attribute) describes;
    /// use [`crate::route!`].
    pub fn from_described(
        described: Described,
        handler: impl Fn() -> actix_web::Route + Send + Sync + 'static,
    ) -> Self {
        let mut route = Self::new(
            described.method,
            described.path,
            described.operation,
            handler,
        );
        route.schemas = described.schemas;
        route
    }

    /// The route with its document's tag: the feature it belongs to, a generated client's
    /// group (see [`tagged`]).
    fn tagged(mut self, tag: &str) -> Self {
        self.operation.tags = Some(vec![tag.to_owned()]);
        self
    }

    /// The route with `schemas` for the document's components (those its operation names).
    pub fn with_schemas(
        mut self,
        schemas: impl IntoIterator<Item = (String, RefOr<Schema>)>,
    ) -> Self {
        self.schemas.extend(schemas);
        self
    }

    /// The route with its security requirement: `scheme`, naming `scopes` (the roles an
    /// operator route admits, written where the access rule is rather than in an attribute).
    pub fn with_security<'a>(
        mut self,
        scheme: &str,
        scopes: impl IntoIterator<Item = &'a str>,
    ) -> Self {
        let requirement = utoipa::openapi::security::SecurityRequirement::new(scheme, scopes);
        self.operation.security = Some(vec![requirement]);
        self
    }

    /// The route with its operation changed by `change` (what its listing adds to what its
    /// attribute says).
    pub fn with_operation(mut self, change: impl FnOnce(&mut Operation)) -> Self {
        change(&mut self.operation);
        self
    }

    /// The route with `A`'s answers under its own: what every route of its kind answers (a
    /// token check's), said where the route is listed as of that kind.
    pub fn answering<A: utoipa::IntoResponses>(self) -> Self {
        self.with_operation(answers_under::<A>)
    }

    /// The route with the token it takes, in `scheme` (no scopes): who may call it, said
    /// where the route is listed.
    pub fn taking(self, scheme: &crate::token_schemes::BearerScheme) -> Self {
        self.with_security(scheme.name(), [])
    }

    /// The route for another audience than its scope's (the auth service's caller lookup,
    /// under the app's /api/v1, is for other services).
    pub fn for_audience(mut self, audience: Audience) -> Self {
        self.audience = Some(audience);
        self
    }

    pub fn method(&self) -> &HttpMethod {
        &self.method
    }

    /// The method as HTTP writes it (`GET`).
    pub fn method_name(&self) -> &'static str {
        method_word(&self.method)
    }

    /// The scope's prefix and the path, as actix matches it (`{id:[0-9]+}` included).
    pub fn pattern(&self) -> &str {
        &self.full
    }

    /// The path as the document writes it: the scope's prefix and the path, without the
    /// regex of any segment.
    pub fn documented_path(&self) -> String {
        without_regex(&self.full)
    }

    pub fn operation(&self) -> &Operation {
        &self.operation
    }

    /// The schemas the operation names (and those they name), for the document's components.
    pub fn schemas(&self) -> &[(String, RefOr<Schema>)] {
        &self.schemas
    }

    fn actix_route(&self) -> actix_web::Route {
        (self.handler)().method(actix_method(&self.method))
    }
}

/// The route of a handler that carries a `#[utoipa::path]` attribute: its method and path
/// (relative to the scope) come from the attribute, its operation id from its name.
#[macro_export]
macro_rules! route {
    ($($handler:ident)::+) => {
        $crate::routes::Route::from_described(
            $crate::described!($($handler)::+),
            || ::actix_web::web::route().to($($handler)::+),
        )
    };
}

/// `A`'s answers added under `operation`'s own: where both give a status, the operation's
/// answer stands, as when a route lists `A` first in its attribute's `responses(...)`.
pub fn answers_under<A: utoipa::IntoResponses>(operation: &mut Operation) {
    let mut answers = A::responses();
    answers.extend(std::mem::take(&mut operation.responses.responses));
    operation.responses.responses = answers;
}

/// `routes`, one feature's, tagged `tag` in the document: the group a generated client
/// puts their calls in.
pub fn tagged(tag: &str, routes: impl IntoIterator<Item = Route>) -> Vec<Route> {
    routes.into_iter().map(|route| route.tagged(tag)).collect()
}

/// Routes under one prefix: one `web::scope` in the router.
#[derive(Clone)]
pub struct Scope {
    prefix: &'static str,
    routes: Vec<Route>,
}

/// The routes of `routes` under `prefix` (`""` for none), for `audience` (unless a route
/// names its own). Order matters where paths overlap: actix takes the first path that
/// matches (`/point-orders/description` before `/point-orders/{correlation_id}`).
pub fn scope(
    audience: Audience,
    prefix: &'static str,
    routes: impl IntoIterator<Item = Route>,
) -> Scope {
    Scope {
        prefix,
        routes: routes
            .into_iter()
            .map(|mut route| {
                route.full = format!("{prefix}{}", route.path);
                route.audience.get_or_insert(audience);
                route
            })
            .collect(),
    }
}

/// A service's whole route list.
#[derive(Clone)]
pub struct Routes {
    scopes: Vec<Scope>,
}

impl Routes {
    /// # Panics
    /// When two scopes share a prefix (actix would never reach the second one's routes) or a
    /// method is listed twice on one path.
    pub fn new(scopes: impl IntoIterator<Item = Scope>) -> Self {
        let scopes: Vec<Scope> = scopes.into_iter().collect();
        for (i, scope) in scopes.iter().enumerate() {
            assert!(
                scopes[..i].iter().all(|other| other.prefix != scope.prefix),
                "two scopes with the prefix {:?}: make them one",
                scope.prefix
            );
        }
        let routes = Self { scopes };
        let mut seen = std::collections::BTreeSet::new();
        for route in routes.iter() {
            assert!(
                seen.insert((
                    route.pattern().to_owned(),
                    actix_method(&route.method).to_string()
                )),
                "{} {} is listed twice",
                actix_method(&route.method),
                route.pattern()
            );
        }
        routes
    }

    /// Every route, in the list's order.
    pub fn iter(&self) -> impl Iterator<Item = &Route> {
        self.scopes.iter().flat_map(|scope| &scope.routes)
    }

    /// Registers each scope as a `web::scope`, and in it each path as one `web::resource`
    /// with a route per method: a method the path does not serve is the resource's 405 with
    /// `Allow`, a path no resource matches the app's default service (404).
    pub fn configure(&self, cfg: &mut web::ServiceConfig) {
        for scope in &self.scopes {
            let mut actix_scope = web::scope(scope.prefix);
            for (path, routes) in by_path(&scope.routes) {
                let resource = routes
                    .into_iter()
                    .fold(web::resource(path), |resource, route| {
                        resource.route(route.actix_route())
                    });
                actix_scope = actix_scope.service(resource);
            }
            cfg.service(actix_scope);
        }
    }

    /// A service's whole document: [`Self::document`], the operational routes
    /// ([`crate::ops`]), on every operation the door's answers in `envelope`
    /// (`envelope::openapi::add_door_answers`), and the service itself (`/`, where the
    /// document is served) as its server.
    pub fn openapi(&self, base: OpenApi, envelope: envelope::Envelope) -> OpenApi {
        let mut doc = self.document(base).merge_from(crate::ops::openapi());
        envelope::openapi::add_door_answers(&mut doc, envelope);
        doc.servers = Some(vec![
            utoipa::openapi::ServerBuilder::new()
                .url("/")
                .description(Some("this service, where this document is served"))
                .build(),
        ]);
        doc
    }

    /// `base` (the service's title, description, tags, security schemes) with every route's
    /// operation, marked with its audience, and the schemas they name.
    pub fn document(&self, mut base: OpenApi) -> OpenApi {
        for route in self.iter() {
            let mut operation = route.operation.clone();
            if let Some(audience) = route.audience {
                audience.mark(&mut operation);
            }
            base.paths.add_path_operation(
                route.documented_path(),
                vec![route.method.clone()],
                operation,
            );
            base.components
                .get_or_insert_with(Default::default)
                .schemas
                .extend(route.schemas.iter().cloned());
        }
        base
    }
}

/// The routes grouped by path, each path where it first appears.
fn by_path(routes: &[Route]) -> Vec<(&str, Vec<&Route>)> {
    let mut grouped: Vec<(&str, Vec<&Route>)> = Vec::new();
    for route in routes {
        match grouped.iter_mut().find(|(path, _)| *path == route.path) {
            Some((_, same_path)) => same_path.push(route),
            None => grouped.push((&route.path, vec![route])),
        }
    }
    grouped
}

/// `/clients/{id:[0-9]+}` as the document writes it: `/clients/{id}`.
fn without_regex(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut in_name = false;
    let mut skipping = false;
    for c in path.chars() {
        match c {
            '{' => {
                in_name = true;
                out.push(c);
            }
            '}' if in_name => {
                in_name = false;
                skipping = false;
                out.push(c);
            }
            ':' if in_name => skipping = true,
            _ if skipping => {}
            _ => out.push(c),
        }
    }
    out
}

fn actix_method(method: &HttpMethod) -> Method {
    match method {
        HttpMethod::Get => Method::GET,
        HttpMethod::Put => Method::PUT,
        HttpMethod::Post => Method::POST,
        HttpMethod::Delete => Method::DELETE,
        HttpMethod::Options => Method::OPTIONS,
        HttpMethod::Head => Method::HEAD,
        HttpMethod::Patch => Method::PATCH,
        HttpMethod::Trace => Method::TRACE,
    }
}

#[cfg(test)]
mod tests {
    use actix_web::http::StatusCode;
    use actix_web::test as actix_test;
    use actix_web::{App, HttpResponse};

    use super::*;

    #[utoipa::path(get, path = "/items/{id}", responses((status = 200, description = "the item")))]
    async fn get_item() -> &'static str {
        "item"
    }

    #[utoipa::path(delete, path = "/items/{id}", responses((status = 204, description = "gone")))]
    async fn delete_item() -> HttpResponse {
        HttpResponse::NoContent().finish()
    }

    #[utoipa::path(get, path = "/items/first", responses((status = 200, description = "the first")))]
    async fn first_item() -> &'static str {
        "first"
    }

    #[utoipa::path(get, path = "/numbers/{n:[0-9]+}", responses((status = 200, description = "a number")))]
    async fn number() -> &'static str {
        "number"
    }

    fn routes() -> Routes {
        Routes::new([
            // Listed before `/items/{id}`, which would otherwise take it.
            scope(
                Audience::App,
                "/api",
                [route!(first_item), route!(get_item), route!(delete_item)],
            ),
            scope(Audience::Internal, "/other", [route!(number)]),
        ])
    }

    #[actix_web::test]
    async fn one_list_builds_the_router_and_the_document() {
        let routes = routes();
        let app = actix_test::init_service(App::new().configure(|cfg| routes.configure(cfg))).await;
        let call = |method: actix_web::http::Method, path: &str| {
            actix_test::TestRequest::default()
                .method(method)
                .uri(path)
                .to_request()
        };
        use actix_web::http::Method;
        let answer = actix_test::call_service(&app, call(Method::GET, "/api/items/7")).await;
        assert_eq!(answer.status(), StatusCode::OK);
        assert_eq!(actix_test::read_body(answer).await, "item");
        let answer = actix_test::call_service(&app, call(Method::GET, "/api/items/first")).await;
        assert_eq!(actix_test::read_body(answer).await, "first");
        let answer = actix_test::call_service(&app, call(Method::DELETE, "/api/items/7")).await;
        assert_eq!(answer.status(), StatusCode::NO_CONTENT);
        // A method the path does not serve: the resource's 405, naming the ones it does.
        let answer = actix_test::call_service(&app, call(Method::POST, "/api/items/7")).await;
        assert_eq!(answer.status(), StatusCode::METHOD_NOT_ALLOWED);
        let allow = answer
            .headers()
            .get("allow")
            .unwrap()
            .to_str()
            .unwrap()
            .to_owned();
        let mut allowed: Vec<&str> = allow.split(',').map(str::trim).collect();
        allowed.sort_unstable();
        assert_eq!(allowed, ["DELETE", "GET"]);
        // No path matches: 404 (the app's default service), inside a scope or not.
        for path in ["/api/nothing", "/api", "/other/numbers/x", "/nowhere"] {
            let answer = actix_test::call_service(&app, call(Method::GET, path)).await;
            assert_eq!(answer.status(), StatusCode::NOT_FOUND, "{path}");
        }
        let answer = actix_test::call_service(&app, call(Method::GET, "/other/numbers/12")).await;
        assert_eq!(actix_test::read_body(answer).await, "number");

        let document = serde_json::to_value(routes.document(OpenApi::default())).unwrap();
        let paths = document["paths"].as_object().unwrap();
        let mut listed: Vec<&str> = paths.keys().map(String::as_str).collect();
        listed.sort_unstable();
        assert_eq!(
            listed,
            ["/api/items/first", "/api/items/{id}", "/other/numbers/{n}"]
        );
        assert!(paths["/api/items/{id}"]["get"].is_object());
        assert!(paths["/api/items/{id}"]["delete"].is_object());
        assert!(paths["/api/items/{id}"]["post"].is_null());
        // Each operation names its scope's audience.
        assert_eq!(paths["/api/items/{id}"]["get"]["x-audience"], "app");
        assert_eq!(paths["/other/numbers/{n}"]["get"]["x-audience"], "internal");
    }

    #[test]
    #[should_panic(expected = "two scopes with the prefix")]
    fn two_scopes_with_one_prefix_are_refused() {
        Routes::new([
            scope(Audience::App, "/api", [route!(get_item)]),
            scope(Audience::App, "/api", [route!(number)]),
        ]);
    }

    #[test]
    fn the_document_path_leaves_out_a_segments_regex() {
        assert_eq!(
            without_regex("/internal/v1/clients/{id:[0-9]+}"),
            "/internal/v1/clients/{id}"
        );
        assert_eq!(without_regex("/a/{x}/b"), "/a/{x}/b");
    }
}
