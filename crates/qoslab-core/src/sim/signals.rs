//! Timers and signals between components, for any mechanism that uses them: a meter's timer
//! ([`crate::conditioner::Meter::timer_period`], e.g. TWAM's operating interval) and the
//! value it signals ([`crate::conditioner::Meter::on_timer`]), delivered after each route's
//! delay to the queues that follow that conditioner
//! ([`crate::aqm::QueueDiscipline::signal_source`], e.g. DWRED) through
//! [`crate::aqm::Aqm::on_signal`].

use super::Simulation;
use crate::aqm::Aqm;
use crate::conditioner::Meter;
use crate::engine::EventKind;
use crate::sim::Endpoint;
use crate::units::SimTime;

impl Simulation {
    /// Conditioner `ci`'s meter timer fires: it sees the senders' windows, may signal a value
    /// to the queues that follow it, and is re-armed.
    pub(super) fn on_timer(&mut self, now: SimTime, ci: usize) {
        for (k, f) in self.flows.iter().enumerate() {
            self.cwnd_buf[k] = match &f.ep {
                Endpoint::Tcp { sender, .. } => sender.cwnd(),
                Endpoint::Udp { .. } => 0.0,
            };
        }
        let Some(m) = self.conds[ci].meters[0].as_mut() else {
            return;
        };
        let Some(period) = m.timer_period() else {
            return;
        };
        let value = m.on_timer(now, &self.cwnd_buf);
        self.q.at(now + period, EventKind::Timer(ci as u32));
        let Some(value) = value else {
            return;
        };
        for (k, &(src, _, _, delay)) in self.signal_routes.iter().enumerate() {
            if src == ci {
                let bits = (value as f32).to_bits();
                self.q.at(now + delay, EventKind::Signal(k as u32, bits));
            }
        }
    }

    /// A signal reaches the queue of route `route`.
    pub(super) fn on_signal(&mut self, route: usize, bits: u32) {
        let (_, d, sub, _) = self.signal_routes[route];
        let dir = &mut self.dirs[d];
        let aqm = match (sub, dir.held_mut()) {
            (Some(i), Some(m)) => m.aqm_mut(i).expect("validated: a physical queue"),
            _ => &mut dir.aqm,
        };
        aqm.on_signal(self.q.now(), f32::from_bits(bits) as f64);
    }
}
