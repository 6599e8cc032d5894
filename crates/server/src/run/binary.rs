//! One service binary: its command line's subcommands, and the runtime (with telemetry) each
//! of them runs on.

use std::fmt::Display;
use std::net::TcpListener;
use std::process::ExitCode;
use std::time::Duration;

use actix_web::dev::Server;

use super::{SeedFn, bind};
use crate::config::{CommonConfig, ConfigError, DatabaseConfig, Env};

/// One service binary: its name, default port and migrations.
pub struct Binary {
    pub name: &'static str,
    pub default_port: u16,
    pub migrations: db::Migrations,
}

impl Binary {
    pub const fn new(name: &'static str, default_port: u16, migrations: db::Migrations) -> Self {
        Self {
            name,
            default_port,
            migrations,
        }
    }

    /// Runs one of the common subcommands; `load` and `build` serve, `seed` loads fixtures.
    pub fn run<C, E: Display>(
        &self,
        command: crate::Command,
        load: impl FnOnce(&mut Env, CommonConfig, DatabaseConfig) -> C,
        build: impl FnOnce(C, TcpListener) -> Result<Server, E>,
        seed: SeedFn,
    ) -> ExitCode {
        match command {
            crate::Command::Serve => self.serve(load, build),
            crate::Command::Migrate => self.migrate(),
            crate::Command::WaitForMigrations { timeout_secs } => {
                self.wait_for_migrations(Duration::from_secs(timeout_secs))
            }
            crate::Command::Seed { file } => self.seed(&file, seed),
        }
    }

    /// `serve`: reads the configuration (`load` adds the service's own variables to the
    /// common ones), sets up telemetry, binds, and serves until stopped.
    pub fn serve<C, E: Display>(
        &self,
        load: impl FnOnce(&mut Env, CommonConfig, DatabaseConfig) -> C,
        build: impl FnOnce(C, TcpListener) -> Result<Server, E>,
    ) -> ExitCode {
        let mut env = Env::from_process();
        let common = CommonConfig::from_env(&mut env, self.name, self.default_port);
        let database = DatabaseConfig::from_env(&mut env);
        let config = load(&mut env, common.clone(), database);
        let config = match env.finish(config) {
            Ok(config) => config,
            Err(e) => return self.config_failure(e),
        };
        self.with_runtime(&common, async move {
            let listener = bind(common.bind_addr, common.http.backlog)
                .map_err(|e| format!("cannot listen on {}: {e}", common.bind_addr))?;
            let server = build(config, listener).map_err(|e| format!("cannot start: {e}"))?;
            tracing::info!(
                http.addr = %common.bind_addr,
                workers = common.workers,
                max_connections = common.http.max_connections,
                "listening"
            );
            server.await.map_err(|e| format!("server failed: {e}"))?;
            tracing::info!("stopped");
            Ok(())
        })
    }

    /// The common and database variables of a subcommand that serves nothing; `None`, with
    /// every problem on stderr, when they are wrong.
    pub(super) fn database_only(&self) -> Option<(CommonConfig, DatabaseConfig)> {
        let mut env = Env::from_process();
        let common = CommonConfig::from_env(&mut env, self.name, self.default_port);
        let database = DatabaseConfig::from_env(&mut env);
        match env.finish((common, database)) {
            Ok(pair) => Some(pair),
            Err(e) => {
                self.config_failure(e);
                None
            }
        }
    }

    fn config_failure(&self, e: ConfigError) -> ExitCode {
        for line in e.0 {
            eprintln!("{}: configuration error: {line}", self.name);
        }
        ExitCode::from(2)
    }

    /// Runs `work` on a multi-threaded runtime with telemetry set up, and turns its outcome
    /// into an exit code (1 with one line on stderr on failure).
    fn with_runtime(
        &self,
        common: &CommonConfig,
        work: impl std::future::Future<Output = Result<(), String>>,
    ) -> ExitCode {
        self.with_runtime_code(
            common,
            async move { work.await.map(|()| ExitCode::SUCCESS) },
        )
    }

    /// [`Self::with_runtime`] for work that chooses its own exit code on success.
    pub(super) fn with_runtime_code(
        &self,
        common: &CommonConfig,
        work: impl std::future::Future<Output = Result<ExitCode, String>>,
    ) -> ExitCode {
        let guard = match telemetry::init(&common.telemetry) {
            Ok(guard) => guard,
            Err(e) => {
                eprintln!("{}: configuration error: {e}", self.name);
                return ExitCode::from(2);
            }
        };
        let runtime = match tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
        {
            Ok(runtime) => runtime,
            Err(e) => {
                eprintln!("{}: cannot start the async runtime: {e}", self.name);
                return ExitCode::from(1);
            }
        };
        let outcome = runtime.block_on(work);
        guard.shutdown();
        match outcome {
            Ok(code) => code,
            Err(e) => {
                tracing::error!(error.message = %e, "{} failed", self.name);
                eprintln!("{}: {e}", self.name);
                ExitCode::from(1)
            }
        }
    }
}
