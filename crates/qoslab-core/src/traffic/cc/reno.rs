//! Reno congestion avoidance as ns-2.35's `TcpAgent` does it (RFC 5681 AIMD): slow start adds
//! one packet per new ACK, congestion avoidance 1/cwnd per new ACK (`opencwnd`, window
//! increase option 0); a loss or an ECN-Echo halves the window (`slowdown(CLOSE_SSTHRESH_HALF
//! | CLOSE_CWND_HALF)`), a timeout halves ssthresh and restarts at one packet
//! (`CLOSE_CWND_RESTART`). ssthresh is an integer of at least 2, as in ns-2, while cwnd keeps
//! its fraction. Shared by the `reno` and `newreno` variants, which differ only in recovery.

use super::{AckSample, CongestionControl, NoParams, Tunable, Window};
use crate::params::{KeyError, Table};
use crate::units::SimTime;

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
