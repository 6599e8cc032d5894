//! The loyalty back office over the real services: an operator creates, reprices and
//! withdraws an offer through the operator API (relayed to the real point service), and the
//! app, through the order service's relay, lists, buys and loses it at each step; the audit
//! trail names the operator of each change. A gift-code batch issued through it is printed,
//! redeemed by a client through the app, and listed credited.

use e2e::DemoDatabases;
use e2e::demo::{OMAR, SARA};
use e2e::operator_token;
use e2e::stack::Stack;
use serde_json::{Value, json};

/// Each keeper serves the back-office routes the table gives it, and no other.
#[test]
fn each_keeper_serves_exactly_the_routes_the_table_gives_it() {
    use back_office::routes::{Keeper, Route};
    use std::collections::BTreeSet;
    let keepers = [
        (Keeper::PointService, point_service::routes::routes()),
        (Keeper::OrderService, order_service::routes::routes()),
    ];
    for (keeper, routes) in keepers {
        let served: BTreeSet<(String, String)> = routes
            .iter()
            .map(|route| (route.method_name().to_owned(), route.documented_path()))
            .filter(|(_, path)| path.starts_with(back_office::INTERNAL_PREFIX))
            .collect();
        let table: BTreeSet<(String, String)> = Route::kept_by(keeper)
            .map(|(method, path)| (method.to_owned(), path))
            .collect();
        assert_eq!(served, table, "{keeper:?}");
    }
}

#[tokio::test]
async fn an_offer_the_back_office_creates_is_sold_by_the_app_until_it_is_withdrawn() {
    let databases = DemoDatabases::create("back_office").await;
    let stack = Stack::start(&databases.urls()).await;
    let admin = operator_token("admin", "loyalty-7", 1);
    let reader = operator_token("data_entry", "reader-1", 1);
    let operator = |path: &str| format!("{}/api/v1/operator{path}", stack.operator.base);
    let app = |path: &str| format!("{}/api/v2/client{path}", stack.order.base);

    // A lower role reads but cannot create.
    let body = json!({"pointAmount": "40.5", "purchasedPointAmount": "45", "amount": "6.25",
                      "sequence": 0});
    let (status, _) = stack
        .call(
            "POST",
            &operator("/offers"),
            Some(&reader),
            &[],
            Some(&body),
        )
        .await;
    assert_eq!(status, 403);
    let (status, created) = stack
        .call("POST", &operator("/offers"), Some(&admin), &[], Some(&body))
        .await;
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_str().unwrap().to_owned();

    // The app lists it first (sequence 0) and sells it.
    let (status, listed) = stack
        .call("GET", &app("/point-offers"), Some(SARA), &[], None)
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        listed[0],
        json!({"id": id, "point_amount": 40.5, "purchased_point_amount": 45, "amount": "6.25"})
    );
    let gift = json!({"point_offer_id": id, "to_client_id": 1002, "payment_type": "point"});
    let (status, order) = stack
        .call("POST", &app("/point-orders"), Some(SARA), &[], Some(&gift))
        .await;
    assert_eq!(status, 200, "{order}");
    assert_eq!(
        (
            &order["status"],
            &order["point_amount"],
            &order["purchased_point_amount"]
        ),
        (&json!("successful"), &json!(40.5), &json!(45))
    );

    // Repriced: the app sees the new price on its next request.
    let (status, changed) = stack
        .call(
            "PATCH",
            &operator(&format!("/offers/{id}")),
            Some(&admin),
            &[],
            Some(&json!({"amount": 7})),
        )
        .await;
    assert_eq!(
        (status, &changed["amount"]),
        (200, &json!("7.00")),
        "{changed}"
    );
    let (_, one) = stack
        .call(
            "GET",
            &app(&format!("/point-offers/{id}")),
            Some(OMAR),
            &[],
            None,
        )
        .await;
    assert_eq!(one["amount"], json!("7.00"));

    // Withdrawn: gone from the app, an order naming it refused.
    let (status, _) = stack
        .call(
            "DELETE",
            &operator(&format!("/offers/{id}")),
            Some(&admin),
            &[],
            None,
        )
        .await;
    assert_eq!(status, 200);
    let (status, _) = stack
        .call(
            "GET",
            &app(&format!("/point-offers/{id}")),
            Some(OMAR),
            &[],
            None,
        )
        .await;
    assert_eq!(status, 404);
    let (status, _) = stack
        .call("POST", &app("/point-orders"), Some(SARA), &[], Some(&gift))
        .await;
    assert_eq!(status, 404);

    // The trail: three changes by loyalty-7, newest first, each with both sides.
    let (status, audit) = stack
        .call("GET", &operator("/loyalty/audit"), Some(&admin), &[], None)
        .await;
    assert_eq!(status, 200, "{audit}");
    let actions: Vec<(&str, &str, &str)> = audit["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["action"].as_str().unwrap(),
                e["operatorId"].as_str().unwrap(),
                e["role"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        actions,
        [
            ("offer.withdraw", "loyalty-7", "admin"),
            ("offer.update", "loyalty-7", "admin"),
            ("offer.create", "loyalty-7", "admin"),
        ]
    );
    assert_eq!(audit["data"][1]["before"]["amount"], json!("6.25"));
    assert_eq!(audit["data"][2]["before"], Value::Null);
}

#[tokio::test]
async fn a_batch_the_back_office_issues_is_printed_redeemed_and_listed_credited() {
    let databases = DemoDatabases::create("back_office_gift_codes").await;
    let stack = Stack::start(&databases.urls()).await;
    let issuer = operator_token("super_admin", "loyalty-1", 1);
    let admin = operator_token("admin", "loyalty-7", 1);
    let operator = |path: &str| format!("{}/api/v1/operator{path}", stack.operator.base);
    let app = |path: &str| format!("{}/api/v2/client{path}", stack.order.base);
    let balance = |token: &'static str| {
        let stack = &stack;
        async move {
            let (status, body) = stack
                .call("GET", &app("/points"), Some(token), &[], None)
                .await;
            assert_eq!(status, 200, "{body}");
            body["points"].as_str().unwrap().to_owned()
        }
    };

    // Only super_admin issues.
    let body = json!({"reference": "eid-print-1", "count": 3, "points": "25.5", "prefix": "EID"});
    let (status, _) = stack
        .call(
            "POST",
            &operator("/gift-code-batches"),
            Some(&admin),
            &[],
            Some(&body),
        )
        .await;
    assert_eq!(status, 403);
    let (status, batch) = stack
        .call(
            "POST",
            &operator("/gift-code-batches"),
            Some(&issuer),
            &[],
            Some(&body),
        )
        .await;
    assert_eq!(status, 201, "{batch}");
    let id = batch["id"].as_i64().unwrap();

    // Printed: the CSV's codes, as the print shop gets them.
    let (status, csv) = stack
        .call(
            "GET",
            &operator(&format!("/gift-code-batches/{id}/codes.csv")),
            Some(&issuer),
            &[],
            None,
        )
        .await;
    assert_eq!(status, 200);
    let mut rows = csv.as_str().unwrap().lines();
    assert_eq!(rows.next(), Some("code,points,expires_at"));
    let codes: Vec<String> = rows
        .map(|row| row.split(',').next().unwrap().to_owned())
        .collect();
    assert_eq!(codes.len(), 3);

    // A client redeems one through the app: the real point service credits her.
    assert_eq!(balance(SARA).await, "630.5");
    let (status, redeemed) = stack
        .call(
            "POST",
            &app("/gift-card-code"),
            Some(SARA),
            &[],
            Some(&json!({"code": codes[0]})),
        )
        .await;
    assert_eq!(status, 200, "{redeemed}");
    assert_eq!(redeemed["points"], json!("25.5"));
    assert_eq!(balance(SARA).await, "656");

    // The batch lists that code credited to her, and the CSV no longer holds it.
    let (status, listed) = stack
        .call(
            "GET",
            &operator(&format!("/gift-code-batches/{id}")),
            Some(&issuer),
            &[],
            None,
        )
        .await;
    assert_eq!(status, 200, "{listed}");
    let code = listed["codes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["code"] == json!(codes[0]))
        .unwrap();
    assert_eq!(
        (&code["state"], &code["clientId"]),
        (&json!("credited"), &json!(1001))
    );
    assert_eq!(listed["batch"]["codes"]["credited"], json!(1));

    // Withdrawn: the rest are 404 to the app; the credited one stays credited.
    let (status, withdrawn) = stack
        .call(
            "DELETE",
            &operator(&format!("/gift-code-batches/{id}")),
            Some(&issuer),
            &[],
            None,
        )
        .await;
    assert_eq!(status, 200, "{withdrawn}");
    assert_eq!(
        withdrawn["codes"],
        json!({"unused": 0, "beingCredited": 0, "credited": 1, "withdrawn": 2, "expired": 0})
    );
    let (status, _) = stack
        .call(
            "POST",
            &app("/gift-card-code"),
            Some(OMAR),
            &[],
            Some(&json!({"code": codes[1]})),
        )
        .await;
    assert_eq!(status, 404);

    // The earn-rate table: replaced by an admin on its version, read by the app next.
    let (_, table) = stack
        .call("GET", &operator("/earn-rates"), Some(&admin), &[], None)
        .await;
    let rates = json!([{"amount_from": 0, "amount_to": 75.5, "point_earn": 3},
                       {"amount_from": 75.5, "amount_to": null, "point_earn": 9.25}]);
    let (status, replaced) = stack
        .call(
            "PUT",
            &operator("/earn-rates"),
            Some(&admin),
            &[],
            Some(&json!({"rates": rates, "version": table["version"]})),
        )
        .await;
    assert_eq!(status, 200, "{replaced}");
    let (_, read) = stack
        .call("GET", &app("/system_configs/point_rates"), None, &[], None)
        .await;
    assert_eq!(read, rates);

    // The catalog's trail names each change's operator, and who saw the codes.
    let (status, trail) = stack
        .call(
            "GET",
            &operator("/loyalty/catalog-audit"),
            Some(&admin),
            &[],
            None,
        )
        .await;
    assert_eq!(status, 200, "{trail}");
    let actions: Vec<(&str, &str)> = trail["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["action"].as_str().unwrap(),
                e["operatorId"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        actions,
        [
            ("earn-rates.replace", "loyalty-7"),
            ("gift-code-batch.withdraw", "loyalty-1"),
            ("gift-code-batch.read", "loyalty-1"),
            ("gift-code-batch.export", "loyalty-1"),
            ("gift-code-batch.issue", "loyalty-1"),
        ]
    );
}

/// Every operator role on every back-office route, through the real operator service to the
/// real keepers (each checking the operator service's own credential and the operator it
/// vouches for): a role the table does not admit is the operator service's 403; an admitted
/// one reaches the keeper, whose answer comes back as it is: a success, or its refusal with
/// its `code` (an id no record has, a body with nothing in it), never a 401, 403 or 5xx.
/// Nothing is written.
#[tokio::test]
async fn every_role_on_every_back_office_route_gets_what_the_table_promises_from_the_real_keepers()
{
    use back_office::role::Role;
    use back_office::routes::{PathId, Route};
    let databases = DemoDatabases::create("back_office_roles").await;
    let stack = Stack::start(&databases.urls()).await;
    let tokens: Vec<(Role, String)> = Role::ALL
        .into_iter()
        .map(|role| (role, operator_token(role.as_str(), "matrix-1", 1)))
        .collect();
    for route in Route::ALL {
        let contract = route.contract();
        let method = contract.method_name();
        let id = match route.rule().id {
            Some(PathId::Offer | PathId::Occasion) => "ffffffffffffffffffffffff",
            Some(PathId::Client | PathId::Batch) => "987654",
            None => "",
        };
        let url = format!(
            "{}{}{}",
            stack.operator.base,
            back_office::routes::OPERATOR_PREFIX,
            contract.path.replace("{id}", id)
        );
        let body = matches!(method, "POST" | "PUT" | "PATCH").then(|| json!({}));
        for (role, token) in &tokens {
            let (status, answer) = stack
                .call(method, &url, Some(token), &[], body.as_ref())
                .await;
            let what = format!("{route:?} as {role:?}: {status} {answer}");
            if !route.rule().admits.admits(*role) {
                assert_eq!(
                    (status, &answer["message"]),
                    (403, &json!("Forbidden resource")),
                    "{what}"
                );
                continue;
            }
            assert!(status < 500 && status != 401 && status != 403, "{what}");
            if status >= 400 {
                assert!(answer["code"].is_string(), "a keeper's refusal: {what}");
            }
        }
    }
    for database in [&databases.points, &databases.catalog] {
        let written = database
            .count("SELECT count(*) AS n FROM back_office_audit")
            .await;
        assert_eq!(written, 0);
    }
}
