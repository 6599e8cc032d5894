//! `make api-documents`: writes the documents by audience into `docs/api/` (or the folder
//! given), replacing the files there. The test `published` fails while they are stale.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let folder = std::env::args_os().nth(1).map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/api"),
        PathBuf::from,
    );
    for (file, text) in api_documents::documents() {
        let path = folder.join(&file);
        if let Err(error) = std::fs::write(&path, text) {
            eprintln!("api-documents: cannot write {}: {error}", path.display());
            return ExitCode::FAILURE;
        }
        println!("{}", path.display());
    }
    ExitCode::SUCCESS
}
