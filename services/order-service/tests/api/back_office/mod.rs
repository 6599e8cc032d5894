//! The loyalty back office's catalog routes (`/internal/v1/back-office`): the check order
//! (token, operator, body, batch), every refusal with its exact message, the audit row of
//! each change, and that the app sees each change on its next request.

mod earn_rates;
mod gift_codes;
mod withdrawal_races;

use serde_json::Value;

use crate::helpers::*;

pub use testkit::back_office::{Call, Credential};

/// A call as a super_admin makes it.
pub fn call<'a>(method: reqwest::Method, path: &str) -> Call<'a> {
    Call::new(method, path, ("op-9", "super_admin"))
}

impl testkit::back_office::Keeper for TestApp {
    fn client(&self) -> &reqwest::Client {
        &self.client
    }

    fn url(&self, path: &str) -> String {
        TestApp::url(self, path)
    }

    fn service(&self) -> service_identity::Service {
        service_identity::Service::Order
    }
}

/// A refusal in the operator API's envelope.
pub fn refusal<R: envelope::Refusal>(refusal: R) -> (u16, Value) {
    testkit::refused(refusal)
}

/// The newest entry of the catalog's trail.
pub async fn newest_change(app: &TestApp) -> Value {
    let (status, trail) = call(reqwest::Method::GET, "/catalog-audit").send(app).await;
    assert_eq!(status, 200, "{trail}");
    trail["data"][0].clone()
}

#[tokio::test]
async fn every_route_of_the_table_refuses_a_stranger_and_a_role_it_does_not_admit() {
    let app = spawn_app().await;
    let keeper = back_office::routes::Keeper::OrderService;
    testkit::back_office::refuse_every_stranger(keeper, &app).await;
    for table in ["back_office_audit", "gift_card_batches"] {
        let count = format!("SELECT count(*) AS n FROM {table}");
        assert_eq!(app.database.count(&count).await, 0, "{table}");
    }
}
