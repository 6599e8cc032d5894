//! `make clean-db` drops only what `make run` made. It runs on whatever server it finds
//! (`DATABASE_URL`'s, or one on 127.0.0.1:5432), where databases named `auth`, `points` or
//! `catalog` may be someone else's: `make run` marks the databases it creates, and clean-db
//! drops those and names the others it kept. Driven through the shell functions both use
//! (scripts/lib.sh), on databases of this test's own names on the test server.

use std::process::Output;

fn lib_sh(call: &str) -> Output {
    let script = format!(". scripts/lib.sh && {call}");
    std::process::Command::new("bash")
        .args(["-euo", "pipefail", "-c", &script])
        .current_dir(e2e::repo_root())
        .output()
        .unwrap()
}

fn exists(admin: &str, name: &str) -> bool {
    let out = std::process::Command::new("psql")
        .args([
            admin,
            "-tAc",
            &format!("SELECT 1 FROM pg_database WHERE datname = '{name}'"),
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).trim() == "1"
}

#[test]
fn clean_db_drops_the_databases_make_run_made_and_keeps_any_other() {
    let admin = db::testing::admin_url();
    let id = std::process::id();
    let (ours, theirs) = (
        format!("test_cleandb_{id}_ours"),
        format!("test_cleandb_{id}_theirs"),
    );
    // `theirs` exists before `make run` looks: it is left as it is, unmarked.
    let made = std::process::Command::new("psql")
        .args([&admin, "-qc", &format!("CREATE DATABASE {theirs}")])
        .status()
        .unwrap();
    assert!(made.success());
    let run = lib_sh(&format!(
        "create_missing_databases '{admin}' {ours} {theirs}"
    ));
    assert!(run.status.success(), "{run:?}");
    assert!(exists(&admin, &ours) && exists(&admin, &theirs));

    let clean = lib_sh(&format!("drop_our_databases '{admin}' {ours} {theirs}"));
    assert!(clean.status.success(), "{clean:?}");
    let said = String::from_utf8_lossy(&clean.stderr);
    assert!(!exists(&admin, &ours), "{said}");
    assert!(exists(&admin, &theirs), "{said}");
    assert!(said.contains(&format!("dropped {ours}")), "{said}");
    assert!(said.contains(&format!("kept {theirs}")), "{said}");

    let _ = std::process::Command::new("psql")
        .args([&admin, "-qc", &format!("DROP DATABASE IF EXISTS {theirs}")])
        .status();
}
