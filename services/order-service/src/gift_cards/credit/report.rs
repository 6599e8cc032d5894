//! What one try's outcome leaves behind: a log line at the level its outcome deserves and
//! `gift_card_credit_attempts_total{by, outcome}`.

use super::{By, Failure, Lease};
use crate::config::GiftCardRetry;

/// After this many failed tries of one credit, each further failure is logged as an error
/// (before: a warning, since a short outage of the point service heals on its own).
const ERROR_AFTER: i32 = 5;

/// Logs and counts one try's outcome (`gift_card_credit_attempts_total{by, outcome}`).
pub fn report(by: By, lease: &Lease, outcome: &Result<(), Failure>, retry: &GiftCardRetry) {
    let by_label = by.label();
    match outcome {
        Ok(()) => {
            metrics::counter!("gift_card_credit_attempts_total", "by" => by_label, "outcome" => "credited")
                .increment(1);
            tracing::info!(
                redemption.id = lease.id,
                client.id = lease.client_id,
                credit.target = lease.target.as_str(),
                credit.reference = %lease.reference,
                attempt = lease.attempt,
                by = by_label,
                "gift-card credit landed"
            );
        }
        Err(error) => {
            let outcome = match error {
                Failure::Refused(_) => "refused",
                Failure::Failed(_) => "failed",
                Failure::NoLegacyUrl => "unconfigured",
            };
            metrics::counter!("gift_card_credit_attempts_total", "by" => by_label, "outcome" => outcome)
                .increment(1);
            let next_in = error.backoff(retry, lease.attempt).as_secs_f64();
            // One line at the level and with the advice the failure calls for (a tracing
            // level is fixed where the line is written).
            macro_rules! failed {
                ($level:ident, $message:literal) => {
                    tracing::$level!(
                        redemption.id = lease.id,
                        client.id = lease.client_id,
                        credit.target = lease.target.as_str(),
                        credit.reference = %lease.reference,
                        points = %lease.points,
                        attempt = lease.attempt,
                        by = by_label,
                        next_try_in_seconds = next_in,
                        error.message = %error,
                        $message
                    )
                };
            }
            match error {
                Failure::Refused(_) => failed!(
                    error,
                    "gift-card credit refused: it stays pending and is retried rarely; look at why \
                     the other side refuses it"
                ),
                Failure::NoLegacyUrl => failed!(
                    error,
                    "gift-card credit not sent: it was made for the legacy system, which only a \
                     process with LEGACY_URL can credit; it stays pending and is retried (never \
                     sent to the point service instead); set LEGACY_URL"
                ),
                Failure::Failed(_) if lease.attempt >= ERROR_AFTER => failed!(
                    error,
                    "gift-card credit keeps failing; it stays pending and is retried"
                ),
                Failure::Failed(_) => failed!(
                    warn,
                    "gift-card credit failed; it stays pending and is retried"
                ),
            }
        }
    }
}
