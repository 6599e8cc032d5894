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
    /// (another client redeemed it after a restore): that client was never credited.
    RedeemedByAnother {
        reference: String,
        credited: i64,
        redeemed: i64,
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
                    "credit_without_redemption\t{reference}\tclient {client}\t{points}"
                )
            }
            Self::RedeemedByAnother {
                reference,
                credited,
                redeemed,
            } => write!(
                f,
                "redeemed_by_another\t{reference}\tcredited to {credited}, redeemed by {redeemed}"
            ),
            Self::PointsDiffer {
                reference,
                credited,
                redeemed,
            } => {
                write!(
                    f,
                    "points_differ\t{reference}\tcredited {credited}, redeemed {redeemed}"
                )
            }
            Self::CreditMissing {
                reference,
                client,
                points,
            } => {
                write!(f, "credit_missing\t{reference}\tclient {client}\t{points}")
            }
            Self::UnknownClient { client, named_by } => {
                write!(f, "unknown_client\tclient {client}\t{named_by}")
            }
        }
    }
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
    status: String,
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
    let named: Vec<Named> = diesel::sql_query(
        "SELECT payer_id AS client_id, format('payer of order %s', correlation_id) AS named_by
           FROM point_orders
         UNION ALL
         SELECT recipient_id, format('recipient of order %s', correlation_id) FROM point_orders
         UNION ALL
         SELECT client_id, 'points account' FROM point_accounts",
    )
    .load(points)
    .await?;
    let wanted: Vec<i64> = named
        .iter()
        .map(|n| n.client_id)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let known: BTreeSet<i64> =
        diesel::sql_query("SELECT client_id FROM clients WHERE client_id = ANY($1)")
            .bind::<diesel::sql_types::Array<BigInt>, _>(&wanted)
            .load::<Client>(auth)
            .await?
            .into_iter()
            .map(|c| c.client_id)
            .collect();
    differences.extend(
        named
            .into_iter()
            .filter(|n| !known.contains(&n.client_id))
            .map(|n| Difference::UnknownClient {
                client: n.client_id,
                named_by: n.named_by,
            }),
    );
    differences.sort();
    Ok(differences)
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
            Some(r) if r.client_id != credit.client_id => out.push(Difference::RedeemedByAnother {
                reference: credit.reference.clone(),
                credited: credit.client_id,
                redeemed: r.client_id,
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
        let ours = r.credit_target == "point_service" && r.status == "credited";
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
            status: status.into(),
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
        ];
        let mut legacy = redemption("LEGACY", 3, 50, "credited");
        legacy.credit_target = "legacy".into();
        let redemptions = [
            redemption("SAME", 1, 100, "credited"),
            redemption("OTHER-CLIENT", 2, 100, "pending"),
            redemption("OTHER-POINTS", 1, 250, "credited"),
            redemption("LOST", 4, 70, "credited"),
            // Not credited yet, or credited elsewhere: nothing the ledger should hold.
            redemption("PENDING", 5, 10, "pending"),
            legacy,
        ];
        let mut found = gift_codes(&credits, &redemptions);
        found.sort();
        assert_eq!(
            found,
            [
                Difference::CreditWithoutRedemption {
                    reference: "gift-card:FORGOTTEN".into(),
                    client: 1,
                    points: 100.into()
                },
                Difference::RedeemedByAnother {
                    reference: "gift-card:OTHER-CLIENT".into(),
                    credited: 1,
                    redeemed: 2
                },
                Difference::PointsDiffer {
                    reference: "gift-card:OTHER-POINTS".into(),
                    credited: 100.into(),
                    redeemed: 250.into()
                },
                Difference::CreditMissing {
                    reference: "gift-card:LOST".into(),
                    client: 4,
                    points: 70.into()
                },
            ]
        );
    }
}
