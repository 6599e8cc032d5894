//! What the sandbox answers instead of a result, each in its one JSON shape
//! `{"error": {"code", "message"}}`: the refusals of the API and the failures a card id
//! plays. No answer is actix's plain text: bad query and path values, unknown paths and
//! wrong methods are answered in the same shape.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::middleware::{ErrorHandlerResponse, ErrorHandlers};
use std::collections::BTreeMap;

use actix_web::{HttpRequest, HttpResponse, ResponseError, web};
use serde::Serialize;
use utoipa::openapi::{Content, Ref, RefOr, Response};

use crate::settlements::Unreadable;

#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    /// A body, query or path the route cannot read (the reason is the message).
    #[error("{0}")]
    InvalidRequest(String),
    #[error("no such payment")]
    UnknownPayment,
    #[error(transparent)]
    Unreadable(#[from] Unreadable),
    /// A `fail4xx` card.
    #[error("The issuer declined the card")]
    CardDeclined,
    /// A `fail5xx` card.
    #[error("The card gateway failed")]
    GatewayFailed,
    /// A `lost` card: the payment was made and captured, and its answer never arrived; or a
    /// late card, answered so once its hold passed (its payment is made later).
    #[error(
        "The answer to this payment was lost on the way back; find the payment by its reference"
    )]
    AnswerLost,
    #[error("Cannot {method} {path}")]
    UnknownPath { method: String, path: String },
    #[error("Method Not Allowed")]
    WrongMethod,
}

impl Refusal {
    /// The `code` of the body.
    pub fn code(&self) -> &'static str {
        match self {
            Self::InvalidRequest(_) => "invalid_request",
            Self::UnknownPayment | Self::UnknownPath { .. } => "not_found",
            Self::Unreadable(Unreadable::Date(_)) => "invalid_date",
            Self::Unreadable(Unreadable::Cursor) => "invalid_cursor",
            Self::CardDeclined => "card_declined",
            Self::GatewayFailed => "gateway_error",
            Self::AnswerLost => "answer_lost",
            Self::WrongMethod => "method_not_allowed",
        }
    }

    pub fn body(&self) -> ErrorBody {
        ErrorBody {
            error: ErrorDetail {
                code: self.code(),
                message: self.to_string(),
            },
        }
    }
}

impl ResponseError for Refusal {
    fn status_code(&self) -> StatusCode {
        match self {
            Self::InvalidRequest(_) | Self::Unreadable(_) => StatusCode::UNPROCESSABLE_ENTITY,
            Self::UnknownPayment | Self::UnknownPath { .. } => StatusCode::NOT_FOUND,
            Self::CardDeclined => StatusCode::PAYMENT_REQUIRED,
            Self::GatewayFailed => StatusCode::INTERNAL_SERVER_ERROR,
            Self::AnswerLost => StatusCode::BAD_GATEWAY,
            Self::WrongMethod => StatusCode::METHOD_NOT_ALLOWED,
        }
    }

    fn error_response(&self) -> HttpResponse {
        HttpResponse::build(self.status_code()).json(self.body())
    }
}

/// The refusals a route lists in its document (see [`crate::refusal_answers!`]): one answer
/// per status in [`ErrorBody`], whose description names each refusal's `code` and message (a
/// variable part as the placeholder the list gives it) and when it is given.
pub fn answers(list: &[(Refusal, &str)]) -> BTreeMap<String, RefOr<Response>> {
    let mut by_status: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (refusal, when) in list {
        by_status
            .entry(refusal.status_code().as_str().to_owned())
            .or_default()
            .push(format!("`{}` `{refusal}`: {when}", refusal.code()));
    }
    by_status
        .into_iter()
        .map(|(status, lines)| {
            let body = Content::new(Some(Ref::from_schema_name("ErrorBody")));
            let answer = Response::builder()
                .description(lines.join("; "))
                .content("application/json", body)
                .build();
            (status, RefOr::T(answer))
        })
        .collect()
}

/// Declares the refusals of a route for its `responses(...)`: a type whose answers are
/// [`answers`] of the listed refusals, each with when it is given.
///
/// ```ignore
/// refusal_answers! {
///     /// What reading a payment back refuses.
///     pub UnknownPayment { Refusal::UnknownPayment => "no payment or session has this id" }
/// }
/// ```
#[macro_export]
macro_rules! refusal_answers {
    ($(#[$meta:meta])* $vis:vis $name:ident { $($refusal:expr => $when:expr),+ $(,)? }) => {
        envelope::responses_type! {
            $(#[$meta])*
            $vis $name => $crate::error::answers(&[$(($refusal, $when)),+])
        }
    };
}

/// Every error answer of the sandbox.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ErrorDetail {
    /// `invalid_request`, `not_found`, `invalid_date`, `invalid_cursor`, `card_declined`,
    /// `gateway_error`, `answer_lost` or `method_not_allowed`.
    #[schema(example = "not_found")]
    pub code: &'static str,
    pub message: String,
}

/// A query the route cannot read (`GET /v1/payments` without `reference`): 422.
pub fn query_config() -> web::QueryConfig {
    web::QueryConfig::default()
        .error_handler(|err, _req| Refusal::InvalidRequest(format!("Invalid query: {err}")).into())
}

pub fn path_config() -> web::PathConfig {
    web::PathConfig::default()
        .error_handler(|err, _req| Refusal::InvalidRequest(format!("Invalid path: {err}")).into())
}

/// The app's default service: a path no route serves.
pub async fn unknown_path(req: HttpRequest) -> HttpResponse {
    Refusal::UnknownPath {
        method: req.method().to_string(),
        path: req.path().to_owned(),
    }
    .error_response()
}

/// A resource's plain-text 405 becomes the JSON shape, keeping its `Allow`.
pub fn wrong_method_to_json<B: actix_web::body::MessageBody + 'static>() -> ErrorHandlers<B> {
    ErrorHandlers::new().handler(StatusCode::METHOD_NOT_ALLOWED, |res| {
        let allow: Option<HeaderValue> = res.headers().get(header::ALLOW).cloned();
        let (req, _) = res.into_parts();
        let mut response = Refusal::WrongMethod.error_response();
        if let Some(allow) = allow {
            response.headers_mut().insert(header::ALLOW, allow);
        }
        Ok(ErrorHandlerResponse::Response(
            actix_web::dev::ServiceResponse::new(req, response).map_into_right_body(),
        ))
    })
}
