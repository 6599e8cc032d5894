//! The operator service's configuration.
//!
//! Variables (see docs/design.md and the README): the common ones (`APP_ENV`, `BIND_ADDR`
//! default `127.0.0.1:8084`, `HTTP_WORKERS`, the `HTTP_*` connection limits of
//! `server::HttpLimits`, `DATABASE_URL`, `DATABASE_POOL_SIZE`, `RUST_LOG`, `LOG_FORMAT`,
//! `OTEL_EXPORTER_OTLP_ENDPOINT`), `OPERATOR_JWT_SECRET` (required: the HS256 key of
//! operator tokens), and for the loyalty back office's routes, which relay to the point
//! and order services (`crate::back_office::upstream`): `POINT_SERVICE_URL` and
//! `ORDER_SERVICE_URL`, optional, so that the service hierarchy runs without them (while one is
//! unset the routes that need it answer 500 naming it); `SERVICE_IDENTITY_KEY` (required in
//! production), this service's own key, which signs its calls to them and vouches for the
//! operator each is made for (`service_identity::config`); and
//! `BACK_OFFICE_TIMEOUT_MS` (binary default 10000), how long a back-office route waits for
//! its keeper before answering 504 (shorter than a stopping server's grace,
//! `server::Env::call_wait`).

use server::{CommonConfig, DatabaseConfig, Env, Secret};

#[derive(Debug, Clone)]
pub struct Config {
    pub common: CommonConfig,
    pub database: DatabaseConfig,
    pub jwt_secret: Secret,
    pub point_service_url: Option<String>,
    pub order_service_url: Option<String>,
    pub signer: std::sync::Arc<service_identity::Signer>,
    /// How long a back-office route waits for its keeper.
    pub keeper_wait: std::time::Duration,
}

impl Config {
    pub fn from_env(env: &mut Env, common: CommonConfig, database: DatabaseConfig) -> Self {
        let jwt_secret = env.secret("OPERATOR_JWT_SECRET", common.app_env);
        let point_service_url = env.url("POINT_SERVICE_URL");
        let order_service_url = env.url("ORDER_SERVICE_URL");
        let signer = std::sync::Arc::new(service_identity::config::signer(
            env,
            common.app_env,
            service_identity::Service::Operator,
        ));
        let keeper_wait =
            env.call_wait("BACK_OFFICE_TIMEOUT_MS", crate::back_office::upstream::WAIT);
        Self {
            keeper_wait,
            common,
            database,
            jwt_secret,
            point_service_url,
            order_service_url,
            signer,
        }
    }
}
