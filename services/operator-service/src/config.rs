//! The operator service's configuration.
//!
//! Variables (see docs/design.md and the README): the common ones (`APP_ENV`, `BIND_ADDR`
//! default `127.0.0.1:8084`, `HTTP_WORKERS`, the `HTTP_*` connection limits of
//! `server::HttpLimits`, `DATABASE_URL`, `DATABASE_POOL_SIZE`, `RUST_LOG`, `LOG_FORMAT`,
//! `OTEL_EXPORTER_OTLP_ENDPOINT`), `OPERATOR_JWT_SECRET` (required: the HS256 key of
//! operator tokens), and for the loyalty back office's routes, which relay to the point
//! and order services (`crate::back_office::upstream`): `POINT_SERVICE_URL`,
//! `ORDER_SERVICE_URL` and `INTERNAL_API_TOKEN`, all optional, so that the service hierarchy
//! runs without them (while one is unset the routes that need it answer 500 naming it); and
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
    pub internal_token: Option<Secret>,
    /// How long a back-office route waits for its keeper.
    pub keeper_wait: std::time::Duration,
}

impl Config {
    pub fn from_env(env: &mut Env, common: CommonConfig, database: DatabaseConfig) -> Self {
        let jwt_secret = env.secret("OPERATOR_JWT_SECRET", common.app_env);
        let point_service_url = env.url("POINT_SERVICE_URL");
        let order_service_url = env.url("ORDER_SERVICE_URL");
        let internal_token = env
            .optional("INTERNAL_API_TOKEN")
            .map(|_| env.secret("INTERNAL_API_TOKEN", common.app_env));
        let keeper_wait =
            env.call_wait("BACK_OFFICE_TIMEOUT_MS", crate::back_office::upstream::WAIT);
        Self {
            keeper_wait,
            common,
            database,
            jwt_secret,
            point_service_url,
            order_service_url,
            internal_token,
        }
    }
}
