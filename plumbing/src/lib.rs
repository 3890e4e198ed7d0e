//! Plumbing: what every step needs and no step teaches. Read a step's own
//! files for the lesson; come here only to see how the machinery works.
//!
//! Each step's code is copied from the step before, so that each step is
//! complete on its own. What is no step's lesson lives here once instead,
//! so that the diff between two steps shows the capability that step adds
//! and nothing else.
//!
//! Two small formatters live here too because the authors' tools share
//! them with the trace or with each other: `digits` (thousands grouped)
//! and `calendar` (a civil date without a date crate).

pub mod calendar;
pub mod console;
pub mod digits;
pub mod trace;
