//! The RED average-queue estimator (Floyd & Jacobson 1993, §4), shared by RED and the AF
//! droppers built on it (RIO, WRED). It follows ns-2's `REDQueue::estimator`: on each arrival
//! `avg ← (1 − w_q)^(m+1) · avg + w_q · q`, where `q` is the instantaneous queue before the
//! arrival and `m` is the number of packets the link could have sent while the queue was idle
//! (zero unless an idle period just ended).

use crate::units::{SimTime, NS_PER_SEC};

#[derive(Debug, Clone, Copy)]
pub struct AvgQueue {
    pub avg: f64,
    /// Set when the transmitter found the queue empty; cleared by the next arrival.
    pub idle: bool,
    pub idle_since: SimTime,
}

impl Default for AvgQueue {
    fn default() -> Self {
        // ns-2 starts idle at time 0.
        AvgQueue {
            avg: 0.0,
            idle: true,
            idle_since: 0,
        }
    }
}

impl AvgQueue {
    /// Updates the average for an arrival that sees `q` (packets or bytes) already queued.
    /// `ptc` is the link's capacity in mean-size packets per second (for the idle correction).
    #[inline]
    pub fn on_arrival(&mut self, now: SimTime, q: f64, w_q: f64, ptc: f64) -> f64 {
        let mut m = 0i64;
        if self.idle {
            self.idle = false;
            m = (ptc * (now - self.idle_since) as f64 / NS_PER_SEC as f64) as i64;
        }
        let decay = if m == 0 {
            1.0 - w_q
        } else {
            (1.0 - w_q).powi((m + 1).min(i32::MAX as i64) as i32)
        };
        self.avg = self.avg * decay + w_q * q;
        self.avg
    }

    #[inline]
    pub fn on_idle(&mut self, now: SimTime) {
        self.idle = true;
        self.idle_since = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follows_the_ewma() {
        let mut a = AvgQueue {
            idle: false,
            ..Default::default()
        };
        let w = 0.002;
        let mut expect = 0.0;
        for i in 0..1000 {
            let q = (i % 37) as f64;
            expect = (1.0 - w) * expect + w * q;
            let got = a.on_arrival(i, q, w, 250.0);
            assert!((got - expect).abs() < 1e-12);
        }
    }

    #[test]
    fn idle_period_decays_the_average() {
        let mut a = AvgQueue {
            avg: 50.0,
            idle: false,
            idle_since: 0,
        };
        a.on_idle(1_000_000_000);
        // 0.5 s idle at 250 packets/s: m = 125 packets could have been sent.
        let got = a.on_arrival(1_500_000_000, 0.0, 0.002, 250.0);
        let expect = 50.0 * (1.0f64 - 0.002).powi(126);
        assert!((got - expect).abs() < 1e-9, "{got} vs {expect}");
        // The next arrival is an ordinary EWMA step.
        let got2 = a.on_arrival(1_500_000_001, 3.0, 0.002, 250.0);
        assert!((got2 - (expect * 0.998 + 0.002 * 3.0)).abs() < 1e-12);
    }
}
