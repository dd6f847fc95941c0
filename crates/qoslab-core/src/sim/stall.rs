//! The event loop's checkpoint, every [`CHECK_EVERY`] events: simulated time must advance (a
//! component that re-arms itself at the same instant would otherwise hold the loop for ever,
//! out of reach of Ctrl-C and of the time budget), and the caller may stop the loop there
//! ([`Simulation::run_until_or`]: its wall clock, its signals). Neither changes which events
//! run or their order: a stopped loop resumes where it left off.

use std::fmt;

use super::Simulation;
use crate::engine::EventKind;
use crate::units::SimTime;

/// Events handled between two checkpoints (a power of two: the loop tests the low bits of its
/// event count, the one thing the check costs per event).
pub const CHECK_EVERY: u64 = 4096;

/// Most events handled at one simulated instant before the run stops as stalled, plus
/// [`EVENTS_AT_ONE_INSTANT_PER_COMPONENT`] per flow, arrival slot and link direction
/// ([`Simulation::stall_bound`]). What happens at one instant in a valid scenario is bounded
/// by its components: a flow starts, stops, fires a timer or releases a paced segment a few
/// times at most, a link direction hands on the packets it holds. A component that re-arms
/// itself at `now` (a timer of zero length) reaches the bound in about a second at the loop's
/// 10-30 million events a second, while the largest legitimate burst of the project's
/// scenarios (10^4 flows starting together) stays below a thousandth of it.
pub const MAX_EVENTS_AT_ONE_INSTANT: u64 = 10_000_000;

/// The bound's share per component (see [`MAX_EVENTS_AT_ONE_INSTANT`]): a million flows
/// starting together may handle 64 events each at that instant.
pub const EVENTS_AT_ONE_INSTANT_PER_COMPONENT: u64 = 64;

/// Why a run stopped without simulated time advancing: the component of the event handled
/// when the bound was reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stall {
    /// The simulated instant it stopped at.
    pub at: SimTime,
    /// Events handled at that instant (at least).
    pub events: u64,
    /// The component, as the scenario names it ("flow 'f1' (its retransmission timer)").
    pub owner: String,
    /// The bound it reached ([`Simulation::stall_bound`]).
    pub bound: u64,
}

impl fmt::Display for Stall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "simulated time stopped at t = {:.9} s: {} re-armed itself at the same instant \
             ({} events there, the most allowed is {}); a duration it uses is too short",
            self.at as f64 / 1e9,
            self.owner,
            self.events,
            self.bound
        )
    }
}

/// The consecutive checkpoints at one instant.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Watch {
    at: SimTime,
    events: u64,
}

impl Simulation {
    /// The checkpoint after the event `kind`, every [`CHECK_EVERY`] events: true stops the loop
    /// (stalled, or `stop` said so). Simulated time never goes back, so every event between
    /// two checkpoints at the same instant ran at that instant.
    #[cold]
    #[inline(never)]
    pub(super) fn checkpoint(&mut self, kind: EventKind, stop: &mut dyn FnMut() -> bool) -> bool {
        let now = self.q.now();
        if now == self.watch.at {
            self.watch.events += CHECK_EVERY;
            let bound = self.stall_bound();
            if self.watch.events >= bound {
                self.stalled = Some(Stall {
                    at: now,
                    events: self.watch.events,
                    owner: self.owner(kind),
                    bound,
                });
                return true;
            }
        } else {
            self.watch = Watch { at: now, events: 0 };
        }
        stop()
    }

    /// Most events the run handles at one simulated instant: [`MAX_EVENTS_AT_ONE_INSTANT`]
    /// plus [`EVENTS_AT_ONE_INSTANT_PER_COMPONENT`] per flow, arrival slot and link direction,
    /// unless [`Simulation::set_stall_bound`] set another.
    pub fn stall_bound(&self) -> u64 {
        if self.stall_bound > 0 {
            return self.stall_bound;
        }
        let sc = &self.scenario;
        let slots: u64 = sc.arrivals.iter().map(|a| u64::from(a.max_active)).sum();
        let parts = sc.flows.len() as u64 + slots + 2 * sc.links.len() as u64;
        MAX_EVENTS_AT_ONE_INSTANT + EVENTS_AT_ONE_INSTANT_PER_COMPONENT * parts
    }

    /// Another bound of the events at one instant (0: the default), rounded up to a multiple
    /// of [`CHECK_EVERY`]: for tests and the fuzzer, which look for stalls in short runs.
    pub fn set_stall_bound(&mut self, events: u64) {
        self.stall_bound = events;
    }

    /// Why the run stopped without simulated time advancing, if it did: the run then ends
    /// there (its results are not a run's results).
    pub fn stalled(&self) -> Option<&Stall> {
        self.stalled.as_ref()
    }

    /// The component an event belongs to, named as the scenario names it.
    fn owner(&self, kind: EventKind) -> String {
        let sc = &self.scenario;
        let dir = |d: u32| {
            let l = &sc.links[self.dirs[d as usize].link];
            let (a, b) = if d % 2 == 0 { ("a", "b") } else { ("b", "a") };
            format!("link '{}' ({a}->{b})", l.name)
        };
        let flow = |f: u32, what: &str| {
            let f = f as usize;
            let name = match sc.flows.get(f) {
                Some(fc) => format!("flow '{}'", fc.name),
                None => match self.procs.iter().find(|p| p.slots.contains(&(f as u32))) {
                    Some(p) => format!("a flow of arrivals '{}'", p.cfg.name),
                    None => format!("flow {f}"),
                },
            };
            format!("{name} ({what})")
        };
        match kind {
            EventKind::Arrive(d, _) => format!("{} (its packets' arrivals)", dir(d)),
            EventKind::TxDone(d) => format!("{} (its transmissions)", dir(d)),
            EventKind::FlowStart(f) => flow(f, "its start"),
            EventKind::FlowStop(f) => flow(f, "its stop"),
            EventKind::UdpSend(f) => flow(f, "its source's packets"),
            EventKind::UdpToggle(f) => flow(f, "its source's on/off periods"),
            EventKind::Rto(f) => flow(f, "its retransmission timer"),
            EventKind::DelAck(f, _) => flow(f, "its receiver's delayed-ACK timer"),
            EventKind::Pace(f) => flow(f, "its pacing"),
            EventKind::Timer(c) => format!(
                "conditioner '{}' (its timer)",
                self.conds[c as usize].cfg.name
            ),
            EventKind::Signal(r, _) => {
                let (_, d, _, _) = self.signal_routes[r as usize];
                format!("{} (its queue's signals)", dir(d as u32))
            }
            EventKind::Sample => "the measurement's sampling".to_string(),
            EventKind::MeasureStart | EventKind::MeasureEnd => "the measurement window".to_string(),
            EventKind::FlowArrival(p) => {
                format!(
                    "arrivals '{}' (its arrivals)",
                    self.procs[p as usize].cfg.name
                )
            }
        }
    }
}
