//! A service binary's subcommand run as an operator runs it (`<binary> housekeeping`,
//! `reconcile`, ...), from a test.

/// `binary args` against `database_url` in development, with nothing else in its
/// environment (a test adds what the subcommand reads).
pub fn service(binary: &str, database_url: &str, args: &[&str]) -> std::process::Command {
    let mut command = std::process::Command::new(binary);
    command
        .args(args)
        .env_clear()
        .env("DATABASE_URL", database_url)
        .env("APP_ENV", "development");
    command
}

/// Runs `command` to its end: exit code, stdout, stderr. Awaited, never blocking, so that a
/// fake service on the test's own runtime keeps answering it.
pub async fn output(command: std::process::Command) -> (i32, String, String) {
    let output = tokio::process::Command::from(command)
        .output()
        .await
        .unwrap();
    (
        output.status.code().unwrap(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}
