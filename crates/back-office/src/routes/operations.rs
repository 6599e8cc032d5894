//! The back office's operations, one function per [`super::Route`]: its method and path
//! under `/api/v1/operator`, summary and description, body and its own answers. The
//! rule adds the path and query parameters; the operator service adds the security
//! requirement, the answers every route shares (401, 403, 413, 500, 503) and those of the
//! relay (500, 502, 504).

use envelope::{Only, Refuses};

use crate::adjustments::{AdjustmentBody, AdjustmentRecord, AdjustmentRefusal};
use crate::audit::Page;
use crate::clients::{ClientPoints, ClientRefusal};
use crate::earn_rates::{EarnRateTable, EarnRateTableBody, RatesRefusal};
use crate::expiry_policy::{ExpiryDryRun, ExpiryPolicy, ExpiryPolicyBody, ExpiryPolicyRefusal};
use crate::gift_codes::{
    BatchBody, BatchCodes, BatchList, BatchLookupRefusal, BatchRecord, BatchRefusal,
};
use crate::occasions::{
    OccasionChangeBody, OccasionCreateBody, OccasionList, OccasionRecord, OccasionRefusal,
};
use crate::offers::{OfferChangeBody, OfferCreateBody, OfferList, OfferRecord, OfferRefusal};
use crate::reads::Page as ReadsPage;

/// Every offer, on sale or not
///
/// Offers not withdrawn first, then as the app lists them (sequence, then id; missing
/// sequences last). Roles: all five.
#[utoipa::path(get, path = "/offers", responses((status = 200, body = OfferList)))]
pub fn list_offers() {}

/// Create an offer
///
/// The service assigns the 24-hex id; `active` defaults to true, `purchasedPointAmount` and
/// `sequence` to null. A points price below what the offer gives is refused (it would let
/// two clients mint points by buying it for each other), and so is, to an admin, an offer
/// that gives more points per SAR than the programme's limit (`OFFER_MAX_POINTS_PER_SAR`, or
/// the highest rate of the seeded offers): a super_admin may. Recorded in the audit trail.
/// Roles: admin, super_admin. Checks: token, role, body, the limit.
#[utoipa::path(post, path = "/offers", request_body = OfferCreateBody,
    responses(Only<OfferRefusal, 400, 403>,
        (status = 201, body = OfferRecord)))]
pub fn create_offer() {}

/// Change an offer
///
/// The keys sent (at least one), on the offer as it is; the app lists the change at once,
/// and an unpaid order made at the old price is no longer paid (409 at pay). A change that raises the points
/// per SAR above the programme's limit is refused to an admin, as a create is. Recorded in
/// the audit trail. Roles: admin, super_admin. Checks: token, role, path id, body, the
/// offer, the limit.
#[utoipa::path(patch, path = "/offers/{id}", request_body = OfferChangeBody,
    responses(OfferRefusal,
        (status = 200, body = OfferRecord)))]
pub fn update_offer() {}

/// Withdraw an offer
///
/// Never on sale again (the app no longer lists it, an order naming it is refused, and an
/// unpaid one made before is no longer paid); kept for the orders that name it. Recorded
/// in the audit trail; withdrawing it again answers it as it is and records nothing (so for
/// occasions and batches too). Roles: admin, super_admin. Checks: token, role, path id, the
/// offer.
#[utoipa::path(delete, path = "/offers/{id}", responses(Only<OfferRefusal, 404>,
        (status = 200, body = OfferRecord)))]
pub fn withdraw_offer() {}

/// The loyalty back office's audit trail
///
/// A page of the changes to points data, newest first (`page`, `limit` as the other lists):
/// who (the token's `sub` and role), what, the record before and after. It names clients and
/// their balances (adjustments), so, like the hierarchy's trail: admin, super_admin.
#[utoipa::path(get, path = "/loyalty/audit", responses((status = 200, body = Page)))]
pub fn list_loyalty_audit() {}

/// A client's points as the app sees them
///
/// The balance object and a page of the history exactly as the app's `GET /points` and
/// `GET /point-history` answer them (`page`, `limit` read as there), for support. Client data,
/// so: admin, super_admin; each read is recorded with its operator and client (the client
/// reads' trail) before it is answered. Checks: token, role, the client.
#[utoipa::path(get, path = "/clients/{id}/points", responses(ClientRefusal,
        (status = 200, body = ClientPoints)))]
pub fn get_client_points() {}

/// Who read which client's points
///
/// A page of the reads of clients' points through the back office, newest first (`page`,
/// `limit` as the other lists): the operator (the token's `sub` and role), the client, when.
/// A trail of its own, apart from the changes': super_admin only.
#[utoipa::path(get, path = "/loyalty/client-reads", responses((status = 200, body = ReadsPage)))]
pub fn list_client_reads() {}

/// Adjust a client's points
///
/// A credit (positive `points`) or a debit (negative), with a reason and the operator's own
/// reference: the same reference again answers the first adjustment (200) and moves
/// nothing. A debit never leaves the balance below zero. Shown in the client's history as
/// `support_adjustment`; recorded in the loyalty audit trail. Roles: super_admin. Checks:
/// token, role, body, the client, the reference, the balance.
#[utoipa::path(post, path = "/clients/{id}/adjustments", request_body = AdjustmentBody,
    responses(Refuses<(ClientRefusal, AdjustmentRefusal)>,
        (status = 201, description = "made", body = AdjustmentRecord),
        (status = 200, description = "earlier", body = AdjustmentRecord)))]
pub fn adjust_points() {}

/// Every occasion, active or not
///
/// The active ones first, then by id. Roles: all five.
#[utoipa::path(get, path = "/occasions", responses((status = 200, body = OccasionList)))]
pub fn list_occasions() {}

/// Create an occasion
///
/// The service assigns the 24-hex id; `occasionAr` defaults to null, `isCustom` to false,
/// `active` to true. Recorded in the audit trail. Roles: admin, super_admin. Checks: token,
/// role, body.
#[utoipa::path(post, path = "/occasions", request_body = OccasionCreateBody,
    responses(Only<OccasionRefusal, 400>, (status = 201, body = OccasionRecord)))]
pub fn create_occasion() {}

/// Change an occasion
///
/// The keys sent (at least one); the app lists the change at once, and `active: true`
/// offers a withdrawn occasion again. Recorded in the audit trail. Roles: admin,
/// super_admin. Checks: token, role, path id, body, the occasion.
#[utoipa::path(patch, path = "/occasions/{id}", request_body = OccasionChangeBody,
    responses(OccasionRefusal, (status = 200, body = OccasionRecord)))]
pub fn update_occasion() {}

/// Withdraw an occasion
///
/// Inactive: no longer offered to the app nor accepted by a new order; the orders that name
/// it keep it. Recorded in the audit trail; an inactive occasion is answered as it is and
/// nothing is recorded. Roles: admin, super_admin. Checks: token, role,
/// path id, the occasion.
#[utoipa::path(delete, path = "/occasions/{id}", responses(Only<OccasionRefusal, 404>,
        (status = 200, body = OccasionRecord)))]
pub fn withdraw_occasion() {}

/// The expiry policy
///
/// Whether points expire, and after how many days without an earn; its version. Roles: all
/// five.
#[utoipa::path(get, path = "/expiry-policy", responses((status = 200, body = ExpiryPolicy)))]
pub fn get_expiry_policy() {}

/// Replace the expiry policy
///
/// Whole, from the version read: a replacement made from an older version is refused (409),
/// so that of two operators editing at once the second does not undo the first. A window
/// where there was none, or a shorter one, takes clients' points sooner: refused to an
/// admin (403), a super_admin's (counted and alerted); and if it would take points in the next
/// expiry run, made only with its dry run's figures sent back as `confirm` (409 without them,
/// naming them). The balance's `pointsExpirationDate` and the next expiry run follow it at
/// once. Recorded in the audit trail. Roles: admin, super_admin. Checks: token, role, body,
/// version, a shorter window, the confirmation.
#[utoipa::path(put, path = "/expiry-policy", request_body = ExpiryPolicyBody,
    responses(ExpiryPolicyRefusal,
        (status = 200, body = ExpiryPolicy)))]
pub fn replace_expiry_policy() {}

/// What an expiry policy would take
///
/// The clients and points the next expiry run would take if the policy were the one sent (a
/// replacement's body; its version and confirm are not read); nothing is changed. A
/// replacement that would take any is made only with these figures as its `confirm`. Roles:
/// super_admin. Checks: token, role, body.
#[utoipa::path(post, path = "/expiry-policy/dry-run", request_body = ExpiryPolicyBody,
    responses(Only<ExpiryPolicyRefusal, 400>,
        (status = 200, body = ExpiryDryRun)))]
pub fn dry_run_expiry_policy() {}

/// The gift-code batches
///
/// A page of them, newest first (`page`, `limit` as the other lists), each with its codes
/// counted by state (no codes). Roles: admin, super_admin.
#[utoipa::path(get, path = "/gift-code-batches", responses((status = 200, body = BatchList)))]
pub fn list_gift_code_batches() {}

/// Issue a gift-code batch
///
/// `count` codes worth `points` each, from a cryptographic generator, optionally beginning
/// with `prefix` and expiring at `expiresAt`. The same `reference` and body again answers
/// the first batch (200) and issues nothing; with another body it is refused (409).
/// Recorded in the audit trail. Roles: super_admin. Checks: token, role, body, reference.
#[utoipa::path(post, path = "/gift-code-batches", request_body = BatchBody,
    responses(BatchRefusal,
        (status = 201, description = "issued", body = BatchRecord),
        (status = 200, description = "a retry", body = BatchRecord)))]
pub fn issue_gift_codes() {}

/// A gift-code batch with each code's state
///
/// Each code, in code order: unused, being_credited, credited (with the client and when),
/// withdrawn or expired. Recorded in the trail as read by the operator. Roles: super_admin.
#[utoipa::path(get, path = "/gift-code-batches/{id}",
    responses(BatchLookupRefusal, (status = 200, body = BatchCodes)))]
pub fn get_gift_code_batch() {}

/// A gift-code batch's unused codes as CSV, for printing
///
/// `text/csv`: the header `code,points,expires_at`, then one row per unused code in code
/// order (`expires_at` in RFC 3339, empty for never). Recorded in the trail as exported by
/// the operator. Roles: super_admin.
#[utoipa::path(get, path = "/gift-code-batches/{id}/codes.csv", responses(BatchLookupRefusal,
        (status = 200, description = "codes", content_type = "text/csv", body = String)))]
pub fn export_gift_codes() {}

/// Withdraw a batch's unused codes
///
/// Every code nobody redeemed becomes unredeemable (the app answers 404 for it); a code
/// redeemed keeps its state. Answers the batch after. Recorded in the audit trail. Roles:
/// super_admin.
#[utoipa::path(delete, path = "/gift-code-batches/{id}",
    responses(BatchLookupRefusal, (status = 200, body = BatchRecord)))]
pub fn withdraw_gift_codes() {}

/// The earn-rate table
///
/// The rows as the app reads them (sorted by `amount_from`), each value as exact decimal
/// text where the app reads a JSON number, and the table's version. A stored table that is
/// not a list, or holds a value that is neither a number nor null (only `seed` can store
/// one), is a 500 that names it; a replacement from the version a 409 names mends it. Roles:
/// all five.
#[utoipa::path(get, path = "/earn-rates", responses((status = 200, body = EarnRateTable)))]
pub fn get_earn_rates() {}

/// Replace the earn-rate table
///
/// Whole, from the version read: ordered ranges without gaps or overlaps, the last
/// open-ended. A replacement made from an older version is refused (409). The app reads the
/// new table at once. Recorded in the audit trail. Roles: admin, super_admin. Checks: token,
/// role, body, version.
#[utoipa::path(put, path = "/earn-rates", request_body = EarnRateTableBody,
    responses(RatesRefusal,
        (status = 200, body = EarnRateTable)))]
pub fn replace_earn_rates() {}

/// The catalog's loyalty audit trail
///
/// A page of the changes to gift-code batches and the earn-rate table, newest first (`page`,
/// `limit` as the other lists): who (the token's `sub` and role), what, the record before and
/// after, reads of codes included (`/loyalty/audit` has those of points data). Roles: admin,
/// super_admin.
#[utoipa::path(get, path = "/loyalty/catalog-audit", responses((status = 200, body = Page)))]
pub fn list_catalog_loyalty_audit() {}
