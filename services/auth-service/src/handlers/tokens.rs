//! Token routes: `verify-token`, the client lookup by phone, `/api/v1/users` (the caller
//! lookup of the other services) and `exchange-token`.

use actix_web::{HttpResponse, web};
use diesel::prelude::*;
use diesel_async::{AsyncConnection, RunQueryDsl};
use serde::{Deserialize, Serialize};

use crate::caller::{AccessRefusal, LegacyCaller, PrimaryCaller, active, find_by_legacy_token};
use crate::client_limits::{self, Counted, LookupLimit, TokenLimit};
use crate::db::schema::{clients, legacy_tokens};
use crate::error::{AuthError, Fault, QueryRefusals, Refusals};
use crate::phone::{PhoneRefusal, required_phone};
use crate::profile::{ClientRefusal, Profile, ProfileAnswer, Recipient, Wrapped};
use crate::profile_update::{BodyRefusal, body_object};
use crate::state::AppState;
use crate::tokens::{ExchangeRefusal, legacy_hash, new_legacy_token};
use envelope::Refuses;

/// The lookup's refusals: no phone, no client with it, the caller's limit.
type LookupRefusals = QueryRefusals<Refuses<(PhoneRefusal, ClientRefusal, LookupLimit)>>;

/// exchange-token's refusals: its body, the token, the legacy tokens' limit.
type ExchangeRefusals =
    Refusals<Refuses<(BodyRefusal, ExchangeRefusal, AccessRefusal, TokenLimit)>>;

/// The bare 13-field profile of the primary token's client.
#[utoipa::path(get, path = "/clients/verify-token", responses(ProfileAnswer))]
pub async fn verify_token(PrimaryCaller(caller): PrimaryCaller) -> HttpResponse {
    HttpResponse::Ok().json(caller)
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct FindQuery {
    /// With its leading + (a + lost in the query string is restored).
    #[param(required = true, value_type = String, example = "+966500000002")]
    contact_phone: Option<String>,
}

/// Finds a gift's recipient by phone.
///
/// Answers only `{status: 200, data: {client_id, first_name, last_name}}`, never email,
/// birth date or settings. Checks in this order: token (401), contact_phone (400), the
/// caller's limit (429: `CLIENT_LOOKUPS_PER_CLIENT_PER_HOUR` lookups per rolling hour,
/// default 30, found or not, so the route cannot list who is a client), then 404 or 200.
#[utoipa::path(get, path = "/clients", params(FindQuery),
    responses(LookupRefusals,
        (status = 200, body = Wrapped<Recipient>)))]
pub async fn find_client_by_phone(
    PrimaryCaller(caller): PrimaryCaller,
    state: web::Data<AppState>,
    query: web::Query<FindQuery>,
) -> Result<HttpResponse, AuthError> {
    let phone = required_phone(query.contact_phone.as_deref())?;
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
        .ok_or(ClientRefusal::Unknown)?;
    Ok(HttpResponse::Ok().json(Wrapped::ok(recipient)))
}

/// The legacy token's client as `{status: 200, data: profile}`.
///
/// The caller lookup of the point and order services: legacy tokens only; a primary token
/// gets 401.
#[utoipa::path(get, path = "/users",
    responses((status = 200, description = "`{status: 200, data: profile}`", body = Wrapped<Profile>)))]
pub async fn get_caller(LegacyCaller(caller): LegacyCaller) -> HttpResponse {
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
    #[schema(value_type = TargetPlatform, example = "legacy")]
    target_platform: String,
}

/// The token exchange-token gives (the document's closed set; the handler reads the raw
/// JSON and refuses any other value).
#[derive(utoipa::ToSchema)]
#[schema(rename_all = "lowercase")]
#[allow(dead_code)]
pub enum TargetPlatform {
    /// A primary token (a JWT).
    Primary,
    /// A new legacy token.
    Legacy,
}

/// Trades a token for a primary token or a new legacy token.
///
/// With `{token, target_platform}`: `primary` trades any valid token for a primary token,
/// `legacy` mints a new legacy token (older ones stay valid). The token is first tried as a
/// primary JWT, then as a legacy token; neither, or an inactive client, gets 401. Minting
/// is limited per client (429, `legacy` only, since each call stores a token:
/// `LEGACY_TOKENS_PER_CLIENT_PER_HOUR` per rolling hour, default 20).
#[utoipa::path(post, path = "/clients/exchange-token", request_body = ExchangeBody,
    responses(ExchangeRefusals,
        (status = 200, description = "`{status: 200, data: {token}}`", body = Wrapped<Token>)))]
pub async fn exchange_token(
    state: web::Data<AppState>,
    body: web::Bytes,
) -> Result<HttpResponse, AuthError> {
    let body = body_object(&body)?;
    let token = body
        .get("token")
        .and_then(|v| v.as_str())
        .map(str::trim)
        .filter(|t| !t.is_empty());
    let token = token.ok_or(ExchangeRefusal::TokenMissing)?;
    let target = body
        .get("target_platform")
        .and_then(|v| v.as_str())
        .unwrap_or_default();
    if !matches!(target, "primary" | "legacy") {
        return Err(ExchangeRefusal::UnknownPlatform.into());
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
