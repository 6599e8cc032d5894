//! What a function's `#[utoipa::path]` attribute says of its one operation: the method, the
//! path, the operation (named after the function) and the schemas it names. The route list
//! ([`crate::routes`]) and the two route tables (the relayed routes', the back office's) read
//! their operations so.

use utoipa::openapi::path::{HttpMethod, Operation, PathItem};
use utoipa::openapi::schema::Schema;
use utoipa::openapi::{OpenApi, RefOr};

/// What the `#[utoipa::path]` attribute of a function says: [`Described::of`] the one-path
/// document `#[derive(OpenApi)]` makes of it.
#[macro_export]
macro_rules! described {
    ($($function:ident)::+) => {{
        #[derive(utoipa::OpenApi)]
        #[openapi(paths($($function)::+))]
        struct Document;
        $crate::routes::Described::of(<Document as utoipa::OpenApi>::openapi())
    }};
}

/// One operation as a function's `#[utoipa::path]` attribute describes it (use
/// [`crate::described!`]).
pub struct Described {
    pub method: HttpMethod,
    /// As the attribute writes it (relative to where the route is served).
    pub path: String,
    /// Its id is the function's name in lower camel case (`list_offers`: `listOffers`), the
    /// name a generated client gives the call: an operation is named once, as its function.
    pub operation: Operation,
    /// The schemas the operation names (and those they name), for a document's components.
    pub schemas: Vec<(String, RefOr<Schema>)>,
}

impl Described {
    /// # Panics
    /// When the document does not hold exactly one operation: a programming error that
    /// every test of the service meets first.
    pub fn of(document: OpenApi) -> Self {
        let mut operations = document.paths.paths.into_iter().flat_map(|(path, item)| {
            operations(item)
                .into_iter()
                .map(move |(method, operation)| (path.clone(), method, operation))
        });
        let (Some((path, method, mut operation)), None) = (operations.next(), operations.next())
        else {
            panic!("a #[utoipa::path] function describes one method on one path");
        };
        operation.operation_id = operation.operation_id.as_deref().map(lower_camel_case);
        let schemas: Vec<(String, RefOr<Schema>)> = document
            .components
            .map(|components| components.schemas.into_iter().collect())
            .unwrap_or_default();
        describe_by_body(&mut operation, &schemas);
        Self {
            method,
            path,
            operation,
            schemas,
        }
    }

    /// The method as HTTP writes it (`GET`).
    pub fn method_name(&self) -> &'static str {
        method_word(&self.method)
    }
}

/// A method as HTTP writes it (`GET`).
pub fn method_word(method: &HttpMethod) -> &'static str {
    match method {
        HttpMethod::Get => "GET",
        HttpMethod::Put => "PUT",
        HttpMethod::Post => "POST",
        HttpMethod::Delete => "DELETE",
        HttpMethod::Options => "OPTIONS",
        HttpMethod::Head => "HEAD",
        HttpMethod::Patch => "PATCH",
        HttpMethod::Trace => "TRACE",
    }
}

/// Whether a request of `method` carries a body the route reads (POST, PUT, PATCH): where a
/// body's 413 is documented.
pub fn takes_body(method: &HttpMethod) -> bool {
    matches!(
        method,
        HttpMethod::Post | HttpMethod::Put | HttpMethod::Patch
    )
}

/// An answer the attribute leaves undescribed is described by its body's type (its doc
/// comment): what a record is, said once where the record is.
///
/// # Panics
/// When neither says anything: every test of the service meets it first.
fn describe_by_body(operation: &mut Operation, schemas: &[(String, RefOr<Schema>)]) {
    let id = operation.operation_id.clone().unwrap_or_default();
    for (status, answer) in &mut operation.responses.responses {
        let RefOr::T(answer) = answer else { continue };
        if !answer.description.is_empty() {
            continue;
        }
        let body = answer.content.values().find_map(|content| match content {
            RefOr::T(content) => match &content.schema {
                Some(RefOr::Ref(body)) => body.ref_location.rsplit('/').next(),
                _ => None,
            },
            RefOr::Ref(_) => None,
        });
        let described = schemas
            .iter()
            .find(|(name, _)| Some(name.as_str()) == body)
            .and_then(|(_, schema)| match schema {
                RefOr::T(Schema::Object(object)) => object.description.clone(),
                RefOr::T(Schema::AllOf(all)) => all.description.clone(),
                RefOr::T(Schema::OneOf(one)) => one.description.clone(),
                _ => None,
            });
        answer.description = described.unwrap_or_else(|| {
            panic!("{id}, answer {status}: describe it, or give its body type a doc comment")
        });
    }
}

/// `list_offers` as an operation id: `listOffers`.
fn lower_camel_case(name: &str) -> String {
    let mut words = name.split('_');
    let mut id = words.next().unwrap_or_default().to_owned();
    for word in words {
        let mut letters = word.chars();
        if let Some(first) = letters.next() {
            id.extend(first.to_uppercase());
            id.push_str(letters.as_str());
        }
    }
    id
}

fn operations(item: PathItem) -> Vec<(HttpMethod, Operation)> {
    [
        (HttpMethod::Get, item.get),
        (HttpMethod::Put, item.put),
        (HttpMethod::Post, item.post),
        (HttpMethod::Delete, item.delete),
        (HttpMethod::Options, item.options),
        (HttpMethod::Head, item.head),
        (HttpMethod::Patch, item.patch),
        (HttpMethod::Trace, item.trace),
    ]
    .into_iter()
    .filter_map(|(method, operation)| Some((method, operation?)))
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A thing, as it was made.
    #[derive(utoipa::ToSchema)]
    #[allow(dead_code)]
    struct Thing {
        id: i64,
    }

    /// The unit routes' function, for what `described!` reads of it.
    #[utoipa::path(post, path = "/things/{id}", responses((status = 201, description = "made"),
        (status = 200, body = Thing)))]
    #[allow(dead_code)]
    fn make_the_thing() {}

    #[test]
    fn an_operation_is_named_after_its_function_in_lower_camel_case() {
        let described = crate::described!(make_the_thing);
        assert_eq!(described.method_name(), "POST");
        assert_eq!(described.path, "/things/{id}");
        assert_eq!(
            described.operation.operation_id.as_deref(),
            Some("makeTheThing")
        );
        let answers = &described.operation.responses.responses;
        let described_as = |status: &str| match &answers[status] {
            RefOr::T(answer) => answer.description.clone(),
            RefOr::Ref(_) => String::new(),
        };
        assert_eq!(described_as("201"), "made");
        assert_eq!(described_as("200"), "A thing, as it was made.");
        assert_eq!(lower_camel_case("get"), "get");
        assert_eq!(lower_camel_case("get_3ds_page"), "get3dsPage");
    }
}
