//! Packets through the network: conditioners at a link direction's entrance, the link
//! direction's queue and transmitter, drops, and arrival at the far node.

use super::{Endpoint, Simulation};
use crate::aqm::{Aqm, DropReason};
use crate::engine::EventKind;
use crate::net::link::Admit;
use crate::net::pcap::PcapWriter;
use crate::packet::{PacketId, PacketKind};
use crate::scenario::Action;
use crate::units::SimTime;

impl Simulation {
    // --- packets through links -------------------------------------------------------

    #[inline]
    pub(super) fn send_on(&mut self, now: SimTime, d: usize, id: PacketId) {
        if self.dirs[d].guarded && !self.condition(now, d, id) {
            return;
        }
        let dir = &mut self.dirs[d];
        if dir.lazy() {
            dir.advance_starts(now);
        } else {
            self.advance(now, d);
            if self.dirs[d].held().is_some() {
                return self.send_held(now, d, id);
            }
        }
        // `dirs` and `arena` are distinct fields: the direction stays borrowed through the
        // enqueue.
        let dir = &mut self.dirs[d];
        match dir.enqueue(now, id, &mut self.arena) {
            Admit::Queued {
                schedule_arrival: Some(t),
            } => self.q.at(t, EventKind::Arrive(d as u32, id as u32)),
            Admit::Queued {
                schedule_arrival: None,
            } => {}
            Admit::Dropped(r) => self.on_drop(d, id, r),
        }
    }

    /// A packet enters link direction `d` whose queue holds its packets (a [`crate::aqm::Qdisc`]).
    /// Kept out of line: the FIFO line is the hot path.
    #[inline(never)]
    fn send_held(&mut self, now: SimTime, d: usize, id: PacketId) {
        let admit = self.dirs[d].enqueue_held(now, id, &mut self.arena);
        self.free_dropped(d);
        match admit {
            Admit::Dropped(r) => self.on_drop(d, id, r),
            Admit::Queued { .. } => self.start_next(now, d),
        }
    }

    /// Runs the conditioners guarding direction `d` on a packet; false when one dropped it.
    pub(super) fn condition(&mut self, now: SimTime, d: usize, id: PacketId) -> bool {
        for k in 0..self.conds_at[d].len() {
            let ci = self.conds_at[d][k];
            let p = *self.arena.get(id);
            let f = &self.flows[p.flow as usize];
            let (src, dst) = if p.kind == PacketKind::Data {
                (f.src, f.dst)
            } else {
                (f.dst, f.src)
            };
            let Some((color, action)) = self.conds[ci].apply(now, &p, src, dst) else {
                continue;
            };
            if p.kind == PacketKind::Data {
                self.flows[p.flow as usize].stats.colored[color as usize] += 1;
            }
            match action {
                Action::Mark(v) => self.arena.get_mut(id).dscp = v,
                Action::Keep => {}
                Action::Drop => {
                    self.dirs[d].stats.arrivals += 1;
                    self.dirs[d].stats.drops[DropReason::Policed as usize] += 1;
                    self.on_drop(d, id, DropReason::Policed);
                    return false;
                }
            }
        }
        true
    }

    /// The packets direction `d`'s packet-holding queue dropped (already counted by the link):
    /// freed, and their flows told.
    fn free_dropped(&mut self, d: usize) {
        if let Some(buf) = self.dirs[d].take_dropped() {
            for &(id, r) in &buf {
                self.on_drop(d, id, r);
            }
            self.dirs[d].restore_dropped(buf);
        }
    }

    /// Links with a packet-holding queue: start the next transmission if the transmitter is
    /// free.
    pub(super) fn start_next(&mut self, now: SimTime, d: usize) {
        let next = self.dirs[d].start_next(now, &mut self.arena);
        self.free_dropped(d);
        if let Some((done, arrival)) = next {
            self.q.at(done, EventKind::TxDone(d as u32));
            if let Some((t, id)) = arrival {
                self.q.at(t, EventKind::Arrive(d as u32, id as u32));
            }
        }
    }

    pub(super) fn on_tx_done(&mut self, now: SimTime, d: usize) {
        self.dirs[d].tx_pending = false;
        self.advance(now, d);
        self.start_next(now, d);
    }

    /// Brings link direction `d` up to `now`: counts (and captures) the transmissions that
    /// ended since it was last looked at.
    #[inline]
    pub(super) fn advance(&mut self, now: SimTime, d: usize) {
        let range = self.dirs[d].advance(now);
        let Some(c) = self.dirs[d].capture() else {
            return;
        };
        for i in range {
            let e = self.dirs[d].line.at(i);
            let p = *self.arena.get(e.id());
            let f = &self.flows[p.flow as usize];
            let udp = matches!(f.ep, Endpoint::Udp { .. });
            // Past the capture limit nothing more is written: every file ends after a whole
            // record, so each is a valid capture up to the time it stopped.
            let len = PcapWriter::record_len(udp);
            if self.capture_stopped.is_some() {
                break;
            }
            if self.capture_limit > 0 && self.capture_written + len > self.capture_limit {
                self.capture_stopped = Some(e.done);
                break;
            }
            self.capture_written += len;
            // a linux receiver's ACK carries its offered window (whole segments, as the
            // sender reads it; see `send_ack`)
            let window = match &f.ep {
                Endpoint::Tcp { sink, .. } if p.kind == PacketKind::Ack && sink.offers_window() => {
                    let payload = u64::from(crate::packet::tcp_payload_bytes(f.size));
                    self.ack_windows
                        .get(e.id())
                        .map(|&w| u64::from(w) * payload)
                }
                _ => None,
            };
            if let Err(err) = self.captures[c].record(e.done, &p, f.src, f.dst, udp, f.size, window)
            {
                self.capture_error.get_or_insert_with(|| err.to_string());
            }
        }
    }

    pub(super) fn on_drop(&mut self, d: usize, id: PacketId, r: DropReason) {
        let p = self.arena.free(id);
        let st = &mut self.flows[p.flow as usize].stats;
        match p.kind {
            PacketKind::Data => {
                st.dropped_pkts += 1;
                st.drops_by_reason[r as usize] += 1;
                st.drops_by_prec[crate::ds::drop_precedence(p.dscp) as usize] += 1;
                match st.drops_at.iter_mut().find(|(x, _)| *x == d as u32) {
                    Some(e) => e.1 += 1,
                    None => st.drops_at.push((d as u32, 1)),
                }
            }
            PacketKind::Ack => st.acks_dropped += 1,
        }
    }

    pub(super) fn on_arrive(&mut self, now: SimTime, d: usize) {
        if !self.dirs[d].lazy() {
            self.advance(now, d);
        }
        let dir = &mut self.dirs[d];
        let (id, next) = dir.arrive();
        let watched = dir.watched;
        if let Some((t, head)) = next {
            self.q.at(t, EventKind::Arrive(d as u32, head as u32));
        }
        if watched {
            let p = *self.arena.get(id);
            self.dirs[d ^ 1].aqm.on_reverse(now, &p);
        }
        let p = self.arena.get_mut(id);
        p.at += 1;
        let next = self.routes[p.at as usize];
        if next == super::ROUTE_END {
            self.deliver(now, id);
        } else {
            self.send_on(now, next as usize, id);
        }
    }
}
