//! `point-service cross-check`: what the three databases say of each other, after a restore
//! that brought one of them back to an earlier time (docs/runbook.md, "Restoring a
//! database"). The points ledger refers to the catalog (a gift-code credit, `gift-card:<code>`,
//! is a redemption there) and to the auth service (every order's payer and recipient, every
//! account's client, is a client there). Each disagreement is one line on standard output;
//! nothing is changed or credited here: a person settles each (the runbook says how).
//!
//! The ledger is the point service's; the other two are read-only, through URLs of their own
//! (`CATALOG_DATABASE_URL`, `AUTH_DATABASE_URL`): a read across services that only this
//! after-the-fact check makes, never a request.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::process::ExitCode;

use bigdecimal::BigDecimal;
use catalog_db::RedemptionStatus;
use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Numeric, Text};
use diesel_async::{AsyncPgConnection, RunQueryDsl};

/// One disagreement between the ledger and another database.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Difference {
    /// The ledger credited a code the catalog has no redemption of (the catalog was restored
    /// to before it): the code may be redeemed again, and is then never credited twice.
    CreditWithoutRedemption {
        reference: String,
        client: i64,
        points: BigDecimal,
    },
    /// The catalog's redemption of a credited code names another client than the credit
    /// (another client redeemed it after a restore): that client was never credited by the
    /// point service (its redemption stays pending; `status` says where it stands).
    RedeemedByAnother {
        reference: String,
        credited: i64,
        points: BigDecimal,
        redeemed: i64,
        status: String,
    },
    /// The ledger credited the code, and the catalog's redemption of it went to the legacy
    /// system (`USE_POINT_SERVICE=false` on the replica that took it again after a restore):
    /// the legacy system never saw the point service's credit, so the client may hold the
    /// points in both ledgers.
    CreditedInBoth {
        reference: String,
        credited: i64,
        redeemed: i64,
        points: BigDecimal,
    },
    /// The redemption and the credit disagree on the points.
    PointsDiffer {
        reference: String,
        credited: BigDecimal,
        redeemed: BigDecimal,
    },
    /// A redemption the catalog says was credited by the point service, with no credit in
    /// the ledger (the ledger was restored to before it): the client lost the points.
    CreditMissing {
        reference: String,
        client: i64,
        points: BigDecimal,
    },
    /// A client the ledger names that the auth service does not have.
    UnknownClient { client: i64, named_by: String },
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::CreditWithoutRedemption {
                reference,
                client,
                points,
            } => {
                write!(
                    f,
                    "credit_without_redemption\t{reference}\tclient {client}\t{}",
                    plain(points)
                )
            }
            Self::RedeemedByAnother {
                reference,
                credited,
                points,
                redeemed,
                status,
            } => write!(
                f,
                "redeemed_by_another\t{reference}\tcredited {} to {credited}, redeemed by {redeemed} ({status})",
                plain(points)
            ),
            Self::CreditedInBoth {
                reference,
                credited,
                redeemed,
                points,
            } => write!(
                f,
                "credited_in_both\t{reference}\t{} credited to {credited} here, \
                 redeemed by {redeemed} through the legacy system",
                plain(points)
            ),
            Self::PointsDiffer {
                reference,
                credited,
                redeemed,
            } => {
                write!(
                    f,
                    "points_differ\t{reference}\tcredited {}, redeemed {}",
                    plain(credited),
                    plain(redeemed)
                )
            }
            Self::CreditMissing {
                reference,
                client,
                points,
            } => {
                write!(
                    f,
                    "credit_missing\t{reference}\tclient {client}\t{}",
                    plain(points)
                )
            }
            Self::UnknownClient { client, named_by } => {
                write!(f, "unknown_client\tclient {client}\t{named_by}")
            }
        }
    }
}

/// A decimal as the runbook's statements take it: plain digits, never an exponent.
fn plain(value: &BigDecimal) -> String {
    value.normalized().to_plain_string()
}

#[derive(QueryableByName)]
struct Credit {
    /// `gift-card:<code>` (`gift-card:<redemption id>` on redemptions made before the
    /// reference was the code).
    #[diesel(sql_type = Text)]
    reference: String,
    #[diesel(sql_type = BigInt)]
    client_id: i64,
    #[diesel(sql_type = Numeric)]
    points: BigDecimal,
}

#[derive(QueryableByName)]
struct Redemption {
    /// The reference its credit is sent under.
    #[diesel(sql_type = Text)]
    reference: String,
    #[diesel(sql_type = BigInt)]
    client_id: i64,
    #[diesel(sql_type = Numeric)]
    points: BigDecimal,
    #[diesel(sql_type = Text)]
    status: RedemptionStatus,
    #[diesel(sql_type = Text)]
    credit_target: String,
}

#[derive(QueryableByName)]
struct Named {
    #[diesel(sql_type = BigInt)]
    client_id: i64,
    #[diesel(sql_type = Text)]
    named_by: String,
}

#[derive(QueryableByName)]
struct Client {
    #[diesel(sql_type = BigInt)]
    client_id: i64,
}

/// Every difference between the ledger (`points`) and the catalog and auth databases, in a
/// stable order.
pub async fn run(
    points: &mut AsyncPgConnection,
    catalog: &mut AsyncPgConnection,
    auth: &mut AsyncPgConnection,
) -> diesel::QueryResult<Vec<Difference>> {
    let credits: Vec<Credit> = diesel::sql_query(
        "SELECT reference, client_id, points
         FROM point_entries WHERE kind = 'gift_card_credit' AND reference LIKE 'gift-card:%'",
    )
    .load(points)
    .await?;
    let redemptions: Vec<Redemption> = diesel::sql_query(
        // Redemptions from before the credit's target was recorded have none: `unknown`.
        "SELECT credit_reference AS reference, client_id, points, status,
                COALESCE(credit_target, 'unknown') AS credit_target
         FROM gift_card_redemptions",
    )
    .load(catalog)
    .await?;
    let mut differences = gift_codes(&credits, &redemptions);
    differences.extend(unknown_clients(points, auth).await?);
    differences.sort();
    Ok(differences)
}

/// Clients an order or an account names that the auth database lacks. The ids are read
/// distinct and asked in chunks, and only an unknown one is traced to what names it, so the
/// memory it takes is the number of clients, not of orders.
async fn unknown_clients(
    points: &mut AsyncPgConnection,
    auth: &mut AsyncPgConnection,
) -> diesel::QueryResult<Vec<Difference>> {
    const CHUNK: usize = 10_000;
    let named: Vec<i64> = diesel::sql_query(
        "SELECT payer_id AS client_id FROM point_orders
         UNION SELECT recipient_id FROM point_orders
         UNION SELECT client_id FROM point_accounts",
    )
    .load::<Client>(points)
    .await?
    .into_iter()
    .map(|c| c.client_id)
    .collect();
    let mut unknown = Vec::new();
    for chunk in named.chunks(CHUNK) {
        let known: BTreeSet<i64> =
            diesel::sql_query("SELECT client_id FROM clients WHERE client_id = ANY($1)")
                .bind::<diesel::sql_types::Array<BigInt>, _>(chunk)
                .load::<Client>(auth)
                .await?
                .into_iter()
                .map(|c| c.client_id)
                .collect();
        unknown.extend(chunk.iter().copied().filter(|id| !known.contains(id)));
    }
    if unknown.is_empty() {
        return Ok(Vec::new());
    }
    let naming: Vec<Named> = diesel::sql_query(
        "SELECT payer_id AS client_id, format('payer of order %s', correlation_id) AS named_by
           FROM point_orders WHERE payer_id = ANY($1)
         UNION ALL
         SELECT recipient_id, format('recipient of order %s', correlation_id)
           FROM point_orders WHERE recipient_id = ANY($1)
         UNION ALL
         SELECT client_id, 'points account' FROM point_accounts WHERE client_id = ANY($1)",
    )
    .bind::<diesel::sql_types::Array<BigInt>, _>(&unknown)
    .load(points)
    .await?;
    Ok(naming
        .into_iter()
        .map(|n| Difference::UnknownClient {
            client: n.client_id,
            named_by: n.named_by,
        })
        .collect())
}

/// The ledger's gift-code credits against the catalog's redemptions.
fn gift_codes(credits: &[Credit], redemptions: &[Redemption]) -> Vec<Difference> {
    let redeemed: BTreeMap<&str, &Redemption> = redemptions
        .iter()
        .map(|r| (r.reference.as_str(), r))
        .collect();
    let credited: BTreeMap<&str, &Credit> =
        credits.iter().map(|c| (c.reference.as_str(), c)).collect();
    let mut out = Vec::new();
    for credit in credits {
        match redeemed.get(credit.reference.as_str()) {
            None => out.push(Difference::CreditWithoutRedemption {
                reference: credit.reference.clone(),
                client: credit.client_id,
                points: credit.points.clone(),
            }),
            Some(r) if r.credit_target == "legacy" => out.push(Difference::CreditedInBoth {
                reference: credit.reference.clone(),
                credited: credit.client_id,
                redeemed: r.client_id,
                points: credit.points.clone(),
            }),
            Some(r) if r.client_id != credit.client_id => out.push(Difference::RedeemedByAnother {
                reference: credit.reference.clone(),
                credited: credit.client_id,
                points: credit.points.clone(),
                redeemed: r.client_id,
                status: r.status.to_string(),
            }),
            Some(r) if r.points != credit.points => out.push(Difference::PointsDiffer {
                reference: credit.reference.clone(),
                credited: credit.points.clone(),
                redeemed: r.points.clone(),
            }),
            Some(_) => {}
        }
    }
    for r in redemptions {
        let ours = r.credit_target == "point_service" && r.status == RedemptionStatus::Credited;
        if ours && !credited.contains_key(r.reference.as_str()) {
            out.push(Difference::CreditMissing {
                reference: r.reference.clone(),
                client: r.client_id,
                points: r.points.clone(),
            });
        }
    }
    out
}

/// The subcommand: connects to the three databases, prints each difference and a summary.
/// Exit 0 when they agree, 1 on any difference, 2 when a database cannot be read (nothing
/// concluded).
pub async fn command(points: &db::PoolSettings, catalog_url: &str, auth_url: &str) -> ExitCode {
    match differences(points, catalog_url, auth_url).await {
        Ok(differences) => {
            for difference in &differences {
                println!("{difference}");
            }
            eprintln!("cross-check: {} difference(s)", differences.len());
            if differences.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(reason) => {
            eprintln!("cross-check: nothing concluded: {reason}");
            ExitCode::from(2)
        }
    }
}

async fn differences(
    points: &db::PoolSettings,
    catalog_url: &str,
    auth_url: &str,
) -> Result<Vec<Difference>, String> {
    let connect = async |settings: &db::PoolSettings, name: &str| {
        db::connect(settings)
            .await
            .map_err(|e| format!("cannot connect to the {name} database: {e}"))
    };
    let mut points = connect(points, "points").await?;
    let mut catalog = connect(&db::PoolSettings::one_off(catalog_url), "catalog").await?;
    let mut auth = connect(&db::PoolSettings::one_off(auth_url), "auth").await?;
    run(&mut points, &mut catalog, &mut auth)
        .await
        .map_err(|e| format!("cannot read the databases: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn credit(code: &str, client_id: i64, points: u32) -> Credit {
        Credit {
            reference: format!("gift-card:{code}"),
            client_id,
            points: points.into(),
        }
    }

    fn redemption(code: &str, client_id: i64, points: u32, status: &str) -> Redemption {
        Redemption {
            reference: format!("gift-card:{code}"),
            client_id,
            points: points.into(),
            status: RedemptionStatus::from_word(status).unwrap(),
            credit_target: "point_service".into(),
        }
    }

    #[test]
    fn each_way_a_credit_and_a_redemption_disagree_is_told() {
        let credits = [
            credit("SAME", 1, 100),
            credit("FORGOTTEN", 1, 100),
            credit("OTHER-CLIENT", 1, 100),
            credit("OTHER-POINTS", 1, 100),
            credit("BOTH", 6, 40),
        ];
        let mut legacy = redemption("LEGACY", 3, 50, "credited");
        legacy.credit_target = "legacy".into();
        let mut both = redemption("BOTH", 6, 40, "credited");
        both.credit_target = "legacy".into();
        let redemptions = [
            redemption("SAME", 1, 100, "credited"),
            redemption("OTHER-CLIENT", 2, 100, "pending"),
            redemption("OTHER-POINTS", 1, 250, "credited"),
            redemption("LOST", 4, 70, "credited"),
            // Not credited yet, or credited elsewhere only: nothing the ledger should hold.
            redemption("PENDING", 5, 10, "pending"),
            legacy,
            both,
        ];
        let mut found = gift_codes(&credits, &redemptions);
        found.sort();
        let lines: Vec<String> = found.iter().map(ToString::to_string).collect();
        assert_eq!(
            lines,
            [
                "credit_without_redemption\tgift-card:FORGOTTEN\tclient 1\t100",
                "redeemed_by_another\tgift-card:OTHER-CLIENT\tcredited 100 to 1, redeemed by 2 (pending)",
                "credited_in_both\tgift-card:BOTH\t40 credited to 6 here, redeemed by 6 through the legacy system",
                "points_differ\tgift-card:OTHER-POINTS\tcredited 100, redeemed 250",
                "credit_missing\tgift-card:LOST\tclient 4\t70",
            ]
        );
    }

    #[test]
    fn decimals_are_written_plain() {
        let tiny: BigDecimal = "0.0000001".parse().unwrap();
        assert_eq!(plain(&tiny), "0.0000001");
        assert_eq!(plain(&"100.000".parse().unwrap()), "100");
    }
}
