use std::collections::HashSet;

use utoipa::openapi::RefOr;
use utoipa::openapi::path::HttpMethod;

use super::*;

#[test]
fn every_route_has_one_operation_and_its_own_method_and_path() {
    let mut operator = HashSet::new();
    let mut keeper = HashSet::new();
    let mut ids = HashSet::new();
    for route in Route::ALL {
        let contract = route.contract();
        let rule = route.rule();
        let method = contract.method_name();
        assert!(
            operator.insert((method, contract.path.clone())),
            "{route:?}: two routes on one operator path"
        );
        assert!(
            keeper.insert((method, rule.keeper, rule.keeper_path)),
            "{route:?}: two routes on one keeper path"
        );
        let id = contract.operation.operation_id.clone();
        assert!(ids.insert(id), "{route:?}: an operation id twice");
    }
}

#[test]
fn a_path_with_an_id_has_an_id_rule_on_both_sides() {
    for route in Route::ALL {
        let rule = route.rule();
        let contract = route.contract();
        assert_eq!(
            contract.path.contains("{id}"),
            rule.id.is_some(),
            "{route:?}: the operator path and the id rule disagree"
        );
        assert_eq!(
            rule.keeper_path.contains("{id}"),
            rule.id.is_some(),
            "{route:?}: the keeper path and the id rule disagree"
        );
        let documented: Vec<String> = contract
            .operation
            .parameters
            .iter()
            .flatten()
            .map(|parameter| match parameter {
                RefOr::T(parameter) => parameter.name.clone(),
                RefOr::Ref(reference) => reference.ref_location.clone(),
            })
            .collect();
        let expected: Vec<&str> = rule
            .id
            .map(|_| "id")
            .into_iter()
            .chain(match rule.query {
                Query::None => vec![],
                Query::Page | Query::History => vec!["page", "limit"],
            })
            .collect();
        assert_eq!(documented, expected, "{route:?}: documented parameters");
    }
}

#[test]
fn the_contracts_are_looked_up_by_the_routes_place_in_all() {
    for (place, route) in Route::ALL.into_iter().enumerate() {
        assert_eq!(
            route as usize, place,
            "{route:?}: Route::ALL is the enum's order"
        );
    }
}

#[test]
fn the_keeper_is_told_the_operator_for_every_change_and_for_each_recorded_or_guarded_read() {
    let named: Vec<Route> = Route::ALL
        .into_iter()
        .filter(|route| route.rule().names_operator)
        .filter(|route| route.contract().method == HttpMethod::Get)
        .collect();
    // Reading a client's points is recorded with its operator (the point service's reads
    // trail), and so is reading a batch's codes, which is holding its points (the order
    // service's trail); the reads trail itself is super_admin's, checked by the keeper too.
    assert_eq!(
        named,
        [
            Route::ClientPoints,
            Route::ClientReads,
            Route::Batch,
            Route::ExportBatch
        ]
    );
}

#[test]
fn every_change_names_the_operator_and_only_reads_admit_everyone() {
    for route in Route::ALL {
        let rule = route.rule();
        let contract = route.contract();
        if contract.method != HttpMethod::Get {
            assert!(rule.names_operator, "{route:?}: a change names who made it");
            assert_ne!(
                rule.admits,
                Admits::All,
                "{route:?}: a change is an admin's"
            );
        }
    }
}

#[test]
fn a_numeric_id_is_digits_above_zero_within_64_bits() {
    for (raw, read) in [
        ("7", Some(7)),
        ("0007", Some(7)),
        ("9223372036854775807", Some(i64::MAX)),
        ("9223372036854775808", None),
        ("0", None),
        ("+7", None),
        ("-7", None),
        (" 7", None),
        ("7 ", None),
        ("7.0", None),
        ("", None),
        ("٧", None),
    ] {
        assert_eq!(positive_integer(raw), read, "{raw:?}");
    }
}

#[test]
fn an_id_that_names_nothing_is_the_404_of_what_it_would_name() {
    let hex = "64b7f0c2a1d3e4f5a6b7c8d9";
    assert_eq!(PathId::Offer.read(hex), Ok(hex.to_owned()));
    assert_eq!(
        PathId::Occasion.read(&hex.to_uppercase()),
        Ok(hex.to_uppercase())
    );
    assert_eq!(PathId::Client.read("0042"), Ok("42".to_owned()));
    assert_eq!(PathId::Batch.read("12"), Ok("12".to_owned()));
    for (id, raw, message) in [
        (PathId::Offer, "../audit", "offer ../audit not found"),
        (PathId::Occasion, "x", "occasion x not found"),
        (PathId::Client, "+7", "client +7 not found"),
        (
            PathId::Batch,
            "1/codes.csv",
            "gift-code batch 1/codes.csv does not exist",
        ),
    ] {
        let refused = id.read(raw).unwrap_err();
        assert_eq!((refused.status, refused.message.as_str()), (404, message));
    }
}

#[test]
fn the_keeper_path_takes_the_id_as_read() {
    assert_eq!(
        Route::ExportBatch.keeper_path(Some("7")),
        "/gift-code-batches/7/codes.csv"
    );
    assert_eq!(Route::PointsAudit.keeper_path(None), "/audit");
}
