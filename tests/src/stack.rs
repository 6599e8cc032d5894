//! The whole system as `make run` starts it: the four services and the payment sandbox, each
//! a real process on a free port, over databases seeded with the demo fixture.

use serde_json::Value;

use crate::{Service, free_port};

/// The three databases' URLs.
pub struct Databases {
    pub auth: String,
    pub points: String,
    pub catalog: String,
}

pub struct Stack {
    pub auth: Service,
    pub points: Service,
    pub order: Service,
    pub operator: Service,
    pub sandbox: Service,
    /// What the point service was started with, to start it again on the same port.
    points_env: Vec<(String, String)>,
    points_db: String,
    /// The same for the order service.
    order_env: Vec<(String, String)>,
    catalog_db: String,
    http: reqwest::Client,
}

impl Stack {
    /// Starts everything with `make run`'s settings (`scripts/dev.env`: point and card
    /// orders on; the sandbox waiting on its 3-D Secure page).
    pub async fn start(databases: &Databases) -> Stack {
        Self::start_with_order_env(databases, &[]).await
    }

    /// [`Stack::start`] with more variables for the order service (kept for its restarts).
    pub async fn start_with_order_env(databases: &Databases, extra: &[(&str, &str)]) -> Stack {
        Self::start_with(databases, &[], extra).await
    }

    /// [`Stack::start`] with more variables for every service but the sandbox (`common`) and
    /// for the order service (`order_extra`), kept for restarts.
    pub async fn start_with(
        databases: &Databases,
        common: &[(&str, &str)],
        order_extra: &[(&str, &str)],
    ) -> Stack {
        Self::start_with_extra(databases, common, &[], order_extra).await
    }

    /// [`Stack::start_with`] with more variables for the point service too (`points_extra`),
    /// kept for its restarts.
    pub async fn start_with_extra(
        databases: &Databases,
        common: &[(&str, &str)],
        points_extra: &[(&str, &str)],
        order_extra: &[(&str, &str)],
    ) -> Stack {
        let common_env = owned(common);
        let auth = Service::start("auth-service", &databases.auth, common).await;
        let sandbox_port = free_port();
        let sandbox_url = format!("http://127.0.0.1:{sandbox_port}");
        let mut points_env = common_env.clone();
        points_env.extend(owned(&[
            ("AUTH_SERVICE_URL", &auth.base),
            ("PAYMENT_SERVICE_URL", &sandbox_url),
        ]));
        points_env.extend(owned(points_extra));
        let points = Service::start("point-service", &databases.points, &pairs(&points_env)).await;
        let webhook = format!("{}/webhooks/v1/payments", points.base);
        let sandbox = Service::start_on(
            "payment-sandbox",
            sandbox_port,
            "",
            &[("POINT_SERVICE_WEBHOOK_URL", &webhook)],
        )
        .await;
        let mut order_env = common_env.clone();
        order_env.extend(owned(&[
            ("POINT_SERVICE_URL", &points.base),
            ("AUTH_SERVICE_URL", &auth.base),
        ]));
        order_env.extend(owned(order_extra));
        let order = Service::start("order-service", &databases.catalog, &pairs(&order_env)).await;
        // The back office's routes relay to the point service and the order service.
        let mut operator_env = common_env.clone();
        operator_env.extend(owned(&[
            ("POINT_SERVICE_URL", &points.base),
            ("ORDER_SERVICE_URL", &order.base),
        ]));
        let operator = Service::start(
            "operator-service",
            &databases.catalog,
            &pairs(&operator_env),
        )
        .await;
        Stack {
            auth,
            points,
            order,
            operator,
            sandbox,
            points_env,
            points_db: databases.points.clone(),
            order_env,
            catalog_db: databases.catalog.clone(),
            http: reqwest::Client::builder()
                .timeout(std::time::Duration::from_secs(30))
                .pool_idle_timeout(crate::CLIENT_IDLE)
                .build()
                .unwrap(),
        }
    }

    /// Starts the point service again on its old port, after a crash or a kill.
    pub async fn start_points_again(&mut self) {
        self.points = restart(&mut self.points, &self.points_db, &self.points_env).await;
    }

    /// Starts the order service again on its old port, after a crash or a kill.
    pub async fn start_order_again(&mut self) {
        self.order = restart(&mut self.order, &self.catalog_db, &self.order_env).await;
    }

    /// A request to any service: `(status, JSON body or the text as a JSON string)`.
    pub async fn call(
        &self,
        method: &str,
        url: &str,
        token: Option<&str>,
        headers: &[(&str, &str)],
        body: Option<&Value>,
    ) -> (u16, Value) {
        call(&self.http, method, url, token, headers, body).await
    }
}

/// A request: `(status, JSON body or the text as a JSON string)`.
pub async fn call(
    http: &reqwest::Client,
    method: &str,
    url: &str,
    token: Option<&str>,
    headers: &[(&str, &str)],
    body: Option<&Value>,
) -> (u16, Value) {
    let mut request = http.request(method.parse().unwrap(), url);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    if let Some(body) = body {
        request = request.json(body);
    }
    let response = request
        .send()
        .await
        .unwrap_or_else(|e| panic!("{method} {url}: {e}"));
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// `service` again, on the port its callers know, once the old process is surely gone.
async fn restart(service: &mut Service, database: &str, env: &[(String, String)]) -> Service {
    service.kill().await;
    Service::start_on(service.name, service.port(), database, &pairs(env)).await
}

pub(crate) fn owned(env: &[(&str, &str)]) -> Vec<(String, String)> {
    env.iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

pub(crate) fn pairs(env: &[(String, String)]) -> Vec<(&str, &str)> {
    env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}
