//! The caller extractor (`server::caller::Caller`), on a real app in front of a real HTTP
//! server playing the auth service: a handler gets the client id the auth service gave, a
//! caller that cannot be resolved gets the service's own answer for the `CallerError`, and
//! the lookup's cache works through it as it does when called by hand.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on purpose

mod fake_auth;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use actix_web::http::StatusCode;
use actix_web::{App, HttpResponse, ResponseError, web};
use server::caller::{Caller, CallerError, CallerLookup};

/// A service's error type as the extractor needs it: built from a `CallerError`, answering
/// 500 for the missing configuration and 401 for the rest, with the message as its body.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
struct ServiceError(#[from] CallerError);

impl ResponseError for ServiceError {
    fn status_code(&self) -> StatusCode {
        match self.0 {
            CallerError::NotConfigured => StatusCode::INTERNAL_SERVER_ERROR,
            _ => StatusCode::UNAUTHORIZED,
        }
    }

    fn error_response(&self) -> HttpResponse {
        HttpResponse::build(self.status_code()).body(self.0.to_string())
    }
}

/// The fake auth service (`fake_auth::counting`), counting into `lookups`.
fn fake_auth(lookups: Arc<AtomicUsize>) -> String {
    fake_auth::counting(lookups, Duration::ZERO)
}

/// The route under test: answers the caller's client id.
async fn whoami(caller: Caller<ServiceError>) -> HttpResponse {
    HttpResponse::Ok().body(caller.client_id.to_string())
}

/// An app serving `whoami`, with `lookup` registered as the services register it (none
/// when `None`); returns its base URL.
fn app(lookup: Option<CallerLookup>) -> String {
    server::spawn_local(move || {
        let app = App::new().route("/whoami", web::get().to(whoami));
        match &lookup {
            Some(lookup) => app.app_data(web::Data::new(lookup.clone())),
            None => app,
        }
    })
    .unwrap()
}

fn http() -> telemetry::client::HttpClient {
    telemetry::client::http_client(Duration::from_secs(5), telemetry::client::DEFAULT_IDLE).unwrap()
}

/// `GET /whoami` with `authorization` (none when `None`): the status and the body.
async fn whoami_as(app: &str, authorization: Option<&str>) -> (u16, String) {
    let mut request = reqwest::Client::new().get(format!("{app}/whoami"));
    if let Some(authorization) = authorization {
        request = request.header("authorization", authorization);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.text().await.unwrap())
}

#[tokio::test]
async fn a_handler_gets_the_client_id_the_auth_service_gave() {
    let lookups = Arc::new(AtomicUsize::new(0));
    let lookup = CallerLookup::new(Some(fake_auth(lookups.clone())), http());
    let app = app(Some(lookup));
    assert_eq!(
        whoami_as(&app, Some("Bearer token-1001")).await,
        (200, "1001".to_owned())
    );
    assert_eq!(lookups.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_caller_not_resolved_gets_the_services_answer() {
    let lookups = Arc::new(AtomicUsize::new(0));
    let lookup = CallerLookup::new(Some(fake_auth(lookups.clone())), http());
    let app = app(Some(lookup));
    let refused = |error: CallerError| (401, error.to_string());
    assert_eq!(
        whoami_as(&app, Some("Bearer forged")).await,
        refused(CallerError::InvalidToken)
    );
    // Without a bearer token nothing is asked of the auth service.
    assert_eq!(
        whoami_as(&app, None).await,
        refused(CallerError::MissingHeader)
    );
    assert_eq!(
        whoami_as(&app, Some("Basic dXNlcjpwdw==")).await,
        refused(CallerError::MissingHeader)
    );
    assert_eq!(lookups.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn the_lookups_cache_works_through_the_extractor() {
    let lookups = Arc::new(AtomicUsize::new(0));
    let lookup = CallerLookup::new(Some(fake_auth(lookups.clone())), http())
        .with_cache(Duration::from_secs(30));
    let app = app(Some(lookup));
    for _ in 0..3 {
        assert_eq!(
            whoami_as(&app, Some("Bearer token-7")).await,
            (200, "7".to_owned())
        );
    }
    // The app's workers share one cache, as the services' workers do (`with_http`).
    assert_eq!(lookups.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_unconfigured_lookup_checks_the_header_first() {
    let app = app(Some(CallerLookup::new(None, http())));
    assert_eq!(
        whoami_as(&app, None).await,
        (401, CallerError::MissingHeader.to_string())
    );
    assert_eq!(
        whoami_as(&app, Some("Bearer token-7")).await,
        (500, CallerError::NotConfigured.to_string())
    );
}

#[tokio::test]
async fn an_app_without_a_lookup_lets_no_caller_through() {
    let app = app(None);
    for authorization in [None, Some("Bearer token-7")] {
        assert_eq!(
            whoami_as(&app, authorization).await,
            (500, CallerError::NotConfigured.to_string())
        );
    }
}
