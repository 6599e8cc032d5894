//! Every lookup at the auth service is counted in `caller_lookups_total{outcome}`, so that an
//! auth outage (which the app sees only as 401s, like bad tokens) shows as the auth service's
//! failure: against a real HTTP server playing the auth service, each way a lookup can end is
//! counted once under its own outcome, and every outcome is exported at zero from the start.
//! One test in its own binary: the metrics registry is the process's.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on purpose

use std::time::Duration;

use actix_web::{App, HttpRequest, HttpResponse, web};
use serde_json::json;
use server::caller::{CallerError, CallerLookup};

/// The auth service's `/api/v1/users`, answering by the token: `ok` a client, `refused` a
/// 401, `boom` a 500, `garbled` a 200 without a client id, `hang` never.
fn fake_auth() -> String {
    server::spawn_local(|| {
        App::new().route(
            "/api/v1/users",
            web::get().to(|req: HttpRequest| async move {
                let token = req
                    .headers()
                    .get("authorization")
                    .unwrap()
                    .to_str()
                    .unwrap();
                match token {
                    "Bearer ok" => HttpResponse::Ok().json(json!({"data": {"client_id": 1001}})),
                    "Bearer boom" => HttpResponse::InternalServerError().finish(),
                    "Bearer garbled" => HttpResponse::Ok().json(json!({"data": {}})),
                    "Bearer hang" => {
                        std::future::pending::<()>().await;
                        unreachable!()
                    }
                    _ => HttpResponse::Unauthorized().finish(),
                }
            }),
        )
    })
    .unwrap()
}

/// The value of `caller_lookups_total{outcome="<outcome>"}` in the process's `/metrics` text.
fn counted(outcome: &str) -> Option<f64> {
    let series = format!("caller_lookups_total{{outcome=\"{outcome}\"}} ");
    telemetry::metrics::render()
        .lines()
        .find_map(|line| line.strip_prefix(&series)?.trim().parse().ok())
}

#[tokio::test]
async fn each_lookup_is_counted_by_how_it_ended() {
    let http =
        telemetry::client::http_client(Duration::from_millis(500), telemetry::client::DEFAULT_IDLE)
            .unwrap();
    let callers = CallerLookup::new(Some(fake_auth()), http.clone());
    let outcomes = [
        "ok",
        "refused",
        "5xx",
        "timeout",
        "unreachable",
        "unreadable",
    ];
    for outcome in outcomes {
        assert_eq!(counted(outcome), Some(0.0), "{outcome} exported at zero");
    }

    assert_eq!(callers.caller(Some("Bearer ok")).await, Ok(1001));
    assert_eq!(
        callers.caller(Some("Bearer forged")).await,
        Err(CallerError::InvalidToken)
    );
    // The auth service failing answers the app the same 401 as a refused token...
    assert_eq!(
        callers.caller(Some("Bearer boom")).await,
        Err(CallerError::InvalidToken)
    );
    assert_eq!(
        callers.caller(Some("Bearer garbled")).await,
        Err(CallerError::MissingClientId)
    );
    assert!(matches!(
        callers.caller(Some("Bearer hang")).await,
        Err(CallerError::Unreachable(_))
    ));
    // Nothing listens on port 1.
    let nowhere = CallerLookup::new(Some("http://127.0.0.1:1".into()), http);
    assert!(matches!(
        nowhere.caller(Some("Bearer ok")).await,
        Err(CallerError::Unreachable(_))
    ));
    // ...and a request without a token asks nothing.
    assert_eq!(callers.caller(None).await, Err(CallerError::MissingHeader));

    // ...but each is counted under its own outcome.
    for outcome in outcomes {
        assert_eq!(counted(outcome), Some(1.0), "{outcome}");
    }
}
