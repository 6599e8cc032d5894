//! The money check after a failover, per reference: every movement of points the clients
//! were answered 200 for is in the ledger exactly once, and the ledger holds nothing else
//! but what a request that got no answer may have left (at most once). Totals would let one
//! double credit and one lost credit cancel out; this names each.
//!
//! Pure: the caller reads the acknowledged answers, the requests left unanswered and the
//! ledger's entries written since the load began (`check.rs`), and prints the lines.

use std::collections::{BTreeSet, HashMap};

/// One movement of points: under which reference (`order:<correlation id>` for a point
/// order's two entries, `gift-card:<code>` for a gift code's credit), which entry kind, to
/// or from whom, how many (exact decimal text, see [`decimal`]).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Movement {
    pub(crate) reference: String,
    pub(crate) kind: String,
    pub(crate) client: i64,
    pub(crate) points: String,
}

impl Movement {
    pub(crate) fn new(reference: &str, kind: &str, client: i64, points: &str) -> Movement {
        Movement {
            reference: reference.to_owned(),
            kind: kind.to_owned(),
            client,
            points: decimal(points),
        }
    }

    fn what(&self) -> String {
        format!("{} {} to {}", self.kind, self.points, self.client)
    }
}

/// A decimal's text without its trailing zeros (`100.0000` and `100` are one amount).
pub(crate) fn decimal(text: &str) -> String {
    let text = text.trim();
    if !text.contains('.') {
        return text.to_owned();
    }
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// The reference a gift-code credit is compared under: `gift-card:<code>`. A redemption is
/// credited under its `credit_reference`, and one made before 2026-11-27 under
/// `gift-card:<its id>`; an order service of the release before sends `gift-card:<id>` for
/// any redemption it retries, which is how one redemption gets two credits
/// (migration `2026-11-27-000060_gift_card_credit_target`). `aliases` maps both of each
/// redemption's names to its code's; another reference is kept as it is.
pub(crate) fn canonical(reference: &str, aliases: &HashMap<String, String>) -> String {
    aliases
        .get(reference)
        .cloned()
        .unwrap_or_else(|| reference.to_owned())
}

/// The differences, one line each (`reference<TAB>what`), sorted by reference:
/// - an `acknowledged` movement found 0 times (`missing`) or more than once (`credited N
///   times`);
/// - a `maybe` movement (of a request that got no 200: it may have been applied, or not)
///   found more than once;
/// - a ledger movement neither acknowledged nor maybe (`not acknowledged`): points to the
///   wrong client, of the wrong amount, of a reference nobody asked for.
pub(crate) fn compare(
    acknowledged: &[Movement],
    maybe: &[Movement],
    ledger: &[Movement],
) -> Vec<String> {
    let mut found: HashMap<&Movement, usize> = HashMap::new();
    for movement in ledger {
        *found.entry(movement).or_default() += 1;
    }
    let mut lines: BTreeSet<(String, String)> = BTreeSet::new();
    let mut line = |reference: &str, what: String| {
        lines.insert((reference.to_owned(), what));
    };
    let mut expected: HashMap<&Movement, (usize, usize)> = HashMap::new();
    for movement in acknowledged {
        expected.entry(movement).or_default().0 += 1;
    }
    for movement in maybe {
        expected.entry(movement).or_default().1 += 1;
    }
    for (movement, (acked, maybes)) in &expected {
        let n = found.get(movement).copied().unwrap_or(0);
        let (least, most) = (*acked, acked + maybes);
        if n < least {
            line(
                &movement.reference,
                format!("missing: {} (acknowledged)", movement.what()),
            );
        } else if n > most {
            let said = if *acked > 0 {
                "acknowledged once"
            } else {
                "not acknowledged, maybe applied once"
            };
            line(
                &movement.reference,
                format!("credited {n} times: {} ({said})", movement.what()),
            );
        }
    }
    for (movement, n) in &found {
        if !expected.contains_key(movement) {
            let times = if *n == 1 {
                String::new()
            } else {
                format!(" ({n} times)")
            };
            line(
                &movement.reference,
                format!("not acknowledged: {}{times}", movement.what()),
            );
        }
    }
    lines
        .into_iter()
        .map(|(reference, what)| format!("{reference}\t{what}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(code: &str, client: i64) -> Movement {
        Movement::new(
            &format!("gift-card:{code}"),
            "gift_card_credit",
            client,
            "10",
        )
    }

    fn order(id: &str, payer: i64, friend: i64) -> [Movement; 2] {
        [
            Movement::new(&format!("order:{id}"), "gift_sent", payer, "-120"),
            Movement::new(&format!("order:{id}"), "gift_received", friend, "100"),
        ]
    }

    /// What the drill compared before: the number of credits on each side.
    fn totals_agree(acknowledged: &[Movement], ledger: &[Movement]) -> bool {
        acknowledged.len() == ledger.len()
    }

    #[test]
    fn a_double_credit_and_a_missing_one_of_gift_codes_are_each_named_though_the_totals_agree() {
        let acknowledged = [
            code("FO-0001", 1001),
            code("FO-0002", 1002),
            code("FO-0003", 1003),
        ];
        // FO-0001 credited again under its redemption's id (an old order service's retry),
        // FO-0002's credit lost.
        let aliases = HashMap::from([
            ("gift-card:17".to_owned(), "gift-card:FO-0001".to_owned()),
            (
                "gift-card:FO-0001".to_owned(),
                "gift-card:FO-0001".to_owned(),
            ),
        ]);
        let ledger: Vec<Movement> = [
            ("gift-card:FO-0001", 1001),
            ("gift-card:17", 1001),
            ("gift-card:FO-0003", 1003),
        ]
        .iter()
        .map(|(reference, client)| {
            Movement::new(
                &canonical(reference, &aliases),
                "gift_card_credit",
                *client,
                "10.0000",
            )
        })
        .collect();
        assert!(totals_agree(&acknowledged, &ledger));
        assert_eq!(
            compare(&acknowledged, &[], &ledger),
            [
                "gift-card:FO-0001\tcredited 2 times: gift_card_credit 10 to 1001 (acknowledged once)",
                "gift-card:FO-0002\tmissing: gift_card_credit 10 to 1002 (acknowledged)",
            ]
        );
    }

    #[test]
    fn a_point_order_credited_twice_and_one_never_credited_are_each_named() {
        let acknowledged: Vec<Movement> = [order("a", 1001, 1002), order("b", 1003, 1004)].concat();
        let mut ledger = acknowledged.clone();
        ledger.push(acknowledged[1].clone()); // a's gift received twice
        ledger.retain(|m| m != &acknowledged[3]); // b's gift never received
        assert!(totals_agree(&acknowledged, &ledger));
        assert_eq!(
            compare(&acknowledged, &[], &ledger),
            [
                "order:a\tcredited 2 times: gift_received 100 to 1002 (acknowledged once)",
                "order:b\tmissing: gift_received 100 to 1004 (acknowledged)",
            ]
        );
    }

    #[test]
    fn the_ledger_as_acknowledged_has_no_difference() {
        let acknowledged: Vec<Movement> = order("a", 1001, 1002)
            .into_iter()
            .chain([code("FO-0001", 1001)])
            .collect();
        assert_eq!(
            compare(&acknowledged, &[], &acknowledged),
            Vec::<String>::new()
        );
    }

    #[test]
    fn a_request_left_unanswered_may_have_been_applied_once_but_never_twice() {
        let maybe: Vec<Movement> = [code("FO-0005", 1005), code("FO-0006", 1001)]
            .into_iter()
            .chain(order("c", 1002, 1003))
            .collect();
        // FO-0005 and order c applied once, FO-0006 not at all: all as may be.
        let ledger = vec![maybe[0].clone(), maybe[2].clone(), maybe[3].clone()];
        assert_eq!(compare(&[], &maybe, &ledger), Vec::<String>::new());
        let twice = vec![maybe[0].clone(), maybe[0].clone()];
        assert_eq!(
            compare(&[], &maybe, &twice),
            [
                "gift-card:FO-0005\tcredited 2 times: gift_card_credit 10 to 1005 \
                 (not acknowledged, maybe applied once)"
            ]
        );
    }

    #[test]
    fn a_credit_nobody_was_answered_for_or_to_another_client_is_named() {
        let acknowledged = [code("FO-0001", 1001)];
        let ledger = [
            code("FO-0001", 1002),
            code("FO-0099", 1003),
            code("FO-0099", 1003),
        ];
        assert_eq!(
            compare(&acknowledged, &[], &ledger),
            [
                "gift-card:FO-0001\tmissing: gift_card_credit 10 to 1001 (acknowledged)",
                "gift-card:FO-0001\tnot acknowledged: gift_card_credit 10 to 1002",
                "gift-card:FO-0099\tnot acknowledged: gift_card_credit 10 to 1003 (2 times)",
            ]
        );
    }

    #[test]
    fn amounts_are_compared_as_decimals_and_references_by_their_code() {
        assert_eq!(decimal("100.0000"), "100");
        assert_eq!(decimal("-120.50"), "-120.5");
        assert_eq!(decimal("9.125"), "9.125");
        assert_eq!(decimal("10"), "10");
        let aliases = HashMap::from([("gift-card:7".to_owned(), "gift-card:WELCOME".to_owned())]);
        assert_eq!(canonical("gift-card:7", &aliases), "gift-card:WELCOME");
        assert_eq!(canonical("gift-card:8", &aliases), "gift-card:8");
    }
}
