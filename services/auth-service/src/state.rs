//! What every handler may need, built once at start.

use std::sync::Arc;

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
    pub identity: service_identity::Verifier,
    pub trust_forwarded_for: bool,
}
