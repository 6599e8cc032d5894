//! A service's own signing key and the public keys it trusts, as configuration gives them.
//!
//! - Its own key (`SERVICE_IDENTITY_KEY`): `<key id>:<seed>`, the seed the 32 bytes of an
//!   Ed25519 private key in base64url (RFC 8037's `d`), from `service-identity keygen`.
//! - The keys it trusts (`SERVICE_IDENTITY_TRUST`): `<service>:<key id>:<public key>` entries,
//!   comma-separated, the public key base64url (RFC 8037's `x`). A service may have two at
//!   once: that is how a key rotates (docs/runbook.md, "Rotating a service's key").
//!
//! `dev-only` for either is the development issuer: every service's key derived from its
//! name, which anyone can compute, so a production start refuses it.

use std::collections::{BTreeSet, HashMap};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ed25519_dalek::pkcs8::EncodePrivateKey;
use jsonwebtoken::{DecodingKey, EncodingKey};
use rand::RngCore;
use sha2::{Digest, Sha256};

use crate::service::Service;

/// The value that stands for the development issuer's keys, and the key id they carry.
pub const DEV_ONLY: &str = "dev-only";

/// A service's own key: what it signs its credentials with.
#[derive(Clone)]
pub struct OwnKey {
    /// The key id, which the callee finds the public key by.
    pub id: String,
    encoding: EncodingKey,
    public: [u8; 32],
}

impl std::fmt::Debug for OwnKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "OwnKey({}, <private>)", self.id)
    }
}

impl OwnKey {
    /// `<key id>:<seed>`.
    pub fn parse(value: &str) -> Result<OwnKey, String> {
        let (id, seed) = value
            .split_once(':')
            .ok_or("expected <key id>:<private key> (service-identity keygen)")?;
        let id = key_id(id)?;
        let seed: [u8; 32] = URL_SAFE_NO_PAD
            .decode(seed.trim())
            .ok()
            .and_then(|bytes| bytes.try_into().ok())
            .ok_or("the private key is not 32 bytes of base64url")?;
        OwnKey::from_seed(id, seed)
    }

    /// The development issuer's key of `service`.
    pub fn dev(service: Service) -> OwnKey {
        #[allow(clippy::expect_used)] // A 32-byte seed always makes a key.
        OwnKey::from_seed(DEV_ONLY.to_owned(), dev_seed(service)).expect("a dev key")
    }

    /// A new random key: its configuration value and its public key.
    pub fn generate(id: &str) -> Result<(String, OwnKey), String> {
        let id = key_id(id)?;
        let mut seed = [0u8; 32];
        rand::rng().fill_bytes(&mut seed);
        let value = format!("{id}:{}", URL_SAFE_NO_PAD.encode(seed));
        Ok((value, OwnKey::from_seed(id, seed)?))
    }

    fn from_seed(id: String, seed: [u8; 32]) -> Result<OwnKey, String> {
        let signing = ed25519_dalek::SigningKey::from_bytes(&seed);
        let der = signing
            .to_pkcs8_der()
            .map_err(|e| format!("the private key does not encode: {e}"))?;
        Ok(OwnKey {
            id,
            encoding: EncodingKey::from_ed_der(der.as_bytes()),
            public: signing.verifying_key().to_bytes(),
        })
    }

    pub(crate) fn encoding(&self) -> &EncodingKey {
        &self.encoding
    }

    /// Its entry in a callee's `SERVICE_IDENTITY_TRUST`, for `service`.
    pub fn trust_entry(&self, service: Service) -> String {
        format!(
            "{service}:{}:{}",
            self.id,
            URL_SAFE_NO_PAD.encode(self.public)
        )
    }

    /// Whether it is one of the development issuer's keys, whatever id it is given: their
    /// private halves are public knowledge.
    pub fn is_dev(&self) -> bool {
        self.id == DEV_ONLY || is_dev_public(&self.public)
    }
}

/// The public keys a service checks its callers' credentials with, by the `kid` a credential
/// names: `<service>:<key id>`.
#[derive(Clone, Default)]
pub struct Trust {
    keys: HashMap<String, (Service, DecodingKey)>,
    /// Each public key held, and the service it speaks for: one key speaks for one service.
    publics: HashMap<[u8; 32], Service>,
}

impl std::fmt::Debug for Trust {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut kids: Vec<&String> = self.keys.keys().collect();
        kids.sort();
        f.debug_tuple("Trust").field(&kids).finish()
    }
}

impl Trust {
    /// Comma-separated `<service>:<key id>:<public key>` entries.
    pub fn parse(value: &str) -> Result<Trust, String> {
        let mut trust = Trust::default();
        for entry in value.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let mut parts = entry.splitn(3, ':');
            let (Some(service), Some(id), Some(public)) =
                (parts.next(), parts.next(), parts.next())
            else {
                return Err(format!(
                    "{entry:?}: expected <service>:<key id>:<public key>"
                ));
            };
            let service = Service::from_name(service)
                .ok_or_else(|| format!("{service:?} is not one of our services"))?;
            let id = key_id(id)?;
            let bytes: [u8; 32] = URL_SAFE_NO_PAD
                .decode(public)
                .ok()
                .and_then(|bytes| bytes.try_into().ok())
                .ok_or_else(|| {
                    format!("{service}:{id}: the public key is not 32 bytes of base64url")
                })?;
            let key = ed25519_dalek::VerifyingKey::from_bytes(&bytes)
                .map_err(|_| format!("{service}:{id}: not an Ed25519 public key"))?;
            if key.is_weak() {
                return Err(format!(
                    "{service}:{id}: a weak Ed25519 key, which any signature passes"
                ));
            }
            trust.insert(service, &id, &bytes)?;
        }
        if trust.keys.is_empty() {
            return Err("names no key".into());
        }
        Ok(trust)
    }

    /// The development issuer's keys of every service.
    pub fn dev() -> Trust {
        let mut trust = Trust::default();
        for service in Service::ALL {
            let key = OwnKey::dev(service);
            #[allow(clippy::expect_used)] // Four services, four distinct kids.
            trust
                .insert(service, DEV_ONLY, &key.public)
                .expect("one dev key per service");
        }
        trust
    }

    fn insert(&mut self, service: Service, id: &str, public: &[u8; 32]) -> Result<(), String> {
        let kid = kid(service, id);
        if self.keys.contains_key(&kid) {
            return Err(format!("{kid}: named twice"));
        }
        match self.publics.insert(*public, service) {
            Some(other) if other != service => {
                return Err(format!(
                    "{kid}: the same public key as {other}'s: a key speaks for one service"
                ));
            }
            _ => {}
        }
        let key = DecodingKey::from_ed_components(&URL_SAFE_NO_PAD.encode(public))
            .map_err(|e| format!("{kid}: {e}"))?;
        self.keys.insert(kid, (service, key));
        Ok(())
    }

    pub(crate) fn get(&self, kid: &str) -> Option<&(Service, DecodingKey)> {
        self.keys.get(kid)
    }

    /// The services it holds a key of.
    pub fn services(&self) -> BTreeSet<Service> {
        self.keys.values().map(|(service, _)| *service).collect()
    }

    /// Whether it holds a development key.
    pub fn has_dev(&self) -> bool {
        self.keys
            .keys()
            .any(|kid| kid.ends_with(&format!(":{DEV_ONLY}")))
            || self.publics.keys().any(is_dev_public)
    }
}

/// The `kid` of a credential signed with `service`'s key `id`.
pub(crate) fn kid(service: Service, id: &str) -> String {
    format!("{service}:{id}")
}

/// A key id: 1 to 64 of `A-Z a-z 0-9 . _ -`.
fn key_id(id: &str) -> Result<String, String> {
    let ok = (1..=64).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
    if ok {
        Ok(id.to_owned())
    } else {
        Err(format!(
            "key id {id:?}: 1 to 64 letters, digits, dots, underscores or hyphens"
        ))
    }
}

/// Whether `public` is the development issuer's key of one of our services.
fn is_dev_public(public: &[u8; 32]) -> bool {
    Service::ALL.into_iter().any(|service| {
        ed25519_dalek::SigningKey::from_bytes(&dev_seed(service))
            .verifying_key()
            .to_bytes()
            == *public
    })
}

fn dev_seed(service: Service) -> [u8; 32] {
    Sha256::digest(format!("{DEV_ONLY} service identity of {service}")).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_key_reads_back_and_its_entry_is_trusted() {
        let (value, key) = OwnKey::generate("2026-12").unwrap();
        let again = OwnKey::parse(&value).unwrap();
        assert_eq!(again.public, key.public);
        assert_eq!(again.id, "2026-12");
        let trust = Trust::parse(&key.trust_entry(Service::Order)).unwrap();
        assert!(trust.get("order-service:2026-12").is_some());
        assert_eq!(trust.services(), BTreeSet::from([Service::Order]));
        assert!(!trust.has_dev() && !key.is_dev());
    }

    #[test]
    fn bad_values_are_refused_with_why() {
        for (value, why) in [
            ("nokey", "expected <key id>"),
            ("k:abc", "32 bytes"),
            ("bad id:AAAA", "key id"),
        ] {
            assert!(OwnKey::parse(value).unwrap_err().contains(why), "{value}");
        }
        let x = URL_SAFE_NO_PAD.encode(OwnKey::dev(Service::Point).public);
        for (value, why) in [
            ("", "names no key"),
            ("point-service:k", "expected <service>"),
            (&*format!("pos-service:k:{x}"), "not one of our services"),
            ("point-service:k:AAAA", "32 bytes"),
            (
                &*format!("point-service:k:{x},point-service:k:{x}"),
                "named twice",
            ),
        ] {
            assert!(Trust::parse(value).unwrap_err().contains(why), "{value}");
        }
    }

    #[test]
    fn a_development_key_is_one_under_any_id_and_a_key_speaks_for_one_service() {
        let dev = OwnKey::dev(Service::Order);
        let seed = URL_SAFE_NO_PAD.encode(dev_seed(Service::Order));
        assert!(OwnKey::parse(&format!("2026-12:{seed}")).unwrap().is_dev());
        let renamed = format!(
            "order-service:2026-12:{}",
            URL_SAFE_NO_PAD.encode(dev.public)
        );
        assert!(Trust::parse(&renamed).unwrap().has_dev());
        let (_, key) = OwnKey::generate("k1").unwrap();
        let x = URL_SAFE_NO_PAD.encode(key.public);
        let both = format!("order-service:k1:{x},operator-service:k1:{x}");
        assert!(
            Trust::parse(&both)
                .unwrap_err()
                .contains("a key speaks for one service")
        );
        let rotated = format!("order-service:k1:{x},order-service:k2:{x}");
        assert!(Trust::parse(&rotated).is_ok());
        // The identity point: every signature checks against it.
        let weak = format!(
            "order-service:k1:{}",
            URL_SAFE_NO_PAD.encode({
                let mut identity = [0u8; 32];
                identity[0] = 1;
                identity
            })
        );
        assert!(Trust::parse(&weak).unwrap_err().contains("weak"));
    }

    #[test]
    fn dev_keys_differ_by_service_and_are_marked() {
        let trust = Trust::dev();
        assert_eq!(trust.services().len(), 4);
        assert!(trust.has_dev() && OwnKey::dev(Service::Point).is_dev());
        assert_ne!(
            OwnKey::dev(Service::Point).public,
            OwnKey::dev(Service::Order).public
        );
    }
}
