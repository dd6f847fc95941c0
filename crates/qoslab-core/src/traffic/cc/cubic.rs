//! CUBIC congestion control (RFC 9438), in packets and seconds.
//!
//! * Window growth (§4.2): W_cubic(t) = C·(t − K)³ + W_max with K = ∛((W_max − cwnd_epoch)/C),
//!   t the time since the congestion-avoidance epoch began (the first ACK in congestion
//!   avoidance after a reduction), C = 0.4. Each ACK moves cwnd towards
//!   target = W_cubic(t + RTT) clamped to [cwnd, 1.5·cwnd], by (target − cwnd)/cwnd per
//!   newly acknowledged segment (as Linux counts acknowledged segments, not ACKs).
//! * Reno-friendly region (§4.3): W_est starts at cwnd_epoch and grows by
//!   α_cubic·acked/cwnd, α_cubic = 3(1 − β)/(1 + β) until W_est reaches cwnd_prior, 1 after;
//!   while W_cubic(t) < W_est, cwnd = W_est.
//! * Multiplicative decrease (§4.6), β = 0.7: ssthresh = max(flight·β, 2), cwnd = ssthresh,
//!   where flight is the sender's usable window (cwnd capped by the advertised window).
//! * Fast convergence (§4.7): a reduction below the previous W_max sets
//!   W_max = cwnd·(1 + β)/2.
//! * Timeout (§4.8): ssthresh as in §4.6, cwnd = 1; the first epoch after it starts with
//!   K = 0 and W_max = W_est = cwnd at the epoch's start.
//! * Slow start (§4.10): standard, cwnd += acked up to ssthresh.
//!
//! * Slow start ends early with HyStart as Linux runs it ([`super::hystart`]; RFC 9438 §4.10
//!   allows HyStart++ instead, which is not modelled).
//!
//! RTT is the smoothed RTT (RFC 6298 gain 1/8) of the sender's exact Karn samples.
//! Left out: §4.9's application-limited epoch freezing, spurious-loss undo.

use super::exports::{Ns3Cc, Ns3Value, SenderExports};
use super::hystart::HyStart;
use super::{AckSample, CongestionControl, Tunable, Window};
use crate::params::typed::Decl;
use crate::params::{open, open_closed, KeyError, Param, Table};
use crate::units::{SimTime, NS_PER_SEC};

/// C, segments/s³ (§5).
pub const C: f64 = 0.4;
/// β_cubic (§4.6).
pub const BETA: f64 = 0.7;

/// ns-2.35 has no CUBIC agent. ns-3: the program's `QoslabCubic` (TcpCubic with RFC 9438's
/// Reno-friendly region, which ns-3.37's lacks) with HyStart as Linux runs it: from cwnd 16,
/// ACK trains of ACKs <= 2 ms apart, or the smallest of a round's first 8 RTT samples above
/// delay_min + clamp(delay_min/8, 4 ms, 16 ms). Linux's `cubic` module.
pub const EXPORTS: SenderExports = SenderExports {
    ns2: None,
    ns3: Some(Ns3Cc {
        type_id: "ns3::QoslabCubic",
        defaults: &[
            (
                "ns3::TcpCubic::FastConvergence",
                Ns3Value::Flag("fast_convergence", true),
            ),
            ("ns3::TcpCubic::Beta", Ns3Value::Number("beta", BETA)),
            ("ns3::TcpCubic::C", Ns3Value::Number("c", C)),
            ("ns3::TcpCubic::HyStart", Ns3Value::Flag("hystart", true)),
            ("ns3::TcpCubic::HyStartLowWindow", Ns3Value::Text("16")),
            ("ns3::TcpCubic::HyStartDetect", Ns3Value::Text("3")), // both tests
            ("ns3::TcpCubic::HyStartMinSamples", Ns3Value::Text("8")),
            (
                "ns3::TcpCubic::HyStartAckDelta",
                Ns3Value::Text("2000000ns"),
            ),
            (
                "ns3::TcpCubic::HyStartDelayMin",
                Ns3Value::Text("4000000ns"),
            ),
            (
                "ns3::TcpCubic::HyStartDelayMax",
                Ns3Value::Text("16000000ns"),
            ),
            ("ns3::TcpCubic::CubicDelta", Ns3Value::Text("10000000ns")),
            ("ns3::TcpCubic::CntClamp", Ns3Value::Text("20")),
        ],
        needs_pacing: None,
        stream: None,
        note: None,
    }),
    kernel: Some("cubic"),
};

const C_KEY: Decl<f64> = Decl::new(
    "c",
    open_closed(0.0, 100.0),
    "0.4",
    "C, segments/s³: the cubic's aggressiveness (RFC 9438 §5).",
);
const BETA_KEY: Decl<f64> = Decl::new(
    "beta",
    open(0.0, 1.0),
    "0.7",
    "β_cubic: the window kept at a congestion event (RFC 9438 §4.6).",
);

/// CUBIC's constants.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct CubicParams {
    pub c: f64,
    pub beta: f64,
}

impl Default for CubicParams {
    fn default() -> Self {
        CubicParams { c: C, beta: BETA }
    }
}

impl Tunable for Cubic {
    type Params = CubicParams;
    const PARAMS: &'static [Param] = &[C_KEY.param, BETA_KEY.param];
    fn read(t: &Table) -> Result<CubicParams, KeyError> {
        Ok(CubicParams {
            c: t.get(&C_KEY)?,
            beta: t.get(&BETA_KEY)?,
        })
    }
    fn with_params(p: &CubicParams) -> Self {
        Cubic {
            params: *p,
            ..Cubic::default()
        }
    }
}

/// No congestion-avoidance epoch has started since the last reduction.
const NO_EPOCH: SimTime = SimTime::MAX;
/// No epoch has started since the last reduction, which was a timeout.
const AFTER_TIMEOUT: SimTime = SimTime::MAX - 1;

impl Default for Cubic {
    fn default() -> Self {
        Cubic {
            params: CubicParams::default(),
            w_max: 0.0,
            cwnd_prior: 0.0,
            k: 0.0,
            epoch: NO_EPOCH,
            w_est: 0.0,
            srtt: 0.0,
            hystart: HyStart::default(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Cubic {
    /// C and β.
    pub params: CubicParams,
    /// W_max: the window before the last reduction (after fast convergence), packets.
    pub w_max: f64,
    /// cwnd_prior: the window at the last congestion event, packets.
    pub cwnd_prior: f64,
    /// K, seconds.
    pub k: f64,
    /// Start of the current congestion-avoidance epoch, or [`NO_EPOCH`], or [`AFTER_TIMEOUT`]
    /// (none started and the last reduction was a timeout, §4.8): one word for both, so that
    /// the constants fit in the state's former size.
    epoch: SimTime,
    /// W_est, the Reno-friendly window estimate, packets.
    pub w_est: f64,
    /// Smoothed RTT, seconds (0 before a sample).
    pub srtt: f64,
    /// Hybrid slow start ([`super::hystart`]).
    pub hystart: HyStart,
}

impl Cubic {
    /// Start of the current congestion-avoidance epoch (None: not started).
    pub fn t_epoch(&self) -> Option<SimTime> {
        (self.epoch < AFTER_TIMEOUT).then_some(self.epoch)
    }

    /// W_cubic(t), packets, t in seconds since the epoch started.
    pub fn w_cubic(&self, t: f64) -> f64 {
        self.params.c * (t - self.k).powi(3) + self.w_max
    }

    fn begin_epoch(&mut self, now: SimTime, cwnd: f64) {
        let after_timeout = self.epoch == AFTER_TIMEOUT;
        self.epoch = now;
        if after_timeout || cwnd >= self.w_max {
            // §4.8 after a timeout; above the old maximum (Linux): the plateau is here.
            self.w_max = cwnd;
            self.k = 0.0;
        } else {
            self.k = ((self.w_max - cwnd) / self.params.c).cbrt();
        }
        self.w_est = cwnd;
    }

    /// §4.6–4.7: the new W_max and ssthresh at a congestion event.
    fn reduce(&mut self, w: &mut Window, flight: f64) {
        if self.epoch != AFTER_TIMEOUT {
            self.epoch = NO_EPOCH;
        }
        self.cwnd_prior = flight;
        self.w_max = if flight < self.w_max {
            flight * (1.0 + self.params.beta) / 2.0
        } else {
            flight
        };
        w.ssthresh = (flight * self.params.beta).max(2.0);
    }
}

impl CongestionControl for Cubic {
    fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        // HyStart ends slow start before the first loss (Linux's default; unpaced threshold).
        let slow_start = w.cwnd < w.ssthresh && !ack.in_recovery;
        if slow_start
            && self
                .hystart
                .on_ack(ack.now, ack.ackno, ack.snd_nxt, w.cwnd, false)
        {
            w.ssthresh = w.cwnd;
        }
        if let Some(r) = ack.rtt_ns {
            let r = r as f64 / NS_PER_SEC as f64;
            self.srtt = if self.srtt == 0.0 {
                r
            } else {
                0.875 * self.srtt + 0.125 * r
            };
        }
    }

    fn increase(&mut self, w: &mut Window, ack: &AckSample) {
        let mut acked = ack.acked as f64;
        if w.cwnd < w.ssthresh {
            let step = acked.min(w.ssthresh - w.cwnd);
            w.cwnd += step;
            acked -= step;
            if acked <= 0.0 {
                return;
            }
        }
        if self.t_epoch().is_none() {
            self.begin_epoch(ack.now, w.cwnd);
        }
        let t = (ack.now - self.t_epoch().unwrap_or(ack.now)) as f64 / NS_PER_SEC as f64;
        let alpha = if self.w_est >= self.cwnd_prior {
            1.0
        } else {
            3.0 * (1.0 - self.params.beta) / (1.0 + self.params.beta)
        };
        self.w_est += alpha * acked / w.cwnd;
        if self.w_cubic(t) < self.w_est {
            w.cwnd = self.w_est; // Reno-friendly region (§4.3)
        } else {
            let target = self.w_cubic(t + self.srtt).clamp(w.cwnd, 1.5 * w.cwnd);
            // An ACK covering many segments (the end of a recovery) moves cwnd up to the
            // target, never past it.
            w.cwnd = (w.cwnd + (target - w.cwnd) / w.cwnd * acked).min(target);
        }
    }

    fn on_congestion(&mut self, w: &mut Window, flight: f64, _now: SimTime) {
        self.reduce(w, flight);
        w.cwnd = w.ssthresh;
    }

    fn on_send(&mut self, seq: i64, now: SimTime, _in_flight: i64, highest_ack: i64) {
        self.hystart.on_send(seq, now, highest_ack);
    }

    fn on_timeout(&mut self, w: &mut Window, flight: f64, _now: SimTime) {
        self.hystart.reset();
        self.reduce(w, flight);
        self.epoch = AFTER_TIMEOUT;
        w.cwnd = 1.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: SimTime = 1_000_000;

    /// Drives a window-limited flow of round-trip time `rtt` from a loss at cwnd `w0`: every
    /// round, ⌊cwnd⌋ ACKs of one segment each, spread evenly over the round. Returns
    /// (seconds since the first congestion-avoidance ACK, cwnd) after each round.
    fn run(cc: &mut Cubic, w0: f64, rtt: SimTime, secs: f64) -> Vec<(f64, f64)> {
        let mut w = Window {
            cwnd: w0,
            ssthresh: 1e9,
        };
        cc.srtt = rtt as f64 / NS_PER_SEC as f64;
        cc.on_congestion(&mut w, w0, 0);
        assert_eq!(w.cwnd, w0 * cc.params.beta);
        let mut now = rtt;
        let mut trace = Vec::new();
        while (now as f64) < secs * NS_PER_SEC as f64 {
            let n = w.cwnd.floor().max(1.0) as u64;
            for i in 0..n {
                let ack = AckSample {
                    now: now + i * rtt / n,
                    acked: 1,
                    ece: false,
                    ackno: 0,
                    snd_nxt: 0,
                    rtt_ns: None,
                    in_flight: 0,
                    in_recovery: false,
                };
                cc.increase(&mut w, &ack);
            }
            now += rtt;
            trace.push(((now - rtt) as f64 / NS_PER_SEC as f64, w.cwnd));
        }
        trace
    }

    #[test]
    fn window_follows_the_cubic_function_on_a_long_rtt_path() {
        // W_max 1000, RTT 100 ms: K = ∛(1000·0.3/0.4) = 9.09 s.
        let mut cc = Cubic::default();
        let trace = run(&mut cc, 1000.0, 100 * MS, 20.0);
        let k = (1000.0 * (1.0 - BETA) / C).cbrt();
        assert!((cc.k - k).abs() < 1e-9, "K {} want {k}", cc.k);
        for want_t in [1.0, 3.0, 6.0, 9.0, 12.0, 15.0] {
            let &(t, cwnd) = trace.iter().find(|(t, _)| *t >= want_t).unwrap();
            let closed = C * (t - k).powi(3) + 1000.0;
            // cwnd chases W_cubic(t + RTT) one round behind: within 1 % of W_cubic(t).
            let err = (cwnd - closed) / closed;
            assert!(err.abs() < 0.01, "t {t}: cwnd {cwnd} vs {closed} ({err})");
        }
    }

    #[test]
    fn tuned_c_and_beta_set_the_reduction_and_the_curve() {
        // tcp.cc.cubic = { c = 0.2, beta = 0.5 }: cwnd 500 after the loss (run() checks it),
        // K = ∛(1000·0.5/0.2) = 13.57 s where the defaults give 9.09 s, and the window follows
        // 0.2·(t − K)³ + 1000.
        let mut cc = Cubic {
            params: CubicParams { c: 0.2, beta: 0.5 },
            ..Cubic::default()
        };
        let trace = run(&mut cc, 1000.0, 100 * MS, 20.0);
        let k = (1000.0f64 * 0.5 / 0.2).cbrt();
        assert!((cc.k - k).abs() < 1e-9, "K {} want {k}", cc.k);
        assert!((k - (1000.0 * (1.0 - BETA) / C).cbrt()).abs() > 4.0);
        for want_t in [3.0, 9.0, 15.0] {
            let &(t, cwnd) = trace.iter().find(|(t, _)| *t >= want_t).unwrap();
            let closed = 0.2 * (t - k).powi(3) + 1000.0;
            let err = (cwnd - closed) / closed;
            assert!(err.abs() < 0.01, "t {t}: cwnd {cwnd} vs {closed} ({err})");
        }
    }

    #[test]
    fn small_bdp_grows_in_the_reno_friendly_region() {
        // W_max 20, RTT 10 ms: W_cubic(1 s) = 18.7 but W_est grows α_cubic = 0.53 per RTT.
        let mut cc = Cubic::default();
        let trace = run(&mut cc, 20.0, 10 * MS, 1.0);
        let &(t, cwnd) = trace.last().unwrap();
        let alpha = 3.0 * (1.0 - BETA) / (1.0 + BETA);
        assert!(
            cwnd > cc.w_cubic(t) + 10.0,
            "cwnd {cwnd} W_cubic {}",
            cc.w_cubic(t)
        );
        // W_est: from cwnd_epoch 14 by α per RTT up to cwnd_prior 20 (6/α rounds), then by 1
        // per RTT (each round adds α·⌊cwnd⌋/cwnd, slightly under the per-RTT rate).
        let rounds = t / 0.01;
        let reno_like = 20.0 + (rounds - 6.0 / alpha);
        let err = (cwnd - reno_like) / reno_like;
        eprintln!(
            "reno-friendly: t {t:.2} s cwnd {cwnd:.2} W_est {reno_like:.2} W_cubic {:.2}",
            cc.w_cubic(t)
        );
        assert!(err.abs() < 0.05, "cwnd {cwnd} vs W_est {reno_like}");
    }

    #[test]
    fn fast_convergence_and_timeout() {
        let mut cc = Cubic::default();
        let mut w = Window {
            cwnd: 100.0,
            ssthresh: 1e9,
        };
        cc.on_congestion(&mut w, 100.0, 0);
        assert_eq!((cc.w_max, w.ssthresh, w.cwnd), (100.0, 70.0, 70.0));
        // A second loss below W_max: W_max = 80·(1 + 0.7)/2 = 68.
        cc.on_congestion(&mut w, 80.0, 0);
        assert!((cc.w_max - 68.0).abs() < 1e-9);
        assert!((w.ssthresh - 56.0).abs() < 1e-9);
        cc.on_timeout(&mut w, 56.0, 0);
        assert_eq!(w.cwnd, 1.0);
        assert!((w.ssthresh - 39.2).abs() < 1e-9);
        // After a timeout the epoch starts with K = 0 at the current window.
        w.cwnd = w.ssthresh;
        let ack = AckSample {
            now: 5 * MS,
            acked: 1,
            ece: false,
            ackno: 0,
            snd_nxt: 0,
            rtt_ns: None,
            in_flight: 0,
            in_recovery: false,
        };
        cc.increase(&mut w, &ack);
        assert_eq!(cc.k, 0.0);
        assert!((cc.w_max - 39.2).abs() < 1e-9);
    }
}
