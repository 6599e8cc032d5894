//! The JSON body of `POST /api/v2/client/point-orders` (`point_service::order_body::parse`):
//! no input panics; an accepted body has its fields in range and as the body said them; a
//! refusal is the details structure (a form error exactly when the body is not an object,
//! otherwise one message per bad field in schema order). The assertions are the property
//! tests' own (`check_fuzz_input`, which `make test` runs on every seed):
//! services/point-service/tests/order_body/checks.rs.

#![no_main]

#[macro_use]
#[path = "check_each_input.rs"]
mod check_each_input;

check_each_input!("../../services/point-service/tests/order_body/checks.rs");
