//! The four error envelopes of the spec, as a test expects them (`docs/spec/`,
//! `docs/design.md` "Tokens"):
//!
//! | envelope | body | answered by |
//! |---|---|---|
//! | A | `{status, message, stack?}` | the auth service |
//! | B | `{success: false, error: {code, message}}` | the point routes |
//! | C | `{message, statusCode}` | the order service's own routes |
//! | operator | `{statusCode, message, error}` | the operator service |

use serde_json::{Value, json};

/// Envelope A without its development-only `stack` (compare with [`without_stack`]).
pub fn error_a(status: u16, message: &str) -> Value {
    json!({"status": status, "message": message})
}

/// Envelope B.
pub fn error_b(code: &str, message: &str) -> Value {
    json!({"success": false, "error": {"code": code, "message": message}})
}

/// Envelope C.
pub fn error_c(status: u16, message: &str) -> Value {
    json!({"message": message, "statusCode": status})
}

/// The operator service's envelope; `error` is the status's reason phrase.
pub fn operator_error(status: u16, message: &str, error: &str) -> Value {
    json!({"statusCode": status, "message": message, "error": error})
}

/// The back office's refusal: the operator API's three keys, then `code`.
pub fn back_office_error(status: u16, code: &str, message: &str) -> Value {
    let reason = reqwest::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("Error");
    json!({"statusCode": status, "message": message, "error": reason, "code": code})
}

/// The auth routes' 401 (envelope A, `stack` removed).
pub fn unauthorization() -> Value {
    error_a(401, "Unauthorization")
}

/// The operator routes' 401: a missing, bad or expired operator token.
pub fn operator_401() -> Value {
    operator_error(401, "Unauthorized", "Unauthorized")
}

/// The operator routes' 403: a role the route does not admit.
pub fn operator_403() -> Value {
    operator_error(403, "Forbidden resource", "Forbidden")
}

/// Envelope A carries `stack` outside production; the tests compare the rest.
pub fn without_stack(mut body: Value) -> Value {
    if let Some(object) = body.as_object_mut() {
        object.remove("stack");
    }
    body
}

/// What a refusal answers, as `(status, body)` in its envelope (A without `stack`): for a
/// test that asserts a route refuses for a reason (`assert_eq!(answer(r).await,
/// refused(OrderRefusal::SelfPayment))`). The body's shape is this module's, not the
/// `envelope` crate's; the message is the refusal's, so a test that pins the spec's exact
/// words writes them out instead.
pub fn refused<R: envelope::Refusal>(refusal: R) -> (u16, Value) {
    let status = refusal.status();
    let message = refusal.to_string();
    let body = match R::ENVELOPE {
        envelope::Envelope::A => error_a(status, &message),
        envelope::Envelope::B => error_b(refusal.code(), &message),
        envelope::Envelope::C => error_c(status, &message),
        envelope::Envelope::Operator => {
            let reason = reqwest::StatusCode::from_u16(status)
                .ok()
                .and_then(|s| s.canonical_reason())
                .unwrap_or("Error");
            operator_error(status, &message, reason)
        }
        envelope::Envelope::BackOffice => back_office_error(status, refusal.code(), &message),
    };
    (status, body)
}

#[cfg(test)]
mod tests {
    use super::*;

    envelope::refusals! {
        enum Booking in B {
            Full(seats: u32) => 422 "NO_SEATS", "only {seats} seats are left";
        }
    }

    envelope::refusals! {
        enum Guest in Operator {
            Unknown(id: i64) => 404, "guest {id} is not on the list";
        }
    }

    envelope::refusals! {
        enum Table in A {
            Taken => 409, "the table is taken";
        }
    }

    envelope::refusals! {
        enum Menu in C {
            Closed => 400, "the kitchen is closed";
        }
    }

    #[test]
    fn a_refusal_is_expected_in_its_envelope_with_its_status_code_and_message() {
        assert_eq!(
            refused(Booking::Full(2)),
            (
                422,
                json!({"success": false, "error": {"code": "NO_SEATS", "message": "only 2 seats are left"}})
            )
        );
        assert_eq!(
            refused(Guest::Unknown(7)),
            (
                404,
                json!({"statusCode": 404, "message": "guest 7 is not on the list", "error": "Not Found"})
            )
        );
        assert_eq!(
            refused(Table::Taken),
            (409, json!({"status": 409, "message": "the table is taken"}))
        );
        assert_eq!(
            refused(Menu::Closed),
            (
                400,
                json!({"message": "the kitchen is closed", "statusCode": 400})
            )
        );
    }
}
