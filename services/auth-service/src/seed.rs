//! `auth-service seed FILE`: the fixture's `clients` and `legacy_tokens` sections, upserted
//! by id so that a second run changes nothing. Other sections belong to other services. A
//! bad row is reported by section, index, id and field, and skipped (`server::seed`).

use chrono::NaiveDate;
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::future::BoxFuture;
use serde::Deserialize;
use serde_json::Value;
use server::SeedReport;
use server::seed::{rows, savepoint, settle};

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

/// Loads the sections inside the caller's transaction.
pub fn load<'c>(
    conn: &'c mut AsyncPgConnection,
    fixture: &'c Value,
) -> BoxFuture<'c, anyhow::Result<SeedReport>> {
    Box::pin(async move {
        let mut report = SeedReport::default();
        let mut clients_loaded = 0;
        for (at, client) in &rows::<ClientRow>(fixture, "clients", "client_id", &mut report) {
            if let Err((field, why)) = check_client(client) {
                report.reject(at, Some(field), why);
                continue;
            }
            savepoint(conn).await?;
            let outcome = diesel::insert_into(clients::table)
                .values(client)
                .on_conflict(clients::client_id)
                .do_update()
                .set((client, clients::updated_at.eq(diesel::dsl::now)))
                .execute(conn)
                .await;
            clients_loaded += usize::from(settle(conn, &mut report, at, outcome).await?.is_some());
        }
        let mut tokens_loaded = 0;
        for (at, row) in &rows::<LegacyTokenRow>(fixture, "legacy_tokens", "client_id", &mut report)
        {
            if row.token.is_empty() {
                report.reject(at, Some("token"), "must not be empty");
                continue;
            }
            let hash = tokens::legacy_hash(&row.token);
            savepoint(conn).await?;
            let outcome = diesel::insert_into(legacy_tokens::table)
                .values((
                    legacy_tokens::token_hash.eq(&hash),
                    legacy_tokens::client_id.eq(row.client_id),
                    legacy_tokens::source.eq("legacy"),
                ))
                .on_conflict(legacy_tokens::token_hash)
                .do_update()
                .set(legacy_tokens::client_id.eq(row.client_id))
                .execute(conn)
                .await;
            tokens_loaded += usize::from(settle(conn, &mut report, at, outcome).await?.is_some());
        }
        report.line(format!("clients: {clients_loaded} upserted"));
        report.line(format!("legacy_tokens: {tokens_loaded} upserted"));
        Ok(report)
    })
}

/// The checks that give a clearer message than the database's constraint names.
fn check_client(client: &ClientRow) -> Result<(), (&'static str, String)> {
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
