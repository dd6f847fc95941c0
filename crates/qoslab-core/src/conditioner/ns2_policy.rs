//! The `ns2` flavour of the rate meters: ns-2.35 dsRED's policies (`diffserv/dsPolicy.cc`),
//! rule for rule, so that `crosscheck` compares like with like. The reference meters
//! ([`super::token_bucket`], [`super::srtcm`], [`super::trtcm`], [`super::tswtcm`]) follow the
//! RFCs with exact integer credit; docs/ns2-behaviour.md §9.4 lists what ns-2 does instead:
//!
//! 1. **Floating point.** Rates are bytes/s and buckets bytes in `double`; time is the
//!    simulator clock in seconds (`double`); each arrival adds `CIR·(now − arrival)` and then
//!    caps the bucket. With CBS a multiple of the packet size the sum of refills can fall a
//!    hair short of the packet (999.999… < 1000), which the exact meters never do.
//! 2. **Buckets start full and fill only at arrivals** (a bucket capped at one arrival loses
//!    the excess); srTCM pours C's overflow into E.
//! 3. **Colour-blind.** The incoming codepoint is never read.
//! 4. **TSW.** `avgRate = (avgRate·winLen + size) / (now − tFront + winLen)`, the packet
//!    included, starting from `avgRate = CIR` at time 0. TSW2CM draws only when
//!    avgRate > CIR and demotes if `u ≤ 1 − CIR/avgRate`; TSW3CM draws once per packet and
//!    compares `avgRate·(1 − u)` with PIR, then CIR. The window is 1 s for TSW3CM.

use super::{Color, Meter};
use crate::rng::SimRng;
use crate::units::SimTime;

/// Which of dsRED's policies, with its parameters (rates in bytes/s, sizes in bytes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Policy {
    TokenBucket {
        cir: f64,
        cbs: f64,
    },
    SrTcm {
        cir: f64,
        cbs: f64,
        ebs: f64,
    },
    TrTcm {
        cir: f64,
        cbs: f64,
        pir: f64,
        pbs: f64,
    },
    Tsw2cm {
        cir: f64,
        win_len: f64,
    },
    Tsw3cm {
        cir: f64,
        pir: f64,
    },
}

/// One dsRED policy-table entry's state (`policyTableEntry`).
#[derive(Debug, Clone)]
pub struct Ns2Policy {
    pub policy: Policy,
    pub c_bucket: f64,
    pub e_bucket: f64,
    pub p_bucket: f64,
    pub avg_rate: f64,
    /// `arrivalTime`, seconds.
    pub arrival: f64,
}

impl Ns2Policy {
    /// Rates in bit/s (stored ÷ 8, as `addPolicyEntry` does), sizes in bytes.
    pub fn new(policy: Policy) -> Ns2Policy {
        let (c, e, p, rate) = match policy {
            Policy::TokenBucket { cir, cbs } => (cbs, 0.0, 0.0, cir),
            Policy::SrTcm { cir, cbs, ebs } => (cbs, ebs, 0.0, cir),
            Policy::TrTcm { cir, cbs, pbs, .. } => (cbs, 0.0, pbs, cir),
            Policy::Tsw2cm { cir, .. } | Policy::Tsw3cm { cir, .. } => (0.0, 0.0, 0.0, cir),
        };
        Ns2Policy {
            policy,
            c_bucket: c,
            e_bucket: e,
            p_bucket: p,
            avg_rate: rate,
            arrival: 0.0,
        }
    }

    /// `tokens` into `bucket`, capped at `size`; `Some(what did not fit)` when capped.
    #[inline]
    fn fill(bucket: &mut f64, tokens: f64, size: f64) -> Option<f64> {
        if *bucket + tokens <= size {
            *bucket += tokens;
            None
        } else {
            let over = tokens - (size - *bucket);
            *bucket = size;
            Some(over)
        }
    }

    /// `applyMeter`: brings the state up to `now` (seconds) for a packet of `size` bytes.
    fn apply_meter(&mut self, now: f64, size: f64) {
        let dt = now - self.arrival;
        match self.policy {
            Policy::TokenBucket { cir, cbs } => {
                Self::fill(&mut self.c_bucket, cir * dt, cbs);
            }
            Policy::SrTcm { cir, cbs, ebs } => {
                if let Some(over) = Self::fill(&mut self.c_bucket, cir * dt, cbs) {
                    Self::fill(&mut self.e_bucket, over, ebs);
                }
            }
            Policy::TrTcm { cir, cbs, pir, pbs } => {
                Self::fill(&mut self.c_bucket, cir * dt, cbs);
                Self::fill(&mut self.p_bucket, pir * dt, pbs);
            }
            Policy::Tsw2cm { win_len, .. } => self.tsw(now, size, win_len),
            Policy::Tsw3cm { .. } => self.tsw(now, size, 1.0),
        }
        self.arrival = now;
    }

    #[inline]
    fn tsw(&mut self, now: f64, size: f64, win_len: f64) {
        let bytes_in_tsw = self.avg_rate * win_len;
        self.avg_rate = (bytes_in_tsw + size) / (now - self.arrival + win_len);
    }

    /// `applyPolicer`: the colour of a packet of `size` bytes.
    fn apply_policer(&mut self, size: f64, rng: &mut SimRng) -> Color {
        match self.policy {
            Policy::TokenBucket { .. } => {
                if self.c_bucket - size >= 0.0 {
                    self.c_bucket -= size;
                    Color::Green
                } else {
                    Color::Yellow
                }
            }
            Policy::SrTcm { .. } => {
                if self.c_bucket - size >= 0.0 {
                    self.c_bucket -= size;
                    Color::Green
                } else if self.e_bucket - size >= 0.0 {
                    self.e_bucket -= size;
                    Color::Yellow
                } else {
                    Color::Red
                }
            }
            Policy::TrTcm { .. } => {
                if self.p_bucket - size < 0.0 {
                    Color::Red
                } else if self.c_bucket - size < 0.0 {
                    self.p_bucket -= size;
                    Color::Yellow
                } else {
                    self.c_bucket -= size;
                    self.p_bucket -= size;
                    Color::Green
                }
            }
            Policy::Tsw2cm { cir, .. } => {
                if self.avg_rate > cir && rng.uniform() <= 1.0 - cir / self.avg_rate {
                    Color::Yellow
                } else {
                    Color::Green
                }
            }
            Policy::Tsw3cm { cir, pir } => {
                let r = self.avg_rate * (1.0 - rng.uniform());
                if r > pir {
                    Color::Red
                } else if r > cir {
                    Color::Yellow
                } else {
                    Color::Green
                }
            }
        }
    }
}

impl Meter for Ns2Policy {
    fn meter(&mut self, now: SimTime, size_bytes: u32, _pre: Color, rng: &mut SimRng) -> Color {
        let size = size_bytes as f64;
        self.apply_meter(now as f64 * 1e-9, size);
        self.apply_policer(size, rng)
    }

    fn token_level(&self, _now: SimTime) -> Option<f64> {
        match self.policy {
            Policy::Tsw2cm { .. } | Policy::Tsw3cm { .. } => None,
            _ => Some(self.c_bucket),
        }
    }
}

/// A rate meter in the flavour its scenario chose.
#[derive(Debug, Clone)]
pub enum FlavouredMeter<R> {
    Reference(R),
    Ns2(Ns2Policy),
}

impl<R: Meter> Meter for FlavouredMeter<R> {
    #[inline]
    fn meter(&mut self, now: SimTime, size_bytes: u32, pre: Color, rng: &mut SimRng) -> Color {
        match self {
            FlavouredMeter::Reference(m) => m.meter(now, size_bytes, pre, rng),
            FlavouredMeter::Ns2(m) => m.meter(now, size_bytes, pre, rng),
        }
    }
    fn token_level(&self, now: SimTime) -> Option<f64> {
        match self {
            FlavouredMeter::Reference(m) => m.token_level(now),
            FlavouredMeter::Ns2(m) => m.token_level(now),
        }
    }
    fn gauges(&self, now: SimTime, out: &mut dyn FnMut(&'static str, f64)) {
        if let FlavouredMeter::Reference(m) = self {
            m.gauges(now, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::NS_PER_SEC;

    /// 1 Mb/s CBR of 1000-B packets (one every 8 ms) for 100 s through a 250 kb/s meter:
    /// the counts ns-2.35 gives (docs/ns2-behaviour.md §9.4, measured with /usr/bin/ns).
    fn cbr(policy: Policy) -> [u32; 3] {
        let mut m = Ns2Policy::new(policy);
        let mut rng = SimRng::derive(1, 1);
        let mut n = [0u32; 3];
        for k in 0..12_501u64 {
            let c = m.meter(k * 8_000_000, 1000, Color::Green, &mut rng);
            n[c as usize] += 1;
        }
        n
    }

    /// Rule 1: with CBS = 1500 one packet in four is green, as in ns-2 (3126 of 12501);
    /// with CBS equal to the packet size the floating-point refills fall short and only
    /// about 22 % are (ns-2: 2749), where an exact bucket gives 3126.
    #[test]
    fn token_bucket_counts_and_the_floating_point_artefact() {
        let tb = |cbs| Policy::TokenBucket {
            cir: 250_000.0 / 8.0,
            cbs,
        };
        assert_eq!(cbr(tb(1500.0))[0], 3126);
        let short = cbr(tb(1000.0))[0];
        assert!((2600..3000).contains(&short), "{short}");
    }

    /// Rule 2: srTCM's E fills only with C's overflow, and trTCM's counts (ns-2: 3126
    /// green, 20 yellow, 9355 red; trTCM PIR 500k PBS 3000: 3126 / 3126 / 6249).
    #[test]
    fn three_colour_counts() {
        let sr = cbr(Policy::SrTcm {
            cir: 250_000.0 / 8.0,
            cbs: 1500.0,
            ebs: 20_000.0,
        });
        assert_eq!(sr, [3126, 20, 9355]);
        let tr = cbr(Policy::TrTcm {
            cir: 250_000.0 / 8.0,
            cbs: 1500.0,
            pir: 500_000.0 / 8.0,
            pbs: 3000.0,
        });
        // ns-2's clock sums 8 ms steps in floating point, ours converts exact nanoseconds:
        // a refill can land a hair either side of a packet, here one packet of 12501.
        assert!(
            tr.iter()
                .zip([3126, 3126, 6249])
                .all(|(a, b)| a.abs_diff(b) <= 2),
            "{tr:?}"
        );
    }

    /// Rule 4: against the closed form. At a steady 1 Mb/s the window rate settles at
    /// 125 000 B/s; TSW2CM demotes with probability 1 − CIR/rate = 3/4, TSW3CM makes
    /// red, yellow and green with 1/2, 1/4, 1/4. Counts within 4 binomial standard
    /// deviations (ns-2 measured 3174 green for TSW2CM, 3174/3214/6113 for TSW3CM: its
    /// random stream differs, and both sit within that band).
    #[test]
    fn tsw_shares() {
        let n = 12_501.0;
        let within = |got: u32, p: f64| {
            let sd = (n * p * (1.0 - p)).sqrt();
            (got as f64 - n * p).abs() <= 4.0 * sd + 60.0 // + the first second's transient
        };
        let t2 = cbr(Policy::Tsw2cm {
            cir: 250_000.0 / 8.0,
            win_len: 1.0,
        });
        assert!(within(t2[0], 0.25) && within(t2[1], 0.75), "{t2:?}");
        let t3 = cbr(Policy::Tsw3cm {
            cir: 250_000.0 / 8.0,
            pir: 500_000.0 / 8.0,
        });
        for (got, p) in t3.iter().zip([0.25, 0.25, 0.5]) {
            assert!(within(*got, p), "{t3:?}");
        }
        for (ns2, p) in [(3174, 0.25), (3214, 0.25), (6113, 0.5)] {
            assert!(within(ns2, p), "the band holds ns-2's own counts too");
        }
        // Time is the clock in seconds: a 1 s gap decays TSW's rate as ns-2's does.
        let mut m = Ns2Policy::new(Policy::Tsw2cm {
            cir: 1000.0,
            win_len: 1.0,
        });
        let mut rng = SimRng::derive(1, 1);
        m.meter(NS_PER_SEC, 1000, Color::Green, &mut rng);
        assert_eq!(m.avg_rate, (1000.0 * 1.0 + 1000.0) / (1.0 + 1.0));
    }
}
