//! The answer sets of the relayed routes: what every one of them answers (the caller and the
//! database; the contract adds it to each), and what the two pay routes add.

use std::collections::BTreeMap;

use utoipa::IntoResponses;
use utoipa::openapi::{RefOr, Response};

envelope::answer_set! {
    /// What every relayed route answers besides its own answers: the caller
    /// (`server::caller`, 401; 500 when the lookup is not configured) and the database
    /// (500; 503 when busy).
    pub CallerAnswers, envelope::Envelope::B, {
        "401" => server::caller::unauthorized_answer(),
        "500" => server::caller::internal_answer(),
        "503" => db::BUSY_ANSWER,
    }
}

/// What both pay routes answer besides their own success and refusals and what every relayed
/// route answers ([`CallerAnswers`]): the payment service's own refusal or failure.
pub struct PayAnswers;

impl IntoResponses for PayAnswers {
    fn responses() -> BTreeMap<String, RefOr<Response>> {
        let mut answers = BTreeMap::new();
        let failed = format!(
            "the payment service failed, timed out or could not be reached (`INTERNAL_ERROR`); \
             or {}",
            server::caller::internal_answer()
        );
        answers.extend(envelope::openapi::answers(
            envelope::Envelope::B,
            &[("500", &failed)],
        ));
        answers.insert(
            "4XX".into(),
            RefOr::T(envelope::openapi::answer(
                "the payment service's own 4xx, status and body passed through as they came",
                "PaymentServiceError",
            )),
        );
        answers
    }
}
