//! The bearer tokens a service's document declares (its `securitySchemes`): each one a
//! constant naming the token once, with what it is, that the `ApiDoc` lists in its
//! `modifiers(...)` and its routes name in `security((name = []))`.

use utoipa::openapi::OpenApi;
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};

/// The primary token, which the auth service issues.
pub const PRIMARY: BearerScheme = BearerScheme::jwt(
    "primary",
    "The primary token: a JWT from verify-otp or exchange-token (`target_platform: primary`).",
);

/// The legacy token: the same declaration in every document that names it, so that the
/// documents by audience (`docs/api/`) can hold the routes of several services.
pub const LEGACY: BearerScheme = BearerScheme::opaque(
    "legacy",
    "A legacy token: opaque, from the legacy system or exchange-token (`target_platform: legacy`). The \
     point routes and the gift-card route resolve it through the auth service's /api/v1/users; there a \
     primary token is refused with 401 (on dev; docs/spec, \"Authentication\").",
);

/// A service's credential on an internal route: a JWT the calling service signed with its own
/// key, naming itself and the callee (`service_identity`).
pub const SERVICE_CREDENTIAL: BearerScheme = BearerScheme::jwt(
    "service",
    "A service credential: a JWT one of our services signed with its own Ed25519 key, naming \
     itself (`iss`) and the callee (`aud`), good for minutes (docs/decisions.md, \"Each service \
     speaks for itself\"). Internal routes only.",
);

/// One bearer token: its name in the document, whether it is a JWT, what it is.
pub struct BearerScheme {
    name: &'static str,
    jwt: bool,
    description: &'static str,
}

impl BearerScheme {
    /// A token that is a JWT (`bearerFormat: JWT`).
    pub const fn jwt(name: &'static str, description: &'static str) -> Self {
        Self {
            name,
            jwt: true,
            description,
        }
    }

    /// Its name in the document, which a route's `security((name = []))` names.
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// An opaque token.
    pub const fn opaque(name: &'static str, description: &'static str) -> Self {
        Self {
            name,
            jwt: false,
            description,
        }
    }
}

impl utoipa::Modify for BearerScheme {
    fn modify(&self, openapi: &mut OpenApi) {
        let mut http = Http::new(HttpAuthScheme::Bearer);
        http.bearer_format = self.jwt.then(|| "JWT".to_owned());
        http.description = Some(self.description.to_owned());
        openapi
            .components
            .get_or_insert_with(Default::default)
            .add_security_scheme(self.name, SecurityScheme::Http(http));
    }
}
