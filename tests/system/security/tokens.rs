//! Tokens: every bad token on every family of routes is that family's exact 401 and changes
//! nothing — a primary token forged with another secret, `alg: none`, another algorithm's
//! header (HS512 really signed with the secret, RS256 over an HMAC), another `typ`, a
//! malformed, truncated or empty token, a legacy token where the primary one is required and
//! the reverse (spec "Authentication"), an inactive client's tokens, a token of the other
//! issuer (operator on client routes, client on operator routes, and one signed with the
//! other service's secret), an expired or forged operator token, an unknown role. Genuine
//! tokens made the same way pass, so each refusal is for the reason it tests. The same
//! forgeries in exchange-token's body get its 401 and mint nothing.

use e2e::demo::{CLOSED, LEGACY_ORDER, OFFER_100, OMAR, SARA, SARA_PHONE};
use futures_util::StreamExt;
use serde_json::{Value, json};
use testkit::tokens::{Signature, hs256, jwt};
use testkit::{error_b, error_c, operator_401, unauthorization, without_stack};

use super::{System, auth_secret, operator_secret, operator_token, system};

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

// The families that must refuse a token: all of them, all but the operator routes, those
// that take a legacy token (and the operator routes), those that take a primary one (and
// the operator routes).
static EVERYWHERE: [Family; 5] = [
    Family::Primary,
    Family::Users,
    Family::Points,
    Family::GiftCard,
    Family::Operator,
];
static NOT_OPERATOR: [Family; 4] = [
    Family::Primary,
    Family::Users,
    Family::Points,
    Family::GiftCard,
];
static LEGACY_SIDE: [Family; 4] = [
    Family::Users,
    Family::Points,
    Family::GiftCard,
    Family::Operator,
];
static PRIMARY_SIDE: [Family; 2] = [Family::Primary, Family::Operator];

fn primary_claims(client_id: i64) -> Value {
    json!({"sub": client_id.to_string(), "typ": "primary", "iat": chrono::Utc::now().timestamp()})
}

fn operator_claims(role: &str, hours: i64) -> Value {
    json!({"sub": "mallory", "role": role, "exp": chrono::Utc::now().timestamp() + hours * 3600})
}

/// A route: its family, method, URL and a body a genuine caller could send.
type Route = (Family, &'static str, String, Option<Value>);

/// One route of each kind per family.
fn routes(sys: &System) -> Vec<Route> {
    vec![
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
    ]
}

/// Sara's genuine primary token, the operator tokens, and the client tokens the forgeries
/// are made from.
struct Tokens {
    sara_primary: String,
    admin: String,
    expired_admin: String,
    truncated_primary: String,
    inactive_primary: String,
}

impl Tokens {
    async fn make(sys: &System) -> Tokens {
        let sara_primary = sys.primary(SARA).await;
        Tokens {
            truncated_primary: sara_primary[..sara_primary.len() - 3].to_owned(),
            inactive_primary: jwt(
                &hs256(),
                &primary_claims(1099),
                Signature::Hs256(auth_secret()),
            ),
            admin: operator_token("admin", 1),
            expired_admin: operator_token("super_admin", -1),
            sara_primary,
        }
    }
}

/// A bad `Authorization`: what it is, the header value (or none), the families that must
/// refuse it.
type Case = (&'static str, Option<String>, &'static [Family]);

fn cases(tokens: &Tokens) -> Vec<Case> {
    let Tokens {
        sara_primary,
        admin,
        expired_admin,
        truncated_primary,
        inactive_primary,
    } = tokens;
    let signed =
        |header: Value, claims: Value| jwt(&header, &claims, Signature::Hs256(auth_secret()));
    vec![
        ("no header", None, &EVERYWHERE),
        ("empty Bearer", Some("Bearer ".into()), &EVERYWHERE),
        (
            "Bearer without a space",
            Some(format!("Bearer{SARA}")),
            &EVERYWHERE,
        ),
        (
            "lower-case scheme",
            Some(format!("bearer {SARA}")),
            &EVERYWHERE,
        ),
        (
            "Basic scheme",
            Some("Basic c2FyYTpzZWNyZXQ=".into()),
            &EVERYWHERE,
        ),
        ("the token without a scheme", Some(SARA.into()), &EVERYWHERE),
        ("malformed", Some("Bearer not.a.jwt".into()), &EVERYWHERE),
        (
            "three empty segments",
            Some("Bearer ..".into()),
            &EVERYWHERE,
        ),
        (
            "SQL in the token",
            Some("Bearer ' OR '1'='1".into()),
            &EVERYWHERE,
        ),
        (
            "truncated primary",
            Some(format!("Bearer {truncated_primary}")),
            &EVERYWHERE,
        ),
        (
            "primary with garbage after it",
            Some(format!("Bearer {sara_primary}x")),
            &EVERYWHERE,
        ),
        (
            "truncated legacy",
            Some(format!("Bearer {}", &SARA[..SARA.len() - 1])),
            &EVERYWHERE,
        ),
        (
            "legacy with a prefix",
            Some(format!("Bearer x{SARA}")),
            &EVERYWHERE,
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
            &EVERYWHERE,
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
            &EVERYWHERE,
        ),
        (
            "alg none, signed anyway",
            Some(format!(
                "Bearer {}",
                signed(json!({"alg": "none", "typ": "JWT"}), primary_claims(1001))
            )),
            &EVERYWHERE,
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
            &EVERYWHERE,
        ),
        (
            "HS512, really signed with the secret",
            Some(format!(
                "Bearer {}",
                jwt(
                    &json!({"alg": "HS512", "typ": "JWT"}),
                    &primary_claims(1001),
                    Signature::Hs512(auth_secret())
                )
            )),
            &EVERYWHERE,
        ),
        (
            "RS256 header over an HMAC with the secret",
            Some(format!(
                "Bearer {}",
                signed(json!({"alg": "RS256", "typ": "JWT"}), primary_claims(1001))
            )),
            &EVERYWHERE,
        ),
        (
            "typ legacy, signed with the secret",
            Some(format!(
                "Bearer {}",
                signed(hs256(), json!({"sub": "1001", "typ": "legacy"}))
            )),
            &EVERYWHERE,
        ),
        (
            "no typ, signed with the secret",
            Some(format!(
                "Bearer {}",
                signed(hs256(), json!({"sub": "1001"}))
            )),
            &EVERYWHERE,
        ),
        (
            "sub not a client id",
            Some(format!(
                "Bearer {}",
                signed(hs256(), json!({"sub": "1001 OR 1=1", "typ": "primary"}))
            )),
            &EVERYWHERE,
        ),
        (
            "sub of no client",
            Some(format!(
                "Bearer {}",
                signed(hs256(), primary_claims(999_999))
            )),
            &EVERYWHERE,
        ),
        (
            "the inactive client's legacy token",
            Some(format!("Bearer {CLOSED}")),
            &EVERYWHERE,
        ),
        (
            "the inactive client's primary token",
            Some(format!("Bearer {inactive_primary}")),
            &EVERYWHERE,
        ),
        // Each kind of client token where the other is required, and never on operator routes.
        (
            "a legacy token",
            Some(format!("Bearer {SARA}")),
            &PRIMARY_SIDE,
        ),
        (
            "a primary token",
            Some(format!("Bearer {sara_primary}")),
            &LEGACY_SIDE,
        ),
        // Operator tokens: never on client routes; expired, forged or of no role, nowhere.
        (
            "a valid operator token",
            Some(format!("Bearer {admin}")),
            &NOT_OPERATOR,
        ),
        (
            "an expired operator token",
            Some(format!("Bearer {expired_admin}")),
            &EVERYWHERE,
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
            &EVERYWHERE,
        ),
        (
            "an operator token signed with the auth secret",
            Some(format!(
                "Bearer {}",
                jwt(
                    &hs256(),
                    &operator_claims("super_admin", 1),
                    Signature::Hs256(auth_secret())
                )
            )),
            &EVERYWHERE,
        ),
        (
            "a primary token signed with the operator secret",
            Some(format!(
                "Bearer {}",
                jwt(
                    &hs256(),
                    &primary_claims(1001),
                    Signature::Hs256(operator_secret())
                )
            )),
            &EVERYWHERE,
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
            &EVERYWHERE,
        ),
        (
            "an operator token, HS512 with the secret",
            Some(format!(
                "Bearer {}",
                jwt(
                    &json!({"alg": "HS512", "typ": "JWT"}),
                    &operator_claims("super_admin", 1),
                    Signature::Hs512(operator_secret())
                )
            )),
            &EVERYWHERE,
        ),
        (
            "an operator token without exp",
            Some(format!(
                "Bearer {}",
                jwt(
                    &hs256(),
                    &json!({"sub": "mallory", "role": "super_admin"}),
                    Signature::Hs256(operator_secret())
                )
            )),
            &EVERYWHERE,
        ),
        (
            "an operator token of an unknown role",
            Some(format!(
                "Bearer {}",
                jwt(
                    &hs256(),
                    &operator_claims("root", 1),
                    Signature::Hs256(operator_secret())
                )
            )),
            &EVERYWHERE,
        ),
    ]
}

/// Controls: tokens made by these helpers with the right secrets are accepted, so the
/// forgeries of the other tests fail for the reason they test.
#[tokio::test]
async fn tokens_forged_with_the_right_secrets_are_accepted() {
    let sys = system(None).await;
    let forged_ok = jwt(
        &hs256(),
        &primary_claims(1001),
        Signature::Hs256(auth_secret()),
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
        Signature::Hs256(operator_secret()),
    );
    let (status, _) = sys
        .call("GET", &sys.operator("/services"), Some(&operator_ok), None)
        .await;
    assert_eq!(status, 200);
}

/// Every bad token on every family of routes (the common cases on every route, the rest on
/// a sample) is that family's exact 401, and nothing any of them tried happened.
#[tokio::test]
async fn every_bad_token_gets_the_exact_401_of_its_routes() {
    let sys = system(None).await;
    let tokens = Tokens::make(&sys).await;
    let routes = routes(&sys);
    let cases = cases(&tokens);
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
    let mut sample: Vec<usize> = EVERYWHERE
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

    // Nothing any of them tried happened.
    assert_eq!(sys.balance(SARA).await, sara_before);
    assert_eq!(sys.balance(OMAR).await, omar_before);
    for table in [
        "point_orders WHERE order_no IS NOT NULL",
        "internal_credits",
        "idempotency_keys",
    ] {
        assert_eq!(
            sys.points_db
                .count(&format!("SELECT count(*) AS n FROM {table}"))
                .await,
            0,
            "{table}"
        );
    }
    assert_eq!(
        sys.auth_db
            .count("SELECT count(*) AS n FROM addresses")
            .await,
        0
    );
    assert_eq!(
        sys.auth_db
            .count(
                "SELECT count(*) AS n FROM clients \
                 WHERE first_name = 'Mallory' OR push_enabled = 0 AND client_id = 1001"
            )
            .await,
        0
    );
    assert_eq!(
        sys.catalog_db
            .count("SELECT count(*) AS n FROM services")
            .await,
        9
    );
    assert_eq!(
        sys.catalog_db
            .count("SELECT count(*) AS n FROM operator_audit")
            .await,
        0
    );
    assert_eq!(
        sys.catalog_db
            .count("SELECT count(*) AS n FROM gift_card_redemptions")
            .await,
        0
    );
}

/// exchange-token mints tokens from a token in its body: the same forgeries get its 401 and
/// mint nothing.
#[tokio::test]
async fn exchange_token_refuses_the_forged_tokens_and_mints_nothing() {
    let sys = system(None).await;
    let Tokens {
        admin,
        truncated_primary,
        inactive_primary,
        ..
    } = Tokens::make(&sys).await;
    let minted_before = sys
        .auth_db
        .count("SELECT count(*) AS n FROM legacy_tokens")
        .await;
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
            Signature::Hs512(auth_secret()),
        ),
        jwt(
            &hs256(),
            &primary_claims(1001),
            Signature::Hs256(operator_secret()),
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
        sys.auth_db
            .count("SELECT count(*) AS n FROM legacy_tokens")
            .await,
        minted_before,
        "no legacy token was minted"
    );
}
