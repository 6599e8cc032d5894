//! `POST /api/v1/clients/add-device-id`: the spec's fixed answer. No token, nothing stored;
//! only `device_id` of the body is read, and echoed.

use actix_web::{HttpResponse, web};
use serde_json::{Value, json};

use crate::profile_update::body_object;

/// The device id answered when the body has none.
pub const DEFAULT_DEVICE_ID: &str = "46AE56EF-29BA-40AE-B436-AF22B119FE1E";

#[utoipa::path(post, path = "/api/v1/clients/add-device-id", tag = "profile",
    request_body = crate::routes::doc::DeviceBody,
    responses((status = 200, description = "always id 920 and client_id 356315; the device_id sent, or the fixed one", body = crate::routes::doc::DeviceAnswer)))]
pub async fn add_device_id(body: web::Bytes) -> HttpResponse {
    let device_id = body_object(&body)
        .ok()
        .and_then(|mut body| body.remove("device_id"))
        .filter(|v| !v.is_null())
        .unwrap_or_else(|| Value::from(DEFAULT_DEVICE_ID));
    HttpResponse::Ok().json(json!({"id": 920, "client_id": 356315, "device_id": device_id}))
}
