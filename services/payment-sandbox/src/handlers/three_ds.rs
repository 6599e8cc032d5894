//! The 3-D Secure page `GET /3ds/{id}` and its buttons `POST /3ds/{id}/approve` and
//! `POST /3ds/{id}/decline`: HTML for the person paying.

use std::collections::BTreeMap;

use actix_web::{HttpResponse, HttpResponseBuilder, web};
use serde_json::Value;
use utoipa::openapi::{Content, RefOr, Response};
use utoipa::{IntoResponses, PartialSchema};

use crate::gateway::{Gateway, Pressed};
use crate::pages;
use crate::payments::Status;

fn html(mut response: HttpResponseBuilder, body: String) -> HttpResponse {
    response.content_type("text/html; charset=utf-8").body(body)
}

/// HTML answers in a document: each status with its description.
fn html_answers(list: &[(&str, &str)]) -> BTreeMap<String, RefOr<Response>> {
    list.iter()
        .map(|(status, description)| {
            let answer = Response::builder()
                .description(*description)
                .content("text/html", Content::new(Some(String::schema())))
                .build();
            ((*status).to_owned(), RefOr::T(answer))
        })
        .collect()
}

/// What the page answers.
pub struct PageAnswers;

impl IntoResponses for PageAnswers {
    fn responses() -> BTreeMap<String, RefOr<Response>> {
        html_answers(&[("200", "the page"), ("404", UNKNOWN_ID)])
    }
}

/// What a button answers.
pub struct PressAnswers;

impl IntoResponses for PressAnswers {
    fn responses() -> BTreeMap<String, RefOr<Response>> {
        html_answers(&[
            (
                "200",
                "settled as pressed, and the point service took the webhook (or the card's \
                 webhook is never sent)",
            ),
            ("404", UNKNOWN_ID),
            (
                "409",
                "already settled the other way, or settled as pressed with its webhook taken",
            ),
            (
                "502",
                "settled as pressed, but the point service refused the webhook or could not be \
                 reached",
            ),
        ])
    }
}

const UNKNOWN_ID: &str = "no payment or session has this id";

/// The page the client opens (`redirect_url`)
///
/// The payment (`{id}`: a payment's or session's id), and its Approve and Decline buttons
/// while it is pending.
#[utoipa::path(get, path = "/{id}", responses(PageAnswers))]
pub async fn show_3ds_page(gateway: web::Data<Gateway>, id: web::Path<String>) -> HttpResponse {
    match gateway.payment(&id) {
        Some(payment) => html(HttpResponse::Ok(), pages::challenge(&payment)),
        None => html(HttpResponse::NotFound(), pages::not_found()),
    }
}

/// Approve: capture the payment
///
/// The payment is captured now, then its `payment_captured` webhook is sent and the page
/// shows what the point service said. Pressed again on a captured payment whose webhook was
/// not taken, it sends the webhook again. 409 when it was declined, or captured with its
/// webhook taken.
#[utoipa::path(post, path = "/{id}/approve", responses(PressAnswers))]
pub async fn approve_3ds(gateway: web::Data<Gateway>, id: web::Path<String>) -> HttpResponse {
    pressed(gateway.press(&id, Status::Captured).await)
}

/// Decline: decline the payment
///
/// The payment is declined now, then its `payment_declined` webhook is sent. Pressed again
/// on a declined payment whose webhook was not taken, it sends the webhook again. 409 when it
/// was captured, or declined with its webhook taken.
#[utoipa::path(post, path = "/{id}/decline", responses(PressAnswers))]
pub async fn decline_3ds(gateway: web::Data<Gateway>, id: web::Path<String>) -> HttpResponse {
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
            tracing::warn!(
                payment.id = %payment.id,
                webhook.status = delivered.status,
                answer = %answer,
                "the point service refused the webhook"
            );
            html(
                HttpResponse::BadGateway(),
                pages::outcome(
                    &payment,
                    &format!(
                        "{done}, but the point service answered {}; press again to send the \
                         webhook again.",
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
                        "{done}, but the point service could not be reached; press again to \
                         send the webhook again."
                    ),
                ),
            )
        }
    }
}
