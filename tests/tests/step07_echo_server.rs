//! step07's echo server, tasks on the reactor this time, faces the same
//! clients as step04's callback server: the scenarios of
//! `workshop_tests::echo_server`, against the real binary in `serve` mode.

use workshop_tests::echo_server::EchoServer;

const SERVER: EchoServer = EchoServer {
    package: "step07",
    max_line: step07::apps::echo::MAX_LINE,
    too_long: step07::apps::echo::TOO_LONG,
};

workshop_tests::echo_server_tests!(SERVER);
