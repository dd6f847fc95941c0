//! DCTCP congestion control (RFC 8257), sender side, in packets.
//!
//! * §3.3: the sender counts the segments acknowledged (DCTCP.BytesAcked, here in segments)
//!   and those acknowledged by ACKs carrying ECN-Echo (DCTCP.BytesMarked). When the
//!   cumulative ACK reaches DCTCP.WindowEnd (SND.UNA ≥ WindowEnd, as Linux's
//!   `dctcp_update_alpha`: the window's last segment is acknowledged), once per window,
//!   M = marked / acked and DCTCP.Alpha ← (1 − g)·Alpha + g·M with g = 1/16; WindowEnd
//!   becomes SND.NXT and the counters restart. Alpha starts at 1 (Linux's
//!   `dctcp_alpha_on_init`, the conservative choice of §3.3).
//! * §3.4: on an ECN-Echo, at most once per window of data (the sender's gate, as for
//!   RFC 3168), cwnd ← cwnd·(1 − Alpha/2) and ssthresh ← cwnd, floored at 2 packets (Linux
//!   `dctcp_ssthresh`).
//! * §3.5: a loss or a timeout is answered as by Reno ([`super::reno`]); window growth is
//!   Reno's. As ns-2's sender does for RFC 3168, an ACK carrying ECN-Echo does not open the
//!   window.
//!
//! The receiver's side (§3.2: ECN-Echo reflects the CE state of the last segment; with
//! delayed ACKs an immediate ACK when that state changes) is in [`crate::traffic::sink`].
//! Left out: the §4.3 "DCTCP.Alpha reset after idle" and the §3.5 note on CE-marked
//! retransmissions.

use super::exports::{Ns3Cc, Ns3Value, SenderExports};
use super::reno::Reno;
use super::{AckSample, CongestionControl, Tunable, Window};
use crate::params::typed::Decl;
use crate::params::{open_closed, KeyError, Param, Table};
use crate::units::SimTime;

/// g, the EWMA gain of DCTCP.Alpha (§4.2 recommends 1/16).
pub const G: f64 = 1.0 / 16.0;

/// ns-2.35 has no DCTCP agent. ns-3: the program's `QoslabDctcp` (TcpDctcp with Linux's
/// two-segment floor on the reduction, `dctcp_ssthresh`, as qoslab's). Not emulated.
pub const EXPORTS: SenderExports = SenderExports {
    ns2: None,
    ns3: Some(Ns3Cc {
        type_id: "ns3::QoslabDctcp",
        defaults: &[
            ("ns3::TcpDctcp::DctcpShiftG", Ns3Value::Number("g", G)),
            (
                "ns3::TcpDctcp::DctcpAlphaOnInit",
                Ns3Value::Number("alpha_init", 1.0),
            ),
            ("ns3::TcpDctcp::UseEct0", Ns3Value::Text("true")),
        ],
        needs_pacing: None,
        stream: None,
        note: None,
    }),
    kernel: None,
};

const G_KEY: Decl<f64> = Decl::new(
    "g",
    open_closed(0.0, 1.0),
    "0.0625",
    "g, the gain of DCTCP.Alpha's moving average (RFC 8257 §4.2: 1/16).",
);

/// DCTCP's constants.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct DctcpParams {
    pub g: f64,
}

impl Default for DctcpParams {
    fn default() -> Self {
        DctcpParams { g: G }
    }
}

impl Tunable for Dctcp {
    type Params = DctcpParams;
    const PARAMS: &'static [Param] = &[G_KEY.param];
    fn read(t: &Table) -> Result<DctcpParams, KeyError> {
        Ok(DctcpParams { g: t.get(&G_KEY)? })
    }
    fn with_params(p: &DctcpParams) -> Self {
        Dctcp {
            g: p.g,
            ..Dctcp::default()
        }
    }
}

#[derive(Debug, Clone)]
pub struct Dctcp {
    /// g.
    pub g: f64,
    /// DCTCP.Alpha, the estimated fraction of marked segments.
    pub alpha: f64,
    /// DCTCP.WindowEnd: the segment whose acknowledgement ends the observation window.
    pub window_end: i64,
    /// DCTCP.BytesAcked, segments.
    pub acked: u64,
    /// DCTCP.BytesMarked, segments.
    pub marked: u64,
    reno: Reno,
}

impl Default for Dctcp {
    fn default() -> Self {
        Dctcp {
            g: G,
            alpha: 1.0,
            window_end: 0,
            acked: 0,
            marked: 0,
            reno: Reno,
        }
    }
}

impl CongestionControl for Dctcp {
    fn on_ack(&mut self, _w: &mut Window, ack: &AckSample) {
        self.acked += ack.acked as u64;
        if ack.ece {
            self.marked += ack.acked as u64;
        }
        // SND.UNA = ackno + 1 ≥ WindowEnd.
        if ack.ackno + 1 >= self.window_end {
            let m = if self.acked > 0 {
                self.marked as f64 / self.acked as f64
            } else {
                0.0
            };
            self.alpha = (1.0 - self.g) * self.alpha + self.g * m;
            self.window_end = ack.snd_nxt;
            self.acked = 0;
            self.marked = 0;
        }
    }

    #[inline]
    fn increase(&mut self, w: &mut Window, ack: &AckSample) {
        self.reno.increase(w, ack);
    }

    fn on_congestion(&mut self, w: &mut Window, flight: f64, now: SimTime) {
        self.reno.on_congestion(w, flight, now);
    }

    fn on_ecn_echo(&mut self, w: &mut Window, flight: f64, _now: SimTime) {
        w.ssthresh = (flight * (1.0 - self.alpha / 2.0)).max(2.0);
        w.cwnd = w.ssthresh;
    }

    fn on_timeout(&mut self, w: &mut Window, flight: f64, now: SimTime) {
        self.reno.on_timeout(w, flight, now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `windows` windows of `n` segments, each acknowledged by its own ACK; the first
    /// round(f·n) of each window's ACKs carry ECN-Echo. Returns Alpha after each window.
    fn drive(cc: &mut Dctcp, n: i64, f: f64, windows: usize) -> Vec<f64> {
        let mut w = Window {
            cwnd: n as f64,
            ssthresh: 1e9,
        };
        let marked = (f * n as f64).round() as i64;
        let mut alphas = Vec::new();
        // The first ACK (of segment 0) closes the initial window with nothing marked; the
        // sender keeps n segments in flight, so SND.NXT = ackno + n + 1.
        let mut seq = 0;
        cc.on_ack(&mut w, &ack(seq, false, seq + n + 1));
        assert_eq!(cc.alpha, 1.0 - cc.g);
        for _ in 0..windows {
            for k in 0..n {
                seq += 1;
                cc.on_ack(&mut w, &ack(seq, k < marked, seq + n + 1));
            }
            alphas.push(cc.alpha);
        }
        alphas
    }

    fn ack(ackno: i64, ece: bool, snd_nxt: i64) -> AckSample {
        AckSample {
            now: 0,
            acked: 1,
            ece,
            ackno,
            snd_nxt,
            rtt_ns: None,
            in_flight: 0,
            in_recovery: false,
        }
    }

    #[test]
    fn alpha_converges_to_the_marked_fraction() {
        for f in [0.0, 0.1, 0.25, 0.5, 1.0] {
            let mut cc = Dctcp::default();
            let alphas = drive(&mut cc, 40, f, 200);
            // One update per window of n ACKs: Alpha = (1 − g)·(1 − g) + g·f after the first.
            assert!((alphas[0] - ((1.0 - G) * (1.0 - G) + G * f)).abs() < 1e-12);
            let last = *alphas.last().unwrap();
            assert!((last - f).abs() < 1e-4, "f {f}: alpha {last}");
        }
    }

    #[test]
    fn a_tuned_g_is_the_one_alpha_moves_by() {
        // tcp.cc.dctcp = { g = 0.5 }: Alpha = (1 − g)² + g·f after the first window.
        let mut cc = Dctcp::with_params(&DctcpParams { g: 0.5 });
        let alphas = drive(&mut cc, 40, 0.25, 1);
        assert!(
            (alphas[0] - (0.25 + 0.5 * 0.25)).abs() < 1e-12,
            "{alphas:?}"
        );
    }

    #[test]
    fn ecn_echo_cuts_by_half_alpha() {
        let mut cc = Dctcp::default();
        drive(&mut cc, 40, 0.2, 300);
        let a = cc.alpha;
        let mut w = Window {
            cwnd: 40.0,
            ssthresh: 1e9,
        };
        cc.on_ecn_echo(&mut w, 40.0, 0);
        assert!((w.cwnd - 40.0 * (1.0 - a / 2.0)).abs() < 1e-12);
        assert!((w.cwnd - 36.0).abs() < 0.01, "cwnd {}", w.cwnd);
        assert_eq!(w.ssthresh, w.cwnd);
    }
}
