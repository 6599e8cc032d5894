//! The catalog's closed sets of words that the order service writes are exactly their
//! columns' `CHECK`s: a word the database allows that the code does not know would fail
//! every read of its row, and a word the code writes that the database refuses would fail
//! every write.

use catalog_db::RedemptionStatus;
use db::testing::TestDatabase;

#[tokio::test]
async fn the_redemption_status_is_its_columns_check() {
    let database = TestDatabase::new(catalog_db::MIGRATIONS).await;
    let mut words: Vec<&str> = RedemptionStatus::ALL.map(RedemptionStatus::as_str).to_vec();
    words.sort_unstable();
    let allowed = database.check_values(RedemptionStatus::COLUMN).await;
    assert_eq!(allowed, words);
}

#[test]
fn a_status_the_code_does_not_know_is_no_status() {
    assert_eq!(
        RedemptionStatus::from_word("credited"),
        Some(RedemptionStatus::Credited)
    );
    for unknown in ["Credited", "paid", "", " pending"] {
        assert_eq!(RedemptionStatus::from_word(unknown), None, "{unknown:?}");
    }
}
