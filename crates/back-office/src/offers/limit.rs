//! How generous an offer an admin may make: at most so many points per SAR (the programme's
//! limit); a super_admin may go beyond it (docs/decisions.md, "An admin's offer stays within
//! the programme's points per SAR"). An offer of 10^9 points for 0.01 SAR, bought once by a
//! colluding client, would otherwise mint points at one admin's click.

use bigdecimal::{BigDecimal, RoundingMode, Zero};

use super::OfferValues;

/// A rate of points per SAR, kept as the pair it comes from (`points` for `amount` SAR) so
/// that comparing two rates multiplies and never divides: exact for any decimals.
#[derive(Debug, Clone, PartialEq)]
pub struct PointsPerSar {
    pub points: BigDecimal,
    pub amount: BigDecimal,
}

impl PointsPerSar {
    /// A rate of `points` per 1 SAR (the `OFFER_MAX_POINTS_PER_SAR` setting).
    pub fn per_sar(points: BigDecimal) -> Self {
        Self {
            points,
            amount: BigDecimal::from(1),
        }
    }

    /// The rate an offer gives.
    pub fn of(offer: &OfferValues) -> Self {
        Self {
            points: offer.point_amount.clone(),
            amount: offer.amount.clone(),
        }
    }

    /// Whether this rate gives more points per SAR than `other`; a rate for 0 SAR gives
    /// more than any rate for a price, and of two for 0 SAR the one with more points.
    pub fn above(&self, other: &PointsPerSar) -> bool {
        match (self.amount.is_zero(), other.amount.is_zero()) {
            (true, true) => self.points > other.points,
            (true, false) => true,
            (false, true) => false,
            (false, false) => &self.points * &other.amount > &other.points * &self.amount,
        }
    }

    /// The rate as a refusal shows it: points per SAR with at most 4 decimals, rounded down
    /// (`6.6666` for 100 points for 15 SAR: what is above it is above the limit); `free` for 0 SAR.
    pub fn shown(&self) -> String {
        if self.amount.is_zero() {
            return "free".to_owned();
        }
        let rate = (&self.points / &self.amount).with_scale_round(4, RoundingMode::Down);
        crate::decimal_text(&rate)
    }
}

/// The highest rate among `offers` (the limit the seeded offers set), if any.
pub fn highest(offers: impl IntoIterator<Item = PointsPerSar>) -> Option<PointsPerSar> {
    offers
        .into_iter()
        .reduce(|best, next| if next.above(&best) { next } else { best })
}

/// Whether `offer` (new, or `before` it changed) asks for a super_admin: it gives more
/// points per SAR than `limit`, and it is new or its change touches its points or its price.
/// An admin may change the rest of an offer above the limit (its sequence, whether it is on
/// sale) but not reprice it there, not even down: from an offer for 0 SAR (which no card
/// pays) to 10^9 points for 0.01 SAR is a lower rate, and a mint. Without a limit (none set,
/// none seeded) every new offer and every repricing does.
pub fn needs_super_admin(
    offer: &OfferValues,
    before: Option<&OfferValues>,
    limit: Option<&PointsPerSar>,
) -> bool {
    let rate = PointsPerSar::of(offer);
    let repriced = before.is_none_or(|before| PointsPerSar::of(before) != rate);
    repriced && limit.is_none_or(|limit| rate.above(limit))
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;

    use super::*;

    fn rate(points: &str, amount: &str) -> PointsPerSar {
        PointsPerSar {
            points: BigDecimal::from_str(points).unwrap(),
            amount: BigDecimal::from_str(amount).unwrap(),
        }
    }

    fn offer(points: &str, amount: &str) -> OfferValues {
        OfferValues {
            point_amount: BigDecimal::from_str(points).unwrap(),
            purchased_point_amount: None,
            amount: BigDecimal::from_str(amount).unwrap(),
            sequence: None,
            active: true,
        }
    }

    #[test]
    fn rates_compare_exactly_and_free_is_above_every_price() {
        // 100 for 15 is 6.666…; 6.6667 per SAR is above it by a hair, 20 for 3 is equal.
        assert!(rate("6.6667", "1").above(&rate("100", "15")));
        assert!(!rate("20", "3").above(&rate("100", "15")));
        assert!(!rate("100", "15").above(&rate("20", "3")));
        assert!(rate("0.0001", "0").above(&rate("1000000000", "0.01")));
        assert!(rate("2", "0").above(&rate("1", "0")));
        assert!(!rate("1", "0.01").above(&rate("1", "0")));
        assert_eq!(rate("100", "15").shown(), "6.6666");
        assert_eq!(rate("1", "0").shown(), "free");
    }

    #[test]
    fn the_highest_of_the_seeded_rates_is_the_limit() {
        let seeded = [rate("100", "15"), rate("1000", "120"), rate("250", "35")];
        assert_eq!(highest(seeded), Some(rate("1000", "120")));
        assert_eq!(highest([]), None);
    }

    #[test]
    fn a_super_admin_is_needed_above_the_limit_for_a_new_offer_or_a_raise() {
        let limit = rate("1000", "120");
        assert!(!needs_super_admin(
            &offer("1000", "120"),
            None,
            Some(&limit)
        ));
        assert!(needs_super_admin(
            &offer("1000", "119.99"),
            None,
            Some(&limit)
        ));
        assert!(needs_super_admin(
            &offer("1000000000", "0.01"),
            None,
            Some(&limit)
        ));
        assert!(needs_super_admin(&offer("1", "0"), None, Some(&limit)));
        // A generous offer a super_admin made: an admin may change the rest of it, and
        // reprice it only to within the limit.
        let generous = offer("500", "10");
        let admin_may =
            |changed: OfferValues| !needs_super_admin(&changed, Some(&generous), Some(&limit));
        assert!(admin_may(offer("500", "10")));
        assert!(!admin_may(offer("400", "10")));
        assert!(!admin_may(offer("500", "9")));
        assert!(admin_may(offer("80", "10")));
        // From 0 SAR to a price: a lower rate, still a repricing above the limit.
        let free = offer("100", "0");
        assert!(needs_super_admin(
            &offer("1000000000", "0.01"),
            Some(&free),
            Some(&limit)
        ));
        // No limit at all: every new offer and every repricing.
        assert!(needs_super_admin(&offer("1", "100"), None, None));
        assert!(!needs_super_admin(
            &offer("1", "100"),
            Some(&offer("1", "100")),
            None
        ));
    }
}
