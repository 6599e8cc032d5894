//! The loyalty back office's catalog routes (`/internal/v1/back-office`): the check order
//! (token, operator, body, batch), every refusal with its exact message, the audit row of
//! each change, and that the app sees each change on its next request.

mod earn_rates;
mod gift_codes;
mod withdrawal_races;

use serde_json::Value;

use crate::helpers::*;

const BACK_OFFICE: &str = "/internal/v1/back-office";

/// A back-office call: the internal token and an operator unless a test takes them away.
pub struct Call<'a> {
    method: reqwest::Method,
    path: String,
    pub token: Option<&'a str>,
    pub operator: Option<(&'a str, &'a str)>,
    body: Option<Value>,
}

pub fn call<'a>(method: reqwest::Method, path: &str) -> Call<'a> {
    Call {
        method,
        path: format!("{BACK_OFFICE}{path}"),
        token: Some(INTERNAL),
        operator: Some(("op-9", "super_admin")),
        body: None,
    }
}

impl Call<'_> {
    pub fn body(mut self, body: Value) -> Self {
        self.body = Some(body);
        self
    }

    pub async fn response(self, app: &TestApp) -> reqwest::Response {
        let mut request = app.client.request(self.method, app.url(&self.path));
        if let Some(token) = self.token {
            request = request.header("x-internal-token", token);
        }
        if let Some((id, role)) = self.operator {
            request = request
                .header("x-operator-id", id)
                .header("x-operator-role", role);
        }
        if let Some(body) = self.body {
            request = request.json(&body);
        }
        request.send().await.unwrap()
    }

    pub async fn send(self, app: &TestApp) -> (u16, Value) {
        answer(self.response(app).await).await
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
