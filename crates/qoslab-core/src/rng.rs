//! Random streams. Every component that draws random numbers owns its own stream, derived
//! from (run seed, stable component id) with SplitMix64, so adding a flow never changes the
//! draws of another component. The generator is xoshiro256++ (crate version pinned exactly).

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Stable component identifiers: a kind tag in the high bits, an index below.
pub mod stream {
    pub const FLOW_START: u64 = 1 << 56;
    pub const FLOW_TRAFFIC: u64 = 2 << 56;
    pub const QUEUE: u64 = 3 << 56;
    pub const MARKER: u64 = 4 << 56;
    /// Flow-arrival processes: arrival times, sizes and their connections' clock phases.
    pub const ARRIVALS: u64 = 5 << 56;
    /// Per-packet sizes of a UDP source with a size distribution.
    pub const PACKET_SIZES: u64 = 6 << 56;
    /// A link direction's timing noise (`link.jitter`).
    pub const LINK_JITTER: u64 = 7 << 56;
}

fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[derive(Clone, Debug)]
pub struct SimRng(Xoshiro256PlusPlus);

impl SimRng {
    /// The stream of component `component` in a run with seed `seed`.
    pub fn derive(seed: u64, component: u64) -> Self {
        let s = splitmix64(
            splitmix64(seed) ^ splitmix64(component.wrapping_add(0x5851_F42D_4C95_7F2D)),
        );
        SimRng(Xoshiro256PlusPlus::seed_from_u64(s))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in [0, 1) with 53 random bits.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in [lo, hi).
    pub fn uniform_range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.uniform()
    }

    /// Exponentially distributed with the given mean.
    pub fn exponential(&mut self, mean: f64) -> f64 {
        // 1 - u lies in (0, 1], so the logarithm is finite.
        -mean * (1.0 - self.uniform()).ln()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let mut a = SimRng::derive(7, stream::QUEUE | 1);
        let mut b = SimRng::derive(7, stream::QUEUE | 1);
        let mut c = SimRng::derive(7, stream::QUEUE | 2);
        let mut d = SimRng::derive(8, stream::QUEUE | 1);
        let xa: Vec<u64> = (0..4).map(|_| a.next_u64()).collect();
        let xb: Vec<u64> = (0..4).map(|_| b.next_u64()).collect();
        let xc: Vec<u64> = (0..4).map(|_| c.next_u64()).collect();
        let xd: Vec<u64> = (0..4).map(|_| d.next_u64()).collect();
        assert_eq!(xa, xb);
        assert_ne!(xa, xc);
        assert_ne!(xa, xd);
    }

    #[test]
    fn uniform_mean_and_exponential_mean() {
        let mut r = SimRng::derive(1, 1);
        let n = 200_000;
        let m: f64 = (0..n).map(|_| r.uniform()).sum::<f64>() / n as f64;
        assert!((m - 0.5).abs() < 0.005, "{m}");
        let e: f64 = (0..n).map(|_| r.exponential(2.0)).sum::<f64>() / n as f64;
        assert!((e - 2.0).abs() < 0.03, "{e}");
    }
}
