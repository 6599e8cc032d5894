//! Each closed set of `point_orders` words is exactly its column's `CHECK`: a word the
//! database allows that the code does not know would fail every read of its row, and a word
//! the code writes that the database refuses would fail every write.

use db::testing::TestDatabase;
use point_service::orders::{OrderType, PaymentStatus, PaymentType, Status};

fn sorted(words: impl IntoIterator<Item = &'static str>) -> Vec<String> {
    let mut words: Vec<String> = words.into_iter().map(str::to_owned).collect();
    words.sort();
    words
}

#[tokio::test]
async fn every_order_word_set_is_its_columns_check() {
    let database = TestDatabase::new(point_service::db::MIGRATIONS).await;
    let sets = [
        (
            Status::COLUMN,
            sorted(Status::ALL.iter().map(|s| s.as_str())),
        ),
        (
            PaymentType::COLUMN,
            sorted(PaymentType::ALL.iter().map(|s| s.as_str())),
        ),
        (
            OrderType::COLUMN,
            sorted(OrderType::ALL.iter().map(|s| s.as_str())),
        ),
        (
            PaymentStatus::COLUMN,
            sorted(PaymentStatus::ALL.iter().map(|s| s.as_str())),
        ),
    ];
    for (column, words) in sets {
        assert_eq!(database.check_values(column).await, words, "{column}");
    }
}

#[test]
fn a_word_the_code_does_not_know_is_none_never_a_default() {
    assert_eq!(Status::from_word("initial_order"), Some(Status::Open));
    for unknown in ["", "INITIAL_ORDER", "pending", "successful "] {
        assert_eq!(Status::from_word(unknown), None, "{unknown:?}");
    }
    assert_eq!(PaymentType::from_word("card"), None);
}
