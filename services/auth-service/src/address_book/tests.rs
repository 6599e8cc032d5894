use super::*;
use serde_json::json;

fn body(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap()
}

#[test]
fn new_addresses_need_the_five_fields_in_order() {
    assert_eq!(
        fields(&body(json!({})), true).unwrap_err().to_string(),
        "label is required"
    );
    assert_eq!(
        fields(&body(json!({"label": "Home"})), true)
            .unwrap_err()
            .to_string(),
        "address_line is required"
    );
    let ok = fields(
        &body(
            json!({"label": " Home ", "address_line": "1 King Fahd Rd", "city": "Riyadh",
                                 "latitude": 24.7, "longitude": 46.6}),
        ),
        true,
    )
    .unwrap();
    assert_eq!(ok.label.as_deref(), Some("Home"));
    assert!(
        fields(&body(json!({})), false).is_ok(),
        "updates are partial"
    );
}

#[test]
fn values_out_of_range_are_invalid() {
    assert_eq!(
        fields(&body(json!({"latitude": 91})), false)
            .unwrap_err()
            .to_string(),
        "latitude is invalid"
    );
    assert_eq!(
        fields(&body(json!({"longitude": "46"})), false)
            .unwrap_err()
            .to_string(),
        "longitude is invalid"
    );
    assert_eq!(
        fields(&body(json!({"label": ""})), false)
            .unwrap_err()
            .to_string(),
        "label is invalid"
    );
    assert_eq!(
        fields(&body(json!({"is_default": "yes"})), false)
            .unwrap_err()
            .to_string(),
        "is_default is invalid"
    );
    assert_eq!(
        fields(&body(json!({"notes": "x".repeat(501)})), false)
            .unwrap_err()
            .to_string(),
        "notes is invalid"
    );
}

#[test]
fn the_full_book_names_its_limit() {
    let limit = format!("at most {MAX_ADDRESSES} addresses");
    assert!(BookRefusal::Full.to_string().ends_with(&limit));
}

#[test]
fn ids_are_24_hex_and_legacy_numbers_only_where_allowed() {
    assert_eq!(new_id().len(), 24);
    assert!(domain::ObjectId::is_valid(&new_id()));
    assert_eq!(
        AddressKey::parse("123", true),
        Some(AddressKey::Legacy(123))
    );
    assert_eq!(AddressKey::parse("123", false), None);
    assert_eq!(
        AddressKey::parse("64B7F0C2A1B2C3D4E5F60718", false),
        Some(AddressKey::Id("64b7f0c2a1b2c3d4e5f60718".into()))
    );
}
