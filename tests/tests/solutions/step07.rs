//! A solution to chapter 7's exercise. Try it yourself before reading on.

use std::io::{self, Read};
use std::rc::Rc;

use super::{Reader, readable};

// ANCHOR: read_some
/// Tries the read first, and waits only once the socket has said
/// `WouldBlock`. Bytes that came while no one waited are read at once; and
/// after a `WouldBlock`, the next byte to arrive brings an event of its own.
pub async fn read_some(reader: Rc<Reader>) -> io::Result<Vec<u8>> {
    let mut buf = [0; 1024];
    loop {
        match (&reader.stream).read(&mut buf) {
            Ok(n) => return Ok(buf[..n].to_vec()),
            Err(err) if err.kind() == io::ErrorKind::WouldBlock => {
                readable(&reader.lp, reader.token).await;
            }
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
}
// ANCHOR_END: read_some
