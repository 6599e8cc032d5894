//! The service hierarchy: services (system categories), their parents and children, and the
//! trail of every write, over the `catalog` database the order service reads. The spec's
//! operator routes (`handlers`); the rules and the SQL beside them, with no HTTP in them.

pub mod assignment;
pub mod audit;
pub mod body;
pub mod children;
pub mod handlers;
pub mod lookup;
pub mod service_schemas;
pub mod services;
