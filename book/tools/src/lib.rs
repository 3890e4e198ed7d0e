//! The book's tools. `book` reads the book's sources as mdBook does, so
//! that its checks can find what mdBook misses (an include that points at
//! nothing, a stale pinned diff); `plan` computes the teacher's plans from
//! the minutes each section declares; `notes` takes the speaker notes out
//! of the participants' book and opens them in the teacher's; `figures` redraws the book's figures
//! from timed, traced runs of the steps.
//!
//! Two programs use them: `book-code`, the preprocessor `book/book.toml`
//! runs (each step's code as the authors wrote it, the plans as tables),
//! and `figures`, which writes the figures again after a change to a step.
//! Only the figures build and run the steps, with the test harness: they
//! are the `figures` feature (on by default), which the preprocessor is
//! built without. `workspace` finds the steps as the tool does.
//! The tests of the book (`tests/` beside this file) hold the chapters to
//! the code.

pub mod book;
#[cfg(feature = "figures")]
pub mod figures;
pub mod notes;
pub mod plan;
pub mod workspace;
