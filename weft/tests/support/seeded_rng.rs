//! The differential tests' seeded generator (sync, io, time and tasks,
//! net, fs and process): xorshift64*, seeded through splitmix64 (so every
//! seed, 0 too, is fine), and the draws most of them use. A seed always
//! makes the same script. Each test adds the draws only its scripts need
//! in an `impl Rng` of its own.

pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Rng((z ^ (z >> 31)) | 1)
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        (self.next() >> 16) % n
    }

    /// Uniform in `lo..=hi`.
    #[allow(dead_code)]
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below((hi - lo + 1) as u64) as usize
    }

    #[allow(dead_code)]
    pub fn coin(&mut self) -> bool {
        self.below(2) == 1
    }

    /// True with probability `pct` percent.
    #[allow(dead_code)]
    pub fn chance(&mut self, pct: u64) -> bool {
        self.below(100) < pct
    }

    /// An index drawn with the given weights (not all zero).
    #[allow(dead_code)]
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
