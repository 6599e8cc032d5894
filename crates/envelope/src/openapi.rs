//! The error bodies in the services' documents (their schemas are the real types':
//! [`crate::ErrorA`], [`crate::ErrorB`], [`crate::ErrorC`], [`crate::OperatorError`],
//! [`crate::BackOfficeError`]), the
//! answer sets built on them and the door's answers on every route.

use std::collections::BTreeMap;

use utoipa::ToSchema;
use utoipa::openapi::{Content, OpenApi, Ref, RefOr, Response};

use crate::{Envelope, body_limits, depth};

/// The name under which `envelope`'s schema is in a document's components.
pub fn schema_name(envelope: Envelope) -> &'static str {
    match envelope {
        Envelope::A => "ErrorA",
        Envelope::B => "ErrorB",
        Envelope::C => "ErrorC",
        Envelope::Operator => "OperatorError",
        Envelope::BackOffice => "BackOfficeError",
    }
}

/// `envelope`'s body and the schemas it names, as a document's components hold them.
pub fn schemas(envelope: Envelope) -> Vec<(String, RefOr<utoipa::openapi::schema::Schema>)> {
    fn of<T: ToSchema>() -> Vec<(String, RefOr<utoipa::openapi::schema::Schema>)> {
        let mut list = vec![(T::name().into_owned(), T::schema())];
        T::schemas(&mut list);
        list
    }
    match envelope {
        Envelope::A => of::<crate::ErrorA>(),
        Envelope::B => of::<crate::ErrorB>(),
        Envelope::C => of::<crate::ErrorC>(),
        Envelope::Operator => of::<crate::OperatorError>(),
        Envelope::BackOffice => of::<crate::BackOfficeError>(),
    }
}

/// Puts `envelope`'s body (and the schemas it names) in the document's components, where
/// the answers of every answer set and of the door refer to it.
pub fn add_schema(openapi: &mut OpenApi, envelope: Envelope) {
    let components = openapi.components.get_or_insert_with(Default::default);
    for (name, schema) in schemas(envelope) {
        components.schemas.entry(name).or_insert(schema);
    }
}

/// The description of the 400 the door gives on every route.
pub fn door_400_description() -> String {
    format!(
        "`{}` (a NUL in the path, the query or the body) or `{}`: refused on every route \
         before any handler runs; a compressed body (`Content-Encoding: gzip` or `deflate`) is \
         checked once decoded, and one that does not decode is `Invalid body: it is not valid \
         gzip data`",
        body_limits::NUL_MESSAGE,
        depth::MESSAGE
    )
}

/// One answer in `schema`.
pub fn answer(description: &str, schema: &str) -> Response {
    Response::builder()
        .description(description)
        .content(
            "application/json",
            Content::new(Some(Ref::from_schema_name(schema))),
        )
        .build()
}

/// The answers of an answer set (see [`crate::answer_set!`]), each a status, a
/// description and `envelope`'s body.
pub fn answers(envelope: Envelope, list: &[(&str, &str)]) -> BTreeMap<String, RefOr<Response>> {
    let schema = schema_name(envelope);
    list.iter()
        .map(|(status, description)| ((*status).to_owned(), RefOr::T(answer(description, schema))))
        .collect()
}

/// The answers of refusals (see [`crate::refusals!`]): one per status, whose description
/// lists each message that status can carry, as the document shows a template
/// (`` `guest <id> is not on the list` `` for `"guest {id} is not on the list"`); in the
/// back office's envelope, each after its code (`` `GUEST_UNKNOWN`: `guest <id> is not on
/// the list` ``).
pub fn refusal_answers(
    envelope: Envelope,
    list: &[crate::refusal::Answer],
) -> BTreeMap<String, RefOr<Response>> {
    let mut by_status: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (status, code, template) in list {
        let template = crate::refusal::shown_template(template);
        let shown = match envelope {
            Envelope::BackOffice => format!("`{code}`: `{template}`"),
            _ => format!("`{template}`"),
        };
        let messages = by_status.entry(status.to_string()).or_default();
        if !messages.contains(&shown) {
            messages.push(shown);
        }
    }
    let schema = schema_name(envelope);
    by_status
        .into_iter()
        .map(|(status, messages)| (status, RefOr::T(answer(&messages.join("; "), schema))))
        .collect()
}

/// Documents the `Retry-After` header (whole seconds, at least 1: [`crate::RetryAfter`]) on
/// `answer`, a 429 of a limit that a wait lifts; `extra` adds what the route's limits say of it.
pub fn add_retry_after(answer: &mut Response, extra: &str) {
    use utoipa::openapi::header::HeaderBuilder;
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    let header = HeaderBuilder::new()
        .schema(Some(
            ObjectBuilder::new()
                .schema_type(Type::Integer)
                .minimum(Some(1)),
        ))
        .description(Some(format!(
            "Whole seconds until the limit that refused the request would let it through (at \
             least 1){extra}"
        )))
        .build();
    answer
        .headers
        .insert("Retry-After".to_owned(), RefOr::T(header));
}

/// The answers of `R` (refusals, or `crate::Refuses<(..)>`) with `Retry-After` documented on
/// their 429: for a route whose limits all say when to come back.
pub struct Limited<R>(std::marker::PhantomData<R>);

impl<R: utoipa::IntoResponses> utoipa::IntoResponses for Limited<R> {
    fn responses() -> BTreeMap<String, RefOr<Response>> {
        let mut answers = R::responses();
        if let Some(RefOr::T(limited)) = answers.get_mut("429") {
            add_retry_after(limited, "");
        }
        answers
    }
}

/// Declares an answer set: a type whose `utoipa::IntoResponses` gives the answers that one
/// cause (a token check, the database, the door) adds to every route it guards. A route
/// names it first in its `responses(...)`, before its own answers, which win where they
/// name the same status:
///
/// ```ignore
/// envelope::answer_set! {
///     /// The caller's token, resolved through the auth service.
///     pub CallerAnswers, Envelope::B, {
///         "401" => CALLER_401,
///         "503" => envelope::BUSY_MESSAGE,
///     }
/// }
/// #[utoipa::path(get, path = "/points", responses(CallerAnswers, (status = 200, body = Balance)))]
/// ```
///
/// A description is any `&str` or `String` expression.
#[macro_export]
macro_rules! answer_set {
    ($(#[$meta:meta])* $vis:vis $name:ident, $envelope:expr, { $($status:literal => $description:expr),+ $(,)? }) => {
        $crate::responses_type! {
            $(#[$meta])*
            $vis $name => $crate::openapi::answers($envelope, &[$(($status, &*$description)),+])
        }
    };
}

/// Declares a unit type whose `utoipa::IntoResponses` gives `$answers`, an expression of the
/// answers' map: what [`answer_set!`] declares, and the payment sandbox its refusal lists.
#[macro_export]
macro_rules! responses_type {
    ($(#[$meta:meta])* $vis:vis $name:ident => $answers:expr) => {
        $(#[$meta])*
        $vis struct $name;

        impl utoipa::IntoResponses for $name {
            fn responses() -> std::collections::BTreeMap<
                String,
                utoipa::openapi::RefOr<utoipa::openapi::Response>,
            > {
                $answers
            }
        }
    };
}

/// Documents, on every operation of `openapi`, the answers that the app's door
/// ([`body_limits::middleware`], on every app) gives on every route before any handler runs, in the
/// app's envelope: 400 for a NUL or a body nested too deep (or a compressed body that does
/// not decode), 408 for a body that stops arriving, 413 for a body over 64 KiB, 415 for a
/// `Content-Encoding` other than gzip and deflate. Only statuses an operation does not document yet
/// are added: where it has its own 400 in the same envelope, its description names its own
/// messages; in another envelope (the back office's, in an app that answers the operator
/// API's), the answer is either body, and its description adds the door's. Found by `make
/// fuzz-api` (schemathesis sends NULs to every route).
pub fn add_door_answers(openapi: &mut OpenApi, envelope: Envelope) {
    add_schema(openapi, envelope);
    let schema = schema_name(envelope);
    let answers = [
        ("400", door_400_description()),
        (
            "408",
            format!(
                "`{}`: a request body that did not arrive whole within the read deadline \
                 (HTTP_BODY_TIMEOUT_MS); the connection is closed",
                body_limits::BODY_TIMEOUT_MESSAGE
            ),
        ),
        (
            "413",
            "`Payload Too Large`: a request body over 64 KiB, compressed or once decoded \
             (decoding stops there), refused before any handler runs"
                .to_owned(),
        ),
        (
            "415",
            "`Unsupported Media Type: Content-Encoding ... is not supported (gzip or deflate)`: \
             a body in another coding, refused before any handler runs"
                .to_owned(),
        ),
    ];
    for item in openapi.paths.paths.values_mut() {
        let operations = [
            &mut item.get,
            &mut item.put,
            &mut item.post,
            &mut item.delete,
            &mut item.options,
            &mut item.head,
            &mut item.patch,
            &mut item.trace,
        ];
        for operation in operations.into_iter().flatten() {
            for (status, description) in &answers {
                match operation.responses.responses.get_mut(*status) {
                    None => {
                        let door = RefOr::T(answer(description, schema));
                        operation
                            .responses
                            .responses
                            .insert((*status).to_owned(), door);
                    }
                    Some(RefOr::T(own)) => or_the_doors(own, description, schema),
                    Some(RefOr::Ref(_)) => {}
                }
            }
        }
    }
}

/// `own`, a route's answer of a status the door gives too: where its body is another
/// envelope's, either body, and the door's messages added to its own.
fn or_the_doors(own: &mut Response, door_description: &str, door_schema: &str) {
    if body_of(own).is_some_and(|body| body != Ref::from_schema_name(door_schema)) {
        let door = answer(
            &format!(
                "before any check of the route, in the `{door_schema}` body: {door_description}"
            ),
            door_schema,
        );
        both(own, door);
    }
}

/// `more` into `answers`: a status only one of them lists is kept as it is; where both list
/// one, its description says both, and where their bodies differ (the back office's refusal
/// and the operator API's), it is either body (`oneOf`).
pub fn merge_answers(
    answers: &mut BTreeMap<String, RefOr<Response>>,
    more: BTreeMap<String, RefOr<Response>>,
) {
    for (status, answer) in more {
        match (answers.get_mut(&status), answer) {
            (Some(RefOr::T(own)), RefOr::T(other)) => both(own, other),
            (_, answer) => {
                answers.insert(status, answer);
            }
        }
    }
}

/// The body an answer refers to, when it is one schema of the components.
fn body_of(answer: &Response) -> Option<Ref> {
    match answer.content.get("application/json") {
        Some(RefOr::T(content)) => match &content.schema {
            Some(RefOr::Ref(body)) => Some(body.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// `own` and `other`, two answers of one status, as one: both descriptions, either body.
fn both(own: &mut Response, other: Response) {
    use utoipa::openapi::schema::{OneOfBuilder, Schema};
    own.description = format!("{}; {}", own.description, other.description);
    if let (Some(mine), Some(theirs)) = (body_of(own), body_of(&other))
        && mine != theirs
        && let Some(RefOr::T(content)) = own.content.get_mut("application/json")
    {
        let either = OneOfBuilder::new().item(mine).item(theirs).build();
        content.schema = Some(RefOr::T(Schema::OneOf(either)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_door_answers_are_added_where_missing_and_kept_where_documented() {
        use utoipa::openapi::path::{HttpMethod, Operation, Paths};
        let own_400 = answer("`code is required`", "ErrorC");
        let mut openapi = OpenApi::new(utoipa::openapi::Info::new("t", "1"), Paths::new());
        let mut with_400 = Operation::new();
        with_400
            .responses
            .responses
            .insert("400".into(), RefOr::T(own_400));
        openapi
            .paths
            .add_path_operation("/a", vec![HttpMethod::Post], with_400);
        openapi
            .paths
            .add_path_operation("/b", vec![HttpMethod::Get], Operation::new());
        add_door_answers(&mut openapi, Envelope::C);
        let doc = serde_json::to_value(&openapi).unwrap();
        assert_eq!(
            doc["paths"]["/a"]["post"]["responses"]["400"]["description"],
            "`code is required`"
        );
        for (path, method) in [("/a", "post"), ("/b", "get")] {
            let answers = &doc["paths"][path][method]["responses"];
            for status in ["408", "413"] {
                assert_eq!(
                    answers[status]["content"]["application/json"]["schema"]["$ref"],
                    "#/components/schemas/ErrorC"
                );
            }
        }
        let door = &doc["paths"]["/b"]["get"]["responses"]["400"];
        assert!(
            door["description"]
                .as_str()
                .unwrap()
                .contains(body_limits::NUL_MESSAGE)
        );
        assert_eq!(
            door["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/ErrorC"
        );
    }

    #[test]
    fn a_route_answering_in_another_envelope_documents_either_body() {
        use utoipa::openapi::path::{HttpMethod, Operation, Paths};
        let mut openapi = OpenApi::new(utoipa::openapi::Info::new("t", "1"), Paths::new());
        let mut own = Operation::new();
        let refusal = answer(
            "`NOT_AN_OBJECT`: `the body must be a JSON object`",
            "BackOfficeError",
        );
        own.responses
            .responses
            .insert("400".into(), RefOr::T(refusal));
        openapi
            .paths
            .add_path_operation("/a", vec![HttpMethod::Post], own);
        add_door_answers(&mut openapi, Envelope::Operator);
        let doc = serde_json::to_value(&openapi).unwrap();
        let answer = &doc["paths"]["/a"]["post"]["responses"]["400"];
        assert_eq!(
            answer["content"]["application/json"]["schema"]["oneOf"],
            serde_json::json!([
                {"$ref": "#/components/schemas/BackOfficeError"},
                {"$ref": "#/components/schemas/OperatorError"}
            ])
        );
        let description = answer["description"].as_str().unwrap();
        assert!(description.starts_with("`NOT_AN_OBJECT`"), "{description}");
        assert!(
            description.contains(body_limits::NUL_MESSAGE),
            "{description}"
        );
    }
}
