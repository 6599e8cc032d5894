//! The nearest branch of a brand.
//!
//! The spec's rules: candidates are the brand's stores with management status `active` and a
//! real location ((0, 0) counts as none); the nearest operational one (`is_online` true and
//! ordering not disabled) within 12 km wins, even over a closer non-operational one;
//! otherwise the nearest candidate at any distance; ties go to the lower id. No answer
//! (unknown brand, no candidate, bad coordinates, an internal failure) is
//! `{"store_id": null}`.
//!
//! The app asks on every home-screen open, and a big brand has 10 000 branches, so the
//! candidates are not read per request: each replica keeps a [`BranchIndex`] per brand for
//! `NEAREST_STORE_CACHE_SECONDS` (default 10). What that risks: a branch that opens, closes
//! or goes offline is seen up to that long late by the banner's landing (the store pages
//! themselves read the database). Memory is bounded by a total of [`MAX_CACHED_CANDIDATES`]
//! candidates (32 bytes each); a brand bigger than that is indexed per request, uncached.

use std::sync::Arc;
use std::time::Duration;

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use catalog_db::schema::stores;

pub const OPERATIONAL_RADIUS_KM: f64 = 12.0;
const EARTH_RADIUS_KM: f64 = 6371.0088;
/// The cache's bound, in candidates over all brands (about 8 MB).
pub const MAX_CACHED_CANDIDATES: u64 = 250_000;
/// Distances are compared with this much slack (1 µm) where a bound and a computed distance
/// meet, so that floating-point rounding cannot skip a candidate.
const SLACK_KM: f64 = 1e-9;

/// A candidate for the nearest store.
#[derive(Debug, Clone, Copy, PartialEq)]
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

/// A brand's candidates sorted by latitude. The distance along the meridian,
/// `R × |Δlatitude|`, never exceeds the great-circle distance, so a search that walks
/// outwards from the customer's latitude can stop as soon as that bound passes the best
/// distance found: in a city-sized brand it looks at a few hundred branches, not all.
#[derive(Debug, Default)]
pub struct BranchIndex {
    by_latitude: Vec<Candidate>,
}

impl BranchIndex {
    pub fn new(mut candidates: Vec<Candidate>) -> Self {
        candidates.sort_by(|a, b| a.latitude.total_cmp(&b.latitude));
        Self {
            by_latitude: candidates,
        }
    }

    pub fn len(&self) -> usize {
        self.by_latitude.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_latitude.is_empty()
    }

    /// The spec's choice for a customer at (latitude, longitude).
    pub fn nearest(&self, latitude: f64, longitude: f64) -> Option<i64> {
        self.closest(latitude, longitude, OPERATIONAL_RADIUS_KM, true)
            .or_else(|| self.closest(latitude, longitude, f64::INFINITY, false))
    }

    /// The closest candidate within `within` km (operational ones only, if asked); the
    /// lower id on a tie.
    fn closest(
        &self,
        latitude: f64,
        longitude: f64,
        within: f64,
        only_operational: bool,
    ) -> Option<i64> {
        let stores = &self.by_latitude;
        let bound = |c: &Candidate| (c.latitude - latitude).abs().to_radians() * EARTH_RADIUS_KM;
        // `below` walks down from the customer's latitude, `above` walks up; each step takes
        // the side with the smaller bound, so the bounds seen never decrease and the first
        // one past the best distance ends the search on both sides.
        let start = stores.partition_point(|c| c.latitude < latitude);
        let (mut below, mut above) = (start, start);
        let mut best: Option<(f64, i64)> = None;
        loop {
            let down = below.checked_sub(1).map(|i| (bound(&stores[i]), i));
            let up = stores.get(above).map(|c| (bound(c), above));
            let (lower_bound, i) = match (down, up) {
                (Some(d), Some(u)) => {
                    if d.0 <= u.0 {
                        d
                    } else {
                        u
                    }
                }
                (Some(d), None) => d,
                (None, Some(u)) => u,
                (None, None) => break,
            };
            let limit = best.map_or(within, |(d, _)| d.min(within));
            if lower_bound > limit + SLACK_KM {
                break;
            }
            if i < start {
                below = i;
            } else {
                above = i + 1;
            }
            let c = &stores[i];
            if only_operational && !c.operational {
                continue;
            }
            let d = distance_km(latitude, longitude, c.latitude, c.longitude);
            let better = best.is_none_or(|(bd, bid)| d.total_cmp(&bd).then(c.id.cmp(&bid)).is_lt());
            if d <= within && better {
                best = Some((d, c.id));
            }
        }
        best.map(|(_, id)| id)
    }
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

/// Why a brand's index could not be built.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("no database connection: {0}")]
    Pool(#[from] db::PoolError),
    #[error("candidates query failed: {0}")]
    Query(#[from] diesel::result::Error),
}

/// The per-replica indexes, by real merchant id; `None` when the cache is off (TTL 0).
/// Concurrent misses for one brand share one database read. Failures are not kept.
#[derive(Clone)]
pub struct BranchIndexes {
    cache: Option<moka::future::Cache<i64, Arc<BranchIndex>>>,
}

impl BranchIndexes {
    pub fn new(ttl: Duration) -> Self {
        let cache = (!ttl.is_zero()).then(|| {
            moka::future::Cache::builder()
                .max_capacity(MAX_CACHED_CANDIDATES)
                // An unknown brand still weighs 1, so a scan of ids stays bounded.
                .weigher(|_, index: &Arc<BranchIndex>| {
                    u32::try_from(index.len()).unwrap_or(u32::MAX).max(1)
                })
                .time_to_live(ttl)
                .build()
        });
        Self { cache }
    }

    /// The brand's index, from the cache or the database.
    pub async fn get(
        &self,
        pool: &db::Pool,
        real_merchant_id: i64,
    ) -> Result<Arc<BranchIndex>, Arc<LoadError>> {
        let load = async {
            let mut conn = pool.get().await?;
            let candidates = candidates(&mut conn, real_merchant_id).await?;
            Ok::<_, LoadError>(Arc::new(BranchIndex::new(candidates)))
        };
        match &self.cache {
            Some(cache) => cache.try_get_with(real_merchant_id, load).await,
            None => load.await.map_err(Arc::new),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const OLAYA: (f64, f64) = (24.6907, 46.6855);

    fn c(id: i64, lat: f64, lon: f64, operational: bool) -> Candidate {
        Candidate {
            id,
            latitude: lat,
            longitude: lon,
            operational,
        }
    }

    fn nearest(stores: &[Candidate], lat: f64, lon: f64) -> Option<i64> {
        BranchIndex::new(stores.to_vec()).nearest(lat, lon)
    }

    /// The rules read literally: every candidate's distance, no index.
    fn nearest_by_scan(stores: &[Candidate], lat: f64, lon: f64) -> Option<i64> {
        let by_distance = |only_operational: bool, within: f64| {
            stores
                .iter()
                .filter(|c| !only_operational || c.operational)
                .map(|c| (distance_km(lat, lon, c.latitude, c.longitude), c.id))
                .filter(|(d, _)| *d <= within)
                .min_by(|(da, ia), (db, ib)| da.total_cmp(db).then(ia.cmp(ib)))
                .map(|(_, id)| id)
        };
        by_distance(true, OPERATIONAL_RADIUS_KM).or_else(|| by_distance(false, f64::INFINITY))
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
    fn a_store_on_the_same_latitude_across_the_antimeridian_is_found() {
        let stores = [c(1, 10.0, 179.9, false), c(2, 10.5, 170.0, false)];
        assert_eq!(nearest(&stores, 10.0, -179.9), Some(1));
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

    /// Coordinates on a coarse grid, so that ties and equal latitudes are common.
    fn candidate() -> impl Strategy<Value = Candidate> {
        (1i64..60, -40i32..40, -40i32..40, any::<bool>()).prop_map(|(id, lat, lon, op)| {
            c(
                id,
                24.7 + f64::from(lat) * 0.01,
                46.7 + f64::from(lon) * 0.01,
                op,
            )
        })
    }

    proptest! {
        /// The index answers exactly what the literal scan answers, in a city and worldwide.
        #[test]
        fn the_index_agrees_with_the_literal_rules(
            stores in prop::collection::vec(candidate(), 0..80),
            lat in -40i32..40, lon in -40i32..40,
        ) {
            let (lat, lon) = (24.7 + f64::from(lat) * 0.011, 46.7 + f64::from(lon) * 0.011);
            prop_assert_eq!(nearest(&stores, lat, lon), nearest_by_scan(&stores, lat, lon));
        }

        #[test]
        fn the_index_agrees_with_the_literal_rules_worldwide(
            stores in prop::collection::vec(
                (1i64..60, -90.0f64..=90.0, -180.0f64..=180.0, any::<bool>())
                    .prop_map(|(id, lat, lon, op)| c(id, lat, lon, op)),
                0..40),
            lat in -90.0f64..=90.0, lon in -180.0f64..=180.0,
        ) {
            prop_assert_eq!(nearest(&stores, lat, lon), nearest_by_scan(&stores, lat, lon));
        }
    }
}
