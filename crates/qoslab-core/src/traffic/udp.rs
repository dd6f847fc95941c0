//! UDP sources: constant bit rate (ns-2 `Application/Traffic/CBR` with `random_ 0`), Poisson
//! (exponential inter-packet times of the given mean rate) and exponential ON/OFF (peak
//! `rate` during ON periods of mean `on`, silent during OFF periods of mean `off`, as ns-2's
//! `Application/Traffic/Exponential`), Pareto ON/OFF (the same with Pareto-distributed ON
//! and OFF periods of the given means and shape, as ns-2's `Application/Traffic/Pareto`, whose
//! ON periods are counted in packets instead) and trace replay ([`crate::traffic::trace`]).
//! A source may draw each packet's size from a distribution ([`SizeDist`]), from a stream of
//! its own, so its send times are those of the same source with a fixed size.

use std::sync::Arc;

use crate::packet::MAX_PACKET_BYTES;
use crate::rng::SimRng;
use crate::traffic::sizes::SizeDist;
use crate::traffic::trace::TraceRow;
use crate::units::{tx_time, SimTime, NS_PER_SEC};

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum UdpKind {
    Cbr,
    Poisson,
    OnOff,
    /// ON/OFF with Pareto periods of shape `shape`.
    Pareto {
        shape: f64,
    },
    /// A trace's rows, replayed from the flow's start.
    Trace,
}

/// Per-packet sizes drawn from a distribution, from their own stream.
#[derive(Debug, Clone)]
pub struct PacketSizes {
    pub dist: SizeDist,
    pub rng: SimRng,
}

impl PacketSizes {
    /// The next packet's size, bytes (1..=65535).
    pub fn draw(&mut self) -> u32 {
        self.dist
            .sample(&mut self.rng)
            .clamp(1, u64::from(MAX_PACKET_BYTES)) as u32
    }
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
    /// Sizes drawn per packet (`None`: every packet is `size` bytes).
    pub sizes: Option<PacketSizes>,
    /// A trace source's rows, and the next row to send.
    pub trace: Option<Arc<[TraceRow]>>,
    pub next_row: usize,
}

impl UdpSource {
    /// Time between two packets at the (peak) rate.
    pub fn interval(&self) -> SimTime {
        tx_time(self.size as u64, self.rate_bps)
    }

    /// Delay until the next packet after one was sent.
    pub fn next_gap(&mut self) -> SimTime {
        match self.kind {
            UdpKind::Cbr | UdpKind::OnOff | UdpKind::Pareto { .. } | UdpKind::Trace => {
                self.interval()
            }
            UdpKind::Poisson => {
                let mean = self.interval() as f64;
                crate::units::round_u64(self.rng.exponential(mean)).max(1)
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
        let t = match self.kind {
            UdpKind::Pareto { shape } => {
                // Scale from the mean; inverse transform with 1 - u in (0, 1].
                let scale = mean * (shape - 1.0) / shape;
                scale / (1.0 - self.rng.uniform()).powf(1.0 / shape)
            }
            _ => self.rng.exponential(mean),
        };
        crate::units::round_u64(t).max(1)
    }

    /// The size of the next packet, bytes.
    pub fn next_size(&mut self) -> u32 {
        match &mut self.sizes {
            Some(s) => s.draw(),
            None => self.size,
        }
    }
}

/// Mean Poisson interarrival in seconds (for reporting).
pub fn mean_gap_s(size: u32, rate_bps: u64) -> f64 {
    tx_time(size as u64, rate_bps) as f64 / NS_PER_SEC as f64
}
