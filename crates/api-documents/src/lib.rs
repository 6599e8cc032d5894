//! The OpenAPI documents by audience, as teams download them from `docs/api/`: the app's
//! (every route the mobile app calls, on the auth and order services), the admin panel's
//! (the operator service), the internal routes (service to service, and the payment
//! service's webhook) and the operations routes (probes and metrics).
//!
//! Each is cut from the four services' own documents (what each serves at `/openapi.json`)
//! by the audience every operation carries (`server::Audience`, declared beside the route):
//! an operation keeps its id, parameters, answers and schemas as its service documents it,
//! and its path names its service as the server (`{auth_url}`, `{order_url}`, ...). Nothing is
//! written twice: a schema or a token that two services both declare must be declared the
//! same, or the cut fails.
//!
//! `make api-documents` writes the files; a test fails while they differ from the code.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};
use server::Audience;

/// One service's own document and where it is reached.
pub struct Service {
    pub name: &'static str,
    /// The server variable that stands for its base URL (the spec's `{auth_url}`).
    pub variable: &'static str,
    /// Its address under `make run`.
    pub local_url: &'static str,
    /// Its whole document, as it serves it.
    pub document: Value,
}

/// The four services, in the order their routes are listed.
///
/// # Panics
/// Never in practice: a utoipa document is plain data that serde_json always writes.
#[allow(clippy::expect_used)]
pub fn services() -> Vec<Service> {
    let service = |name, variable, local_url, document: utoipa::openapi::OpenApi| Service {
        name,
        variable,
        local_url,
        document: serde_json::to_value(document).expect("an OpenAPI document serialises"),
    };
    vec![
        service(
            "auth-service",
            "auth_url",
            "http://localhost:8081",
            auth_service::routes::app().openapi,
        ),
        service(
            "order-service",
            "order_url",
            "http://localhost:8082",
            order_service::routes::app().openapi,
        ),
        service(
            "point-service",
            "point_url",
            "http://localhost:8083",
            point_service::routes::app().openapi,
        ),
        service(
            "operator-service",
            "operator_url",
            "http://localhost:8084",
            operator_service::routes::app().openapi,
        ),
    ]
}

/// A document published in `docs/api/`.
pub struct Published {
    pub audience: Audience,
    title: &'static str,
    description: &'static str,
}

/// The published documents, one per audience but the payment sandbox's (it serves its own).
pub const PUBLISHED: [Published; 4] = [
    Published {
        audience: Audience::App,
        title: "Loyalty and catalog: the app's API",
        description: "Every route the mobile app calls, each path on its own server: the auth \
            service (`{auth_url}`: login, tokens, profile, push setting, devices, address book; \
            errors in envelope A `{status, message, stack?}`) and the order service \
            (`{order_url}`: the point routes it relays to the point service unchanged, whose \
            errors are envelope B `{success: false, error: {code, message, details?}}`, and its \
            own earn rates, gift-card code, services and stores, whose errors are envelope C \
            `{message, statusCode}`). Point amounts are exact decimals written as JSON numbers \
            (`format: decimal`): read them as decimals, not doubles. Generated from the \
            services' own documents (`make api-documents`); the contract is docs/spec/.",
    },
    Published {
        audience: Audience::Admin,
        title: "Loyalty and catalog: the admin panel's API",
        description: "The operator service (`{operator_url}`), for operators holding an \
            operator JWT: services, their parent and child hierarchy and its audit trail; and \
            the loyalty back office (offers, occasions, the expiry policy, clients' points and \
            adjustments, gift-code batches, the earn-rate table and the trails of their \
            changes), which it relays to the services that keep that data. Generated from the \
            service's own document (`make api-documents`).",
    },
    Published {
        audience: Audience::Internal,
        title: "Loyalty and catalog: internal routes",
        description: "What the services call on each other (never through an ingress) and the \
            payment service's webhook: the auth service's caller lookup and client profiles, \
            the point service's point routes as the order service's relay reaches them, its \
            credits and its payment webhook. Generated from the services' own documents \
            (`make api-documents`).",
    },
    Published {
        audience: Audience::Operations,
        title: "Loyalty and catalog: operations routes",
        description: "Probes and metrics, the same on every service (each is a server here). \
            Generated from the services' own documents (`make api-documents`).",
    },
];

impl Published {
    /// The file under `docs/api/`.
    pub fn file(&self) -> String {
        format!("{}.json", self.audience.as_str())
    }

    /// The document: the operations of `services` for this audience, each path with its
    /// service as its server, and the schemas, tokens and tags they name.
    ///
    /// # Panics
    /// When two services document one operation, a schema, a token or a tag differently:
    /// the documents must say one thing, so one of them must change.
    pub fn document(&self, services: &[Service]) -> Value {
        let mut paths = Map::new();
        let mut from = Vec::new();
        for service in services {
            let mut any = false;
            for (path, item) in object(&service.document["paths"]) {
                let operations: Map<String, Value> = object(item)
                    .iter()
                    .filter(|(_, operation)| audience(operation) == Some(self.audience))
                    .map(|(method, operation)| (method.clone(), operation.clone()))
                    .collect();
                if operations.is_empty() {
                    continue;
                }
                any = true;
                add_path(&mut paths, path, operations, server(service), service.name);
            }
            if any {
                from.push(service);
            }
        }
        let paths = Value::Object(sorted(paths));
        let schemas = reachable_schemas(&paths, &from);
        let schemes = named(&used_schemes(&paths), &from, "securitySchemes", |doc| {
            &doc["components"]["securitySchemes"]
        });
        json!({
            "openapi": "3.1.0",
            "info": {
                "title": self.title,
                "description": self.description,
                "version": env!("CARGO_PKG_VERSION"),
            },
            "servers": from.iter().map(|service| server(service)).collect::<Vec<_>>(),
            "paths": paths,
            "components": {"schemas": schemas, "securitySchemes": schemes},
            "tags": tags(&paths, &from),
        })
    }
}

/// Every published document as its file's name and text, written as `make api-documents`
/// writes them.
///
/// # Panics
/// As [`Published::document`].
#[allow(clippy::expect_used)]
pub fn documents() -> Vec<(String, String)> {
    let services = services();
    PUBLISHED
        .iter()
        .map(|published| {
            let text = serde_json::to_string_pretty(&published.document(&services))
                .expect("a document serialises");
            (published.file(), text + "\n")
        })
        .collect()
}

const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

fn audience(operation: &Value) -> Option<Audience> {
    Audience::named(operation.get(server::audience::EXTENSION)?.as_str()?)
}

fn object(value: &Value) -> &Map<String, Value> {
    static EMPTY: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);
    value.as_object().unwrap_or(&EMPTY)
}

fn server(service: &Service) -> Value {
    json!({
        "url": format!("{{{}}}", service.variable),
        "description": service.name,
        "variables": {
            service.variable: {
                "default": service.local_url,
                "description": format!("The {}'s base URL (the default is `make run`'s).", service.name),
            }
        }
    })
}

/// Adds `operations` of `path` with `server`. A path several services serve (the probes)
/// lists each as a server and must be documented the same by each, but for the body of an
/// answer, which may be each service's own envelope: it is then any of them.
fn add_path(
    paths: &mut Map<String, Value>,
    path: &str,
    operations: Map<String, Value>,
    server: Value,
    service: &str,
) {
    let item = paths
        .entry(path.to_owned())
        .or_insert_with(|| json!({"servers": []}));
    for (method, operation) in operations {
        assert!(METHODS.contains(&method.as_str()), "{method} {path}");
        match item.get_mut(&method) {
            Some(existing) => {
                merge_answers(existing, &operation, &format!("{method} {path}"), service)
            }
            None => item[&method] = operation,
        }
    }
    if let Some(servers) = item["servers"].as_array_mut() {
        servers.push(server);
    }
}

/// `operation`'s answers into `existing`'s: a body schema that differs becomes `anyOf` both
/// (not `oneOf`: the operator service's body also matches envelope C's schema).
fn merge_answers(existing: &mut Value, operation: &Value, name: &str, service: &str) {
    let mut same = operation.clone();
    same["responses"] = existing["responses"].clone();
    assert_eq!(
        existing, &same,
        "{service} documents {name} differently from another service"
    );
    for (status, answer) in object(&operation["responses"]) {
        let kept = &mut existing["responses"][status];
        assert_eq!(
            kept["description"], answer["description"],
            "{service}: {name} answers {status} differently"
        );
        for (media, content) in object(&answer["content"]) {
            let schema = &mut kept["content"][media]["schema"];
            let mut choices = match schema.get("anyOf") {
                Some(Value::Array(choices)) => choices.clone(),
                _ => vec![schema.clone()],
            };
            if !choices.contains(&content["schema"]) {
                choices.push(content["schema"].clone());
                *schema = json!({"anyOf": choices});
            }
        }
    }
}

fn sorted(map: Map<String, Value>) -> Map<String, Value> {
    let mut entries: Vec<(String, Value)> = map.into_iter().collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    entries.into_iter().collect()
}

/// The names `value` refers to under `#/components/schemas/`.
fn refs(value: &Value, found: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                match (key.as_str(), inner.as_str()) {
                    ("$ref", Some(target)) => {
                        if let Some(name) = target.strip_prefix("#/components/schemas/") {
                            found.insert(name.to_owned());
                        }
                    }
                    _ => refs(inner, found),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|inner| refs(inner, found)),
        _ => {}
    }
}

/// The schemas the paths name, and those they name, from the services that serve them.
fn reachable_schemas(paths: &Value, from: &[&Service]) -> Value {
    let mut wanted = BTreeSet::new();
    refs(paths, &mut wanted);
    let mut done = BTreeSet::new();
    while let Some(name) = wanted.iter().find(|name| !done.contains(*name)).cloned() {
        let found = named(&BTreeSet::from([name.clone()]), from, "schemas", |doc| {
            &doc["components"]["schemas"]
        });
        assert!(
            found.get(&name).is_some(),
            "no service declares the schema {name}"
        );
        refs(&found, &mut wanted);
        done.insert(name);
    }
    named(&done, from, "schemas", |doc| &doc["components"]["schemas"])
}

/// The security schemes the operations name.
fn used_schemes(paths: &Value) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for item in object(paths).values() {
        for operation in object(item).values() {
            for requirement in operation["security"].as_array().into_iter().flatten() {
                names.extend(object(requirement).keys().cloned());
            }
        }
    }
    names
}

/// `names` as the services declare them in `section` (found by `at`), each the same in every
/// service that declares it.
fn named(
    names: &BTreeSet<String>,
    from: &[&Service],
    section: &str,
    at: impl Fn(&Value) -> &Value,
) -> Value {
    let mut out = Map::new();
    for name in names {
        for service in from {
            let Some(declared) = at(&service.document).get(name) else {
                continue;
            };
            if let Some(earlier) = out.get(name) {
                assert_eq!(
                    earlier, declared,
                    "{} declares the {section} entry {name} differently from another service",
                    service.name
                );
            }
            out.insert(name.clone(), declared.clone());
        }
    }
    Value::Object(out)
}

/// The tags the operations use, with the services' descriptions (the same in each that
/// describes one), in the order the services list them.
fn tags(paths: &Value, from: &[&Service]) -> Value {
    let mut used = BTreeSet::new();
    for item in object(paths).values() {
        for operation in object(item).values() {
            for tag in operation["tags"].as_array().into_iter().flatten() {
                used.extend(tag.as_str().map(str::to_owned));
            }
        }
    }
    let mut out: Vec<Value> = Vec::new();
    for service in from {
        for tag in service.document["tags"].as_array().into_iter().flatten() {
            let Some(name) = tag["name"].as_str().filter(|name| used.contains(*name)) else {
                continue;
            };
            match out.iter().find(|listed| listed["name"] == name) {
                Some(listed) => assert_eq!(
                    listed, tag,
                    "{} describes the tag {name} differently from another service",
                    service.name
                ),
                None => out.push(tag.clone()),
            }
        }
    }
    for name in used {
        if !out.iter().any(|listed| listed["name"] == name.as_str()) {
            out.push(json!({"name": name}));
        }
    }
    Value::Array(out)
}
