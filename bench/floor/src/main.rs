//! The floor of `make bench`: what actix-web itself costs here. One route, `GET /healthz`,
//! answering the services' own `/healthz` body, built and served the way the services are
//! (same actix-web features, same release profile, one worker per CPU unless
//! `HTTP_WORKERS` says otherwise) with no middleware, logging, tracing or metrics.
//! `BIND_ADDR` (default `127.0.0.1:18099`).

use actix_web::{App, HttpResponse, HttpServer, web};
use serde::Serialize;

#[derive(Serialize)]
struct Health {
    status: &'static str,
}

async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(Health { status: "ok" })
}

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let addr = std::env::var("BIND_ADDR").unwrap_or_else(|_| "127.0.0.1:18099".to_owned());
    let workers = std::env::var("HTTP_WORKERS")
        .ok()
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    HttpServer::new(|| App::new().route("/healthz", web::get().to(healthz)))
        .workers(workers)
        .bind(addr)?
        .run()
        .await
}
