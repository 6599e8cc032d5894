//! The 3-D Secure page `GET /3ds/{id}` and its buttons `POST /3ds/{id}/approve` and
//! `POST /3ds/{id}/decline`: HTML for the person paying.

use actix_web::{HttpResponse, HttpResponseBuilder, web};
use serde_json::Value;

use crate::gateway::{Gateway, Pressed};
use crate::pages;
use crate::payments::Status;

fn html(mut response: HttpResponseBuilder, body: String) -> HttpResponse {
    response.content_type("text/html; charset=utf-8").body(body)
}

/// The page the client opens (`redirect_url`): the payment and its Approve and Decline
/// buttons while it is pending.
#[utoipa::path(
    get,
    path = "/{id}",
    operation_id = "show_3ds_page",
    tag = "3-D Secure",
    params(("id" = String, Path, description = "a payment's or session's id")),
    responses(
        (status = 200, content_type = "text/html", body = String, description = "the page"),
        (status = 404, content_type = "text/html", body = String, description = "no such payment"),
    )
)]
pub async fn challenge(gateway: web::Data<Gateway>, id: web::Path<String>) -> HttpResponse {
    match gateway.payment(&id) {
        Some(payment) => html(HttpResponse::Ok(), pages::challenge(&payment)),
        None => html(HttpResponse::NotFound(), pages::not_found()),
    }
}

/// Approve: the payment is captured now, then its `payment_captured` webhook is sent and the
/// page shows what the point service said. Pressed again on a captured payment whose webhook
/// was not taken, it sends the webhook again.
#[utoipa::path(
    post,
    path = "/{id}/approve",
    operation_id = "approve_3ds",
    tag = "3-D Secure",
    params(("id" = String, Path, description = "a payment's or session's id")),
    responses(
        (status = 200, content_type = "text/html", body = String, description = "captured, and the point service took the webhook (or the card's webhook is never sent)"),
        (status = 404, content_type = "text/html", body = String, description = "no such payment"),
        (status = 409, content_type = "text/html", body = String, description = "already declined, or captured with its webhook taken"),
        (status = 502, content_type = "text/html", body = String, description = "captured, but the point service refused the webhook or could not be reached"),
    )
)]
pub async fn approve(gateway: web::Data<Gateway>, id: web::Path<String>) -> HttpResponse {
    pressed(gateway.press(&id, Status::Captured).await)
}

/// Decline: the payment is declined now, then its `payment_declined` webhook is sent. Pressed
/// again on a declined payment whose webhook was not taken, it sends the webhook again.
#[utoipa::path(
    post,
    path = "/{id}/decline",
    operation_id = "decline_3ds",
    tag = "3-D Secure",
    params(("id" = String, Path, description = "a payment's or session's id")),
    responses(
        (status = 200, content_type = "text/html", body = String, description = "declined, and the point service took the webhook"),
        (status = 404, content_type = "text/html", body = String, description = "no such payment"),
        (status = 409, content_type = "text/html", body = String, description = "already captured, or declined with its webhook taken"),
        (status = 502, content_type = "text/html", body = String, description = "declined, but the point service refused the webhook or could not be reached"),
    )
)]
pub async fn decline(gateway: web::Data<Gateway>, id: web::Path<String>) -> HttpResponse {
    pressed(gateway.press(&id, Status::Declined).await)
}

fn pressed(outcome: Pressed) -> HttpResponse {
    let (payment, delivery) = match outcome {
        Pressed::Unknown => return html(HttpResponse::NotFound(), pages::not_found()),
        Pressed::AlreadySettled(payment) => {
            return html(HttpResponse::Conflict(), pages::challenge(&payment));
        }
        Pressed::Settled(payment, delivery) => (payment, delivery),
    };
    let done = match payment.status {
        Status::Declined => "payment declined",
        _ => "payment approved",
    };
    match delivery {
        None => html(
            HttpResponse::Ok(),
            pages::outcome(
                &payment,
                &format!("{done}; no webhook is sent for this card (a lost webhook)."),
            ),
        ),
        Some(Ok(delivered)) if delivered.taken() => html(
            HttpResponse::Ok(),
            pages::outcome(
                &payment,
                &format!("{done}; the point service took the event."),
            ),
        ),
        Some(Ok(delivered)) => {
            // The point service's answer is JSON we do not show raw; its status says enough.
            let answer: Value = serde_json::from_str(&delivered.body).unwrap_or(Value::Null);
            tracing::warn!(payment.id = %payment.id, webhook.status = delivered.status, answer = %answer, "the point service refused the webhook");
            html(
                HttpResponse::BadGateway(),
                pages::outcome(
                    &payment,
                    &format!(
                        "{done}, but the point service answered {}; press again to send the webhook again.",
                        delivered.status
                    ),
                ),
            )
        }
        Some(Err(e)) => {
            tracing::error!(payment.id = %payment.id, error.message = %e, "webhook not delivered");
            html(
                HttpResponse::BadGateway(),
                pages::outcome(
                    &payment,
                    &format!(
                        "{done}, but the point service could not be reached; press again to send the webhook again."
                    ),
                ),
            )
        }
    }
}
