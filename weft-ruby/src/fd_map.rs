//! Maps and sets keyed by fd numbers, hashed with one multiplication
//! instead of std's SipHash. The keys are small integers the process
//! chooses (the kernel hands out the lowest free number), never input an
//! attacker picks, so SipHash's flood resistance buys nothing; it cost
//! about 1% of a keep-alive request's CPU, in three lookups per wait.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::os::fd::RawFd;

/// A map from fd numbers.
pub type FdMap<V> = HashMap<RawFd, V, BuildHasherDefault<FdHasher>>;

/// A set of fd numbers.
pub type FdSet = HashSet<RawFd, BuildHasherDefault<FdHasher>>;

/// Fibonacci hashing: the key times 2^64 / φ. The product's high bits
/// (which hashbrown's tag takes) mix every bit of the key; its low bits
/// (the bucket) are the key's own low bits, spread as well as the keys
/// are, and consecutive fd numbers are.
#[derive(Default, Clone, Copy)]
pub struct FdHasher(u64);

impl Hasher for FdHasher {
    fn write(&mut self, bytes: &[u8]) {
        // Only `write_i32` is used by an `i32` key; anything else still
        // hashes correctly, byte by byte.
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_i32(&mut self, n: i32) {
        self.0 = u64::from(n as u32).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fd_numbers_are_told_apart() {
        let mut map = FdMap::default();
        for fd in 0..10_000 {
            map.insert(fd, fd * 2);
        }
        map.remove(&17);
        assert_eq!(map.len(), 9_999);
        assert_eq!(map.get(&5_000), Some(&10_000));
        assert_eq!(map.get(&17), None);
        assert_eq!(map.get(&-1), None);
    }

    #[test]
    fn the_tag_bits_differ_for_neighbouring_numbers() {
        // hashbrown tags a bucket with the hash's top 7 bits: keys that all
        // share them would make every probe compare every key.
        let tags: FdSet = (0..128)
            .map(|fd| {
                let mut h = FdHasher::default();
                h.write_i32(fd);
                (h.finish() >> 57) as i32
            })
            .collect();
        assert!(tags.len() > 64, "only {} distinct tags", tags.len());
    }
}
