//! The RTT estimator and retransmission timeout as Linux's `tcp_rtt_estimator` and
//! `tcp_set_rto` (net/ipv4/tcp_input.c; RFC 6298 with Linux's variance handling), in
//! microseconds as the kernel keeps them: srtt is scaled by 8, mdev by 4; rttvar never falls
//! below the minimum RTO (200 ms), so RTO = srtt + max(4·mdev, rto_min) at least. The minimum
//! RTT is a windowed minimum over `tcp_min_rtt_wlen` (300 s).

use crate::units::SimTime;

/// Linux's `TCP_RTO_MAX`, µs.
pub const RTO_MAX_US: u64 = 120_000_000;

#[derive(Debug, Clone, Default)]
pub struct RttEstimator {
    /// srtt << 3, µs (0: no sample yet).
    pub srtt_us: u64,
    /// mdev << 2, µs.
    mdev_us: u64,
    mdev_max_us: u64,
    rttvar_us: u64,
    /// Sequence number ending the current RTT measurement window (`rtt_seq`).
    rtt_seq: i64,
    /// The RTO without backoff, µs.
    pub rto_us: u64,
    pub rto_min_us: u64,
    pub rto_max_us: u64,
    /// Windowed minimum RTT, ns, and when it was taken.
    pub min_rtt: Option<(u64, SimTime)>,
}

/// `tcp_min_rtt_wlen`, ns.
const MIN_RTT_WINDOW: u64 = 300_000_000_000;

impl RttEstimator {
    pub fn new(initial_rto_ns: u64, rto_min_ns: u64, rto_max_ns: u64) -> Self {
        RttEstimator {
            rto_us: initial_rto_ns / 1000,
            rto_min_us: rto_min_ns / 1000,
            rto_max_us: (rto_max_ns / 1000).min(RTO_MAX_US),
            ..Default::default()
        }
    }

    /// The smoothed RTT, ns (0 before a sample).
    pub fn srtt_ns(&self) -> u64 {
        (self.srtt_us >> 3) * 1000
    }

    /// The minimum RTT, ns (`tcp_min_rtt`; u64::MAX before a sample).
    pub fn min_rtt_ns(&self) -> u64 {
        self.min_rtt.map_or(u64::MAX, |(r, _)| r)
    }

    /// `tcp_update_rtt_min`.
    pub fn update_min(&mut self, now: SimTime, rtt_ns: u64) {
        let rtt_ns = rtt_ns.max(1000);
        match self.min_rtt {
            Some((m, at)) if rtt_ns > m && now.saturating_sub(at) <= MIN_RTT_WINDOW => {}
            _ => self.min_rtt = Some((rtt_ns, now)),
        }
    }

    /// `tcp_rtt_estimator` then `tcp_set_rto`, for a sample of `rtt_ns` taken when SND.UNA is
    /// `una` and SND.NXT `nxt`.
    pub fn sample(&mut self, rtt_ns: u64, una: i64, nxt: i64) {
        let mut m = (rtt_ns / 1000).max(1) as i64;
        let mut srtt = self.srtt_us as i64;
        if srtt != 0 {
            m -= srtt >> 3;
            srtt += m;
            let mut mdev = self.mdev_us as i64;
            if m < 0 {
                m = -m;
                m -= mdev >> 2;
                if m > 0 {
                    m >>= 3;
                }
            } else {
                m -= mdev >> 2;
            }
            mdev += m;
            self.mdev_us = mdev.max(0) as u64;
            if self.mdev_us > self.mdev_max_us {
                self.mdev_max_us = self.mdev_us;
                if self.mdev_max_us > self.rttvar_us {
                    self.rttvar_us = self.mdev_max_us;
                }
            }
            if una > self.rtt_seq {
                if self.mdev_max_us < self.rttvar_us {
                    self.rttvar_us -= (self.rttvar_us - self.mdev_max_us) >> 2;
                }
                self.rtt_seq = nxt;
                self.mdev_max_us = self.rto_min_us;
            }
        } else {
            srtt = m << 3;
            self.mdev_us = (m << 1) as u64;
            self.rttvar_us = self.mdev_us.max(self.rto_min_us);
            self.mdev_max_us = self.rttvar_us;
            self.rtt_seq = nxt;
        }
        self.srtt_us = srtt.max(1) as u64;
        self.rto_us = ((self.srtt_us >> 3) + self.rttvar_us).min(self.rto_max_us);
    }

    /// The RTO after `backoff` doublings, ns (`inet_csk_rto_backoff`).
    pub fn rto_ns(&self, backoff: u32) -> u64 {
        let r = self.rto_us.saturating_mul(1u64 << backoff.min(20));
        r.min(self.rto_max_us) * 1000
    }
}
