//! The README's walkthrough, step by step, over the real four services, the payment sandbox
//! and PostgreSQL seeded with the demo fixture: log in with the test code, exchange for a
//! legacy token, read the balance, buy an offer with points for a friend, buy one by card
//! through the sandbox's 3-D Secure page, open a parent service's children, find the nearest
//! branch.

use e2e::DemoDatabases;
use e2e::demo::{OFFER_100, OFFER_250, OMAR, SARA_PHONE};
use e2e::stack::Stack;
use serde_json::{Value, json};

fn points(balance: &Value) -> f64 {
    // Only for comparing the demo's small balances in a test; the services never use floats.
    balance["points"].as_str().unwrap().parse().unwrap()
}

#[tokio::test]
async fn the_readme_walkthrough_works_end_to_end() {
    let databases = DemoDatabases::create("walkthrough").await;
    let stack = Stack::start(&databases.urls()).await;
    let (auth, order, sandbox) = (&stack.auth.base, &stack.order.base, &stack.sandbox.base);

    // 1. Log in with the test code (Sara's account is in test mode: no SMS, code 1234).
    let reset = format!("{auth}/api/v1/clients/reset-otp?contact_phone={SARA_PHONE}");
    assert_eq!(
        stack.call("GET", &reset, None, &[], None).await,
        (200, json!({"status": true}))
    );
    let verify = format!("{auth}/api/v1/clients/verify-otp?contact_phone={SARA_PHONE}&code=1234");
    let (status, login) = stack.call("GET", &verify, None, &[], None).await;
    assert_eq!(status, 200, "{login}");
    assert_eq!(login["data"]["profile"]["client_id"], 1001);
    let primary = login["data"]["access_token"].as_str().unwrap();

    // 2. Exchange the primary token for a legacy token, which the /api/v2 routes take.
    let (status, exchanged) = stack
        .call(
            "POST",
            &format!("{auth}/api/v1/clients/exchange-token"),
            None,
            &[],
            Some(&json!({"token": primary, "target_platform": "legacy"})),
        )
        .await;
    assert_eq!(status, 200, "{exchanged}");
    let token = exchanged["data"]["token"].as_str().unwrap().to_owned();
    let token = Some(token.as_str());

    // 3. The balance, through the order service's relay.
    let balance_url = format!("{order}/api/v2/client/points");
    let (status, balance) = stack.call("GET", &balance_url, token, &[], None).await;
    assert_eq!(status, 200);
    assert_eq!(
        balance,
        json!({
            "id": "1001",
            "user_id": "1001",
            "points": "630.5",
            "pointsExpirationDate": balance["pointsExpirationDate"],
        })
    );
    let (_, omar_before) = stack.call("GET", &balance_url, Some(OMAR), &[], None).await;

    // 4. An offer for a friend, paid with points: Sara pays 120, Omar gets 100.
    let orders = format!("{order}/api/v2/client/point-orders");
    let gift = json!({"point_offer_id": OFFER_100, "to_client_id": 1002, "payment_type": "point"});
    let key = [("Idempotency-Key", "walkthrough-gift-1")];
    let (status, created) = stack.call("POST", &orders, token, &key, Some(&gift)).await;
    assert_eq!(status, 200, "{created}");
    assert_eq!(created["status"], "successful");
    assert_eq!(created["order_type"], "transfer");
    let (_, after) = stack.call("GET", &balance_url, token, &[], None).await;
    assert_eq!(after["points"], "510.5");
    let (_, omar_after) = stack.call("GET", &balance_url, Some(OMAR), &[], None).await;
    assert_eq!(points(&omar_after) - points(&omar_before), 100.0);
    // The same key again is the same order, not a second spend.
    let (status, again) = stack.call("POST", &orders, token, &key, Some(&gift)).await;
    assert_eq!(
        (status, &again["correlation_id"]),
        (200, &created["correlation_id"])
    );
    let (_, still) = stack.call("GET", &balance_url, token, &[], None).await;
    assert_eq!(still["points"], "510.5");

    // 5. An offer by card: the sandbox's 3-D Secure page, then its Approve button.
    let by_card =
        json!({"point_offer_id": OFFER_250, "to_client_id": 1001, "payment_type": "checkout"});
    let key = [("Idempotency-Key", "walkthrough-card-1")];
    let (status, created) = stack
        .call("POST", &orders, token, &key, Some(&by_card))
        .await;
    assert_eq!(status, 200, "{created}");
    let id = created["correlation_id"].as_str().unwrap();
    let (status, started) = stack
        .call(
            "POST",
            &format!("{orders}/{id}/pay/card"),
            token,
            &[],
            Some(&json!({"id": "card_visa_4242", "cvv": "123"})),
        )
        .await;
    assert_eq!(status, 200, "{started}");
    assert_eq!(started["status"], "pending");
    let page = started["redirect_url"].as_str().unwrap();
    assert!(page.starts_with(&format!("{sandbox}/3ds/")), "{page}");
    let (status, html) = stack.call("GET", page, None, &[], None).await;
    assert_eq!(status, 200);
    assert!(html.as_str().unwrap().contains("35.00 SAR"), "{html}");
    let (status, html) = stack
        .call("POST", &format!("{page}/approve"), None, &[], None)
        .await;
    assert_eq!(status, 200, "{html}");
    let (_, paid) = stack
        .call("GET", &format!("{orders}/{id}"), token, &[], None)
        .await;
    assert_eq!(
        (paid["status"].as_str(), paid["payment_status"].as_str()),
        (Some("successful"), Some("CAPTURED"))
    );
    let (_, after) = stack.call("GET", &balance_url, token, &[], None).await;
    assert_eq!(after["points"], "760.5");

    // 6. A parent service's children, as the app opens them.
    let (status, children) = stack
        .call(
            "GET",
            &format!("{order}/api/v2/client/system-categories/1/children"),
            None,
            &[],
            None,
        )
        .await;
    assert_eq!(status, 200, "{children}");
    assert_eq!(testkit::ids(&children), [4, 5, 6]);
    assert_eq!(children["data"][0]["titleTranslated"], "Burgers");

    // 7. The nearest branch of the Riyadh burger brand.
    let nearest = format!(
        "{order}/api/v2/client/banners/merchant/77/nearest-store?latitude=24.7136&longitude=46.6753"
    );
    assert_eq!(
        stack.call("GET", &nearest, None, &[], None).await,
        (200, json!({"store_id": 10}))
    );
}

/// The README's walkthrough block as a reader pastes it, run by bash (`-eu -o pipefail`: any
/// step that fails stops it) against one stack, twice. Each paste must buy again, not replay
/// the first paste's orders: Sara 120 points down and 250 up, Omar 100 up, each time.
#[tokio::test]
async fn the_readme_walkthrough_pasted_twice_moves_the_balances_twice() {
    let databases = DemoDatabases::create("walkthrough_twice").await;
    let stack = Stack::start(&databases.urls()).await;
    let script = readme_walkthrough(&stack);
    let balance_url = format!("{}/api/v2/client/points", stack.order.base);
    let (_, sara) = stack
        .call("GET", &balance_url, Some(e2e::demo::SARA), &[], None)
        .await;
    let (_, omar) = stack.call("GET", &balance_url, Some(OMAR), &[], None).await;
    let (mut sara, mut omar) = (points(&sara), points(&omar));

    for paste in 1..=2 {
        let out = tokio::process::Command::new("bash")
            .args(["-eu", "-o", "pipefail", "-c", &script])
            .current_dir(e2e::repo_root())
            .output()
            .await
            .unwrap();
        assert!(
            out.status.success(),
            "paste {paste} failed ({}):\n{}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let (_, sara_now) = stack
            .call("GET", &balance_url, Some(e2e::demo::SARA), &[], None)
            .await;
        let (_, omar_now) = stack.call("GET", &balance_url, Some(OMAR), &[], None).await;
        assert_eq!(
            points(&sara_now) - sara,
            130.0,
            "paste {paste}: Sara {sara_now}"
        );
        assert_eq!(
            points(&omar_now) - omar,
            100.0,
            "paste {paste}: Omar {omar_now}"
        );
        (sara, omar) = (points(&sara_now), points(&omar_now));
    }
}

/// The first `sh` block under "## Walkthrough" in README.md, its `localhost:<port>` addresses
/// moved to the stack's ports.
fn readme_walkthrough(stack: &Stack) -> String {
    let readme = std::fs::read_to_string(e2e::repo_root().join("README.md")).unwrap();
    let section = &readme[readme
        .find("## Walkthrough")
        .expect("no Walkthrough section")..];
    let start = section.find("```sh\n").expect("no sh block") + "```sh\n".len();
    let block = &section[start..start + section[start..].find("\n```").unwrap()];
    let mut script = block.to_owned();
    for (port, service) in [
        (8081, &stack.auth),
        (8082, &stack.order),
        (8083, &stack.points),
        (8084, &stack.operator),
        (8085, &stack.sandbox),
    ] {
        script = script.replace(
            &format!("localhost:{port}"),
            &format!("127.0.0.1:{}", service.port()),
        );
    }
    assert!(!script.contains("localhost:808"), "{script}");
    script
}
