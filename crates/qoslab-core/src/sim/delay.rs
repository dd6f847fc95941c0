//! One-way delay of data packets, per flow: every delivered packet's exact delay (delivery
//! time minus the time its sender created it) goes into a streaming quantile sketch (inside
//! the measurement window), and every one into RFC 3550's interarrival-jitter estimator.

use crate::stats::{QuantileSketch, Rfc3550Jitter};

/// The delay state of one flow (or flow slot).
#[derive(Debug, Clone)]
pub struct DelayStats {
    /// Delays (ns) of the packets delivered inside the measurement window.
    pub sketch: QuantileSketch,
    pub jitter: Rfc3550Jitter,
}

impl Default for DelayStats {
    fn default() -> Self {
        DelayStats {
            sketch: QuantileSketch::new(crate::stats::DEFAULT_ALPHA),
            jitter: Rfc3550Jitter::default(),
        }
    }
}

impl DelayStats {
    #[inline]
    pub fn on_packet(&mut self, sent_ns: u64, received_ns: u64, in_window: bool) {
        self.jitter.on_packet(sent_ns, received_ns);
        if in_window {
            self.sketch.add((received_ns - sent_ns) as f64);
        }
    }
}

/// A delay distribution as the results report it (seconds; NaN when no packet was counted).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DelaySummary {
    pub packets: u64,
    pub mean_s: f64,
    pub p50_s: f64,
    pub p90_s: f64,
    pub p99_s: f64,
    pub p999_s: f64,
    pub max_s: f64,
}

impl DelaySummary {
    pub fn of(s: &QuantileSketch) -> Self {
        let q = |x: f64| {
            if s.count() == 0 {
                f64::NAN
            } else {
                s.quantile(x) / 1e9
            }
        };
        DelaySummary {
            packets: s.count(),
            mean_s: if s.count() == 0 {
                f64::NAN
            } else {
                s.mean() / 1e9
            },
            p50_s: q(0.5),
            p90_s: q(0.9),
            p99_s: q(0.99),
            p999_s: q(0.999),
            max_s: q(1.0),
        }
    }
}
