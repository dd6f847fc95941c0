//! Several physical queues on one link direction, each with its own queue discipline, served
//! by a [`Scheduler`] (the EF + AF + BE arrangement of DiffServ routers). Packets are
//! classified into a queue by their codepoint. Unlike a single FIFO, the order of departures
//! depends on later arrivals, so the link host drives this with an explicit end-of-transmission
//! event.

use std::collections::VecDeque;

use super::scheduler::Scheduler;
use crate::aqm::{AnyAqm, Aqm, QueueView, Verdict};
use crate::packet::{PacketArena, PacketId};
use crate::rng::SimRng;
use crate::units::{Limit, SimTime};

pub struct SubQueue {
    pub fifo: VecDeque<(PacketId, u32, u8)>,
    pub bytes: u64,
    pub by_prec: [u64; 3],
    pub aqm: AnyAqm,
    pub limit: Limit,
    pub rng: SimRng,
    pub arrivals: u64,
    pub drops: u64,
}

impl SubQueue {
    pub fn new(aqm: AnyAqm, limit: Limit, rng: SimRng) -> Self {
        SubQueue {
            fifo: VecDeque::new(),
            bytes: 0,
            by_prec: [0; 3],
            aqm,
            limit,
            rng,
            arrivals: 0,
            drops: 0,
        }
    }

    pub fn view(&self) -> QueueView {
        QueueView {
            len_pkts: self.fifo.len() as u64,
            len_bytes: self.bytes,
            limit: self.limit,
            len_by_prec: self.by_prec,
        }
    }
}

pub struct MultiQueue {
    pub subs: Vec<SubQueue>,
    /// Physical queue of each codepoint.
    pub class_of: [u8; 64],
    pub sched: Scheduler,
}

impl MultiQueue {
    /// Classifies and judges an arriving packet; returns its queue and the verdict.
    pub fn admit(
        &mut self,
        now: SimTime,
        id: PacketId,
        arena: &mut PacketArena,
    ) -> (usize, Verdict) {
        let pkt = arena.get_mut(id);
        pkt.prec = crate::ds::drop_precedence(pkt.dscp);
        let q = self.class_of[pkt.dscp as usize & 63] as usize;
        let sub = &mut self.subs[q];
        sub.arrivals += 1;
        let view = sub.view();
        let v = sub.aqm.on_enqueue(now, pkt, view, &mut sub.rng);
        match v {
            Verdict::Enqueue | Verdict::Mark => {
                if v == Verdict::Mark {
                    pkt.ecn = 3;
                }
                sub.fifo.push_back((id, pkt.size, pkt.prec));
                sub.bytes += pkt.size as u64;
                sub.by_prec[pkt.prec as usize] += 1;
            }
            _ => sub.drops += 1,
        }
        (q, v)
    }

    /// Takes the next packet the scheduler chooses, if any.
    pub fn next(&mut self, now: SimTime) -> Option<(PacketId, u32)> {
        let mut heads = [None; 8];
        for (i, s) in self.subs.iter().enumerate() {
            heads[i] = s.fifo.front().map(|e| e.1);
        }
        let i = self.sched.pick(&heads[..self.subs.len()])?;
        let sub = &mut self.subs[i];
        let (id, size, prec) = sub
            .fifo
            .pop_front()
            .expect("the scheduler picks a backlogged queue");
        sub.bytes -= size as u64;
        sub.by_prec[prec as usize] -= 1;
        if sub.fifo.is_empty() {
            self.sched.on_empty(i);
            // The queue's backlog is zero from now on: its discipline's idle period starts.
            sub.aqm.on_idle(now);
        }
        Some((id, size))
    }

    pub fn waiting(&self) -> usize {
        self.subs.iter().map(|s| s.fifo.len()).sum()
    }

    pub fn waiting_bytes(&self) -> u64 {
        self.subs.iter().map(|s| s.bytes).sum()
    }
}
