//! `service-identity keygen <service> <key id>`: a new key of a service, as its
//! `SERVICE_IDENTITY_KEY` (a secret: the service's own, nobody else's) and as the entry its
//! callees add to their `SERVICE_IDENTITY_TRUST` (public).
//!
//! `service-identity credential <caller> <callee>`: a credential of `caller`'s for a call to
//! `callee` (good for five minutes), signed with `SERVICE_IDENTITY_KEY` from the environment
//! or, unset, the development issuer's key: for a person or a tool (`make fuzz-api`) calling
//! an internal route by hand.
//!
//! `service-identity trust-entry <service> <SERVICE_IDENTITY_KEY value>`: the public entry of
//! that key (`dev-only`: the development issuer's key of `service`), as its callees' trust
//! lists must hold it (read by `scripts/service-identities.py`).
//!
//! `service-identity callers`: each callee and the services that may call it, one line each
//! (`point-service order-service operator-service`), as `scripts/check-deploy.sh` compares
//! them with the Kubernetes render.

use std::process::ExitCode;

use service_identity::{InternalRoute, OwnKey, Service, Signer};

const USAGE: &str = "usage: service-identity keygen <service> <key id> | \
                     service-identity credential <caller> <callee> | \
                     service-identity trust-entry <service> <key> | service-identity callers";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match args.as_slice() {
        ["keygen", service, id] => {
            let Some(service) = Service::from_name(service) else {
                eprintln!("{service}: not one of our services ({USAGE})");
                return ExitCode::from(2);
            };
            match OwnKey::generate(id) {
                Ok((value, key)) => {
                    println!("SERVICE_IDENTITY_KEY={value}");
                    println!("trust entry: {}", key.trust_entry(service));
                    ExitCode::SUCCESS
                }
                Err(why) => {
                    eprintln!("{why}");
                    ExitCode::from(2)
                }
            }
        }
        ["credential", caller, callee] => {
            let (Some(caller), Some(callee)) =
                (Service::from_name(caller), Service::from_name(callee))
            else {
                eprintln!("name two of our services ({USAGE})");
                return ExitCode::from(2);
            };
            let key = match std::env::var(service_identity::config::KEY_VARIABLE) {
                Ok(value) if !value.is_empty() && value != service_identity::keys::DEV_ONLY => {
                    match OwnKey::parse(&value) {
                        Ok(key) => key,
                        Err(why) => {
                            eprintln!("{}: {why}", service_identity::config::KEY_VARIABLE);
                            return ExitCode::from(2);
                        }
                    }
                }
                _ => OwnKey::dev(caller),
            };
            let authorization = Signer::new(caller, key).authorization(callee);
            println!("{}", authorization.trim_start_matches("Bearer "));
            ExitCode::SUCCESS
        }
        ["trust-entry", service, value] => {
            let Some(service) = Service::from_name(service) else {
                eprintln!("{service}: not one of our services ({USAGE})");
                return ExitCode::from(2);
            };
            let key = if *value == service_identity::keys::DEV_ONLY {
                Ok(OwnKey::dev(service))
            } else {
                OwnKey::parse(value)
            };
            match key {
                Ok(key) => {
                    println!("{}", key.trust_entry(service));
                    ExitCode::SUCCESS
                }
                Err(why) => {
                    eprintln!("{why}");
                    ExitCode::from(2)
                }
            }
        }
        ["callers"] => {
            for callee in Service::ALL {
                let callers = InternalRoute::callers_of(callee);
                if !callers.is_empty() {
                    let names: Vec<&str> = callers.iter().map(|s| s.name()).collect();
                    println!("{callee} {}", names.join(" "));
                }
            }
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}
