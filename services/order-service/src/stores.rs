//! Stores: one store's detail, a brand's branches, and the nearest branch.
//!
//! Nearest store (the spec's rules): candidates are the brand's stores with management
//! status `active` and a real location ((0, 0) counts as none); the nearest operational one
//! (`is_online` true and ordering not disabled) within 12 km wins, even over a closer
//! non-operational one; otherwise the nearest candidate at any distance; ties go to the
//! lower id. No answer (unknown brand, no candidate, bad coordinates, an internal failure)
//! is `{"store_id": null}`.

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde::Serialize;

use catalog::schema::stores;

pub const OPERATIONAL_RADIUS_KM: f64 = 12.0;
const EARTH_RADIUS_KM: f64 = 6371.0088;

#[derive(Debug, Clone, Serialize, Queryable, Selectable)]
#[diesel(table_name = stores)]
pub struct Store {
    pub id: i64,
    /// The store's collection (brand) id.
    pub merchant_id: i64,
    pub name: String,
    pub latitude: Option<f64>,
    pub longitude: Option<f64>,
    pub management_status: String,
    pub is_online: Option<bool>,
    pub store_disabled_ordering: bool,
}

/// An active store, or `None` for an unknown or inactive one.
pub async fn find_active(conn: &mut AsyncPgConnection, id: i64) -> QueryResult<Option<Store>> {
    stores::table
        .find(id)
        .filter(stores::management_status.eq("active"))
        .select(Store::as_select())
        .first(conn)
        .await
        .optional()
}

/// A brand's active stores, by id.
pub async fn branches(conn: &mut AsyncPgConnection, merchant_id: i64) -> QueryResult<Vec<Store>> {
    stores::table
        .filter(
            stores::merchant_id
                .eq(merchant_id)
                .and(stores::management_status.eq("active")),
        )
        .order(stores::id)
        .select(Store::as_select())
        .load(conn)
        .await
}

/// A candidate for the nearest store.
#[derive(Debug, Clone, Copy, PartialEq, Queryable)]
pub struct Candidate {
    pub id: i64,
    pub latitude: f64,
    pub longitude: f64,
    pub operational: bool,
}

/// The candidates of a real merchant id: active, with a real location.
pub async fn candidates(
    conn: &mut AsyncPgConnection,
    real_merchant_id: i64,
) -> QueryResult<Vec<Candidate>> {
    let rows: Vec<(i64, f64, f64, Option<bool>, bool)> = stores::table
        .filter(stores::real_merchant_id.eq(real_merchant_id))
        .filter(stores::management_status.eq("active"))
        .filter(
            stores::latitude
                .is_not_null()
                .and(stores::longitude.is_not_null()),
        )
        .select((
            stores::id,
            stores::latitude.assume_not_null(),
            stores::longitude.assume_not_null(),
            stores::is_online,
            stores::store_disabled_ordering,
        ))
        .load(conn)
        .await?;
    Ok(rows
        .into_iter()
        .filter(|(_, lat, lon, _, _)| !(*lat == 0.0 && *lon == 0.0))
        .map(|(id, latitude, longitude, online, disabled)| Candidate {
            id,
            latitude,
            longitude,
            operational: online == Some(true) && !disabled,
        })
        .collect())
}

/// Great-circle distance in kilometres.
pub fn distance_km(lat1: f64, lon1: f64, lat2: f64, lon2: f64) -> f64 {
    let (phi1, phi2) = (lat1.to_radians(), lat2.to_radians());
    let d_phi = (lat2 - lat1).to_radians();
    let d_lambda = (lon2 - lon1).to_radians();
    let a = (d_phi / 2.0).sin().powi(2) + phi1.cos() * phi2.cos() * (d_lambda / 2.0).sin().powi(2);
    2.0 * EARTH_RADIUS_KM * a.sqrt().atan2((1.0 - a).sqrt())
}

/// The spec's choice among candidates for a customer at (latitude, longitude).
pub fn nearest(candidates: &[Candidate], latitude: f64, longitude: f64) -> Option<i64> {
    let by_distance = |only_operational: bool, within: f64| {
        candidates
            .iter()
            .filter(|c| !only_operational || c.operational)
            .map(|c| {
                (
                    distance_km(latitude, longitude, c.latitude, c.longitude),
                    c.id,
                )
            })
            .filter(|(d, _)| *d <= within)
            .min_by(|(da, ia), (db, ib)| da.total_cmp(db).then(ia.cmp(ib)))
            .map(|(_, id)| id)
    };
    by_distance(true, OPERATIONAL_RADIUS_KM).or_else(|| by_distance(false, f64::INFINITY))
}

/// Coordinates from the query: finite numbers in range, else none.
pub fn coordinates(latitude: Option<&str>, longitude: Option<&str>) -> Option<(f64, f64)> {
    let read = |raw: Option<&str>, limit: f64| {
        raw?.trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && v.abs() <= limit)
    };
    Some((read(latitude, 90.0)?, read(longitude, 180.0)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    const OLAYA: (f64, f64) = (24.6907, 46.6855);

    fn c(id: i64, lat: f64, lon: f64, operational: bool) -> Candidate {
        Candidate {
            id,
            latitude: lat,
            longitude: lon,
            operational,
        }
    }

    #[test]
    fn distance_is_about_right() {
        // Olaya to Al Malqa in Riyadh: about 14 km.
        let d = distance_km(OLAYA.0, OLAYA.1, 24.8146, 46.6177);
        assert!((13.0..16.0).contains(&d), "{d}");
    }

    #[test]
    fn an_operational_store_within_12_km_beats_a_closer_closed_one() {
        let stores = [c(1, 24.6910, 46.6860, false), c(2, 24.7300, 46.6700, true)];
        assert_eq!(nearest(&stores, OLAYA.0, OLAYA.1), Some(2));
    }

    #[test]
    fn beyond_12_km_the_nearest_at_any_distance_wins_online_or_not() {
        let stores = [c(1, 24.9000, 46.6000, true), c(2, 24.8500, 46.6500, false)];
        assert_eq!(nearest(&stores, OLAYA.0, OLAYA.1), Some(2));
    }

    #[test]
    fn ties_go_to_the_lower_id() {
        let stores = [c(9, 24.70, 46.69, true), c(4, 24.70, 46.69, true)];
        assert_eq!(nearest(&stores, OLAYA.0, OLAYA.1), Some(4));
        assert_eq!(nearest(&[], OLAYA.0, OLAYA.1), None);
    }

    #[test]
    fn unreadable_coordinates_are_none() {
        assert_eq!(coordinates(Some("24.7"), Some("46.6")), Some((24.7, 46.6)));
        for (lat, lon) in [
            (None, Some("1")),
            (Some("abc"), Some("1")),
            (Some("91"), Some("1")),
            (Some("NaN"), Some("1")),
            (Some("1"), Some("181")),
        ] {
            assert_eq!(coordinates(lat, lon), None);
        }
    }
}
