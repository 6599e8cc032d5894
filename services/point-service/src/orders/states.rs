//! The closed sets of `point_orders`' words as types (`db::text_enum!`): a value the code does
//! not know is an error when read, never a default, and each set is tested against its
//! column's `CHECK` (`tests/api/states.rs`).

db::text_enum! {
    /// Where an order stands.
    pub enum Status in "point_orders.status" {
        /// `initial_order`: payable.
        Open => "initial_order",
        Successful => "successful",
        PaymentFailed => "payment_failed",
        /// `paid`: a copy from the legacy system; no route moves it.
        LegacyPaid => "paid",
    }
}

db::text_enum! {
    /// How the order is paid: with the payer's points at once, or later by card.
    pub enum PaymentType in "point_orders.payment_type" {
        Point => "point",
        Checkout => "checkout",
    }
}

db::text_enum! {
    /// A gift names an occasion; a transfer does not.
    pub enum OrderType in "point_orders.order_type" {
        Gift => "gift",
        Transfer => "transfer",
    }
}

db::text_enum! {
    /// What the payment service last said of the order's payment.
    pub enum PaymentStatus in "point_orders.payment_status" {
        Captured => "CAPTURED",
        Failed => "FAILED",
        Authorized => "AUTHORIZED",
    }
}
