//! Step 8's cancellation meets step 7's sockets: a task that is cancelled,
//! timed out or dropped closes what it held and leaves the loop, a server
//! takes its connections with it, and nothing hangs.
//!
//! The tests are in `shared/sockets.rs`, which `fast` (`beyond/`) runs too;
//! the server cancelled here is step 8's demo's.

use step08 as step;
use step08::apps::echo;

include!("shared/sockets.rs");

#[test]
fn a_cancelled_server_closes_its_listener_and_its_connections() {
    a_cancelled_server_closes_its_listener_and_its_connections_serving(echo::serve);
}
