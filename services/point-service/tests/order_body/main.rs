//! Property tests of the point-order body parser (`order_body::parse`): no input panics,
//! every refusal is the details structure, and each field is read as the spec says.

mod checks;
#[path = "../../../../fuzz/replay.rs"]
mod replay;

use point_service::order_body::{self, OrderRequest, PaymentType};
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{Map, Number, Value, json};

/// Any JSON value, nested a few levels, with huge and tiny numbers, unicode, control
/// characters (NUL included) and keys that are often the body's own field names.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_filter_map("finite", |f| Number::from_f64(f).map(Value::Number)),
        "[\\x00-\\x1f\\PC]{0,24}".prop_map(Value::String),
        "[0-9a-fA-F]{22,26}".prop_map(Value::String),
        select(vec![
            "", "0", " 7 ", "point", "checkout", "1e3", "-1", "12.5", "Infinity"
        ])
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(6, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..6)
                .prop_map(|entries| Value::Object(entries.into_iter().collect())),
        ]
    })
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => select(checks::FIELDS.to_vec()).prop_map(str::to_owned),
        1 => "\\PC{0,8}",
    ]
}

/// An object whose keys are mostly the five fields, each with any JSON value.
fn any_object() -> impl Strategy<Value = Value> {
    prop::collection::vec((key(), any_json()), 0..8)
        .prop_map(|entries| Value::Object(entries.into_iter().collect()))
}

// ---- One generator per field: a JSON value (or none: the key is missing) and what the
// ---- spec says it reads as (`None`: a field error).

type Read<T> = (Option<Value>, Option<T>);

fn hex24() -> impl Strategy<Value = String> {
    "[0-9a-fA-F]{24}"
}

fn not_an_id() -> impl Strategy<Value = String> {
    prop_oneof![
        "[0-9a-fA-F]{1,23}",
        "[0-9a-fA-F]{25,30}",
        "[0-9a-fA-F]{23}[g-zG-Z \\-]",
        "[0-9a-fA-F]{22}é",
        "\\PC{1,30}",
    ]
    .prop_filter("24 hex", |s| {
        !(s.len() == 24 && s.bytes().all(|b| b.is_ascii_hexdigit()))
    })
}

fn offer_field() -> impl Strategy<Value = Read<String>> {
    prop_oneof![
        3 => hex24().prop_map(|s| (Some(json!(s)), Some(s.to_ascii_lowercase()))),
        1 => prop_oneof![
            Just(None),
            Just(Some(Value::Null)),
            Just(Some(json!(""))),
            Just(Some(json!("3"))),
            any::<i64>().prop_map(|n| Some(json!(n))),
            not_an_id().prop_map(|s| Some(json!(s))),
            any::<bool>().prop_map(|b| Some(json!(b))),
            hex24().prop_map(|s| Some(json!([s]))),
            hex24().prop_map(|s| Some(json!({"id": s}))),
        ]
        .prop_map(|v| (v, None)),
    ]
}

fn padding() -> impl Strategy<Value = String> {
    "[ \\t\\n\\r]{0,3}"
}

const MAX_SAFE: i64 = 1 << 53;

fn client_field() -> impl Strategy<Value = Read<i64>> {
    let valid = prop_oneof![
        (1..=MAX_SAFE).prop_map(|n| (json!(n), n)),
        (1..1000i64).prop_map(|n| (json!(n), n)),
        (1..=MAX_SAFE, padding(), padding()).prop_map(|(n, l, r)| (json!(format!("{l}{n}{r}")), n)),
        (1..=MAX_SAFE).prop_filter_map("float", |n| {
            Number::from_f64(n as f64).map(|f| (Value::Number(f), n))
        }),
        (1..=MAX_SAFE).prop_map(|n| (json!(format!("{n}.0")), n)),
        (1..=9_007_199_254i64).prop_map(|n| (json!(format!("{n}e3")), n * 1000)),
        // Past 2^53: the very id written, not the double next to it.
        (MAX_SAFE + 1..=i64::MAX).prop_map(|n| (json!(n), n)),
        (MAX_SAFE + 1..=i64::MAX, padding(), padding())
            .prop_map(|(n, l, r)| (json!(format!("{l}{n}{r}")), n)),
        Just((json!(true), 1)),
    ];
    let invalid = prop_oneof![
        Just(None),
        Just(Some(Value::Null)),
        Just(Some(json!(false))),
        Just(Some(json!(0))),
        Just(Some(json!(""))),
        Just(Some(json!("   "))),
        Just(Some(json!("0"))),
        Just(Some(json!("Infinity"))),
        Just(Some(json!("NaN"))),
        (i64::MIN..0).prop_map(|n| Some(json!(n))),
        (i64::MIN..0).prop_map(|n| Some(json!(n.to_string()))),
        (0..1_000_000i64, 1..100u8).prop_filter_map("float", |(n, d)| {
            Number::from_f64(n as f64 + f64::from(d) / 100.0).map(|f| Some(Value::Number(f)))
        }),
        (0..1_000_000i64, 1..100u8).prop_map(|(n, d)| Some(json!(format!("{n}.{d:02}")))),
        "[a-zA-Z]{1,8}".prop_map(|s| Some(json!(s))),
        (1..1000i64).prop_map(|n| Some(json!([n]))),
        (1..1000i64).prop_map(|n| Some(json!({"id": n}))),
    ];
    prop_oneof![
        3 => valid.prop_map(|(v, n)| (Some(v), Some(n))),
        1 => invalid.prop_map(|v| (v, None)),
    ]
}

fn payment_field() -> impl Strategy<Value = Read<PaymentType>> {
    prop_oneof![
        2 => Just((Some(json!("point")), Some(PaymentType::Point))),
        2 => Just((Some(json!("checkout")), Some(PaymentType::Checkout))),
        1 => prop_oneof![
            Just(None),
            Just(Some(Value::Null)),
            select(vec!["card", "tabby", "Point", "CHECKOUT", " point", "point ", ""])
                .prop_map(|s| Some(json!(s))),
            "\\PC{0,12}"
                .prop_filter("the two values", |s| s != "point" && s != "checkout")
                .prop_map(|s| Some(json!(s))),
            any::<i64>().prop_map(|n| Some(json!(n))),
            Just(Some(json!(["point"]))),
        ]
        .prop_map(|v| (v, None)),
    ]
}

fn occasion_id_field() -> impl Strategy<Value = Read<Option<String>>> {
    let none = prop_oneof![
        Just(None),
        Just(Some(Value::Null)),
        Just(Some(json!(0))),
        Just(Some(json!(0.0))),
        Just(Some(json!(""))),
        Just(Some(json!("0"))),
    ];
    prop_oneof![
        2 => none.prop_map(|v| (v, Some(None))),
        2 => hex24().prop_map(|s| (Some(json!(s)), Some(Some(s.to_ascii_lowercase())))),
        1 => prop_oneof![
            any::<i64>().prop_filter("zero", |n| *n != 0).prop_map(|n| json!(n)),
            Just(json!(0.5)),
            not_an_id().prop_filter("zero", |s| s != "0").prop_map(|s| json!(s)),
            Just(json!(" 0")),
            Just(json!("00")),
            any::<bool>().prop_map(|b| json!(b)),
            hex24().prop_map(|s| json!([s])),
        ]
        .prop_map(|v| (Some(v), None)),
    ]
}

/// Text whose first and last characters are not white space, of `len` characters: a few
/// random ones, then one repeated (ASCII, two-byte, four-byte or a no-break space) to make
/// up the length, so that characters, not bytes, are what must be counted.
fn core_text(len: std::ops::RangeInclusive<usize>) -> impl Strategy<Value = String> {
    (
        len,
        "\\S",
        "\\PC{0,8}",
        select(vec!['x', 'é', '😀', '\u{a0}']),
        "\\S",
    )
        .prop_map(|(n, first, middle, filler, last)| {
            if n == 1 {
                return first;
            }
            let middle: String = middle.chars().take(n - 2).collect();
            let fill = n - 2 - middle.chars().count();
            format!("{first}{middle}{}{last}", filler.to_string().repeat(fill))
        })
}

fn spaces() -> impl Strategy<Value = String> {
    "[ \\t\\n\\r\\u{a0}\\u{2003}\\u{3000}]{0,4}"
}

fn occasion_field() -> impl Strategy<Value = Read<Option<String>>> {
    prop_oneof![
        1 => Just((None, Some(None))),
        1 => Just((Some(Value::Null), Some(None))),
        1 => spaces().prop_map(|s| (Some(json!(s)), Some(None))),
        3 => (spaces(), core_text(1..=255), spaces())
            .prop_map(|(l, core, r)| (Some(json!(format!("{l}{core}{r}"))), Some(Some(core)))),
        1 => Just((Some(json!("x".repeat(255))), Some(Some("x".repeat(255))))),
        1 => (spaces(), core_text(256..=300), spaces())
            .prop_map(|(l, core, r)| (Some(json!(format!("{l}{core}{r}"))), None)),
        1 => prop_oneof![
            any::<i64>().prop_map(|n| json!(n)),
            any::<bool>().prop_map(|b| json!(b)),
            Just(json!(["Eid"])),
            Just(json!({"text": "Eid"})),
        ]
        .prop_map(|v| (Some(v), None)),
    ]
}

/// A body made of one generated value per field (in any key order, with unknown keys
/// mixed in), and what the spec says it reads as.
#[derive(Debug, Clone)]
struct Model {
    body: Value,
    request: Option<OrderRequest>,
    bad_fields: Vec<&'static str>,
}

fn model() -> impl Strategy<Value = Model> {
    let extra = prop::collection::vec(
        (
            "[a-z_]{1,12}".prop_filter("a field", |k| !checks::FIELDS.contains(&k.as_str())),
            prop_oneof![
                Just(json!(null)),
                any::<i64>().prop_map(|n| json!(n)),
                "\\PC{0,8}".prop_map(|s| json!(s)),
                Just(json!([1, {"point_offer_id": 5}])),
            ],
        ),
        0..3,
    );
    (
        offer_field(),
        client_field(),
        payment_field(),
        occasion_id_field(),
        occasion_field(),
        extra,
        any::<u64>(),
    )
        .prop_map(
            |(offer, client, kind, occasion_id, occasion, extra, order)| {
                let mut entries: Vec<(String, Value)> = Vec::new();
                let mut bad_fields = Vec::new();
                let values = [&offer.0, &client.0, &kind.0, &occasion_id.0, &occasion.0];
                let valid = [
                    offer.1.is_some(),
                    client.1.is_some(),
                    kind.1.is_some(),
                    occasion_id.1.is_some(),
                    occasion.1.is_some(),
                ];
                for ((name, value), ok) in checks::FIELDS.iter().zip(values).zip(valid) {
                    if let Some(value) = value {
                        entries.push(((*name).to_owned(), value.clone()));
                    }
                    if !ok {
                        bad_fields.push(*name);
                    }
                }
                entries.extend(extra);
                // Any key order: rotate by a generated amount.
                if !entries.is_empty() {
                    let by = usize::try_from(order % entries.len() as u64).unwrap_or(0);
                    entries.rotate_left(by);
                }
                let request = match (offer.1, client.1, kind.1, occasion_id.1, occasion.1) {
                    (
                        Some(point_offer_id),
                        Some(to_client_id),
                        Some(payment_type),
                        Some(point_occasion_id),
                        Some(occasion),
                    ) => Some(OrderRequest {
                        point_offer_id,
                        to_client_id,
                        payment_type,
                        point_occasion_id,
                        occasion,
                    }),
                    _ => None,
                };
                Model {
                    body: Value::Object(entries.into_iter().collect::<Map<_, _>>()),
                    request,
                    bad_fields,
                }
            },
        )
}

/// A body that asks for `request`, written plainly.
fn canonical(request: &OrderRequest) -> Vec<u8> {
    json!({
        "point_offer_id": request.point_offer_id,
        "to_client_id": request.to_client_id,
        "payment_type": request.payment_type.as_str(),
        "point_occasion_id": request.point_occasion_id,
        "occasion": request.occasion,
    })
    .to_string()
    .into_bytes()
}

fn fail(e: String) -> TestCaseError {
    TestCaseError::fail(e)
}

proptest! {
    #[test]
    fn any_bytes_get_an_answer_of_the_right_shape(raw in prop::collection::vec(any::<u8>(), 0..256)) {
        let _ = checks::check_raw(&raw).map_err(fail)?;
    }

    #[test]
    fn any_json_gets_an_answer_of_the_right_shape(value in prop_oneof![any_json(), any_object()]) {
        let raw = value.to_string().into_bytes();
        let outcome = checks::check_raw(&raw).map_err(fail)?;
        if !value.is_object() {
            prop_assert!(outcome.is_err(), "{} was accepted", value);
        }
    }

    #[test]
    fn deep_nesting_and_huge_values_get_an_answer(
        depth in 1usize..2000,
        open in select(vec!["[", "{\"a\":"]),
        number in select(vec![
            "1e308", "1e400", "-1e400", "123456789012345678901234567890", "9223372036854775808",
            "9223372036854775807", "18446744073709551616", "0.0000000000000000000001",
        ]),
        long in 0usize..20_000,
    ) {
        let close = if open == "[" { "]" } else { "}" };
        let nested = format!("{}1{}", open.repeat(depth), close.repeat(depth));
        let raw = format!(
            concat!(
                r#"{{"point_offer_id":"64b7f0c2a1b2c3d4e5f60718","to_client_id":{number},"#,
                r#""payment_type":"point","x":{nested},"occasion":"{}"}}"#,
            ),
            "é".repeat(long),
            number = number,
            nested = nested,
        );
        let _ = checks::check_raw(raw.as_bytes()).map_err(fail)?;
        let as_text = format!(r#"{{"to_client_id":"{number}","point_occasion_id":{number}}}"#);
        let _ = checks::check_raw(as_text.as_bytes()).map_err(fail)?;
    }

    #[test]
    fn each_field_is_read_as_the_spec_says(model in model()) {
        let raw = model.body.to_string().into_bytes();
        match checks::check_raw(&raw).map_err(fail)? {
            Ok(request) => prop_assert_eq!(Some(request), model.request, "{}", model.body),
            Err(details) => {
                prop_assert!(model.request.is_none(), "{} refused: {}", model.body, details);
                let fields: Vec<&str> = details["fieldErrors"]
                    .as_object()
                    .map(|f| f.keys().map(String::as_str).collect())
                    .unwrap_or_default();
                prop_assert_eq!(fields, model.bad_fields, "{}", model.body);
            }
        }
    }

    #[test]
    fn an_accepted_request_reads_back_the_same_from_its_plain_body(model in model()) {
        if let Ok(request) = order_body::parse(model.body.to_string().as_bytes()) {
            let again = order_body::parse(&canonical(&request));
            prop_assert_eq!(again.as_ref().ok(), Some(&request));
            prop_assert_eq!(again.map(|r| r.fingerprint()).ok(), Some(request.fingerprint()));
        }
    }

    #[test]
    fn the_fingerprint_tells_requests_apart(a in model(), b in model()) {
        if let (Some(a), Some(b)) = (a.request, b.request) {
            prop_assert_eq!(a == b, a.fingerprint() == b.fingerprint(), "{:?} / {:?}", a, b);
        }
    }
}

/// The fingerprint property above rarely meets two equal requests by chance; these are
/// the cases where a careless fingerprint (a field left out, no separator) would collide.
#[test]
fn the_fingerprint_separates_fields_and_none_from_empty() {
    let base = OrderRequest {
        point_offer_id: "64b7f0c2a1b2c3d4e5f60718".into(),
        to_client_id: 1002,
        payment_type: PaymentType::Point,
        point_occasion_id: None,
        occasion: None,
    };
    let variants = [
        OrderRequest {
            to_client_id: 100,
            ..base.clone()
        },
        OrderRequest {
            payment_type: PaymentType::Checkout,
            ..base.clone()
        },
        OrderRequest {
            point_occasion_id: Some("64b7f0c2a1b2c3d4e5f60719".into()),
            ..base.clone()
        },
        OrderRequest {
            occasion: Some("Eid".into()),
            ..base.clone()
        },
    ];
    for variant in &variants {
        assert_ne!(variant.fingerprint(), base.fingerprint(), "{variant:?}");
    }
    assert_eq!(base.clone().fingerprint(), base.fingerprint());
}

/// The checks refuse what they must, so that passing them means something.
#[test]
fn the_checks_catch_wrong_answers() {
    let body = json!({"point_offer_id": "64B7F0C2A1B2C3D4E5F60718", "to_client_id": " 7 ",
        "payment_type": "point", "occasion": "  Eid "});
    let Value::Object(body) = body else {
        unreachable!()
    };
    let right = OrderRequest {
        point_offer_id: "64b7f0c2a1b2c3d4e5f60718".into(),
        to_client_id: 7,
        payment_type: PaymentType::Point,
        point_occasion_id: None,
        occasion: Some("Eid".into()),
    };
    assert_eq!(checks::check_request(&right, &body), Ok(()));
    for wrong in [
        OrderRequest {
            point_offer_id: "64B7F0C2A1B2C3D4E5F60718".into(),
            ..right.clone()
        },
        OrderRequest {
            to_client_id: 8,
            ..right.clone()
        },
        OrderRequest {
            payment_type: PaymentType::Checkout,
            ..right.clone()
        },
        OrderRequest {
            occasion: Some("  Eid ".into()),
            ..right.clone()
        },
        OrderRequest {
            occasion: None,
            ..right.clone()
        },
        OrderRequest {
            point_occasion_id: Some("64b7f0c2a1b2c3d4e5f60718".into()),
            ..right.clone()
        },
    ] {
        assert!(checks::check_request(&wrong, &body).is_err(), "{wrong:?}");
    }
    let object = json!({});
    let form = json!({"formErrors": ["Expected object, received null"], "fieldErrors": {}});
    assert!(checks::check_details(&form, None).is_ok());
    assert!(checks::check_details(&form, Some(&json!([1]))).is_err());
    assert!(checks::check_details(&form, Some(&object)).is_err());
    let out_of_order =
        json!({"formErrors": [], "fieldErrors": {"payment_type": ["x"], "point_offer_id": ["y"]}});
    assert!(checks::check_details(&out_of_order, Some(&object)).is_err());
    let swapped = json!({"fieldErrors": {"point_offer_id": ["y"]}, "formErrors": []});
    assert!(checks::check_details(&swapped, Some(&object)).is_err());
}

/// The fuzz target `order_body` on its seeds (and local corpus), in `make test`.
#[test]
fn the_fuzz_targets_seeds_pass_its_checks() {
    replay::replay_fuzz_inputs("order_body", checks::check_fuzz_input);
}

/// The checks refuse the neighbouring double's id for an id past 2^53, as a number or as
/// text, and the parser gives the written one.
#[test]
fn an_id_past_2_pow_53_is_the_one_written() {
    for written in ["9007199254740993", "\" 9007199254740993 \""] {
        let raw = format!(
            r#"{{"point_offer_id":"64b7f0c2a1b2c3d4e5f60718","to_client_id":{written},"payment_type":"point"}}"#
        );
        let Ok(Value::Object(body)) = serde_json::from_str::<Value>(&raw) else {
            unreachable!()
        };
        let request = checks::check_raw(raw.as_bytes()).unwrap().unwrap();
        assert_eq!(request.to_client_id, 9_007_199_254_740_993, "{written}");
        let neighbour = OrderRequest {
            to_client_id: 9_007_199_254_740_992,
            ..request
        };
        assert!(
            checks::check_request(&neighbour, &body).is_err(),
            "{written}"
        );
    }
}
