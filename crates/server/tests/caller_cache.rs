//! The caller lookup's short cache, against a real HTTP server playing the auth service:
//! a successful lookup is kept for the TTL and no longer, a refusal is never kept, and
//! concurrent first requests with one token share one lookup.
//!
//! The cache (moka) runs on the real clock, which a test cannot set: the TTL test asserts
//! only what the clock it measured proves (an answer read within the TTL of its lookup, a
//! read after the TTL has passed), so a slow machine cannot make it fail.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on purpose

mod fake_auth;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use server::caller::{CallerError, CallerLookup};

/// The fake auth service (`fake_auth::counting`), counting into `lookups`.
fn fake_auth(lookups: Arc<AtomicUsize>) -> String {
    fake_auth::counting(lookups, Duration::from_millis(50))
}

fn lookup(base: String, ttl: Duration) -> CallerLookup {
    let http =
        telemetry::client::http_client(Duration::from_secs(5), telemetry::client::DEFAULT_IDLE)
            .unwrap();
    CallerLookup::new(Some(base), http).with_cache(ttl)
}

#[tokio::test]
async fn a_successful_lookup_is_kept_for_the_ttl_and_no_longer() {
    const TTL: Duration = Duration::from_secs(2);
    let lookups = Arc::new(AtomicUsize::new(0));
    let count = || lookups.load(Ordering::SeqCst);
    let callers = lookup(fake_auth(lookups.clone()), TTL);

    // Read twice more within the TTL of its lookup: one lookup. The entry is stored after
    // `started`, so a round shorter than the TTL is within it; a longer one (a loaded
    // machine) proves nothing and is run again with another token.
    let mut id = 100;
    let stored_by = loop {
        id += 1;
        let token = format!("Bearer token-{id}");
        let before = count();
        let started = Instant::now();
        assert_eq!(callers.caller(Some(&token)).await, Ok(id));
        let stored_by = Instant::now();
        for _ in 0..2 {
            assert_eq!(callers.caller(Some(&token)).await, Ok(id));
        }
        if started.elapsed() < TTL {
            assert_eq!(count() - before, 1, "one lookup within the TTL");
            break stored_by;
        }
        assert!(id < 150, "no round of three reads within {TTL:?}");
    };
    let token = format!("Bearer token-{id}");

    let before = count();
    assert_eq!(callers.caller(Some("Bearer token-8")).await, Ok(8));
    assert_eq!(count() - before, 1, "another token is its own entry");

    // The TTL has passed since the entry was stored: asked again.
    tokio::time::sleep_until((stored_by + TTL + Duration::from_millis(1)).into()).await;
    let before = count();
    assert_eq!(callers.caller(Some(&token)).await, Ok(id));
    assert_eq!(count() - before, 1, "asked again after the TTL");
}

#[tokio::test]
async fn a_refusal_is_never_kept() {
    let lookups = Arc::new(AtomicUsize::new(0));
    let callers = lookup(fake_auth(lookups.clone()), Duration::from_secs(30));
    for _ in 0..3 {
        assert_eq!(
            callers.caller(Some("Bearer forged")).await,
            Err(CallerError::InvalidToken)
        );
    }
    assert_eq!(lookups.load(Ordering::SeqCst), 3);
    // No header is refused before any lookup, cache or not.
    assert_eq!(callers.caller(None).await, Err(CallerError::MissingHeader));
    assert_eq!(lookups.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn concurrent_first_requests_with_one_token_share_one_lookup() {
    let lookups = Arc::new(AtomicUsize::new(0));
    let callers = lookup(fake_auth(lookups.clone()), Duration::from_secs(30));
    let answers =
        futures_util::future::join_all((0..20).map(|_| callers.caller(Some("Bearer token-9"))))
            .await;
    assert!(answers.iter().all(|a| *a == Ok(9)), "{answers:?}");
    assert_eq!(lookups.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn without_a_ttl_every_request_is_looked_up() {
    let lookups = Arc::new(AtomicUsize::new(0));
    let callers = lookup(fake_auth(lookups.clone()), Duration::ZERO);
    for _ in 0..3 {
        assert_eq!(callers.caller(Some("Bearer token-7")).await, Ok(7));
    }
    assert_eq!(lookups.load(Ordering::SeqCst), 3);
}
