//! No spelling of a path climbs out of `/api/v2/client` through the relay to the point
//! service's operational or internal routes: `..\`, `%5c`, `%2e%2e`, `%2f` and their mixes,
//! sent over a raw socket (no client library normalises them first) to the real order service
//! in front of the real point service. Each reaches, unchanged, the relayed route it matched
//! (an offer or an order id), whose answer comes back; never `/metrics`, `/openapi.json`,
//! `/readyz`, `/docs` or `/internal/v1/credits`.

use e2e::demo::SARA;
use e2e::{Service, demo_database};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The routes a climb aims at, each with what only its own answer contains.
const AIMS: [(&str, &[&str]); 6] = [
    ("metrics", &["# TYPE", "http_requests_total"]),
    ("openapi.json", &["\"openapi\"", "\"paths\""]),
    ("readyz", &["\"ready\"", "\"checks\""]),
    ("docs", &["<html", "swagger"]),
    ("docs/", &["<html", "swagger"]),
    (
        "internal/v1/credits",
        &["\"balance\"", "invalid service credential"],
    ),
];

/// Ways to write "four levels up, then `aim`" inside one path segment.
fn climbs(aim: &str) -> Vec<String> {
    let backslashed = aim.replace('/', "\\");
    vec![
        format!("..\\..\\..\\..\\{backslashed}"),
        format!("..%5c..%5c..%5c..%5c{}", aim.replace('/', "%5c")),
        format!("..%5C..%5C..%5C..%5C{backslashed}"),
        format!("%2e%2e%5c%2e%2e%5c%2e%2e%5c%2e%2e%5c{backslashed}"),
        format!(
            "%2e%2e%2f%2e%2e%2f%2e%2e%2f%2e%2e%2f{}",
            aim.replace('/', "%2f")
        ),
        format!("..%2F..%2F..%2F..%2F{}", aim.replace('/', "%2F")),
        format!(".%2e\\.%2e\\%2e.\\%2E%2E\\{backslashed}"),
        format!("%2e%2e\\%2E%2E%5C..%2f.%2e/{backslashed}").replace('/', "\\"),
    ]
}

/// One request as raw bytes on a connection of its own; the status and the body.
async fn raw(base: &str, method: &str, target: &str) -> (u16, String) {
    let mut stream = tokio::net::TcpStream::connect(base.trim_start_matches("http://"))
        .await
        .unwrap();
    let request = format!(
        "{method} {target} HTTP/1.1\r\nHost: loyalty\r\nAuthorization: Bearer {SARA}\r\n\
         Content-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{{}}"
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let status = answer.get(9..12).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = answer
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
        .unwrap_or_default();
    (status, body)
}

#[tokio::test]
async fn no_spelling_of_a_climb_reaches_the_point_services_own_routes() {
    let auth_db = demo_database(&["auth-service"], "auth").await;
    let points_db = demo_database(&["point-service"], "points").await;
    let catalog_db = demo_database(&["order-service"], "catalog").await;
    let auth = Service::start("auth-service", auth_db.url(), &[]).await;
    let points = Service::start(
        "point-service",
        points_db.url(),
        &[("AUTH_SERVICE_URL", &auth.base)],
    )
    .await;
    let order = Service::start(
        "order-service",
        catalog_db.url(),
        &[
            ("POINT_SERVICE_URL", &points.base),
            ("AUTH_SERVICE_URL", &auth.base),
        ],
    )
    .await;

    let mut tried = 0;
    for (aim, markers) in AIMS {
        for climb in climbs(aim) {
            for (method, target) in [
                ("GET", format!("/api/v2/client/point-offers/{climb}")),
                (
                    "GET",
                    format!("/api/v2/client/point-orders/{climb}?x=..\\..\\{climb}"),
                ),
                (
                    "POST",
                    format!("/api/v2/client/point-orders/{climb}/pay/card"),
                ),
                (
                    "POST",
                    format!("/api/v2/client/point-orders/{climb}/pay/session"),
                ),
            ] {
                tried += 1;
                let (status, body) = raw(&order.base, method, &target).await;
                let what = format!("{method} {target}: {status} {body}");
                for marker in markers {
                    assert!(
                        !body.to_lowercase().contains(&marker.to_lowercase()),
                        "reached {aim}: {what}"
                    );
                }
                // What came back is the point service's answer for the relayed route the
                // target matched: envelope B, and exactly what the point service answers to
                // the same target sent to it directly.
                let parsed: Value = serde_json::from_str(&body)
                    .unwrap_or_else(|_| panic!("not envelope B: {what}"));
                assert_eq!(parsed["success"], false, "{what}");
                assert!((400..500).contains(&status), "{what}");
                let direct = raw(&points.base, method, &target).await;
                assert_eq!(
                    (status, body.as_str()),
                    (direct.0, direct.1.as_str()),
                    "{what}"
                );
                if target.starts_with("/api/v2/client/point-offers/") {
                    assert_eq!(
                        parsed["error"]["message"],
                        "point offer id must be a 24-character hex ObjectId",
                        "the offer route took the whole climb as its id: {what}"
                    );
                }
            }
        }
    }
    assert_eq!(tried, AIMS.len() * 8 * 4);
}
