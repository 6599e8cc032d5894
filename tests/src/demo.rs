//! The demo fixture's rows the tests name (`deploy/fixtures/demo.json`, which every
//! `demo_database` is seeded with).

/// Client 1001, in test mode (her login code is always the development code): 630.5 points.
pub const SARA: &str = "legacy-token-of-sara-0123456789abcdef";
/// Client 1002.
pub const OMAR: &str = "legacy-token-of-omar-0123456789abcdef";
/// Client 1003.
pub const NOURA: &str = "legacy-token-of-noura-0123456789abcdef";
/// Client 1004.
pub const FAHAD: &str = "legacy-token-of-fahad-0123456789abcdef";
/// Client 1005.
pub const REEM: &str = "legacy-token-of-reem-0123456789abcdef";
/// Client 1099, inactive: every route that takes its token refuses it.
pub const CLOSED: &str = "legacy-token-of-closed-0123456789abcdef";

/// Sara's phone, as a query value.
pub const SARA_PHONE: &str = "%2B966500000001";

/// 100 points for 120 points or 15.00 SAR.
pub const OFFER_100: &str = "64b7f0c2a1b2c3d4e5f60718";
/// 250 points for 300 points or 35.00 SAR.
pub const OFFER_250: &str = "64b7f0c2a1b2c3d4e5f60719";
/// The Birthday occasion.
pub const OCCASION: &str = "64b7f0c2a1b2c3d4e5f60801";
/// Sara's paid gift to Omar, from the legacy system.
pub const LEGACY_ORDER: &str = "6f1c1f9e-2d0b-4b43-9a52-5d2f0c7e8a11";
