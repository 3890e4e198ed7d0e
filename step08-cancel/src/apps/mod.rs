//! Not the runtime: programs that run on it. Step 4's echo and slow servers,
//! written as tasks on async sockets, and the demo that `cargo run` shows.
//! Apart from them, step 4's client to type to the echo server from a
//! terminal (`terminal`).

pub mod echo;
pub mod slow;

pub mod demo;

pub mod terminal;
