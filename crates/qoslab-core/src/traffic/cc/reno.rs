//! Reno congestion avoidance as ns-2.35's `TcpAgent` does it (RFC 5681 AIMD): slow start adds
//! one packet per new ACK, congestion avoidance 1/cwnd per new ACK (`opencwnd`, window
//! increase option 0); a loss or an ECN-Echo halves the window (`slowdown(CLOSE_SSTHRESH_HALF
//! | CLOSE_CWND_HALF)`), a timeout halves ssthresh and restarts at one packet
//! (`CLOSE_CWND_RESTART`). ssthresh is an integer of at least 2, as in ns-2, while cwnd keeps
//! its fraction. Shared by the `reno` and `newreno` variants, which differ only in recovery.

use super::exports::{Ns2Agent, Ns3Cc, SenderExports};
use super::{AckSample, CongestionControl, NoParams, Tunable, Window};
use crate::params::{KeyError, Table};
use crate::units::SimTime;

/// ns-2.35's Reno agent and sink; ns-3's NewReno growth with the program's window halving
/// (ns-3 has no Reno recovery: `reno` runs as NewReno there); Linux's `reno` module (NewReno
/// with SACK).
pub const RENO: SenderExports = SenderExports {
    ns2: Some(Ns2Agent {
        agent: "Agent/TCP/Reno",
        sink: "Agent/TCPSink",
        settings: &[],
    }),
    ns3: Some(Ns3Cc {
        note: Some("ns-3 has no Reno loss recovery; its flows recover as NewReno (RFC 6582)"),
        ..NEWRENO_NS3
    }),
    kernel: Some("reno"),
};

/// ns-2.35's NewReno agent, its defaults made explicit.
pub const NEWRENO: SenderExports = SenderExports {
    ns2: Some(Ns2Agent {
        agent: "Agent/TCP/Newreno",
        sink: "Agent/TCPSink",
        settings: &[
            ("newreno_changes_", "0"),
            ("newreno_changes1_", "1"),
            ("partial_window_deflation_", "1"),
            ("exit_recovery_fix_", "0"),
        ],
    }),
    ns3: Some(NEWRENO_NS3),
    kernel: Some("reno"),
};

/// Reno's congestion control with SACK recovery: Fall & Floyd's `Agent/TCP/Sack1` sender and
/// its `Agent/TCPSink/Sack1` receiver (RFC 2018 blocks).
pub const SACK: SenderExports = SenderExports {
    ns2: Some(Ns2Agent {
        agent: "Agent/TCP/Sack1",
        sink: "Agent/TCPSink/Sack1",
        settings: &[],
    }),
    ns3: Some(NEWRENO_NS3),
    kernel: Some("reno"),
};

/// The ns-3 program's `QoslabNewReno`: TcpNewReno whose loss response halves the congestion
/// window as qoslab and RFC 5681 (FlightSize) do (python/qoslab/ns3/mapping.py says why).
const NEWRENO_NS3: Ns3Cc = Ns3Cc {
    type_id: "ns3::QoslabNewReno",
    defaults: &[],
    needs_pacing: None,
    stream: None,
    note: None,
};

#[derive(Debug, Clone, Default)]
pub struct Reno;

impl Tunable for Reno {
    type Params = NoParams;
    fn read(_: &Table) -> Result<NoParams, KeyError> {
        Ok(NoParams {})
    }
    fn with_params(_: &NoParams) -> Self {
        Reno
    }
}

/// ns-2's halving: ssthresh = max(2, ⌊flight/2⌋), and the halved flight (unfloored).
fn halve(w: &mut Window, flight: f64) -> f64 {
    let halfwin = flight / 2.0;
    w.ssthresh = halfwin.trunc().max(2.0);
    halfwin
}

impl CongestionControl for Reno {
    #[inline]
    fn increase(&mut self, w: &mut Window, _ack: &AckSample) {
        if w.cwnd < w.ssthresh {
            w.cwnd += 1.0;
        } else {
            w.cwnd += 1.0 / w.cwnd;
        }
    }

    fn on_congestion(&mut self, w: &mut Window, flight: f64, _now: SimTime) {
        w.cwnd = halve(w, flight);
    }

    fn on_timeout(&mut self, w: &mut Window, flight: f64, _now: SimTime) {
        halve(w, flight);
        w.cwnd = 1.0;
    }
}
