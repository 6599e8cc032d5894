//! End-to-end tests over the real binaries and PostgreSQL.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on purpose

mod auth_login;
mod back_office;
mod catalog_restore;
mod clean_db;
mod configuration;
mod database_outage;
mod docs_page;
mod document_answers;
mod generated_clients;
mod graceful_shutdown;
mod hierarchy;
mod logging;
mod metrics_help;
mod migrate_and_seed;
mod monitoring;
mod operations;
mod pgbouncer;
mod point_service_crash;
mod points;
mod relay;
mod relay_climb;
mod relayed_documents;
mod replicas;
mod rolling_stop;
mod sandbox_payments;
mod security;
mod tracing;
mod version_headers;
mod walkthrough;
