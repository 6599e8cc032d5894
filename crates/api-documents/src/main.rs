//! `make api-documents`: writes the documents by audience into `docs/api/` (or the folder
//! given), replacing the files there. The test `published` fails while they are stale.
//! `api-documents --served DIR` writes instead each service's whole document as it serves it
//! at `/openapi.json` (`DIR/<service>.json`), for `scripts/check-api-documents.sh`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let first = args.next();
    let written = if first.as_deref() == Some("--served".as_ref()) {
        let Some(folder) = args.next().map(PathBuf::from) else {
            eprintln!("api-documents: --served needs a folder");
            return ExitCode::FAILURE;
        };
        api_documents::services()
            .into_iter()
            .map(|service| {
                let text = serde_json::to_string_pretty(&service.document)
                    .unwrap_or_else(|e| format!("cannot serialise: {e}"));
                write(&folder, &format!("{}.json", service.name), &text)
            })
            .collect::<Result<Vec<_>, _>>()
    } else {
        let folder = first.map_or_else(
            || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/api"),
            PathBuf::from,
        );
        api_documents::documents()
            .into_iter()
            .map(|(file, text)| write(&folder, &file, &text))
            .collect()
    };
    match written {
        Ok(_) => ExitCode::SUCCESS,
        Err(()) => ExitCode::FAILURE,
    }
}

fn write(folder: &Path, file: &str, text: &str) -> Result<(), ()> {
    let path = folder.join(file);
    std::fs::write(&path, text).map_err(|error| {
        eprintln!("api-documents: cannot write {}: {error}", path.display());
    })?;
    println!("{}", path.display());
    Ok(())
}
