//! The operator service's configuration.
//!
//! Variables (see docs/design.md and the README): the common ones (`APP_ENV`, `BIND_ADDR`
//! default `127.0.0.1:8084`, `HTTP_WORKERS`, the `HTTP_*` connection limits of
//! `server::HttpLimits`, `DATABASE_URL`, `DATABASE_POOL_SIZE`, `RUST_LOG`, `LOG_FORMAT`,
//! `OTEL_EXPORTER_OTLP_ENDPOINT`) and `OPERATOR_JWT_SECRET`
//! (required: the HS256 key of operator tokens).

use server::{CommonConfig, DatabaseConfig, Env, Secret};

#[derive(Debug, Clone)]
pub struct Config {
    pub common: CommonConfig,
    pub database: DatabaseConfig,
    pub jwt_secret: Secret,
}

impl Config {
    pub fn from_env(env: &mut Env, common: CommonConfig, database: DatabaseConfig) -> Self {
        let jwt_secret = env.secret("OPERATOR_JWT_SECRET", common.app_env);
        Self {
            common,
            database,
            jwt_secret,
        }
    }
}
