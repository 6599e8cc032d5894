//! Login by SMS code: the rules of reset-otp ([`issue`]) and verify-otp ([`check`]), and
//! the limits on both ([`limits`]); no HTTP in here.
//!
//! - A code lives 3 minutes, by the database's clock ([`crate::clock`]): live up to the last
//!   instant before `issued + 3 min`, dead from then on. While one is live, reset-otp sends
//!   nothing and still succeeds.
//! - Test-mode accounts get the fixed `OTP_TEST_CODE` and no SMS; without one (production
//!   with no value in the Secret) they get no code and cannot log in.
//! - The code is committed before its SMS goes out (no transaction or pooled connection
//!   waits on the gateway). A failed send deletes it and the send it counted, so the client
//!   can ask again at once; until a send is confirmed the code counts as live only for
//!   [`OtpSettings::pending_for`] (as long as a send can take), so a crash between the
//!   commit and the send does not block reset-otp for the code's 3 minutes either.
//! - A code dies after 5 wrong tries: it no longer verifies, even when right, and the next
//!   reset-otp sends a new one.
//! - Rate limits count SMS actually sent and codes actually tried, per phone and per client
//!   address, in the database (shared by all replicas). A reset-otp while a code is live
//!   counts as nothing, so it never becomes a 429.
//! - Phones with no account are counted per client address on both routes (their answer,
//!   reset-otp's [`ResetRefusal::UnknownPhone`], says who is not a client, so without a
//!   limit anyone could test every number). Past [`Limits::unknown_phones_per_ip`] an
//!   address gets the 429 for every phone, known ones included, so the answers stop telling
//!   them apart.

mod check;
mod issue;
mod limits;

use chrono::{DateTime, Duration, Utc};
use diesel::prelude::*;
use diesel::sql_types::Timestamptz;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use crate::clock::Clock;
use crate::db::schema::clients;
use crate::profile::Profile;
use server::Secret;

pub use check::{VerifyRefusal, verify};
pub use issue::{Pending, Reset, ResetRefusal, confirm_sent, reset, undo_send};
pub use limits::{Limits, OtpLimit};

pub const CODE_LIFETIME: Duration = Duration::minutes(3);
pub const MAX_WRONG_TRIES: i32 = 5;

#[derive(Debug, Clone)]
pub struct OtpSettings {
    /// `None`: test-mode accounts get no code.
    pub test_code: Option<Secret>,
    pub limits: Limits,
    /// How long a stored code whose SMS is not confirmed yet counts as live: the SMS
    /// timeout and a margin. Past it, the send is taken as lost and reset-otp sends again.
    pub pending_for: std::time::Duration,
    /// The clock of the codes' times: the database's, or a test's.
    pub clock: Clock,
}

#[derive(QueryableByName)]
struct Now {
    #[diesel(sql_type = Timestamptz)]
    now: DateTime<Utc>,
}

/// Now by the codes' clock. The database's `now()` is the start of the caller's transaction,
/// the same instant for every statement in it.
async fn now(conn: &mut AsyncPgConnection, clock: &Clock) -> QueryResult<DateTime<Utc>> {
    match clock.fixed() {
        Some(at) => Ok(at),
        None => Ok(diesel::sql_query("SELECT now() AS now")
            .get_result::<Now>(conn)
            .await?
            .now),
    }
}

/// The account of a phone, locked for the rest of the transaction so that two requests
/// for one phone take turns.
async fn lock_client(
    conn: &mut AsyncPgConnection,
    phone: &str,
) -> QueryResult<Option<(Profile, bool)>> {
    clients::table
        .filter(clients::contact_phone.eq(phone))
        .select((Profile::as_select(), clients::test_mode))
        .for_update()
        .first(conn)
        .await
        .optional()
}
