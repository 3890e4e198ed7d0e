//! Where the workshop is and what its steps are, as the tool sees them:
//! the book's preprocessor asks `cargo workshop`'s crate, which it needs
//! anyway for the authors' copies, rather than the test harness, so that
//! building the preprocessor does not build the tests' harness too.

use std::fs;
use std::path::{Path, PathBuf};

use workshop::authors::to_lf;
use workshop::step;

/// The repository's root folder, found from this package's: at run time
/// first (`CARGO_MANIFEST_DIR`, as Cargo names it to what it runs), else
/// where it was built.
pub fn workspace_root() -> PathBuf {
    let package = std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from);
    step::find_root(&package).unwrap_or_else(|err| panic!("{err}"))
}

/// Reads a text file with line endings made `\n`, so a checkout that turned
/// them into `\r\n` reads the same as one that did not.
pub fn read_text(path: &Path) -> String {
    let text = fs::read_to_string(path)
        .unwrap_or_else(|err| panic!("could not read {}: {err}", path.display()));
    to_lf(&text)
}

/// Every step's folder, in step order: the workspace members whose package
/// is named `stepNN`, as the tool counts them.
pub fn step_folders() -> Vec<String> {
    step::step_folders(&workspace_root())
        .into_iter()
        .map(|(_, folder)| folder)
        .collect()
}

/// The number of the step in `folder` (a folder or chapter name such as
/// `step03-sleep`), or `None` if no step has that folder.
pub fn step_number(folder: &str) -> Option<u32> {
    step::step_folders(&workspace_root())
        .into_iter()
        .find_map(|(number, name)| (name == folder).then_some(number))
}
