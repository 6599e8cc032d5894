//! `auth-service seed FILE`: the fixture's `clients` and `legacy_tokens` sections, upserted
//! by id so that a second run changes nothing. Other sections belong to other services.

use chrono::NaiveDate;
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::future::BoxFuture;
use serde::Deserialize;

use crate::db::schema::{clients, legacy_tokens};
use crate::tokens;

#[derive(Deserialize)]
struct Fixture {
    #[serde(default)]
    clients: Vec<ClientRow>,
    #[serde(default)]
    legacy_tokens: Vec<LegacyTokenRow>,
}

#[derive(Deserialize, Insertable, AsChangeset)]
#[diesel(table_name = clients, primary_key(client_id), treat_none_as_null = true)]
struct ClientRow {
    client_id: i64,
    odoo_id: String,
    contact_phone: String,
    status: String,
    email_address: Option<String>,
    first_name: Option<String>,
    last_name: Option<String>,
    #[serde(default)]
    sex: i16,
    birth_date: Option<NaiveDate>,
    #[serde(default)]
    receive_offers: i16,
    #[serde(default)]
    push_enabled: i16,
    #[serde(default)]
    is_food_truck_user: i16,
    #[serde(default)]
    is_cod_disabled: i16,
    #[serde(default)]
    test_mode: bool,
}

#[derive(Deserialize)]
struct LegacyTokenRow {
    client_id: i64,
    token: String,
}

/// Loads the sections inside the caller's transaction.
pub fn load<'c>(
    conn: &'c mut AsyncPgConnection,
    fixture: &'c serde_json::Value,
) -> BoxFuture<'c, anyhow::Result<Vec<String>>> {
    Box::pin(async move {
        let fixture = Fixture::deserialize(fixture)?;
        for (i, client) in fixture.clients.iter().enumerate() {
            check_client(client).map_err(|e| anyhow::anyhow!("clients[{i}]: {e}"))?;
            diesel::insert_into(clients::table)
                .values(client)
                .on_conflict(clients::client_id)
                .do_update()
                .set((client, clients::updated_at.eq(diesel::dsl::now)))
                .execute(conn)
                .await
                .map_err(|e| {
                    anyhow::anyhow!("clients[{i}] (client_id {}): {e}", client.client_id)
                })?;
        }
        for (i, row) in fixture.legacy_tokens.iter().enumerate() {
            if row.token.is_empty() {
                anyhow::bail!("legacy_tokens[{i}]: token is empty");
            }
            let hash = tokens::legacy_hash(&row.token);
            diesel::insert_into(legacy_tokens::table)
                .values((
                    legacy_tokens::token_hash.eq(&hash),
                    legacy_tokens::client_id.eq(row.client_id),
                    legacy_tokens::source.eq("legacy"),
                ))
                .on_conflict(legacy_tokens::token_hash)
                .do_update()
                .set(legacy_tokens::client_id.eq(row.client_id))
                .execute(conn)
                .await
                .map_err(|e| {
                    anyhow::anyhow!("legacy_tokens[{i}] (client_id {}): {e}", row.client_id)
                })?;
        }
        Ok(vec![
            format!("clients: {} upserted", fixture.clients.len()),
            format!("legacy_tokens: {} upserted", fixture.legacy_tokens.len()),
        ])
    })
}

/// The checks that give a clearer message than the database's constraint names.
fn check_client(client: &ClientRow) -> Result<(), String> {
    domain::ClientId::new(client.client_id).map_err(|e| e.to_string())?;
    let phone: domain::Phone = client
        .contact_phone
        .parse()
        .map_err(|e: domain::ParseError| e.to_string())?;
    if phone.as_str() != client.contact_phone {
        return Err(format!(
            "contact_phone {:?} must be written without spaces",
            client.contact_phone
        ));
    }
    if !matches!(client.status.as_str(), "active" | "inactive") {
        return Err(format!(
            "status must be active or inactive, got {:?}",
            client.status
        ));
    }
    Ok(())
}
