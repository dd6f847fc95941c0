//! Several physical queues on one link direction, each with its own queue discipline, served
//! by a [`Scheduler`] (the EF + AF + BE arrangement of DiffServ routers). Packets are
//! classified into a queue by their codepoint. Unlike a single FIFO, the order of departures
//! depends on later arrivals, so the link host drives this with an explicit end-of-transmission
//! event.

use std::collections::VecDeque;

use serde::Serialize;

use super::registry::{HeldDiscipline, Ns2Export, QdiscEnv, QueueConfig, QueueDiscipline};
use super::scheduler::Scheduler;
use super::{AnyAqm, Aqm, Dequeued, Discipline, Dropped, Qdisc, QueueSample, QueueView, Verdict};
use crate::packet::{PacketArena, PacketId};
use crate::params::typed::{Decl, Word};
use crate::params::{key_error, KeyError, Param, ParamKind, Table};
use crate::rng::SimRng;
use crate::units::{Limit, SimTime};

/// How the physical queues of a multi queue share the link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchedulerKind {
    /// Strict priority, in the order the queues are listed.
    Priority,
    /// Round robin, one packet per queue.
    Rr,
    /// Weighted round robin (packets per round).
    Wrr,
    /// Deficit round robin (bytes per round).
    Drr,
}

/// One physical queue of a multi queue.
#[derive(Debug, Clone, Serialize)]
pub struct SubQueueConfig {
    pub name: String,
    /// Codepoints served by this queue; empty for the default queue.
    pub dscp: Vec<u8>,
    pub default: bool,
    pub weight: u32,
    pub quantum_bytes: u64,
    pub queue: QueueConfig,
}

/// A multi queue's configuration: the scheduler and the physical queues.
#[derive(Debug, Clone)]
pub struct MultiConfig {
    pub scheduler: SchedulerKind,
    pub queues: Vec<SubQueueConfig>,
}

const SCHEDULERS: &[&str] = &["priority", "rr", "wrr", "drr"];

/// The keys of one physical queue.
const SUBQUEUE_PARAMS: &[Param] = &[
    Param {
        name: "name",
        kind: ParamKind::Name,
        default: "qI (its index)",
        doc: "The queue's name in outputs.",
    },
    Param {
        name: "dscp",
        kind: ParamKind::Codepoints,
        default: "none",
        doc: "Codepoints classified into this queue (e.g. [\"AF11\", \"AF12\", \"AF13\"]).",
    },
    Param {
        name: "default",
        kind: ParamKind::Bool,
        default: "false",
        doc: "The queue of every codepoint no other queue lists (exactly one queue).",
    },
    Param {
        name: "weight",
        kind: ParamKind::Integer { min: 1 },
        default: "1",
        doc: "WRR weight, packets per round.",
    },
    Param {
        name: "quantum",
        kind: ParamKind::Bytes,
        default: "1500B",
        doc: "DRR quantum, bytes per round.",
    },
    Param {
        name: "queue",
        kind: ParamKind::Queue,
        default: "required",
        doc: "The queue discipline of this physical queue.",
    },
];

const SCHEDULER: Decl<Word> = Decl::new(
    "scheduler",
    ParamKind::Choice {
        choices: SCHEDULERS,
    },
    "priority",
    "How the physical queues share the link.",
);

impl QueueDiscipline for MultiConfig {
    const DOC: &'static str = "Several physical queues, each with its own discipline, classified by codepoint and served by a scheduler (priority, rr, wrr, drr).";
    const NS3: Result<&'static str, &'static str> =
        Err("multi-queue schedulers with DiffServ classification are not exported to ns-3");
    const PARAMS: &'static [Param] = &[
        SCHEDULER.param,
        Param {
            name: "queues",
            kind: ParamKind::Tables {
                params: SUBQUEUE_PARAMS,
            },
            default: "required",
            doc: "The physical queues (1 to 8), in priority order for the priority scheduler.",
        },
    ];
    fn hint(_key: &str) -> &'static str {
        ": it belongs to each physical queue (queues[i].queue)"
    }
    fn from_table(t: &Table, _limit: Limit) -> Result<Self, KeyError> {
        let scheduler = match t.get(&SCHEDULER)? {
            "rr" => SchedulerKind::Rr,
            "wrr" => SchedulerKind::Wrr,
            "drr" => SchedulerKind::Drr,
            _ => SchedulerKind::Priority,
        };
        let subs = t.tables("queues")?.ok_or_else(|| {
            key_error(
                t.key("queues"),
                "a multi queue needs `queues`, a list of physical queues",
            )
        })?;
        if subs.is_empty() || subs.len() > 8 {
            return Err(key_error(
                t.key("queues"),
                format!(
                    "a multi queue has 1 to 8 physical queues, got {}",
                    subs.len()
                ),
            ));
        }
        let mut seen = [false; 64];
        let mut queues = Vec::with_capacity(subs.len());
        for (i, sq) in subs.into_iter().enumerate() {
            let sk = format!("{}[{i}]", t.key("queues"));
            // a weight is WRR's and a quantum DRR's: under another scheduler they would do
            // nothing
            for (key, reads) in [
                ("weight", SchedulerKind::Wrr),
                ("quantum", SchedulerKind::Drr),
            ] {
                if sq.contains_key(key) && scheduler != reads {
                    let by = if reads == SchedulerKind::Wrr {
                        "wrr"
                    } else {
                        "drr"
                    };
                    return Err(key_error(
                        format!("{sk}.{key}"),
                        format!(
                            "only the {by} scheduler reads `{key}`; this multi queue's is {:?}",
                            t.get(&SCHEDULER)?
                        ),
                    ));
                }
            }
            queues.push(subqueue(sq, &sk, i, &mut seen)?);
        }
        let defaults = queues.iter().filter(|q| q.default).count();
        if defaults != 1 {
            return Err(key_error(
                t.key("queues"),
                format!("exactly one physical queue must have `default = true` (found {defaults})"),
            ));
        }
        Ok(MultiConfig { scheduler, queues })
    }
    fn ns2(&self, _limit: Limit) -> Ns2Export {
        match self.dsred_refusal() {
            Some(reason) => Ns2Export::Refused(reason),
            None => Ns2Export::Dsred,
        }
    }
    fn emulable(&self) -> bool {
        // the daemon drives its queues through the simulator's enqueue and dequeue calls
        true
    }
}

impl HeldDiscipline for MultiConfig {
    fn qdisc(&self, env: &QdiscEnv) -> Box<dyn Qdisc> {
        Box::new(self.build_queue(env.link_bps, env.seed, env.dir_id))
    }
}

impl MultiConfig {
    /// The physical queues and scheduler for a link direction of `bps` bit/s (`dir_id` names
    /// the sub-queues' random streams).
    pub fn build_queue(&self, bps: u64, seed: u64, dir_id: u64) -> MultiQueue {
        let queues = &self.queues;
        let default = queues
            .iter()
            .position(|s| s.default)
            .expect("validated: one default queue");
        let mut class_of = [default as u8; 64];
        for (i, s) in queues.iter().enumerate() {
            for &d in &s.dscp {
                class_of[d as usize] = i as u8;
            }
        }
        let subs = queues
            .iter()
            .enumerate()
            .map(|(i, s)| {
                // Sub-queue streams: distinct from every link direction's own stream.
                let rng = SimRng::derive(
                    seed,
                    crate::rng::stream::QUEUE | (1 << 40) | (dir_id << 4) | i as u64,
                );
                SubQueue::new(s.queue.discipline.build(bps), s.queue.limit(), rng)
            })
            .collect();
        let sched = match self.scheduler {
            SchedulerKind::Priority => Scheduler::Priority,
            SchedulerKind::Rr => Scheduler::RoundRobin { next: 0 },
            SchedulerKind::Wrr => Scheduler::Wrr {
                weights: queues.iter().map(|s| s.weight).collect(),
                current: 0,
                served: 0,
            },
            SchedulerKind::Drr => Scheduler::Drr {
                quanta: queues.iter().map(|s| s.quantum_bytes).collect(),
                deficit: vec![0; queues.len()],
                current: 0,
                visited: false,
            },
        };
        MultiQueue {
            subs,
            class_of,
            sched,
        }
    }

    /// Why ns-2's dsRED cannot be this multi queue, or `None`. A dsRED queue has up to 8
    /// physical queues served by PRI, RR or WRR (whole packets), each a droptail (DROP mode),
    /// RIO-C, RIO-D or WRED queue, with one `limit_` and one mean packet size for all of them
    /// (diffserv/dsred.h).
    fn dsred_refusal(&self) -> Option<String> {
        if self.scheduler == SchedulerKind::Drr {
            return Some("ns-2's dsRED has no deficit round robin (only priority, rr, wrr)".into());
        }
        let ecn: Vec<bool> = self
            .queues
            .iter()
            .filter_map(|sub| match &sub.queue.discipline {
                Discipline::Rio(c) => Some(c.options.ecn),
                Discipline::Wred(c) => Some(c.options.ecn),
                _ => None,
            })
            .collect();
        if ecn.iter().any(|&e| e != ecn[0]) {
            return Some(
                "ns-2's dsRED has one ecn_ for all its physical queues; the rio/wred queues \
                 differ in `ecn`"
                    .into(),
            );
        }
        let mut shared: Option<(Limit, u32)> = None; // the rio/wred queues' limit and mean size
        for (k, sub) in self.queues.iter().enumerate() {
            let q = &sub.queue;
            let refused = |r: &str| Some(format!("queues[{k}]: {r}"));
            match (&q.discipline, q.discipline.ns2(q.limit)) {
                (_, Ns2Export::Refused(r)) => return refused(&r),
                (Discipline::DropTail(_), _) => {
                    if let Limit::Bytes(_) = q.limit {
                        return refused(
                            "a droptail queue inside dsRED counts packets; a byte limit is not \
                             supported",
                        );
                    }
                }
                (Discipline::Rio(_) | Discipline::Wred(_), _) => {
                    let size = match &q.discipline {
                        Discipline::Rio(c) => c.avg.mean_pkt_size,
                        Discipline::Wred(c) => c.avg.mean_pkt_size,
                        _ => unreachable!("matched as rio or wred"),
                    };
                    match shared {
                        None => shared = Some((q.limit, size)),
                        Some((l, _)) if l != q.limit => {
                            return Some(format!(
                                "ns-2's dsRED gives every physical queue the same limit_; the \
                                 rio/wred queues have different limits {l} and {}",
                                q.limit
                            ))
                        }
                        Some((_, m)) if m != size => {
                            return Some(format!(
                                "ns-2's dsRED has one mean packet size for all its queues, not \
                                 {m} and {size} bytes"
                            ))
                        }
                        Some(_) => {}
                    }
                }
                _ => {
                    return refused(&format!(
                        "queue type '{}' cannot be a dsRED physical queue (only droptail, rio, \
                         wred; ns-2's dsRED RED differs from Queue/RED, use a one-precedence rio)",
                        q.type_name()
                    ))
                }
            }
        }
        let Some((Limit::Packets(shared), _)) = shared else {
            return None;
        };
        self.queues.iter().enumerate().find_map(|(k, sub)| {
            let q = &sub.queue;
            match (&q.discipline, q.limit) {
                (Discipline::DropTail(_), Limit::Packets(p)) if p > shared => Some(format!(
                    "queues[{k}]: a droptail queue's limit ({p} packets) must not exceed the \
                     rio/wred queues' limit {shared} (ns-2's dsRED limit_ applies to every \
                     physical queue)"
                )),
                _ => None,
            }
        })
    }
}

/// Physical queue `i` of a multi queue, at key `sk`; `seen` marks the codepoints listed so far.
fn subqueue(
    sq: &toml::Table,
    sk: &str,
    i: usize,
    seen: &mut [bool; 64],
) -> Result<SubQueueConfig, KeyError> {
    let t = Table::new(sq, sk, "physical", SUBQUEUE_PARAMS, |_| "")?;
    let qt = t.table("queue")?.ok_or_else(|| {
        key_error(
            sk.to_string(),
            "missing field `queue` (the physical queue's discipline)",
        )
    })?;
    let inner = QueueConfig::from_table(qt, &format!("{sk}.queue"))?;
    match inner.discipline {
        Discipline::FddRed(_) => {
            return Err(key_error(
                format!("{sk}.queue.type"),
                "a physical queue of a multi queue cannot be fdd_red (use it as a link's queue)",
            ))
        }
        Discipline::Multi(_) => {
            return Err(key_error(
                format!("{sk}.queue.type"),
                "a physical queue cannot itself be a multi queue",
            ))
        }
        ref d if d.holds_packets() => {
            return Err(key_error(
                format!("{sk}.queue.type"),
                format!(
                    "a physical queue of a multi queue cannot be {} (it decides at dequeue; \
                     use it as a link's queue)",
                    inner.type_name()
                ),
            ))
        }
        _ => {}
    }
    let mut dscp = Vec::new();
    let names = match sq.get("dscp") {
        None => Vec::new(),
        Some(toml::Value::Array(a)) => a.clone(),
        Some(v) => {
            return Err(key_error(
                format!("{sk}.dscp"),
                format!("expected a list of codepoints, got {} {v}", v.type_str()),
            ))
        }
    };
    for (j, v) in names.iter().enumerate() {
        let name = v.as_str().ok_or_else(|| {
            key_error(
                format!("{sk}.dscp[{j}]"),
                format!("expected a codepoint name such as \"AF11\", got {v}"),
            )
        })?;
        let c = crate::ds::parse_dscp(name).map_err(|e| key_error(format!("{sk}.dscp[{j}]"), e))?;
        if std::mem::replace(&mut seen[c as usize], true) {
            return Err(key_error(
                format!("{sk}.dscp[{j}]"),
                format!("codepoint {name} is listed by two queues"),
            ));
        }
        dscp.push(c);
    }
    let is_default = t.bool("default")?.unwrap_or(false);
    if dscp.is_empty() && !is_default {
        return Err(key_error(
            format!("{sk}.dscp"),
            "a physical queue needs `dscp` codepoints or `default = true`",
        ));
    }
    let weight = t.u32("weight")?.unwrap_or(1);
    if weight == 0 {
        return Err(key_error(
            format!("{sk}.weight"),
            "weights must be at least 1",
        ));
    }
    let quantum_bytes = t.bytes("quantum")?.unwrap_or(1500);
    if quantum_bytes == 0 {
        return Err(key_error(
            format!("{sk}.quantum"),
            "the quantum must be positive",
        ));
    }
    Ok(SubQueueConfig {
        name: t
            .str("name")?
            .map_or_else(|| format!("q{i}"), str::to_string),
        dscp,
        default: is_default,
        weight,
        quantum_bytes,
        queue: inner,
    })
}

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
        // The host has set `prec` from the codepoint (`LinkDir::enqueue_held`).
        let pkt = arena.get_mut(id);
        let q = self.class_of[pkt.dscp as usize & 63] as usize;
        let sub = &mut self.subs[q];
        sub.arrivals += 1;
        let view = sub.view();
        let v = crate::aqm::admit(&mut sub.aqm, now, pkt, view, &mut sub.rng);
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
        if sub.aqm.wants_dequeue() {
            let view = sub.view();
            sub.aqm.on_dequeue(now, prec, view);
        }
        if sub.fifo.is_empty() {
            self.sched.on_empty(i);
            // The queue's backlog is zero from now on: its discipline's idle period starts.
            sub.aqm.on_idle(now);
        }
        Some((id, size))
    }
}

impl Qdisc for MultiQueue {
    fn enqueue(
        &mut self,
        now: SimTime,
        id: PacketId,
        arena: &mut PacketArena,
        _dropped: &mut Dropped,
    ) -> Verdict {
        self.admit(now, id, arena).1
    }

    fn dequeue(
        &mut self,
        now: SimTime,
        _arena: &mut PacketArena,
        _dropped: &mut Dropped,
    ) -> Option<Dequeued> {
        self.next(now).map(|(id, size)| Dequeued {
            id,
            size,
            marked: false,
        })
    }

    fn waiting(&self) -> usize {
        self.subs.iter().map(|s| s.fifo.len()).sum()
    }

    fn waiting_bytes(&self) -> u64 {
        self.subs.iter().map(|s| s.bytes).sum()
    }

    fn queues(&self) -> usize {
        self.subs.len()
    }

    fn sample(&self, i: usize) -> QueueSample {
        let s = &self.subs[i];
        QueueSample {
            len_pkts: s.fifo.len() as u64,
            len_bytes: s.bytes,
            average: s.aqm.average().unwrap_or(f64::NAN),
            averages: s.aqm.averages(),
        }
    }

    fn gauges(&self, i: usize, now: SimTime, out: &mut dyn FnMut(&'static str, f64)) {
        self.subs[i].aqm.gauges(now, out);
    }

    fn aqm_mut(&mut self, i: usize) -> Option<&mut AnyAqm> {
        self.subs.get_mut(i).map(|s| &mut s.aqm)
    }

    fn heap_bytes(&self) -> usize {
        std::mem::size_of::<MultiQueue>()
            + self.subs.capacity() * std::mem::size_of::<SubQueue>()
            + self
                .subs
                .iter()
                .map(|s| s.fifo.capacity() * std::mem::size_of::<(PacketId, u32, u8)>())
                .sum::<usize>()
    }
}
