//! Pareto ON/OFF (as ns-2's `Application/Traffic/Pareto`, whose ON periods are counted in
//! packets instead): the exponential ON/OFF source with Pareto-distributed ON and OFF periods
//! of the given means and shape (heavy-tailed bursts: aggregated, self-similar traffic).

use serde::Serialize;

use super::onoff::{OFF, ON, PEAK};
use super::{Generate, SourceContext, SourceKind};
use crate::params::typed::Decl;
use crate::params::{open_closed, KeyError, Param, Table};
use crate::rng::SimRng;
use crate::units::{round_u64, tx_time, SimTime};

/// The shape (tail index) of the ON and OFF periods: above 1 for a finite mean.
const SHAPE: Decl<f64> = Decl::new(
    "shape",
    open_closed(1.0, 100.0),
    "1.5",
    "The shape (tail index) of the ON and OFF periods.",
);

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pareto {
    pub rate_bps: u64,
    pub on_ns: u64,
    pub off_ns: u64,
    pub shape: f64,
}

impl SourceKind for Pareto {
    type Runtime = ParetoGen;
    const DOC: &'static str = "Pareto ON/OFF: the peak rate during Pareto ON periods, silent \
                               during Pareto OFF periods (heavy-tailed; ns-2 \
                               Application/Traffic/Pareto).";
    const PAGE: &'static str = "models/udp.md";
    const PARAMS: &'static [Param] = &[
        PEAK.param,
        ON.with_doc("Mean burst (ON) time (Pareto).").param,
        OFF.with_doc("Mean idle (OFF) time (Pareto).").param,
        SHAPE.param,
    ];
    fn from_table(t: &Table, _: &mut SourceContext) -> Result<Self, KeyError> {
        Ok(Pareto {
            rate_bps: t.get(&PEAK)?,
            on_ns: t.get(&ON)?,
            off_ns: t.get(&OFF)?,
            shape: t.get(&SHAPE)?,
        })
    }
    fn build(&self) -> ParetoGen {
        ParetoGen {
            rate_bps: self.rate_bps,
            on_ns: self.on_ns,
            off_ns: self.off_ns,
            shape: self.shape,
        }
    }
}

/// The peak rate's intervals, and Pareto periods.
#[derive(Debug, Clone)]
pub struct ParetoGen {
    pub rate_bps: u64,
    pub on_ns: u64,
    pub off_ns: u64,
    pub shape: f64,
}

impl Generate for ParetoGen {
    #[inline]
    fn gap(&mut self, size: u32, _: &mut SimRng) -> SimTime {
        tx_time(size as u64, self.rate_bps)
    }
    fn period(&mut self, on: bool, rng: &mut SimRng) -> Option<SimTime> {
        let mean = if on { self.on_ns } else { self.off_ns } as f64;
        // Scale from the mean; inverse transform with 1 - u in (0, 1].
        let scale = mean * (self.shape - 1.0) / self.shape;
        let t = scale / (1.0 - rng.uniform()).powf(1.0 / self.shape);
        Some(round_u64(t).max(1))
    }
}
