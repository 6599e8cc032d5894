//! `DRILL_PLANT`: the drills' switch for making the money wrong on purpose (a double credit, a
//! missing one), so that a run shows their money checks fail (`make restore-drill`,
//! `make failover`).

/// What `DRILL_PLANT` asks for, as (double, missing): `double`, `missing`, both
/// (comma-separated), else nothing.
pub fn plants() -> (bool, bool) {
    let raw = std::env::var("DRILL_PLANT").unwrap_or_default();
    let mut plant = (false, false);
    for word in raw.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        match word {
            "double" => plant.0 = true,
            "missing" => plant.1 = true,
            other => panic!("DRILL_PLANT={raw:?}: {other:?} is neither double nor missing"),
        }
    }
    plant
}
