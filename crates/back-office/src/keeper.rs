//! A keeper's side of the route table: what the point service and the order service serve
//! under [`crate::INTERNAL_PREFIX`] for each [`Route`] the table gives them, and the checks
//! every one of those routes makes before its handler runs.
//!
//! A keeper registers each of its routes with [`Keeping::serve`] (path, method and document
//! from the table) and the [`Door`] it checks callers with; a handler then names what it needs as an
//! extractor: [`Caller`] for a read, [`Acting`] for a route that names its operator. The
//! checks and their order (the caller's credential, the request it was made for, then the
//! operator it vouches for against the route's rule) are written here once, for both keepers.

use std::collections::BTreeMap;
use std::future::{Ready, ready};

use actix_web::HttpMessage;
use actix_web::body::MessageBody;
use actix_web::dev::Payload;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::{FromRequest, Handler, HttpRequest, Responder, web};
use envelope::Refuses;
use envelope::exposure::Origin;
use service_identity::{Admitted, InternalRoute, Request, Verifier};
use utoipa::IntoResponses;
use utoipa::openapi::path::Operation;
use utoipa::openapi::security::SecurityRequirement;
use utoipa::openapi::{RefOr, Response};

use crate::access::{self, ActingOperator, BackOfficeRefusal, ChangeRefusal};
use crate::routes::Route;

/// What a keeper checks a back-office caller with; each keeper registers it as app data.
#[derive(Clone)]
pub struct Door {
    identity: Verifier,
    route: InternalRoute,
}

impl Door {
    /// The keeper's verifier, and its back office as `service_identity` lists it (whose
    /// callers it admits).
    pub fn new(identity: Verifier, route: InternalRoute) -> Self {
        Self { identity, route }
    }
}

/// A back-office call whose caller passed the [`Door`].
#[derive(Debug)]
pub struct Caller;

/// A back-office call whose caller passed the [`Door`], made for an operator whose role the
/// route's rule admits.
#[derive(Debug)]
pub struct Acting(pub ActingOperator);

impl FromRequest for Caller {
    type Error = actix_web::Error;
    type Future = Ready<Result<Self, Self::Error>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(let_in(req).map(|_| Caller))
    }
}

impl FromRequest for Acting {
    type Error = actix_web::Error;
    type Future = Ready<Result<Self, Self::Error>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(let_in(req).and_then(|admitted| {
            let route = served_route(req)?;
            access::acting_operator(&admitted, route)
                .map(Acting)
                .map_err(|refusal| refused(refusal.into()))
        }))
    }
}

/// The call the [`door`] admitted.
fn let_in(req: &HttpRequest) -> Result<Admitted, actix_web::Error> {
    req.extensions()
        .get::<Admitted>()
        .cloned()
        .ok_or_else(|| unserved("a keeper route was served without its door"))
}

/// Every keeper route's first step, before any extractor: the credential must be the
/// operator service's (its route list) and made for this very request, its body included
/// (read here, then handed on unchanged). The admitted call is left in the request's
/// extensions for [`Caller`] and [`Acting`].
async fn door(
    mut req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let keeper = req
        .app_data::<web::Data<Door>>()
        .cloned()
        .ok_or_else(|| unserved("a keeper serves back-office routes without its Door"))?;
    let admitted = keeper
        .identity
        .admit(req.headers(), keeper.route)
        .map_err(|refusal| refused(BackOfficeRefusal::from(refusal).into()))?;
    let body = req.extract::<web::Bytes>().await?;
    let target = req.uri().path_and_query().map_or("", |pq| pq.as_str());
    let received = Request::received(req.method().as_str(), target, &body);
    let admitted = admitted
        .made_for(&received)
        .map_err(|refusal| refused(BackOfficeRefusal::from(refusal).into()))?;
    req.set_payload(Payload::from(body));
    req.extensions_mut().insert(admitted);
    next.call(req).await
}

/// The table's route the request was matched to.
fn served_route(req: &HttpRequest) -> Result<Route, actix_web::Error> {
    let pattern = req.match_pattern().unwrap_or_default();
    Route::kept_at(req.method().as_str(), &pattern)
        .ok_or_else(|| unserved(&format!("{pattern}: not a keeper path of the route table")))
}

#[track_caller]
fn refused(refused: envelope::Refused) -> actix_web::Error {
    refused.error(&Origin::here())
}

/// A programming error of ours, logged with why, answered as the 500 it is.
fn unserved(why: &str) -> actix_web::Error {
    tracing::error!(error.message = why, "back-office route not served");
    envelope::Envelope::Operator.error(
        actix_web::http::StatusCode::INTERNAL_SERVER_ERROR,
        envelope::INTERNAL_MESSAGE,
    )
}

/// How a keeper serves the routes the table gives it: under its `scope` (a prefix of
/// [`crate::INTERNAL_PREFIX`]), answering `answers` besides the route's own (its database's
/// 500 and 503).
pub struct Keeping {
    scope: &'static str,
    answers: BTreeMap<String, RefOr<Response>>,
}

impl Keeping {
    /// # Panics
    /// When `scope` is not a prefix of [`crate::INTERNAL_PREFIX`]: a programming error that
    /// every test of the keeper meets first.
    pub fn new(scope: &'static str, answers: BTreeMap<String, RefOr<Response>>) -> Self {
        assert!(
            crate::INTERNAL_PREFIX.starts_with(scope),
            "{scope}: not a prefix of {}",
            crate::INTERNAL_PREFIX
        );
        Self { scope, answers }
    }

    /// `route` as the keeper serves it, answered by `handler`. Its document is the route's
    /// contract at the keeper's path, with the headers the keeper reads, the door's and the
    /// operator's refusals, and the keeper's own answers.
    pub fn serve<F, Args>(&self, route: Route, handler: F) -> server::Route
    where
        F: Handler<Args> + Send + Sync,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static,
    {
        let contract = route.contract();
        let under = &crate::INTERNAL_PREFIX[self.scope.len()..];
        let path = format!("{under}{}", route.rule().keeper_path);
        server::Route::new(
            contract.method.clone(),
            path,
            operation(route, self.answers.clone()),
            move || {
                web::route()
                    .to(handler.clone())
                    .wrap(actix_web::middleware::from_fn(door))
            },
        )
        .with_schemas(contract.schemas.iter().cloned())
    }
}

/// The contract's operation as a keeper answers it.
fn operation(route: Route, answers: BTreeMap<String, RefOr<Response>>) -> Operation {
    let contract = route.contract();
    let rule = route.rule();
    let mut operation = contract.operation.clone();
    if let Some(id) = &operation.operation_id {
        operation.operation_id = Some(format!("backOffice{}{}", id[..1].to_uppercase(), &id[1..]));
    }
    operation.tags = Some(vec!["back-office".to_owned()]);
    operation.security = Some(vec![SecurityRequirement::new(
        server::token_schemes::SERVICE_CREDENTIAL.name(),
        Vec::<String>::new(),
    )]);
    let mut refusals = if rule.names_operator {
        Refuses::<(BackOfficeRefusal, ChangeRefusal)>::responses()
    } else {
        BackOfficeRefusal::responses()
    };
    envelope::openapi::merge_answers(&mut refusals, answers);
    envelope::openapi::merge_answers(
        &mut refusals,
        std::mem::take(&mut operation.responses.responses),
    );
    operation.responses.responses = refusals;
    operation
}
