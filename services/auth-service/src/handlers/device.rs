//! `POST /api/v1/clients/add-device-id`: the spec's fixed answer. No token, nothing stored;
//! only `device_id` of the body is read, and echoed.

use actix_web::{HttpResponse, web};
use serde::Serialize;
use serde_json::Value;

use crate::profile_update::body_object;

/// The device id answered when the body has none.
pub const DEFAULT_DEVICE_ID: &str = "46AE56EF-29BA-40AE-B436-AF22B119FE1E";

/// The body as the document shows it: only `device_id` is read.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub struct DeviceBody {
    device_id: Option<String>,
}

/// The spec's fixed answer.
#[derive(Serialize, utoipa::ToSchema)]
pub struct DeviceAnswer {
    /// Always 920.
    id: i64,
    /// Always 356315.
    client_id: i64,
    /// The body's `device_id` echoed as sent, or the fixed
    /// `46AE56EF-29BA-40AE-B436-AF22B119FE1E` when it is absent or null. A string, as the
    /// spec types it; it is not validated, so another JSON value sent comes back as it was.
    #[schema(value_type = String)]
    device_id: Value,
}

/// Registers a device: the spec's fixed answer.
///
/// Always id 920 and client_id 356315, with the device_id sent, or the fixed one.
#[utoipa::path(post, path = "/clients/add-device-id", request_body = DeviceBody,
    responses((status = 200, body = DeviceAnswer)))]
pub async fn add_device_id(body: web::Bytes) -> HttpResponse {
    let device_id = body_object(&body)
        .ok()
        .and_then(|mut body| body.remove("device_id"))
        .filter(|v| !v.is_null())
        .unwrap_or_else(|| Value::from(DEFAULT_DEVICE_ID));
    HttpResponse::Ok().json(DeviceAnswer {
        id: 920,
        client_id: 356315,
        device_id,
    })
}
