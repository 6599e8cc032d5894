//! Replays a cargo-fuzz target's inputs through its check function in `make test`, so the
//! targets' properties and inputs run on stable without cargo-fuzz. Included with
//! `#[path]` by the test crates that own the checks (each two folders below the repository
//! root, which `fuzz_inputs` relies on), as the fuzz targets include those checks.

/// Every input of the cargo-fuzz target `target`: its committed seeds
/// (`fuzz/seeds/<target>/`, which must exist and hold at least one file) and, when a local
/// `make fuzz` left one, its corpus (`fuzz/corpus/<target>/`).
fn fuzz_inputs(target: &str) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let fuzz = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    let mut inputs = Vec::new();
    for folder in ["seeds", "corpus"] {
        let dir = fuzz.join(folder).join(target);
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(_) if folder == "corpus" => continue,
            Err(e) => panic!("{}: {e}", dir.display()),
        };
        for entry in entries {
            let path = entry
                .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
                .path();
            if path.is_file() {
                let data =
                    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                inputs.push((path, data));
            }
        }
    }
    assert!(
        inputs
            .iter()
            .any(|(path, _)| path.starts_with(fuzz.join("seeds"))),
        "no seeds for the fuzz target {target}"
    );
    inputs.sort();
    inputs
}

/// Runs `check` on every input of the fuzz target `target`, as the target does, and fails
/// with each input the target would report (a failed check or a panic), by file.
pub fn replay_fuzz_inputs(target: &str, check: impl Fn(&[u8]) -> Result<(), String>) {
    let inputs = fuzz_inputs(target);
    let problems: Vec<String> = inputs
        .iter()
        .filter_map(|(path, data)| {
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(data)));
            match outcome {
                Ok(Ok(())) => None,
                Ok(Err(problem)) => Some(format!("{}: {problem}", path.display())),
                Err(_) => Some(format!("{}: panicked", path.display())),
            }
        })
        .collect();
    assert!(
        problems.is_empty(),
        "{} of {} inputs of the fuzz target {target} fail its checks:\n{}",
        problems.len(),
        inputs.len(),
        problems.join("\n")
    );
}
