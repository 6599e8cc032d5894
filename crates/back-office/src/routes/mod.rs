//! The back office's route table: every operator route over loyalty data, written once.
//! Each [`Route`] has its operation (method, path under [`OPERATOR_PREFIX`], summary,
//! bodies and own answers: the `#[utoipa::path]` of its function in [`operations`]) and its
//! [`Rule`]: the service that keeps its data and the path there, the roles it admits, what
//! its path's id names and how it is read, which query goes on, and whether the keeper is
//! told the operator.
//!
//! The operator service serves and documents every route from here with one relay handler
//! (its security requirement, 401/403/413 and path and query parameters come from the rule);
//! the keepers check the role they are told against the same rule and serve the keeper
//! paths the table names (their tests iterate it).

mod contract;
pub mod operations;
mod path_id;

pub use contract::Contract;
pub use path_id::{BatchPath, ClientPath, HexId, IdText, PathId, positive_integer};

use utoipa::IntoParams;
use utoipa::openapi::path::Parameter;

use crate::role::Admits;

/// Where the operator service serves the back office (and the hierarchy).
pub const OPERATOR_PREFIX: &str = "/api/v1/operator";

/// A service that keeps back-office data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Keeper {
    /// Offers, occasions, the expiry policy, clients' points.
    PointService,
    /// Gift-code batches, the earn-rate table.
    OrderService,
}

impl Keeper {
    /// As refusals and logs name it.
    pub const fn name(self) -> &'static str {
        match self {
            Keeper::PointService => "point service",
            Keeper::OrderService => "order service",
        }
    }

    /// The operator service's setting that says where it is.
    pub const fn url_variable(self) -> &'static str {
        match self {
            Keeper::PointService => "POINT_SERVICE_URL",
            Keeper::OrderService => "ORDER_SERVICE_URL",
        }
    }

    /// The service, as a credential names its callee, and its back office as
    /// `service_identity` lists who may call it.
    pub const fn service(self) -> (service_identity::Service, service_identity::InternalRoute) {
        match self {
            Keeper::PointService => (
                service_identity::Service::Point,
                service_identity::InternalRoute::PointBackOffice,
            ),
            Keeper::OrderService => (
                service_identity::Service::Order,
                service_identity::InternalRoute::OrderBackOffice,
            ),
        }
    }
}

/// Which query a route reads and sends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Query {
    /// None: the query is not sent on.
    None,
    /// `page` and `limit` as every operator list reads them, sent on as the integers read.
    Page,
    /// `page` and `limit` as the app's history reads them: sent on as they came, nothing else.
    History,
}

impl Query {
    fn parameters(self) -> Vec<Parameter> {
        match self {
            Query::None => Vec::new(),
            Query::Page => crate::paging::PageParams::into_params(|| None),
            Query::History => relayed_routes::points::HistoryQuery::into_params(|| None),
        }
    }
}

/// What the table says of a route besides its operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    pub keeper: Keeper,
    /// Under the keeper's [`crate::INTERNAL_PREFIX`]; `{id}` where the path's id goes.
    pub keeper_path: &'static str,
    pub admits: Admits,
    /// What the path's `{id}` names, if it has one.
    pub id: Option<PathId>,
    pub query: Query,
    /// The keeper is told who acts: a change, or a read it records (a batch's codes).
    pub names_operator: bool,
}

/// One operator route of the back office.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    ListOffers,
    CreateOffer,
    UpdateOffer,
    WithdrawOffer,
    PointsAudit,
    ClientPoints,
    ClientReads,
    AdjustPoints,
    ListOccasions,
    CreateOccasion,
    UpdateOccasion,
    WithdrawOccasion,
    ExpiryPolicy,
    ReplaceExpiryPolicy,
    DryRunExpiryPolicy,
    ListBatches,
    IssueBatch,
    Batch,
    ExportBatch,
    WithdrawBatch,
    EarnRates,
    ReplaceEarnRates,
    CatalogAudit,
}

/// A rule, written as the table reads.
const fn rule(
    keeper: Keeper,
    keeper_path: &'static str,
    admits: Admits,
    id: Option<PathId>,
    query: Query,
    names_operator: bool,
) -> Rule {
    Rule {
        keeper,
        keeper_path,
        admits,
        id,
        query,
        names_operator,
    }
}

impl Route {
    /// Every route, in the order the operator service registers and documents them.
    pub const ALL: [Route; 23] = [
        Route::ListOffers,
        Route::CreateOffer,
        Route::UpdateOffer,
        Route::WithdrawOffer,
        Route::PointsAudit,
        Route::ClientPoints,
        Route::ClientReads,
        Route::AdjustPoints,
        Route::ListOccasions,
        Route::CreateOccasion,
        Route::UpdateOccasion,
        Route::WithdrawOccasion,
        Route::ExpiryPolicy,
        Route::ReplaceExpiryPolicy,
        Route::DryRunExpiryPolicy,
        Route::ListBatches,
        Route::IssueBatch,
        Route::Batch,
        Route::ExportBatch,
        Route::WithdrawBatch,
        Route::EarnRates,
        Route::ReplaceEarnRates,
        Route::CatalogAudit,
    ];

    /// The table. Reading the programme is everyone's, changing it the admins', moving
    /// points and handling vouchers `super_admin`'s; the trails and a client's points are
    /// client data, the admins'.
    pub const fn rule(self) -> Rule {
        use Admits::{Admins, All, SuperAdmin};
        use Keeper::{OrderService as Orders, PointService as Points};
        use PathId::{Batch, Client, Occasion, Offer};
        use Query::{History, None as NoQuery, Page};
        match self {
            Route::ListOffers => rule(Points, "/offers", All, None, NoQuery, false),
            Route::CreateOffer => rule(Points, "/offers", Admins, None, NoQuery, true),
            Route::UpdateOffer | Route::WithdrawOffer => {
                rule(Points, "/offers/{id}", Admins, Some(Offer), NoQuery, true)
            }
            Route::PointsAudit => rule(Points, "/audit", Admins, None, Page, false),
            // A read of a client's points names its operator: it is recorded (`reads`).
            Route::ClientPoints => rule(
                Points,
                "/clients/{id}/points",
                Admins,
                Some(Client),
                History,
                true,
            ),
            // Named so that the keeper checks the role itself: who looked is super_admin's.
            Route::ClientReads => rule(Points, "/client-reads", SuperAdmin, None, Page, true),
            Route::AdjustPoints => rule(
                Points,
                "/clients/{id}/adjustments",
                SuperAdmin,
                Some(Client),
                NoQuery,
                true,
            ),
            Route::ListOccasions => rule(Points, "/occasions", All, None, NoQuery, false),
            Route::CreateOccasion => rule(Points, "/occasions", Admins, None, NoQuery, true),
            Route::UpdateOccasion | Route::WithdrawOccasion => rule(
                Points,
                "/occasions/{id}",
                Admins,
                Some(Occasion),
                NoQuery,
                true,
            ),
            Route::ExpiryPolicy => rule(Points, "/expiry-policy", All, None, NoQuery, false),
            Route::ReplaceExpiryPolicy => {
                rule(Points, "/expiry-policy", Admins, None, NoQuery, true)
            }
            // Only a shortening needs it, a super_admin's; and its figures, one window against
            // the next, would tell an admin one client's balance.
            Route::DryRunExpiryPolicy => rule(
                Points,
                "/expiry-policy/dry-run",
                SuperAdmin,
                None,
                NoQuery,
                true,
            ),
            Route::ListBatches => rule(Orders, "/gift-code-batches", Admins, None, Page, false),
            Route::IssueBatch => rule(
                Orders,
                "/gift-code-batches",
                SuperAdmin,
                None,
                NoQuery,
                true,
            ),
            Route::Batch | Route::WithdrawBatch => rule(
                Orders,
                "/gift-code-batches/{id}",
                SuperAdmin,
                Some(Batch),
                NoQuery,
                true,
            ),
            Route::ExportBatch => rule(
                Orders,
                "/gift-code-batches/{id}/codes.csv",
                SuperAdmin,
                Some(Batch),
                NoQuery,
                true,
            ),
            Route::EarnRates => rule(Orders, "/earn-rates", All, None, NoQuery, false),
            Route::ReplaceEarnRates => rule(Orders, "/earn-rates", Admins, None, NoQuery, true),
            Route::CatalogAudit => rule(Orders, "/catalog-audit", Admins, None, Page, false),
        }
    }

    /// The route's operation as its function's attribute describes it, with its path and
    /// query parameters from the rule.
    pub fn contract(self) -> &'static Contract {
        &contract::CONTRACTS[self as usize]
    }

    /// The keeper's path (under [`crate::INTERNAL_PREFIX`]) for an id already read by
    /// [`PathId::read`].
    pub fn keeper_path(self, id: Option<&str>) -> String {
        let path = self.rule().keeper_path;
        match id {
            Some(id) => path.replace("{id}", id),
            None => path.to_owned(),
        }
    }

    /// The method and full path (under [`crate::INTERNAL_PREFIX`]) of each route `keeper`
    /// serves: what its router must hold under that prefix, and nothing else.
    pub fn kept_by(keeper: Keeper) -> impl Iterator<Item = (&'static str, String)> {
        Route::ALL
            .into_iter()
            .filter(move |route| route.rule().keeper == keeper)
            .map(|route| {
                let path = format!("{}{}", crate::INTERNAL_PREFIX, route.rule().keeper_path);
                (route.contract().method_name(), path)
            })
    }

    /// The route a keeper serves at `pattern` (the full path it was matched on, with `{id}`)
    /// for `method`.
    pub fn kept_at(method: &str, pattern: &str) -> Option<Route> {
        let path = pattern.strip_prefix(crate::INTERNAL_PREFIX)?;
        Route::ALL.into_iter().find(|route| {
            route.rule().keeper_path == path && route.contract().method_name() == method
        })
    }

    /// The document's tag: the resource the route acts on, a generated client's group.
    const fn tag(self) -> &'static str {
        use Route::*;
        match self {
            ListOffers | CreateOffer | UpdateOffer | WithdrawOffer => "offers",
            ListOccasions | CreateOccasion | UpdateOccasion | WithdrawOccasion => "occasions",
            ExpiryPolicy | ReplaceExpiryPolicy | DryRunExpiryPolicy => "expiry policy",
            ClientPoints | AdjustPoints => "client support",
            ListBatches | IssueBatch | Batch | ExportBatch | WithdrawBatch => "gift codes",
            EarnRates | ReplaceEarnRates => "earn rates",
            PointsAudit | ClientReads | CatalogAudit => "loyalty audit",
        }
    }

    /// What the attribute of the route's function in [`operations`] says.
    fn described(self) -> server::Described {
        macro_rules! document {
            ($operation:ident) => {
                server::described!(operations::$operation)
            };
        }
        match self {
            Route::ListOffers => document!(list_offers),
            Route::CreateOffer => document!(create_offer),
            Route::UpdateOffer => document!(update_offer),
            Route::WithdrawOffer => document!(withdraw_offer),
            Route::PointsAudit => document!(list_loyalty_audit),
            Route::ClientPoints => document!(get_client_points),
            Route::ClientReads => document!(list_client_reads),
            Route::AdjustPoints => document!(adjust_points),
            Route::ListOccasions => document!(list_occasions),
            Route::CreateOccasion => document!(create_occasion),
            Route::UpdateOccasion => document!(update_occasion),
            Route::WithdrawOccasion => document!(withdraw_occasion),
            Route::ExpiryPolicy => document!(get_expiry_policy),
            Route::ReplaceExpiryPolicy => document!(replace_expiry_policy),
            Route::DryRunExpiryPolicy => document!(dry_run_expiry_policy),
            Route::ListBatches => document!(list_gift_code_batches),
            Route::IssueBatch => document!(issue_gift_codes),
            Route::Batch => document!(get_gift_code_batch),
            Route::ExportBatch => document!(export_gift_codes),
            Route::WithdrawBatch => document!(withdraw_gift_codes),
            Route::EarnRates => document!(get_earn_rates),
            Route::ReplaceEarnRates => document!(replace_earn_rates),
            Route::CatalogAudit => document!(list_catalog_loyalty_audit),
        }
    }
}

#[cfg(test)]
mod tests;
