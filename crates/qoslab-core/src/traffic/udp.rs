//! UDP sources: constant bit rate (ns-2 `Application/Traffic/CBR` with `random_ 0`), Poisson
//! (exponential inter-packet times of the given mean rate) and exponential ON/OFF (peak
//! `rate` during ON periods of mean `on`, silent during OFF periods of mean `off`, as ns-2's
//! `Application/Traffic/Exponential`).

use crate::rng::SimRng;
use crate::units::{tx_time, SimTime, NS_PER_SEC};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UdpKind {
    Cbr,
    Poisson,
    OnOff,
}

#[derive(Debug, Clone)]
pub struct UdpSource {
    pub kind: UdpKind,
    pub size: u32,
    pub rate_bps: u64,
    pub on_mean_ns: u64,
    pub off_mean_ns: u64,
    pub on: bool,
    /// Sequence number of the next datagram.
    pub seq: u64,
    pub active: bool,
    pub rng: SimRng,
}

impl UdpSource {
    /// Time between two packets at the (peak) rate.
    pub fn interval(&self) -> SimTime {
        tx_time(self.size as u64, self.rate_bps)
    }

    /// Delay until the next packet after one was sent.
    pub fn next_gap(&mut self) -> SimTime {
        match self.kind {
            UdpKind::Cbr | UdpKind::OnOff => self.interval(),
            UdpKind::Poisson => {
                let mean = self.interval() as f64;
                (self.rng.exponential(mean).round() as u64).max(1)
            }
        }
    }

    /// Duration of the next ON (or OFF) period.
    pub fn period(&mut self, on: bool) -> SimTime {
        let mean = if on {
            self.on_mean_ns
        } else {
            self.off_mean_ns
        } as f64;
        (self.rng.exponential(mean).round() as u64).max(1)
    }
}

/// Mean Poisson interarrival in seconds (for reporting).
pub fn mean_gap_s(size: u32, rate_bps: u64) -> f64 {
    tx_time(size as u64, rate_bps) as f64 / NS_PER_SEC as f64
}
