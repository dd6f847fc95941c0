//! The simulation: builds the network from a [`Scenario`], runs the event loop and collects
//! the results. It is a plain value (no globals), so several simulations can run in one
//! process, on different threads.

use crate::aqm::{
    AnyAqm, Aqm, DropReason, DropTail, Dwred, FddRed, PenaltyRule, Red, Rio, RioMode, RioPlusO,
    RttSource, Wred,
};
use crate::conditioner::{
    AnyMeter, Color, ColorMode, Meter, MeterSpec, SrTcmParams, TokenBucketParams, TrTcmParams,
    Tsw2cmParams, Tsw3cmParams,
};
use crate::engine::{EventKind, EventQueue};
use crate::net::link::{Admit, LinkDir};
use crate::net::multiqueue::{MultiQueue, SubQueue};
use crate::net::pcap::PcapWriter;
use crate::net::scheduler::Scheduler;
use crate::packet::{PacketArena, PacketId, PacketKind, PacketMeta};
use crate::rng::{stream, SimRng};
use crate::scenario::{
    adjacency, shortest_path, Action, ConditionerConfig, MeterConfig, QueueConfig, Scenario,
};
use crate::traffic::sink::{SinkAction, TcpSink};
use crate::traffic::tcp::{SendBuf, TcpSender};
use crate::traffic::udp::{UdpKind, UdpSource};
use crate::units::SimTime;

#[derive(Debug, Clone, Default)]
pub struct FlowStats {
    pub sent_pkts: u64,
    pub sent_bytes: u64,
    pub retransmits: u64,
    pub delivered_pkts: u64,
    pub delivered_bytes: u64,
    pub dropped_pkts: u64,
    pub drops_by_reason: [u64; 4],
    /// Data packets by the colour the last conditioner they met gave them (green, yellow, red).
    pub colored: [u64; 3],
    /// Data packets dropped per drop precedence.
    pub drops_by_prec: [u64; 3],
    /// (link direction, drops) where this flow's data packets were dropped.
    pub drops_at: Vec<(u32, u64)>,
    pub window_delivered_bytes: u64,
    /// Of those, bytes delivered carrying the lowest drop precedence (AFx1/IN/green; EF and
    /// best effort count as their precedence says: EF 0, best effort 2).
    pub window_delivered_in_bytes: u64,
    pub window_goodput_pkts: u64,
    pub window_sent_bytes: u64,
    pub acks_sent: u64,
    pub acks_dropped: u64,
    pub acks_delivered: u64,
    bin_bytes: u64,
}

enum Endpoint {
    Tcp {
        sender: Box<TcpSender>,
        sink: TcpSink,
        /// The time of the pending RTO event in the heap (lazy re-arming).
        rto_scheduled: Option<SimTime>,
        delack_gen: u32,
        delack_interval: SimTime,
        ack_size: u32,
        ecn: bool,
    },
    Udp {
        src: UdpSource,
        send_pending: bool,
    },
}

struct Flow {
    src: usize,
    dst: usize,
    fwd: Vec<u32>,
    rev: Vec<u32>,
    size: u32,
    dscp: u8,
    start: SimTime,
    ep: Endpoint,
    stats: FlowStats,
    /// RFC 7323 TS.Recent: the TSval of the latest data packet the receiver got (echoed by
    /// its ACKs) and of the latest ACK the sender got (echoed by its data packets).
    ts_recent_data: u64,
    ts_recent_ack: u64,
}

/// Columns of the time series, one row per (sample, link direction) and (sample, flow).
#[derive(Debug, Clone, Default)]
pub struct Series {
    pub q_time_ns: Vec<u64>,
    pub q_dir: Vec<u32>,
    /// Physical queue within the direction (0 unless it is a multi-queue link).
    pub q_sub: Vec<u32>,
    pub q_len_pkts: Vec<u32>,
    pub q_len_bytes: Vec<u64>,
    pub q_avg: Vec<f64>,
    /// Per precedence: the average it is judged on (RIO: avg_in, avg_total; NaN if none).
    pub q_avg_prec: [Vec<f64>; 3],
    pub f_time_ns: Vec<u64>,
    pub f_flow: Vec<u32>,
    pub f_throughput_bps: Vec<f64>,
    pub f_cwnd: Vec<f64>,
    pub f_ssthresh: Vec<f64>,
    /// Meter token levels (bytes in the committed bucket): one row per (sample, conditioner,
    /// meter instance); `m_flow` is the flow of a per-flow meter, u32::MAX for an aggregate.
    pub m_time_ns: Vec<u64>,
    pub m_cond: Vec<u32>,
    pub m_flow: Vec<u32>,
    pub m_level: Vec<f64>,
    /// Marker state variables ([`Meter::gauges`]), long format: one row per (sample,
    /// conditioner, meter instance, gauge); `g_name` indexes `gauge_names`.
    pub g_time_ns: Vec<u64>,
    pub g_cond: Vec<u32>,
    pub g_flow: Vec<u32>,
    pub g_name: Vec<u32>,
    pub g_value: Vec<f64>,
    pub gauge_names: Vec<&'static str>,
}

/// The queue discipline a resolved queue table describes (shared with the emulator's link
/// daemon, so that both drive the very same state machine).
pub fn build_aqm(qc: &QueueConfig, bps: u64) -> AnyAqm {
    let curves = || {
        qc.precedences
            .iter()
            .map(|c| c.curve(qc.gentle))
            .collect::<Vec<_>>()
    };
    let ptc = qc.ptc(bps);
    match qc.kind.as_str() {
        "red" => AnyAqm::Red(Red::new(qc.red_params(bps))),
        "rio" => {
            let mode = if qc.mode == "decoupled" {
                RioMode::Decoupled
            } else {
                RioMode::Coupled
            };
            AnyAqm::Rio(Rio::new(mode, &curves(), qc.w_q, qc.wait, ptc))
        }
        "wred" => AnyAqm::Wred(Wred::new(&curves(), qc.w_q, qc.wait, ptc)),
        "rio_plus_o" => {
            let c = curves();
            AnyAqm::RioPlusO(RioPlusO::new(c[0], c[1], c[2], qc.w_q, qc.wait, ptc))
        }
        "fdd_red" => AnyAqm::FddRed(Box::new(FddRed::new(
            qc.red_params(bps),
            if qc.penalty == "fig2" {
                PenaltyRule::Fig2
            } else {
                PenaltyRule::Shares
            },
            if qc.rtt_source == "oracle" {
                RttSource::Oracle
            } else {
                RttSource::Estimator
            },
        ))),
        "dwred" => AnyAqm::Dwred(Dwred::new(
            qc.dwred_params().expect("validated dwred queue"),
            ptc,
        )),
        _ => AnyAqm::DropTail(DropTail),
    }
}

/// The physical queues and scheduler of a multi-queue link direction (shared with the emulator).
pub fn build_multi(qc: &QueueConfig, bps: u64, seed: u64, dir_id: u64) -> MultiQueue {
    let default = qc
        .queues
        .iter()
        .position(|s| s.default)
        .expect("validated: one default queue");
    let mut class_of = [default as u8; 64];
    for (i, s) in qc.queues.iter().enumerate() {
        for &d in &s.dscp {
            class_of[d as usize] = i as u8;
        }
    }
    let subs = qc
        .queues
        .iter()
        .enumerate()
        .map(|(i, s)| {
            // Sub-queue streams: distinct from every link direction's own stream.
            let rng = SimRng::derive(seed, stream::QUEUE | (1 << 40) | (dir_id << 4) | i as u64);
            SubQueue::new(build_aqm(&s.queue, bps), s.queue.limit(), rng)
        })
        .collect();
    let n = qc.queues.len();
    let sched = match qc.scheduler.as_str() {
        "rr" => Scheduler::RoundRobin { next: 0 },
        "wrr" => Scheduler::Wrr {
            weights: qc.queues.iter().map(|s| s.weight).collect(),
            current: 0,
            served: 0,
        },
        "drr" => Scheduler::Drr {
            quanta: qc.queues.iter().map(|s| s.quantum_bytes).collect(),
            deficit: vec![0; n],
            current: 0,
            visited: false,
        },
        _ => Scheduler::Priority,
    };
    MultiQueue {
        subs,
        class_of,
        sched,
    }
}

/// A traffic conditioner at run time (RFC 2475 classifier, meter, marker/dropper): its meters,
/// one per flow or one for the aggregate, built on the first packet they see. Shared by the
/// simulator and the emulator's link daemon.
pub struct Conditioner {
    pub cfg: ConditionerConfig,
    pub spec: MeterSpec,
    pub meters: Vec<Option<AnyMeter>>,
    pub rng: SimRng,
    /// Packets coloured green, yellow, red.
    pub colored: [u64; 3],
}

impl Conditioner {
    /// Conditioner number `index` of a scenario with `n_flows` flows, with its own random
    /// stream of run `seed`.
    pub fn new(cfg: &ConditionerConfig, index: usize, n_flows: usize, seed: u64) -> Self {
        let spec = meter_spec(&cfg.meter);
        spec.validate()
            .unwrap_or_else(|e| panic!("validated conditioner: {e}"));
        let n = if cfg.scope == "aggregate" { 1 } else { n_flows };
        Conditioner {
            cfg: cfg.clone(),
            spec,
            meters: vec![None; n],
            rng: SimRng::derive(seed, stream::MARKER | index as u64),
            colored: [0; 3],
        }
    }

    /// Classifies packet `p` (travelling from node `src` to node `dst`) and, when it matches,
    /// meters it and returns its colour and the action for that colour; `None` when the
    /// classifier does not select it.
    #[inline]
    pub fn apply(
        &mut self,
        now: SimTime,
        p: &PacketMeta,
        src: usize,
        dst: usize,
    ) -> Option<(Color, Action)> {
        let arg = self.cfg.classifier_arg;
        let matches = match self.cfg.classifier.as_str() {
            "flow" => p.flow as usize == arg,
            "src" => src == arg,
            "dst" => dst == arg,
            "dscp" => p.dscp as usize == arg,
            _ => true,
        };
        if !matches {
            return None;
        }
        let slot = if self.meters.len() == 1 {
            0
        } else {
            p.flow as usize
        };
        let spec = &self.spec;
        let meter = self.meters[slot].get_or_insert_with(|| spec.build().expect("validated meter"));
        let color = meter.meter_packet(now, p, pre_color(p.dscp), &mut self.rng);
        self.colored[color as usize] += 1;
        let action = match color {
            Color::Green => self.cfg.green,
            Color::Yellow => self.cfg.yellow,
            Color::Red => self.cfg.red,
        };
        Some((color, action))
    }
}

/// The meter a resolved conditioner table describes (shared with the emulator).
pub fn meter_spec(m: &MeterConfig) -> MeterSpec {
    let mode = if m.mode == "aware" {
        ColorMode::Aware
    } else {
        ColorMode::Blind
    };
    let cbs = m.cbs_bytes.unwrap_or(0);
    let win_len = m.win_len_ns.unwrap_or(1_000_000_000);
    if let Some(a) = m.ard {
        return MeterSpec::Ard(a);
    }
    if let Some(t) = &m.twam {
        return MeterSpec::Twam(t.clone());
    }
    if let Some(p) = m.probe {
        return MeterSpec::Probe(p);
    }
    match m.kind.as_str() {
        "token_bucket" => MeterSpec::TokenBucket(TokenBucketParams {
            cir: m.cir_bps,
            cbs,
            mode,
        }),
        "srtcm" => MeterSpec::Srtcm(SrTcmParams {
            cir: m.cir_bps,
            cbs,
            ebs: m.ebs_bytes.unwrap_or(0),
            mode,
        }),
        "trtcm" => MeterSpec::Trtcm(TrTcmParams {
            cir: m.cir_bps,
            cbs,
            pir: m.pir_bps.unwrap_or(m.cir_bps),
            pbs: m.pbs_bytes.unwrap_or(0),
            mode,
        }),
        "tsw2cm" => MeterSpec::Tsw2cm(Tsw2cmParams {
            ctr: m.cir_bps,
            win_len,
        }),
        _ => MeterSpec::Tsw3cm(Tsw3cmParams {
            ctr: m.cir_bps,
            ptr: m.pir_bps.unwrap_or(m.cir_bps),
            win_len,
        }),
    }
}

/// The colour a packet carries into a colour-aware meter: AFx2 yellow, AFx3 red, else green.
pub fn pre_color(dscp: u8) -> Color {
    match dscp {
        12 | 20 | 28 | 36 => Color::Yellow,
        14 | 22 | 30 | 38 => Color::Red,
        _ => Color::Green,
    }
}

pub struct Simulation {
    pub scenario: Scenario,
    pub seed: u64,
    q: EventQueue,
    arena: PacketArena,
    dirs: Vec<LinkDir>,
    flows: Vec<Flow>,
    buf: SendBuf,
    captures: Vec<PcapWriter>,
    capture_error: Option<String>,
    conds: Vec<Conditioner>,
    /// Conditioners guarding each link direction's queue, in declaration order.
    conds_at: Vec<Vec<usize>>,
    /// Per direction: the opposite direction's queue watches the packets arriving at the end
    /// of this one (FDD-RED's RTT estimator sees the ACKs reach its router).
    reverse_watch: Vec<bool>,
    /// DWRED queues fed by a TWAM's window signal: (conditioner, direction, physical queue
    /// of a multi-queue link, signalling delay).
    dwred_targets: Vec<(usize, usize, Option<usize>, SimTime)>,
    /// The TCP senders' cwnd (packets, NaN for UDP), refreshed for an oracle TWAM.
    cwnd_buf: Vec<f64>,
    in_window: bool,
    /// Throughput is counted where packets reach the receiver (else where the sender emits).
    at_receiver: bool,
    series: Series,
    last_sample: SimTime,
    /// Directions worth sampling: those with a queue discipline other than DropTail, or
    /// that ever held a packet (every direction is sampled; this keeps the order stable).
    events: u64,
    hops: u64,
}

impl Simulation {
    pub fn new(scenario: &Scenario, seed: u64) -> Simulation {
        let sc = scenario.clone();
        let mut dirs = Vec::with_capacity(sc.links.len() * 2);
        for (i, l) in sc.links.iter().enumerate() {
            for (d, (from, to, qc)) in [
                (l.a_idx, l.b_idx, &l.queue_ab),
                (l.b_idx, l.a_idx, &l.queue_ba),
            ]
            .into_iter()
            .enumerate()
            {
                let aqm = build_aqm(qc, l.bandwidth_bps);
                let dir_id = (i * 2 + d) as u64;
                dirs.push(LinkDir::new(
                    i,
                    from,
                    to,
                    l.bandwidth_bps,
                    l.delay_ns,
                    qc.limit(),
                    aqm,
                    SimRng::derive(seed, stream::QUEUE | dir_id),
                    (sc.measurement.start_ns, sc.measurement.end_ns),
                ));
                if qc.kind == "multi" {
                    let dir = dirs.last_mut().expect("just pushed");
                    dir.multi = Some(Box::new(build_multi(qc, l.bandwidth_bps, seed, dir_id)));
                }
            }
        }
        let adj = adjacency(sc.nodes.len(), &sc.links);
        let mut q = EventQueue::new();
        let mut flows = Vec::with_capacity(sc.flows.len());
        for (f, fc) in sc.flows.iter().enumerate() {
            let fwd = shortest_path(&adj, fc.src_idx, fc.dst_idx).expect("validated route");
            let rev = shortest_path(&adj, fc.dst_idx, fc.src_idx).expect("validated route");
            let mut start_rng = SimRng::derive(seed, stream::FLOW_START | f as u64);
            let start = if fc.start_max_ns > fc.start_ns {
                fc.start_ns + (start_rng.uniform() * (fc.start_max_ns - fc.start_ns) as f64) as u64
            } else {
                fc.start_ns
            };
            let ep = match &fc.tcp {
                Some(t) => Endpoint::Tcp {
                    sender: Box::new(TcpSender::new(t, start_rng.uniform())),
                    sink: TcpSink::new(t.delayed_ack),
                    rto_scheduled: None,
                    delack_gen: 0,
                    delack_interval: t.delack_interval_ns,
                    ack_size: t.ack_size_bytes,
                    ecn: t.ecn,
                },
                None => Endpoint::Udp {
                    src: UdpSource {
                        kind: match fc.kind.as_str() {
                            "cbr" => UdpKind::Cbr,
                            "poisson" => UdpKind::Poisson,
                            _ => UdpKind::OnOff,
                        },
                        size: fc.packet_size_bytes,
                        rate_bps: fc.rate_bps.unwrap_or(1),
                        on_mean_ns: fc.on_ns.unwrap_or(0),
                        off_mean_ns: fc.off_ns.unwrap_or(0),
                        on: false,
                        seq: 0,
                        active: false,
                        rng: SimRng::derive(seed, stream::FLOW_TRAFFIC | f as u64),
                    },
                    send_pending: false,
                },
            };
            q.at(start, EventKind::FlowStart(f as u32));
            if let Some(stop) = fc.stop_ns {
                if stop < sc.duration_ns {
                    q.at(stop.max(start), EventKind::FlowStop(f as u32));
                }
            }
            flows.push(Flow {
                src: fc.src_idx,
                dst: fc.dst_idx,
                fwd,
                rev,
                size: fc.packet_size_bytes,
                dscp: fc.dscp,
                start,
                ep,
                stats: FlowStats::default(),
                ts_recent_data: 0,
                ts_recent_ack: 0,
            });
        }
        let mut conds = Vec::new();
        let mut conds_at = vec![Vec::new(); dirs.len()];
        for (i, c) in sc.conditioners.iter().enumerate() {
            conds_at[c.dir_idx].push(i);
            conds.push(Conditioner::new(c, i, flows.len(), seed));
        }
        // Round-trip propagation delay of every flow (FDD-RED's oracle RTTs).
        let path_rtts: Vec<SimTime> = flows
            .iter()
            .map(|f| {
                f.fwd
                    .iter()
                    .chain(&f.rev)
                    .map(|&d| dirs[d as usize].delay)
                    .sum()
            })
            .collect();
        for d in &mut dirs {
            d.aqm.set_path_rtts(&path_rtts);
        }
        let reverse_watch: Vec<bool> = (0..dirs.len())
            .map(|d| dirs[d ^ 1].aqm.wants_reverse())
            .collect();
        // TWAM: one instance for the LSP aggregate, ticking every α·RTT_LSP; the DWRED queues
        // that follow its window signal.
        let mut dwred_targets = Vec::new();
        for (ci, c) in conds.iter_mut().enumerate() {
            if let MeterSpec::Twam(p) = &c.spec {
                c.meters[0] = Some(c.spec.build().expect("validated meter"));
                q.at(p.interval(), EventKind::TwamTick(ci as u32));
            }
        }
        for (li, l) in sc.links.iter().enumerate() {
            for (d, qc) in [(li * 2, &l.queue_ab), (li * 2 + 1, &l.queue_ba)] {
                let subs = qc
                    .queues
                    .iter()
                    .enumerate()
                    .map(|(i, s)| (Some(i), &s.queue));
                for (sub, x) in std::iter::once((None, qc)).chain(subs) {
                    if x.kind == "dwred" {
                        let ci = conds
                            .iter()
                            .position(|c| c.cfg.name == x.signal)
                            .expect("validated signal");
                        dwred_targets.push((ci, d, sub, x.signal_delay_ns.unwrap_or(0)));
                    }
                }
            }
        }
        q.at(sc.measurement.start_ns, EventKind::MeasureStart);
        q.at(sc.measurement.end_ns, EventKind::MeasureEnd);
        q.at(0, EventKind::Sample);
        Simulation {
            seed,
            q,
            arena: PacketArena::with_capacity(1024),
            dirs,
            flows,
            buf: Vec::with_capacity(64),
            captures: Vec::new(),
            capture_error: None,
            cwnd_buf: vec![f64::NAN; sc.flows.len()],
            conds,
            conds_at,
            reverse_watch,
            dwred_targets,
            in_window: false,
            at_receiver: sc.measurement.point == "receiver",
            series: Series::default(),
            last_sample: 0,
            events: 0,
            hops: 0,
            scenario: sc,
        }
    }

    /// Captures the packets leaving link direction `dir` (link index * 2 + 0 for a→b, + 1 for
    /// b→a) into `out` as pcap.
    pub fn attach_capture(
        &mut self,
        dir: usize,
        out: Box<dyn std::io::Write + Send>,
    ) -> std::io::Result<()> {
        let w = PcapWriter::new(out)?;
        self.dirs[dir].capture = Some(self.captures.len());
        self.captures.push(w);
        Ok(())
    }

    /// The queue discipline of link direction `dir` (link index * 2 + 0 for a→b, + 1 for b→a),
    /// for inspection.
    pub fn aqm(&self, dir: usize) -> &AnyAqm {
        &self.dirs[dir].aqm
    }

    pub fn now(&self) -> SimTime {
        self.q.now()
    }

    pub fn done(&mut self) -> bool {
        self.q
            .peek_time()
            .is_none_or(|t| t > self.scenario.duration_ns)
    }

    /// Runs every event up to and including time `until` (capped at the scenario duration).
    pub fn run_until(&mut self, until: SimTime) {
        let until = until.min(self.scenario.duration_ns);
        while let Some(t) = self.q.peek_time() {
            if t > until {
                break;
            }
            let e = self.q.pop().expect("peeked");
            self.events += 1;
            self.dispatch(e.time, e.kind);
        }
    }

    pub fn run(&mut self) {
        self.run_until(self.scenario.duration_ns);
    }

    fn dispatch(&mut self, now: SimTime, kind: EventKind) {
        match kind {
            EventKind::Arrive(d) => self.on_arrive(now, d as usize),
            EventKind::TxDone(d) => self.on_tx_done(now, d as usize),
            EventKind::FlowStart(f) => self.on_flow_start(now, f as usize),
            EventKind::FlowStop(f) => self.on_flow_stop(f as usize),
            EventKind::UdpSend(f) => self.on_udp_send(now, f as usize),
            EventKind::UdpToggle(f) => self.on_udp_toggle(now, f as usize),
            EventKind::Rto(f, _) => self.on_rto(now, f as usize),
            EventKind::DelAck(f, g) => self.on_delack(now, f as usize, g),
            EventKind::TwamTick(c) => self.on_twam_tick(now, c as usize),
            EventKind::WindowSignal(t, bits) => self.on_window_signal(t as usize, bits),
            EventKind::Sample => self.on_sample(now),
            EventKind::MeasureStart => self.in_window = true,
            EventKind::MeasureEnd => self.in_window = false,
        }
    }

    // --- TWAM and DWRED ---------------------------------------------------------------

    /// A TWAM closes its operating interval: Eq. 3 from the windows (the senders' cwnd for
    /// the oracle), then Σ W_k is signalled to the DWRED queues that follow it.
    fn on_twam_tick(&mut self, now: SimTime, ci: usize) {
        for (k, f) in self.flows.iter().enumerate() {
            self.cwnd_buf[k] = match &f.ep {
                Endpoint::Tcp { sender, .. } => sender.cwnd,
                Endpoint::Udp { .. } => 0.0,
            };
        }
        let c = &mut self.conds[ci];
        let Some(AnyMeter::Twam(t)) = c.meters[0].as_mut() else {
            return;
        };
        let interval = t.params().interval();
        let window = t.tick(now, Some(&self.cwnd_buf));
        self.q.at(now + interval, EventKind::TwamTick(ci as u32));
        for (k, &(src, _, _, delay)) in self.dwred_targets.iter().enumerate() {
            if src == ci {
                let bits = (window as f32).to_bits();
                self.q
                    .at(now + delay, EventKind::WindowSignal(k as u32, bits));
            }
        }
    }

    fn on_window_signal(&mut self, target: usize, bits: u32) {
        let (_, d, sub, _) = self.dwred_targets[target];
        let window = f32::from_bits(bits) as f64;
        let dir = &mut self.dirs[d];
        let aqm = match (sub, dir.multi.as_mut()) {
            (Some(i), Some(m)) => &mut m.subs[i].aqm,
            _ => &mut dir.aqm,
        };
        if let AnyAqm::Dwred(a) = aqm {
            a.on_window_signal(window);
        }
    }

    // --- packets through links -------------------------------------------------------

    #[inline]
    fn send_on(&mut self, now: SimTime, d: usize, id: PacketId) {
        if !self.conds_at[d].is_empty() && !self.condition(now, d, id) {
            return;
        }
        self.advance(now, d);
        if self.dirs[d].multi.is_some() {
            match self.dirs[d].enqueue_multi(now, id, &mut self.arena) {
                Admit::Dropped(r) => self.on_drop(d, id, r),
                Admit::Queued { .. } => self.start_next(now, d),
            }
            return;
        }
        match self.dirs[d].enqueue(now, id, &mut self.arena) {
            Admit::Queued {
                schedule_arrival: Some(t),
            } => self.q.at(t, EventKind::Arrive(d as u32)),
            Admit::Queued {
                schedule_arrival: None,
            } => {}
            Admit::Dropped(r) => self.on_drop(d, id, r),
        }
    }

    /// Runs the conditioners guarding direction `d` on a packet; false when one dropped it.
    fn condition(&mut self, now: SimTime, d: usize, id: PacketId) -> bool {
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

    /// Multi-queue links: start the next transmission if the transmitter is free.
    fn start_next(&mut self, now: SimTime, d: usize) {
        if let Some((done, arrival)) = self.dirs[d].start_next(now) {
            self.q.at(done, EventKind::TxDone(d as u32));
            if let Some(t) = arrival {
                self.q.at(t, EventKind::Arrive(d as u32));
            }
        }
    }

    fn on_tx_done(&mut self, now: SimTime, d: usize) {
        self.dirs[d].tx_pending = false;
        self.advance(now, d);
        self.start_next(now, d);
    }

    /// Brings link direction `d` up to `now`: counts (and captures) the transmissions that
    /// ended since it was last looked at.
    #[inline]
    fn advance(&mut self, now: SimTime, d: usize) {
        let range = self.dirs[d].advance(now);
        for i in range {
            self.hops += 1;
            if let Some(c) = self.dirs[d].capture {
                let e = self.dirs[d].line[i];
                let p = *self.arena.get(e.id);
                let f = &self.flows[p.flow as usize];
                let udp = matches!(f.ep, Endpoint::Udp { .. });
                if let Err(err) = self.captures[c].record(e.done, &p, f.src, f.dst, udp) {
                    self.capture_error.get_or_insert_with(|| err.to_string());
                }
            }
            self.dirs[d].depart(i);
        }
    }

    fn on_drop(&mut self, d: usize, id: PacketId, r: DropReason) {
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

    fn on_arrive(&mut self, now: SimTime, d: usize) {
        self.advance(now, d);
        let (id, next) = self.dirs[d].arrive();
        if let Some(t) = next {
            self.q.at(t, EventKind::Arrive(d as u32));
        }
        if self.reverse_watch[d] {
            let p = *self.arena.get(id);
            self.dirs[d ^ 1].aqm.on_reverse(now, &p);
        }
        let p = self.arena.get_mut(id);
        p.hop += 1;
        let hop = p.hop as usize;
        let kind = p.kind;
        let f = &self.flows[p.flow as usize];
        let route = if kind == PacketKind::Data {
            &f.fwd
        } else {
            &f.rev
        };
        if hop == route.len() {
            self.deliver(now, id);
        } else {
            let next = route[hop] as usize;
            self.send_on(now, next, id);
        }
    }

    fn deliver(&mut self, now: SimTime, id: PacketId) {
        let p = self.arena.free(id);
        let fi = p.flow as usize;
        let in_window = self.in_window;
        match p.kind {
            PacketKind::Data => {
                let flow = &mut self.flows[fi];
                flow.stats.delivered_pkts += 1;
                flow.stats.delivered_bytes += p.size as u64;
                flow.ts_recent_data = p.created_at;
                if in_window {
                    flow.stats.window_delivered_bytes += p.size as u64;
                    if crate::ds::drop_precedence(p.dscp) == 0 {
                        flow.stats.window_delivered_in_bytes += p.size as u64;
                    }
                }
                if self.at_receiver {
                    flow.stats.bin_bytes += p.size as u64;
                }
                if let Endpoint::Tcp {
                    sink,
                    delack_gen,
                    delack_interval,
                    ..
                } = &mut flow.ep
                {
                    let before = sink.goodput_pkts;
                    let action = sink.on_data(p.seq);
                    if in_window {
                        flow.stats.window_goodput_pkts += sink.goodput_pkts - before;
                    }
                    match action {
                        SinkAction::AckNow => {
                            *delack_gen = delack_gen.wrapping_add(1);
                            self.send_ack(now, fi);
                        }
                        SinkAction::Delay => {
                            *delack_gen = delack_gen.wrapping_add(1);
                            let (g, iv) = (*delack_gen, *delack_interval);
                            self.q.at(now + iv, EventKind::DelAck(fi as u32, g));
                        }
                    }
                }
            }
            PacketKind::Ack => {
                let flow = &mut self.flows[fi];
                flow.stats.acks_delivered += 1;
                flow.ts_recent_ack = p.created_at;
                if let Endpoint::Tcp { sender, .. } = &mut flow.ep {
                    let mut buf = std::mem::take(&mut self.buf);
                    sender.on_ack(now, p.ack, &mut buf);
                    self.transmit_tcp(now, fi, &mut buf);
                    self.buf = buf;
                }
            }
        }
    }

    fn send_ack(&mut self, now: SimTime, fi: usize) {
        let flow = &mut self.flows[fi];
        let Endpoint::Tcp { sink, ack_size, .. } = &flow.ep else {
            return;
        };
        let mut p = PacketMeta::new(fi as u32, PacketKind::Ack, *ack_size, 0, now);
        p.ack = sink.ackno();
        p.ts_echo = flow.ts_recent_data;
        flow.stats.acks_sent += 1;
        let first = flow.rev[0] as usize;
        let id = self.arena.alloc(p);
        self.send_on(now, first, id);
    }

    fn transmit_tcp(&mut self, now: SimTime, fi: usize, buf: &mut SendBuf) {
        let (size, dscp, first) = {
            let f = &self.flows[fi];
            (f.size, f.dscp, f.fwd[0] as usize)
        };
        let (ecn, syn) = match &self.flows[fi].ep {
            Endpoint::Tcp { ecn, sender, .. } => (*ecn, sender.syn),
            Endpoint::Udp { .. } => (false, false),
        };
        for (seq, rtx) in buf.drain(..) {
            // ns-2's SYN is a 40-byte segment 0.
            let size = if syn && seq == 0 { 40 } else { size };
            let mut p = PacketMeta::new(fi as u32, PacketKind::Data, size, seq, now);
            p.dscp = dscp;
            p.retransmit = rtx;
            p.ts_echo = self.flows[fi].ts_recent_ack;
            if ecn {
                p.ecn = 2;
            }
            if rtx {
                self.flows[fi].stats.retransmits += 1;
            }
            self.emit(now, fi, first, p);
        }
        self.sync_rto(fi);
    }

    /// Makes sure a heap event exists no later than the sender's retransmission deadline.
    fn sync_rto(&mut self, fi: usize) {
        if let Endpoint::Tcp {
            sender,
            rto_scheduled,
            ..
        } = &mut self.flows[fi].ep
        {
            if let Some(dl) = sender.rtx_deadline {
                if rto_scheduled.is_none_or(|s| dl < s) {
                    *rto_scheduled = Some(dl);
                    self.q.at(dl, EventKind::Rto(fi as u32, 0));
                }
            }
        }
    }

    fn on_rto(&mut self, now: SimTime, fi: usize) {
        let Endpoint::Tcp {
            sender,
            rto_scheduled,
            ..
        } = &mut self.flows[fi].ep
        else {
            return;
        };
        if *rto_scheduled != Some(now) {
            return; // superseded by an earlier event
        }
        *rto_scheduled = None;
        match sender.rtx_deadline {
            Some(dl) if dl <= now => {
                let mut buf = std::mem::take(&mut self.buf);
                sender.on_timeout(now, &mut buf);
                self.transmit_tcp(now, fi, &mut buf);
                self.buf = buf;
            }
            Some(dl) => {
                *rto_scheduled = Some(dl);
                self.q.at(dl, EventKind::Rto(fi as u32, 0));
            }
            None => {}
        }
    }

    fn on_delack(&mut self, now: SimTime, fi: usize, g: u32) {
        let Endpoint::Tcp {
            sink, delack_gen, ..
        } = &mut self.flows[fi].ep
        else {
            return;
        };
        if *delack_gen != g || !sink.pending {
            return;
        }
        sink.pending = false;
        self.send_ack(now, fi);
    }

    // --- sources ---------------------------------------------------------------------

    fn on_flow_start(&mut self, now: SimTime, fi: usize) {
        match &mut self.flows[fi].ep {
            Endpoint::Tcp { sender, .. } => {
                let mut buf = std::mem::take(&mut self.buf);
                sender.start(now, &mut buf);
                self.transmit_tcp(now, fi, &mut buf);
                self.buf = buf;
            }
            Endpoint::Udp { src, send_pending } => {
                src.active = true;
                src.on = true;
                if src.kind == UdpKind::OnOff {
                    let p = src.period(true);
                    self.q.at(now + p, EventKind::UdpToggle(fi as u32));
                }
                *send_pending = true;
                self.q.at(now, EventKind::UdpSend(fi as u32));
            }
        }
    }

    fn on_flow_stop(&mut self, fi: usize) {
        match &mut self.flows[fi].ep {
            Endpoint::Tcp { sender, .. } => sender.stop(),
            Endpoint::Udp { src, .. } => src.active = false,
        }
    }

    fn on_udp_send(&mut self, now: SimTime, fi: usize) {
        let (size, dscp, first) = {
            let f = &self.flows[fi];
            (f.size, f.dscp, f.fwd[0] as usize)
        };
        let Endpoint::Udp { src, send_pending } = &mut self.flows[fi].ep else {
            return;
        };
        *send_pending = false;
        if !src.active || !src.on {
            return;
        }
        let mut p = PacketMeta::new(fi as u32, PacketKind::Data, size, src.seq, now);
        p.dscp = dscp;
        src.seq += 1;
        let gap = src.next_gap();
        *send_pending = true;
        self.q.at(now + gap, EventKind::UdpSend(fi as u32));
        self.emit(now, fi, first, p);
    }

    /// A source emits a data packet onto its first link: count it and send it.
    #[inline]
    fn emit(&mut self, now: SimTime, fi: usize, first: usize, p: PacketMeta) {
        let size = p.size as u64;
        let st = &mut self.flows[fi].stats;
        st.sent_pkts += 1;
        st.sent_bytes += size;
        if self.in_window {
            st.window_sent_bytes += size;
        }
        if !self.at_receiver {
            st.bin_bytes += size;
        }
        let id = self.arena.alloc(p);
        self.send_on(now, first, id);
    }

    fn on_udp_toggle(&mut self, now: SimTime, fi: usize) {
        let Endpoint::Udp { src, send_pending } = &mut self.flows[fi].ep else {
            return;
        };
        if !src.active {
            return;
        }
        src.on = !src.on;
        let p = src.period(src.on);
        self.q.at(now + p, EventKind::UdpToggle(fi as u32));
        if src.on && !*send_pending {
            *send_pending = true;
            self.q.at(now, EventKind::UdpSend(fi as u32));
        }
    }

    // --- measurement -----------------------------------------------------------------

    fn on_sample(&mut self, now: SimTime) {
        for d in 0..self.dirs.len() {
            self.advance(now, d);
        }
        let s = &mut self.series;
        for (d, l) in self.dirs.iter().enumerate() {
            match &l.multi {
                None => {
                    s.q_time_ns.push(now);
                    s.q_dir.push(d as u32);
                    s.q_sub.push(0);
                    s.q_len_pkts.push(l.waiting() as u32);
                    s.q_len_bytes.push(l.q_bytes);
                    s.q_avg
                        .push(crate::aqm::Aqm::average(&l.aqm).unwrap_or(f64::NAN));
                    for (k, v) in crate::aqm::Aqm::averages(&l.aqm).into_iter().enumerate() {
                        s.q_avg_prec[k].push(v);
                    }
                }
                Some(m) => {
                    for (i, sub) in m.subs.iter().enumerate() {
                        s.q_time_ns.push(now);
                        s.q_dir.push(d as u32);
                        s.q_sub.push(i as u32);
                        s.q_len_pkts.push(sub.fifo.len() as u32);
                        s.q_len_bytes.push(sub.bytes);
                        s.q_avg
                            .push(crate::aqm::Aqm::average(&sub.aqm).unwrap_or(f64::NAN));
                        for (k, v) in crate::aqm::Aqm::averages(&sub.aqm).into_iter().enumerate() {
                            s.q_avg_prec[k].push(v);
                        }
                    }
                }
            }
        }
        let dt = (now - self.last_sample) as f64 / 1e9;
        let record_cwnd = self.scenario.measurement.cwnd;
        for (fi, f) in self.flows.iter_mut().enumerate() {
            s.f_time_ns.push(now);
            s.f_flow.push(fi as u32);
            s.f_throughput_bps.push(if dt > 0.0 {
                f.stats.bin_bytes as f64 * 8.0 / dt
            } else {
                0.0
            });
            f.stats.bin_bytes = 0;
            let (c, t) = match &f.ep {
                Endpoint::Tcp { sender, .. } if record_cwnd => (sender.cwnd, sender.ssthresh),
                _ => (f64::NAN, f64::NAN),
            };
            s.f_cwnd.push(c);
            s.f_ssthresh.push(t);
        }
        for (ci, c) in self.conds.iter().enumerate() {
            let aggregate = c.meters.len() == 1 && c.cfg.scope == "aggregate";
            for (slot, m) in c.meters.iter().enumerate() {
                if let Some(level) = m.as_ref().and_then(|m| m.token_level(now)) {
                    s.m_time_ns.push(now);
                    s.m_cond.push(ci as u32);
                    s.m_flow
                        .push(if aggregate { u32::MAX } else { slot as u32 });
                    s.m_level.push(level);
                }
                if let Some(m) = m.as_ref() {
                    let flow = if aggregate { u32::MAX } else { slot as u32 };
                    m.gauges(now, &mut |name, value| {
                        let k = match s.gauge_names.iter().position(|n| *n == name) {
                            Some(k) => k,
                            None => {
                                s.gauge_names.push(name);
                                s.gauge_names.len() - 1
                            }
                        };
                        s.g_time_ns.push(now);
                        s.g_cond.push(ci as u32);
                        s.g_flow.push(flow);
                        s.g_name.push(k as u32);
                        s.g_value.push(value);
                    });
                }
            }
        }
        self.last_sample = now;
        let next = now + self.scenario.measurement.interval_ns;
        if next <= self.scenario.duration_ns {
            self.q.at(next, EventKind::Sample);
        }
    }

    /// Collects the results. Call after [`Simulation::run`].
    pub fn results(&mut self) -> RunResults {
        let now = self.q.now();
        for d in 0..self.dirs.len() {
            self.advance(now, d);
        }
        for c in &mut self.captures {
            if let Err(e) = c.flush() {
                self.capture_error.get_or_insert_with(|| e.to_string());
            }
        }
        let m = &self.scenario.measurement;
        let window_s = (m.end_ns - m.start_ns) as f64 / 1e9;
        // In flight: data packets of each flow still in the arena.
        let mut in_flight = vec![0u64; self.flows.len()];
        let mut acks_in_flight = vec![0u64; self.flows.len()];
        for p in self.arena.live() {
            match p.kind {
                PacketKind::Data => in_flight[p.flow as usize] += 1,
                PacketKind::Ack => acks_in_flight[p.flow as usize] += 1,
            }
        }
        let mut violations = Vec::new();
        let flows: Vec<FlowResult> = self
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let st = &f.stats;
                if st.sent_pkts != st.delivered_pkts + st.dropped_pkts + in_flight[i] {
                    violations.push(format!(
                        "flow {}: sent {} != delivered {} + dropped {} + in flight {}",
                        i, st.sent_pkts, st.delivered_pkts, st.dropped_pkts, in_flight[i]
                    ));
                }
                if st.acks_sent != st.acks_delivered + st.acks_dropped + acks_in_flight[i] {
                    violations.push(format!("flow {i}: ACK conservation violated"));
                }
                let (cwnd, ssthresh, srtt, timeouts, fast_rtx) = match &f.ep {
                    Endpoint::Tcp { sender, .. } => (
                        sender.cwnd,
                        sender.ssthresh,
                        sender.srtt(),
                        sender.stats.timeouts,
                        sender.stats.fast_retransmits,
                    ),
                    Endpoint::Udp { .. } => (f64::NAN, f64::NAN, f64::NAN, 0, 0),
                };
                let window_bytes = if m.point == "sender" {
                    st.window_sent_bytes
                } else {
                    st.window_delivered_bytes
                };
                FlowResult {
                    start_ns: f.start,
                    throughput_bps: window_bytes as f64 * 8.0 / window_s,
                    goodput_bps: st.window_goodput_pkts as f64 * f.size as f64 * 8.0 / window_s,
                    in_throughput_bps: st.window_delivered_in_bytes as f64 * 8.0 / window_s,
                    in_flight: in_flight[i],
                    final_cwnd: cwnd,
                    final_ssthresh: ssthresh,
                    srtt_s: srtt,
                    timeouts,
                    fast_retransmits: fast_rtx,
                    stats: st.clone(),
                }
            })
            .collect();
        let links: Vec<LinkResult> = self
            .dirs
            .iter()
            .enumerate()
            .map(|(d, l)| {
                let st = &l.stats;
                let queued = l.queued();
                if st.arrivals != st.departures + st.total_drops() + queued {
                    violations.push(format!(
                        "link direction {d}: arrivals != departures + drops + queued"
                    ));
                }
                LinkResult {
                    link: l.link,
                    direction: if d % 2 == 0 { "ab" } else { "ba" },
                    utilization: st.window_bytes as f64 * 8.0 / (l.bps as f64 * window_s),
                    queued,
                    in_pipe: l.in_pipe(),
                    stats: st.clone(),
                }
            })
            .collect();
        RunResults {
            flows,
            links,
            series: std::mem::take(&mut self.series),
            events: self.events,
            packet_hops: self.hops,
            end_ns: self.q.now(),
            violations,
            capture_error: self.capture_error.clone(),
            capture_records: self.captures.iter().map(|c| c.records).collect(),
            conditioner_colored: self.conds.iter().map(|c| c.colored).collect(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct FlowResult {
    pub start_ns: SimTime,
    pub throughput_bps: f64,
    pub goodput_bps: f64,
    /// Throughput at the receiver of packets arriving marked IN (drop precedence 0).
    pub in_throughput_bps: f64,
    pub in_flight: u64,
    pub final_cwnd: f64,
    pub final_ssthresh: f64,
    pub srtt_s: f64,
    pub timeouts: u64,
    pub fast_retransmits: u64,
    pub stats: FlowStats,
}

#[derive(Debug, Clone)]
pub struct LinkResult {
    pub link: usize,
    pub direction: &'static str,
    pub utilization: f64,
    pub queued: u64,
    pub in_pipe: u64,
    pub stats: crate::net::link::LinkStats,
}

#[derive(Debug, Clone)]
pub struct RunResults {
    pub flows: Vec<FlowResult>,
    pub links: Vec<LinkResult>,
    pub series: Series,
    pub events: u64,
    pub packet_hops: u64,
    pub end_ns: SimTime,
    /// Conservation-law violations (empty when every packet is accounted for).
    pub violations: Vec<String>,
    pub capture_error: Option<String>,
    pub capture_records: Vec<u64>,
    /// Per conditioner: packets coloured green, yellow, red.
    pub conditioner_colored: Vec<[u64; 3]>,
}

/// Jain's fairness index of `x`: (Σx)² / (n Σx²); 1 when all equal.
pub fn jain_index(x: &[f64]) -> f64 {
    let n = x.len() as f64;
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    if s2 == 0.0 {
        1.0
    } else {
        s * s / (n * s2)
    }
}

#[cfg(test)]
#[path = "sim_twam_tests.rs"]
mod twam_tests;
