//! Whether an answer may show internals: raw error text and envelope A's `stack`.
//!
//! The choice belongs to the app (from `APP_ENV`), not to the process, so that a test can run
//! a production app and a development app side by side. [`middleware`] sets it for the
//! request's task; the error types read it with [`internals_shown`] while the answer is built,
//! which actix does inside the handler's future, extractor errors included. An error records
//! where it was made ([`Origin`]) when it is made, for `stack`.

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;

mod origin;

pub use origin::Origin;

tokio::task_local! {
    static SHOW_INTERNALS: bool;
}

/// True when the current request's app runs outside production. Outside a request (or in a
/// layer the middleware does not wrap) the answer is the safe one: false.
pub fn internals_shown() -> bool {
    SHOW_INTERNALS.try_with(|shown| *shown).unwrap_or(false)
}

/// Runs `f` as if inside a request of an app that does or does not show internals.
pub async fn scope<F: std::future::Future>(show: bool, f: F) -> F::Output {
    SHOW_INTERNALS.scope(show, f).await
}

/// The answer of a middleware built with `actix_web::middleware::from_fn`.
pub(crate) type Answer<B> = std::pin::Pin<
    Box<dyn std::future::Future<Output = Result<ServiceResponse<B>, actix_web::Error>>>,
>;

/// The middleware: `App::new().wrap(from_fn(exposure::middleware(show)))`.
pub fn middleware<B: MessageBody + 'static>(
    show: bool,
) -> impl Fn(ServiceRequest, Next<B>) -> Answer<B> + Clone {
    move |req, next| Box::pin(SHOW_INTERNALS.scope(show, next.call(req)))
}
