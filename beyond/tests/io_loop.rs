//! The loop under the reactor, as step 8's own tests see it: the same
//! shared file (`tests/tests/shared/io_loop.rs`), run on `fast`'s loop.

use fast as step;

include!("../../tests/tests/shared/io_loop.rs");
