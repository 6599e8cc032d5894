//! One module per resource, one function per route. Handlers only translate between HTTP
//! and the rules: parse, call, answer.

pub mod address_book;
pub mod device;
pub mod internal;
pub mod otp;
pub mod profile;
pub mod tokens;
