//! `tests/tests/step06_panics.rs` on `fast`: step 8 keeps step 6's panics,
//! and `fast` keeps step 8's API. The file names its crate `step06`; here
//! that name is `fast` (Cargo lets a package depend on `fast` under one name
//! only, and a library of this package named `step06` would collide with
//! step 6's own in the build folder).

extern crate step08 as step06;

#[path = "../../tests/tests/step06_panics.rs"]
mod step06_panics;
