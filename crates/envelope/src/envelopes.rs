//! The error bodies. Each type knows its status and body and nothing of the service
//! that raised it; services map their own error enums onto them. How they answer over HTTP
//! (actix's `ResponseError`, the log line) is the adapter's business (`crate::respond`).

use std::fmt;

use actix_web::http::StatusCode;
use serde::Serialize;
use utoipa::ToSchema;

use crate::details::Details;
use crate::exposure::{Origin, internals_shown};

/// The message every envelope shows for an unexpected failure in production.
pub const INTERNAL_MESSAGE: &str = "Internal server error";

/// Which of the bodies a scope answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Envelope {
    A,
    B,
    C,
    Operator,
    /// The operator API's body with a machine-readable `code` beside its three keys: the
    /// back office's own refusals (400, 404, 409), so that a panel matches a code, not
    /// English text. The operator API's 401, 403 and 5xx keep the three keys.
    BackOffice,
}

/// `Display` (`<status> <message>`) for an envelope with `status` and `message` fields.
macro_rules! displays_status_and_message {
    ($envelope:ty) => {
        impl fmt::Display for $envelope {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{} {}", self.status.as_u16(), self.message)
            }
        }
    };
}

/// What the adapter (`crate::respond`) needs of an envelope to answer with it.
pub(crate) trait Answer: fmt::Debug + fmt::Display {
    fn status(&self) -> StatusCode;
    fn message(&self) -> &str;
    /// The raw text of an unexpected failure: logged, shown only where the body shows it.
    fn raw(&self) -> Option<&str>;
    /// What goes out as the JSON body.
    fn body(&self) -> impl Serialize + '_;
}

/// [`Answer`] for an envelope with `status`, `message` and `raw` fields, whose body is
/// `$body` made from `$this` (the envelope itself where its type is its body).
macro_rules! answers_with {
    ($envelope:ty, |$this:ident| $body:expr) => {
        impl Answer for $envelope {
            fn status(&self) -> StatusCode {
                self.status
            }
            fn message(&self) -> &str {
                &self.message
            }
            fn raw(&self) -> Option<&str> {
                self.raw.as_deref()
            }
            fn body(&self) -> impl Serialize + '_ {
                let $this = self;
                $body
            }
        }
    };
}

/// The schema of an envelope that answers through a body type of its own is that body's.
macro_rules! schema_is_body {
    ($envelope:ty, $body:ident) => {
        impl utoipa::PartialSchema for $envelope {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                <$body<'static> as utoipa::PartialSchema>::schema()
            }
        }

        impl ToSchema for $envelope {
            fn name() -> std::borrow::Cow<'static, str> {
                <$body<'static> as ToSchema>::name()
            }

            fn schemas(
                schemas: &mut Vec<(
                    String,
                    utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>,
                )>,
            ) {
                <$body<'static> as ToSchema>::schemas(schemas);
            }
        }
    };
}

/// The message of a 500 in the envelopes that show it (A and C): the raw error text outside
/// production, [`INTERNAL_MESSAGE`] in it.
fn shown_internal(raw: &str) -> String {
    if internals_shown() {
        raw.to_owned()
    } else {
        INTERNAL_MESSAGE.to_owned()
    }
}

/// Envelope A: `{status, message, stack?}`. Outside production the body also carries
/// `stack`: where the error was made ([`Origin::stack`]).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ErrorA {
    #[serde(serialize_with = "as_u16")]
    #[schema(value_type = u16)]
    status: StatusCode,
    message: String,
    /// The server's stack trace text; outside production only.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    stack: Option<String>,
    #[serde(skip)]
    raw: Option<String>,
}

impl ErrorA {
    /// An error made where this is called.
    #[track_caller]
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self::made_at(&Origin::here(), status, message)
    }

    /// An error made at `origin`: a service's error that recorded where it was made, and
    /// becomes this body only when it answers.
    pub fn made_at(origin: &Origin, status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
            stack: internals_shown().then(|| origin.stack()),
            raw: None,
        }
    }

    /// 500: the raw error text outside production, [`INTERNAL_MESSAGE`] in it. Made where
    /// this is called.
    #[track_caller]
    pub fn internal(error: impl fmt::Display) -> Self {
        Self::internal_made_at(&Origin::here(), error)
    }

    /// [`ErrorA::internal`] of an error made at `origin`.
    pub fn internal_made_at(origin: &Origin, error: impl fmt::Display) -> Self {
        let raw = error.to_string();
        let message = shown_internal(&raw);
        Self {
            raw: Some(raw),
            ..Self::made_at(origin, StatusCode::INTERNAL_SERVER_ERROR, message)
        }
    }

    pub fn message(&self) -> &str {
        &self.message
    }
}

displays_status_and_message!(ErrorA);
answers_with!(ErrorA, |this| this);

/// Envelope B: `{success: false, error: {code, message, details?}}`.
#[derive(Debug, Clone)]
pub struct ErrorB {
    status: StatusCode,
    code: String,
    message: String,
    details: Option<Details>,
    raw: Option<String>,
}

/// Envelope B: `{success: false, error: {code, message, details?}}` (what `ErrorB` answers).
#[derive(Serialize, ToSchema)]
#[schema(as = ErrorB)]
struct BodyB<'a> {
    /// Always false.
    success: bool,
    error: InnerB<'a>,
}

#[derive(Serialize, ToSchema)]
#[schema(as = ErrorBInner)]
struct InnerB<'a> {
    code: &'a str,
    message: &'a str,
    /// Only for a body that failed validation.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    details: Option<&'a Details>,
}

schema_is_body!(ErrorB, BodyB);

impl ErrorB {
    pub fn new(status: StatusCode, code: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            status,
            code: code.into(),
            message: message.into(),
            details: None,
            raw: None,
        }
    }

    pub fn with_details(mut self, details: Details) -> Self {
        self.details = Some(details);
        self
    }

    /// 500 `INTERNAL_ERROR` [`INTERNAL_MESSAGE`]; the raw text goes to the log only.
    pub fn internal(error: impl fmt::Display) -> Self {
        Self {
            raw: Some(error.to_string()),
            ..Self::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "INTERNAL_ERROR",
                INTERNAL_MESSAGE,
            )
        }
    }

    /// The code a status gets when nothing more specific is known (unknown route, bad JSON).
    pub fn code_for(status: StatusCode) -> &'static str {
        crate::refusal::code_for(status.as_u16())
    }

    pub fn code(&self) -> &str {
        &self.code
    }

    pub fn message(&self) -> &str {
        &self.message
    }
}

answers_with!(ErrorB, |this| BodyB {
    success: false,
    error: InnerB {
        code: &this.code,
        message: &this.message,
        details: this.details.as_ref(),
    },
});

impl fmt::Display for ErrorB {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} {}", self.status.as_u16(), self.code, self.message)
    }
}

/// Envelope C: `{message, statusCode}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ErrorC {
    message: String,
    #[serde(rename = "statusCode", serialize_with = "as_u16")]
    #[schema(value_type = u16)]
    status: StatusCode,
    #[serde(skip)]
    raw: Option<String>,
}

impl ErrorC {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            status,
            raw: None,
        }
    }

    /// 500: the raw error text outside production, [`INTERNAL_MESSAGE`] in it.
    pub fn internal(error: impl fmt::Display) -> Self {
        let raw = error.to_string();
        Self {
            message: shown_internal(&raw),
            status: StatusCode::INTERNAL_SERVER_ERROR,
            raw: Some(raw),
        }
    }

    pub fn message(&self) -> &str {
        &self.message
    }
}

displays_status_and_message!(ErrorC);
answers_with!(ErrorC, |this| this);

mod operator;
pub use operator::{BackOfficeError, OperatorError};

fn as_u16<S: serde::Serializer>(status: &StatusCode, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_u16(status.as_u16())
}
