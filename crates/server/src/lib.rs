//! The shell every service binary shares, so that a service is only its own routes and
//! rules: the command line ([`cli`]), configuration from the environment ([`config`]), the
//! operational routes ([`ops`]), the app with its middleware ([`app`]) and the HTTP server
//! with graceful shutdown ([`run`]).

/// Every service allocates through mimalloc: a request allocates and frees many small
/// buffers (headers, extensions, futures), and glibc's malloc spent about a sixth of a
/// relayed request's CPU time on them (`docs/benchmarks.md`). Declared here, once, so that
/// every binary built on this crate (and its tests) uses it. Without transparent huge pages
/// (`no_thp`): with them its arenas made an idle service 36 MB resident instead of 22.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

pub mod app;
pub mod audience;
pub mod caller;
pub mod cli;
mod client_ip;
pub mod config;
mod described;
pub mod ops;
pub mod ops_metrics;
pub mod routes;
pub mod run;
pub mod seed;
mod stopping;
pub use stopping::CloseConnections;
#[cfg(feature = "testing")]
pub mod testing;
pub mod token_schemes;

pub use app::{AppSettings, app};
pub use audience::Audience;
pub use cli::Command;
pub use client_ip::client_ip;
pub use config::{AppEnv, CommonConfig, ConfigError, DatabaseConfig, Env, HttpLimits, Secret};
pub use routes::{Described, Route, Routes, scope, tagged};
pub use run::{
    Binary, SeedFn, ServiceApp, StartError, bind, http_client, http_server_with, pause_or_stop,
    serve, shutdown_watch, spawn_local, start,
};
pub use seed::{Rejected, Row, SeedReport};
