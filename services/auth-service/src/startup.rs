//! Builds the HTTP server from a `Config` and a bound listener (tests bind port 0).

use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

use actix_web::dev::Server;
use actix_web::web;
use server::StartError;

use crate::config::{Config, SmsConfig};
use crate::otp::OtpSettings;
use crate::routes;
use crate::sms::{HttpSms, LogSms, SmsProvider};
use crate::state::AppState;
use crate::tokens::TokenKeys;

/// Added to the SMS timeout for how long an unconfirmed code blocks a new send: the commit
/// before the send and the confirmation after it.
const SEND_MARGIN: Duration = Duration::from_secs(5);

/// The longest an SMS send can take (the `log` provider does not wait on anything).
fn sms_timeout(sms: &SmsConfig) -> Duration {
    match sms {
        SmsConfig::Log => Duration::ZERO,
        SmsConfig::Http { timeout, .. } => *timeout,
    }
}

pub fn build(config: Config, listener: TcpListener) -> Result<Server, StartError> {
    let pool = db::build_pool(&config.database.pool_settings())?;
    crate::sms::export_counters();
    let sms: Arc<dyn SmsProvider> = match &config.sms {
        SmsConfig::Log => Arc::new(LogSms),
        SmsConfig::Http { url, timeout } => Arc::new(
            HttpSms::new(url.clone(), *timeout)
                .map_err(|e| StartError::Http(std::io::Error::other(e)))?,
        ),
    };
    let state = web::Data::new(AppState {
        pool: pool.clone(),
        tokens: TokenKeys::new(config.jwt_secret.expose().as_bytes()),
        sms,
        otp: OtpSettings {
            test_code: config.otp_test_code.clone(),
            limits: config.limits,
            pending_for: sms_timeout(&config.sms) + SEND_MARGIN,
            clock: config.otp_clock.clone(),
        },
        client_limits: config.client_limits,
        identity: config.identity.clone(),
        trust_forwarded_for: config.trust_forwarded_for,
    });
    // The last housekeeping run of each table, as gauges (the CronJob is not scraped).
    housekeeping::gauges::spawn(
        pool.clone(),
        crate::housekeeping::RULES,
        server::shutdown_watch(),
    );
    server::serve(listener, &config.common, pool, routes::app(), move |cfg| {
        cfg.app_data(state.clone());
    })
}
