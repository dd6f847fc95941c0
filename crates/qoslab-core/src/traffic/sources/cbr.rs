//! Constant bit rate: one packet every `size / rate` (ns-2's `Application/Traffic/CBR` with
//! `random_ 0`), the first at the flow's start.

use serde::Serialize;

use super::{Exports, Generate, SourceContext, SourceKind};
use crate::params::typed::{Decl, Rate};
use crate::params::{KeyError, Param, ParamKind, Table};
use crate::rng::SimRng;
use crate::units::{tx_time, SimTime};

/// The sending rate of the rate-driven sources (CBR's rate, the ON/OFF sources' peak rate,
/// Poisson's mean rate).
pub const RATE: Decl<Rate> = Decl::new(
    "rate",
    ParamKind::Rate,
    "required",
    "Sending rate (or a list per member).",
)
.positive();

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cbr {
    pub rate_bps: u64,
}

impl SourceKind for Cbr {
    type Runtime = CbrGen;
    const DOC: &'static str = "Constant bit rate: a packet every size / rate, the first at the \
                               start (ns-2 Application/Traffic/CBR).";
    const PAGE: &'static str = "models/udp.md";
    const PARAMS: &'static [Param] = &[RATE.param];
    const EXPORTS: Exports = Exports {
        ns2: true,
        ns3: true,
        emulator: true,
    };
    const NS2_APP: Option<super::Ns2App> = Some(super::Ns2App {
        class: "Application/Traffic/CBR",
        settings: &[
            ("rate_", "{rate_bps}"),
            ("random_", "0"),
            ("maxpkts_", "2147483647"),
        ],
    });
    fn from_table(t: &Table, _: &mut SourceContext) -> Result<Self, KeyError> {
        Ok(Cbr {
            rate_bps: t.get(&RATE)?,
        })
    }
    fn build(&self) -> CbrGen {
        CbrGen {
            rate_bps: self.rate_bps,
        }
    }
}

/// Packets at fixed intervals.
#[derive(Debug, Clone)]
pub struct CbrGen {
    pub rate_bps: u64,
}

impl Generate for CbrGen {
    #[inline]
    fn gap(&mut self, size: u32, _: &mut SimRng) -> SimTime {
        tx_time(size as u64, self.rate_bps)
    }
}
