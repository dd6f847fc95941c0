//! Folding the results of an arrival process's connection slots into one row per process,
//! and every flow's delays into one distribution per DiffServ class.

use super::delay::DelaySummary;
use super::window::FlowCounters;
use super::{FlowResult, FlowStats, Simulation};
use crate::stats::QuantileSketch;
use crate::traffic::sender::{counters, FlowCounts};

/// One DiffServ class (the codepoint its hosts set): its flows' delays together.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClassResult {
    pub dscp: u8,
    /// Rows of the flows table in the class (an arrival process counts once).
    pub flows: u64,
    pub delay: DelaySummary,
}

fn add<const N: usize>(a: &mut [u64; N], b: &[u64; N]) {
    a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
}

impl FlowStats {
    fn absorb(&mut self, o: &FlowStats) {
        self.sent_pkts += o.sent_pkts;
        self.sent_bytes += o.sent_bytes;
        self.retransmits += o.retransmits;
        self.delivered_pkts += o.delivered_pkts;
        self.delivered_bytes += o.delivered_bytes;
        self.dropped_pkts += o.dropped_pkts;
        add(&mut self.drops_by_reason, &o.drops_by_reason);
        add(&mut self.colored, &o.colored);
        add(&mut self.drops_by_prec, &o.drops_by_prec);
        for &(d, n) in &o.drops_at {
            match self.drops_at.iter_mut().find(|(x, _)| *x == d) {
                Some(e) => e.1 += n,
                None => self.drops_at.push((d, n)),
            }
        }
        self.window_delivered_bytes += o.window_delivered_bytes;
        self.window_delivered_in_bytes += o.window_delivered_in_bytes;
        self.window_goodput_pkts += o.window_goodput_pkts;
        self.window_sent_bytes += o.window_sent_bytes;
        self.acks_sent += o.acks_sent;
        self.acks_dropped += o.acks_dropped;
        self.acks_delivered += o.acks_delivered;
        self.ecn_marks += o.ecn_marks;
    }
}

impl FlowCounters {
    fn absorb(&mut self, o: &FlowCounters) {
        self.retransmits += o.retransmits;
        self.timeouts += o.timeouts;
        self.fast_retransmits += o.fast_retransmits;
        self.ecn_marks += o.ecn_marks;
        self.ecn_responses += o.ecn_responses;
        add(&mut self.drops_by_reason, &o.drops_by_reason);
        add(&mut self.colored, &o.colored);
        add(&mut self.drops_by_prec, &o.drops_by_prec);
        self.declared.absorb(&o.declared, counters());
    }
}

impl Simulation {
    /// `all` has a row per flow slot; returns the declared flows' rows followed by one row per
    /// arrival process, and the per-class delays.
    pub(super) fn fold_processes(
        &self,
        mut all: Vec<FlowResult>,
    ) -> (Vec<FlowResult>, Vec<ClassResult>) {
        // Per class: (rows, merged sketch), in codepoint order.
        let mut classes: Vec<(u8, u64, QuantileSketch)> = Vec::new();
        let mut class = |dscp: u8, rows: u64, sk: &QuantileSketch| match classes
            .iter_mut()
            .find(|c| c.0 == dscp)
        {
            Some(c) => {
                c.1 += rows;
                c.2.merge(sk);
            }
            None => classes.push((dscp, rows, sk.clone())),
        };
        let declared = self.scenario.flows.len();
        for f in &self.flows[..declared] {
            class(f.dscp, 1, &f.delay.sketch);
        }
        let rows_of_slots = all.split_off(declared);
        let mut rows = all;
        for pr in &self.procs {
            // Its slots' rows in slot order (as when every slot was built at the start: a slot
            // never used added nothing).
            let mut order = pr.slots.clone();
            order.sort_unstable();
            let slots: Vec<&FlowResult> = order
                .iter()
                .map(|&fi| &rows_of_slots[fi as usize - declared])
                .collect();
            let mut sketch = QuantileSketch::new(crate::stats::DEFAULT_ALPHA);
            for &fi in &order {
                sketch.merge(&self.flows[fi as usize].delay.sketch);
            }
            class(pr.cfg.dscp, 1, &sketch);
            let mut row = FlowResult {
                delay: DelaySummary::of(&sketch),
                jitter_s: f64::NAN,
                start_ns: pr.cfg.start_ns,
                throughput_bps: 0.0,
                goodput_bps: 0.0,
                in_throughput_bps: 0.0,
                in_flight: 0,
                final_cwnd: f64::NAN,
                final_ssthresh: f64::NAN,
                srtt_s: f64::NAN,
                timeouts: 0,
                fast_retransmits: 0,
                ecn_responses: 0,
                counts: FlowCounts::default(),
                window: FlowCounters::default(),
                stats: FlowStats::default(),
            };
            for s in slots {
                row.throughput_bps += s.throughput_bps;
                row.goodput_bps += s.goodput_bps;
                row.in_throughput_bps += s.in_throughput_bps;
                row.in_flight += s.in_flight;
                row.timeouts += s.timeouts;
                row.fast_retransmits += s.fast_retransmits;
                row.ecn_responses += s.ecn_responses;
                row.counts.absorb(&s.counts, counters());
                row.window.absorb(&s.window);
                row.stats.absorb(&s.stats);
            }
            rows.push(row);
        }
        classes.sort_by_key(|c| c.0);
        let classes = classes
            .into_iter()
            .map(|(dscp, flows, sk)| ClassResult {
                dscp,
                flows,
                delay: DelaySummary::of(&sk),
            })
            .collect();
        (rows, classes)
    }
}
