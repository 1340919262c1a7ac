//! The seeded random generator behind the scripts: xorshift64*, seeded
//! through splitmix64 (so every seed, 0 too, is fine), and the draws only
//! these scripts need (`pick` is the shared one). A seed always makes the
//! same script.

pub use crate::seeded_rng::Rng;

impl Rng {
    /// Uniform in `lo..=hi`.
    pub fn range_u64(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `1 / n`.
    pub fn one_in(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }
}
