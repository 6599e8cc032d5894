//! Checks of a service's OpenAPI document against the running service: every route its
//! list registers is documented with the methods actix serves, every path parameter is
//! declared, and an answer's description names the message the service really sent.

use std::collections::BTreeSet;
use std::fmt::Display;

use serde_json::Value;

use crate::Routes;

/// The methods an OpenAPI path item can hold.
pub const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// Every service's operational routes (documented by `server::ops`).
pub const OPS: [(&str, &str); 3] = [("get", "/healthz"), ("get", "/readyz"), ("get", "/metrics")];

/// The service's `/openapi.json`.
///
/// # Panics
/// When the service does not answer it with 200 and JSON.
#[allow(clippy::unwrap_used)]
pub async fn document(client: &reqwest::Client, base: &str) -> Value {
    let response = client
        .get(format!("{base}/openapi.json"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    response.json().await.unwrap()
}

/// Every (method, path) the document lists.
pub fn documented(doc: &Value) -> BTreeSet<(String, String)> {
    doc["paths"]
        .as_object()
        .into_iter()
        .flatten()
        .flat_map(|(path, item)| {
            METHODS
                .iter()
                .filter(|m| item[**m].is_object())
                .map(|m| ((*m).to_owned(), path.clone()))
        })
        .collect()
}

/// Every (method, documented path) of a route list, the operational routes included.
pub fn listed(routes: &Routes) -> BTreeSet<(String, String)> {
    routes
        .iter()
        .map(|route| {
            (
                route.method_name().to_ascii_lowercase(),
                route.documented_path(),
            )
        })
        .chain(OPS.map(|(m, p)| (m.to_owned(), p.to_owned())))
        .collect()
}

/// The description of one documented answer.
///
/// # Panics
/// When the answer is not documented.
pub fn described<'a>(doc: &'a Value, method: &str, path: &str, status: impl Display) -> &'a str {
    let status = status.to_string();
    doc["paths"][path][method]["responses"][&status]["description"]
        .as_str()
        .unwrap_or_else(|| panic!("{method} {path}: no {status} answer documented"))
}

/// The message of an error body in any of the four envelopes.
pub fn message(body: &Value) -> Option<&str> {
    body["message"]
        .as_str()
        .or_else(|| body["error"]["message"].as_str())
}

/// The service answered `message`, and the document says so, in backticks, for that
/// status of that operation.
///
/// # Panics
/// When either is not so.
pub fn says(doc: &Value, method: &str, path: &str, answered: &(u16, Value), message: &str) {
    says_as(doc, method, path, answered, message, message);
}

/// [`says`] for a message with a variable part, which the document gives as `template`.
///
/// # Panics
/// When the service did not answer `message`, or the document does not give `template`.
pub fn says_as(
    doc: &Value,
    method: &str,
    path: &str,
    answered: &(u16, Value),
    message: &str,
    template: &str,
) {
    let (status, body) = answered;
    assert_eq!(
        self::message(body),
        Some(message),
        "{method} {path}: {body}"
    );
    let description = described(doc, method, path, status);
    assert!(
        description.contains(&format!("`{template}`")),
        "{method} {path} {status}: `{template}` is not in {description:?}"
    );
}

/// The `$ref` of an answer's JSON body.
pub fn schema_ref(answer: &Value) -> Option<&str> {
    answer["content"]["application/json"]["schema"]["$ref"].as_str()
}

/// Every `{name}` of every documented path is a declared path parameter, and nothing else
/// is.
///
/// # Panics
/// On the first operation where they differ.
pub fn path_parameters_are_declared(doc: &Value) {
    for (method, path) in documented(doc) {
        let operation = &doc["paths"][&path][&method];
        let declared: BTreeSet<&str> = operation["parameters"]
            .as_array()
            .map(|p| {
                p.iter()
                    .filter(|p| p["in"] == "path")
                    .filter_map(|p| p["name"].as_str())
                    .collect()
            })
            .unwrap_or_default();
        let in_path: BTreeSet<&str> = path
            .split('/')
            .filter_map(|s| s.strip_prefix('{')?.strip_suffix('}'))
            .collect();
        assert_eq!(declared, in_path, "{method} {path}");
    }
}

/// The document of the service at `base` lists exactly what `routes` lists, declares every
/// path parameter, and is what actix really serves ([`registered_routes_are_documented`]):
/// the whole check for a service whose document holds only its own routes.
///
/// # Panics
/// When any of them does not hold.
pub async fn the_document_is_the_route_list(client: &reqwest::Client, base: &str, routes: &Routes) {
    let doc = document(client, base).await;
    assert_eq!(documented(&doc), listed(routes));
    path_parameters_are_declared(&doc);
    registered_routes_are_documented(client, base, routes, &doc).await;
}

/// What actix really serves on each path of `routes` (the `Allow` header of its 405 to
/// OPTIONS, with `1` for each path parameter) is what the document lists, and the document
/// lists nothing else but the operational routes.
///
/// # Panics
/// When they differ, or a path serves OPTIONS.
#[allow(clippy::unwrap_used)]
pub async fn registered_routes_are_documented(
    client: &reqwest::Client,
    base: &str,
    routes: &Routes,
    doc: &Value,
) {
    let patterns: BTreeSet<(String, String)> = routes
        .iter()
        .map(|route| (route.pattern().to_owned(), route.documented_path()))
        .collect();
    let mut registered = BTreeSet::new();
    for (pattern, path) in &patterns {
        let concrete: String = pattern
            .split('/')
            .map(|s| if s.starts_with('{') { "1" } else { s })
            .collect::<Vec<_>>()
            .join("/");
        let response = client
            .request(reqwest::Method::OPTIONS, format!("{base}{concrete}"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 405, "{pattern} serves OPTIONS?");
        let allow = response.headers()["allow"].to_str().unwrap().to_owned();
        for method in allow.split(',').map(str::trim) {
            registered.insert((method.to_ascii_lowercase(), path.clone()));
        }
    }
    let mut served = documented(doc);
    served.retain(|route| !OPS.contains(&(route.0.as_str(), route.1.as_str())));
    assert_eq!(registered, served);
}
