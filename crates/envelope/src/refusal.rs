//! Refusals: why a route says no, as types in the domain's words. A refusal enum is declared
//! once with [`crate::refusals!`]; each variant gives its status, its envelope-B code, its
//! exact message (a template over the variant's fields) and, through the same declaration,
//! its line in the OpenAPI document of every route that lists the type. Nothing here knows
//! the web framework: a service's error type holds a [`Refused`] and answers it through the
//! adapter (`Refused::error`, in `respond.rs`).

use std::fmt;

use crate::Envelope;

/// A refusal of a route: its status, envelope and the message it answers.
pub trait Refusal: fmt::Display {
    /// The envelope the refusing routes answer in.
    const ENVELOPE: Envelope;

    /// The HTTP status.
    fn status(&self) -> u16;

    /// The code of envelope B and of the back office's envelope (the others carry none).
    fn code(&self) -> &'static str;

    /// Every variant's status, code and message template (`{field}` where a field goes), in
    /// declaration order: what a document says a route refuses.
    fn answers() -> &'static [Answer];

    /// The answer this refusal gives.
    fn refused(&self) -> Refused {
        Refused {
            envelope: Self::ENVELOPE,
            status: self.status(),
            code: self.code(),
            message: self.to_string(),
        }
    }
}

/// A variant's status, code and message template, as [`Refusal::answers`] lists them.
pub type Answer = (u16, &'static str, &'static str);

/// A refusal made into what answers it: the envelope, status, code and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub envelope: Envelope,
    pub status: u16,
    /// The code of envelope B and of the back office's envelope.
    pub code: &'static str,
    pub message: String,
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.status, self.message)
    }
}

impl std::error::Error for Refused {}

/// Envelope B's code for a status when the refusal names none; the same table the shared
/// handlers use (`ErrorB::code_for`).
pub const fn code_for(status: u16) -> &'static str {
    match status {
        400 => "VALIDATION_ERROR",
        401 => "UNAUTHORIZED",
        403 => "FORBIDDEN",
        404 => "NOT_FOUND",
        405 => "METHOD_NOT_ALLOWED",
        408 => "REQUEST_TIMEOUT",
        409 => "CONFLICT",
        413 => "PAYLOAD_TOO_LARGE",
        415 => "UNSUPPORTED_MEDIA_TYPE",
        422 => "UNPROCESSABLE_ENTITY",
        429 => "RATE_LIMITED",
        502 => "BAD_GATEWAY",
        503 => "SERVICE_UNAVAILABLE",
        504 => "GATEWAY_TIMEOUT",
        s if s >= 500 => "INTERNAL_ERROR",
        _ => "BAD_REQUEST",
    }
}

/// A message template as a document shows it: `{id}` becomes `<id>`, as the spec writes it.
pub fn shown_template(template: &str) -> String {
    template.replace('{', "<").replace('}', ">")
}

/// `?` on a refusal of a service's rules: `impl From<R> for $error` through its variant
/// holding a [`Refused`](crate::Refused), for each refusal type `R` listed. One place for the
/// rule every service's error type follows.
///
/// ```
/// envelope::refusals! {
///     pub enum GuestRefusal in B {
///         UnknownGuest(id: i64) => 404, "guest {id} is not on the list";
///     }
/// }
/// enum BookingError {
///     Refused(envelope::Refused),
/// }
/// envelope::refused_from!(BookingError::Refused: GuestRefusal);
///
/// let BookingError::Refused(refused) = GuestRefusal::UnknownGuest(7).into();
/// assert_eq!((refused.status, refused.message.as_str()), (404, "guest 7 is not on the list"));
/// ```
#[macro_export]
macro_rules! refused_from {
    ($error:ident :: $variant:ident : $($refusal:ty),+ $(,)?) => {
        $(impl From<$refusal> for $error {
            fn from(refusal: $refusal) -> Self {
                Self::$variant(refusal.into())
            }
        })+
    };
}

/// Declares a refusal enum: each variant with its status (and envelope-B code when it is not
/// the status's usual one) and its exact message, a `format!` template over the variant's
/// named fields. The type implements [`Refusal`], `Display` (the message), `utoipa`'s
/// `IntoResponses` (list it in a route's `responses(...)`), and `From` into [`Refused`]:
///
/// ```
/// envelope::refusals! {
///     /// Why a table is not booked.
///     pub enum BookingRefusal in B {
///         /// The party books for the same guest twice.
///         SameGuest => 400, "a guest cannot be booked twice";
///         UnknownGuest(id: i64) => 400, "guest {id} is not on the list";
///         Full(seats: u32) => 422 "NO_SEATS", "only {seats} seats are left";
///     }
/// }
/// use envelope::Refusal;
/// assert_eq!(BookingRefusal::UnknownGuest(7).to_string(), "guest 7 is not on the list");
/// assert_eq!(BookingRefusal::Full(2).code(), "NO_SEATS");
/// assert_eq!(BookingRefusal::SameGuest.code(), "VALIDATION_ERROR");
/// ```
///
/// A message another crate owns (one two services send, each in its own envelope) is named
/// in brackets instead of written: `NotFound => 404, [catalog_db::SERVICE_NOT_FOUND];`.
///
/// Several types on one route: `responses(Refuses<(BookingRefusal, TableRefusal)>, ...)`
/// ([`crate::Refuses`]), whose answers of one status are merged rather than replaced.
#[macro_export]
macro_rules! refusals {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident in $envelope:ident {
            $(
                $(#[$vmeta:meta])*
                $variant:ident $( ( $( $field:ident : $ty:ty ),+ ) )?
                    => $status:literal $( $code:literal )?, $message:tt;
            )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq)]
        $vis enum $name {
            $( $(#[$vmeta])* $variant $( ( $( $ty ),+ ) )?, )+
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                match self {
                    $( Self::$variant $( ( $( $field ),+ ) )? =>
                        $crate::refusals!(@write f, $message), )+
                }
            }
        }

        impl $crate::Refusal for $name {
            const ENVELOPE: $crate::Envelope = $crate::Envelope::$envelope;

            #[allow(unused_variables)]
            fn status(&self) -> u16 {
                match self {
                    $( Self::$variant $( ( $( $field ),+ ) )? => $status, )+
                }
            }

            #[allow(unused_variables)]
            fn code(&self) -> &'static str {
                match self {
                    $( Self::$variant $( ( $( $field ),+ ) )? =>
                        $crate::refusals!(@code $status $( $code )?), )+
                }
            }

            fn answers() -> &'static [$crate::refusal::Answer] {
                // A const, not a borrowed temporary: a code may come from a `const fn`.
                const ANSWERS: &[$crate::refusal::Answer] = &[ $( (
                    $status,
                    $crate::refusals!(@code $status $( $code )?),
                    $crate::refusals!(@template $message),
                ) ),+ ];
                ANSWERS
            }
        }

        impl ::std::convert::From<$name> for $crate::Refused {
            fn from(refusal: $name) -> Self {
                $crate::Refusal::refused(&refusal)
            }
        }

        impl $crate::utoipa::IntoResponses for $name {
            fn responses() -> ::std::collections::BTreeMap<
                String,
                $crate::utoipa::openapi::RefOr<$crate::utoipa::openapi::Response>,
            > {
                $crate::openapi::refusal_answers(
                    $crate::Envelope::$envelope,
                    <Self as $crate::Refusal>::answers(),
                )
            }
        }
    };
    (@code $status:literal $code:literal) => { $code };
    (@write $f:ident, $template:literal) => { write!($f, $template) };
    (@write $f:ident, [$message:expr]) => { $f.write_str($message) };
    (@template $template:literal) => { $template };
    (@template [$message:expr]) => { $message };
    (@code $status:literal) => { $crate::refusal::code_for($status) };
}

/// The answers of several refusal types on one route, merged by status (a route's
/// `responses(Refuses<(A, B)>)`; utoipa would let the second type's 400 replace the first's).
pub struct Refuses<T>(std::marker::PhantomData<T>);

macro_rules! refuses_tuple {
    ($($t:ident),+) => {
        impl<$($t: Refusal),+> utoipa::IntoResponses for Refuses<($($t,)+)> {
            fn responses() -> std::collections::BTreeMap<
                String,
                utoipa::openapi::RefOr<utoipa::openapi::Response>,
            > {
                let envelopes = [$($t::ENVELOPE),+];
                assert!(
                    envelopes.iter().all(|e| *e == envelopes[0]),
                    "one route answers in one envelope"
                );
                let answers: Vec<Answer> = [$($t::answers()),+].concat();
                crate::openapi::refusal_answers(envelopes[0], &answers)
            }
        }
    };
}

/// The answers of a refusal type a route gives only some of: those of `R` with the status
/// `A` (or `B`), for a route whose checks cannot reach the others (a withdrawal reads no
/// body, so it never gives a body's 400).
pub struct Only<R, const A: u16, const B: u16 = 0>(std::marker::PhantomData<R>);

impl<R: Refusal, const A: u16, const B: u16> utoipa::IntoResponses for Only<R, A, B> {
    fn responses()
    -> std::collections::BTreeMap<String, utoipa::openapi::RefOr<utoipa::openapi::Response>> {
        let answers: Vec<Answer> = R::answers()
            .iter()
            .copied()
            .filter(|(status, ..)| *status == A || *status == B)
            .collect();
        assert!(
            !answers.is_empty(),
            "Only<_, {A}, {B}>: the type gives neither status"
        );
        crate::openapi::refusal_answers(R::ENVELOPE, &answers)
    }
}

refuses_tuple!(A, B);
refuses_tuple!(A, B, C);
refuses_tuple!(A, B, C, D);

#[cfg(test)]
mod tests {
    use super::*;

    const BAD_OFFER_ID: &str = "point offer id must be a 24-character hex ObjectId";

    crate::refusals! {
        enum OfferRefusal in B {
            UnknownOffer(id: String) => 404, "point offer {id} not found or inactive";
            BadOfferId => 400, [BAD_OFFER_ID];
        }
    }

    crate::refusals! {
        enum OrderRefusal in B {
            SelfPayment => 400, "a point order cannot be paid with points to yourself";
            Poor(client: i64) => 422 "INSUFFICIENT_POINTS", "insufficient points for client {client}";
        }
    }

    /// A route that refuses with both types.
    #[utoipa::path(get, path = "/x", responses(Refuses<(OfferRefusal, OrderRefusal)>))]
    #[allow(dead_code)]
    fn both() {}

    #[derive(utoipa::OpenApi)]
    #[openapi(paths(both))]
    struct Doc;

    #[test]
    fn a_variant_gives_its_status_code_and_message() {
        let refused = Refused::from(OrderRefusal::Poor(7));
        assert_eq!(
            refused,
            Refused {
                envelope: Envelope::B,
                status: 422,
                code: "INSUFFICIENT_POINTS",
                message: "insufficient points for client 7".to_owned(),
            }
        );
        let offer = OfferRefusal::UnknownOffer("abc".to_owned());
        assert_eq!((offer.status(), offer.code()), (404, "NOT_FOUND"));
        assert_eq!(offer.to_string(), "point offer abc not found or inactive");
        assert_eq!(OfferRefusal::BadOfferId.to_string(), BAD_OFFER_ID);
        assert_eq!(OrderRefusal::SelfPayment.code(), "VALIDATION_ERROR");
    }

    #[test]
    fn two_types_on_one_route_merge_their_answers_of_one_status() {
        let doc = serde_json::to_value(<Doc as utoipa::OpenApi>::openapi()).unwrap();
        let answers = &doc["paths"]["/x"]["get"]["responses"];
        assert_eq!(
            answers["400"]["description"],
            "`point offer id must be a 24-character hex ObjectId`; \
             `a point order cannot be paid with points to yourself`"
        );
        assert_eq!(
            answers["404"]["description"],
            "`point offer <id> not found or inactive`"
        );
        assert_eq!(
            answers["422"]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/ErrorB"
        );
    }
}
