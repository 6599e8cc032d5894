//! `auth-service seed FILE`: the fixture's `clients` and `legacy_tokens` sections, upserted
//! by id so that a second run changes nothing. Other sections belong to other services. A
//! bad row is reported by section, index, id and field, and skipped (`server::seed`).

use chrono::NaiveDate;
use diesel::prelude::*;
use diesel_async::AsyncPgConnection;
use serde::Deserialize;
use serde_json::Value;
use server::SeedReport;
use server::seed::{Broken, Section, SeedFuture, upsert_rows};

use crate::db::schema::{clients, legacy_tokens};
use crate::tokens;

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

const CLIENTS: Section<ClientRow> = Section::new("clients", "client_id", check_client);
const LEGACY_TOKENS: Section<LegacyTokenRow> =
    Section::new("legacy_tokens", "client_id", check_token);

/// Loads the sections inside the caller's transaction.
pub fn load<'c>(conn: &'c mut AsyncPgConnection, fixture: &'c Value) -> SeedFuture<'c> {
    Box::pin(async move {
        let mut report = SeedReport::default();
        upsert_rows(conn, fixture, &mut report, CLIENTS, |conn, client| {
            let changes = (client, clients::updated_at.eq(diesel::dsl::now));
            server::upsert!(conn, clients::table, client, clients::client_id, changes)
        })
        .await?;
        upsert_rows(conn, fixture, &mut report, LEGACY_TOKENS, |conn, row| {
            let values = (
                legacy_tokens::token_hash.eq(tokens::legacy_hash(&row.token)),
                legacy_tokens::client_id.eq(row.client_id),
                legacy_tokens::source.eq("legacy"),
            );
            let changes = legacy_tokens::client_id.eq(row.client_id);
            let key = legacy_tokens::token_hash;
            server::upsert!(conn, legacy_tokens::table, values, key, changes)
        })
        .await?;
        Ok(report)
    })
}

fn check_token(row: &LegacyTokenRow) -> Result<(), Broken> {
    if row.token.is_empty() {
        return Err(("token", "must not be empty".to_owned()));
    }
    Ok(())
}

/// The checks that give a clearer message than the database's constraint names.
fn check_client(client: &ClientRow) -> Result<(), Broken> {
    domain::ClientId::new(client.client_id).map_err(|e| ("client_id", e.to_string()))?;
    let phone: domain::Phone = client
        .contact_phone
        .parse()
        .map_err(|e: domain::ParseError| ("contact_phone", e.to_string()))?;
    if phone.as_str() != client.contact_phone {
        return Err((
            "contact_phone",
            format!("{:?} must be written without spaces", client.contact_phone),
        ));
    }
    if !matches!(client.status.as_str(), "active" | "inactive") {
        return Err((
            "status",
            format!("must be active or inactive, got {:?}", client.status),
        ));
    }
    Ok(())
}
