use actix_web::http::header::{AUTHORIZATION, HeaderMap, HeaderValue};

use super::*;

fn headers(authorization: &str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(AUTHORIZATION, HeaderValue::from_str(authorization).unwrap());
    headers
}

fn dev_signer(service: Service) -> Signer {
    Signer::new(service, OwnKey::dev(service))
}

fn point() -> Verifier {
    Verifier::new(Service::Point, Trust::dev())
}

#[test]
fn a_listed_caller_is_admitted_and_others_are_not() {
    let order = dev_signer(Service::Order).authorization(Service::Point);
    assert_eq!(
        point().admit(&headers(&order), InternalRoute::Credits),
        Ok(Admitted {
            caller: Service::Order,
            operator: None,
            request: None
        })
    );
    // A good credential, but not from a caller the route lists: the order service on the
    // back office, the operator service on credits, the point service calling itself.
    assert_eq!(
        point().admit(&headers(&order), InternalRoute::PointBackOffice),
        Err(Refusal::NotAdmitted(Service::Order))
    );
    for caller in [Service::Operator, Service::Point, Service::Auth] {
        let credential = dev_signer(caller).authorization(Service::Point);
        assert_eq!(
            point().admit(&headers(&credential), InternalRoute::Credits),
            Err(Refusal::NotAdmitted(caller))
        );
    }
}

#[test]
fn a_credential_is_reused_for_a_while_and_only_for_its_callee() {
    let order = dev_signer(Service::Order);
    assert_eq!(
        order.authorization(Service::Point),
        order.authorization(Service::Point)
    );
    let for_auth = order.authorization(Service::Auth);
    assert_eq!(
        point().admit(&headers(&for_auth), InternalRoute::Credits),
        Err(Refusal::Unauthenticated("for another service"))
    );
}

#[test]
fn missing_forged_expired_and_overlong_credentials_are_refused() {
    let order = dev_signer(Service::Order);
    let refused =
        |authorization: &str| point().admit(&headers(authorization), InternalRoute::Credits);
    assert_eq!(
        point().admit(&HeaderMap::new(), InternalRoute::Credits),
        Err(Refusal::Unauthenticated("no bearer credential"))
    );
    assert_eq!(
        refused("Bearer not.a.jwt"),
        Err(Refusal::Unauthenticated("not a credential"))
    );
    let now = now();
    // Expired past the leeway; at the leeway's edge still good.
    let old = order.sign(Service::Point, LIFETIME, None, None, now - 300 - 31);
    assert_eq!(
        refused(&bearer(&old)),
        Err(Refusal::Unauthenticated("past its time"))
    );
    let edge = order.sign(Service::Point, LIFETIME, None, None, now - 300 - 25);
    assert!(refused(&bearer(&edge)).is_ok());
    // Issued in the future (a clock ahead by more than the leeway), or for too long.
    let ahead = order.sign(Service::Point, LIFETIME, None, None, now + 60);
    assert_eq!(
        refused(&bearer(&ahead)),
        Err(Refusal::Unauthenticated(
            "issued in the future or for too long"
        ))
    );
    let long = order.sign(Service::Point, LIFETIME * 2, None, None, now);
    assert_eq!(
        refused(&bearer(&long)),
        Err(Refusal::Unauthenticated(
            "issued in the future or for too long"
        ))
    );
    // The payload changed after signing (another caller named).
    let good = order.sign(Service::Point, LIFETIME, None, None, now);
    let mut parts: Vec<String> = good.split('.').map(str::to_owned).collect();
    let forged_claims = String::from_utf8(
        base64::Engine::decode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, &parts[1])
            .unwrap(),
    )
    .unwrap()
    .replace("order-service", "operator-service");
    parts[1] = base64::Engine::encode(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD,
        forged_claims,
    );
    assert_eq!(
        refused(&bearer(&parts.join("."))),
        Err(Refusal::Unauthenticated("forged or malformed"))
    );
}

#[test]
fn a_key_speaks_only_for_its_own_service() {
    // The order service's key under the operator service's kid: the signature fails.
    let order_key = OwnKey::dev(Service::Order);
    let as_operator = Signer::new(Service::Operator, order_key.clone());
    let credential = as_operator.authorization(Service::Point);
    assert_eq!(
        point().admit(&headers(&credential), InternalRoute::PointBackOffice),
        Err(Refusal::Unauthenticated("forged or malformed"))
    );
    // A key the point service does not trust, whatever it names.
    let (_, stranger) = OwnKey::generate("k9").unwrap();
    let credential = Signer::new(Service::Operator, stranger).authorization(Service::Point);
    assert_eq!(
        point().admit(&headers(&credential), InternalRoute::PointBackOffice),
        Err(Refusal::Unauthenticated(
            "signed with a key not trusted here"
        ))
    );
    // An operator token (HS256, no kid) is no credential here.
    let operator_token = jsonwebtoken::encode(
        &Header::default(),
        &serde_json::json!({"sub": "op-1", "role": "super_admin", "exp": now() + 60}),
        &jsonwebtoken::EncodingKey::from_secret(b"dev-only-operator-secret"),
    )
    .unwrap();
    assert_eq!(
        point().admit(
            &headers(&bearer(&operator_token)),
            InternalRoute::PointBackOffice
        ),
        Err(Refusal::Unauthenticated(
            "signed with a key not trusted here"
        ))
    );
}

#[test]
fn a_vouched_request_carries_its_operator_and_request() {
    let operator = dev_signer(Service::Operator);
    let vouched = Vouched {
        id: "op-7".into(),
        role: "admin".into(),
    };
    let path = "/internal/v1/back-office/offers";
    let body = br#"{"pointAmount": "5"}"#;
    let authorization = operator.vouch(Service::Point, Some(vouched.clone()), "POST", path, body);
    let admitted = point()
        .admit(&headers(&authorization), InternalRoute::PointBackOffice)
        .unwrap();
    assert_eq!(admitted.operator, Some(vouched));
    let sent = Request::received("POST", path, body);
    assert!(admitted.clone().made_for(&sent).is_ok());
    // The same credential with another body, path, query or method: refused.
    for other in [
        Request::received("POST", path, br#"{"pointAmount": "5000"}"#),
        Request::received("POST", path, b""),
        Request::received("POST", "/internal/v1/back-office/occasions", body),
        Request::received("POST", &format!("{path}?x=1"), body),
        Request::received("PUT", path, body),
    ] {
        assert_eq!(
            admitted.clone().made_for(&other),
            Err(Refusal::Unauthenticated("made for another request")),
            "{other:?}"
        );
    }
    // One made for no request is good for none of these.
    let plain = operator.authorization(Service::Point);
    let plain = point()
        .admit(&headers(&plain), InternalRoute::PointBackOffice)
        .unwrap();
    assert!(plain.made_for(&sent).is_err());
}

#[test]
fn a_key_rotates_with_no_refused_call() {
    let (old_value, old) = OwnKey::generate("2026-11").unwrap();
    let (new_value, new) = OwnKey::generate("2026-12").unwrap();
    let trust = |entries: &[&OwnKey]| {
        let list: Vec<String> = entries
            .iter()
            .map(|k| k.trust_entry(Service::Order))
            .collect();
        Verifier::new(Service::Point, Trust::parse(&list.join(",")).unwrap())
    };
    let calls = |value: &str| {
        Signer::new(Service::Order, OwnKey::parse(value).unwrap()).authorization(Service::Point)
    };
    // 1. The callee trusts the old key; 2. both (rolled out first); 3. the caller signs
    // with the new key, a call signed just before still good; 4. the old key removed.
    let before = calls(&old_value);
    assert!(
        trust(&[&old])
            .admit(&headers(&before), InternalRoute::Credits)
            .is_ok()
    );
    let both = trust(&[&old, &new]);
    let after = calls(&new_value);
    assert!(
        both.admit(&headers(&before), InternalRoute::Credits)
            .is_ok()
    );
    assert!(both.admit(&headers(&after), InternalRoute::Credits).is_ok());
    let only_new = trust(&[&new]);
    assert!(
        only_new
            .admit(&headers(&after), InternalRoute::Credits)
            .is_ok()
    );
    assert_eq!(
        only_new.admit(&headers(&before), InternalRoute::Credits),
        Err(Refusal::Unauthenticated(
            "signed with a key not trusted here"
        ))
    );
}

#[test]
fn a_vouched_credential_lives_a_minute_and_an_oversized_one_is_not_read() {
    let operator = dev_signer(Service::Operator);
    let request = Some(Request::received(
        "GET",
        "/internal/v1/back-office/offers",
        b"",
    ));
    let long = operator.sign(Service::Point, LIFETIME, None, request.clone(), now());
    assert_eq!(
        point().admit(&headers(&bearer(&long)), InternalRoute::PointBackOffice),
        Err(Refusal::Unauthenticated(
            "issued in the future or for too long"
        ))
    );
    let minute = operator.sign(Service::Point, VOUCHED_LIFETIME, None, request, now());
    assert!(
        point()
            .admit(&headers(&bearer(&minute)), InternalRoute::PointBackOffice)
            .is_ok()
    );
    let padded = format!("Bearer {}", "a".repeat(MAX_LENGTH + 1));
    assert_eq!(
        point().admit(&headers(&padded), InternalRoute::PointBackOffice),
        Err(Refusal::Unauthenticated("not a credential"))
    );
}

#[test]
fn a_clock_stepped_back_signs_anew() {
    let order = dev_signer(Service::Order);
    let first = order.authorization(Service::Point);
    // As if the last credential had been signed ten minutes from now.
    order
        .reused
        .lock()
        .unwrap()
        .entry(Service::Point)
        .and_modify(|(_, at)| *at += 600);
    let again = order.authorization(Service::Point);
    assert_ne!(first, again);
    assert!(
        point()
            .admit(&headers(&again), InternalRoute::Credits)
            .is_ok()
    );
}
