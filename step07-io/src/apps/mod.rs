//! Not the runtime: programs that run on it. Step 4's echo and slow servers,
//! written as tasks on async sockets, and the demo that `cargo run` shows.

pub mod echo;
pub mod slow;

pub mod demo;
