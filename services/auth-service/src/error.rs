//! The service's errors: each [`Fault`] is one status and one message of envelope A; an
//! [`AuthError`] is a fault and the line that made it. The refusals themselves are types
//! declared next to the rules that decide them (`envelope::refusals!`), made into a
//! [`Refused`] here.

use std::collections::BTreeMap;
use std::marker::PhantomData;

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use envelope::exposure::Origin;
use envelope::{ErrorA, Refused, RetryAfter};
use utoipa::IntoResponses;
use utoipa::openapi::{RefOr, Response};

use crate::caller::AccessRefusal;

/// A 500 as the document describes it ([`ErrorA::internal`]).
pub fn internal_500() -> String {
    format!(
        "raw error text and stack outside production; `{}` in production",
        envelope::INTERNAL_MESSAGE
    )
}

/// A 401 of a route that takes a token, as the document describes it (`crate::caller`).
pub fn token_401() -> String {
    format!(
        "`{}`: no token, a token of the wrong kind, or an inactive client",
        AccessRefusal::Unauthorized
    )
}

/// The 502 of reset-otp as the document describes it ([`Fault::SmsFailed`]).
pub fn sms_502() -> String {
    format!(
        "`{}`: the SMS gateway failed; nothing was kept",
        Fault::SmsFailed
    )
}

envelope::answer_set! {
    /// What a route that reads the database answers besides its own answers: 500, and 503
    /// when the database is busy ([`Fault::Busy`]).
    pub DatabaseAnswers, envelope::Envelope::A, {
        "500" => internal_500(),
        "503" => db::BUSY_ANSWER,
    }
}

envelope::answer_set! {
    /// What a route that takes a token answers besides its own answers: the token (401) and
    /// the database (500, and 503 when busy).
    pub TokenAnswers, envelope::Envelope::A, {
        "401" => token_401(),
        "500" => internal_500(),
        "503" => db::BUSY_ANSWER,
    }
}

envelope::answer_set! {
    /// What a route that sends an SMS answers when the gateway fails ([`Fault::SmsFailed`]).
    pub SmsAnswers, envelope::Envelope::A, {
        "502" => sms_502(),
    }
}

/// The answers of refusals `R` (a type of `envelope::refusals!`, or `envelope::Refuses<(..)>`)
/// with the `Retry-After` header documented on a 429: every limit of this service sets it
/// ([`Fault::Limited`]).
pub type Refusals<R> = envelope::openapi::Limited<R>;

/// [`Refusals`] of a route that reads a query string: its 400 also names what the shared
/// query reader answers, before the handler runs, to a query it cannot read (a key sent
/// twice; `envelope::error_handlers::query_config`).
pub struct QueryRefusals<R>(PhantomData<R>);

/// The query reader's answer as a document shows it: its text depends on the query.
const UNREADABLE_QUERY: &str = "`Invalid query: …` when a key is sent twice";

impl<R: IntoResponses> IntoResponses for QueryRefusals<R> {
    fn responses() -> BTreeMap<String, RefOr<Response>> {
        let mut answers = Refusals::<R>::responses();
        match answers.get_mut("400") {
            Some(RefOr::T(bad)) => {
                bad.description = format!("{}; {UNREADABLE_QUERY}", bad.description);
            }
            _ => {
                let schema = envelope::openapi::schema_name(envelope::Envelope::A);
                let answer = envelope::openapi::answer(UNREADABLE_QUERY, schema);
                answers.insert("400".to_owned(), RefOr::T(answer));
            }
        }
        answers
    }
}

/// A failure of the service: what went wrong, and where it was made (envelope A's `stack`
/// outside production). Made by `?` or `.into()` on a refusal, a [`Fault`] or a database
/// failure, which record their own line, or by [`AuthError::limited`].
#[derive(Debug, thiserror::Error)]
#[error("{fault}")]
pub struct AuthError {
    fault: Fault,
    origin: Origin,
}

/// What went wrong: a refusal, or one status and one message.
#[derive(Debug, thiserror::Error)]
pub enum Fault {
    /// A request the rules refuse; the refusal gives the status and the message.
    #[error("{}", .0.message)]
    Refused(Refused),
    /// A limit's refusal (429), with when it would let the request through.
    #[error("{}", .0.message)]
    Limited(Refused, RetryAfter),
    /// The SMS gateway refused or could not be reached; nothing was kept.
    #[error("The code could not be sent, try again later")]
    SmsFailed,
    /// Pool exhausted, lock timeout or deadlock: try again.
    #[error("{}", db::BUSY_MESSAGE)]
    Busy(String),
    #[error("{0}")]
    Internal(String),
}

impl AuthError {
    /// A limit's refusal with its wait ([`Fault::Limited`]), made where this is called.
    #[track_caller]
    pub fn limited(refusal: impl Into<Refused>, wait: RetryAfter) -> Self {
        Fault::Limited(refusal.into(), wait).into()
    }
}

db::from_failure!(Fault);

/// `From` for each `$from`, with the [`Fault`] that `$fault` makes of it, recording the line
/// of the `?` (or `.into()`) that converts. The failures and the refusals differ only in how
/// their fault is made, so one macro serves both.
macro_rules! made_where_converted {
    ($fault:path => $($from:ty),+) => {$(
        impl From<$from> for AuthError {
            #[track_caller]
            fn from(from: $from) -> Self {
                Self {
                    fault: $fault(from),
                    origin: Origin::here(),
                }
            }
        }
    )+};
}

// Everything a [`Fault`] is made from.
made_where_converted!(Fault::from => Fault, db::Failure, db::DieselError, db::PoolError);

// Each refusal type of the service, through the [`Refused`] it makes.
made_where_converted!(
    Fault::refused =>
    Refused,
    AccessRefusal,
    crate::phone::PhoneRefusal,
    crate::profile::ClientRefusal,
    crate::profile_update::BodyRefusal,
    crate::profile_update::ProfileRefusal,
    crate::profile_update::SettingRefusal,
    crate::otp::ResetRefusal,
    crate::otp::VerifyRefusal,
    crate::address_book::FieldRefusal,
    crate::address_book::BookRefusal,
    crate::address_book::AddressRefusal,
    crate::tokens::ExchangeRefusal,
    crate::caller::InternalRefusal
);

impl Fault {
    /// A refusal's fault, made of anything that makes a [`Refused`].
    fn refused(refusal: impl Into<Refused>) -> Self {
        Self::Refused(refusal.into())
    }

    fn status(&self) -> StatusCode {
        match self {
            Self::Refused(refused) | Self::Limited(refused, _) => {
                StatusCode::from_u16(refused.status).unwrap_or(StatusCode::BAD_REQUEST)
            }
            Self::SmsFailed => StatusCode::BAD_GATEWAY,
            Self::Busy(_) => StatusCode::SERVICE_UNAVAILABLE,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl ResponseError for AuthError {
    fn status_code(&self) -> StatusCode {
        self.fault.status()
    }

    fn error_response(&self) -> HttpResponse {
        let origin = &self.origin;
        match &self.fault {
            Fault::Refused(refused) => refused.error(origin).error_response(),
            Fault::Limited(refused, wait) => {
                let mut response = refused.error(origin).error_response();
                wait.set_on(&mut response);
                response
            }
            Fault::Internal(raw) => ErrorA::internal_made_at(origin, raw).error_response(),
            Fault::Busy(raw) => {
                tracing::warn!(error.message = %raw, "database busy");
                ErrorA::made_at(origin, self.fault.status(), self.fault.to_string())
                    .error_response()
            }
            fault @ Fault::SmsFailed => {
                ErrorA::made_at(origin, fault.status(), fault.to_string()).error_response()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::otp::OtpLimit;
    use crate::phone::PhoneRefusal;
    use envelope::Refuses;

    fn described(answers: &BTreeMap<String, RefOr<Response>>, status: &str) -> Response {
        match &answers[status] {
            RefOr::T(answer) => answer.clone(),
            RefOr::Ref(_) => panic!("{status} is a reference"),
        }
    }

    #[test]
    fn a_query_route_names_the_query_readers_400_and_a_limits_wait() {
        let answers = QueryRefusals::<Refuses<(PhoneRefusal, OtpLimit)>>::responses();
        assert_eq!(
            described(&answers, "400").description,
            format!("`{}`; {UNREADABLE_QUERY}", PhoneRefusal::Missing)
        );
        let limited = described(&answers, "429");
        assert_eq!(
            limited.description,
            format!("`{}`", OtpLimit::TooManyAttempts)
        );
        assert!(limited.headers.contains_key("Retry-After"));
    }

    #[test]
    fn a_route_without_refusals_of_its_own_still_names_the_query_readers_400() {
        let answers = QueryRefusals::<OtpLimit>::responses();
        assert_eq!(described(&answers, "400").description, UNREADABLE_QUERY);
    }
}
