//! What every handler may need, built once at start.

use std::sync::Arc;

use server::Secret;

use crate::client_limits::ClientLimits;
use crate::otp::OtpSettings;
use crate::sms::SmsProvider;
use crate::tokens::TokenKeys;

#[derive(Clone)]
pub struct AppState {
    pub pool: db::Pool,
    pub tokens: TokenKeys,
    pub sms: Arc<dyn SmsProvider>,
    pub otp: OtpSettings,
    pub client_limits: ClientLimits,
    pub internal_token: Secret,
    pub trust_forwarded_for: bool,
}
