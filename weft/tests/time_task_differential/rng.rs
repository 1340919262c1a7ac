//! The seeded random generator behind the scripts: xorshift64*, seeded
//! through splitmix64 (so every seed, 0 too, is fine), and the few draws
//! the generator needs. A seed always makes the same script.

pub use crate::seeded_rng::Rng;

impl Rng {
    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `1 / n`.
    pub fn one_in(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }

    /// An index drawn with the given weights (not all zero).
    pub fn pick(&mut self, weights: &[u32]) -> usize {
        let total: u32 = weights.iter().sum();
        let mut x = self.below(u64::from(total)) as u32;
        for (i, &w) in weights.iter().enumerate() {
            if x < w {
                return i;
            }
            x -= w;
        }
        unreachable!("weights sum to {total}")
    }
}
