//! The OpenAPI document describes every route the service serves: each path and method,
//! the roles it admits, its parameters, its answers, and the messages the code really sends.

use std::collections::BTreeSet;

use operator_service::auth::Role;
use serde_json::{Value, json};

use server::testing::openapi::{self, described, documented, says, says_as};

use crate::helpers::*;

/// Every operator route: (method, path, admins only).
/// Who a route admits.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Admits {
    All,
    Admins,
    SuperAdmin,
}

const ROUTES: [(&str, &str, Admits); 31] = [
    ("get", "/api/v1/operator/services", Admits::All),
    ("post", "/api/v1/operator/services", Admits::Admins),
    (
        "get",
        "/api/v1/operator/services/all/without-pagination",
        Admits::All,
    ),
    ("get", "/api/v1/operator/services/{id}", Admits::All),
    ("patch", "/api/v1/operator/services/{id}", Admits::Admins),
    (
        "get",
        "/api/v1/operator/services/{id}/children",
        Admits::Admins,
    ),
    (
        "patch",
        "/api/v1/operator/services/{id}/children",
        Admits::Admins,
    ),
    ("get", "/api/v1/operator/audit", Admits::Admins),
    ("get", "/api/v1/operator/offers", Admits::All),
    ("post", "/api/v1/operator/offers", Admits::Admins),
    ("patch", "/api/v1/operator/offers/{id}", Admits::Admins),
    ("delete", "/api/v1/operator/offers/{id}", Admits::Admins),
    ("get", "/api/v1/operator/loyalty/audit", Admits::Admins),
    (
        "post",
        "/api/v1/operator/clients/{id}/adjustments",
        Admits::SuperAdmin,
    ),
    ("get", "/api/v1/operator/occasions", Admits::All),
    ("post", "/api/v1/operator/occasions", Admits::Admins),
    ("patch", "/api/v1/operator/occasions/{id}", Admits::Admins),
    ("delete", "/api/v1/operator/occasions/{id}", Admits::Admins),
    ("get", "/api/v1/operator/expiry-policy", Admits::All),
    ("put", "/api/v1/operator/expiry-policy", Admits::Admins),
    (
        "post",
        "/api/v1/operator/expiry-policy/dry-run",
        Admits::SuperAdmin,
    ),
    (
        "get",
        "/api/v1/operator/clients/{id}/points",
        Admits::Admins,
    ),
    (
        "get",
        "/api/v1/operator/loyalty/client-reads",
        Admits::SuperAdmin,
    ),
    ("get", "/api/v1/operator/gift-code-batches", Admits::Admins),
    (
        "post",
        "/api/v1/operator/gift-code-batches",
        Admits::SuperAdmin,
    ),
    (
        "get",
        "/api/v1/operator/gift-code-batches/{id}",
        Admits::SuperAdmin,
    ),
    (
        "get",
        "/api/v1/operator/gift-code-batches/{id}/codes.csv",
        Admits::SuperAdmin,
    ),
    (
        "delete",
        "/api/v1/operator/gift-code-batches/{id}",
        Admits::SuperAdmin,
    ),
    ("get", "/api/v1/operator/earn-rates", Admits::All),
    ("put", "/api/v1/operator/earn-rates", Admits::Admins),
    (
        "get",
        "/api/v1/operator/loyalty/catalog-audit",
        Admits::Admins,
    ),
];

const ERROR: &str = "#/components/schemas/OperatorError";
const BACK_OFFICE_ERROR: &str = "#/components/schemas/BackOfficeError";

async fn document(app: &TestApp) -> Value {
    openapi::document(&app.client, &app.base).await
}

/// The roles a route admits, as the code decides them.
fn admitted(admits: Admits) -> BTreeSet<String> {
    Role::ALL
        .into_iter()
        .filter(|role| match admits {
            Admits::All => true,
            Admits::Admins => role.is_admin(),
            Admits::SuperAdmin => *role == Role::SuperAdmin,
        })
        .map(|role| role.as_str().to_owned())
        .collect()
}

#[tokio::test]
async fn the_document_lists_every_route_and_nothing_else() {
    let app = spawn_app().await;
    let doc = document(&app).await;
    let listed: BTreeSet<(String, String)> = ROUTES
        .iter()
        .map(|(m, p, _)| (*m, *p))
        .chain(openapi::OPS)
        .map(|(m, p)| (m.to_owned(), p.to_owned()))
        .collect();
    assert_eq!(documented(&doc), listed);
    assert_eq!(openapi::listed(operator_service::routes::routes()), listed);
    for schema in [
        "OperatorError",
        "Service",
        "PageMeta",
        "ServiceBody",
        "ChildrenBody",
        "ChildrenUpdated",
        "AuditEntry",
    ] {
        assert!(
            doc["components"]["schemas"][schema].is_object(),
            "schema {schema} is missing"
        );
    }
    let error = &doc["components"]["schemas"]["OperatorError"]["properties"];
    assert!(error["statusCode"].is_object() && error["message"].is_object());
    assert!(error["error"].is_object());
    let scheme = &doc["components"]["securitySchemes"]["operator"];
    assert_eq!(
        (&scheme["type"], &scheme["scheme"], &scheme["bearerFormat"]),
        (&json!("http"), &json!("bearer"), &json!("JWT"))
    );
}

#[tokio::test]
async fn every_operation_declares_its_roles_parameters_answers_and_envelope() {
    let app = spawn_app().await;
    let doc = document(&app).await;
    openapi::path_parameters_are_declared(&doc);
    for (method, path, admits) in ROUTES {
        let operation = &doc["paths"][path][method];
        let roles: BTreeSet<String> = operation["security"][0]["operator"]
            .as_array()
            .unwrap_or_else(|| panic!("{method} {path}: no operator security"))
            .iter()
            .map(|r| r.as_str().unwrap().to_owned())
            .collect();
        assert_eq!(roles, admitted(admits), "{method} {path}");
        let answers = operation["responses"].as_object().unwrap();
        // A dry run makes nothing: its POST answers 200.
        let success = if method == "post" && !path.ends_with("/dry-run") {
            "201"
        } else {
            "200"
        };
        // The export is the one answer that is no JSON.
        let media = if path.ends_with(".csv") {
            "text/csv"
        } else {
            "application/json"
        };
        assert!(
            answers[success]["content"][media]["schema"].is_object(),
            "{method} {path}: no {success} schema"
        );
        for (status, answer) in answers {
            assert!(
                !answer["description"]
                    .as_str()
                    .unwrap_or_default()
                    .is_empty(),
                "{method} {path} {status}: no description"
            );
            // The back office's own refusals carry their code; the rest, and every answer of
            // the spec's hierarchy, are the operator API's three keys. A back-office route
            // that reads a body refuses one in either (the door's 400 carries no code); one
            // that reads none gives only the door's.
            let schema = &answer["content"]["application/json"]["schema"];
            let back_office = !["services", "children", "audit"]
                .contains(&operation["tags"][0].as_str().unwrap());
            let takes_body = matches!(method, "post" | "patch" | "put");
            match status.as_str() {
                s if s.starts_with('2') => {}
                "400" if back_office && takes_body => assert_eq!(
                    schema["oneOf"],
                    json!([{"$ref": BACK_OFFICE_ERROR}, {"$ref": ERROR}]),
                    "{method} {path} {status}"
                ),
                // A guardrail's own 403 (an offer above the programme's limit, a shorter
                // expiry window) beside the role's.
                "403" if back_office && schema["oneOf"].is_array() => assert_eq!(
                    schema["oneOf"],
                    json!([{"$ref": ERROR}, {"$ref": BACK_OFFICE_ERROR}]),
                    "{method} {path} {status}"
                ),
                "404" | "409" if back_office => {
                    assert_eq!(
                        schema["$ref"], BACK_OFFICE_ERROR,
                        "{method} {path} {status}"
                    )
                }
                _ => assert_eq!(schema["$ref"], ERROR, "{method} {path} {status}"),
            }
        }
        assert!(answers.contains_key("401"), "{method} {path}");
        assert_eq!(
            answers.contains_key("403"),
            admits != Admits::All,
            "{method} {path}: 403 only where a role is refused"
        );
        assert_eq!(
            operation["requestBody"].is_object(),
            matches!(method, "post" | "patch" | "put"),
            "{method} {path}"
        );
    }
}

/// Every path of the route list, with the methods actix really serves on it (the `Allow`
/// header of a 405), is documented, and nothing else is.
#[tokio::test]
async fn every_registered_route_is_documented() {
    let app = spawn_app().await;
    let doc = document(&app).await;
    openapi::registered_routes_are_documented(
        &app.client,
        &app.base,
        operator_service::routes::routes(),
        &doc,
    )
    .await;
}

#[tokio::test]
async fn the_document_has_the_messages_the_routes_send() {
    let app = spawn_app().await;
    let doc = document(&app).await;
    let services = "/api/v1/operator/services";
    let one = "/api/v1/operator/services/{id}";
    let children = "/api/v1/operator/services/{id}/children";
    let admin = Some(Role::Admin);

    // 401 and 403, with their exact bodies.
    for (method, path, _) in ROUTES {
        let concrete = path
            .trim_start_matches("/api/v1/operator")
            .replace("{id}", "1");
        let answered = app
            .call(&method.to_uppercase(), &concrete, None, None)
            .await;
        assert_eq!(
            answered.1,
            json!({"statusCode": 401, "message": "Unauthorized", "error": "Unauthorized"})
        );
        says(&doc, method, path, &answered, "Unauthorized");
        assert!(described(&doc, method, path, 401).contains(&answered.1.to_string()));
    }
    for (method, path, _) in ROUTES
        .iter()
        .filter(|(_, _, admits)| *admits != Admits::All)
    {
        let concrete = path
            .trim_start_matches("/api/v1/operator")
            .replace("{id}", "1");
        let answered = app
            .call(
                &method.to_uppercase(),
                &concrete,
                Some(Role::DataEntry),
                Some(&json!({})),
            )
            .await;
        assert_eq!(
            answered.1,
            json!({"statusCode": 403, "message": "Forbidden resource", "error": "Forbidden"})
        );
        says(&doc, method, path, &answered, "Forbidden resource");
        assert!(described(&doc, method, path, 403).contains(&answered.1.to_string()));
    }

    // The list filters and the path id.
    for path in [services, "/api/v1/operator/services/all/without-pagination"] {
        let concrete = format!(
            "{}?hierarchy_role=parent,root",
            path.trim_start_matches("/api/v1/operator")
        );
        says(
            &doc,
            "get",
            path,
            &app.call("GET", &concrete, admin, None).await,
            "each value in hierarchy_role must be a valid enum value",
        );
    }
    let numeric = "Validation failed (numeric string is expected)";
    for (method, path, body) in [
        ("get", one, None),
        ("patch", one, Some(json!({"ordering": 1}))),
        ("get", children, None),
        ("patch", children, Some(json!({"assignServiceIds": [6]}))),
    ] {
        let concrete = path
            .trim_start_matches("/api/v1/operator")
            .replace("{id}", "x");
        says(
            &doc,
            method,
            path,
            &app.call(&method.to_uppercase(), &concrete, admin, body.as_ref())
                .await,
            numeric,
        );
    }

    // Service bodies.
    for (method, path, concrete, body, message) in [
        (
            "post",
            services,
            "/services",
            json!([]),
            "body must be a JSON object",
        ),
        (
            "patch",
            one,
            "/services/3",
            json!({"title": null}),
            "title must be a string",
        ),
        (
            "patch",
            one,
            "/services/3",
            json!({"titleTranslated": " "}),
            "titleTranslated must be a string of 1 to 255 characters",
        ),
        (
            "patch",
            one,
            "/services/3",
            json!({"background_image_url": 1}),
            "background_image_url must be a string of at most 2048 characters or null",
        ),
        (
            "post",
            services,
            "/services",
            json!({"titleTranslated": "b"}),
            "title should not be empty",
        ),
        (
            "post",
            services,
            "/services",
            json!({"title": "a", "titleTranslated": "b", "ordering": -1}),
            "ordering must be a non-negative integer",
        ),
        (
            "patch",
            one,
            "/services/3",
            json!({"hierarchyRole": "root"}),
            "hierarchyRole must be one of the following values: parent, standalone, child",
        ),
        (
            "patch",
            one,
            "/services/3",
            json!({"status": "deleted"}),
            "status must be one of the following values: active, hidden",
        ),
        (
            "patch",
            one,
            "/services/3",
            json!({"title": ""}),
            "title must be a string of 1 to 255 characters",
        ),
        (
            "patch",
            one,
            "/services/3",
            json!({"serviceType": 5}),
            "serviceType must be a string",
        ),
        (
            "patch",
            one,
            "/services/3",
            json!({"logo": 5}),
            "logo must be a string of at most 2048 characters or null",
        ),
        (
            "patch",
            one,
            "/services/999",
            json!({"ordering": 1}),
            "Service is not found",
        ),
    ] {
        says(
            &doc,
            method,
            path,
            &app.call(&method.to_uppercase(), concrete, admin, Some(&body))
                .await,
            message,
        );
    }
    for (method, path, concrete) in [
        ("post", services, "/services"),
        ("patch", one, "/services/3"),
    ] {
        says_as(
            &doc,
            method,
            path,
            &app.call(
                &method.to_uppercase(),
                concrete,
                admin,
                Some(&json!({"title": "a", "titleTranslated": "b", "colour": "red"})),
            )
            .await,
            "property colour should not exist",
            "property <key> should not exist",
        );
    }
    says(
        &doc,
        "get",
        one,
        &app.call("GET", "/services/999", admin, None).await,
        "Service is not found",
    );

    // Candidates: 404, then the parent check.
    says(
        &doc,
        "get",
        children,
        &app.call("GET", "/services/999/children", admin, None).await,
        "Service is not found",
    );
    says(
        &doc,
        "get",
        children,
        &app.call("GET", "/services/3/children", admin, None).await,
        "Only a service with hierarchy_role = parent can have child services",
    );

    // The children PATCH: body types, then the six checks.
    for (concrete, body, message) in [
        (
            "/services/1/children",
            json!({"assignServiceIds": 6}),
            "assignServiceIds must be an array",
        ),
        (
            "/services/1/children",
            json!({"unassignServiceIds": ["a"]}),
            "each value in unassignServiceIds must be an integer number",
        ),
        (
            "/services/1/children",
            json!({"assignServiceIds": [6, 6]}),
            "All assignServiceIds's elements must be unique",
        ),
        (
            "/services/1/children",
            json!({"unassignServiceIds": {}}),
            "unassignServiceIds must be an array",
        ),
        (
            "/services/1/children",
            json!({"assignServiceIds": [1.5]}),
            "each value in assignServiceIds must be an integer number",
        ),
        (
            "/services/1/children",
            json!({"unassignServiceIds": [4, 4]}),
            "All unassignServiceIds's elements must be unique",
        ),
        (
            "/services/1/children",
            json!({}),
            "At least one of assignServiceIds or unassignServiceIds must be provided",
        ),
        (
            "/services/1/children",
            json!({"assignServiceIds": [6], "unassignServiceIds": [6]}),
            "assignServiceIds and unassignServiceIds must not contain the same service id",
        ),
        (
            "/services/1/children",
            json!({"assignServiceIds": [1]}),
            "A service cannot be assigned as a child of itself",
        ),
        (
            "/services/999/children",
            json!({"assignServiceIds": [6]}),
            "Service is not found",
        ),
        (
            "/services/3/children",
            json!({"assignServiceIds": [6]}),
            "Only a service with hierarchy_role = parent can have child services",
        ),
    ] {
        says(
            &doc,
            "patch",
            children,
            &app.call("PATCH", concrete, admin, Some(&body)).await,
            message,
        );
    }
    // Check 6 names the failing ids; the document gives the message up to them.
    let (status, body) = app
        .call(
            "PATCH",
            "/services/1/children",
            admin,
            Some(&json!({"assignServiceIds": [7, 3]})),
        )
        .await;
    assert_eq!(status, 400);
    let message = body["message"].as_str().unwrap();
    let (fixed, ids) = message.rsplit_once(": ").unwrap();
    assert_eq!(ids, "7,3");
    says_as(
        &doc,
        "patch",
        children,
        &(status, body.clone()),
        message,
        &format!("{fixed}: <comma-separated ids>"),
    );

    // A body too large.
    let big = json!({"title": "x".repeat(300 * 1024)});
    says(
        &doc,
        "patch",
        one,
        &app.call("PATCH", "/services/3", admin, Some(&big)).await,
        "Payload Too Large",
    );
}

/// The body schemas name exactly the keys the service accepts.
#[tokio::test]
async fn the_documented_bodies_are_the_accepted_bodies() {
    let app = spawn_app().await;
    let doc = document(&app).await;
    let accepted = |schema: &str| -> BTreeSet<String> {
        doc["components"]["schemas"][schema]["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect()
    };
    for key in accepted("ServiceBody") {
        let (status, answer) = app
            .admin("PATCH", "/services/8", Some(&json!({ key.clone(): null })))
            .await;
        assert_ne!(
            answer["message"],
            json!(format!("property {key} should not exist")),
            "{key}: {status}"
        );
    }
    assert_eq!(
        accepted("ChildrenBody"),
        BTreeSet::from([
            "assignServiceIds".to_owned(),
            "unassignServiceIds".to_owned()
        ])
    );
}

/// A generated client fails on an enum value its document does not list: each closed set the
/// document shows is exactly what the catalog database lets a row hold.
#[tokio::test]
async fn the_documents_closed_sets_are_the_databases() {
    let app = spawn_app().await;
    let doc = document(&app).await;
    for (schema, column) in [
        ("HierarchyRole", "hierarchy_role"),
        ("ServiceStatus", "status"),
    ] {
        assert_eq!(
            testkit::closed_sets::documented(&doc, schema),
            testkit::closed_sets::allowed(&app.database, "services", column).await,
            "{schema} and services.{column}"
        );
    }
}
