//! A gift-code batch's unused codes as CSV, for printing.

use back_office::gift_codes::{BatchCodes, CodeState};

use crate::error::OrderError;

/// The batch's unused codes as CSV for printing: `code,points,expires_at`, in code order.
pub fn csv(batch: &BatchCodes) -> Result<Vec<u8>, OrderError> {
    let mut out = csv::Writer::from_writer(Vec::new());
    let expires = batch
        .batch
        .expires_at
        .map(|at| at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .unwrap_or_default();
    let fail = |e: csv::Error| OrderError::Internal(format!("gift-code CSV: {e}"));
    out.write_record(["code", "points", "expires_at"])
        .map_err(fail)?;
    for code in batch.codes.iter().filter(|c| c.state == CodeState::Unused) {
        out.write_record([
            code.code.as_str(),
            batch.batch.points.as_str(),
            expires.as_str(),
        ])
        .map_err(fail)?;
    }
    out.into_inner()
        .map_err(|e| OrderError::Internal(format!("gift-code CSV: {e}")))
}
