#![allow(clippy::unwrap_used)]

use envelope::Refusal;
use utoipa::IntoResponses;

use super::*;
use crate::orders::{CreateRefusals, OrderRefusal};

#[test]
fn every_route_has_its_method_and_path_in_matching_order() {
    let listed: Vec<(bool, &str, bool)> = Route::ALL
        .iter()
        .map(|route| {
            let contract = route.contract();
            (
                contract.method == HttpMethod::Post,
                contract.pattern.as_str(),
                route.is_pay(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        [
            (false, "/api/v2/client/points", false),
            (false, "/api/v2/client/point-history", false),
            (false, "/api/v2/client/points-faq", false),
            (false, "/api/v2/client/point-offers", false),
            (false, "/api/v2/client/point-offers/{id}", false),
            (false, "/api/v2/client/point-occasions", false),
            (true, "/api/v2/client/point-orders", false),
            (true, "/api/v2/client/point-orders/description", false),
            (false, "/api/v2/client/point-orders/{correlation_id}", false),
            (
                true,
                "/api/v2/client/point-orders/{correlation_id}/pay/card",
                true
            ),
            (
                true,
                "/api/v2/client/point-orders/{correlation_id}/pay/session",
                true
            ),
        ]
    );
    for (index, route) in Route::ALL.iter().enumerate() {
        assert_eq!(
            *route as usize, index,
            "{route:?}: ALL is in declaration order"
        );
    }
}

#[test]
fn every_route_takes_the_legacy_token_and_names_its_schemas() {
    for route in Route::ALL {
        let contract = route.contract();
        let operation = serde_json::to_value(&contract.operation).unwrap();
        assert_eq!(
            operation["security"],
            serde_json::json!([{"legacy": []}]),
            "{route:?}"
        );
        assert!(operation["summary"].is_string(), "{route:?}: no summary");
        for (status, answer) in operation["responses"].as_object().unwrap() {
            if let Some(name) = answer["content"]["application/json"]["schema"]["$ref"].as_str() {
                let name = name.trim_start_matches("#/components/schemas/");
                let envelope = name.starts_with("Error");
                assert!(
                    envelope || contract.schemas.iter().any(|(n, _)| n == name),
                    "{route:?} {status}: {name} is not among its schemas"
                );
            }
        }
    }
}

#[test]
fn a_refusal_documents_its_message_on_its_routes() {
    let create = serde_json::to_value(&Route::CreateOrder.contract().operation).unwrap();
    let answers = &create["responses"];
    let insufficient = OrderRefusal::InsufficientPoints(7);
    assert_eq!(
        (insufficient.status(), insufficient.code()),
        (422, "INSUFFICIENT_POINTS")
    );
    assert_eq!(
        answers["422"]["description"],
        "`insufficient points for client <id>`"
    );
    let bad_request = answers["400"]["description"].as_str().unwrap();
    for message in [
        "`a point order cannot be paid with points to yourself`",
        "`client <id> does not exist`",
        "`point occasion <id> not found or inactive`",
    ] {
        assert!(bad_request.contains(message), "{bad_request}");
    }
    assert!(answers["429"]["headers"]["Retry-After"].is_object());
    assert!(CreateRefusals::responses().contains_key("404"));
    let order = serde_json::to_value(&Route::Order.contract().operation).unwrap();
    assert_eq!(
        order["responses"]["404"]["description"],
        "`point order not found`"
    );
}
