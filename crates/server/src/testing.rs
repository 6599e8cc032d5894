//! What the services' tests share (feature `testing`): the checks of an OpenAPI document
//! against the service that serves it.

pub mod openapi;
