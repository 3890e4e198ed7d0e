//! step04's echo server, the real binary in `serve` mode, tested over
//! loopback the way clients would find it: the scenarios of
//! `workshop_tests::echo_server`, which every step's echo server passes.

use workshop_tests::echo_server::EchoServer;

const SERVER: EchoServer = EchoServer {
    package: "step04",
    max_line: step04::apps::echo::MAX_LINE,
    too_long: step04::apps::echo::TOO_LONG,
};

workshop_tests::echo_server_tests!(SERVER);
