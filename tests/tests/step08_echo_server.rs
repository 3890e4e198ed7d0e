//! step08's echo server, whose connections are now cancelled with it,
//! still faces the same clients as step04's and step07's: the scenarios of
//! `workshop_tests::echo_server`, against the real binary in `serve` mode.

use workshop_tests::echo_server::EchoServer;

const SERVER: EchoServer = EchoServer {
    package: "step08",
    max_line: step08::apps::echo::MAX_LINE,
    too_long: step08::apps::echo::TOO_LONG,
};

workshop_tests::echo_server_tests!(SERVER);
