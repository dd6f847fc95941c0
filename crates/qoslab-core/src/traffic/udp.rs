//! The UDP endpoint of an open-loop source: its kind's packet times (a generator of the
//! source registry, [`crate::traffic::sources`]), its ON/OFF state, sequence numbers and
//! packet sizes. A source may draw each packet's size from a distribution ([`SizeDist`]),
//! from a stream of its own, so its send times are those of the same source with a fixed
//! size.

use std::sync::Arc;

use crate::packet::MAX_PACKET_BYTES;
use crate::rng::SimRng;
use crate::traffic::sizes::SizeDist;
use crate::traffic::sources::{AnyGenerator, Generate};
use crate::traffic::trace::TraceRow;
use crate::units::{tx_time, SimTime, NS_PER_SEC};

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
    /// The kind's packet times ([`crate::traffic::sources`]).
    pub gen: AnyGenerator,
    pub size: u32,
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
    /// Delay until the next packet after one was sent.
    pub fn next_gap(&mut self) -> SimTime {
        self.gen.gap(self.size, &mut self.rng)
    }

    /// Duration of the next ON (or OFF) period; `None` for a source that does not alternate.
    pub fn period(&mut self, on: bool) -> Option<SimTime> {
        self.gen.period(on, &mut self.rng)
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
