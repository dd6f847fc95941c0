//! A link direction's transmitter clock ([`BusyClock`]): when each packet's transmission ends.

use crate::units::{SimTime, NS_PER_SEC};

/// The transmitter's clock over a busy period: the end of the transmission of the bits
/// sent since the period started, `ceil(bits · 10⁹ / bps)` ns after its start, so rounding
/// never accumulates (each end is within 1 ns of the exact value). Kept as the exact
/// quotient and remainder of `bits · 10⁹` by `bps`, advanced by those of the packet's own
/// bits (remembered for the last packet size), so that a packet-hop divides only when the
/// size changes: the 128-bit division per packet this replaces was a library call. The
/// quotient is kept with the period's start added (so the start needs no field of its own).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct BusyClock {
    /// `(q − start) · bps + r = bits · 10⁹`, `0 <= r < bps` (`r + dr < 2 · bps` fits: rates
    /// are at most `units::MAX_RATE_BPS`); `start` is the busy period's start, ns.
    q: u64,
    r: u64,
    /// Quotient and remainder of `size · 8 · 10⁹` by `bps` for `size == last_size`.
    last_size: u32,
    dq: u64,
    dr: u64,
}

impl BusyClock {
    /// A busy period starts at `now`.
    #[inline(always)]
    pub(crate) fn restart(&mut self, now: SimTime) {
        self.q = now;
        self.r = 0;
    }
    /// Adds a packet of `size` bytes; returns when its transmission ends, ns (rounded up).
    #[inline(always)]
    pub(crate) fn add(&mut self, size: u32, bps: u64) -> SimTime {
        if size != self.last_size {
            let bits_ns = size as u128 * 8 * NS_PER_SEC as u128;
            self.dq = (bits_ns / bps as u128) as u64;
            self.dr = (bits_ns % bps as u128) as u64;
            self.last_size = size;
        }
        self.q += self.dq;
        self.r += self.dr;
        if self.r >= bps {
            self.q += 1;
            self.r -= bps;
        }
        self.q + (self.r > 0) as u64
    }
}
