//! Poisson: packets at exponential intervals of mean `size / rate` (a mean rate of `rate`),
//! the first at the flow's start.

use serde::Serialize;

use super::cbr::RATE;
use super::{Exports, Generate, SourceContext, SourceKind};
use crate::params::{KeyError, Param, Table};
use crate::rng::SimRng;
use crate::units::{round_u64, tx_time, SimTime};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Poisson {
    pub rate_bps: u64,
}

impl SourceKind for Poisson {
    type Runtime = PoissonGen;
    const DOC: &'static str =
        "Poisson: exponential intervals between packets, of mean size / rate.";
    const PAGE: &'static str = "models/udp.md";
    const PARAMS: &'static [Param] = &[RATE.with_doc("Mean rate (or a list per member).").param];
    const EXPORTS: Exports = Exports {
        ns2: true,
        ns3: true,
        emulator: true,
    };
    /// ns-2's exponential on/off source with no ON time: one packet at the peak rate, then an
    /// exponential idle time, whose mean makes the mean gap.
    const NS2_APP: Option<super::Ns2App> = Some(super::Ns2App {
        class: "Application/Traffic/Exponential",
        settings: &[
            ("rate_", "{peak_bps}"),
            ("burst_time_", "0"),
            ("idle_time_", "{idle_s}"),
        ],
    });
    fn from_table(t: &Table, _: &mut SourceContext) -> Result<Self, KeyError> {
        Ok(Poisson {
            rate_bps: t.get(&RATE)?,
        })
    }
    fn build(&self) -> PoissonGen {
        PoissonGen {
            rate_bps: self.rate_bps,
        }
    }
}

/// Exponential intervals.
#[derive(Debug, Clone)]
pub struct PoissonGen {
    pub rate_bps: u64,
}

impl Generate for PoissonGen {
    #[inline]
    fn gap(&mut self, size: u32, rng: &mut SimRng) -> SimTime {
        let mean = tx_time(size as u64, self.rate_bps) as f64;
        round_u64(rng.exponential(mean)).max(1)
    }
}
