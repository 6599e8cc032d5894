//! Running PostgreSQL's own programs (the server, Patroni, pgBackRest) from a driver: they
//! refuse to run as root, so as root they run as `postgres`, and the folders they write are
//! given to that user. The binaries are the ones `scripts/postgres.sh` uses.

use std::path::Path;
use std::process::Command;

/// The uid and gid the server runs as: `postgres` when we are root, else ourselves (`None`).
fn server_user() -> Option<(u32, u32)> {
    let id = |flag: &str, user: Option<&str>| {
        let output = Command::new("id").arg(flag).args(user).output().ok()?;
        String::from_utf8_lossy(&output.stdout)
            .trim()
            .parse::<u32>()
            .ok()
    };
    if id("-u", None)? != 0 {
        return None;
    }
    Some((id("-u", Some("postgres"))?, id("-g", Some("postgres"))?))
}

/// `command`, to run as the server's user.
pub fn as_server_user(command: &mut Command) -> &mut Command {
    use std::os::unix::process::CommandExt;
    if let Some((uid, gid)) = server_user() {
        command.uid(uid).gid(gid);
    }
    command
}

/// Gives `path` (and what it holds) to the server's user.
pub fn give_to_server_user(path: &Path) {
    if server_user().is_some() {
        let _ = Command::new("chown")
            .args(["-R", "postgres:postgres"])
            .arg(path)
            .status();
    }
}

/// The folder of the installed PostgreSQL's binaries (`scripts/lib.sh`'s `pg_bindir`).
///
/// # Panics
/// When bash does not run.
#[allow(clippy::unwrap_used)]
pub fn pg_bindir() -> String {
    let output = Command::new("bash")
        .args(["-c", ". scripts/lib.sh && pg_bindir"])
        .current_dir(crate::repo_root())
        .output()
        .unwrap();
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}
