//! The service's one route table and its OpenAPI document.

use actix_web::web;
use utoipa::OpenApi;

use crate::handlers::{address_book, device, internal, otp, profile, tokens};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "auth-service",
        description = "Client accounts: OTP login, tokens, profile, push setting, devices, address book. \
                       Errors use envelope A: {status, message, stack?} (stack outside production only)."
    ),
    paths(
        otp::reset_otp, otp::verify_otp, tokens::verify_token, tokens::find_by_phone, tokens::users,
        tokens::exchange_token, profile::update_profile, profile::update_setting, device::add_device_id,
        address_book::list, address_book::create, address_book::get, address_book::update, address_book::delete,
        internal::client,
    ),
    modifiers(&Security),
)]
struct ApiDoc;

/// The two bearer tokens.
struct Security;

impl utoipa::Modify for Security {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
        let components = openapi.components.get_or_insert_with(Default::default);
        let mut primary = Http::new(HttpAuthScheme::Bearer);
        primary.bearer_format = Some("JWT".into());
        primary.description =
            Some("The primary token: a JWT from verify-otp or exchange-token.".into());
        components.add_security_scheme("primary", SecurityScheme::Http(primary));
        let mut legacy = Http::new(HttpAuthScheme::Bearer);
        legacy.description =
            Some("A legacy token: opaque, from the legacy system or exchange-token.".into());
        components.add_security_scheme("legacy", SecurityScheme::Http(legacy));
    }
}

/// Request and answer shapes for the document only (handlers read bodies as raw JSON,
/// because the spec's rules are about JSON values, not about a fixed type).
pub mod doc {
    use serde_json::Value;
    use utoipa::ToSchema;

    use crate::address_book::Address;
    use crate::profile::Profile;

    #[derive(ToSchema)]
    pub struct Sent {
        /// Always true.
        pub status: bool,
    }

    #[derive(ToSchema)]
    pub struct Login {
        pub access_token: String,
        pub profile: Profile,
    }

    #[derive(ToSchema)]
    pub struct LoginAnswer {
        pub status: u16,
        pub data: Login,
    }

    #[derive(ToSchema)]
    pub struct ProfileAnswer {
        pub status: u16,
        pub data: Profile,
    }

    #[derive(ToSchema)]
    pub struct RecipientAnswer {
        pub status: u16,
        pub data: crate::profile::Recipient,
    }

    #[derive(ToSchema)]
    pub struct ExchangeBody {
        /// A primary token (tried first) or a legacy token.
        pub token: String,
        /// `primary` or `legacy`.
        #[schema(pattern = "^(primary|legacy)$", example = "legacy")]
        pub target_platform: String,
    }

    #[derive(ToSchema)]
    pub struct Token {
        pub token: String,
    }

    #[derive(ToSchema)]
    pub struct TokenAnswer {
        pub status: u16,
        pub data: Token,
    }

    /// Every key is optional; only the keys present change. push_enabled and unknown keys
    /// are ignored.
    #[derive(ToSchema)]
    pub struct ProfileBody {
        /// Integer or numeric string; must be the caller's.
        pub client_id: Option<Value>,
        /// Cannot change: must equal the stored phone with whitespace removed.
        #[schema(example = "+966500000001")]
        pub contact_phone: Option<String>,
        /// Null clears; at most 100 characters after trimming.
        #[schema(example = "Sara")]
        pub first_name: Option<String>,
        pub last_name: Option<String>,
        /// No format check; stored trimmed.
        pub email_address: Option<String>,
        /// Any date a standard parser reads (or epoch milliseconds); stored as the UTC date.
        #[schema(example = "1990-01-10")]
        pub birth_date: Option<String>,
        /// 1 male, 2 female; anything else is stored as 0.
        pub sex: Option<Value>,
        /// 1, "1" and true mean on; anything else off.
        pub receive_offers: Option<Value>,
    }

    #[derive(ToSchema)]
    pub struct SettingBody {
        /// Integer or numeric string; must be the caller's.
        pub client_id: Value,
        /// 1, "1" and true switch on; anything else off.
        pub push_enabled: Value,
    }

    #[derive(ToSchema)]
    pub struct DeviceBody {
        pub device_id: Option<String>,
    }

    #[derive(ToSchema)]
    pub struct DeviceAnswer {
        /// Always 920.
        pub id: i64,
        /// Always 356315.
        pub client_id: i64,
        /// The body's `device_id` echoed as sent (the spec: not validated; a string in
        /// practice, but any other JSON value comes back as it was), or the fixed
        /// `46AE56EF-29BA-40AE-B436-AF22B119FE1E` when it is absent or null.
        pub device_id: Value,
    }

    /// label (≤ 50), address_line (≤ 255), city (≤ 100), latitude and longitude are required
    /// on create; district (≤ 100), building (≤ 50) and notes (≤ 500) are optional (null or
    /// empty clears); is_default is a boolean.
    #[derive(ToSchema)]
    pub struct AddressBody {
        #[schema(max_length = 50, example = "Home")]
        pub label: Option<String>,
        #[schema(max_length = 255, example = "King Fahd Road 12")]
        pub address_line: Option<String>,
        #[schema(max_length = 100, example = "Riyadh")]
        pub city: Option<String>,
        #[schema(max_length = 100, example = "Olaya")]
        pub district: Option<String>,
        #[schema(max_length = 50, example = "Tower B")]
        pub building: Option<String>,
        #[schema(example = 24.6907)]
        pub latitude: Option<f64>,
        #[schema(example = 46.6855)]
        pub longitude: Option<f64>,
        #[schema(max_length = 500, example = "Second floor")]
        pub notes: Option<String>,
        #[schema(example = true)]
        pub is_default: Option<bool>,
    }

    #[derive(ToSchema)]
    pub struct AddressAnswer {
        pub status: u16,
        pub data: Address,
    }

    #[derive(ToSchema)]
    pub struct AddressListAnswer {
        pub status: u16,
        pub data: Vec<Address>,
    }

    #[derive(ToSchema)]
    pub struct Deleted {
        pub id: String,
    }

    #[derive(ToSchema)]
    pub struct DeletedAnswer {
        pub status: u16,
        pub data: Deleted,
    }
}

pub fn openapi() -> utoipa::openapi::OpenApi {
    let mut doc = ApiDoc::openapi().merge_from(server::ops::openapi());
    envelope::schema::add_door_answers(&mut doc, envelope::Envelope::A);
    doc
}

/// Specific paths come before `/api/v1/clients/{client_id}`, which would otherwise take them.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(web::resource("/api/v1/clients/reset-otp").route(web::get().to(otp::reset_otp)))
        .service(web::resource("/api/v1/clients/verify-otp").route(web::get().to(otp::verify_otp)))
        .service(
            web::resource("/api/v1/clients/verify-token")
                .route(web::get().to(tokens::verify_token)),
        )
        .service(
            web::resource("/api/v1/clients/exchange-token")
                .route(web::post().to(tokens::exchange_token)),
        )
        .service(
            web::resource("/api/v1/clients/add-device-id")
                .route(web::post().to(device::add_device_id)),
        )
        .service(
            web::resource("/api/v1/clients/setting").route(web::put().to(profile::update_setting)),
        )
        .service(
            web::resource("/api/v1/clients/address-book")
                .route(web::get().to(address_book::list))
                .route(web::post().to(address_book::create)),
        )
        .service(
            web::resource("/api/v1/clients/address-book/{id}")
                .route(web::get().to(address_book::get))
                .route(web::put().to(address_book::update))
                .route(web::delete().to(address_book::delete)),
        )
        .service(web::resource("/api/v1/clients").route(web::get().to(tokens::find_by_phone)))
        .service(
            web::resource("/api/v1/clients/{client_id}")
                .route(web::put().to(profile::update_profile)),
        )
        .service(web::resource("/api/v1/users").route(web::get().to(tokens::users)))
        // Digits only (DESIGN: the profile or 404): an id carrying `%2F`, `%5C` or anything
        // else matches no route, so a target that a proxy reads as another path after decoding
        // (`/internal/v1/clients/1%2F..%2F..%2F..%2F..%2Fapi%2Fv1%2Fclients`) never reaches it.
        .service(
            web::resource("/internal/v1/clients/{id:[0-9]+}")
                .route(web::get().to(internal::client)),
        );
}
