//! Client support's view of a client: the balance and a page of the history exactly as the
//! app sees them (the app's own types), and the refusal of a client the auth service does
//! not know.

use relayed_routes::points::{Balance, HistoryPage};
use serde::Serialize;
use utoipa::ToSchema;

/// A client's points, in this key order.
#[derive(Debug, Serialize, ToSchema)]
pub struct ClientPoints {
    /// The balance object the app's `GET /points` answers.
    pub balance: Balance,
    /// The page the app's `GET /point-history` answers for `page` and `limit`.
    pub history: HistoryPage,
}

envelope::refusals! {
    /// Why support's routes name no client.
    pub enum ClientRefusal in BackOffice {
        /// The path's client is not a positive integer the auth service knows.
        UnknownClient(id: String) => 404 "CLIENT_NOT_FOUND", "client {id} not found";
    }
}
