//! Not the runtime: programs that run on it. A listening socket and the
//! reads and writes every server and client here share (`net`), the echo
//! server (`echo`), a server that answers late (`slow`), a client (`client`),
//! and the demo that puts them on one loop (`demo`). Apart from them, a
//! client to type to the echo server from a terminal (`terminal`).

// In reading order: each uses only the ones above it.
pub mod net;

pub mod echo;
pub mod slow;

pub mod client;

pub mod demo;

pub mod terminal;
