//! Token routes: `verify-token`, the client lookup by phone, `/api/v1/users` (the caller
//! lookup of the other services) and `exchange-token`.

use actix_web::{HttpResponse, web};
use diesel::prelude::*;
use diesel_async::{AsyncConnection, RunQueryDsl};
use serde::{Deserialize, Serialize};

use crate::caller::{LegacyCaller, PrimaryCaller, active, find_by_legacy_token};
use crate::client_limits::{self, Counted};
use crate::db::schema::{clients, legacy_tokens};
use crate::error::{AuthError, DatabaseAnswers, Fault, TokenAnswers};
use crate::otp::normalize_phone;
use crate::profile::{Profile, Recipient, Wrapped};
use crate::profile_update::body_object;
use crate::state::AppState;
use crate::tokens::{legacy_hash, new_legacy_token};

/// The bare 13-field profile of the primary token's client.
#[utoipa::path(get, path = "/clients/verify-token", tag = "tokens", security(("primary" = [])),
    responses(TokenAnswers, (status = 200, description = "the bare 13-field profile", body = crate::profile::Profile)))]
pub async fn verify_token(PrimaryCaller(caller): PrimaryCaller) -> HttpResponse {
    HttpResponse::Ok().json(caller)
}

#[derive(Deserialize)]
pub struct FindQuery {
    contact_phone: Option<String>,
}

/// `GET /api/v1/clients?contact_phone=`: the id and name of the client with this phone, for
/// the app to address a gift; never the rest of the profile. Each lookup, found or not,
/// counts against the caller's hourly limit, so the route cannot list who is a client.
#[utoipa::path(get, path = "/clients", tag = "tokens", security(("primary" = [])),
    params(("contact_phone" = String, Query, description = "with its leading + (a + lost in the query string is restored)", example = "+966500000002")),
    description = "Finds a gift's recipient by phone. Answers only `{status: 200, data: {client_id, first_name, last_name}}`, never email, birth date or settings. \
                   Checks in this order: token (401), contact_phone (400), the caller's limit (429: `CLIENT_LOOKUPS_PER_CLIENT_PER_HOUR` lookups per rolling hour, default 30, found or not), then 404 or 200.",
    responses(TokenAnswers, (status = 200, description = "`{status: 200, data: {client_id, first_name, last_name}}`", body = Wrapped<Recipient>),
        (status = 400, description = "`contact_phone is required`: missing or empty; `Invalid query: …` when a key is sent twice", body = envelope::ErrorA),
        (status = 401, description = "no token, a token of the wrong kind, or an inactive client", body = envelope::ErrorA),
        (status = 404, description = "`client not found`", body = envelope::ErrorA),
        (status = 429, description = "`Too many client lookups, try again later`: the caller made `CLIENT_LOOKUPS_PER_CLIENT_PER_HOUR` lookups in the last hour", body = envelope::ErrorA, headers(("Retry-After" = u64, description = "Whole seconds until the limit that refused the request would let it through (at least 1)")))))]
pub async fn find_by_phone(
    PrimaryCaller(caller): PrimaryCaller,
    state: web::Data<AppState>,
    query: web::Query<FindQuery>,
) -> Result<HttpResponse, AuthError> {
    let phone = normalize_phone(query.contact_phone.as_deref().unwrap_or_default());
    if phone.is_empty() {
        return Err(AuthError::invalid("contact_phone is required"));
    }
    let mut conn = state.pool.get().await?;
    let recipient = conn
        .transaction::<_, AuthError, _>(async |conn| {
            client_limits::take(
                conn,
                &state.client_limits,
                Counted::Lookup,
                caller.client_id,
            )
            .await?;
            Ok(clients::table
                .filter(clients::contact_phone.eq(&phone))
                .select(Recipient::as_select())
                .first(conn)
                .await
                .optional()?)
        })
        .await?
        .ok_or(Fault::NotFound("client"))?;
    Ok(HttpResponse::Ok().json(Wrapped::ok(recipient)))
}

/// `GET /api/v1/users`: the legacy token's client as `{status: 200, data: profile}`.
#[utoipa::path(get, path = "/users", tag = "tokens", security(("legacy" = [])),
    description = "The caller lookup of the point and order services: legacy tokens only; a primary token gets 401.",
    responses(TokenAnswers, (status = 200, description = "`{status: 200, data: profile}`", body = Wrapped<Profile>)))]
pub async fn users(LegacyCaller(caller): LegacyCaller) -> HttpResponse {
    HttpResponse::Ok().json(Wrapped::ok(caller))
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct Token {
    token: String,
}

/// The body of exchange-token as the document shows it (the handler reads the raw JSON).
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub struct ExchangeBody {
    /// A primary token (tried first) or a legacy token.
    token: String,
    /// `primary` or `legacy`.
    #[schema(pattern = "^(primary|legacy)$", example = "legacy")]
    target_platform: String,
}

/// `POST /api/v1/clients/exchange-token` with `{token, target_platform}`: `primary` trades
/// any valid token for a primary token, `legacy` mints a new legacy token (older ones stay
/// valid; minting is limited per client). The token is first tried as a primary JWT, then
/// as a legacy token.
#[utoipa::path(post, path = "/clients/exchange-token", tag = "tokens",
    request_body = ExchangeBody,
    responses(DatabaseAnswers, (status = 200, description = "`{status: 200, data: {token}}`", body = Wrapped<Token>),
        (status = 400, description = "`token is required` or `target_platform must be primary or legacy`", body = envelope::ErrorA),
        (status = 401, description = "the token is neither a valid primary token nor a known legacy token, or the client is inactive", body = envelope::ErrorA),
        (status = 429, description = "`Too many tokens requested, try again later`: `legacy` only (each call stores a token); `LEGACY_TOKENS_PER_CLIENT_PER_HOUR` per client and rolling hour, default 20", body = envelope::ErrorA, headers(("Retry-After" = u64, description = "Whole seconds until the limit that refused the request would let it through (at least 1)")))))]
pub async fn exchange_token(
    state: web::Data<AppState>,
    body: web::Bytes,
) -> Result<HttpResponse, AuthError> {
    let body = body_object(&body).map_err(Fault::Invalid)?;
    let token = body
        .get("token")
        .and_then(|v| v.as_str())
        .map(str::trim)
        .filter(|t| !t.is_empty());
    let token = token.ok_or_else(|| AuthError::invalid("token is required"))?;
    let target = body
        .get("target_platform")
        .and_then(|v| v.as_str())
        .unwrap_or_default();
    if !matches!(target, "primary" | "legacy") {
        return Err(AuthError::invalid(
            "target_platform must be primary or legacy",
        ));
    }
    let mut conn = state.pool.get().await?;
    let profile = match state.tokens.verify_primary(token) {
        Some(client_id) => clients::table
            .find(client_id)
            .select(Profile::as_select())
            .first(&mut conn)
            .await
            .optional()?,
        None => find_by_legacy_token(&mut conn, token).await?,
    };
    let client = active(profile)?;
    let token = if target == "primary" {
        state
            .tokens
            .issue_primary(client.client_id)
            .map_err(|e| Fault::Internal(e.to_string()))?
    } else {
        let token = new_legacy_token();
        conn.transaction::<_, AuthError, _>(async |conn| {
            // Each call stores a token that stays valid: the limit bounds the table.
            client_limits::take(
                conn,
                &state.client_limits,
                Counted::LegacyToken,
                client.client_id,
            )
            .await?;
            diesel::insert_into(legacy_tokens::table)
                .values((
                    legacy_tokens::token_hash.eq(legacy_hash(&token)),
                    legacy_tokens::client_id.eq(client.client_id),
                    legacy_tokens::source.eq("exchange"),
                ))
                .execute(conn)
                .await?;
            Ok(())
        })
        .await?;
        token
    };
    tracing::info!(client.id = client.client_id, target, "token exchanged");
    Ok(HttpResponse::Ok().json(Wrapped::ok(Token { token })))
}
