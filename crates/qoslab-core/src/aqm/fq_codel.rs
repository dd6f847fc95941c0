//! FQ-CoDel (RFC 8290; Linux's default qdisc): packets are hashed by flow into `flows` queues,
//! each with its own CoDel ([`CodelState`]); deficit round robin with a byte `quantum` serves
//! them, newly active queues first (the "new flows" list) so that sparse flows, such as a VoIP
//! stream or a TCP handshake, see almost no queueing. When the buffer is full the queue with
//! the largest backlog loses packets from its head (RFC 8290 §4.1.2), in a batch as Linux
//! does: up to `drop_batch` packets, stopping once half its bytes are gone.
//!
//! The hash (RFC 8290 §4.1.1) is of the flow's identity with a perturbation drawn from the
//! link's own random stream, so distinct flows may share a queue, as in a real FQ-CoDel.

use std::collections::VecDeque;

use super::codel::{CodelParams, CodelRun, CodelState, Fifo, Held, CODEL_ECN, INTERVAL, TARGET};
use super::registry::{HeldDiscipline, Ns2Export, QdiscEnv, QueueDiscipline};
use super::{Dequeued, DropReason, Dropped, Qdisc, QueueSample, Verdict};
use crate::packet::{PacketArena, PacketId};
use crate::params::typed::{Bytes32, Decl};
use crate::params::{KeyError, Param, ParamKind, Table, LIMIT};
use crate::units::{Limit, SimTime};

const QUANTUM: Decl<Bytes32> = Decl::new(
    "quantum",
    ParamKind::Bytes,
    "1514B",
    "Bytes each flow queue may send per DRR round (RFC 8290 §4.2; Linux: the MTU plus \
          the Ethernet header).",
)
.positive();
const FLOWS: Decl<u32> = Decl::new(
    "flows",
    ParamKind::IntegerIn {
        min: 1,
        max: 65_536,
    },
    "1024",
    "Number of flow queues the hash maps flows into (RFC 8290 §5.2.1).",
);
const DROP_BATCH: Decl<u32> = Decl::new(
    "drop_batch",
    ParamKind::Integer { min: 1 },
    "64",
    "On overflow, most packets dropped from the fattest flow queue's head at once \
          (Linux's drop_batch; dropping stops earlier once half its bytes are gone).",
);
const FQ_ECN: Decl<bool> = CODEL_ECN.with_default("true");

/// FQ-CoDel's configuration.
#[derive(Debug, Clone, Copy)]
pub struct FqCodelConfig {
    pub codel: CodelParams,
    pub quantum: u32,
    pub flows: u32,
    pub drop_batch: u32,
}

impl QueueDiscipline for FqCodelConfig {
    const DOC: &'static str = "FQ-CoDel (RFC 8290): flows hashed into queues served by deficit round robin, new flows first, CoDel in each queue; overflow drops from the fattest queue.";
    const NS3: Result<&'static str, &'static str> = Ok("ns3::FqCoDelQueueDisc");
    const PARAMS: &'static [Param] = &[
        LIMIT,
        TARGET.param,
        INTERVAL.param,
        FQ_ECN.param,
        QUANTUM.param,
        FLOWS.param,
        DROP_BATCH.param,
    ];
    fn from_table(t: &Table, _limit: Limit) -> Result<Self, KeyError> {
        let mut codel = CodelParams::read(t)?;
        codel.ecn = t.get(&FQ_ECN)?;
        let quantum = t.get(&QUANTUM)?;
        let flows = t.get(&FLOWS)?;
        let drop_batch = t.get(&DROP_BATCH)?;
        Ok(FqCodelConfig {
            codel,
            quantum,
            flows,
            drop_batch,
        })
    }
    fn ns2(&self, _limit: Limit) -> Ns2Export {
        Ns2Export::Refused("ns-2.35 has no FQ-CoDel (use the ns-3 cross-check)".into())
    }
    fn state_bytes(&self) -> u64 {
        // every flow queue exists from the start, each its own CoDel state
        self.flows as u64 * QUEUE_BYTES as u64
    }
    fn emulable(&self) -> bool {
        // the link daemon drives packet-holding queues through the same enqueue and dequeue
        // calls as the simulator, and drops the kernel's packets they drop at dequeue
        true
    }
}

impl HeldDiscipline for FqCodelConfig {
    fn qdisc(&self, env: &QdiscEnv) -> Box<dyn Qdisc> {
        let perturbation = env.rng().next_u64();
        Box::new(FqCodel::new(*self, env.limit, perturbation))
    }
}

/// Which list a flow queue is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum List {
    Inactive,
    New,
    Old,
}

#[derive(Debug, Clone)]
struct FlowQueue {
    fifo: Fifo,
    codel: CodelState,
    deficit: i64,
    list: List,
}

/// Bytes of one flow queue: FQ-CoDel holds `flows` of them from the start (at most 65,536 per
/// link direction, ~5.8 MB), besides the packets they hold.
pub const QUEUE_BYTES: usize = std::mem::size_of::<FlowQueue>();

/// The FQ-CoDel discipline.
#[derive(Debug, Clone)]
pub struct FqCodel {
    cfg: FqCodelConfig,
    limit: Limit,
    perturbation: u64,
    queues: Vec<FlowQueue>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    pkts: usize,
    bytes: u64,
    /// The largest packet seen (CoDel's `maxpacket`, shared as Linux shares the MTU).
    maxpacket: u32,
}

impl FqCodel {
    pub fn new(cfg: FqCodelConfig, limit: Limit, perturbation: u64) -> Self {
        let q = FlowQueue {
            fifo: Fifo::default(),
            codel: CodelState::default(),
            deficit: 0,
            list: List::Inactive,
        };
        FqCodel {
            cfg,
            limit,
            perturbation,
            queues: vec![q; cfg.flows as usize],
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            pkts: 0,
            bytes: 0,
            maxpacket: 0,
        }
    }

    /// The flow queue of flow `flow`: a seeded hash (SplitMix64's finaliser) reduced to
    /// `flows` queues.
    pub fn classify(&self, flow: u32) -> usize {
        let mut z = (flow as u64) ^ self.perturbation;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        ((z as u128 * self.cfg.flows as u128) >> 64) as usize
    }

    fn over_limit(&self) -> bool {
        match self.limit {
            Limit::Packets(n) => self.pkts as u64 > n,
            Limit::Bytes(b) => self.bytes > b,
        }
    }

    /// RFC 8290 §4.1.2: drops from the head of the queue with the largest backlog, up to
    /// `drop_batch` packets or half its bytes. Returns whether `arrival` was among them.
    fn drop_from_fattest(&mut self, arrival: PacketId, dropped: &mut Dropped) -> bool {
        let fat = (0..self.queues.len())
            .max_by_key(|&i| (self.queues[i].fifo.bytes, std::cmp::Reverse(i)))
            .expect("at least one flow queue");
        let q = &mut self.queues[fat];
        let threshold = q.fifo.bytes / 2;
        let (mut n, mut freed, mut hit) = (0, 0u64, false);
        while let Some(h) = q.fifo.pop() {
            n += 1;
            freed += h.size as u64;
            self.pkts -= 1;
            self.bytes -= h.size as u64;
            if h.id == arrival {
                hit = true;
            } else {
                dropped.push((h.id, DropReason::Overflow));
            }
            if n >= self.cfg.drop_batch || freed >= threshold {
                break;
            }
        }
        hit
    }

    /// Packets waiting in each flow queue (for tests and diagnostics).
    pub fn backlogs(&self) -> impl Iterator<Item = usize> + '_ {
        self.queues.iter().map(|q| q.fifo.len())
    }
}

impl Qdisc for FqCodel {
    fn enqueue(
        &mut self,
        now: SimTime,
        id: PacketId,
        arena: &mut PacketArena,
        dropped: &mut Dropped,
    ) -> Verdict {
        let p = arena.get(id);
        let (size, flow) = (p.size, p.flow);
        let i = self.classify(flow);
        self.maxpacket = self.maxpacket.max(size);
        let q = &mut self.queues[i];
        q.fifo.push(Held {
            id,
            size,
            enqueued_at: now,
        });
        if q.list == List::Inactive {
            q.list = List::New;
            q.deficit = self.cfg.quantum as i64;
            self.new_flows.push_back(i as u32);
        }
        self.pkts += 1;
        self.bytes += size as u64;
        if self.over_limit() && self.drop_from_fattest(id, dropped) {
            return Verdict::Overflow;
        }
        Verdict::Enqueue
    }

    fn dequeue(
        &mut self,
        now: SimTime,
        arena: &mut PacketArena,
        dropped: &mut Dropped,
    ) -> Option<Dequeued> {
        loop {
            let (i, from_new) = match (self.new_flows.front(), self.old_flows.front()) {
                (Some(&i), _) => (i as usize, true),
                (None, Some(&i)) => (i as usize, false),
                (None, None) => return None,
            };
            let q = &mut self.queues[i];
            if q.deficit <= 0 {
                // Out of credit: a new quantum, and to the back of the old flows.
                q.deficit += self.cfg.quantum as i64;
                q.list = List::Old;
                if from_new {
                    self.new_flows.pop_front();
                } else {
                    self.old_flows.pop_front();
                }
                self.old_flows.push_back(i as u32);
                continue;
            }
            let (pkts, bytes) = (q.fifo.len(), q.fifo.bytes);
            let run = CodelRun {
                params: &self.cfg.codel,
                maxpacket: self.maxpacket,
            };
            let got = q.codel.dequeue(now, &mut q.fifo, run, arena, dropped);
            self.pkts -= pkts - q.fifo.len();
            self.bytes -= bytes - q.fifo.bytes;
            match got {
                None => {
                    // Empty: a new queue goes behind the old ones (so that it cannot starve
                    // them by going idle and active again), an old one leaves the lists.
                    if from_new {
                        self.new_flows.pop_front();
                    } else {
                        self.old_flows.pop_front();
                    }
                    if from_new && !self.old_flows.is_empty() {
                        q.list = List::Old;
                        self.old_flows.push_back(i as u32);
                    } else {
                        q.list = List::Inactive;
                    }
                }
                Some((h, marked)) => {
                    q.deficit -= h.size as i64;
                    return Some(Dequeued {
                        id: h.id,
                        size: h.size,
                        marked,
                    });
                }
            }
        }
    }

    fn waiting(&self) -> usize {
        self.pkts
    }

    fn waiting_bytes(&self) -> u64 {
        self.bytes
    }

    fn sample(&self, _i: usize) -> QueueSample {
        QueueSample {
            len_pkts: self.pkts as u64,
            len_bytes: self.bytes,
            average: f64::NAN,
            averages: [f64::NAN; 3],
        }
    }

    fn heap_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.queues.capacity() * std::mem::size_of::<FlowQueue>()
            + self
                .queues
                .iter()
                .map(|q| q.fifo.heap_bytes())
                .sum::<usize>()
            + (self.new_flows.capacity() + self.old_flows.capacity()) * 4
    }
}

#[cfg(test)]
#[path = "fq_codel_tests.rs"]
mod tests;
