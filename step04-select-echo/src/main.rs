//! `cargo run -p step04`: placeholder until the demo lands.
fn main() {}
