//! Outside programs the tests run (PgBouncer, HAProxy, Prometheus): installed from Debian's packages on
//! first use, as `make bench` installs nginx and wrk.

use std::path::{Path, PathBuf};

/// The path of `binary` (e.g. `/usr/sbin/pgbouncer`, `/usr/bin/prometheus`), installing
/// Debian's `package` first when it is missing. Test processes that start together install it
/// once: the first takes a file lock, the others wait on it and then find the binary.
pub fn debian_binary(binary: &str, package: &str) -> PathBuf {
    let found = || {
        ["/usr/sbin", "/usr/bin"]
            .into_iter()
            .map(|dir| Path::new(dir).join(binary))
            .find(|path| path.exists())
    };
    if let Some(path) = found() {
        return path;
    }
    let lock = std::fs::File::create(std::env::temp_dir().join("loyalty-e2e-apt.lock")).unwrap();
    lock.lock().unwrap();
    if let Some(path) = found() {
        return path;
    }
    // A machine whose package lists were never fetched knows no package: fetch them once and
    // try again.
    let mut output = apt_get(&["install", "-y", "-q", package]);
    if !output.status.success() {
        apt_get(&["update", "-q"]);
        output = apt_get(&["install", "-y", "-q", package]);
    }
    match found() {
        Some(path) if output.status.success() => path,
        _ => panic!(
            "apt-get install {package} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ),
    }
}

/// `apt-get` with `args`, through sudo unless this is root.
fn apt_get(args: &[&str]) -> std::process::Output {
    let root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == b"0");
    let mut command = if root {
        std::process::Command::new("apt-get")
    } else {
        let mut sudo = std::process::Command::new("sudo");
        sudo.arg("apt-get");
        sudo
    };
    command
        .args(args)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .output()
        .unwrap()
}

/// A folder of the test's own that the `postgres` user may write too (PgBouncer drops root
/// privileges to it), removed when dropped.
pub struct WorkDir(pub PathBuf);

impl WorkDir {
    pub fn new(label: &str) -> WorkDir {
        let dir = std::env::temp_dir().join(format!(
            "loyalty-e2e-{label}-{}",
            uuid::Uuid::new_v4().simple()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let _ = std::process::Command::new("chown")
            .args(["postgres:postgres", dir.to_str().unwrap()])
            .status();
        WorkDir(dir)
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Waits until something accepts TCP connections on `port` (a server's own readiness).
pub async fn wait_for_port(port: u16, what: &str) {
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("{what} does not accept connections on port {port} after 10 s");
}
