//! A bad configuration stops a binary at once with one clear line naming the variable.

use e2e::{PRODUCTION_SECRETS, SERVICES, run};

#[tokio::test]
async fn a_bad_pool_size_stops_every_binary_with_one_line_naming_it() {
    for (name, _) in SERVICES {
        for command in [&["serve"][..], &["migrate"][..]] {
            let output = run(
                name,
                command,
                "postgres://postgres@127.0.0.1:5432/unused",
                &[("DATABASE_POOL_SIZE", "abc")],
            )
            .await;
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert_eq!(
                output.status.code(),
                Some(2),
                "{name} {command:?}: {stderr}"
            );
            assert_eq!(
                stderr.trim_end(),
                format!(
                    "{name}: configuration error: DATABASE_POOL_SIZE=\"abc\" is invalid: \
                     expected an integer from 2 to 1000"
                ),
                "{name} {command:?}"
            );
        }
    }
}

#[tokio::test]
async fn every_bad_variable_gets_its_own_line() {
    // An unknown APP_ENV counts as production: production secrets, so that only the three
    // bad variables are reported.
    let mut env = vec![("APP_ENV", "staging"), ("BIND_ADDR", "everywhere")];
    env.extend(PRODUCTION_SECRETS);
    let output = run("point-service", &["serve"], "mysql://nope", &env).await;
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 3, "{stderr}");
    assert!(lines[0].contains("APP_ENV=\"staging\""), "{stderr}");
    assert!(lines[1].contains("BIND_ADDR=\"everywhere\""), "{stderr}");
    assert!(lines[2].contains("DATABASE_URL is invalid"), "{stderr}");
    assert!(
        !stderr.contains("mysql://nope"),
        "the database URL may hold a password and must not be echoed"
    );
}
