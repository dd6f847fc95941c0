//! Finite transfers and flow-arrival processes at run time.
//!
//! A flow with a `size` (or a connection opened by an arrival process) sends ⌈size /
//! packet size⌉ data segments (after ns-2's SYN) and is complete when the last one is
//! acknowledged; its record (start, end, size, the ideal completion time on the empty path)
//! goes to [`Simulation::take_records`]. An arrival process owns up to `max_active` flow
//! slots, built as they are first needed (a slot is a flow: its TCP sender and receiver): an
//! arrival takes a free slot, else a new one while fewer than `max_active` exist (else it is
//! refused); a finished connection's slot is taken back, when a slot is needed, once none of
//! its packets is still in the network. Memory grows with the most connections open at once,
//! not with `max_active` nor with the number of finished flows.

use super::{Endpoint, Simulation};
use crate::engine::EventKind;
use crate::rng::{stream, SimRng};
use crate::scenario::ArrivalConfig;
use crate::traffic::sender::sink_for;
use crate::units::{tx_time, SimTime};

/// A finished (or, at the end of the run, unfinished) transfer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FlowRecord {
    /// The arrival process (its index), or `u32::MAX` for a declared flow.
    pub process: u32,
    /// The connection's number within its process (from 0), or the declared flow's index.
    pub id: u64,
    /// Flow slot that carried it (the flows of the run, then each process's slots).
    pub slot: u32,
    pub dscp: u8,
    pub size_bytes: u64,
    pub segments: u64,
    pub start_ns: SimTime,
    /// When the last segment was acknowledged (`None`: unfinished at the end of the run).
    pub end_ns: Option<SimTime>,
    /// The completion time on the empty path ([`ideal_fct`]).
    pub ideal_ns: SimTime,
    pub retransmits: u64,
    pub timeouts: u64,
}

/// A transfer in progress on a flow slot.
#[derive(Debug, Clone, Copy)]
pub(super) struct Transfer {
    pub process: u32,
    pub id: u64,
    pub size_bytes: u64,
    pub segments: u64,
    pub start: SimTime,
    /// Retransmissions and timeouts of the slot when the transfer began (slots are reused).
    pub retransmits0: u64,
    pub timeouts0: u64,
    pub done: bool,
}

/// The path a transfer crosses, for its ideal completion time.
#[derive(Debug, Clone)]
pub(super) struct PathModel {
    /// (bit/s, propagation ns) of each forward and reverse link direction.
    fwd: Vec<(u64, u64)>,
    rev: Vec<(u64, u64)>,
}

impl PathModel {
    pub fn new(fwd: &[u32], rev: &[u32], dirs: &[crate::net::link::LinkDir]) -> Self {
        let m = |r: &[u32]| {
            r.iter()
                .map(|&d| (dirs[d as usize].bps, dirs[d as usize].delay))
                .collect()
        };
        PathModel {
            fwd: m(fwd),
            rev: m(rev),
        }
    }

    /// The ideal completion time of `segments` data segments of `packet` bytes with ACKs
    /// of `ack` bytes on the empty path, with a window never limiting: (the SYN's round trip,
    /// when there is one, then) the first segment's store-and-forward trip, the others
    /// following it at the slowest link's rate, and the last ACK's trip back.
    pub fn ideal_fct(&self, segments: u64, packet: u32, ack: u32, syn: bool) -> SimTime {
        let trip = |hops: &[(u64, u64)], bytes: u64| -> u64 {
            hops.iter().map(|&(bps, d)| d + tx_time(bytes, bps)).sum()
        };
        let slowest = self.fwd.iter().map(|h| h.0).min().unwrap_or(u64::MAX);
        let handshake = if syn {
            trip(&self.fwd, 40) + trip(&self.rev, ack as u64)
        } else {
            0
        };
        handshake
            + trip(&self.fwd, packet as u64)
            + segments.saturating_sub(1) * tx_time(packet as u64, slowest)
            + trip(&self.rev, ack as u64)
    }
}

/// An arrival process at run time.
pub(super) struct Process {
    pub cfg: ArrivalConfig,
    /// Its slots built so far (flow indices, in the order they were built; at most
    /// `max_active`).
    pub slots: Vec<u32>,
    /// Where its route starts in the simulation's route table (every slot shares it) and the
    /// route's round-trip propagation delay.
    pub route: (u32, u32),
    pub rtt: SimTime,
    pub free: Vec<u32>,
    /// Slots of finished connections that may still have packets in the network.
    pub draining: Vec<u32>,
    pub rng: SimRng,
    pub path: PathModel,
    pub arrivals: u64,
    pub refused: u64,
    pub completed: u64,
    /// Connections open now and the most open at once.
    pub active: u64,
    pub peak_active: u64,
}

impl Process {
    pub fn new(
        cfg: &ArrivalConfig,
        index: usize,
        (route, rtt): ((u32, u32), SimTime),
        path: PathModel,
        seed: u64,
    ) -> Self {
        Process {
            cfg: cfg.clone(),
            slots: Vec::new(),
            route,
            rtt,
            free: Vec::new(),
            draining: Vec::new(),
            rng: SimRng::derive(seed, stream::ARRIVALS | index as u64),
            path,
            arrivals: 0,
            refused: 0,
            completed: 0,
            active: 0,
            peak_active: 0,
        }
    }

    /// Finished connections none of whose packets is still in the network give their slots
    /// back (looked at when a slot is needed, not on every packet).
    fn reclaim(&mut self, flows: &mut [super::Flow]) {
        self.draining.retain(|&fi| {
            let f = &mut flows[fi as usize];
            let st = &f.stats;
            let idle = st.sent_pkts == st.delivered_pkts + st.dropped_pkts
                && st.acks_sent == st.acks_delivered + st.acks_dropped;
            if idle {
                f.transfer = None;
                self.free.push(fi);
            }
            !idle
        });
    }

    /// Time to the next arrival (exponential, at least 1 ns).
    pub fn gap(&mut self) -> SimTime {
        let mean = 1e9 / self.cfg.arrival_rate;
        crate::units::round_u64(self.rng.exponential(mean)).max(1)
    }
}

/// What the results report of an arrival process.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProcessCounts {
    pub arrivals: u64,
    pub refused: u64,
    pub completed: u64,
    pub peak_active: u64,
}

impl Simulation {
    /// The first arrival of every process, at its start plus an exponential gap.
    pub(super) fn arm_arrivals(&mut self) {
        for p in 0..self.procs.len() {
            let t = self.procs[p].cfg.start_ns + self.procs[p].gap();
            if t < self.procs[p].cfg.stop_ns {
                self.q.at(t, EventKind::FlowArrival(p as u32));
            }
        }
    }

    /// A flow of process `p` arrives: the next arrival is scheduled, and the flow opens a
    /// connection on a free slot (refused when none is free).
    pub(super) fn on_flow_arrival(&mut self, now: SimTime, p: usize) {
        let pr = &mut self.procs[p];
        let next = now + pr.gap();
        if next < pr.cfg.stop_ns {
            self.q.at(next, EventKind::FlowArrival(p as u32));
        }
        pr.arrivals += 1;
        let size = pr.cfg.sizes.sample(&mut pr.rng).max(1);
        let phase = pr.rng.uniform();
        // Slots of connections finished since (a few: each waits only for its last packets)
        // come back first, so the same few slots stay in use and in cache.
        pr.reclaim(&mut self.flows);
        // A slot given back, else a new one (the lowest never used, as when all were built at
        // once and handed out lowest first).
        let (given_back, room) = (pr.free.pop(), pr.slots.len() < pr.cfg.max_active as usize);
        let slot = match given_back {
            Some(slot) => slot,
            None if room => self.new_slot(p),
            None => {
                self.procs[p].refused += 1;
                return;
            }
        };
        let pr = &mut self.procs[p];
        pr.active += 1;
        pr.peak_active = pr.peak_active.max(pr.active);
        let id = pr.arrivals - 1;
        let fi = slot as usize;
        let tcp = pr.cfg.tcp.clone();
        let f = &mut self.flows[fi];
        let segment_bytes = f.size;
        if let Endpoint::Tcp {
            sender,
            sink,
            rto_scheduled,
            ..
        } = &mut f.ep
        {
            // The slot's counters run on across its connections (the process's row sums
            // them; each transfer's record takes the difference).
            sender.renew(&tcp, phase, segment_bytes);
            *sink = sink_for(&tcp);
            *rto_scheduled = None;
        }
        f.ts_recent_ack = 0;
        f.ts_recent_data = 0;
        f.start = now;
        // A new connection meets fresh per-flow meters.
        for c in &mut self.conds {
            if c.cfg.scope == crate::scenario::Scope::PerFlow {
                c.meters[fi] = None;
            }
        }
        self.begin_transfer(now, fi, p as u32, id, size);
    }

    /// Builds a slot of process `p`: a flow after all others, with its per-flow state in the
    /// conditioners, the queues (path RTTs) and the meters' window buffer.
    fn new_slot(&mut self, p: usize) -> u32 {
        let pr = &mut self.procs[p];
        let fi = self.flows.len() as u32;
        pr.slots.push(fi);
        self.flows.push(super::slot_flow(&pr.cfg, pr.route));
        self.cwnd_buf.push(f64::NAN);
        for c in &mut self.conds {
            if c.cfg.scope == crate::scenario::Scope::PerFlow {
                c.meters.push(None);
            }
        }
        self.path_rtts.push(pr.rtt);
        if self.wants_rtts {
            for d in &mut self.dirs {
                crate::aqm::Aqm::set_path_rtts(&mut d.aqm, &self.path_rtts);
            }
        }
        fi
    }

    /// Starts a finite transfer of `size` bytes on flow `fi`.
    pub(super) fn begin_transfer(
        &mut self,
        now: SimTime,
        fi: usize,
        process: u32,
        id: u64,
        size: u64,
    ) {
        let f = &mut self.flows[fi];
        let segments = size.div_ceil(f.size as u64);
        let (retransmits0, timeouts0) = match &f.ep {
            Endpoint::Tcp { sender, .. } => (f.stats.retransmits, sender.stats().timeouts),
            Endpoint::Udp { .. } => (0, 0),
        };
        f.transfer = Some(Transfer {
            process,
            id,
            size_bytes: size,
            segments,
            start: now,
            retransmits0,
            timeouts0,
            done: false,
        });
        let mut buf = std::mem::take(&mut self.buf);
        if let Endpoint::Tcp { sender, .. } = &mut self.flows[fi].ep {
            sender.start_transfer(now, segments, &mut buf);
        }
        self.transmit_tcp(now, fi, &mut buf);
        self.buf = buf;
    }

    /// After an ACK reached flow `fi`'s sender: records the transfer when it is complete.
    pub(super) fn check_transfer(&mut self, now: SimTime, fi: usize) {
        let f = &mut self.flows[fi];
        let Some(t) = f.transfer.as_mut() else {
            return;
        };
        let Endpoint::Tcp { sender, .. } = &f.ep else {
            return;
        };
        if t.done || !sender.transfer_done() {
            return;
        }
        t.done = true;
        let t = *t;
        let rec = self.record_of(fi, &t, Some(now));
        self.records.push(rec);
        if t.process != u32::MAX {
            let pr = &mut self.procs[t.process as usize];
            pr.completed += 1;
            pr.active -= 1;
            pr.draining.push(fi as u32);
        }
    }

    pub(super) fn record_of(&self, fi: usize, t: &Transfer, end: Option<SimTime>) -> FlowRecord {
        let f = &self.flows[fi];
        let (timeouts, ack, syn) = match &f.ep {
            Endpoint::Tcp {
                sender, ack_size, ..
            } => (sender.stats().timeouts, *ack_size, sender.syn()),
            Endpoint::Udp { .. } => (0, 40, false),
        };
        let ideal_ns = match t.process {
            u32::MAX => self.static_paths[fi].ideal_fct(t.segments, f.size, ack, syn),
            p => self.procs[p as usize]
                .path
                .ideal_fct(t.segments, f.size, ack, syn),
        };
        FlowRecord {
            process: t.process,
            id: t.id,
            slot: fi as u32,
            dscp: f.dscp,
            size_bytes: t.size_bytes,
            segments: t.segments,
            start_ns: t.start,
            end_ns: end,
            ideal_ns,
            retransmits: f.stats.retransmits - t.retransmits0,
            timeouts: timeouts - t.timeouts0,
        }
    }

    /// The finished transfers recorded since the last call (the caller streams them out, so
    /// the simulation does not keep them).
    pub fn take_records(&mut self) -> Vec<FlowRecord> {
        std::mem::take(&mut self.records)
    }

    /// Transfers still running: their records with no end.
    pub(super) fn unfinished_records(&self) -> Vec<FlowRecord> {
        self.flows
            .iter()
            .enumerate()
            .filter_map(|(fi, f)| match &f.transfer {
                Some(t) if !t.done => Some(self.record_of(fi, t, None)),
                _ => None,
            })
            .collect()
    }

    pub(super) fn process_counts(&self) -> Vec<ProcessCounts> {
        self.procs
            .iter()
            .map(|p| ProcessCounts {
                arrivals: p.arrivals,
                refused: p.refused,
                completed: p.completed,
                peak_active: p.peak_active,
            })
            .collect()
    }
}
