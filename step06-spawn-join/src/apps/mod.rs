//! Not the runtime: programs that run on it. In this step, only the demo
//! that `cargo run -p step06` shows.

pub mod demo;
