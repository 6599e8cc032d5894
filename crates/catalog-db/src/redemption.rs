//! Where a gift-code redemption stands: the order service writes it, the point service's
//! cross-check reads it.

db::text_enum! {
    /// A redemption's credit: pending until the points landed where they go.
    pub enum RedemptionStatus in "gift_card_redemptions.status" {
        /// Redeemed; its credit is being sent, or will be retried.
        Pending => "pending",
        /// Its points were credited.
        Credited => "credited",
    }
}
