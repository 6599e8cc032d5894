//! The back office's expiry policy (`/internal/v1/back-office/expiry-policy`): read, each
//! refusal, a replacement moving the balance's `pointsExpirationDate`, a stale version
//! refused, two replacements from one version at once (one wins), the audit row.

use futures_util::future::join_all;
use serde_json::json;

use crate::back_office::{call, operator_refusal};
use crate::helpers::*;

const POLICY: &str = "/expiry-policy";

#[tokio::test]
async fn a_new_policy_moves_the_expiry_date_and_a_stale_one_is_refused() {
    let app = spawn_app().await;
    // The fixture: inactivity, 365 days.
    let (status, policy) = call(reqwest::Method::GET, POLICY).send(&app).await;
    assert_eq!(status, 200);
    assert_eq!(
        policy
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        ["expiry", "inactivityDays", "version", "updatedAt"]
    );
    assert_eq!(
        (
            &policy["expiry"],
            &policy["inactivityDays"],
            &policy["version"]
        ),
        (&json!("inactivity"), &json!(365), &json!(1))
    );
    let (_, before) = app.balance(SARA).await;
    let date = |balance: &serde_json::Value| {
        chrono::NaiveDate::parse_from_str(
            balance["pointsExpirationDate"].as_str().unwrap(),
            "%Y-%m-%d",
        )
        .unwrap()
    };

    // A shorter window takes points sooner: a super_admin's to set, with its dry run's
    // figures when the next run would take any (issue 40).
    let mut thirty = json!({"expiry": "inactivity", "inactivityDays": 30, "version": 1});
    let (_, dry) = call(reqwest::Method::POST, "/expiry-policy/dry-run")
        .by_role("super_admin")
        .body(thirty.clone())
        .send(&app)
        .await;
    thirty["confirm"] = json!({"clients": dry["clients"], "points": dry["points"]});
    let (status, replaced) = call(reqwest::Method::PUT, POLICY)
        .by_role("super_admin")
        .body(thirty)
        .send(&app)
        .await;
    assert_eq!(status, 200, "{replaced}");
    assert_eq!(
        (&replaced["inactivityDays"], &replaced["version"]),
        (&json!(30), &json!(2))
    );
    let (_, after) = app.balance(SARA).await;
    assert_eq!(date(&before) - date(&after), chrono::Duration::days(335));

    // Made from version 1 again: someone else changed it since.
    assert_eq!(
        call(reqwest::Method::PUT, POLICY)
            .body(json!({"expiry": "never", "inactivityDays": null, "version": 1}))
            .send(&app)
            .await,
        (
            409,
            operator_refusal(
                409,
                "STALE_VERSION",
                "the expiry policy is at version 2, not 1: read it again and make the change on it"
            )
        )
    );
    let (status, never) = call(reqwest::Method::PUT, POLICY)
        .body(json!({"expiry": "never", "inactivityDays": null, "version": 2}))
        .send(&app)
        .await;
    assert_eq!((status, &never["inactivityDays"]), (200, &json!(null)));
    assert_eq!(
        app.balance(SARA).await.1["pointsExpirationDate"],
        json!(null)
    );

    let (_, trail) = call(reqwest::Method::GET, "/audit").send(&app).await;
    assert_eq!(
        (&trail["data"][0]["action"], &trail["data"][0]["subject"]),
        (&json!("expiry_policy.replace"), &json!("settings:expiry"))
    );
    assert_eq!(trail["data"][0]["before"], replaced);
    assert_eq!(trail["data"][0]["after"], never);
}

#[tokio::test]
async fn each_refusal_answers_its_message() {
    let app = spawn_app().await;
    let cases = [
        (
            json!(null),
            "NOT_AN_OBJECT",
            "the body must be a JSON object",
        ),
        (
            json!({"expiry": "never", "days": 3}),
            "UNKNOWN_FIELD",
            "days is not a field of the expiry policy",
        ),
        (
            json!({"expiry": "sometimes", "version": 1}),
            "INVALID_EXPIRY",
            "expiry must be never or inactivity",
        ),
        (
            json!({"expiry": "inactivity", "inactivityDays": 0, "version": 1}),
            "INVALID_INACTIVITY_DAYS",
            "inactivityDays must be an integer from 1 to 36500 with inactivity, and null with never",
        ),
        (
            json!({"expiry": "inactivity", "inactivityDays": 30, "version": "1"}),
            "INVALID_VERSION",
            "version must be the integer version the change was made from",
        ),
    ];
    for (body, code, message) in cases {
        assert_eq!(
            call(reqwest::Method::PUT, POLICY)
                .body(body.clone())
                .send(&app)
                .await,
            (400, operator_refusal(400, code, message)),
            "{body}"
        );
    }
    assert_eq!(
        app.count("SELECT count(*) AS n FROM back_office_audit")
            .await,
        0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn of_replacements_from_one_version_at_once_one_is_made() {
    let app = spawn_app().await;
    // No policy yet (version 0, the singleton key decides), then the one made (its lock).
    app.sql("DELETE FROM point_settings").await;
    let mut version = 0;
    for _ in 0..2 {
        // Windows of a century or so: they take nothing in the next run, so no confirmation
        // is asked for, and the version alone decides.
        let tries = (36_491..=36_498).map(|days| {
            call(reqwest::Method::PUT, POLICY)
                .by_role("super_admin")
                .body(json!({"expiry": "inactivity", "inactivityDays": days, "version": version}))
                .send(&app)
        });
        let outcomes = join_all(tries).await;
        let made: Vec<_> = outcomes.iter().filter(|(s, _)| *s == 200).collect();
        assert_eq!(made.len(), 1, "{outcomes:?}");
        assert!(
            outcomes.iter().all(|(s, _)| [200, 409].contains(s)),
            "{outcomes:?}"
        );
        let next = made[0].1["version"].as_i64().unwrap();
        assert!(next > version, "{next} after {version}");
        version = next;
    }
    let (_, policy) = call(reqwest::Method::GET, POLICY).send(&app).await;
    assert_eq!(policy["version"], json!(version));
    assert_eq!(
        app.count(
            "SELECT count(*) AS n FROM back_office_audit WHERE action = 'expiry_policy.replace'"
        )
        .await,
        2
    );
}

#[tokio::test]
async fn a_seed_that_unsets_and_sets_the_settings_never_hands_an_old_version_out_again() {
    let app = spawn_app().await;
    let (_, read) = call(reqwest::Method::GET, POLICY).send(&app).await;
    let old = read["version"].as_i64().unwrap();
    let mut conn = app.database.connect().await;
    // The same settings again: nothing changed, the version stays.
    seed(
        &mut conn,
        json!({"point_settings": {"expiry": "inactivity", "inactivity_days": 365}}),
    )
    .await;
    assert_eq!(
        call(reqwest::Method::GET, POLICY).send(&app).await.1["version"],
        json!(old)
    );
    // Unset (the row deleted), then set again: a version never handed out before.
    seed(&mut conn, json!({"point_settings": null})).await;
    assert_eq!(
        call(reqwest::Method::GET, POLICY).send(&app).await.1["version"],
        json!(0)
    );
    seed(
        &mut conn,
        json!({"point_settings": {"expiry": "inactivity", "inactivity_days": 90}}),
    )
    .await;
    let now = call(reqwest::Method::GET, POLICY).send(&app).await.1["version"]
        .as_i64()
        .unwrap();
    assert!(now > old, "{now} after {old}");
    // An edit begun on the old version is refused.
    let (status, _) = call(reqwest::Method::PUT, POLICY)
        .body(json!({"expiry": "never", "inactivityDays": null, "version": old}))
        .send(&app)
        .await;
    assert_eq!(status, 409);
}

async fn seed(conn: &mut diesel_async::AsyncPgConnection, fixture: serde_json::Value) {
    point_service::seed::load(conn, &fixture).await.unwrap();
}

#[tokio::test]
async fn an_admin_may_lengthen_the_window_and_only_a_super_admin_shorten_it() {
    let app = spawn_app().await;
    // The fixture: inactivity, 365 days, version 1.
    let one_day = json!({"expiry": "inactivity", "inactivityDays": 1, "version": 1});
    assert_eq!(
        call(reqwest::Method::PUT, POLICY)
            .body(one_day.clone())
            .send(&app)
            .await,
        (
            403,
            operator_refusal(
                403,
                "EXPIRY_SHORTENING_NEEDS_SUPER_ADMIN",
                "inactivityDays 1 takes points sooner than the policy now (365 days): only a \
                 super_admin may set it"
            )
        )
    );
    let (_, policy) = call(reqwest::Method::GET, POLICY).send(&app).await;
    assert_eq!(
        (&policy["inactivityDays"], &policy["version"]),
        (&json!(365), &json!(1))
    );
    // The version first: a stale shortening is 409, as any stale change.
    let stale = json!({"expiry": "inactivity", "inactivityDays": 1, "version": 0});
    assert_eq!(
        call(reqwest::Method::PUT, POLICY)
            .body(stale)
            .send(&app)
            .await
            .0,
        409
    );
    assert_eq!(
        app.count("SELECT count(*) AS n FROM back_office_audit")
            .await,
        0
    );
    let passed = r#"back_office_guardrail_passed_total{guardrail="expiry_shortened"}"#;
    let scraped = testkit::metrics::scrape(&app.client, &app.base).await;
    assert_eq!(testkit::metrics::value(&scraped, passed), Some(0.0));

    // Longer, or never: an admin's to set.
    let (status, longer) = call(reqwest::Method::PUT, POLICY)
        .body(json!({"expiry": "never", "inactivityDays": null, "version": 1}))
        .send(&app)
        .await;
    assert_eq!(status, 200, "{longer}");
    // From never, any window is shorter.
    let version = longer["version"].as_i64().unwrap();
    let window = json!({"expiry": "inactivity", "inactivityDays": 3650, "version": version});
    assert_eq!(
        call(reqwest::Method::PUT, POLICY)
            .body(window.clone())
            .send(&app)
            .await
            .0,
        403
    );
    let (status, shortened) = call(reqwest::Method::PUT, POLICY)
        .by_role("super_admin")
        .body(window)
        .send(&app)
        .await;
    assert_eq!(status, 200, "{shortened}");
    let scraped = testkit::metrics::scrape(&app.client, &app.base).await;
    assert_eq!(testkit::metrics::value(&scraped, passed), Some(1.0));
}

/// A shortening that would take points in the next expiry run is made only with its dry run's
/// figures, which are exactly what the run then takes: clients 7001 to 7004 earned 40 days
/// ago (7004 has spent everything since), 7005 earned 10 days ago, 7006 40 days ago but earned
/// again yesterday. From 365 days to 30, the next run takes 7001 to 7003's whole balances,
/// besides what it takes from the fixture's clients.
#[tokio::test]
async fn a_shortening_that_takes_points_needs_its_dry_runs_figures_which_the_run_then_takes() {
    use std::ops::ControlFlow;

    use point_service::expiry::job;

    let app = spawn_app().await;
    let thirty = json!({"expiry": "inactivity", "inactivityDays": 30, "version": 1});
    let dry_run = || async {
        let (status, dry) = call(reqwest::Method::POST, "/expiry-policy/dry-run")
            .by_role("super_admin")
            .body(thirty.clone())
            .send(&app)
            .await;
        assert_eq!(status, 200, "{dry}");
        dry
    };
    // What the fixture's own clients would lose, before ours are added.
    let fixture = dry_run().await;
    let decimal = |v: &serde_json::Value| {
        v.as_str()
            .unwrap()
            .parse::<bigdecimal::BigDecimal>()
            .unwrap()
    };
    let clients = fixture["clients"].as_i64().unwrap() + 3;
    let points = (decimal(&fixture["points"])
        + "123.5001".parse::<bigdecimal::BigDecimal>().unwrap())
    .normalized()
    .to_plain_string();
    app.sql(
        "INSERT INTO point_accounts (client_id, balance) VALUES
           (7001, 100.5), (7002, 20.0001), (7003, 3), (7004, 0), (7005, 50), (7006, 70);
         INSERT INTO point_entries (client_id, kind, points, created_at) VALUES
           (7001, 'earn', 100.5, now() - interval '40 days'),
           (7002, 'earn', 20.0001, now() - interval '40 days'),
           (7003, 'earn', 3, now() - interval '40 days'),
           (7004, 'earn', 9, now() - interval '40 days'),
           (7004, 'spend', -9, now() - interval '39 days'),
           (7005, 'earn', 50, now() - interval '10 days'),
           (7006, 'earn', 60, now() - interval '40 days'),
           (7006, 'earn', 10, now() - interval '1 day');",
    )
    .await;
    let dry = dry_run().await;
    let keys: Vec<&str> = dry
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["asOf", "clients", "points"]);
    assert_eq!(
        (&dry["clients"], &dry["points"]),
        (&json!(clients), &json!(points))
    );
    let tomorrow = chrono::Utc::now()
        .with_timezone(&chrono_tz::Asia::Riyadh)
        .date_naive()
        .succ_opt()
        .unwrap();
    assert_eq!(dry["asOf"], json!(tomorrow.to_string()));

    // Without the figures, or with others: 409 naming them, nothing changed.
    let not_confirmed = (
        409,
        operator_refusal(
            409,
            "EXPIRY_NOT_CONFIRMED",
            &format!(
                "under this policy the next expiry run would take {points} points from {clients} \
                 clients: send its dry run's figures as confirm to make it"
            ),
        ),
    );
    // The fixture's figures alone: those of another moment.
    let mut other = thirty.clone();
    other["confirm"] = json!({"clients": fixture["clients"], "points": fixture["points"]});
    for body in [thirty.clone(), other] {
        let answer = call(reqwest::Method::PUT, POLICY)
            .by_role("super_admin")
            .body(body)
            .send(&app)
            .await;
        assert_eq!(answer, not_confirmed);
    }
    assert_eq!(
        app.count("SELECT count(*) AS n FROM back_office_audit")
            .await,
        0
    );
    let mut confirmed = thirty.clone();
    confirmed["confirm"] = json!({"clients": clients, "points": points});
    let (status, policy) = call(reqwest::Method::PUT, POLICY)
        .by_role("super_admin")
        .body(confirmed)
        .send(&app)
        .await;
    assert_eq!(
        (status, &policy["inactivityDays"]),
        (200, &json!(30)),
        "{policy}"
    );

    // The run then takes exactly the figures confirmed.
    let mut conn = app.database.connect().await;
    let options = job::Options {
        today: None,
        batch_size: 2,
        dry_run: false,
    };
    let summary = job::run(&mut conn, options, |_| ControlFlow::Continue(()))
        .await
        .unwrap();
    assert_eq!(
        (
            summary.clients_expired,
            summary.points_expired.normalized().to_plain_string()
        ),
        (clients as u64, points.clone())
    );
    for (client, left) in [(7001, "0"), (7004, "0"), (7005, "50"), (7006, "70")] {
        assert_eq!(
            app.balance(client).await.1["points"],
            json!(left),
            "{client}"
        );
    }
}
