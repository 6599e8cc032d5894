//! The adapter between refusals and actix: a [`Refused`] answers in its envelope. The only
//! place where a refusal meets the web framework.

use actix_web::http::StatusCode;

use crate::exposure::Origin;
use crate::{Envelope, ErrorA, ErrorB, ErrorC, OperatorError, Refused};

impl Refused {
    /// The answer, in the refusal's envelope; envelope A's `stack` (outside production)
    /// names `origin`, where the refusal was made.
    pub fn error(&self, origin: &Origin) -> actix_web::Error {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::BAD_REQUEST);
        let message = self.message.clone();
        match self.envelope {
            Envelope::A => ErrorA::made_at(origin, status, message).into(),
            Envelope::B => ErrorB::new(status, self.code, message).into(),
            Envelope::C => ErrorC::new(status, message).into(),
            Envelope::Operator => OperatorError::new(status, message).into(),
        }
    }

    /// The answer of a refusal made where this is called.
    #[track_caller]
    pub fn response(&self) -> actix_web::HttpResponse {
        self.error(&Origin::here()).error_response()
    }
}
