//! A cross-service security suite over the real binaries, the payment sandbox and
//! PostgreSQL seeded with the demo fixture. Each test starts one `Stack` and tries, from the
//! outside, what an attacker holding one client's tokens (or none) would try:
//!
//! 1. other clients' orders, addresses and profiles, and operator routes with roles the
//!    spec does not admit;
//! 2. every kind of bad token on every family of routes (each envelope's exact 401);
//! 3. forged, re-bodied, stale and unsigned payment webhooks, and a valid one twice;
//! 4. SQL metacharacters and odd input in every search, filter, path and query parameter;
//! 5. the internal routes: never through the relay, never with a client's header, never
//!    without the token;
//! 6. secrets in the logs of all five processes;
//! 7. JSON bodies nested too deep, on every route that takes a body;
//! 8. slow clients and too many connections, through the `HTTP_*` variables.
//!
//! The per-service API tests (`services/*/tests/api/`) check most of these rules on one
//! service in process; these check them across the real processes, through the relay and
//! the real caller lookup, reading the outcome back as the owner.

use std::time::Duration;

use db::testing::TestDatabase;
use e2e::stack::{Databases, Stack};
use e2e::{OPERATOR_SECRET, WEBHOOK_SECRET, binary, demo_database};
use futures_util::StreamExt;
use hmac::{Hmac, KeyInit, Mac};
use serde_json::{Value, json};
use sha2::{Sha256, Sha512};

// The demo fixture's clients and their legacy tokens.
const SARA: &str = "legacy-token-of-sara-0123456789abcdef";
const OMAR: &str = "legacy-token-of-omar-0123456789abcdef";
const NOURA: &str = "legacy-token-of-noura-0123456789abcdef";
const FAHAD: &str = "legacy-token-of-fahad-0123456789abcdef";
const REEM: &str = "legacy-token-of-reem-0123456789abcdef";
const CLOSED: &str = "legacy-token-of-closed-0123456789abcdef";
const SARA_PHONE: &str = "%2B966500000001";
const OFFER_100: &str = "64b7f0c2a1b2c3d4e5f60718";
const OCCASION: &str = "64b7f0c2a1b2c3d4e5f60801";
const LEGACY_ORDER: &str = "6f1c1f9e-2d0b-4b43-9a52-5d2f0c7e8a11";

/// The secrets the harness starts every service with (`e2e::base_env`, which keeps them
/// private; repeated here because the attacks need them).
const AUTH_SECRET: &str = "e2e-auth-jwt-secret-0123456789abcdef0123";
const INTERNAL_TOKEN: &str = "e2e-internal-token-0123456789abcdef01234";

/// The spec's 401 on the auth routes (envelope A, `stack` removed).
fn unauthorization() -> Value {
    json!({"status": 401, "message": "Unauthorization"})
}

/// The operator routes' 401 and 403 (docs/design.md "Tokens").
fn operator_401() -> Value {
    json!({"statusCode": 401, "message": "Unauthorized", "error": "Unauthorized"})
}

fn operator_403() -> Value {
    json!({"statusCode": 403, "message": "Forbidden resource", "error": "Forbidden"})
}

fn error_a(status: u16, message: &str) -> Value {
    json!({"status": status, "message": message})
}

fn error_b(code: &str, message: &str) -> Value {
    json!({"success": false, "error": {"code": code, "message": message}})
}

fn error_c(status: u16, message: &str) -> Value {
    json!({"message": message, "statusCode": status})
}

/// Envelope A carries `stack` outside production; the tests compare the rest.
fn without_stack(mut body: Value) -> Value {
    if let Some(object) = body.as_object_mut() {
        object.remove("stack");
    }
    body
}

/// The three demo databases and the whole system over them (the databases must outlive
/// the processes).
struct System {
    stack: Stack,
    auth_db: TestDatabase,
    points_db: TestDatabase,
    catalog_db: TestDatabase,
}

async fn system(before_start: Option<&Value>) -> System {
    let auth_db = demo_database(&["auth-service"], "sec_auth").await;
    if let Some(fixture) = before_start {
        seed(&auth_db, "auth-service", fixture).await;
    }
    let points_db = demo_database(&["point-service"], "sec_points").await;
    let catalog_db = demo_database(&["order-service", "operator-service"], "sec_catalog").await;
    let stack = Stack::start(&Databases {
        auth: auth_db.url().to_owned(),
        points: points_db.url().to_owned(),
        catalog: catalog_db.url().to_owned(),
    })
    .await;
    System {
        stack,
        auth_db,
        points_db,
        catalog_db,
    }
}

/// Loads an extra fixture with one service's `seed` subcommand.
async fn seed(database: &TestDatabase, service: &str, fixture: &Value) {
    let path = std::env::temp_dir().join(format!("security-{}.json", uuid::Uuid::new_v4()));
    std::fs::write(&path, fixture.to_string()).unwrap();
    let output = e2e::run(
        service,
        &["seed", path.to_str().unwrap()],
        database.url(),
        &[],
    )
    .await;
    let _ = std::fs::remove_file(&path);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// One number from a database: `sql` must select a single `bigint` named `n`.
async fn count(database: &TestDatabase, sql: &str) -> i64 {
    use diesel_async::RunQueryDsl;
    #[derive(diesel::QueryableByName)]
    struct N {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    let mut conn = database.connect().await;
    let found: N = diesel::sql_query(sql)
        .get_result(&mut conn)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    found.n
}

/// The URL-safe, unpadded base64 of JWTs.
fn b64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0_u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

enum Signature<'a> {
    None,
    Hs256(&'a str),
    Hs512(&'a str),
}

/// A JWT with any header and claims, signed as asked.
fn jwt(header: &Value, claims: &Value, signature: Signature) -> String {
    let input = format!(
        "{}.{}",
        b64url(header.to_string().as_bytes()),
        b64url(claims.to_string().as_bytes())
    );
    let mac = match signature {
        Signature::None => Vec::new(),
        Signature::Hs256(key) => {
            let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(key.as_bytes()).unwrap();
            mac.update(input.as_bytes());
            mac.finalize().into_bytes().to_vec()
        }
        Signature::Hs512(key) => {
            let mut mac = <Hmac<Sha512> as KeyInit>::new_from_slice(key.as_bytes()).unwrap();
            mac.update(input.as_bytes());
            mac.finalize().into_bytes().to_vec()
        }
    };
    format!("{input}.{}", b64url(&mac))
}

fn primary_claims(client_id: i64) -> Value {
    json!({"sub": client_id.to_string(), "typ": "primary", "iat": chrono::Utc::now().timestamp()})
}

fn operator_claims(role: &str, hours: i64) -> Value {
    json!({"sub": "mallory", "role": role, "exp": chrono::Utc::now().timestamp() + hours * 3600})
}

fn hs256() -> Value {
    json!({"alg": "HS256", "typ": "JWT"})
}

/// An operator token from the binary's own `token` subcommand.
fn operator_token(role: &str, hours: i64) -> String {
    let output = std::process::Command::new(binary("operator-service"))
        .args([
            "token",
            "--role",
            role,
            "--sub",
            "e2e-security",
            &format!("--hours={hours}"),
        ])
        .env("OPERATOR_JWT_SECRET", OPERATOR_SECRET)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

/// The webhook's `X-Signature` for `body` at time `t`, under `secret`.
fn signature(secret: &str, t: i64, body: &str) -> String {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(format!("{t}.{body}").as_bytes());
    format!("t={t},v1={}", hex::encode(mac.finalize().into_bytes()))
}

fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

impl System {
    fn order(&self, path: &str) -> String {
        format!("{}{path}", self.stack.order.base)
    }

    fn auth(&self, path: &str) -> String {
        format!("{}{path}", self.stack.auth.base)
    }

    fn operator(&self, path: &str) -> String {
        format!("{}/api/v1/operator{path}", self.stack.operator.base)
    }

    async fn call(
        &self,
        method: &str,
        url: &str,
        token: Option<&str>,
        body: Option<&Value>,
    ) -> (u16, Value) {
        self.stack.call(method, url, token, &[], body).await
    }

    /// A request with a raw `Authorization` header value (or none).
    async fn call_with_authorization(
        &self,
        method: &str,
        url: &str,
        authorization: Option<&str>,
        body: Option<&Value>,
    ) -> (u16, Value) {
        let headers: Vec<(&str, &str)> = authorization
            .map(|a| vec![("Authorization", a)])
            .unwrap_or_default();
        self.stack.call(method, url, None, &headers, body).await
    }

    /// A primary token for a legacy token's client, by exchange-token.
    async fn primary(&self, legacy: &str) -> String {
        let (status, answer) = self
            .call(
                "POST",
                &self.auth("/api/v1/clients/exchange-token"),
                None,
                Some(&json!({"token": legacy, "target_platform": "primary"})),
            )
            .await;
        assert_eq!(status, 200, "{answer}");
        answer["data"]["token"].as_str().unwrap().to_owned()
    }

    async fn balance(&self, legacy: &str) -> Value {
        let (status, balance) = self
            .call(
                "GET",
                &self.order("/api/v2/client/points"),
                Some(legacy),
                None,
            )
            .await;
        assert_eq!(status, 200, "{balance}");
        balance
    }

    async fn create_order(&self, legacy: &str, body: &Value) -> String {
        let (status, created) = self
            .call(
                "POST",
                &self.order("/api/v2/client/point-orders"),
                Some(legacy),
                Some(body),
            )
            .await;
        assert_eq!(status, 200, "{created}");
        created["correlation_id"].as_str().unwrap().to_owned()
    }

    async fn read_order(&self, legacy: &str, id: &str) -> (u16, Value) {
        self.call(
            "GET",
            &self.order(&format!("/api/v2/client/point-orders/{id}")),
            Some(legacy),
            None,
        )
        .await
    }

    /// Posts a webhook body with a given `X-Signature` (or none) straight to the point
    /// service, as the payment service would.
    async fn webhook(&self, body: &str, signature: Option<&str>) -> (u16, Value) {
        let mut request = self
            .stack
            .points
            .client()
            .post(format!("{}/webhooks/v1/payments", self.stack.points.base))
            .header("content-type", "application/json")
            .body(body.to_owned());
        if let Some(signature) = signature {
            request = request.header("x-signature", signature);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    /// Every log line of the five processes, each with the process's name.
    fn all_logs(&self) -> Vec<(&'static str, String)> {
        let s = &self.stack;
        [&s.auth, &s.points, &s.order, &s.operator, &s.sandbox]
            .into_iter()
            .flat_map(|service| {
                service
                    .logs()
                    .into_iter()
                    .map(move |line| (service.name, line))
            })
            .collect()
    }
}

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
            &json!({"point_offer_id": OFFER_100, "to_client_id": 1002, "payment_type": "checkout", "point_occasion_id": OCCASION}),
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
        count(
            &sys.points_db,
            "SELECT count(*) AS n FROM point_orders WHERE payment_provider IS NOT NULL OR payment_reference IS NOT NULL"
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
        count(&sys.catalog_db, "SELECT count(*) AS n FROM services").await,
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
    let ids: Vec<i64> = children["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, [4, 5, 6]);
    assert_eq!(
        count(&sys.auth_db, "SELECT count(*) AS n FROM addresses").await,
        1
    );
}

/// What one family of routes answers to a bad token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Family {
    /// Auth routes that take the primary token: envelope A `Unauthorization`.
    Primary,
    /// `GET /api/v1/users`, the legacy-token caller lookup: envelope A `Unauthorization`.
    Users,
    /// The relayed point routes: envelope B, the message by the header's form.
    Points,
    /// The gift-card route: envelope C, the same messages as the point routes.
    GiftCard,
    /// The operator routes: `{statusCode, message, error}`.
    Operator,
}

impl Family {
    /// The exact 401 for an `Authorization` header value (or none). HTTP drops the
    /// whitespace around a header value, so `Bearer ` arrives as `Bearer`.
    fn refusal(self, authorization: Option<&str>) -> Value {
        let message = match authorization.map(str::trim) {
            Some(value) if value.starts_with("Bearer ") => "Invalid or expired token",
            _ => "Missing or invalid authorization header",
        };
        match self {
            Family::Primary | Family::Users => unauthorization(),
            Family::Points => error_b("UNAUTHORIZED", message),
            Family::GiftCard => error_c(401, message),
            Family::Operator => operator_401(),
        }
    }
}

/// 2. Tokens: every bad token on every family of routes is that family's exact 401 — a
/// primary token forged with another secret, `alg: none`, another algorithm's header
/// (HS512 really signed with the secret, RS256 over an HMAC), another `typ`, a malformed,
/// truncated or empty token, a legacy token where the primary one is required and the
/// reverse (spec "Authentication"), an inactive client's tokens, a token of the other
/// issuer (operator on client routes, client on operator routes, and one signed with the
/// other service's secret), an expired or forged operator token, an unknown role. Genuine
/// tokens made the same way pass, so each refusal is for the reason it tests. The same
/// forgeries in exchange-token's body get its 401 and mint nothing.
#[tokio::test]
async fn every_bad_token_gets_the_exact_401_of_its_routes() {
    let sys = system(None).await;
    let sara_primary = sys.primary(SARA).await;
    let admin = operator_token("admin", 1);
    let expired_admin = operator_token("super_admin", -1);

    // Controls: tokens made by these helpers with the right secrets are accepted, so the
    // forgeries below fail for the reason they test.
    let forged_ok = jwt(
        &hs256(),
        &primary_claims(1001),
        Signature::Hs256(AUTH_SECRET),
    );
    let (status, profile) = sys
        .call(
            "GET",
            &sys.auth("/api/v1/clients/verify-token"),
            Some(&forged_ok),
            None,
        )
        .await;
    assert_eq!((status, &profile["client_id"]), (200, &json!(1001)));
    let operator_ok = jwt(
        &hs256(),
        &operator_claims("admin", 1),
        Signature::Hs256(OPERATOR_SECRET),
    );
    let (status, _) = sys
        .call("GET", &sys.operator("/services"), Some(&operator_ok), None)
        .await;
    assert_eq!(status, 200);

    // One route of each kind per family, with a body a genuine caller could send.
    let routes: Vec<(Family, &str, String, Option<Value>)> = vec![
        (
            Family::Primary,
            "GET",
            sys.auth("/api/v1/clients/verify-token"),
            None,
        ),
        (
            Family::Primary,
            "GET",
            sys.auth(&format!("/api/v1/clients?contact_phone={SARA_PHONE}")),
            None,
        ),
        (
            Family::Primary,
            "GET",
            sys.auth("/api/v1/clients/address-book"),
            None,
        ),
        (
            Family::Primary,
            "POST",
            sys.auth("/api/v1/clients/address-book"),
            Some(
                json!({"label": "x", "address_line": "x", "city": "x", "latitude": 1, "longitude": 1}),
            ),
        ),
        (
            Family::Primary,
            "GET",
            sys.auth("/api/v1/clients/address-book/65a1b2c3d4e5f60718293a4b"),
            None,
        ),
        (
            Family::Primary,
            "PUT",
            sys.auth("/api/v1/clients/1001"),
            Some(json!({"first_name": "Mallory"})),
        ),
        (
            Family::Primary,
            "PUT",
            sys.auth("/api/v1/clients/setting"),
            Some(json!({"client_id": 1001, "push_enabled": 0})),
        ),
        (Family::Users, "GET", sys.auth("/api/v1/users"), None),
        (
            Family::Points,
            "GET",
            sys.order("/api/v2/client/points"),
            None,
        ),
        (
            Family::Points,
            "GET",
            sys.order("/api/v2/client/point-history"),
            None,
        ),
        (
            Family::Points,
            "GET",
            sys.order("/api/v2/client/points-faq"),
            None,
        ),
        (
            Family::Points,
            "GET",
            sys.order("/api/v2/client/point-offers"),
            None,
        ),
        (
            Family::Points,
            "GET",
            sys.order(&format!("/api/v2/client/point-offers/{OFFER_100}")),
            None,
        ),
        (
            Family::Points,
            "GET",
            sys.order("/api/v2/client/point-occasions"),
            None,
        ),
        (
            Family::Points,
            "POST",
            sys.order("/api/v2/client/point-orders"),
            Some(
                json!({"point_offer_id": OFFER_100, "to_client_id": 1002, "payment_type": "point"}),
            ),
        ),
        (
            Family::Points,
            "POST",
            sys.order("/api/v2/client/point-orders/description"),
            Some(json!({"point_offer_id": OFFER_100})),
        ),
        (
            Family::Points,
            "GET",
            sys.order(&format!("/api/v2/client/point-orders/{LEGACY_ORDER}")),
            None,
        ),
        (
            Family::Points,
            "POST",
            sys.order(&format!(
                "/api/v2/client/point-orders/{LEGACY_ORDER}/pay/card"
            )),
            Some(json!({"id": "card_visa_4242", "cvv": "123"})),
        ),
        (
            Family::Points,
            "POST",
            sys.order(&format!(
                "/api/v2/client/point-orders/{LEGACY_ORDER}/pay/session"
            )),
            Some(json!({})),
        ),
        (
            Family::GiftCard,
            "POST",
            sys.order("/api/v2/client/gift-card-code"),
            Some(json!({"code": "WELCOME-100"})),
        ),
        (Family::Operator, "GET", sys.operator("/services"), None),
        (Family::Operator, "GET", sys.operator("/services/1"), None),
        (
            Family::Operator,
            "GET",
            sys.operator("/services/1/children"),
            None,
        ),
        (
            Family::Operator,
            "PATCH",
            sys.operator("/services/1/children"),
            Some(json!({"assignServiceIds": [8]})),
        ),
        (
            Family::Operator,
            "POST",
            sys.operator("/services"),
            Some(json!({"title": "x", "titleTranslated": "x"})),
        ),
        (
            Family::Operator,
            "PATCH",
            sys.operator("/services/3"),
            Some(json!({"hierarchyRole": "child"})),
        ),
        (Family::Operator, "GET", sys.operator("/audit"), None),
    ];

    let truncated_primary = sara_primary[..sara_primary.len() - 3].to_owned();
    let inactive_primary = jwt(
        &hs256(),
        &primary_claims(1099),
        Signature::Hs256(AUTH_SECRET),
    );
    let signed =
        |header: Value, claims: Value| jwt(&header, &claims, Signature::Hs256(AUTH_SECRET));
    let everywhere = [
        Family::Primary,
        Family::Users,
        Family::Points,
        Family::GiftCard,
        Family::Operator,
    ];
    let not_operator = [
        Family::Primary,
        Family::Users,
        Family::Points,
        Family::GiftCard,
    ];
    let legacy_side = [
        Family::Users,
        Family::Points,
        Family::GiftCard,
        Family::Operator,
    ];
    let primary_side = [Family::Primary, Family::Operator];
    // (what, Authorization header value or none, the families that must refuse it)
    let cases: Vec<(&str, Option<String>, &[Family])> = vec![
        ("no header", None, &everywhere),
        ("empty Bearer", Some("Bearer ".into()), &everywhere),
        (
            "Bearer without a space",
            Some(format!("Bearer{SARA}")),
            &everywhere,
        ),
        (
            "lower-case scheme",
            Some(format!("bearer {SARA}")),
            &everywhere,
        ),
        (
            "Basic scheme",
            Some("Basic c2FyYTpzZWNyZXQ=".into()),
            &everywhere,
        ),
        ("the token without a scheme", Some(SARA.into()), &everywhere),
        ("malformed", Some("Bearer not.a.jwt".into()), &everywhere),
        (
            "three empty segments",
            Some("Bearer ..".into()),
            &everywhere,
        ),
        (
            "SQL in the token",
            Some("Bearer ' OR '1'='1".into()),
            &everywhere,
        ),
        (
            "truncated primary",
            Some(format!("Bearer {truncated_primary}")),
            &everywhere,
        ),
        (
            "primary with garbage after it",
            Some(format!("Bearer {sara_primary}x")),
            &everywhere,
        ),
        (
            "truncated legacy",
            Some(format!("Bearer {}", &SARA[..SARA.len() - 1])),
            &everywhere,
        ),
        (
            "legacy with a prefix",
            Some(format!("Bearer x{SARA}")),
            &everywhere,
        ),
        (
            "HS256 under another secret",
            Some(format!(
                "Bearer {}",
                jwt(
                    &hs256(),
                    &primary_claims(1001),
                    Signature::Hs256("not-the-secret-0123456789abcdef")
                )
            )),
            &everywhere,
        ),
        (
            "alg none, unsigned",
            Some(format!(
                "Bearer {}",
                jwt(
                    &json!({"alg": "none", "typ": "JWT"}),
                    &primary_claims(1001),
                    Signature::None
                )
            )),
            &everywhere,
        ),
        (
            "alg none, signed anyway",
            Some(format!(
                "Bearer {}",
                signed(json!({"alg": "none", "typ": "JWT"}), primary_claims(1001))
            )),
            &everywhere,
        ),
        (
            "alg None (capitalised)",
            Some(format!(
                "Bearer {}",
                jwt(
                    &json!({"alg": "None"}),
                    &primary_claims(1001),
                    Signature::None
                )
            )),
            &everywhere,
        ),
        (
            "HS512, really signed with the secret",
            Some(format!(
                "Bearer {}",
                jwt(
                    &json!({"alg": "HS512", "typ": "JWT"}),
                    &primary_claims(1001),
                    Signature::Hs512(AUTH_SECRET)
                )
            )),
            &everywhere,
        ),
        (
            "RS256 header over an HMAC with the secret",
            Some(format!(
                "Bearer {}",
                signed(json!({"alg": "RS256", "typ": "JWT"}), primary_claims(1001))
            )),
            &everywhere,
        ),
        (
            "typ legacy, signed with the secret",
            Some(format!(
                "Bearer {}",
                signed(hs256(), json!({"sub": "1001", "typ": "legacy"}))
            )),
            &everywhere,
        ),
        (
            "no typ, signed with the secret",
            Some(format!(
                "Bearer {}",
                signed(hs256(), json!({"sub": "1001"}))
            )),
            &everywhere,
        ),
        (
            "sub not a client id",
            Some(format!(
                "Bearer {}",
                signed(hs256(), json!({"sub": "1001 OR 1=1", "typ": "primary"}))
            )),
            &everywhere,
        ),
        (
            "sub of no client",
            Some(format!(
                "Bearer {}",
                signed(hs256(), primary_claims(999_999))
            )),
            &everywhere,
        ),
        (
            "the inactive client's legacy token",
            Some(format!("Bearer {CLOSED}")),
            &everywhere,
        ),
        (
            "the inactive client's primary token",
            Some(format!("Bearer {inactive_primary}")),
            &everywhere,
        ),
        // Each kind of client token where the other is required, and never on operator routes.
        (
            "a legacy token",
            Some(format!("Bearer {SARA}")),
            &primary_side,
        ),
        (
            "a primary token",
            Some(format!("Bearer {sara_primary}")),
            &legacy_side,
        ),
        // Operator tokens: never on client routes; expired, forged or of no role, nowhere.
        (
            "a valid operator token",
            Some(format!("Bearer {admin}")),
            &not_operator,
        ),
        (
            "an expired operator token",
            Some(format!("Bearer {expired_admin}")),
            &everywhere,
        ),
        (
            "an operator token under another secret",
            Some(format!(
                "Bearer {}",
                jwt(
                    &hs256(),
                    &operator_claims("super_admin", 1),
                    Signature::Hs256("not-the-secret-0123456789abcdef")
                )
            )),
            &everywhere,
        ),
        (
            "an operator token signed with the auth secret",
            Some(format!(
                "Bearer {}",
                jwt(
                    &hs256(),
                    &operator_claims("super_admin", 1),
                    Signature::Hs256(AUTH_SECRET)
                )
            )),
            &everywhere,
        ),
        (
            "a primary token signed with the operator secret",
            Some(format!(
                "Bearer {}",
                jwt(
                    &hs256(),
                    &primary_claims(1001),
                    Signature::Hs256(OPERATOR_SECRET)
                )
            )),
            &everywhere,
        ),
        (
            "an operator token with alg none",
            Some(format!(
                "Bearer {}",
                jwt(
                    &json!({"alg": "none"}),
                    &operator_claims("super_admin", 1),
                    Signature::None
                )
            )),
            &everywhere,
        ),
        (
            "an operator token, HS512 with the secret",
            Some(format!(
                "Bearer {}",
                jwt(
                    &json!({"alg": "HS512", "typ": "JWT"}),
                    &operator_claims("super_admin", 1),
                    Signature::Hs512(OPERATOR_SECRET)
                )
            )),
            &everywhere,
        ),
        (
            "an operator token without exp",
            Some(format!(
                "Bearer {}",
                jwt(
                    &hs256(),
                    &json!({"sub": "mallory", "role": "super_admin"}),
                    Signature::Hs256(OPERATOR_SECRET)
                )
            )),
            &everywhere,
        ),
        (
            "an operator token of an unknown role",
            Some(format!(
                "Bearer {}",
                jwt(
                    &hs256(),
                    &operator_claims("root", 1),
                    Signature::Hs256(OPERATOR_SECRET)
                )
            )),
            &everywhere,
        ),
    ];

    let sara_before = sys.balance(SARA).await;
    let omar_before = sys.balance(OMAR).await;
    // The common cases on every route; the rest (the same parsing code each time) on the
    // first route and the first write of each family.
    let every_route = [
        "no header",
        "empty Bearer",
        "the inactive client's legacy token",
        "the inactive client's primary token",
        "a legacy token",
        "a primary token",
        "a valid operator token",
        "an expired operator token",
    ];
    let mut sample: Vec<usize> = everywhere
        .iter()
        .flat_map(|family| {
            [
                routes.iter().position(|r| r.0 == *family),
                routes.iter().position(|r| r.0 == *family && r.1 != "GET"),
            ]
        })
        .flatten()
        .collect();
    sample.dedup();
    // A few at a time.
    let sys = &sys;
    let sample = &sample;
    let tries = cases.iter().flat_map(|(what, authorization, families)| {
        let all = every_route.contains(what);
        routes
            .iter()
            .enumerate()
            .filter(move |(i, (family, ..))| {
                families.contains(family) && (all || sample.contains(i))
            })
            .map(|(_, route)| route)
            .map(move |(family, method, url, body)| {
                (what, authorization, family, method, url, body)
            })
    });
    let tries: Vec<_> = tries.collect();
    // 5 cases on all 27 routes, 3 on the 14 or 20 routes that must refuse them, and 28 on
    // the 8 sampled routes.
    assert_eq!(
        (cases.len(), routes.len(), sample.len(), tries.len()),
        (36, 27, 8, 27 * 5 + 14 + 20 + 20 + 28 * 8)
    );
    let failures: Vec<String> = futures_util::stream::iter(tries)
        .map(
            |(what, authorization, family, method, url, body)| async move {
                let (status, answer) = sys
                    .call_with_authorization(method, url, authorization.as_deref(), body.as_ref())
                    .await;
                let expected = (401, family.refusal(authorization.as_deref()));
                let got = (status, without_stack(answer));
                (got != expected)
                    .then(|| format!("{what} on {method} {url}: {got:?}, expected {expected:?}"))
            },
        )
        .buffer_unordered(16)
        .filter_map(std::future::ready)
        .collect()
        .await;
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // exchange-token mints tokens from a token in its body: the same forgeries get 401.
    let minted_before = count(&sys.auth_db, "SELECT count(*) AS n FROM legacy_tokens").await;
    let forged_for_exchange = [
        CLOSED.to_owned(),
        inactive_primary.clone(),
        truncated_primary.clone(),
        format!("x{SARA}"),
        admin.clone(),
        "' OR 1=1 --".to_owned(),
        jwt(
            &json!({"alg": "none"}),
            &primary_claims(1001),
            Signature::None,
        ),
        jwt(
            &hs256(),
            &primary_claims(1001),
            Signature::Hs256("not-the-secret-0123456789abcdef"),
        ),
        jwt(
            &json!({"alg": "HS512"}),
            &primary_claims(1001),
            Signature::Hs512(AUTH_SECRET),
        ),
        jwt(
            &hs256(),
            &primary_claims(1001),
            Signature::Hs256(OPERATOR_SECRET),
        ),
    ];
    for token in &forged_for_exchange {
        for target in ["primary", "legacy"] {
            let (status, answer) = sys
                .call(
                    "POST",
                    &sys.auth("/api/v1/clients/exchange-token"),
                    None,
                    Some(&json!({"token": token, "target_platform": target})),
                )
                .await;
            assert_eq!(
                (status, without_stack(answer)),
                (401, unauthorization()),
                "exchange-token to {target} with {token}"
            );
        }
    }
    assert_eq!(
        count(&sys.auth_db, "SELECT count(*) AS n FROM legacy_tokens").await,
        minted_before,
        "no legacy token was minted"
    );

    // Nothing any of them tried happened.
    assert_eq!(sys.balance(SARA).await, sara_before);
    assert_eq!(sys.balance(OMAR).await, omar_before);
    for table in [
        "point_orders WHERE order_no IS NOT NULL",
        "internal_credits",
        "idempotency_keys",
    ] {
        assert_eq!(
            count(
                &sys.points_db,
                &format!("SELECT count(*) AS n FROM {table}")
            )
            .await,
            0,
            "{table}"
        );
    }
    assert_eq!(
        count(&sys.auth_db, "SELECT count(*) AS n FROM addresses").await,
        0
    );
    assert_eq!(
        count(&sys.auth_db, "SELECT count(*) AS n FROM clients WHERE first_name = 'Mallory' OR push_enabled = 0 AND client_id = 1001").await,
        0
    );
    assert_eq!(
        count(&sys.catalog_db, "SELECT count(*) AS n FROM services").await,
        9
    );
    assert_eq!(
        count(&sys.catalog_db, "SELECT count(*) AS n FROM operator_audit").await,
        0
    );
    assert_eq!(
        count(
            &sys.catalog_db,
            "SELECT count(*) AS n FROM gift_card_redemptions"
        )
        .await,
        0
    );
}

/// 3. The payment webhook, guarded by its signature alone: a signature under another
/// secret, one over another body, a replay of a valid request whose timestamp is more than
/// 300 s old (or ahead), a malformed header and none at all are each the exact 401 and change
/// nothing — the order stays `initial_order`, no event is recorded, no ledger entry is
/// written. The order service never takes the webhook. A valid event delivered twice
/// credits once, and the same capture under a new event id is not credited again.
#[tokio::test]
async fn a_webhook_without_a_fresh_signature_over_its_body_changes_nothing() {
    let sys = system(None).await;
    let id = sys
        .create_order(
            SARA,
            &json!({"point_offer_id": OFFER_100, "to_client_id": 1002, "payment_type": "checkout"}),
        )
        .await;
    let omar_before = sys.balance(OMAR).await;
    let (_, order_before) = sys.read_order(SARA, &id).await;
    assert_eq!(order_before["status"], "initial_order");
    let event = |event_id: &str, amount: i64| {
        json!({"id": event_id, "type": "payment_captured",
               "data": {"reference": id, "payment_id": "pay_mallory", "provider": "sandbox",
                        "amount_minor": amount, "currency": "SAR"}})
        .to_string()
    };
    let capture = event("evt_security_1", 1500);
    let refused = (401, error_b("UNAUTHORIZED", "invalid signature"));
    let t = now();
    let good = signature(WEBHOOK_SECRET, t, &capture);
    let v1 = good.split_once(",v1=").unwrap().1.to_owned();
    let attempts: Vec<(&str, String, Option<String>)> = vec![
        (
            "another secret",
            capture.clone(),
            Some(signature(
                "not-the-webhook-secret-0123456789abcdef",
                t,
                &capture,
            )),
        ),
        (
            "a signature over another body (a cheaper capture)",
            capture.clone(),
            Some(signature(WEBHOOK_SECRET, t, &event("evt_security_1", 1))),
        ),
        (
            "a valid signature, the body changed after signing",
            capture.replace("pay_mallory", "pay_mallorx"),
            Some(good.clone()),
        ),
        (
            "a valid signature, whitespace added to the body",
            format!("{capture} "),
            Some(good.clone()),
        ),
        (
            "a replay 301 s later",
            capture.clone(),
            Some(signature(WEBHOOK_SECRET, t - 301, &capture)),
        ),
        (
            "a replay an hour later",
            capture.clone(),
            Some(signature(WEBHOOK_SECRET, t - 3600, &capture)),
        ),
        (
            "a timestamp 301 s ahead",
            capture.clone(),
            Some(signature(WEBHOOK_SECRET, t + 301, &capture)),
        ),
        (
            "the timestamp changed, the signature kept",
            capture.clone(),
            Some(format!("t={},v1={v1}", t - 1)),
        ),
        ("no v1", capture.clone(), Some(format!("t={t}"))),
        ("no t", capture.clone(), Some(format!("v1={v1}"))),
        ("an empty v1", capture.clone(), Some(format!("t={t},v1="))),
        (
            "v1 not hex",
            capture.clone(),
            Some(format!("t={t},v1=zz{v1}")),
        ),
        (
            "a truncated v1",
            capture.clone(),
            Some(format!("t={t},v1={}", &v1[..32])),
        ),
        ("an empty header", capture.clone(), Some(String::new())),
        ("garbage", capture.clone(), Some("' OR 1=1 --".to_owned())),
        ("no header", capture.clone(), None),
    ];
    for (what, body, header) in &attempts {
        assert_eq!(
            sys.webhook(body, header.as_deref()).await,
            refused,
            "{what}"
        );
    }
    // The order service does not take webhooks: its own 404, nothing relayed.
    let (status, answer) = sys
        .stack
        .call(
            "POST",
            &sys.order("/webhooks/v1/payments"),
            None,
            &[("X-Signature", good.as_str())],
            Some(&serde_json::from_str(&capture).unwrap()),
        )
        .await;
    assert_eq!(
        (status, answer),
        (404, error_c(404, "Cannot POST /webhooks/v1/payments"))
    );
    // Nothing changed anywhere.
    assert_eq!(sys.read_order(SARA, &id).await, (200, order_before.clone()));
    assert_eq!(sys.balance(OMAR).await, omar_before);
    assert_eq!(
        count(&sys.points_db, "SELECT count(*) AS n FROM payment_events").await,
        0
    );
    let entries =
        format!("SELECT count(*) AS n FROM point_entries WHERE order_correlation_id = '{id}'");
    assert_eq!(count(&sys.points_db, &entries).await, 0);

    // The genuine event, delivered twice: credited once.
    let fresh = signature(WEBHOOK_SECRET, now(), &capture);
    assert_eq!(
        sys.webhook(&capture, Some(&fresh)).await,
        (200, json!({"received": true, "outcome": "captured"}))
    );
    assert_eq!(
        sys.webhook(&capture, Some(&fresh)).await,
        (200, json!({"received": true, "outcome": "duplicate_event"}))
    );
    // The same capture under a new event id is recorded, not credited.
    let again = event("evt_security_2", 1500);
    assert_eq!(
        sys.webhook(&again, Some(&signature(WEBHOOK_SECRET, now(), &again)))
            .await,
        (
            200,
            json!({"received": true, "outcome": "duplicate_capture"})
        )
    );
    let (status, paid) = sys.read_order(SARA, &id).await;
    assert_eq!(
        (
            status,
            paid["status"].as_str(),
            paid["payment_status"].as_str()
        ),
        (200, Some("successful"), Some("CAPTURED"))
    );
    let before: f64 = omar_before["points"].as_str().unwrap().parse().unwrap();
    let after: f64 = sys.balance(OMAR).await["points"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(after - before, 100.0, "credited once");
    assert_eq!(count(&sys.points_db, &entries).await, 1);
}

/// Odd values for every parameter: SQL metacharacters, LIKE wildcards and the escape
/// character, NUL, control and bidi characters, very long text, non-Latin scripts, number
/// edge cases.
fn odd_inputs() -> Vec<String> {
    let mut inputs: Vec<String> = [
        "' OR 1=1 --",
        "%",
        "_",
        "\\",
        "\r\n",
        "مطاعم",
        "😀\u{202e}",
        "0",
        "99999999999999999999",
        "NaN",
        " 1 ",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    inputs.push("A".repeat(4096));
    inputs
}

/// Text with a NUL byte, which PostgreSQL cannot hold in a text value.
const NUL_INPUTS: [&str; 2] = ["\0", "a\0b"];

/// Percent-encodes everything but the unreserved characters, for a path segment or a
/// query value.
fn enc(raw: &str) -> String {
    raw.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

type Rule = Box<dyn Fn(u16, &Value) -> bool + Send + Sync>;

/// One request (method, URL, bearer token, JSON body) and how it must be answered.
type Probe = (String, String, Option<String>, Option<Value>, Expect);

/// How an odd input must be answered.
enum Expect {
    /// Exactly this status and body (`stack` removed).
    Exactly(u16, Value),
    /// A rule, described.
    Rule(String, Rule),
}

fn rule(
    what: impl Into<String>,
    check: impl Fn(u16, &Value) -> bool + Send + Sync + 'static,
) -> Expect {
    Expect::Rule(what.into(), Box::new(check))
}

/// The ids of the demo services whose titles contain `search` (trimmed; empty is no
/// filter), case-insensitively and literally, as the operator search must find them.
fn demo_services_matching(search: &str) -> Vec<i64> {
    let fixture: Value = serde_json::from_str(
        &std::fs::read_to_string(e2e::repo_root().join("deploy/fixtures/demo.json")).unwrap(),
    )
    .unwrap();
    let search = search.trim().to_lowercase();
    fixture["services"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| {
            ["title", "titleTranslated"]
                .iter()
                .any(|key| s[key].as_str().unwrap().to_lowercase().contains(&search))
        })
        .map(|s| s["id"].as_i64().unwrap())
        .collect()
}

/// The `id`s of a list answer: `{data: [...]}` or a bare array.
fn ids(answer: &Value) -> Vec<i64> {
    answer
        .get("data")
        .unwrap_or(answer)
        .as_array()
        .map(|rows| rows.iter().filter_map(|r| r["id"].as_i64()).collect())
        .unwrap_or_default()
}

fn sorted(mut ids: Vec<i64>) -> Vec<i64> {
    ids.sort_unstable();
    ids
}

/// Runs the probes a few at a time and returns what failed, described.
async fn failures(sys: &System, probes: &[Probe]) -> Vec<String> {
    futures_util::stream::iter(probes)
        .map(|(method, url, token, body, expect)| async move {
            let (status, answer) = sys.call(method, url, token.as_deref(), body.as_ref()).await;
            let answer = without_stack(answer);
            let (ok, wanted) = match expect {
                Expect::Exactly(s, b) => ((status, &answer) == (*s, b), format!("{s} {b}")),
                Expect::Rule(what, check) => (check(status, &answer), what.clone()),
            };
            (!ok).then(|| {
                let url: String = url.chars().take(150).collect();
                let body: String = body
                    .as_ref()
                    .map(|b| b.to_string().chars().take(120).collect())
                    .unwrap_or_default();
                let answer: String = answer.to_string().chars().take(300).collect();
                format!(
                    "{method} {url} {body}: {status} {answer}; expected {}",
                    wanted.chars().take(300).collect::<String>()
                )
            })
        })
        .buffer_unordered(8)
        .filter_map(std::future::ready)
        .collect()
        .await
}

/// The answers that do not depend on an odd input.
struct Baseline {
    sara: String,
    admin: String,
    history: Value,
    offers: Value,
    occasions: Value,
    home: Value,
    first_page: Value,
}

impl Baseline {
    async fn read(sys: &System) -> Baseline {
        let sara = sys.primary(SARA).await;
        let admin = operator_token("admin", 1);
        let get = |url: String, token: Option<String>| async move {
            sys.call("GET", &url, token.as_deref(), None).await.1
        };
        Baseline {
            history: get(sys.order("/api/v2/client/point-history"), Some(SARA.into())).await,
            offers: get(sys.order("/api/v2/client/point-offers"), Some(SARA.into())).await,
            occasions: get(
                sys.order("/api/v2/client/point-occasions"),
                Some(SARA.into()),
            )
            .await,
            home: get(sys.order("/api/v2/client/system-categories"), None).await,
            first_page: get(sys.operator("/services"), Some(admin.clone())).await,
            sara,
            admin,
        }
    }
}

/// Every search, filter, path and query parameter (and the free-text body fields that
/// reach a query or a row) with each of `inputs`, and the route's own answer to it.
fn odd_input_probes(sys: &System, base: &Baseline, inputs: &[String]) -> Vec<Probe> {
    let (sara, admin) = (&base.sara, &base.admin);
    let history_ids = ids(&base.history);
    let mut probes: Vec<Probe> = Vec::new();
    let mut probe =
        |method: &str, url: String, token: Option<&str>, body: Option<Value>, expect: Expect| {
            probes.push((
                method.to_owned(),
                url,
                token.map(str::to_owned),
                body,
                expect,
            ));
        };
    let operator_error = |status: u16, message: &str, error: &str| json!({"statusCode": status, "message": message, "error": error});
    for raw in inputs {
        let e = enc(raw);
        let blank = raw.trim().is_empty();
        let integer = raw.parse::<i64>().ok();
        let trimmed_integer = raw.trim().parse::<i64>().ok();
        let a_number = raw.trim().parse::<f64>().is_ok_and(f64::is_finite);

        // The auth service.
        {
            let phone_expect = |found: Value| {
                if blank {
                    Expect::Exactly(400, error_a(400, "contact_phone is required"))
                } else {
                    Expect::Exactly(found["status"].as_u64().unwrap() as u16, found)
                }
            };
            probe(
                "GET",
                sys.auth(&format!("/api/v1/clients?contact_phone={e}")),
                Some(sara),
                None,
                phone_expect(error_a(404, "client not found")),
            );
            probe(
                "GET",
                sys.auth(&format!("/api/v1/clients/reset-otp?contact_phone={e}")),
                None,
                None,
                // reset-otp has no "required" message: an empty phone is an unknown one.
                Expect::Exactly(400, error_a(400, "Last Name cannot be blank.")),
            );
            probe(
                "GET",
                sys.auth(&format!(
                    "/api/v1/clients/verify-otp?contact_phone={e}&code={e}"
                )),
                None,
                None,
                phone_expect(error_a(400, "Invalid or expired code")),
            );
        }
        let bad_address_id =
            Expect::Exactly(400, error_a(400, "id must be a 24-character hex ObjectId"));
        for method in ["GET", "DELETE"] {
            probe(
                method,
                sys.auth(&format!("/api/v1/clients/address-book/{e}")),
                Some(sara),
                None,
                Expect::Exactly(400, error_a(400, "id must be a 24-character hex ObjectId")),
            );
        }
        probe(
            "PUT",
            sys.auth(&format!("/api/v1/clients/address-book/{e}")),
            Some(sara),
            Some(json!({"label": "x"})),
            // PUT also takes a legacy numeric id: Sara has none.
            match integer.filter(|n| *n >= 0) {
                Some(_) => Expect::Exactly(404, error_a(404, "address not found")),
                None => bad_address_id,
            },
        );
        probe(
            "PUT",
            sys.auth(&format!("/api/v1/clients/{e}")),
            Some(sara),
            Some(json!({"first_name": "Sara"})),
            Expect::Exactly(
                400,
                error_a(400, "client_id does not match the authenticated client"),
            ),
        );
        // Digits reach the route and its token check; anything else matches no route.
        probe(
            "GET",
            sys.auth(&format!("/internal/v1/clients/{e}")),
            None,
            None,
            if !raw.is_empty() && raw.bytes().all(|b| b.is_ascii_digit()) {
                Expect::Exactly(401, unauthorization())
            } else {
                Expect::Exactly(
                    404,
                    error_a(404, &format!("Cannot GET /internal/v1/clients/{e}")),
                )
            },
        );

        // The point routes, through the relay.
        probe(
            "GET",
            sys.order(&format!("/api/v2/client/point-offers/{e}")),
            Some(SARA),
            None,
            Expect::Exactly(
                400,
                error_b(
                    "VALIDATION_ERROR",
                    "point offer id must be a 24-character hex ObjectId",
                ),
            ),
        );
        probe(
            "GET",
            sys.order(&format!("/api/v2/client/point-orders/{e}")),
            Some(SARA),
            None,
            Expect::Exactly(404, error_b("NOT_FOUND", "point order not found")),
        );
        for route in ["card", "session"] {
            probe(
                "POST",
                sys.order(&format!("/api/v2/client/point-orders/{e}/pay/{route}")),
                Some(SARA),
                Some(json!({"id": "card_visa_4242", "cvv": "123"})),
                Expect::Exactly(404, error_b("NOT_FOUND", "point order not found")),
            );
        }
        let own_history = history_ids.clone();
        probe(
            "GET",
            sys.order(&format!("/api/v2/client/point-history?page={e}&limit={e}")),
            Some(SARA),
            None,
            if a_number {
                rule("200 with Sara's own entries only", move |status, answer| {
                    status == 200 && ids(answer).iter().all(|id| own_history.contains(id))
                })
            } else {
                Expect::Exactly(200, base.history.clone())
            },
        );
        probe(
            "GET",
            sys.order(&format!("/api/v2/client/point-offers?id={e}")),
            Some(SARA),
            None,
            Expect::Exactly(200, base.offers.clone()),
        );
        probe(
            "GET",
            sys.order(&format!(
                "/api/v2/client/point-occasions?language={e}&id={e}"
            )),
            Some(SARA),
            None,
            Expect::Exactly(200, base.occasions.clone()),
        );
        // Free text in bodies: the occasion is stored with a checkout order; the description
        // echoes it. Never a gift (free text never decides it), never a 5xx.
        let long = raw.trim().chars().count() > 255;
        probe(
            "POST",
            sys.order("/api/v2/client/point-orders"),
            Some(SARA),
            Some(
                json!({"point_offer_id": OFFER_100, "to_client_id": 1002, "payment_type": "checkout", "occasion": raw}),
            ),
            if long {
                rule(
                    "400 VALIDATION_ERROR Invalid point-order body",
                    |status, answer| {
                        status == 400 && answer["error"]["message"] == "Invalid point-order body"
                    },
                )
            } else {
                rule("200, a transfer", |status, answer| {
                    status == 200 && answer["order_type"] == "transfer"
                })
            },
        );
        probe(
            "POST",
            sys.order("/api/v2/client/point-orders"),
            Some(SARA),
            Some(
                json!({"point_offer_id": raw, "to_client_id": raw, "payment_type": raw, "point_occasion_id": raw}),
            ),
            rule(
                "400 VALIDATION_ERROR Invalid point-order body",
                |status, answer| {
                    status == 400
                        && answer["success"] == false
                        && answer["error"]["code"] == "VALIDATION_ERROR"
                        && answer["error"]["message"] == "Invalid point-order body"
                },
            ),
        );
        probe(
            "POST",
            sys.order("/api/v2/client/point-orders/description"),
            Some(SARA),
            Some(json!({"point_offer_id": OFFER_100, "occasion": raw, "language": raw})),
            rule("200 {description} naming Sara", |status, answer| {
                status == 200
                    && answer["description"]
                        .as_str()
                        .is_some_and(|d| d.starts_with("Sara Ali sent you 100 points"))
            }),
        );

        // The order service's own routes.
        probe(
            "GET",
            sys.order(&format!("/api/v2/client/stores/{e}")),
            None,
            None,
            Expect::Exactly(404, error_c(404, "Store not found")),
        );
        probe(
            "GET",
            sys.order(&format!("/api/v2/client/stores?merchantId={e}")),
            None,
            None,
            match trimmed_integer {
                Some(_) => Expect::Exactly(200, json!({"data": []})),
                None => Expect::Exactly(400, error_c(400, "merchantId must be an integer")),
            },
        );
        for tail in ["", "/children"] {
            probe(
                "GET",
                sys.order(&format!("/api/v2/client/system-categories/{e}{tail}")),
                None,
                None,
                Expect::Exactly(404, error_c(404, "Service is not found")),
            );
        }
        probe(
            "GET",
            sys.order(&format!("/api/v2/client/system-categories?language={e}")),
            None,
            None,
            Expect::Exactly(200, base.home.clone()),
        );
        probe(
            "GET",
            sys.order(&format!(
                "/api/v2/client/banners/merchant/{e}/nearest-store?latitude=24.7&longitude=46.6"
            )),
            None,
            None,
            Expect::Exactly(200, json!({"store_id": null})),
        );
        probe(
            "GET",
            sys.order(&format!(
                "/api/v2/client/banners/merchant/77/nearest-store?latitude={e}&longitude={e}"
            )),
            None,
            None,
            if a_number {
                rule(
                    "200 {store_id: null or a store of brand 77}",
                    |status, answer| {
                        status == 200
                            && answer.as_object().is_some_and(|o| o.len() == 1)
                            && (answer["store_id"].is_null()
                                || answer["store_id"]
                                    .as_i64()
                                    .is_some_and(|id| (10..=18).contains(&id)))
                    },
                )
            } else {
                Expect::Exactly(200, json!({"store_id": null}))
            },
        );

        // The operator service.
        probe(
            "GET",
            sys.operator(&format!("/services/{e}")),
            Some(admin),
            None,
            match integer {
                Some(_) => Expect::Exactly(
                    404,
                    operator_error(404, "Service is not found", "Not Found"),
                ),
                None => Expect::Exactly(
                    400,
                    operator_error(
                        400,
                        "Validation failed (numeric string is expected)",
                        "Bad Request",
                    ),
                ),
            },
        );
        for path in ["/services", "/services/all/without-pagination"] {
            probe(
                "GET",
                sys.operator(&format!("{path}?hierarchy_role={e}")),
                Some(admin),
                None,
                Expect::Exactly(
                    400,
                    operator_error(
                        400,
                        "each value in hierarchy_role must be a valid enum value",
                        "Bad Request",
                    ),
                ),
            );
            for key in ["search", "name"] {
                let expected = sorted(demo_services_matching(raw));
                probe(
                    "GET",
                    sys.operator(&format!("{path}?{key}={e}&limit=100")),
                    Some(admin),
                    None,
                    rule(
                        format!("200 with exactly the services {expected:?}"),
                        move |status, answer| status == 200 && sorted(ids(answer)) == expected,
                    ),
                );
            }
            probe(
                "GET",
                sys.operator(&format!("{path}?status={e}")),
                Some(admin),
                None,
                rule("200 with no service", |status, answer| {
                    status == 200 && ids(answer).is_empty() && answer.get("error").is_none()
                }),
            );
        }
        let candidates: Vec<i64> = demo_services_matching(raw)
            .into_iter()
            .filter(|id| [4, 5, 6, 8].contains(id))
            .collect();
        probe(
            "GET",
            sys.operator(&format!(
                "/services/1/children?search={e}&status={e}&page={e}&limit={e}"
            )),
            Some(admin),
            None,
            rule(
                "200 with no candidate (no status matches)",
                |status, answer| {
                    status == 200 && ids(answer).is_empty() && answer["meta"].is_object()
                },
            ),
        );
        probe(
            "GET",
            sys.operator(&format!("/services/1/children?name={e}&limit=100")),
            Some(admin),
            None,
            rule(
                format!("200 with exactly the candidates {candidates:?}"),
                move |status, answer| status == 200 && sorted(ids(answer)) == candidates,
            ),
        );
        probe(
            "GET",
            sys.operator(&format!("/services?page={e}&limit={e}")),
            Some(admin),
            None,
            if a_number {
                rule("200 with the demo's 9 services in all", |status, answer| {
                    status == 200 && answer["meta"]["totalItems"] == 9
                })
            } else {
                Expect::Exactly(200, base.first_page.clone())
            },
        );
    }
    probes
}

/// 4. SQL metacharacters and odd input in every search, filter, path and query parameter
/// (and the free-text body fields that reach a query or a row): each answer is the route's
/// own clean 4xx or 200 in its envelope — never a 5xx — and never shows another client's
/// or another row's data: a phone lookup finds nobody, an operator search finds exactly the
/// services whose titles contain the text (`%`, `_` and `\` match themselves), a filter
/// that cannot match matches nothing, a gift-card code of `%` or `_` redeems nothing, a list
/// with an unreadable page is the first page. (Text with a NUL byte is left to
/// `a_nul_byte_in_text_input_is_a_clean_400_not_a_500`, a known bug.)
#[tokio::test]
async fn odd_input_in_every_parameter_is_a_clean_answer_in_the_routes_envelope() {
    let sys = system(None).await;
    let base = Baseline::read(&sys).await;
    let sara_before = sys.balance(SARA).await;
    let fahad_before = sys.balance(FAHAD).await;

    let mut probes = odd_input_probes(&sys, &base, &odd_inputs());
    let mut probe =
        |method: &str, url: String, token: Option<&str>, body: Option<Value>, expect: Expect| {
            probes.push((
                method.to_owned(),
                url,
                token.map(str::to_owned),
                body,
                expect,
            ));
        };
    // Gift-card codes: wrong codes are limited (10 per client, 30 per address an hour),
    // so a few of the inputs, by one client. `%` and `_` must not match WELCOME-100.
    for raw in [
        "' OR 1=1 --",
        "%",
        "_ELCOME-100",
        "WELCOME-100' --",
        "\\",
        "مطاعم",
        "😀",
    ] {
        probe(
            "POST",
            sys.order("/api/v2/client/gift-card-code"),
            Some(FAHAD),
            Some(json!({"code": raw})),
            Expect::Exactly(404, error_c(404, "The code not exist")),
        );
    }
    probe(
        "POST",
        sys.order("/api/v2/client/gift-card-code"),
        Some(FAHAD),
        Some(json!({"code": "A".repeat(4096)})),
        Expect::Exactly(400, error_c(400, "code is required")),
    );

    let found = failures(&sys, &probes).await;
    assert!(
        found.is_empty(),
        "{} of {} probes failed:\n{}",
        found.len(),
        probes.len(),
        found.join("\n")
    );
    // Nothing was paid or credited on the way.
    assert_eq!(sys.balance(SARA).await, sara_before);
    assert_eq!(sys.balance(FAHAD).await, fahad_before);
    assert_eq!(
        count(
            &sys.catalog_db,
            "SELECT count(*) AS n FROM gift_card_redemptions"
        )
        .await,
        0
    );
}

/// A NUL byte in text input: PostgreSQL refuses it in a text value ("invalid byte sequence
/// for encoding UTF8: 0x00"), so every route that puts request text into a query or a row
/// must refuse it as a clean 400 (or treat it as text that matches nothing) before the
/// database sees it. Probes every parameter of `odd_input_probes` with NUL, plus the
/// free-text fields of the address book, the profile, the gift-card code and an operator
/// write.
#[tokio::test]
async fn a_nul_byte_in_text_input_is_a_400_before_any_handler() {
    let sys = system(None).await;
    let base = Baseline::read(&sys).await;
    let inputs: Vec<String> = NUL_INPUTS.iter().map(|s| (*s).to_owned()).collect();
    // Every service refuses a NUL before any handler runs (envelope::nul): 400 with one
    // message, in whichever envelope the route answers.
    let refused = || {
        rule(
            "400 `Invalid input: text must not contain NUL characters`",
            |status, body| {
                let message = body["message"]
                    .as_str()
                    .or_else(|| body["error"]["message"].as_str());
                status == 400
                    && message == Some("Invalid input: text must not contain NUL characters")
            },
        )
    };
    let mut probes: Vec<Probe> = odd_input_probes(&sys, &base, &inputs)
        .into_iter()
        .map(|(method, url, token, body, _)| (method, url, token, body, refused()))
        .collect();
    let address =
        json!({"label": "a\0b", "address_line": "x", "city": "x", "latitude": 1, "longitude": 1});
    for (method, url, token, body) in [
        (
            "POST",
            sys.auth("/api/v1/clients/address-book"),
            &base.sara,
            address,
        ),
        (
            "PUT",
            sys.auth("/api/v1/clients/1001"),
            &base.sara,
            json!({"first_name": "a\0b"}),
        ),
        (
            "PUT",
            sys.auth("/api/v1/clients/1001"),
            &base.sara,
            json!({"email_address": "a\0b"}),
        ),
        (
            "POST",
            sys.order("/api/v2/client/gift-card-code"),
            &REEM.to_owned(),
            json!({"code": "a\0b"}),
        ),
        (
            "POST",
            sys.operator("/services"),
            &base.admin,
            json!({"title": "a\0b", "titleTranslated": "x"}),
        ),
    ] {
        probes.push((
            method.to_owned(),
            url,
            Some(token.clone()),
            Some(body),
            refused(),
        ));
    }
    let found = failures(&sys, &probes).await;
    assert!(
        found.is_empty(),
        "{} of {} probes failed:\n{}",
        found.len(),
        probes.len(),
        found.join("\n")
    );
}

/// A JSON array nested `levels` deep.
fn nested(levels: usize) -> Value {
    (0..levels).fold(json!(1), |inner, _| json!([inner]))
}

/// 7. A JSON body nested deeper than 32 levels is a 400 in the route's envelope on every
/// route that takes a body, in all four services (every operation with a request body in
/// each service's OpenAPI document, the relayed ones included), before any handler: the
/// routes that resolve their caller first answer it without a token, and through the relay
/// nothing reaches the point service. 32 levels are still read by the route as usual.
#[tokio::test]
async fn a_json_body_nested_too_deep_is_a_400_in_the_routes_envelope_before_any_handler() {
    let sys = system(None).await;
    let message = "Invalid JSON body: nested deeper than 32 levels";
    let s = &sys.stack;
    let mut probes: Vec<Probe> = Vec::new();
    for (service, expected) in [
        (&s.auth, json!({"status": 400, "message": message})),
        (
            &s.points,
            json!({"success": false, "error": {"code": "VALIDATION_ERROR", "message": message}}),
        ),
        // The relayed routes too: the order service reads the body before relaying it.
        (&s.order, error_c(400, message)),
        (
            &s.operator,
            json!({"statusCode": 400, "message": message, "error": "Bad Request"}),
        ),
    ] {
        let document: Value = service.get("/openapi.json").await.json().await.unwrap();
        for (path, item) in document["paths"].as_object().unwrap() {
            for (method, operation) in item.as_object().unwrap() {
                if operation.get("requestBody").is_none() {
                    continue;
                }
                let path: String = path
                    .split('/')
                    .map(|segment| {
                        if segment.starts_with('{') {
                            "1"
                        } else {
                            segment
                        }
                    })
                    .collect::<Vec<_>>()
                    .join("/");
                for levels in [33, 100] {
                    probes.push((
                        method.to_uppercase(),
                        format!("{}{path}", service.base),
                        None,
                        Some(json!({"a": nested(levels - 1)})),
                        Expect::Exactly(400, expected.clone()),
                    ));
                }
            }
        }
    }
    assert!(probes.len() >= 2 * 15, "{} probes", probes.len());
    let relayed_before = posts_served(&sys.stack.points).await;
    let found = failures(&sys, &probes).await;
    assert!(
        found.is_empty(),
        "{} of {} probes failed:\n{}",
        found.len(),
        probes.len(),
        found.join("\n")
    );
    // The point service saw the probes sent to it and none of those sent to the relay.
    let direct = probes
        .iter()
        .filter(|(method, url, ..)| method == "POST" && url.starts_with(&s.points.base))
        .count() as u64;
    assert_eq!(
        posts_served(&sys.stack.points).await,
        relayed_before + direct,
        "nothing was relayed"
    );

    // The handlers run when the body is shallow enough: the caller comes first.
    let url = sys.order("/api/v2/client/point-orders");
    let (status, answer) = sys
        .call("POST", &url, None, Some(&json!({"a": nested(31)})))
        .await;
    assert_eq!(status, 401, "{answer}");
    let (status, answer) = sys
        .call("POST", &url, None, Some(&json!({"a": nested(32)})))
        .await;
    assert_eq!((status, answer), (400, error_c(400, message)));
    let (status, answer) = sys
        .call(
            "PATCH",
            &sys.operator("/services/1"),
            Some(&operator_token("admin", 1)),
            Some(&json!({"logo_variants": nested(31)})),
        )
        .await;
    assert_eq!(status, 200, "{answer}");
}

/// How many POST requests a service has answered (its `http_requests_total`).
async fn posts_served(service: &e2e::Service) -> u64 {
    let text = service.get("/metrics").await.text().await.unwrap();
    text.lines()
        .filter(|l| l.starts_with("http_requests_total{") && l.contains(r#"method="POST""#))
        .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
        .sum()
}

/// Reads from `stream` until the server closes it; `None` if it is still open after `wait`.
async fn read_until_closed(stream: &mut tokio::net::TcpStream, wait: Duration) -> Option<String> {
    use tokio::io::AsyncReadExt;
    let mut answer = Vec::new();
    tokio::time::timeout(wait, stream.read_to_end(&mut answer))
        .await
        .ok()?
        .ok()?;
    Some(String::from_utf8_lossy(&answer).into_owned())
}

/// 8. Slow clients and too many connections, on a real binary through the `HTTP_*`
/// variables: the operator service started with room for two connections, a 2 s head
/// deadline, a 300 ms body deadline and a 1 s keep-alive. Two connections that never finish
/// their head hold both places, so a third request waits unanswered until one of them goes;
/// a head trickled one header at a time is cut at 2 s (408); a body declared and never sent
/// is a 408 in the operator envelope at 300 ms, with the connection closed; an idle
/// keep-alive connection is closed after 1 s.
#[tokio::test]
async fn slow_clients_and_connections_past_the_bound_are_cut_by_the_http_variables() {
    use tokio::io::AsyncWriteExt;
    use tokio::net::TcpStream;
    let catalog = demo_database(&["order-service", "operator-service"], "sec_limits").await;
    let service = e2e::Service::start(
        "operator-service",
        catalog.url(),
        &[
            ("HTTP_MAX_CONNECTIONS", "2"),
            ("HTTP_HEAD_TIMEOUT_MS", "2000"),
            ("HTTP_BODY_TIMEOUT_MS", "300"),
            ("HTTP_KEEP_ALIVE_SECS", "1"),
        ],
    )
    .await;
    let address = service.base.trim_start_matches("http://").to_owned();
    // The harness's own keep-alive connection (from waiting for /healthz) goes after 1 s.
    tokio::time::sleep(Duration::from_millis(1500)).await;

    let mut held = Vec::new();
    for _ in 0..2 {
        let mut stream = TcpStream::connect(&address).await.unwrap();
        stream
            .write_all(b"GET /healthz HTTP/1.1\r\n")
            .await
            .unwrap();
        held.push(stream);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut third = TcpStream::connect(&address).await.unwrap();
    third
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    assert_eq!(
        read_until_closed(&mut third, Duration::from_millis(800)).await,
        None,
        "answered while two connections held both places"
    );
    drop(held.pop());
    let answer = read_until_closed(&mut third, Duration::from_secs(5))
        .await
        .expect("served once a place is free");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer:?}");

    // The other held connection never finished its head: 408 and closed at 2 s, counted
    // from its connect (about 1 s ago), even while it trickles headers.
    let mut slow = held.pop().unwrap();
    let trickled = tokio::time::timeout(Duration::from_secs(4), async {
        let mut answer = Vec::new();
        loop {
            if slow.write_all(b"X-Slow: 1\r\n").await.is_err() {
                break;
            }
            let mut chunk = [0u8; 1024];
            match tokio::time::timeout(
                Duration::from_millis(100),
                tokio::io::AsyncReadExt::read(&mut slow, &mut chunk),
            )
            .await
            {
                Ok(Ok(0)) | Ok(Err(_)) => break,
                Ok(Ok(n)) => answer.extend_from_slice(&chunk[..n]),
                Err(_) => {}
            }
        }
        String::from_utf8_lossy(&answer).into_owned()
    })
    .await
    .expect("a trickled head is cut at the head deadline");
    assert!(trickled.starts_with("HTTP/1.1 408"), "{trickled:?}");

    // A body declared and never sent: 408 in the operator envelope, connection closed.
    let mut stalled = TcpStream::connect(&address).await.unwrap();
    let started = std::time::Instant::now();
    stalled
        .write_all(
            b"POST /api/v1/operator/services HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{\"title\": ",
        )
        .await
        .unwrap();
    let answer = read_until_closed(&mut stalled, Duration::from_secs(4))
        .await
        .expect("closed after the body deadline");
    assert!(started.elapsed() < Duration::from_secs(3));
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 408"), "{head}");
    assert_eq!(
        serde_json::from_str::<Value>(body).unwrap(),
        json!({"statusCode": 408, "message": "Request Timeout: the request body did not arrive in time", "error": "Request Timeout"})
    );

    // An idle keep-alive connection is closed after 1 s.
    let mut idle = TcpStream::connect(&address).await.unwrap();
    idle.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let started = std::time::Instant::now();
    let answer = read_until_closed(&mut idle, Duration::from_secs(4))
        .await
        .expect("closed after the keep-alive");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer:?}");
    assert!(started.elapsed() >= Duration::from_millis(800));
}

/// One HTTP/1.1 request written by hand, so that the path goes out exactly as given
/// (an HTTP client would resolve `..` and `%2e%2e` first): `(status, body)`.
async fn raw_request(
    base: &str,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, Value) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let address = base.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let mut request = format!(
        "{method} {target} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer))
        .await
        .unwrap()
        .unwrap();
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let (head, mut content) = answer.split_once("\r\n\r\n").unwrap();
    let status: u16 = head.split(' ').nth(1).unwrap().parse().unwrap();
    let chunked = head.lines().any(|l| {
        l.to_ascii_lowercase()
            .starts_with("transfer-encoding: chunked")
    });
    let mut text = String::new();
    if chunked {
        while let Some((size, rest)) = content.split_once("\r\n") {
            let size = usize::from_str_radix(size.trim(), 16).unwrap();
            if size == 0 {
                break;
            }
            text.push_str(&rest[..size]);
            content = &rest[size + 2..];
        }
    } else {
        text = content.to_owned();
    }
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// 5. The internal routes serve the services only. Through the order service, nothing
/// under `/internal` (or `/webhooks`) is reachable by any path trick, even with the real
/// `X-Internal-Token`: the answer is a 404 in the envelope of whoever answered it and no
/// credit lands. The relay drops a client's `X-Internal-Token` (checked on the real
/// order-service binary in front of a recording stand-in for the point service). Called
/// directly, both internal routes answer the exact 401 of their envelope without the
/// token, with a wrong, truncated or longer one, or with a client's token instead, and
/// change nothing; the real token works (so the refusals are for the token).
#[tokio::test]
async fn internal_routes_are_unreachable_from_outside_and_guarded_by_their_token() {
    let sys = system(None).await;
    let sara_before = sys.balance(SARA).await;
    let credit = json!({"client_id": 1001, "points": "1000", "reference": "gift-card:mallory", "reason": "gift_card"});
    let token = [("X-Internal-Token", INTERNAL_TOKEN)];

    // Straight at the order service, with the real token.
    for (method, path) in [
        ("POST", "/internal/v1/credits"),
        ("GET", "/internal/v1/clients/1001"),
        ("POST", "/webhooks/v1/payments"),
        ("POST", "/internal/v1/credits/"),
        ("POST", "/INTERNAL/v1/credits"),
    ] {
        let (status, answer) = sys
            .stack
            .call(method, &sys.order(path), None, &token, Some(&credit))
            .await;
        assert_eq!(
            (status, answer),
            (404, error_c(404, &format!("Cannot {method} {path}"))),
            "{method} {path}"
        );
    }
    // Path tricks written by hand: each is the order service's own 404, or reaches the
    // point service as a point route and is its 404 — never the internal route.
    let body = credit.to_string();
    let headers = [
        ("X-Internal-Token", INTERNAL_TOKEN),
        (
            "Authorization",
            "Bearer legacy-token-of-sara-0123456789abcdef",
        ),
    ];
    let tricks: Vec<(&str, (u16, Value))> = vec![
        (
            "/api/v2/client/../../internal/v1/credits",
            (
                404,
                error_c(404, "Cannot POST /api/v2/client/../../internal/v1/credits"),
            ),
        ),
        (
            "//internal/v1/credits",
            (404, error_c(404, "Cannot POST //internal/v1/credits")),
        ),
        (
            "/api/v2/client/point-orders/../../../../internal/v1/credits",
            (
                404,
                error_c(
                    404,
                    "Cannot POST /api/v2/client/point-orders/../../../../internal/v1/credits",
                ),
            ),
        ),
        (
            "/api/v2/client/point-orders/%2e%2e/%2e%2e/%2e%2e/%2e%2e/internal/v1/credits",
            (
                404,
                error_c(
                    404,
                    "Cannot POST /api/v2/client/point-orders/%2e%2e/%2e%2e/%2e%2e/%2e%2e/internal/v1/credits",
                ),
            ),
        ),
        // Relayed byte for byte: `%2e%2e` is the order id the point service looks up.
        (
            "/api/v2/client/point-orders/%2e%2e/pay/card",
            (404, error_b("NOT_FOUND", "point order not found")),
        ),
        (
            "/api/v2/client/point-orders/%2E%2E/pay/session",
            (404, error_b("NOT_FOUND", "point order not found")),
        ),
        (
            "/api/v2/client/point-orders/..%2f..%2f..%2f..%2finternal%2fv1%2fcredits/pay/card",
            (404, error_b("NOT_FOUND", "point order not found")),
        ),
        (
            "/api/v2/client/point-orders/%2e%2e%2f%2e%2e%2f%2e%2e%2f%2e%2e%2finternal%2fv1%2fcredits/pay/card",
            (404, error_b("NOT_FOUND", "point order not found")),
        ),
        (
            "/api/v2/client/point-orders?x=/../../internal/v1/credits",
            (400, Value::Null),
        ),
    ];
    for (path, expected) in &tricks {
        let answer = raw_request(&sys.stack.order.base, "POST", path, &headers, &body).await;
        if expected.1.is_null() {
            // The create route itself, with a body that is no order: its 400.
            assert_eq!(
                (answer.0, &answer.1["error"]["message"]),
                (expected.0, &json!("Invalid point-order body")),
                "{path}"
            );
        } else {
            assert_eq!(&answer, expected, "{path}");
        }
    }
    assert_eq!(sys.balance(SARA).await, sara_before, "nothing credited");
    assert_eq!(
        count(&sys.points_db, "SELECT count(*) AS n FROM internal_credits").await,
        0
    );

    // The relay never forwards X-Internal-Token: the real order-service binary in front
    // of a stand-in point service that records what it gets.
    let seen: std::sync::Arc<std::sync::Mutex<Vec<Vec<String>>>> = Default::default();
    let recorder = {
        let seen = seen.clone();
        server::spawn_local(move || {
            let seen = seen.clone();
            actix_web::App::new().default_service(actix_web::web::to(
                move |req: actix_web::HttpRequest| {
                    let seen = seen.clone();
                    async move {
                        let names = req
                            .headers()
                            .keys()
                            .map(|k| k.as_str().to_owned())
                            .collect();
                        seen.lock().unwrap().push(names);
                        actix_web::HttpResponse::Ok().json(json!({}))
                    }
                },
            ))
        })
        .unwrap()
    };
    let relay = e2e::Service::start(
        "order-service",
        sys.catalog_db.url(),
        &[
            ("POINT_SERVICE_URL", &recorder),
            ("AUTH_SERVICE_URL", &sys.stack.auth.base),
        ],
    )
    .await;
    for (method, path) in [
        ("GET", "/api/v2/client/points".to_owned()),
        ("POST", "/api/v2/client/point-orders".to_owned()),
        (
            "POST",
            format!("/api/v2/client/point-orders/{LEGACY_ORDER}/pay/card"),
        ),
    ] {
        let response = relay
            .client()
            .request(method.parse().unwrap(), format!("{}{path}", relay.base))
            .bearer_auth(SARA)
            .header("X-Internal-Token", INTERNAL_TOKEN)
            .header("X-Signature", "t=1,v1=00")
            .header("Cookie", "session=1")
            .header("X-Forwarded-For", "10.0.0.1")
            .json(&credit)
            .send()
            .await
            .unwrap();
        assert_eq!(
            response.status(),
            200,
            "{method} {path} reached the recorder"
        );
    }
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 3);
    for names in &seen {
        assert!(names.iter().any(|n| n == "authorization"), "{names:?}");
        for dropped in [
            "x-internal-token",
            "x-signature",
            "cookie",
            "x-forwarded-for",
        ] {
            assert!(
                !names.iter().any(|n| n == dropped),
                "{dropped} was forwarded: {names:?}"
            );
        }
    }
    drop(relay);

    // Called directly, each internal route refuses anything but its token.
    let sara_primary = sys.primary(SARA).await;
    let longer = format!("{INTERNAL_TOKEN}x");
    let upper = INTERNAL_TOKEN.to_uppercase();
    let bearer_internal = format!("Bearer {INTERNAL_TOKEN}");
    let bearer_sara = format!("Bearer {sara_primary}");
    let attempts: Vec<(&str, Vec<(&str, &str)>)> = vec![
        ("no header", vec![]),
        ("an empty token", vec![("X-Internal-Token", "")]),
        (
            "a wrong token",
            vec![(
                "X-Internal-Token",
                "e2e-internal-token-0123456789abcdef0123X",
            )],
        ),
        (
            "a truncated token",
            vec![(
                "X-Internal-Token",
                &INTERNAL_TOKEN[..INTERNAL_TOKEN.len() - 1],
            )],
        ),
        ("a longer token", vec![("X-Internal-Token", &longer)]),
        ("the token upper-cased", vec![("X-Internal-Token", &upper)]),
        (
            "the token as a bearer token",
            vec![("Authorization", &bearer_internal)],
        ),
        (
            "a client's legacy token",
            vec![(
                "Authorization",
                "Bearer legacy-token-of-sara-0123456789abcdef",
            )],
        ),
        (
            "a client's primary token",
            vec![("Authorization", &bearer_sara)],
        ),
        (
            "a client's token as the internal token",
            vec![("X-Internal-Token", SARA)],
        ),
        ("a SQL string", vec![("X-Internal-Token", "' OR 1=1 --")]),
    ];
    let profile = sys.auth("/internal/v1/clients/1001");
    let credits = format!("{}/internal/v1/credits", sys.stack.points.base);
    for (what, headers) in &attempts {
        let (status, answer) = sys.stack.call("GET", &profile, None, headers, None).await;
        assert_eq!(
            (status, without_stack(answer)),
            (401, unauthorization()),
            "auth: {what}"
        );
        assert_eq!(
            sys.stack
                .call("POST", &credits, None, headers, Some(&credit))
                .await,
            (401, error_b("UNAUTHORIZED", "invalid internal token")),
            "points: {what}"
        );
    }
    assert_eq!(sys.balance(SARA).await, sara_before, "nothing credited");
    assert_eq!(
        count(&sys.points_db, "SELECT count(*) AS n FROM internal_credits").await,
        0
    );
    // The real token: the profile, and the credit (so the refusals above were the token's).
    let (status, found) = sys.stack.call("GET", &profile, None, &token, None).await;
    assert_eq!((status, &found["client_id"]), (200, &json!(1001)));
    let (status, credited) = sys
        .stack
        .call("POST", &credits, None, &token, Some(&credit))
        .await;
    assert_eq!(
        (status, &credited["balance"]),
        (200, &json!("1630.5")),
        "{credited}"
    );
}

/// A client not in test mode, so that reset-otp makes a random code and "sends" it.
fn real_phone_client() -> Value {
    json!({"clients": [{"client_id": 1010, "odoo_id": "5010", "contact_phone": "+966500000010",
        "status": "active", "email_address": null, "first_name": "Real", "last_name": "Phone",
        "sex": 0, "birth_date": null, "receive_offers": 0, "push_enabled": 0,
        "is_food_truck_user": 0, "is_cod_disabled": 0, "test_mode": false}]})
}

/// The words of a log line: runs of letters, digits and `-` (so a date or a UUID stays one
/// word and a four-digit code inside it does not count), without the `timestamp` field.
fn words(line: &str) -> Vec<String> {
    let line = match serde_json::from_str::<Value>(line) {
        Ok(Value::Object(mut fields)) => {
            fields.remove("timestamp");
            Value::Object(fields).to_string()
        }
        _ => line.to_owned(),
    };
    line.split(|c: char| !(c.is_alphanumeric() || c == '-'))
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Drives everything that handles a secret through the whole system, and returns the
/// secrets (what, value) and the login codes and cvv it used: `(secrets, codes)`.
async fn drive_every_secret(sys: &System) -> (Vec<(String, String)>, Vec<String>) {
    let mut secrets: Vec<(String, String)> = vec![
        ("the webhook secret".into(), WEBHOOK_SECRET.into()),
        ("the internal token".into(), INTERNAL_TOKEN.into()),
        ("the auth JWT secret".into(), AUTH_SECRET.into()),
        ("the operator JWT secret".into(), OPERATOR_SECRET.into()),
    ];
    for legacy in [SARA, OMAR, NOURA, FAHAD, REEM, CLOSED] {
        secrets.push(("a demo legacy token".into(), legacy.into()));
    }
    let mut codes = vec!["1234".to_owned()];

    // OTP login: Sara in test mode (the fixed code, no SMS), client 1010 with a random
    // code through the log SMS provider.
    let reset = |phone: &str| sys.auth(&format!("/api/v1/clients/reset-otp?contact_phone={phone}"));
    let verify = |phone: &str, code: &str| {
        sys.auth(&format!(
            "/api/v1/clients/verify-otp?contact_phone={phone}&code={code}"
        ))
    };
    assert_eq!(
        sys.call("GET", &reset(SARA_PHONE), None, None).await,
        (200, json!({"status": true}))
    );
    let (status, login) = sys
        .call("GET", &verify(SARA_PHONE, "1234"), None, None)
        .await;
    assert_eq!(status, 200, "{login}");
    let sara_primary = login["data"]["access_token"].as_str().unwrap().to_owned();
    let real = "%2B966500000010";
    assert_eq!(
        sys.call("GET", &reset(real), None, None).await,
        (200, json!({"status": true}))
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    let sms: Value = sys
        .stack
        .auth
        .logs()
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|l| l["message"] == "SMS (log provider, not sent)")
        .expect("the log SMS provider's line");
    let code: String = sms["sms.text"]
        .as_str()
        .unwrap()
        .chars()
        .rev()
        .take(4)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    assert!(code.chars().all(|c| c.is_ascii_digit()), "{sms}");
    // A wrong try first (never the right code), then the right one.
    let wrong = format!("{:04}", (code.parse::<u32>().unwrap() + 1) % 10_000);
    assert_eq!(
        sys.call("GET", &verify(real, &wrong), None, None).await.0,
        400
    );
    let (status, login) = sys.call("GET", &verify(real, &code), None, None).await;
    assert_eq!(status, 200, "{login}");
    let real_primary = login["data"]["access_token"].as_str().unwrap().to_owned();
    codes.push(code);
    codes.push(wrong);

    // Tokens: exchanges both ways, and every client route family with them.
    let (_, exchanged) = sys
        .call(
            "POST",
            &sys.auth("/api/v1/clients/exchange-token"),
            None,
            Some(&json!({"token": sara_primary, "target_platform": "legacy"})),
        )
        .await;
    let minted = exchanged["data"]["token"].as_str().unwrap().to_owned();
    let exchanged_primary = sys.primary(&minted).await;
    let operator = operator_token("admin", 1);
    let bogus = "Bearer this-wrong-token-is-a-secret-too-0123456789".to_owned();
    for route in [
        "/api/v1/clients/verify-token",
        "/api/v1/clients/address-book",
    ] {
        for token in [&sara_primary, &real_primary, &exchanged_primary] {
            assert_eq!(
                sys.call("GET", &sys.auth(route), Some(token), None).await.0,
                200
            );
        }
    }
    for token in [minted.as_str(), SARA, OMAR, CLOSED] {
        sys.call(
            "GET",
            &sys.order("/api/v2/client/points"),
            Some(token),
            None,
        )
        .await;
        sys.call("GET", &sys.auth("/api/v1/users"), Some(token), None)
            .await;
    }
    sys.call_with_authorization(
        "GET",
        &sys.order("/api/v2/client/points"),
        Some(&bogus),
        None,
    )
    .await;
    sys.call_with_authorization(
        "GET",
        &sys.auth("/api/v1/clients/verify-token"),
        Some(&bogus),
        None,
    )
    .await;
    sys.call("GET", &sys.operator("/services"), Some(&operator), None)
        .await;
    sys.call("GET", &sys.operator("/services"), Some(&sara_primary), None)
        .await;

    // A gift-card code: the order service credits through the internal route.
    let (status, redeemed) = sys
        .call(
            "POST",
            &sys.order("/api/v2/client/gift-card-code"),
            Some(SARA),
            Some(&json!({"code": "RAMADAN-250"})),
        )
        .await;
    assert_eq!(status, 200, "{redeemed}");
    // A description: the point service looks the caller up with the internal token.
    let (status, _) = sys
        .call(
            "POST",
            &sys.order("/api/v2/client/point-orders/description"),
            Some(SARA),
            Some(&json!({"point_offer_id": OFFER_100, "point_occasion_id": OCCASION})),
        )
        .await;
    assert_eq!(status, 200);

    // A card payment with a cvv, approved on the sandbox's page (its signed webhook), a
    // payment session, and our own signed webhook, delivered again.
    let cvv = "7319";
    let id = sys
        .create_order(
            SARA,
            &json!({"point_offer_id": OFFER_100, "to_client_id": 1002, "payment_type": "checkout"}),
        )
        .await;
    let (status, started) = sys
        .call(
            "POST",
            &sys.order(&format!("/api/v2/client/point-orders/{id}/pay/card")),
            Some(SARA),
            Some(&json!({"id": "card_visa_4242", "cvv": cvv})),
        )
        .await;
    assert_eq!(status, 200, "{started}");
    let (status, _) = sys
        .call(
            "POST",
            &format!("{}/approve", started["redirect_url"].as_str().unwrap()),
            None,
            None,
        )
        .await;
    assert_eq!(status, 200);
    let second = sys
        .create_order(
            SARA,
            &json!({"point_offer_id": OFFER_100, "to_client_id": 1003, "payment_type": "checkout"}),
        )
        .await;
    let (status, session) = sys
        .call(
            "POST",
            &sys.order(&format!("/api/v2/client/point-orders/{second}/pay/session")),
            Some(SARA),
            Some(&json!({"rememberMe": true})),
        )
        .await;
    assert_eq!(status, 200, "{session}");
    let event = json!({"id": "evt_logs_1", "type": "payment_captured",
        "data": {"reference": second, "payment_id": "pay_logs", "provider": "sandbox", "amount_minor": 1500, "currency": "SAR"}})
    .to_string();
    let signed = signature(WEBHOOK_SECRET, now(), &event);
    assert_eq!(sys.webhook(&event, Some(&signed)).await.0, 200);
    assert_eq!(sys.webhook(&event, Some(&signed)).await.0, 200);
    assert_eq!(sys.webhook(&event, Some("t=1,v1=00")).await.0, 401);

    for (what, token) in [
        ("Sara's primary token", &sara_primary),
        ("client 1010's primary token", &real_primary),
        ("an exchanged primary token", &exchanged_primary),
        ("an operator token", &operator),
    ] {
        secrets.push((what.into(), token.clone()));
        let signature = token.rsplit('.').next().unwrap().to_owned();
        secrets.push((format!("{what}'s signature"), signature));
    }
    secrets.push(("a minted legacy token".into(), minted));
    secrets.push((
        "a wrong bearer token".into(),
        bogus.trim_start_matches("Bearer ").into(),
    ));
    secrets.push((
        "the webhook's v1 signature".into(),
        signed.split_once("v1=").unwrap().1.into(),
    ));
    if let Some(session_token) = session["session_token"].as_str() {
        secrets.push(("a payment session token".into(), session_token.into()));
    }
    codes.push(cvv.into());
    (secrets, codes)
}

/// 6. Secrets never reach the logs. After OTP logins, token exchanges, requests with every
/// kind of token (good and bad), a gift-card credit and a description (internal calls), a
/// card payment with a cvv approved through the sandbox, a payment session and signed
/// webhooks, no log line of any of the five processes holds a token (legacy, primary or
/// operator, whole or its signature), the webhook secret or a signature, the internal
/// token, a JWT secret, the cvv or a login code.
///
/// Decision on login codes: `SMS_PROVIDER=log` writes the code to the log on purpose — it
/// is the development stand-in for the SMS gateway, and a production start refuses it
/// (`services/auth-service/src/config.rs`) — so that one line, `SMS (log provider, not
/// sent)`, may hold the code and no other line may. Test-mode codes (the fixed `1234`) are
/// never sent at all, so they appear nowhere. The request line's `http.target`, which
/// carries verify-otp's `code=` query, is left to `login_codes_never_reach_the_logs`, a
/// known bug; everywhere else in every line the codes must not appear.
#[tokio::test]
async fn secrets_never_reach_the_logs() {
    let sys = system(Some(&real_phone_client())).await;
    let (secrets, codes) = drive_every_secret(&sys).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let logs = sys.all_logs();
    // The capture works: the lines of the flows driven are there.
    for (service, message) in [
        ("auth-service", "\"logged in\""),
        ("auth-service", "\"token exchanged\""),
        ("auth-service", "SMS (log provider, not sent)"),
        ("payment-sandbox", "\"payment requested\""),
        ("payment-sandbox", "\"webhook delivered\""),
        ("point-service", "\"payment event applied\""),
        ("point-service", "payment webhook refused"),
        ("operator-service", "\"listening\""),
        ("order-service", "\"listening\""),
    ] {
        assert!(
            logs.iter()
                .any(|(s, line)| *s == service && line.contains(message)),
            "no {message} line from {service}"
        );
    }
    let mut leaks = Vec::new();
    for (service, line) in &logs {
        for (what, secret) in &secrets {
            if line.contains(secret.as_str()) {
                leaks.push(format!("{service}: {what} in {line}"));
            }
        }
        if line.contains("SMS (log provider, not sent)") {
            continue;
        }
        let line = strip_http_target(line);
        let words = words(&line);
        for code in &codes {
            if words.iter().any(|w| w == code) {
                leaks.push(format!("{service}: the code or cvv {code} in {line}"));
            }
        }
        if line.to_lowercase().contains("\"cvv\"") {
            leaks.push(format!("{service}: a cvv field in {line}"));
        }
    }
    assert!(leaks.is_empty(), "{}", leaks.join("\n"));
}

/// A JSON log line without the `http.target` of its spans.
fn strip_http_target(line: &str) -> String {
    let Ok(mut value) = serde_json::from_str::<Value>(line) else {
        return line.to_owned();
    };
    if let Some(spans) = value.get_mut("spans").and_then(Value::as_array_mut) {
        for span in spans {
            if let Some(span) = span.as_object_mut() {
                span.remove("http.target");
            }
        }
    }
    if let Some(fields) = value.as_object_mut() {
        fields.remove("http.target");
    }
    value.to_string()
}

/// The login codes, in full: not even the request line of verify-otp may carry them
/// (its `http.target` holds the query string, `...&code=1234`, on every line logged while
/// serving it). A code is single-use, but a wrong try's code, a still-live code logged by a
/// failed verify, and the fixed test code all end up in the log store of every environment.
#[tokio::test]
async fn login_codes_never_reach_the_logs() {
    let sys = system(Some(&real_phone_client())).await;
    let (_, codes) = drive_every_secret(&sys).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let leaks: Vec<String> = sys
        .all_logs()
        .into_iter()
        .filter(|(_, line)| !line.contains("SMS (log provider, not sent)"))
        .filter(|(_, line)| codes.iter().any(|code| words(line).contains(code)))
        .map(|(service, line)| format!("{service}: {line}"))
        .collect();
    assert!(leaks.is_empty(), "{}", leaks.join("\n"));
}
