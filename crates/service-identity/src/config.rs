//! `SERVICE_IDENTITY_KEY` and `SERVICE_IDENTITY_TRUST` (the format in `keys`).
//!
//! In production both are required where used, and the development issuer's keys are
//! refused. Outside production an unset one is the development issuer's (`make run`, the
//! tests and CI), so a development start needs neither.

use server::{AppEnv, Env};

use crate::credential::{Signer, Verifier};
use crate::keys::{DEV_ONLY, OwnKey, Trust};
use crate::service::Service;

pub const KEY_VARIABLE: &str = "SERVICE_IDENTITY_KEY";
pub const TRUST_VARIABLE: &str = "SERVICE_IDENTITY_TRUST";

/// The signer of a service that calls others (`SERVICE_IDENTITY_KEY`).
pub fn signer(env: &mut Env, app_env: AppEnv, me: Service) -> Signer {
    let production = app_env == AppEnv::Production;
    let key = match env.optional(KEY_VARIABLE).as_deref() {
        None => {
            if production {
                env.required(KEY_VARIABLE);
            }
            OwnKey::dev(me)
        }
        Some(DEV_ONLY) => OwnKey::dev(me),
        Some(_) => env
            .secret_parse(KEY_VARIABLE, OwnKey::parse)
            .unwrap_or_else(|| OwnKey::dev(me)),
    };
    if production
        && key.is_dev()
        && env
            .optional(KEY_VARIABLE)
            .is_some_and(|v| v.starts_with(DEV_ONLY))
    {
        env.error(format!(
            "{KEY_VARIABLE} is the development issuer's ({DEV_ONLY}); production needs a key of \
             its own (service-identity keygen)"
        ));
    }
    Signer::new(me, key)
}

/// The verifier of a service that serves internal routes (`SERVICE_IDENTITY_TRUST`).
pub fn verifier(env: &mut Env, app_env: AppEnv, me: Service) -> Verifier {
    let trust = match env.optional(TRUST_VARIABLE).as_deref() {
        None if app_env == AppEnv::Production => {
            env.required(TRUST_VARIABLE);
            Trust::default()
        }
        None | Some(DEV_ONLY) => Trust::dev(),
        Some(_) => env
            .parse_or(TRUST_VARIABLE, None, |raw| Trust::parse(raw).map(Some))
            .unwrap_or_default(),
    };
    if app_env == AppEnv::Production && trust.has_dev() {
        env.error(format!(
            "{TRUST_VARIABLE} trusts the development issuer ({DEV_ONLY}); production trusts \
             only its callers' own keys"
        ));
    }
    Verifier::new(me, trust)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> Env {
        Env::from_vars(vars.iter().copied())
    }

    #[test]
    fn development_defaults_to_the_development_issuer() {
        let mut e = env(&[]);
        let signer = signer(&mut e, AppEnv::Development, Service::Order);
        let _ = verifier(&mut e, AppEnv::Development, Service::Point);
        assert!(e.finish(()).is_ok());
        assert_eq!(signer.service(), Service::Order);
    }

    #[test]
    fn production_names_what_is_missing_and_refuses_the_development_issuer() {
        let mut e = env(&[]);
        signer(&mut e, AppEnv::Production, Service::Order);
        verifier(&mut e, AppEnv::Production, Service::Point);
        assert_eq!(
            e.finish(()).unwrap_err().0,
            [
                "SERVICE_IDENTITY_KEY is required but not set",
                "SERVICE_IDENTITY_TRUST is required but not set"
            ]
        );
        let mut e = env(&[(KEY_VARIABLE, DEV_ONLY), (TRUST_VARIABLE, DEV_ONLY)]);
        signer(&mut e, AppEnv::Production, Service::Order);
        verifier(&mut e, AppEnv::Production, Service::Point);
        let errors = e.finish(()).unwrap_err().0;
        assert!(
            errors[0].contains("development issuer") && errors[1].contains("development issuer")
        );
    }

    #[test]
    fn production_takes_a_key_and_a_trust_list_of_its_own() {
        let (value, key) = OwnKey::generate("k1").unwrap();
        let order = key.trust_entry(Service::Order);
        let mut e = env(&[(KEY_VARIABLE, &*value), (TRUST_VARIABLE, &*order)]);
        signer(&mut e, AppEnv::Production, Service::Order);
        verifier(&mut e, AppEnv::Production, Service::Point);
        assert!(e.finish(()).is_ok());
        let mut e = env(&[
            (KEY_VARIABLE, "k1:short"),
            (TRUST_VARIABLE, "order-service:k1"),
        ]);
        signer(&mut e, AppEnv::Production, Service::Order);
        verifier(&mut e, AppEnv::Production, Service::Point);
        let errors = e.finish(()).unwrap_err().0;
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(
            !errors[0].contains("short"),
            "a key is never echoed: {errors:?}"
        );
    }
}
