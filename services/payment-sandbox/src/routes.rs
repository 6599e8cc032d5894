//! The payment service API the point service calls, and the 3-D Secure page's routes.

use actix_web::{HttpResponse, web};
use serde_json::{Value, json};

use crate::pages;
use crate::payments::{
    Charge, Decision, Kind, Payment, PaymentRequest, SessionRequest, Status, Store, invalid_charge,
};
use crate::webhook::Webhook;

pub struct Sandbox {
    pub store: Store,
    pub webhook: Webhook,
    pub auto_capture: bool,
    pub public_url: String,
}

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/healthz", web::get().to(alive))
        .route("/readyz", web::get().to(alive))
        .route("/metrics", web::get().to(metrics))
        .route("/v1/payments", web::post().to(create_payment))
        .route("/v1/payments/{id}", web::get().to(show))
        .route("/v1/payment-sessions", web::post().to(create_session))
        .route("/v1/payment-sessions/{id}", web::get().to(show))
        .route("/3ds/{id}", web::get().to(challenge))
        .route("/3ds/{id}/approve", web::post().to(approve))
        .route("/3ds/{id}/decline", web::post().to(decline));
}

/// The sandbox depends on nothing, so alive is ready.
async fn alive() -> HttpResponse {
    HttpResponse::Ok().json(json!({"status": "ok"}))
}

async fn metrics() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4")
        .body(telemetry::metrics::render())
}

fn invalid(message: impl Into<String>) -> HttpResponse {
    HttpResponse::UnprocessableEntity()
        .json(json!({"error": {"code": "invalid_request", "message": message.into()}}))
}

/// The request in `body` when it reads as `T` and the charge in it (`charge`) is valid;
/// else why, for the 422.
fn charge_request<T: serde::de::DeserializeOwned>(
    body: &[u8],
    charge: fn(&T) -> &Charge,
) -> Result<T, String> {
    let request: T = serde_json::from_slice(body).map_err(|e| e.to_string())?;
    match invalid_charge(charge(&request)) {
        Some(message) => Err(message.to_owned()),
        None => Ok(request),
    }
}

async fn create_payment(sandbox: web::Data<Sandbox>, body: web::Bytes) -> HttpResponse {
    let request = match charge_request(&body, |r: &PaymentRequest| &r.charge) {
        Ok(request) => request,
        Err(message) => return invalid(message),
    };
    if request.source.kind != "card" || request.source.card_id.is_empty() {
        return invalid("source must be {\"type\": \"card\", \"card_id\": …, \"cvv\": …}");
    }
    if !(3..=4).contains(&request.source.cvv.len()) {
        return invalid("cvv must be 3 or 4 digits");
    }
    let decision = Decision::for_card(&request.source.card_id);
    tracing::info!(payment.reference = %request.charge.reference, decision = ?decision, "payment requested");
    match decision {
        Decision::Fail4xx => {
            return HttpResponse::PaymentRequired().json(json!({
                "error": {"code": "card_declined", "message": "The issuer declined the card"}
            }));
        }
        Decision::Fail5xx => {
            return HttpResponse::InternalServerError().json(json!({
                "error": {"code": "gateway_error", "message": "The card gateway failed"}
            }));
        }
        Decision::Decline | Decision::ThreeDSecure => {}
    }
    let payment = Payment::new(Kind::Payment, request.charge);
    sandbox.store.insert(payment.clone());
    if decision == Decision::Decline {
        settle_in_background(&sandbox, payment.clone(), Status::Declined);
        return HttpResponse::Ok()
            .json(json!({"id": payment.id, "status": "declined", "redirect_url": null}));
    }
    let redirect_url = format!("{}/3ds/{}", sandbox.public_url, payment.id);
    if sandbox.auto_capture {
        settle_in_background(&sandbox, payment.clone(), Status::Captured);
    }
    HttpResponse::Ok()
        .json(json!({"id": payment.id, "status": "pending", "redirect_url": redirect_url}))
}

async fn create_session(sandbox: web::Data<Sandbox>, body: web::Bytes) -> HttpResponse {
    let request = match charge_request(&body, |r: &SessionRequest| &r.charge) {
        Ok(request) => request,
        Err(message) => return invalid(message),
    };
    let payment = Payment::new(Kind::Session, request.charge);
    sandbox.store.insert(payment.clone());
    if sandbox.auto_capture {
        settle_in_background(&sandbox, payment.clone(), Status::Captured);
    }
    HttpResponse::Ok().json(json!({
        "id": payment.id,
        "session_token": format!("tok_{}", uuid::Uuid::new_v4().simple()),
        "status": "pending",
        "remember_me": request.remember_me,
        "redirect_url": format!("{}/3ds/{}", sandbox.public_url, payment.id),
    }))
}

/// Settles the payment and sends its webhook after the answer has gone out, the way a real
/// provider calls back asynchronously.
fn settle_in_background(sandbox: &web::Data<Sandbox>, payment: Payment, outcome: Status) {
    let sandbox = sandbox.clone();
    tokio::spawn(async move {
        if sandbox.webhook.send_with_retries(&payment, outcome).await {
            sandbox.store.settle(&payment.id, outcome);
        }
    });
}

async fn show(sandbox: web::Data<Sandbox>, id: web::Path<String>) -> HttpResponse {
    match sandbox.store.get(&id) {
        Some(payment) => HttpResponse::Ok().json(payment),
        None => HttpResponse::NotFound()
            .json(json!({"error": {"code": "not_found", "message": "no such payment"}})),
    }
}

fn html(mut response: actix_web::HttpResponseBuilder, body: String) -> HttpResponse {
    response.content_type("text/html; charset=utf-8").body(body)
}

async fn challenge(sandbox: web::Data<Sandbox>, id: web::Path<String>) -> HttpResponse {
    match sandbox.store.get(&id) {
        Some(payment) => html(HttpResponse::Ok(), pages::challenge(&payment)),
        None => html(HttpResponse::NotFound(), pages::not_found()),
    }
}

async fn approve(sandbox: web::Data<Sandbox>, id: web::Path<String>) -> HttpResponse {
    decide(sandbox, &id, Status::Captured).await
}

async fn decline(sandbox: web::Data<Sandbox>, id: web::Path<String>) -> HttpResponse {
    decide(sandbox, &id, Status::Declined).await
}

/// A button: sends the webhook now and shows what the point service said. The payment stays
/// pending unless the point service took the event, so the button can be pressed again.
async fn decide(sandbox: web::Data<Sandbox>, id: &str, outcome: Status) -> HttpResponse {
    let Some(payment) = sandbox.store.get(id) else {
        return html(HttpResponse::NotFound(), pages::not_found());
    };
    if payment.status != Status::Pending {
        return html(HttpResponse::Conflict(), pages::challenge(&payment));
    }
    match sandbox.webhook.send(&payment, outcome).await {
        Ok(delivered) if (200..300).contains(&delivered.status) => {
            sandbox.store.settle(id, outcome);
            let done = match outcome {
                Status::Declined => "payment declined",
                _ => "payment approved",
            };
            html(
                HttpResponse::Ok(),
                pages::outcome(
                    &payment,
                    &format!("{done}; the point service took the event."),
                ),
            )
        }
        Ok(delivered) => {
            // The point service's answer is JSON we do not show raw; its status says enough.
            let answer: Value = serde_json::from_str(&delivered.body).unwrap_or(Value::Null);
            tracing::warn!(payment.id = %payment.id, webhook.status = delivered.status, answer = %answer, "the point service refused the webhook");
            html(
                HttpResponse::BadGateway(),
                pages::outcome(
                    &payment,
                    &format!("the point service answered {}.", delivered.status),
                ),
            )
        }
        Err(e) => {
            tracing::error!(payment.id = %payment.id, error.message = %e, "webhook not delivered");
            html(
                HttpResponse::BadGateway(),
                pages::outcome(
                    &payment,
                    "the point service could not be reached; try again.",
                ),
            )
        }
    }
}
