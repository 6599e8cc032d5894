use std::net::TcpListener;
use std::process::ExitCode;

use payment_sandbox::{DEFAULT_PORT, SERVICE, build, config::Config};
use server::{CommonConfig, Env};

/// Plays the payment service for development and tests. Never deploy it to production.
fn main() -> ExitCode {
    if std::env::args()
        .nth(1)
        .is_some_and(|a| a == "--help" || a == "-h")
    {
        println!(
            "{SERVICE}: the payment service stand-in (dev and tests only); configured by \
             environment variables, see services/payment-sandbox/src/config.rs"
        );
        return ExitCode::SUCCESS;
    }
    let mut env = Env::from_process();
    let common = CommonConfig::from_env(&mut env, SERVICE, DEFAULT_PORT);
    let config = Config::from_env(&mut env, common);
    let config = match env.finish(config) {
        Ok(config) => config,
        Err(e) => {
            for line in e.0 {
                eprintln!("{SERVICE}: configuration error: {line}");
            }
            return ExitCode::from(2);
        }
    };
    let guard = match telemetry::init(&config.common.telemetry) {
        Ok(guard) => guard,
        Err(e) => {
            eprintln!("{SERVICE}: configuration error: {e}");
            return ExitCode::from(2);
        }
    };
    let outcome = actix_web::rt::System::new().block_on(async move {
        let addr = config.common.bind_addr;
        let listener =
            TcpListener::bind(addr).map_err(|e| format!("cannot listen on {addr}: {e}"))?;
        tracing::info!(
            http.addr = %addr,
            auto_capture = config.auto_capture,
            webhook.url = %config.webhook_url,
            "listening"
        );
        build(config, listener)?
            .await
            .map_err(|e| format!("server failed: {e}"))
    });
    guard.shutdown();
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{SERVICE}: {e}");
            ExitCode::from(1)
        }
    }
}
