//! The loyalty back office's changes to points data (no HTTP in here): each made in one
//! transaction with its audit row, for the operator the operator service names
//! (docs/decisions.md, "The loyalty back office"). The contract, bodies and refusals are the
//! `back_office` crate's.

pub mod adjustments;
pub mod expiry_policy;
pub mod occasions;
pub mod offer_limit;
pub mod offers;

/// Guardrails of the back office a super_admin went beyond, by guardrail.
pub const GUARDRAIL_PASSED: &str = "back_office_guardrail_passed_total";

/// What a super_admin may do and an admin may not, each counted when done (the alert
/// *BackOfficeGuardrailPassed*).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guardrail {
    /// An offer above the programme's points per SAR (`offer_limit`).
    OfferPointsPerSar,
    /// An expiry window where there was none, or a shorter one (`expiry_policy`).
    ExpiryShortened,
}

impl Guardrail {
    pub const ALL: [Guardrail; 2] = [Guardrail::OfferPointsPerSar, Guardrail::ExpiryShortened];

    pub fn as_str(self) -> &'static str {
        match self {
            Guardrail::OfferPointsPerSar => "offer_points_per_sar",
            Guardrail::ExpiryShortened => "expiry_shortened",
        }
    }

    /// Counts a pass; the caller logs it with what it passed.
    pub fn passed(self) {
        metrics::counter!(GUARDRAIL_PASSED, "guardrail" => self.as_str()).increment(1);
    }
}

/// Every guardrail's counter at 0 from the start, so that its alert sees the first pass.
pub fn export_counters() {
    let labels = Guardrail::ALL.map(Guardrail::as_str);
    telemetry::metrics::counters_at_zero(GUARDRAIL_PASSED, "guardrail", &labels);
}

/// A new record's id: 24 random hex characters (96 bits), the legacy store's form.
fn new_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()[..24].to_owned()
}
