//! What every handler may need, built once at start (the point service's HTTP client once
//! per worker).

use crate::point_service::PointService;

#[derive(Clone)]
pub struct AppState {
    pub pool: db::Pool,
    pub point_service: PointService,
}
