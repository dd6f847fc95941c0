//! The link emulator: the scenario's link directions that end at one node, each with its
//! conditioners, queue discipline, transmitter and propagation delay — the simulator's own
//! types ([`LinkDir`], [`AnyAqm`](qoslab_core::aqm::AnyAqm), the meters of
//! `qoslab_core::conditioner`) driven by real packets' arrival times and headers.
//!
//! No clock and no socket here: the daemon passes in the time (ns on its monotonic clock)
//! and each packet's parsed headers, asks which packets are due, and turns them into
//! verdicts. So everything in this file is tested without root.
//!
//! A direction a → b is emulated where its packets enter b (iptables PREROUTING on b's end of
//! the veth, NFQUEUE): the veth itself is instantaneous, so a packet reaches the daemon when
//! the simulator would hand it to the link, and it is released (accepted) when the simulator
//! would deliver it at b: after the queue, the transmission at the link rate and the
//! propagation delay.

use std::collections::{HashMap, VecDeque};

use qoslab_core::aqm::DropReason;
use qoslab_core::net::link::{Admit, LinkDir, LinkStats, LINE_SHRINK_EVERY_NS};
use qoslab_core::packet::{PacketArena, PacketId, PacketKind, PacketMeta};
use qoslab_core::rng::{stream, SimRng};
use qoslab_core::scenario::{Action, Scenario};
use qoslab_core::sim::{build_aqm, build_qdisc, Conditioner};
use qoslab_core::units::SimTime;

use crate::ipv4::Headers;

/// How the real traffic of one scenario flow is recognised: its protocol and the server
/// port (data travels to it, ACKs come from it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowPort {
    pub protocol: u8,
    pub port: u16,
    /// TCP: the segment payload size, to express sequence numbers in packets as the
    /// simulator does (0 for UDP).
    pub mss: u32,
}

/// One link direction handled by this daemon.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DirSpec {
    /// Link direction index: link * 2 + (0 for a→b, 1 for b→a).
    pub dir_idx: usize,
    /// The kernel serialises this direction (htb + pfifo on the sender's veth, for the
    /// calibration): the daemon adds the propagation delay only.
    pub delay_only: bool,
}

/// What happened to an arriving packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Held: release it when [`Emulator::due`] returns its id.
    Held(PacketId),
    /// Dropped by a conditioner (policer) or the queue discipline.
    Dropped(DropReason),
    /// Not a packet of any scenario flow (e.g. ICMP): pass it at once, uncounted.
    Unclassified,
}

struct Dir {
    spec: DirSpec,
    link: LinkDir,
    conds: Vec<usize>,
    /// Multi-queue directions: end of the transmission in progress.
    tx_done: Option<SimTime>,
    /// Delay-only directions: (release time, packet) in order.
    delay_line: VecDeque<(SimTime, PacketId)>,
}

/// Per-flow counters (data packets only, as the simulator's flow table).
#[derive(Debug, Clone, Default)]
pub struct FlowCounters {
    pub arrivals: u64,
    pub colored: [u64; 3],
    pub drops_by_reason: [u64; 4],
    pub drops_by_prec: [u64; 3],
    pub acks: u64,
    pub acks_dropped: u64,
}

pub struct Emulator {
    dirs: Vec<Dir>,
    arena: PacketArena,
    conds: Vec<Conditioner>,
    by_port: HashMap<(u8, u16), u32>,
    flow_nodes: Vec<(usize, usize)>,
    mss: Vec<u32>,
    /// Per flow: the data direction's initial sequence number (from its SYN) and the UDP
    /// datagram counter.
    isn: Vec<Option<u32>>,
    udp_seq: Vec<u64>,
    pub flows: Vec<FlowCounters>,
    pub unclassified: u64,
    /// When [`Self::due`] next lets the lines give back the capacity they no longer hold
    /// (every [`LINE_SHRINK_EVERY_NS`] of its clock, as the simulator does:
    /// `LinkDir::shrink_line`); a daemon runs for a long time.
    next_line_shrink: SimTime,
    /// Held packets a packet-holding queue dropped after admitting them (CoDel's and
    /// FQ-CoDel's drops at dequeue, FQ-CoDel's drops from the fattest flow when full):
    /// already freed and counted; the daemon drops their messages ([`Self::take_dropped_held`]).
    dropped_held: Vec<PacketId>,
    /// Data drops not yet taken by the daemon, as (flow, time on `arrive`'s clock): it bins
    /// them as it bins deliveries ([`Self::take_data_drops`]), so that a run can tell a drop
    /// the source had time to repair from one its stop left unrepaired.
    data_drops: Vec<(u32, SimTime)>,
}

impl Emulator {
    /// The directions `dirs` of `sc`, with the simulator's random streams for `seed`;
    /// `ports[f]` recognises flow f.
    pub fn new(sc: &Scenario, seed: u64, dirs: &[DirSpec], ports: &[FlowPort]) -> Emulator {
        let mut out = Vec::with_capacity(dirs.len());
        for &spec in dirs {
            let l = &sc.links[spec.dir_idx / 2];
            let (from, to, qc) = if spec.dir_idx % 2 == 0 {
                (l.a_idx, l.b_idx, &l.queue_ab)
            } else {
                (l.b_idx, l.a_idx, &l.queue_ba)
            };
            let dir_id = spec.dir_idx as u64;
            let mut link = LinkDir::new(
                spec.dir_idx / 2,
                from,
                to,
                l.bandwidth_bps,
                l.delay_ns,
                qc.limit(),
                build_aqm(qc, l.bandwidth_bps),
                SimRng::derive(seed, stream::QUEUE | dir_id),
                (0, SimTime::MAX),
            );
            link.set_held(build_qdisc(qc, l.bandwidth_bps, seed, dir_id));
            out.push(Dir {
                spec,
                link,
                conds: Vec::new(),
                tx_done: None,
                delay_line: VecDeque::new(),
            });
        }
        let mut conds = Vec::new();
        for (i, c) in sc.conditioners.iter().enumerate() {
            // Every conditioner keeps its index (and so its random stream and its row in the
            // output table); only those on this daemon's directions ever see a packet.
            if let Some(d) = out
                .iter_mut()
                .find(|d| d.spec.dir_idx == c.dir_idx && !d.spec.delay_only)
            {
                d.conds.push(i);
            }
            conds.push(Conditioner::new(c, i, sc.flows.len(), seed));
        }
        let by_port = ports
            .iter()
            .enumerate()
            .map(|(f, p)| ((p.protocol, p.port), f as u32))
            .collect();
        Emulator {
            dirs: out,
            arena: PacketArena::with_capacity(1024),
            conds,
            by_port,
            flow_nodes: sc.flows.iter().map(|f| (f.src_idx, f.dst_idx)).collect(),
            mss: ports.iter().map(|p| p.mss).collect(),
            isn: vec![None; sc.flows.len()],
            udp_seq: vec![0; sc.flows.len()],
            flows: vec![FlowCounters::default(); sc.flows.len()],
            unclassified: 0,
            next_line_shrink: LINE_SHRINK_EVERY_NS,
            dropped_held: Vec::new(),
            data_drops: Vec::new(),
        }
    }

    /// The slot of direction `dir_idx` in this emulator, if it handles it.
    pub fn slot(&self, dir_idx: usize) -> Option<usize> {
        self.dirs.iter().position(|d| d.spec.dir_idx == dir_idx)
    }

    /// The flow and kind of a packet from its ports.
    pub fn classify(&self, h: &Headers) -> Option<(u32, PacketKind)> {
        if let Some(&f) = self.by_port.get(&(h.protocol, h.dport)) {
            return Some((f, PacketKind::Data));
        }
        self.by_port
            .get(&(h.protocol, h.sport))
            .map(|&f| (f, PacketKind::Ack))
    }

    /// A packet with headers `h` enters direction slot `s` at `now`.
    pub fn arrive(&mut self, now: SimTime, s: usize, h: &Headers) -> Admission {
        let Some((flow, kind)) = self.classify(h) else {
            self.unclassified += 1;
            return Admission::Unclassified;
        };
        let f = flow as usize;
        let seq = if h.protocol == crate::ipv4::TCP {
            if kind == PacketKind::Data && h.tcp_flags & crate::ipv4::SYN != 0 {
                self.isn[f] = Some(h.tcp_seq);
            }
            // ns-2's numbering (`syn` on): the SYN is segment 0, the data segment starting at
            // byte ISN + 1 + k·MSS is segment k + 1; an ACK carries the last in-order segment.
            let mss = self.mss[f].max(1) as u64;
            let isn = self.isn[f].unwrap_or(0);
            match h.tcp_seq.wrapping_sub(isn) as u64 {
                _ if kind == PacketKind::Ack => 0,
                0 => 0,
                d => (d - 1) / mss + 1,
            }
        } else {
            self.udp_seq[f] += 1;
            self.udp_seq[f] - 1
        };
        let mut meta = PacketMeta::new(flow, kind, h.total_len, seq, now);
        if h.protocol == crate::ipv4::TCP && kind == PacketKind::Ack {
            let mss = self.mss[f].max(1) as i64;
            let isn = self.isn[f].unwrap_or(0);
            meta.ack = h.tcp_ack.wrapping_sub(isn).wrapping_sub(1) as i64 / mss;
        }
        meta.dscp = h.dscp;
        meta.ecn = h.ecn;
        match kind {
            PacketKind::Data => self.flows[flow as usize].arrivals += 1,
            PacketKind::Ack => self.flows[flow as usize].acks += 1,
        }
        let id = self.arena.alloc(meta);
        if self.dirs[s].spec.delay_only {
            let d = &mut self.dirs[s];
            d.link.stats.arrivals += 1;
            d.delay_line.push_back((now + d.link.delay, id));
            return Admission::Held(id);
        }
        if !self.dirs[s].conds.is_empty() && !self.condition(now, s, id) {
            return Admission::Dropped(DropReason::Policed);
        }
        self.run_tx(now, s);
        let d = &mut self.dirs[s];
        d.link.advance(now);
        let admit = if d.link.held().is_some() {
            // A packet-holding queue (multi queues, CoDel, PIE, FQ-CoDel) may drop packets it
            // held, here or when it hands the next one to the transmitter.
            let a = d.link.enqueue_held(now, id, &mut self.arena);
            self.free_dropped(now, s);
            if let Admit::Queued { .. } = a {
                let d = &mut self.dirs[s];
                if let Some((done, _)) = d.link.start_next(now, &mut self.arena) {
                    d.tx_done = Some(done);
                }
                self.free_dropped(now, s);
            }
            a
        } else {
            d.link.enqueue(now, id, &mut self.arena)
        };
        match admit {
            Admit::Queued { .. } => Admission::Held(id),
            Admit::Dropped(r) => {
                self.on_drop(now, id, r);
                Admission::Dropped(r)
            }
        }
    }

    /// The simulator's conditioning of a packet entering direction slot `s` (`sim/forward.rs`
    /// `condition`): classifier, per-flow or aggregate meter, action per colour.
    fn condition(&mut self, now: SimTime, s: usize, id: PacketId) -> bool {
        for k in 0..self.dirs[s].conds.len() {
            let ci = self.dirs[s].conds[k];
            let p = *self.arena.get(id);
            let (fs, fd) = self.flow_nodes[p.flow as usize];
            let (src, dst) = if p.kind == PacketKind::Data {
                (fs, fd)
            } else {
                (fd, fs)
            };
            let Some((color, action)) = self.conds[ci].apply(now, &p, src, dst) else {
                continue;
            };
            if p.kind == PacketKind::Data {
                self.flows[p.flow as usize].colored[color as usize] += 1;
            }
            match action {
                Action::Mark(v) => self.arena.get_mut(id).dscp = v,
                Action::Keep => {}
                Action::Drop => {
                    let st = &mut self.dirs[s].link.stats;
                    st.arrivals += 1;
                    st.drops[DropReason::Policed as usize] += 1;
                    self.on_drop(now, id, DropReason::Policed);
                    return false;
                }
            }
        }
        true
    }

    fn on_drop(&mut self, now: SimTime, id: PacketId, r: DropReason) {
        let p = self.arena.free(id);
        let st = &mut self.flows[p.flow as usize];
        match p.kind {
            PacketKind::Data => {
                self.data_drops.push((p.flow, now));
                st.drops_by_reason[r as usize] += 1;
                st.drops_by_prec[qoslab_core::ds::drop_precedence(p.dscp) as usize] += 1;
            }
            PacketKind::Ack => st.acks_dropped += 1,
        }
    }

    /// Packet-holding directions: runs the transmitter's end-of-transmission events up to
    /// `now`.
    fn run_tx(&mut self, now: SimTime, s: usize) {
        while let Some(t) = self.dirs[s].tx_done.filter(|&t| t <= now) {
            let d = &mut self.dirs[s];
            d.link.tx_pending = false;
            d.link.advance(t);
            d.tx_done = d.link.start_next(t, &mut self.arena).map(|(done, _)| done);
            self.free_dropped(t, s);
        }
    }

    /// The packets direction `s`'s packet-holding queue dropped after holding them (counted by
    /// the link): freed, their flows told, and their ids kept for the daemon.
    fn free_dropped(&mut self, now: SimTime, s: usize) {
        if let Some(buf) = self.dirs[s].link.take_dropped() {
            for &(id, r) in &buf {
                self.on_drop(now, id, r);
                self.dropped_held.push(id);
            }
            self.dirs[s].link.restore_dropped(buf);
        }
    }

    /// Moves into `out` the ids of held packets the queues dropped since the last call: the
    /// daemon drops their messages. Call it after every [`Self::arrive`] and [`Self::due`],
    /// before the next arrival can reuse a freed id.
    pub fn take_dropped_held(&mut self, out: &mut Vec<PacketId>) {
        out.append(&mut self.dropped_held);
    }

    /// Moves into `out` the data drops since the last call, as (flow, time), in the order
    /// made. Called as often as [`Self::take_dropped_held`], it keeps what the emulator holds
    /// to one loop's drops.
    pub fn take_data_drops(&mut self, out: &mut Vec<(u32, SimTime)>) {
        out.append(&mut self.data_drops);
    }

    /// The next time a packet is due (or a transmitter event must run), if any.
    pub fn next_due(&self) -> Option<SimTime> {
        self.dirs
            .iter()
            .flat_map(|d| {
                [
                    d.link.line.front().map(|h| h.done + d.link.delay),
                    d.tx_done,
                    d.delay_line.front().map(|e| e.0),
                ]
            })
            .flatten()
            .min()
    }

    /// Appends to `out` every packet due at the far node by `now`, with the time it was due,
    /// in order per direction.
    pub fn due(&mut self, now: SimTime, out: &mut Vec<(PacketId, SimTime)>) {
        for s in 0..self.dirs.len() {
            loop {
                let d = &mut self.dirs[s];
                let head = d.link.line.front().map(|h| h.done + d.link.delay);
                match (d.tx_done.filter(|&t| t <= now), head.filter(|&t| t <= now)) {
                    (Some(t), h) if h.is_none_or(|h| t <= h) => self.run_tx(t, s),
                    (_, Some(t)) => {
                        d.link.advance(t);
                        let (id, _) = d.link.arrive();
                        out.push((id, t));
                    }
                    _ => break,
                }
            }
            let d = &mut self.dirs[s];
            while let Some(&(t, id)) = d.delay_line.front().filter(|e| e.0 <= now) {
                d.delay_line.pop_front();
                d.link.stats.departures += 1;
                d.link.stats.departed_bytes += self.arena.get(id).size as u64;
                out.push((id, t));
            }
        }
        if now >= self.next_line_shrink {
            self.next_line_shrink = now + LINE_SHRINK_EVERY_NS;
            for d in &mut self.dirs {
                d.link.shrink_line();
            }
        }
    }

    /// The packet's metadata as it leaves (DSCP and ECN as the conditioners and the queue
    /// left them); frees its slot.
    pub fn release(&mut self, id: PacketId) -> PacketMeta {
        self.arena.free(id)
    }

    /// Packets held (queued, being serialised or propagating).
    pub fn held(&self) -> usize {
        self.arena.len()
    }

    /// The direction table rows: (direction index, stats, packets arrived but not yet
    /// departed, packets departed but still propagating). As in the simulator, a packet counts
    /// as departed when its transmission ends, so `arrivals = departures + drops + queued`;
    /// the propagating packets are part of `departures`.
    pub fn dir_stats(&self) -> impl Iterator<Item = (usize, &LinkStats, u64, u64)> {
        self.dirs.iter().map(|d| {
            (
                d.spec.dir_idx,
                &d.link.stats,
                d.link.queued() + d.delay_line.len() as u64,
                d.link.in_pipe(),
            )
        })
    }

    /// Per conditioner: (index, handled here, packets coloured green, yellow, red).
    pub fn cond_stats(&self) -> impl Iterator<Item = (usize, bool, [u64; 3])> + '_ {
        self.conds.iter().enumerate().map(|(i, c)| {
            let here = self.dirs.iter().any(|d| d.conds.contains(&i));
            (i, here, c.colored)
        })
    }
}

#[cfg(test)]
#[path = "emulator_tests.rs"]
mod tests;
