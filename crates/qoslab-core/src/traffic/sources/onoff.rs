//! Exponential ON/OFF (ns-2's `Application/Traffic/Exponential`): packets at the peak `rate`
//! during ON periods of mean `on`, silence during OFF periods of mean `off`, both
//! exponential; the flow starts ON.

use serde::Serialize;

use super::cbr::RATE;
use super::{Exports, Generate, SourceContext, SourceKind};
use crate::params::typed::{Decl, Duration};
use crate::params::{KeyError, Param, ParamKind, Table};
use crate::rng::SimRng;
use crate::units::{round_u64, tx_time, SimTime};

/// The mean ON (burst) time of the ON/OFF sources.
pub const ON: Decl<Duration> = Decl::new(
    "on",
    ParamKind::Duration,
    "required",
    "Mean burst (ON) time (exponential).",
)
.positive();
/// The mean OFF (idle) time of the ON/OFF sources.
pub const OFF: Decl<Duration> = Decl::new(
    "off",
    ParamKind::Duration,
    "required",
    "Mean idle (OFF) time (exponential).",
)
.positive();
/// The peak rate of the ON/OFF sources.
pub const PEAK: Decl<crate::params::typed::Rate> =
    RATE.with_doc("Peak rate, during ON periods (or a list per member).");

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OnOff {
    pub rate_bps: u64,
    pub on_ns: u64,
    pub off_ns: u64,
}

impl SourceKind for OnOff {
    type Runtime = OnOffGen;
    const DOC: &'static str = "Exponential ON/OFF: the peak rate during exponential ON periods, \
                               silent during exponential OFF periods (ns-2 \
                               Application/Traffic/Exponential).";
    const PAGE: &'static str = "models/udp.md";
    const PARAMS: &'static [Param] = &[PEAK.param, ON.param, OFF.param];
    const EXPORTS: Exports = Exports {
        ns2: true,
        ns3: true,
        emulator: true,
    };
    const NS2_APP: Option<super::Ns2App> = Some(super::Ns2App {
        class: "Application/Traffic/Exponential",
        settings: &[
            ("rate_", "{rate_bps}"),
            ("burst_time_", "{on_s}"),
            ("idle_time_", "{off_s}"),
        ],
    });
    fn from_table(t: &Table, _: &mut SourceContext) -> Result<Self, KeyError> {
        Ok(OnOff {
            rate_bps: t.get(&PEAK)?,
            on_ns: t.get(&ON)?,
            off_ns: t.get(&OFF)?,
        })
    }
    fn build(&self) -> OnOffGen {
        OnOffGen {
            rate_bps: self.rate_bps,
            on_ns: self.on_ns,
            off_ns: self.off_ns,
        }
    }
}

/// The peak rate's intervals, and exponential periods.
#[derive(Debug, Clone)]
pub struct OnOffGen {
    pub rate_bps: u64,
    pub on_ns: u64,
    pub off_ns: u64,
}

impl Generate for OnOffGen {
    #[inline]
    fn gap(&mut self, size: u32, _: &mut SimRng) -> SimTime {
        tx_time(size as u64, self.rate_bps)
    }
    fn period(&mut self, on: bool, rng: &mut SimRng) -> Option<SimTime> {
        let mean = if on { self.on_ns } else { self.off_ns } as f64;
        Some(round_u64(rng.exponential(mean)).max(1))
    }
}
