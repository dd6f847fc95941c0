//! Counters counted again inside the measurement window: a snapshot of every flow's and
//! every link direction's event counters when the window opens and when it closes; the
//! window's count is the difference (the run's count when the window never closes before the
//! end). Nothing is counted per event, so the hot path is unchanged.

use super::{Endpoint, Simulation};
use crate::traffic::sender::FlowCounts;

/// A flow's event counters (whole run, or the window's share).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FlowCounters {
    pub retransmits: u64,
    pub timeouts: u64,
    pub fast_retransmits: u64,
    pub ecn_marks: u64,
    pub ecn_responses: u64,
    /// Data packets dropped, by reason: early, forced, overflow, policed.
    pub drops_by_reason: [u64; 4],
    /// Data packets by the colour their last conditioner gave them (green, yellow, red).
    pub colored: [u64; 3],
    pub drops_by_prec: [u64; 3],
    /// The counters its sender declares ([`crate::traffic::sender::counters`]).
    pub declared: FlowCounts,
}

/// A link direction's event counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinkCounters {
    pub arrivals: u64,
    /// Drops by reason: early, forced, overflow, policed.
    pub drops: [u64; 4],
    pub marks: u64,
}

fn sub<const N: usize>(a: [u64; N], b: [u64; N]) -> [u64; N] {
    std::array::from_fn(|i| a[i] - b[i])
}

impl FlowCounters {
    fn since(self, start: FlowCounters) -> FlowCounters {
        FlowCounters {
            retransmits: self.retransmits - start.retransmits,
            timeouts: self.timeouts - start.timeouts,
            fast_retransmits: self.fast_retransmits - start.fast_retransmits,
            ecn_marks: self.ecn_marks - start.ecn_marks,
            ecn_responses: self.ecn_responses - start.ecn_responses,
            drops_by_reason: sub(self.drops_by_reason, start.drops_by_reason),
            colored: sub(self.colored, start.colored),
            drops_by_prec: sub(self.drops_by_prec, start.drops_by_prec),
            declared: self
                .declared
                .since(start.declared, crate::traffic::sender::counters()),
        }
    }
}

impl LinkCounters {
    fn since(self, start: LinkCounters) -> LinkCounters {
        LinkCounters {
            arrivals: self.arrivals - start.arrivals,
            drops: sub(self.drops, start.drops),
            marks: self.marks - start.marks,
        }
    }
}

/// Snapshots taken when the window opened and closed.
#[derive(Debug, Clone, Default)]
pub struct WindowSnapshots {
    open: Option<(Vec<FlowCounters>, Vec<LinkCounters>)>,
    close: Option<(Vec<FlowCounters>, Vec<LinkCounters>)>,
}

impl Simulation {
    fn counters(&self) -> (Vec<FlowCounters>, Vec<LinkCounters>) {
        let flows = self
            .flows
            .iter()
            .map(|f| {
                let (timeouts, fast_retransmits, ecn_responses, declared) = match &f.ep {
                    Endpoint::Tcp { sender, .. } => (
                        sender.stats().timeouts,
                        sender.stats().fast_retransmits,
                        sender.stats().ecn_responses,
                        sender.counts(),
                    ),
                    Endpoint::Udp { .. } => (0, 0, 0, FlowCounts::default()),
                };
                FlowCounters {
                    retransmits: f.stats.retransmits,
                    timeouts,
                    fast_retransmits,
                    ecn_marks: f.stats.ecn_marks,
                    ecn_responses,
                    drops_by_reason: f.stats.drops_by_reason,
                    colored: f.stats.colored,
                    drops_by_prec: f.stats.drops_by_prec,
                    declared,
                }
            })
            .collect();
        let links = self
            .dirs
            .iter()
            .map(|l| LinkCounters {
                arrivals: l.stats.arrivals,
                drops: l.stats.drops,
                marks: l.stats.marks,
            })
            .collect();
        (flows, links)
    }

    pub(super) fn on_measure_start(&mut self) {
        self.in_window = true;
        self.window.open = Some(self.counters());
    }

    pub(super) fn on_measure_end(&mut self) {
        self.in_window = false;
        self.window.close = Some(self.counters());
    }

    /// The window's counts: (per flow, per link direction). Zero when the window never
    /// opened; up to the end of the run when it never closed.
    pub(super) fn window_counts(&self) -> (Vec<FlowCounters>, Vec<LinkCounters>) {
        let Some((f0, l0)) = &self.window.open else {
            return (
                vec![FlowCounters::default(); self.flows.len()],
                vec![LinkCounters::default(); self.dirs.len()],
            );
        };
        let now = self.counters();
        let (f1, l1) = self.window.close.as_ref().unwrap_or(&now);
        // A flow built after the window opened (an arrival process's slot) started from zero;
        // one built after it closed counts nothing.
        let flows = (0..self.flows.len())
            .map(|i| {
                let a = f0.get(i).copied().unwrap_or_default();
                f1.get(i).map_or_else(FlowCounters::default, |b| b.since(a))
            })
            .collect();
        (flows, l1.iter().zip(l0).map(|(b, a)| b.since(*a)).collect())
    }
}
