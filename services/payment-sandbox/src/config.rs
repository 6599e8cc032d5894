//! The sandbox's environment variables (and the common ones: `APP_ENV`, `BIND_ADDR`,
//! `HTTP_WORKERS`, the `HTTP_*` connection limits of `server::HttpLimits`, `RUST_LOG`,
//! `LOG_FORMAT`, `OTEL_EXPORTER_OTLP_ENDPOINT`):
//!
//! | Variable | Default | Meaning |
//! |---|---|---|
//! | `PAYMENT_WEBHOOK_SECRET` | required | HMAC key of the webhook's `X-Signature` |
//! | `POINT_SERVICE_WEBHOOK_URL` | `http://127.0.0.1:8083/webhooks/v1/payments` | where events go |
//! | `SANDBOX_AUTO_CAPTURE` | off | on only for the exact text `true`: capture at once |
//! | `SANDBOX_PUBLIC_URL` | `http://<BIND_ADDR>` | base of the `redirect_url` the app opens |

use server::{CommonConfig, Env};

#[derive(Debug, Clone)]
pub struct Config {
    pub common: CommonConfig,
    pub webhook_secret: String,
    pub webhook_url: String,
    pub auto_capture: bool,
    pub public_url: String,
}

impl Config {
    pub fn from_env(env: &mut Env, common: CommonConfig) -> Self {
        // A sandbox has no production secret to protect: any non-empty value is accepted.
        let webhook_secret = env.required("PAYMENT_WEBHOOK_SECRET");
        let webhook_url = env
            .url("POINT_SERVICE_WEBHOOK_URL")
            .unwrap_or_else(|| "http://127.0.0.1:8083/webhooks/v1/payments".to_owned());
        let public_url = env
            .url("SANDBOX_PUBLIC_URL")
            .unwrap_or_else(|| format!("http://{}", common.bind_addr));
        Self {
            webhook_secret,
            webhook_url,
            auto_capture: env.flag("SANDBOX_AUTO_CAPTURE"),
            public_url: public_url.trim_end_matches('/').to_owned(),
            common,
        }
    }
}
