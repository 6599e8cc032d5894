//! The order service documents each relayed route as the point service does: both build it
//! from the one contract (`relayed_routes`), and this holds the two documents to it.

use std::collections::BTreeSet;

use server::testing::openapi::{documented, schema_ref};

/// Each point route under /api/v2/client is relayed, with its parameters, body, security,
/// success answer and every error status of its own (the door's aside, which each service
/// answers itself), and the schemas its success names are the point service's.
#[test]
fn the_relayed_routes_carry_the_point_services_definitions() {
    let order = serde_json::to_value(order_service::routes::app().openapi).unwrap();
    let point = serde_json::to_value(point_service::routes::app().openapi).unwrap();
    let relayed: BTreeSet<(String, String)> = documented(&point)
        .into_iter()
        .filter(|(_, path)| path.starts_with("/api/v2/client/"))
        .collect();
    assert_eq!(relayed.len(), 11);
    let door = ["400", "408", "413", "415"];
    for (method, path) in &relayed {
        let ours = &order["paths"][path][method];
        let theirs = &point["paths"][path][method];
        assert_eq!(ours["parameters"], theirs["parameters"], "{method} {path}");
        assert_eq!(
            ours["requestBody"], theirs["requestBody"],
            "{method} {path}"
        );
        assert_eq!(ours["security"], theirs["security"], "{method} {path}");
        for (status, answer) in theirs["responses"].as_object().unwrap() {
            if door.contains(&status.as_str()) {
                continue;
            }
            assert_eq!(
                &ours["responses"][status], answer,
                "{method} {path} {status}"
            );
        }
        if let Some(name) = schema_ref(&theirs["responses"]["200"]) {
            let name = name.trim_start_matches("#/components/schemas/");
            assert_eq!(
                order["components"]["schemas"][name], point["components"]["schemas"][name],
                "{name}"
            );
        }
    }
}
