//! The auth service: who the caller is (`/api/v1/users` with the caller's own
//! `Authorization`), and whether another client exists (`/internal/v1/clients/{id}`).

use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use server::caller::{CallerError, CallerLookup};
use service_identity::{Service, Signer};

use crate::error::PointError;

#[derive(Clone)]
pub struct AuthClient {
    base: Option<String>,
    http: telemetry::client::HttpClient,
    /// Signs this service's calls to the auth service's internal route.
    signer: Arc<Signer>,
    lookup: CallerLookup,
}

/// The parts of a client profile this service uses.
#[derive(Debug, Clone, Deserialize)]
pub struct ClientProfile {
    pub client_id: i64,
    pub first_name: Option<String>,
    pub last_name: Option<String>,
}

impl ClientProfile {
    /// "First Last", or whichever is set, or "A friend".
    pub fn display_name(&self) -> String {
        let parts: Vec<&str> = [self.first_name.as_deref(), self.last_name.as_deref()]
            .into_iter()
            .flatten()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        if parts.is_empty() {
            "A friend".to_owned()
        } else {
            parts.join(" ")
        }
    }
}

impl AuthClient {
    pub fn new(
        base: Option<String>,
        http: telemetry::client::HttpClient,
        signer: Arc<Signer>,
        caller_cache_ttl: Duration,
    ) -> Self {
        let lookup = CallerLookup::new(base.clone(), http.clone()).with_cache(caller_cache_ttl);
        Self {
            base,
            http,
            signer,
            lookup,
        }
    }

    /// The same client (and the same caller cache) over another HTTP client.
    pub fn with_http(&self, http: telemetry::client::HttpClient) -> Self {
        Self {
            lookup: self.lookup.with_http(http.clone()),
            http,
            ..self.clone()
        }
    }

    fn base(&self) -> Result<&str, PointError> {
        self.base
            .as_deref()
            .ok_or_else(|| CallerError::NotConfigured.into())
    }

    /// The caller lookup (and its cache) this client resolves callers with: each worker
    /// registers it for `server::caller::Caller` (`startup.rs`).
    pub fn lookup(&self) -> &CallerLookup {
        &self.lookup
    }

    /// Another client's profile, or `None` when the auth service does not know it.
    pub async fn client(&self, client_id: i64) -> Result<Option<ClientProfile>, PointError> {
        let url = format!("{}/internal/v1/clients/{client_id}", self.base()?);
        let response = self
            .http
            .get(&url)
            .header(
                reqwest::header::AUTHORIZATION,
                self.signer.authorization(Service::Auth),
            )
            // A lookup changes nothing: safe to send again (`telemetry::closed_connections`).
            .with_extension(telemetry::closed_connections::Resendable)
            .send()
            .await
            .map_err(super::unreachable("auth service"))?;
        match response.status().as_u16() {
            404 => Ok(None),
            200..=299 => response
                .json::<ClientProfile>()
                .await
                .map(Some)
                .map_err(|e| {
                    let e = e.without_url();
                    PointError::Internal(format!("auth service sent an unreadable profile: {e}"))
                }),
            status => Err(PointError::Internal(format!(
                "auth service answered {status} for client {client_id}"
            ))),
        }
    }
}
