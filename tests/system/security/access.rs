//! Another client's orders, addresses and profile, and operator routes with roles the spec
//! does not admit.

use e2e::demo::{LEGACY_ORDER, NOURA, OCCASION, OFFER_100, OMAR, SARA};
use serde_json::{Value, json};
use testkit::{error_a, error_b, ids, operator_403, without_stack};

use super::{operator_token, system};

/// 1. Another client's orders, addresses and profile: every route that takes an id, tried
/// with another client's token, answers nothing of the owner's and changes nothing (read
/// back as the owner and in the database). The client id comes from the token only, so ids
/// in a query or body are ignored, and an Idempotency-Key is the caller's own. Operator
/// routes with a role the spec (children routes) or docs/design.md (writes, audit) does not admit
/// are the exact 403 and write nothing.
#[tokio::test]
async fn another_clients_orders_addresses_and_profile_stay_out_of_reach() {
    let sys = system(None).await;

    // Sara's orders: one for herself and a gift for Omar, both by card and unpaid.
    let own = sys
        .create_order(
            SARA,
            &json!({"point_offer_id": OFFER_100, "to_client_id": 1001, "payment_type": "checkout"}),
        )
        .await;
    let gift = sys
        .create_order(
            SARA,
            &json!({
                "point_offer_id": OFFER_100,
                "to_client_id": 1002,
                "payment_type": "checkout",
                "point_occasion_id": OCCASION,
            }),
        )
        .await;
    let (_, own_before) = sys.read_order(SARA, &own).await;
    let (_, gift_before) = sys.read_order(SARA, &gift).await;

    let not_found = (404, error_b("NOT_FOUND", "point order not found"));
    // Reading: neither Omar (not a party to `own`) nor Noura (not a party to either).
    for (who, id) in [
        (OMAR, &own),
        (NOURA, &own),
        (NOURA, &gift),
        (NOURA, &LEGACY_ORDER.to_owned()),
    ] {
        assert_eq!(sys.read_order(who, id).await, not_found, "{who} reads {id}");
    }
    // The recipient sees the gift, as the payer does.
    assert_eq!(
        sys.read_order(OMAR, &gift).await,
        (200, gift_before.clone())
    );
    // Paying: the payer only (the recipient gets 404 too).
    for (who, id) in [
        (OMAR, &own),
        (OMAR, &gift),
        (NOURA, &own),
        (OMAR, &LEGACY_ORDER.to_owned()),
    ] {
        for (route, body) in [
            ("card", json!({"id": "card_visa_4242", "cvv": "123"})),
            ("session", json!({"rememberMe": true})),
        ] {
            let url = sys.order(&format!("/api/v2/client/point-orders/{id}/pay/{route}"));
            assert_eq!(
                sys.call("POST", &url, Some(who), Some(&body)).await,
                not_found,
                "{who} pays {id} by {route}"
            );
        }
    }
    // Nothing moved: the owner reads the same orders, and no pay call left its note.
    assert_eq!(sys.read_order(SARA, &own).await, (200, own_before));
    assert_eq!(sys.read_order(SARA, &gift).await, (200, gift_before));
    assert_eq!(
        sys.points_db
            .count(
                "SELECT count(*) AS n FROM point_orders \
             WHERE payment_provider IS NOT NULL OR payment_reference IS NOT NULL"
            )
            .await,
        0
    );

    // Client ids in the query or the body are not the caller.
    let (status, balance) = sys
        .call(
            "GET",
            &sys.order("/api/v2/client/points?id=1001&user_id=1001&client_id=1001"),
            Some(OMAR),
            None,
        )
        .await;
    assert_eq!(
        (status, &balance["id"], &balance["user_id"]),
        (200, &json!("1002"), &json!("1002"))
    );
    let (status, history) = sys
        .call(
            "GET",
            &sys.order("/api/v2/client/point-history?client_id=1001&user_id=1001"),
            Some(OMAR),
            None,
        )
        .await;
    let (_, omars_history) = sys
        .call(
            "GET",
            &sys.order("/api/v2/client/point-history"),
            Some(OMAR),
            None,
        )
        .await;
    assert_eq!((status, &history), (200, &omars_history));
    // Noura pays Omar with points, naming Sara as payer in every way a body could.
    let sara_before = sys.balance(SARA).await;
    let noura_before = sys.balance(NOURA).await;
    sys.create_order(
        NOURA,
        &json!({"point_offer_id": OFFER_100, "to_client_id": 1002, "payment_type": "point",
                "payer_id": 1001, "client_id": 1001, "from_client_id": 1001, "user_id": 1001}),
    )
    .await;
    assert_eq!(sys.balance(SARA).await, sara_before, "Sara paid nothing");
    assert_eq!(
        (
            noura_before["points"].as_str(),
            sys.balance(NOURA).await["points"].as_str()
        ),
        (Some("1199.75"), Some("1079.75")),
        "the caller paid"
    );
    // The same Idempotency-Key and body from another client is another client's order.
    let body =
        json!({"point_offer_id": OFFER_100, "to_client_id": 1003, "payment_type": "checkout"});
    let key = [("Idempotency-Key", "security-shared-key")];
    let url = sys.order("/api/v2/client/point-orders");
    let (_, saras) = sys
        .stack
        .call("POST", &url, Some(SARA), &key, Some(&body))
        .await;
    let (status, omars) = sys
        .stack
        .call("POST", &url, Some(OMAR), &key, Some(&body))
        .await;
    assert_eq!(status, 200, "{omars}");
    assert_ne!(saras["correlation_id"], omars["correlation_id"]);
    assert_eq!(
        sys.read_order(SARA, omars["correlation_id"].as_str().unwrap())
            .await,
        not_found
    );

    // The address book.
    let sara = sys.primary(SARA).await;
    let omar = sys.primary(OMAR).await;
    let (status, created) = sys
        .call(
            "POST",
            &sys.auth("/api/v1/clients/address-book"),
            Some(&sara),
            Some(&json!({"label": "Home", "address_line": "Sara's secret street 7", "city": "Riyadh",
                         "latitude": 24.7, "longitude": 46.6, "notes": "gate code 4321", "is_default": true})),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    let address = created["data"].clone();
    let id = address["id"].as_str().unwrap();
    let one = sys.auth(&format!("/api/v1/clients/address-book/{id}"));
    let address_not_found = (404, error_a(404, "address not found"));
    for (method, body) in [
        ("GET", None),
        (
            "PUT",
            Some(json!({"label": "Omar's now", "notes": null, "is_default": false})),
        ),
        ("DELETE", None),
    ] {
        let (status, answer) = sys.call(method, &one, Some(&omar), body.as_ref()).await;
        assert_eq!(
            (status, without_stack(answer)),
            address_not_found,
            "Omar {method}s Sara's address"
        );
    }
    let (status, omars_book) = sys
        .call(
            "GET",
            &sys.auth("/api/v1/clients/address-book"),
            Some(&omar),
            None,
        )
        .await;
    assert_eq!(
        (status, omars_book),
        (200, json!({"status": 200, "data": []}))
    );
    assert_eq!(
        sys.call("GET", &one, Some(&sara), None).await,
        (200, json!({"status": 200, "data": address}))
    );

    // The profile and the push setting.
    let verify = sys.auth("/api/v1/clients/verify-token");
    let (_, sara_profile) = sys.call("GET", &verify, Some(&sara), None).await;
    let (_, omar_profile) = sys.call("GET", &verify, Some(&omar), None).await;
    let mismatch = (
        400,
        error_a(400, "client_id does not match the authenticated client"),
    );
    for (url, body) in [
        (
            sys.auth("/api/v1/clients/1001"),
            json!({"first_name": "Hacked", "email_address": "mallory@example.com"}),
        ),
        (
            sys.auth("/api/v1/clients/1002"),
            json!({"client_id": 1001, "first_name": "Hacked"}),
        ),
        (
            sys.auth("/api/v1/clients/1002"),
            json!({"client_id": "1001", "first_name": "Hacked"}),
        ),
        (
            sys.auth("/api/v1/clients/setting"),
            json!({"client_id": 1001, "push_enabled": 0}),
        ),
    ] {
        let (status, answer) = sys.call("PUT", &url, Some(&omar), Some(&body)).await;
        assert_eq!(
            (status, without_stack(answer)),
            mismatch,
            "PUT {url} {body}"
        );
    }
    assert_eq!(
        sys.call("GET", &verify, Some(&sara), None).await,
        (200, sara_profile)
    );
    assert_eq!(
        sys.call("GET", &verify, Some(&omar), None).await,
        (200, omar_profile)
    );

    // Operator routes with roles that may only read.
    let admin = operator_token("admin", 1);
    let (_, candidates_before) = sys
        .call(
            "GET",
            &sys.operator("/services/1/children"),
            Some(&admin),
            None,
        )
        .await;
    let (_, pharmacies_before) = sys
        .call("GET", &sys.operator("/services/3"), Some(&admin), None)
        .await;
    for role in ["merchant_manager", "store_manager", "data_entry"] {
        let token = operator_token(role, 1);
        let (status, _) = sys
            .call("GET", &sys.operator("/services/1"), Some(&token), None)
            .await;
        assert_eq!(status, 200, "{role} may read a service");
        let denied: [(&str, &str, Option<Value>); 6] = [
            ("GET", "/services/1/children", None),
            (
                "PATCH",
                "/services/1/children",
                Some(json!({"assignServiceIds": [8]})),
            ),
            (
                "PATCH",
                "/services/1/children",
                Some(json!({"unassignServiceIds": [4, 5, 6]})),
            ),
            (
                "PATCH",
                "/services/3",
                Some(json!({"hierarchyRole": "child", "status": "hidden"})),
            ),
            (
                "POST",
                "/services",
                Some(json!({"title": "x", "titleTranslated": "Mallory's"})),
            ),
            ("GET", "/audit", None),
        ];
        for (method, path, body) in denied {
            assert_eq!(
                sys.call(method, &sys.operator(path), Some(&token), body.as_ref())
                    .await,
                (403, operator_403()),
                "{role} {method} {path}"
            );
        }
    }
    assert_eq!(
        sys.call(
            "GET",
            &sys.operator("/services/1/children"),
            Some(&admin),
            None
        )
        .await,
        (200, candidates_before)
    );
    assert_eq!(
        sys.call("GET", &sys.operator("/services/3"), Some(&admin), None)
            .await,
        (200, pharmacies_before)
    );
    let (_, audit) = sys
        .call("GET", &sys.operator("/audit"), Some(&admin), None)
        .await;
    assert_eq!(audit["meta"]["totalItems"], 0, "{audit}");
    assert_eq!(
        sys.catalog_db
            .count("SELECT count(*) AS n FROM services")
            .await,
        9
    );
    // The app sees the same children as before.
    let (_, children) = sys
        .call(
            "GET",
            &sys.order("/api/v2/client/system-categories/1/children"),
            None,
            None,
        )
        .await;
    assert_eq!(ids(&children), [4, 5, 6]);
    assert_eq!(
        sys.auth_db
            .count("SELECT count(*) AS n FROM addresses")
            .await,
        1
    );
}
