//! Service credentials as our services make them, from the development issuer's keys
//! (`service_identity::keys::DEV_ONLY`), which every test app trusts.

use std::sync::Arc;

use service_identity::{OwnKey, Service, Signer, Trust, Verifier};

/// The `Authorization` value of a call from `caller` to `callee`.
pub fn authorization(caller: Service, callee: Service) -> String {
    signer(caller).authorization(callee)
}

/// `caller`'s signer.
pub fn signer(caller: Service) -> Arc<Signer> {
    Arc::new(Signer::new(caller, OwnKey::dev(caller)))
}

/// `me`'s verifier, trusting every service's development key (each route's list still
/// decides who is admitted).
pub fn verifier(me: Service) -> Verifier {
    Verifier::new(me, Trust::dev())
}
