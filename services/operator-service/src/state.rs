//! What every handler may need, built once at start.

#[derive(Clone)]
pub struct AppState {
    pub pool: db::Pool,
}
