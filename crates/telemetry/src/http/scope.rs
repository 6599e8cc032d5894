//! The scope a request's log fields are entered in, while its handler and its body run.

use std::rc::Rc;

use tracing::Span;

use crate::request_fields::{self, RequestFields};

/// Where a request's log fields live while it is served: its span, or (JSON logs, no
/// exporter) beside it ([`crate::request_fields`]).
#[derive(Clone)]
pub(super) enum Scope {
    Span(Span),
    Fields(Rc<RequestFields>),
}

/// What [`Scope::enter`] returns: while it lives, lines logged on this thread list the
/// request's fields; dropping it leaves the scope.
pub(super) struct Entered<'a> {
    _span: Option<tracing::span::Entered<'a>>,
    _fields: Option<request_fields::Entered>,
}

impl Scope {
    pub(super) fn enter(&self) -> Entered<'_> {
        match self {
            Scope::Span(span) => Entered {
                _span: Some(span.enter()),
                _fields: None,
            },
            Scope::Fields(fields) => Entered {
                _span: None,
                _fields: Some(request_fields::enter(fields)),
            },
        }
    }
}
