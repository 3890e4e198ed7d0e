//! The hash of the loop's socket table: tokens are counted out by the
//! loop, so a number is its own hash.

use std::hash::{BuildHasherDefault, Hasher};

/// Socket tokens are counted out by the loop, so a number is its
/// own hash; the low bits are copied into the top seven, where `HashMap`
/// reads its tag.
pub(super) type IdentityHash = BuildHasherDefault<IdHasher>;

#[derive(Default)]
pub(super) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn write(&mut self, _: &[u8]) {
        unreachable!("ids hash as one integer");
    }

    fn write_usize(&mut self, id: usize) {
        self.write_u64(id as u64);
    }

    fn write_u64(&mut self, id: u64) {
        self.0 = id ^ (id << 57);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}
