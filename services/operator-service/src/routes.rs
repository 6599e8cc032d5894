//! The service's one route table and its OpenAPI document.

use actix_web::web;
use utoipa::OpenApi;

use crate::handlers;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "operator-service",
        description = "Services (system categories) and their parent/child hierarchy for the admin panel, under \
                       /api/v1/operator.\n\n\
                       **Token**: every route takes an operator JWT (`Authorization: Bearer <token>`, HS256, claims \
                       `{sub, role, exp}`), checked before anything else: missing, bad or expired, 401 \
                       `{\"statusCode\":401,\"message\":\"Unauthorized\",\"error\":\"Unauthorized\"}`. The list, \
                       the variant list and the detail admit all five roles (super_admin, admin, merchant_manager, \
                       store_manager, data_entry); creating and changing services, the children routes and the audit \
                       trail admit admin and super_admin only, other roles get 403 \
                       `{\"statusCode\":403,\"message\":\"Forbidden resource\",\"error\":\"Forbidden\"}`. Each \
                       operation names its roles in its security requirement.\n\n\
                       **Errors** are `{statusCode, message, error}` with `error` the status's reason phrase \
                       (`Bad Request`, `Not Found`, ...). On every route: an unknown path is 404 `Cannot <METHOD> \
                       <path>`, a method the path does not serve 405 `Method Not Allowed` (with `Allow`), a request \
                       body over 64 KiB 413 `Payload Too Large` (read after the token, before the role check), a \
                       path id that is not an integer 400 `Validation failed (numeric string is expected)`; 503 \
                       `The service is busy, try again` when the database pool is exhausted or a deadlock or lock \
                       timeout happens, 500 `Internal server error` on any other failure.\n\n\
                       **Lists** answer `{data, meta: {totalItems, page, itemsPerPage, totalPages}}`; `page` and \
                       `limit` are never refused: unreadable or below 1 they fall back to 1 and 10, `limit` is capped \
                       at 100 and `page` at 1 000 000. Rows are ordered by `ordering`, then id."
    ),
    paths(
        handlers::list, handlers::all, handlers::detail, handlers::create, handlers::update,
        handlers::candidates, handlers::set_children, handlers::audit,
    ),
    components(schemas(envelope::schema::DocOperatorError)),
    modifiers(&Security),
    tags(
        (name = "services", description = "Services and their place in the hierarchy."),
        (name = "children", description = "A parent's children: candidates, assign and unassign (admin, super_admin)."),
        (name = "audit", description = "Every write, who made it, and the hierarchy before and after (admin, super_admin)."),
    ),
)]
struct ApiDoc;

/// The operator bearer token.
struct Security;

impl utoipa::Modify for Security {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
        let mut operator = Http::new(HttpAuthScheme::Bearer);
        operator.bearer_format = Some("JWT".into());
        operator.description = Some(
            "An operator JWT: HS256 signed with OPERATOR_JWT_SECRET, claims `{sub, role, exp}`, role one of \
             super_admin, admin, merchant_manager, store_manager, data_entry (`operator-service token --role R \
             --sub N` prints one). The role names in an operation's security requirement are the roles it admits."
                .into(),
        );
        openapi
            .components
            .get_or_insert_with(Default::default)
            .add_security_scheme("operator", SecurityScheme::Http(operator));
    }
}

/// Request and answer shapes for the document only (the handlers read bodies as raw JSON
/// and answer from their own types; these mirror them key for key, in order).
pub mod doc {
    use serde_json::Value;
    use utoipa::ToSchema;

    /// A service as operators see it, in this key order.
    #[derive(ToSchema)]
    pub struct Service {
        pub id: i64,
        /// Arabic name.
        pub title: String,
        /// English name.
        #[schema(rename = "titleTranslated")]
        pub title_translated: String,
        /// `active` or `hidden`.
        pub status: String,
        /// URL; `""` when none.
        pub logo: String,
        /// Any JSON, or null.
        #[schema(required)]
        pub logo_variants: Option<Value>,
        pub ordering: i32,
        /// `parent`, `standalone` or `child`.
        #[schema(rename = "hierarchyRole")]
        pub hierarchy_role: String,
        /// The parent's id as text (a stringified bigint), or null. Incidental: never valid to
        /// send, do not build logic on it.
        #[schema(rename = "parentId", required)]
        pub parent_id: Option<String>,
        #[schema(required)]
        pub image: Option<String>,
        #[schema(required)]
        pub image_en: Option<String>,
        #[schema(required)]
        pub thumbnail: Option<String>,
        #[schema(required)]
        pub thumbnail_en: Option<String>,
        #[schema(required)]
        pub url: Option<String>,
        #[schema(required)]
        pub background_image_url: Option<String>,
        /// `default` seen.
        #[schema(rename = "serviceType")]
        pub service_type: String,
        /// RFC 3339.
        pub created_at: String,
        /// RFC 3339.
        pub updated_at: String,
    }

    /// A row of the variant list: a service without `hierarchyRole` and `parentId`.
    #[derive(ToSchema)]
    pub struct ServiceWithoutHierarchy {
        pub id: i64,
        pub title: String,
        #[schema(rename = "titleTranslated")]
        pub title_translated: String,
        pub status: String,
        pub logo: String,
        #[schema(required)]
        pub logo_variants: Option<Value>,
        pub ordering: i32,
        #[schema(required)]
        pub image: Option<String>,
        #[schema(required)]
        pub image_en: Option<String>,
        #[schema(required)]
        pub thumbnail: Option<String>,
        #[schema(required)]
        pub thumbnail_en: Option<String>,
        #[schema(required)]
        pub url: Option<String>,
        #[schema(required)]
        pub background_image_url: Option<String>,
        #[schema(rename = "serviceType")]
        pub service_type: String,
        pub created_at: String,
        pub updated_at: String,
    }

    /// A children candidate: a service (role always `child`) with `isSelected` after
    /// `parentId`.
    #[derive(ToSchema)]
    pub struct Candidate {
        pub id: i64,
        pub title: String,
        #[schema(rename = "titleTranslated")]
        pub title_translated: String,
        pub status: String,
        pub logo: String,
        #[schema(required)]
        pub logo_variants: Option<Value>,
        pub ordering: i32,
        /// Always `child`.
        #[schema(rename = "hierarchyRole")]
        pub hierarchy_role: String,
        /// The parent in the path (as text) or null.
        #[schema(rename = "parentId", required)]
        pub parent_id: Option<String>,
        /// True when the row already belongs to the parent in the path.
        #[schema(rename = "isSelected")]
        pub is_selected: bool,
        #[schema(required)]
        pub image: Option<String>,
        #[schema(required)]
        pub image_en: Option<String>,
        #[schema(required)]
        pub thumbnail: Option<String>,
        #[schema(required)]
        pub thumbnail_en: Option<String>,
        #[schema(required)]
        pub url: Option<String>,
        #[schema(required)]
        pub background_image_url: Option<String>,
        #[schema(rename = "serviceType")]
        pub service_type: String,
        pub created_at: String,
        pub updated_at: String,
    }

    #[derive(ToSchema)]
    pub struct PageMeta {
        #[schema(rename = "totalItems")]
        pub total_items: i64,
        pub page: i64,
        #[schema(rename = "itemsPerPage")]
        pub items_per_page: i64,
        #[schema(rename = "totalPages")]
        pub total_pages: i64,
    }

    #[derive(ToSchema)]
    pub struct ServicePage {
        pub data: Vec<Service>,
        pub meta: PageMeta,
    }

    #[derive(ToSchema)]
    pub struct CandidatePage {
        pub data: Vec<Candidate>,
        pub meta: PageMeta,
    }

    /// The body of `POST /services` (the two titles required) and `PATCH /services/{id}`
    /// (every key optional; only the keys sent change). `parentId` is stripped first; any
    /// other key not listed here is refused.
    #[derive(ToSchema)]
    pub struct ServiceBody {
        /// Arabic name, 1 to 255 characters after trimming; required on create.
        #[schema(min_length = 1, max_length = 255, example = "برجر")]
        pub title: Option<String>,
        /// English name, 1 to 255 characters after trimming; required on create.
        #[schema(
            rename = "titleTranslated",
            min_length = 1,
            max_length = 255,
            example = "Burgers"
        )]
        pub title_translated: Option<String>,
        /// `active` (the default) or `hidden`.
        #[schema(pattern = "^(active|hidden)$", example = "active")]
        pub status: Option<String>,
        /// Text of at most 2048 characters, or null (stored as `""`, the default).
        pub logo: Option<String>,
        /// Any JSON, or null.
        pub logo_variants: Option<Value>,
        /// An integer ≥ 0 (default 0).
        #[schema(minimum = 0, example = 3)]
        pub ordering: Option<i32>,
        /// `parent` (the default on create), `standalone` or `child`. A parent leaving the
        /// role releases all its children (they stay `child`, unassigned); a child leaving it
        /// is detached; both in the same transaction, and the answer does not say so.
        #[schema(
            rename = "hierarchyRole",
            pattern = "^(parent|standalone|child)$",
            example = "child"
        )]
        pub hierarchy_role: Option<String>,
        /// Text of at most 2048 characters, or null.
        pub image: Option<String>,
        pub image_en: Option<String>,
        pub thumbnail: Option<String>,
        pub thumbnail_en: Option<String>,
        pub url: Option<String>,
        pub background_image_url: Option<String>,
        /// 1 to 50 characters after trimming (default `default`).
        #[schema(
            rename = "serviceType",
            min_length = 1,
            max_length = 50,
            example = "default"
        )]
        pub service_type: Option<String>,
    }

    /// Unknown keys are dropped.
    #[derive(ToSchema)]
    pub struct ChildrenBody {
        /// Unique integers; missing or null is `[]`.
        #[schema(rename = "assignServiceIds", example = json!([8]))]
        pub assign_service_ids: Option<Vec<i64>>,
        /// Unique integers; missing or null is `[]`. Ids that are not this parent's children
        /// are ignored.
        #[schema(rename = "unassignServiceIds", example = json!([6]))]
        pub unassign_service_ids: Option<Vec<i64>>,
    }

    /// `{"message": "Child services updated successfully", "statusCode": 200}`.
    #[derive(ToSchema)]
    pub struct ChildrenUpdated {
        /// Always `Child services updated successfully`.
        pub message: String,
        /// Always 200.
        #[schema(rename = "statusCode")]
        pub status_code: u16,
    }

    /// One write, in this key order.
    #[derive(ToSchema)]
    pub struct AuditEntry {
        pub id: i64,
        /// The token's `sub`.
        #[schema(rename = "operatorId")]
        pub operator_id: String,
        /// The token's role.
        pub role: String,
        /// `service.create`, `service.update` or `service.children`.
        pub action: String,
        /// The services the write touched.
        #[schema(rename = "serviceIds")]
        pub service_ids: Vec<i64>,
        /// The hierarchy before the write (null on create).
        pub before: Value,
        /// The hierarchy after the write.
        pub after: Value,
        /// RFC 3339.
        #[schema(rename = "createdAt")]
        pub created_at: String,
    }

    #[derive(ToSchema)]
    pub struct AuditPage {
        pub data: Vec<AuditEntry>,
        pub meta: PageMeta,
    }
}

pub fn openapi() -> utoipa::openapi::OpenApi {
    let mut doc = ApiDoc::openapi().merge_from(server::ops::openapi());
    envelope::schema::add_door_answers(&mut doc, envelope::Envelope::Operator);
    doc
}

/// `/services/all/without-pagination` comes before `/services/{id}`.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource("/api/v1/operator/services")
            .route(web::get().to(handlers::list))
            .route(web::post().to(handlers::create)),
    )
    .service(
        web::resource("/api/v1/operator/services/all/without-pagination")
            .route(web::get().to(handlers::all)),
    )
    .service(
        web::resource("/api/v1/operator/services/{id}")
            .route(web::get().to(handlers::detail))
            .route(web::patch().to(handlers::update)),
    )
    .service(
        web::resource("/api/v1/operator/services/{id}/children")
            .route(web::get().to(handlers::candidates))
            .route(web::patch().to(handlers::set_children)),
    )
    .service(web::resource("/api/v1/operator/audit").route(web::get().to(handlers::audit)));
}
