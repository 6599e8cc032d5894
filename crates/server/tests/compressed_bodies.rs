//! A compressed request body (`Content-Encoding: gzip` or `deflate`) meets the same checks
//! as a plain one once decoded (NUL, depth, size): compressing a body never changes its
//! answer, and a small body that inflates past the size limit (a gzip bomb) is a 413.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on purpose

use std::io::Write;
use std::net::TcpListener;

use actix_web::{HttpResponse, web};
use envelope::Envelope;
use flate2::Compression;
use flate2::write::{GzEncoder, ZlibEncoder};
use serde_json::{Value, json};
use server::{AppSettings, HttpLimits};

/// The shared app in envelope A with `/echo` (the raw body) and `/json` (actix's JSON
/// extractor, which would decode a compressed body on its own).
fn spawn() -> String {
    // The pool connects lazily; nothing here reaches the database.
    let pool = db::build_pool(&db::PoolSettings::new(
        "postgres://nobody@127.0.0.1:9/none",
        2,
    ))
    .unwrap();
    let settings = AppSettings {
        service: "test-service",
        envelope: Envelope::A,
        show_internals: false,
        pool,
        openapi: server::ops::openapi().into(),
        http: HttpLimits::default(),
    };
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let server = server::http_server_with(listener, 1, HttpLimits::default(), move || {
        server::app(settings.clone())
            .route(
                "/echo",
                web::post().to(|body: web::Bytes| async move { HttpResponse::Ok().body(body) }),
            )
            .route(
                "/json",
                web::post().to(|body: web::Json<Value>| async move {
                    HttpResponse::Ok().json(body.into_inner())
                }),
            )
    })
    .unwrap();
    tokio::spawn(server);
    base
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = GzEncoder::new(Vec::new(), Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn deflate(data: &[u8]) -> Vec<u8> {
    let mut e = ZlibEncoder::new(Vec::new(), Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

async fn post(base: &str, path: &str, encoding: Option<&str>, body: Vec<u8>) -> (u16, String) {
    let mut request = reqwest::Client::new()
        .post(format!("{base}{path}"))
        .header("Content-Type", "application/json")
        .body(body);
    if let Some(encoding) = encoding {
        request = request.header("Content-Encoding", encoding);
    }
    let answer = request.send().await.unwrap();
    (answer.status().as_u16(), answer.text().await.unwrap())
}

#[tokio::test]
async fn a_compressed_body_gets_the_answer_its_plain_text_gets() {
    let base = spawn();
    let deep = format!("{}1{}", "[".repeat(40), "]".repeat(40));
    let large = json!({"notes": "x".repeat(70 * 1024)}).to_string();
    let bodies: Vec<(&str, Vec<u8>)> = vec![
        ("valid", br#"{"label":"Home","n":[1,2]}"#.to_vec()),
        ("escaped NUL", br#"{"label":"a\u0000b"}"#.to_vec()),
        ("raw NUL", b"{\"label\":\"a\0b\"}".to_vec()),
        ("too deep", deep.into_bytes()),
        ("not JSON", b"{\"label\":".to_vec()),
        ("over the size limit", large.into_bytes()),
    ];
    for path in ["/echo", "/json"] {
        for (what, body) in &bodies {
            let plain = post(&base, path, None, body.clone()).await;
            for (encoding, compressed) in [("gzip", gzip(body)), ("deflate", deflate(body))] {
                let answer = post(&base, path, Some(encoding), compressed).await;
                assert_eq!(answer, plain, "{path} {what} {encoding}");
            }
            assert!(plain.0 < 500, "{path} {what}: {plain:?}");
        }
    }
    // The plain answers, for the record: the checks did run on the decoded bodies.
    assert_eq!(
        post(&base, "/echo", Some("gzip"), gzip(b"{\"a\":1}")).await,
        (200, "{\"a\":1}".into())
    );
    assert_eq!(
        post(&base, "/json", Some("gzip"), gzip(br#"{"a":"\u0000"}"#))
            .await
            .0,
        400
    );
}

#[tokio::test]
async fn a_gzip_bomb_stops_at_the_size_limit() {
    let base = spawn();
    // 50 MB of spaces inside a valid JSON string compress to about 50 KB.
    let mut inflated = b"{\"a\":\"".to_vec();
    inflated.extend(std::iter::repeat_n(b' ', 50 * 1024 * 1024));
    inflated.extend(b"\"}");
    let bomb = gzip(&inflated);
    assert!(
        bomb.len() < envelope::body_limits::JSON_LIMIT_BYTES,
        "{}",
        bomb.len()
    );
    drop(inflated);
    for path in ["/echo", "/json"] {
        let (status, body) = post(&base, path, Some("gzip"), bomb.clone()).await;
        assert_eq!(status, 413, "{path}");
        assert_eq!(
            serde_json::from_str::<Value>(&body).unwrap(),
            json!({"status": 413, "message": "Payload Too Large"})
        );
    }
}

#[tokio::test]
async fn a_body_that_does_not_decode_is_a_400_and_an_unknown_coding_a_415() {
    let base = spawn();
    for path in ["/echo", "/json"] {
        let (status, body) = post(&base, path, Some("gzip"), b"{\"a\":1}".to_vec()).await;
        assert_eq!(
            (status, serde_json::from_str::<Value>(&body).unwrap()),
            (
                400,
                json!({"status": 400, "message": "Invalid body: it is not valid gzip data"})
            ),
            "{path}"
        );
        let mut truncated = gzip(b"{\"a\":\"some text to cut\"}");
        truncated.truncate(truncated.len() - 6);
        assert_eq!(
            post(&base, path, Some("gzip"), truncated).await.0,
            400,
            "{path}"
        );
        let (status, _) = post(&base, path, Some("br"), b"{\"a\":1}".to_vec()).await;
        assert_eq!(status, 415, "{path}");
    }
}
