//! MMPP-2, the two-state Markov-modulated Poisson process (Heffes & Lucantoni, IEEE JSAC 1986;
//! Fischer & Meier-Hellstern, "The Markov-modulated Poisson process (MMPP) cookbook",
//! Performance Evaluation 1993): packets arrive as a Poisson process of rate λ1 while a
//! two-state Markov chain is in state 1 and of rate λ2 in state 2; the chain leaves state 1
//! at rate r1 and state 2 at rate r2 (exponential holding times of means 1/r1 and 1/r2). The
//! chain starts in its stationary distribution (state 1 with probability r2 / (r1 + r2)), so
//! the mean rate is (λ1·r2 + λ2·r1) / (r1 + r2) from the start, and the counts are burstier
//! than Poisson (index of dispersion above 1) whenever λ1 ≠ λ2. As the other sources, it sends
//! its first packet at the flow's start.
//!
//! The time to the next arrival is drawn exactly: an exponential gap at the current state's
//! rate is taken if it ends before the state does; otherwise the chain moves to the other
//! state at the end of its holding time, and (memorylessly) the gap is drawn again from there.

use serde::Serialize;

use super::{Generate, SourceContext, SourceKind};
use crate::params::typed::Decl;
use crate::params::{closed, key_error, open_closed, KeyError, Param, Table};
use crate::rng::SimRng;
use crate::units::{round_u64, SimTime};

/// The most packets (or transitions) per second a rate may set.
const MAX_RATE: f64 = 1e9;

const LAMBDA1: Decl<f64> = Decl::new(
    "lambda1",
    closed(0.0, MAX_RATE),
    "required",
    "λ1: arrivals per second in state 1 (Poisson).",
);
const LAMBDA2: Decl<f64> = Decl::new(
    "lambda2",
    closed(0.0, MAX_RATE),
    "required",
    "λ2: arrivals per second in state 2 (Poisson).",
);
const R1: Decl<f64> = Decl::new(
    "r1",
    open_closed(0.0, MAX_RATE),
    "required",
    "r1: rate of leaving state 1 for state 2, per second (mean holding time 1/r1).",
);
const R2: Decl<f64> = Decl::new(
    "r2",
    open_closed(0.0, MAX_RATE),
    "required",
    "r2: rate of leaving state 2 for state 1, per second (mean holding time 1/r2).",
);

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mmpp2 {
    pub lambda1: f64,
    pub lambda2: f64,
    pub r1: f64,
    pub r2: f64,
}

impl Mmpp2 {
    /// The long-run mean arrival rate, packets per second: (λ1·r2 + λ2·r1) / (r1 + r2).
    pub fn mean_rate(&self) -> f64 {
        (self.lambda1 * self.r2 + self.lambda2 * self.r1) / (self.r1 + self.r2)
    }

    /// The index of dispersion of the counts in a window of `t` seconds, Var N(t) / E N(t)
    /// (the cookbook's eq. for the MMPP-2): 1 + 2(λ1−λ2)²r1r2 / ((r1+r2)³ λ̄) ·
    /// (1 − (1 − e^{−(r1+r2)t}) / ((r1+r2)t)).
    pub fn dispersion(&self, t: f64) -> f64 {
        let r = self.r1 + self.r2;
        let d = self.lambda1 - self.lambda2;
        let asymptote = 2.0 * d * d * self.r1 * self.r2 / (r * r * r * self.mean_rate());
        1.0 + asymptote * (1.0 - (1.0 - (-r * t).exp()) / (r * t))
    }
}

impl SourceKind for Mmpp2 {
    // Boxed (as BBR's state): its chain would make every flow's generator larger.
    type Runtime = Box<Mmpp2Gen>;
    const DOC: &'static str = "MMPP-2: Poisson arrivals at rate lambda1 or lambda2 as a \
                               two-state Markov chain (leaving rates r1, r2) is in state 1 or 2 \
                               (bursty traffic with a closed-form mean and dispersion).";
    const PAGE: &'static str = "models/mmpp2.md";
    const PARAMS: &'static [Param] = &[LAMBDA1.param, LAMBDA2.param, R1.param, R2.param];
    fn from_table(t: &Table, _: &mut SourceContext) -> Result<Self, KeyError> {
        let m = Mmpp2 {
            lambda1: t.get(&LAMBDA1)?,
            lambda2: t.get(&LAMBDA2)?,
            r1: t.get(&R1)?,
            r2: t.get(&R2)?,
        };
        if m.lambda1 + m.lambda2 == 0.0 {
            return Err(key_error(
                t.key("lambda1"),
                "lambda1 and lambda2 are both 0: the source would never send",
            ));
        }
        Ok(m)
    }
    fn build(&self) -> Box<Mmpp2Gen> {
        Box::new(Mmpp2Gen {
            lambda: [self.lambda1, self.lambda2],
            leave: [self.r1, self.r2],
            state: None,
            left_ns: 0.0,
        })
    }
}

/// The chain's state and the time left in it.
#[derive(Debug, Clone)]
pub struct Mmpp2Gen {
    /// Arrival rates (per second) in states 1 and 2.
    pub lambda: [f64; 2],
    /// Rates (per second) of leaving states 1 and 2.
    pub leave: [f64; 2],
    /// The current state (0: state 1), drawn from the stationary distribution at the first gap.
    pub state: Option<usize>,
    /// Time left in the current state, ns.
    pub left_ns: f64,
}

impl Mmpp2Gen {
    fn holding(&self, s: usize, rng: &mut SimRng) -> f64 {
        rng.exponential(1e9 / self.leave[s])
    }
}

impl Generate for Box<Mmpp2Gen> {
    fn gap(&mut self, _: u32, rng: &mut SimRng) -> SimTime {
        let mut s = match self.state {
            Some(s) => s,
            None => {
                let p1 = self.leave[1] / (self.leave[0] + self.leave[1]);
                let s = usize::from(rng.uniform() >= p1);
                self.left_ns = self.holding(s, rng);
                s
            }
        };
        let mut t = 0.0;
        loop {
            let a = if self.lambda[s] > 0.0 {
                rng.exponential(1e9 / self.lambda[s])
            } else {
                f64::INFINITY
            };
            if a < self.left_ns {
                self.left_ns -= a;
                t += a;
                break;
            }
            t += self.left_ns;
            s = 1 - s;
            self.left_ns = self.holding(s, rng);
        }
        self.state = Some(s);
        round_u64(t).max(1)
    }
}

#[cfg(test)]
#[path = "mmpp2_tests.rs"]
mod tests;
