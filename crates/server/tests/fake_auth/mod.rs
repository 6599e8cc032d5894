//! A real HTTP server playing the auth service's `/api/v1/users`, shared by the caller tests.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use actix_web::{App, HttpRequest, HttpResponse, web};
use serde_json::json;

/// `Bearer token-<id>` is client `<id>`; anything else is refused. Counts every lookup in
/// `lookups` and answers after `delay` (long enough, in the cache tests, for concurrent
/// requests to overlap). Returns its base URL.
pub fn counting(lookups: Arc<AtomicUsize>, delay: Duration) -> String {
    server::spawn_local(move || {
        let lookups = lookups.clone();
        App::new().route(
            "/api/v1/users",
            web::get().to(move |req: HttpRequest| {
                let lookups = lookups.clone();
                async move {
                    lookups.fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(delay).await;
                    let id = server::caller::authorization(&req)
                        .and_then(|v| v.strip_prefix("Bearer token-"))
                        .and_then(|id| id.parse::<i64>().ok());
                    match id {
                        Some(id) => HttpResponse::Ok()
                            .json(json!({"status": 200, "data": {"client_id": id}})),
                        None => HttpResponse::Unauthorized()
                            .json(json!({"status": 401, "message": "Unauthorization"})),
                    }
                }
            }),
        )
    })
    .unwrap()
}
