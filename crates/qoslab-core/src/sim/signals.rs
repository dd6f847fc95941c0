//! Timers and signals between components: a TWAM closing its operating interval and the
//! window it signals to the DWRED queues that follow it.

use super::Simulation;
use crate::aqm::AnyAqm;
use crate::conditioner::AnyMeter;
use crate::engine::EventKind;
use crate::sim::Endpoint;
use crate::units::SimTime;

impl Simulation {
    // --- TWAM and DWRED ---------------------------------------------------------------

    /// A TWAM closes its operating interval: Eq. 3 from the windows (the senders' cwnd for
    /// the oracle), then Σ W_k is signalled to the DWRED queues that follow it.
    pub(super) fn on_twam_tick(&mut self, now: SimTime, ci: usize) {
        for (k, f) in self.flows.iter().enumerate() {
            self.cwnd_buf[k] = match &f.ep {
                Endpoint::Tcp { sender, .. } => sender.cwnd,
                Endpoint::Udp { .. } => 0.0,
            };
        }
        let c = &mut self.conds[ci];
        let Some(AnyMeter::Twam(t)) = c.meters[0].as_mut() else {
            return;
        };
        let interval = t.params().interval();
        let window = t.tick(now, Some(&self.cwnd_buf));
        self.q.at(now + interval, EventKind::TwamTick(ci as u32));
        for (k, &(src, _, _, delay)) in self.dwred_targets.iter().enumerate() {
            if src == ci {
                let bits = (window as f32).to_bits();
                self.q
                    .at(now + delay, EventKind::WindowSignal(k as u32, bits));
            }
        }
    }

    pub(super) fn on_window_signal(&mut self, target: usize, bits: u32) {
        let (_, d, sub, _) = self.dwred_targets[target];
        let window = f32::from_bits(bits) as f64;
        let dir = &mut self.dirs[d];
        let aqm = match (sub, dir.multi.as_mut()) {
            (Some(i), Some(m)) => &mut m.subs[i].aqm,
            _ => &mut dir.aqm,
        };
        if let AnyAqm::Dwred(a) = aqm {
            a.on_window_signal(window);
        }
    }
}
