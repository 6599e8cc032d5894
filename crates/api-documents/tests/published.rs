//! The documents in `docs/api/` are what the code documents today, and each is exact enough
//! for a generated client: every JSON answer has a schema that is not a bare object, every
//! operation a unique id, every path its server, every reference a target.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::{Value, json};

fn folder() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/api")
}

#[test]
fn the_published_documents_are_current() {
    for (file, text) in api_documents::documents() {
        let path = folder().join(&file);
        let published = std::fs::read_to_string(&path).unwrap_or_else(|error| {
            panic!("{}: {error}; run `make api-documents`", path.display())
        });
        assert!(
            published == text,
            "docs/api/{file} differs from what the services document: run `make api-documents` \
             and commit the result"
        );
    }
}

/// Every object schema under `value` (following nothing: references are checked apart).
fn bare_objects(value: &Value, at: &str, found: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            let object = map.get("type").is_some_and(|kind| {
                kind == "object"
                    || kind
                        .as_array()
                        .is_some_and(|kinds| kinds.contains(&json!("object")))
            });
            let described = [
                "properties",
                "additionalProperties",
                "allOf",
                "oneOf",
                "anyOf",
                "$ref",
            ]
            .iter()
            .any(|key| map.contains_key(*key));
            if object && !described {
                found.push(at.to_owned());
            }
            for (key, inner) in map {
                bare_objects(inner, &format!("{at}/{key}"), found);
            }
        }
        Value::Array(items) => {
            for (i, inner) in items.iter().enumerate() {
                bare_objects(inner, &format!("{at}/{i}"), found);
            }
        }
        _ => {}
    }
}

fn references(value: &Value, found: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            if let Some(target) = map.get("$ref").and_then(Value::as_str) {
                found.insert(target.to_owned());
            }
            map.values().for_each(|inner| references(inner, found));
        }
        Value::Array(items) => items.iter().for_each(|inner| references(inner, found)),
        _ => {}
    }
}

#[test]
fn every_answer_is_typed_and_every_operation_named() {
    let services = api_documents::services();
    for published in &api_documents::PUBLISHED {
        let document = published.document(&services);
        let file = published.file();
        let mut ids = BTreeSet::new();
        for (path, item) in document["paths"].as_object().unwrap() {
            let servers = item["servers"].as_array().unwrap();
            assert!(!servers.is_empty(), "{file}: {path} names no server");
            for (method, operation) in item.as_object().unwrap() {
                if method == "servers" {
                    continue;
                }
                let name = format!("{file}: {method} {path}");
                let id = operation["operationId"]
                    .as_str()
                    .unwrap_or_else(|| panic!("{name}: no operationId"));
                assert!(
                    id.chars().next().is_some_and(|c| c.is_ascii_lowercase())
                        && id.chars().all(|c| c.is_ascii_alphanumeric()),
                    "{name}: operationId {id} is not camelCase"
                );
                assert!(ids.insert(id.to_owned()), "{name}: operationId {id} twice");
                assert_eq!(
                    operation["x-audience"],
                    published.audience.as_str(),
                    "{name}"
                );
                for (status, answer) in operation["responses"].as_object().unwrap() {
                    let content = answer["content"]
                        .as_object()
                        .unwrap_or_else(|| panic!("{name} {status}: no body"));
                    for (media, body) in content {
                        assert!(
                            body["schema"].is_object(),
                            "{name} {status} {media}: no schema"
                        );
                    }
                }
            }
        }
        let mut bare = Vec::new();
        bare_objects(&document, "", &mut bare);
        assert!(bare.is_empty(), "{file}: untyped objects at {bare:?}");
        let mut targets = BTreeSet::new();
        references(&document, &mut targets);
        for target in targets {
            let name = target
                .strip_prefix("#/components/schemas/")
                .unwrap_or_else(|| panic!("{file}: {target}"));
            assert!(
                document["components"]["schemas"][name].is_object(),
                "{file}: {target} is not declared"
            );
        }
    }
}

#[test]
fn the_app_document_holds_every_app_route_and_nothing_else() {
    let services = api_documents::services();
    let app = api_documents::PUBLISHED[0].document(&services);
    let paths: Vec<&String> = app["paths"].as_object().unwrap().keys().collect();
    assert!(
        paths
            .iter()
            .all(|path| path.starts_with("/api/v1/clients") || path.starts_with("/api/v2/client/")),
        "{paths:?}"
    );
    // The relayed routes under the order service's server, named as the point service names
    // them.
    let balance = &app["paths"]["/api/v2/client/points"];
    assert_eq!(balance["servers"][0]["url"], "{order_url}");
    assert_eq!(balance["get"]["operationId"], "getPointBalance");
    let login = &app["paths"]["/api/v1/clients/verify-otp"];
    assert_eq!(login["servers"][0]["url"], "{auth_url}");
    // The point service's own copy of the routes is internal, under its server.
    let internal = api_documents::PUBLISHED[2].document(&services);
    let relayed = &internal["paths"]["/api/v2/client/points"];
    assert_eq!(relayed["servers"][0]["url"], "{point_url}");
    assert_eq!(relayed["get"]["operationId"], "getPointBalance");
    assert!(internal["paths"]["/api/v1/users"].is_object());
}

#[test]
#[should_panic(expected = "declares the schemas entry Thing differently")]
fn two_services_declaring_one_schema_differently_fail() {
    let document = |kind: &str| {
        json!({
            "paths": {"/a": {"get": {
                "operationId": "getA", "x-audience": "app",
                "responses": {"200": {"description": "a", "content": {"application/json": {
                    "schema": {"$ref": "#/components/schemas/Thing"}}}}}
            }}},
            "components": {"schemas": {"Thing": {"type": kind}}}
        })
    };
    let service = |name, document| api_documents::Service {
        name,
        variable: "x_url",
        local_url: "http://localhost",
        document,
    };
    let services = [
        service("one", document("string")),
        service("two", document("integer")),
    ];
    api_documents::PUBLISHED[0].document(&services);
}
