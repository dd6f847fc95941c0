//! The simulation: builds the network from a [`Scenario`], runs the event loop and collects
//! the results. It is a plain value (no globals), so several simulations can run in one
//! process, on different threads.
//!
//! By job: [`build`] makes queues, schedulers and conditioners from the resolved scenario
//! (shared with the emulator's link daemon); `forward` moves packets through conditioners and
//! link directions; `transport` is the glue to the TCP and UDP endpoints; `signals` carries
//! timers and signals between components; [`measure`] samples time series and collects the
//! results.

mod arrivals;
pub mod build;
pub mod delay;
mod fold;
mod forward;
pub mod measure;
mod signals;
pub mod stall;
mod transport;
pub mod window;

pub use arrivals::{FlowRecord, ProcessCounts};
pub use build::{build_aqm, build_qdisc, pre_color, Conditioner};
pub use delay::{DelayStats, DelaySummary};
pub use fold::ClassResult;
pub use measure::{jain_index, FlowResult, LinkResult, MemoryUse, RunResults, Series};
pub use stall::Stall;

use crate::aqm::{AnyAqm, Aqm};
use crate::conditioner::Meter;
use crate::engine::{EventKind, EventQueue};
use crate::net::link::LinkDir;
use crate::net::pcap::PcapWriter;
use crate::packet::PacketArena;
use crate::rng::{stream, SimRng};
use crate::scenario::{FlowConfig, MeasurementPoint, Scenario};
use crate::traffic::sender::{sink_for, Sender};
use crate::traffic::sink::TcpSink;
use crate::traffic::tcp::SendBuf;
use crate::traffic::udp::{PacketSizes, UdpSource};
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
    /// Data packets that reached the receiver marked Congestion Experienced.
    pub ecn_marks: u64,
    bin_bytes: u64,
}

enum Endpoint {
    Tcp {
        sender: Sender,
        sink: TcpSink,
        /// The time of the pending RTO event in the heap (lazy re-arming).
        rto_scheduled: Option<SimTime>,
        delack_gen: u32,
        delack_interval: SimTime,
        /// The delayed-ACK timer, armed lazily as Linux's (`inet_csk_reset_xmit_timer`): at
        /// most one `DelAck` event is pending (`delack_queued`); `delack_due` is the latest
        /// held ACK's (deadline, reserved sequence number, generation), which an earlier
        /// pending event schedules when it fires (`transport::on_delack`).
        delack_queued: bool,
        delack_due: (SimTime, u64, u32),
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
    /// Where the flow's forward and reverse routes start in [`Simulation::routes`].
    fwd_at: u32,
    rev_at: u32,
    size: u32,
    dscp: u8,
    start: SimTime,
    ep: Endpoint,
    stats: FlowStats,
    delay: DelayStats,
    /// A finite transfer in progress (or done) on this flow.
    transfer: Option<arrivals::Transfer>,
    /// RFC 7323 TS.Recent: the TSval of the latest data packet the receiver got (echoed by
    /// its ACKs) and of the latest ACK the sender got (echoed by its data packets).
    ts_recent_data: u64,
    ts_recent_ack: u64,
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
    /// Bytes all captures together may write (0: no limit) and, once it was reached, the
    /// simulated time of the first record left out ([`Simulation::set_capture_limit`]).
    capture_limit: u64,
    capture_stopped: Option<SimTime>,
    /// Bytes the captures have written (file headers and records).
    capture_written: u64,
    conds: Vec<Conditioner>,
    /// Conditioners guarding each link direction's queue, in declaration order.
    conds_at: Vec<Vec<usize>>,
    /// DWRED queues fed by a TWAM's window signal: (conditioner, direction, physical queue
    /// of a multi-queue link, signalling delay).
    signal_routes: Vec<(usize, usize, Option<usize>, SimTime)>,
    /// The TCP senders' cwnd (packets, NaN for UDP), refreshed for an oracle TWAM.
    cwnd_buf: Vec<f64>,
    in_window: bool,
    window: window::WindowSnapshots,
    /// Throughput is counted where packets reach the receiver (else where the sender emits).
    at_receiver: bool,
    series: Series,
    last_sample: SimTime,
    /// When the links' lines next shrink to what they hold
    /// ([`crate::net::link::LINE_SHRINK_EVERY_NS`]).
    next_line_shrink: SimTime,
    /// Events handled.
    events: u64,
    /// The checkpoints at the current instant ([`stall`]), the bound of events at one
    /// instant (0: the default) and, once it was reached, where.
    watch: stall::Watch,
    stall_bound: u64,
    stalled: Option<Stall>,
    /// Arrival processes; their slots are flows after the declared flows, built as needed.
    procs: Vec<arrivals::Process>,
    /// Every flow's round-trip propagation delay (FDD-RED's oracle RTTs), and whether a queue
    /// reads them (a new slot's is then handed to the queues).
    path_rtts: Vec<SimTime>,
    wants_rtts: bool,
    /// Finished transfers not yet taken by [`Simulation::take_records`].
    records: Vec<FlowRecord>,
    /// The declared flows' paths (for finite transfers' ideal completion times).
    static_paths: Vec<arrivals::PathModel>,
    /// SACK blocks of the ACKs in flight of SACK flows, by packet id (`transport`).
    sack_blocks: Vec<crate::traffic::sink::SackBlocks>,
    /// The window a linux receiver's ACK offers (segments), by the ACK's packet id: a side
    /// table as `sack_blocks`, written for those ACKs only.
    ack_windows: Vec<u32>,
    /// Every flow's forward and reverse routes, one after the other, each followed by
    /// [`ROUTE_END`]: a packet keeps its position here ([`PacketMeta::at`]), so that a hop
    /// finds the next link direction in this small table instead of in its flow.
    routes: Vec<u32>,
    /// The arrival (direction, packet) whose packet and direction the loop asked for two events
    /// ahead ([`Self::prefetch_ahead`]); no effect on results.
    ahead: [Option<(u32, u32)>; AHEAD],
}

/// Starts loading every cache line of the flow at `f`: a delivery reads or writes most of
/// them (the delay sketch's header, the receiver, the counters, the timestamps), an ACK's
/// delivery and the data it releases as many. No effect on results; nothing is read.
#[inline(always)]
fn prefetch_flow(f: *const Flow) {
    let b = f.cast::<u8>();
    let size = std::mem::size_of::<Flow>();
    let mut off = 0;
    while off < size {
        crate::prefetch::read(b.wrapping_add(off));
        off += 64;
    }
    crate::prefetch::read(b.wrapping_add(size - 1));
}

/// Ends a route in [`Simulation::routes`].
const ROUTE_END: u32 = u32::MAX;
/// How many events past the next the loop starts loading an arrival's packet and direction
/// ([`Simulation::prefetch_ahead`]).
const AHEAD: usize = 2;

/// Appends a flow's forward and reverse routes to the route table; returns where each starts.
fn add_routes(routes: &mut Vec<u32>, (fwd, rev): &(Vec<u32>, Vec<u32>)) -> (u32, u32) {
    let fwd_at = routes.len() as u32;
    routes.extend_from_slice(fwd);
    routes.push(ROUTE_END);
    let rev_at = routes.len() as u32;
    routes.extend_from_slice(rev);
    routes.push(ROUTE_END);
    (fwd_at, rev_at)
}

/// The route starting at `at` in the route table, up to its end.
fn route_at(routes: &[u32], at: u32) -> &[u32] {
    let r = &routes[at as usize..];
    &r[..r.iter().position(|&d| d == ROUTE_END).unwrap_or(r.len())]
}

impl Simulation {
    pub fn new(scenario: &Scenario, seed: u64) -> Simulation {
        let sc = scenario.clone();
        let mut dirs = build_dirs(&sc, seed);
        let mut q = EventQueue::new();
        let mut flows = Vec::with_capacity(sc.flows.len());
        let mut static_paths = Vec::with_capacity(sc.flows.len());
        let mut routes = Vec::new();
        for ((f, fc), route) in sc.flows.iter().enumerate().zip(sc.flow_routes()) {
            static_paths.push(arrivals::PathModel::new(&route.0, &route.1, &dirs));
            let flow = build_flow(fc, f, add_routes(&mut routes, &route), seed);
            q.at(flow.start, EventKind::FlowStart(f as u32));
            if let Some(stop) = fc.stop_ns {
                if stop < sc.duration_ns {
                    q.at(stop.max(flow.start), EventKind::FlowStop(f as u32));
                }
            }
            flows.push(flow);
        }
        // Arrival processes build their slots (flows) as they need them (`arrivals`).
        let mut procs = Vec::with_capacity(sc.arrivals.len());
        for (p, (a, route)) in sc.arrivals.iter().zip(sc.arrival_routes()).enumerate() {
            let path = arrivals::PathModel::new(&route.0, &route.1, &dirs);
            let rtt = route
                .0
                .iter()
                .chain(&route.1)
                .map(|&d| dirs[d as usize].delay)
                .sum();
            let at = add_routes(&mut routes, &route);
            procs.push(arrivals::Process::new(a, p, (at, rtt), path, seed));
        }
        let mut conds = Vec::new();
        let mut conds_at = vec![Vec::new(); dirs.len()];
        for (i, c) in sc.conditioners.iter().enumerate() {
            conds_at[c.dir_idx].push(i);
            dirs[c.dir_idx].guarded = true;
            conds.push(Conditioner::new(c, i, flows.len(), seed));
        }
        // Round-trip propagation delay of every flow (FDD-RED's oracle RTTs).
        let path_rtts: Vec<SimTime> = flows
            .iter()
            .map(|f| {
                route_at(&routes, f.fwd_at)
                    .iter()
                    .chain(route_at(&routes, f.rev_at))
                    .map(|&d| dirs[d as usize].delay)
                    .sum()
            })
            .collect();
        let mut wants_rtts = false;
        for d in &mut dirs {
            d.aqm.set_path_rtts(&path_rtts);
            wants_rtts |= matches!(d.aqm, AnyAqm::FddRed(_));
        }
        for d in 0..dirs.len() {
            dirs[d].watched = dirs[d ^ 1].aqm.wants_reverse();
        }
        // Meters with a timer (TWAM: one instance for the LSP aggregate, ticking every
        // α·RTT_LSP) are built at once and their timers armed.
        for (ci, c) in conds.iter_mut().enumerate() {
            let meter = c.spec().build().expect("validated meter");
            if let Some(period) = meter.timer_period() {
                c.meters[0] = Some(meter);
                q.at(period, EventKind::Timer(ci as u32));
            }
        }
        let signal_routes = signal_routes(&sc, &conds);
        let n_flows = flows.len();
        q.at(sc.measurement.start_ns, EventKind::MeasureStart);
        q.at(sc.measurement.end_ns, EventKind::MeasureEnd);
        q.at(0, EventKind::Sample);
        let mut sim = Simulation {
            seed,
            q,
            arena: PacketArena::with_capacity(1024),
            dirs,
            flows,
            buf: Vec::with_capacity(64),
            captures: Vec::new(),
            capture_error: None,
            capture_limit: 0,
            capture_stopped: None,
            capture_written: 0,
            cwnd_buf: vec![f64::NAN; n_flows],
            conds,
            conds_at,
            signal_routes,
            in_window: false,
            window: window::WindowSnapshots::default(),
            at_receiver: sc.measurement.point == MeasurementPoint::Receiver,
            series: Series::default(),
            last_sample: 0,
            next_line_shrink: crate::net::link::LINE_SHRINK_EVERY_NS,
            events: 0,
            watch: stall::Watch::default(),
            stall_bound: 0,
            stalled: None,
            procs,
            path_rtts,
            wants_rtts,
            records: Vec::new(),
            static_paths,
            sack_blocks: Vec::new(),
            ack_windows: Vec::new(),
            routes,
            ahead: [None; AHEAD],
            scenario: sc,
        };
        sim.arm_arrivals();
        sim
    }

    /// Captures the packets leaving link direction `dir` (link index * 2 + 0 for a→b, + 1 for
    /// b→a) into `out` as pcap.
    pub fn attach_capture(
        &mut self,
        dir: usize,
        out: Box<dyn std::io::Write + Send>,
    ) -> std::io::Result<()> {
        let w = PcapWriter::new(out)?;
        self.capture_written += crate::net::pcap::HEADER_BYTES;
        self.dirs[dir].set_capture(self.captures.len());
        self.captures.push(w);
        Ok(())
    }

    /// Stops every capture before the bytes they write together would exceed `bytes` (0: no
    /// limit): the files end after their last whole record, valid pcap files up to
    /// [`Simulation::capture_stopped`].
    pub fn set_capture_limit(&mut self, bytes: u64) {
        self.capture_limit = bytes;
    }

    /// When the captures stopped at their limit (the first record left out), if they did.
    pub fn capture_stopped(&self) -> Option<SimTime> {
        self.capture_stopped
    }

    /// Bytes the captures have written so far.
    pub fn capture_bytes(&self) -> u64 {
        self.capture_written
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

    /// Runs every event up to and including time `until` (capped at the scenario duration),
    /// unless simulated time stalls ([`Simulation::stalled`]).
    pub fn run_until(&mut self, until: SimTime) {
        self.run_until_or(until, &mut || false);
    }

    /// [`Simulation::run_until`], asking `stop` every [`stall::CHECK_EVERY`] events whether to
    /// stop there: true when it reached `until`, false when `stop` stopped it (the next call
    /// goes on from the next event, in the same order) or simulated time stalled.
    pub fn run_until_or(&mut self, until: SimTime, stop: &mut dyn FnMut() -> bool) -> bool {
        if self.stalled.is_some() {
            return false;
        }
        let until = until.min(self.scenario.duration_ns);
        // Once a simulated second the links' lines shrink to what they hold, between slices
        // of events: in the loop's dispatch (the sample's handler) it cost 1 % more
        // instructions at 200 flows (cachegrind), the compiler laying the loop out anew. Not
        // at `until` itself: the memory read at the end of a run or a slice is then what the
        // lines needed since the last shrink, not less.
        while self.next_line_shrink < until {
            let t = self.next_line_shrink;
            if !self.run_events_until(t, stop) {
                return false;
            }
            self.shrink_lines();
        }
        self.run_events_until(until, stop)
    }

    /// Prefetching ahead of the event loop, in two stages: the packet and direction of the
    /// event [`AHEAD`] places after the next start loading (where the calendar's run shows it);
    /// for the next event, when they were asked for [`AHEAD`] events ago (`ahead`), its
    /// direction's line slots and where its packet goes next (the next direction, or at the end
    /// of its route its flow and the direction back), otherwise its packet and direction.
    /// Changes no result, only when memory is fetched.
    #[inline(always)]
    fn prefetch_ahead(&mut self) {
        if let Some(EventKind::Arrive(d, id)) = self.q.peek_kind() {
            if self.ahead.contains(&Some((d, id))) {
                let (d, id) = (d as usize, id as usize);
                if let (Some(dir), Some(p)) = (self.dirs.get(d), self.arena.peek(id)) {
                    dir.prefetch_line_front();
                    match self.routes.get(p.at as usize + 1) {
                        Some(&next) if next != ROUTE_END => {
                            LinkDir::prefetch_hot(self.dirs.as_ptr().wrapping_add(next as usize))
                        }
                        _ => {
                            // The end of the route: the flow's state, and the direction back
                            // over the same link, which the reply (an ACK, or the data an
                            // ACK releases) takes where routes are symmetric.
                            prefetch_flow(self.flows.as_ptr().wrapping_add(p.flow as usize));
                            LinkDir::prefetch_hot(self.dirs.as_ptr().wrapping_add(d ^ 1));
                        }
                    }
                }
            } else {
                self.arena.prefetch(id as usize);
                LinkDir::prefetch_hot(self.dirs.as_ptr().wrapping_add(d as usize));
            }
        }
        let slot = self.events as usize % AHEAD;
        self.ahead[slot] = None;
        if let Some(EventKind::Arrive(d, id)) = self.q.peek_kind_after(AHEAD) {
            self.arena.prefetch(id as usize);
            LinkDir::prefetch_hot(self.dirs.as_ptr().wrapping_add(d as usize));
            self.ahead[slot] = Some((d, id));
        }
    }

    /// The event loop: every event up to and including time `until`; false when the
    /// checkpoint stopped it.
    fn run_events_until(&mut self, until: SimTime, stop: &mut dyn FnMut() -> bool) -> bool {
        while let Some(e) = self.q.pop_until(until) {
            self.events += 1;
            // With many pending events (thousands of flows), the next packet to arrive and its
            // link are cold: start loading them while this event is handled. (With few, they
            // are in cache and the look-ahead only costs instructions.)
            if self.q.is_large() {
                self.prefetch_ahead();
            }
            // A packet's arrival (98 % of the events at 200 flows) is handled outside
            // `dispatch`, whose frame (every other handler inlined) costs more to set up
            // than the arrival's own (cachegrind: 3 % of the run's instructions).
            // So is a paced sender's release (a fifth of the events beside a BBR flow: one
            // per segment it sends).
            match e.kind {
                EventKind::Arrive(d, _) => self.on_arrive(e.time, d as usize),
                EventKind::Pace(f) => self.on_pace(e.time, f as usize),
                kind => self.dispatch(e.time, kind),
            }
            if self.events % stall::CHECK_EVERY == 0 && self.checkpoint(e.kind, stop) {
                return false;
            }
        }
        true
    }

    pub fn run(&mut self) {
        self.run_until(self.scenario.duration_ns);
    }

    fn dispatch(&mut self, now: SimTime, kind: EventKind) {
        match kind {
            EventKind::Arrive(d, _) => self.on_arrive(now, d as usize),
            EventKind::TxDone(d) => self.on_tx_done(now, d as usize),
            EventKind::FlowStart(f) => self.on_flow_start(now, f as usize),
            EventKind::FlowStop(f) => self.on_flow_stop(f as usize),
            EventKind::UdpSend(f) => self.on_udp_send(now, f as usize),
            EventKind::UdpToggle(f) => self.on_udp_toggle(now, f as usize),
            EventKind::Rto(f) => self.on_rto(now, f as usize),
            EventKind::Pace(f) => self.on_pace(now, f as usize),
            EventKind::DelAck(f, g) => self.on_delack(now, f as usize, g),
            EventKind::Timer(c) => self.on_timer(now, c as usize),
            EventKind::Signal(t, bits) => self.on_signal(t as usize, bits),
            EventKind::Sample => self.on_sample(now),
            EventKind::MeasureStart => self.on_measure_start(),
            EventKind::MeasureEnd => self.on_measure_end(),
            EventKind::FlowArrival(p) => self.on_flow_arrival(now, p as usize),
        }
    }
}

/// Both directions of every link, in order (link index * 2 + 0 for a→b, + 1 for b→a).
fn build_dirs(sc: &Scenario, seed: u64) -> Vec<LinkDir> {
    let mut dirs = Vec::with_capacity(sc.links.len() * 2);
    for (i, l) in sc.links.iter().enumerate() {
        for (d, (from, to, qc)) in [
            (l.a_idx, l.b_idx, &l.queue_ab),
            (l.b_idx, l.a_idx, &l.queue_ba),
        ]
        .into_iter()
        .enumerate()
        {
            let dir_id = (i * 2 + d) as u64;
            let mut dir = LinkDir::new(
                i,
                from,
                to,
                l.bandwidth_bps,
                l.delay_ns,
                qc.limit(),
                build_aqm(qc, l.bandwidth_bps),
                SimRng::derive(seed, stream::QUEUE | dir_id),
                (sc.measurement.start_ns, sc.measurement.end_ns),
            );
            dir.set_held(build_qdisc(qc, l.bandwidth_bps, seed, dir_id));
            dir.set_jitter(
                l.jitter_ns,
                SimRng::derive(seed, stream::LINK_JITTER | dir_id),
            );
            dirs.push(dir);
        }
    }
    dirs
}

/// Flow number `f` on its (forward, reverse) route: its start time (drawn from its own stream
/// when random) and endpoint.
fn build_flow(fc: &FlowConfig, f: usize, (fwd_at, rev_at): (u32, u32), seed: u64) -> Flow {
    let mut start_rng = SimRng::derive(seed, stream::FLOW_START | f as u64);
    let start = if fc.start_max_ns > fc.start_ns {
        fc.start_ns + (start_rng.uniform() * (fc.start_max_ns - fc.start_ns) as f64) as u64
    } else {
        fc.start_ns
    };
    let ep = match (&fc.tcp, &fc.source) {
        (Some(t), _) => Endpoint::Tcp {
            sender: Sender::new(t, start_rng.uniform(), fc.packet_size_bytes),
            sink: sink_for(t),
            rto_scheduled: None,
            delack_gen: 0,
            delack_interval: t.delack_interval_ns,
            delack_queued: false,
            delack_due: (0, 0, 0),
            ack_size: t.ack_size_bytes,
            ecn: t.ecn,
        },
        (None, Some(source)) => Endpoint::Udp {
            src: UdpSource {
                gen: source.build(),
                size: fc.packet_size_bytes,
                on: false,
                seq: 0,
                active: false,
                rng: SimRng::derive(seed, stream::FLOW_TRAFFIC | f as u64),
                sizes: fc.packet_sizes.clone().map(|dist| PacketSizes {
                    dist,
                    rng: SimRng::derive(seed, stream::PACKET_SIZES | f as u64),
                }),
                trace: source.rows(),
                next_row: 0,
            },
            send_pending: false,
        },
        (None, None) => unreachable!("validated: a flow is TCP or a source"),
    };
    Flow {
        src: fc.src_idx,
        dst: fc.dst_idx,
        size: fc.packet_size_bytes,
        dscp: fc.dscp,
        start,
        ep,
        stats: FlowStats::default(),
        delay: DelayStats::default(),
        transfer: None,
        ts_recent_data: 0,
        ts_recent_ack: 0,
        fwd_at,
        rev_at,
    }
}

/// Bytes of an arrival process's connection slot when built (its flow, TCP sender and
/// receiver, and its share of the per-flow tables), before its windows grow.
pub fn slot_bytes(a: &crate::scenario::ArrivalConfig) -> usize {
    let f = slot_flow(a, (0, 0));
    let heap = match &f.ep {
        Endpoint::Tcp { sender, sink, .. } => sender.heap_bytes() + sink.heap_bytes(),
        Endpoint::Udp { .. } => 0,
    };
    std::mem::size_of::<Flow>() + heap + 3 * 8
}

/// A connection slot of arrival process `a` (idle until an arrival takes it).
fn slot_flow(a: &crate::scenario::ArrivalConfig, (fwd_at, rev_at): (u32, u32)) -> Flow {
    Flow {
        src: a.src_idx,
        dst: a.dst_idx,
        size: a.packet_size_bytes,
        dscp: a.dscp,
        start: 0,
        ep: Endpoint::Tcp {
            sender: Sender::new(&a.tcp, 0.0, a.packet_size_bytes),
            sink: sink_for(&a.tcp),
            rto_scheduled: None,
            delack_gen: 0,
            delack_interval: a.tcp.delack_interval_ns,
            delack_queued: false,
            delack_due: (0, 0, 0),
            ack_size: a.tcp.ack_size_bytes,
            ecn: a.tcp.ecn,
        },
        stats: FlowStats::default(),
        delay: DelayStats::default(),
        transfer: None,
        ts_recent_data: 0,
        ts_recent_ack: 0,
        fwd_at,
        rev_at,
    }
}

/// The queues that follow a conditioner's signal (DWRED a TWAM's window): (conditioner, direction, physical queue
/// of a multi-queue link, signalling delay), in link and direction order.
fn signal_routes(
    sc: &Scenario,
    conds: &[Conditioner],
) -> Vec<(usize, usize, Option<usize>, SimTime)> {
    let mut targets = Vec::new();
    for (li, l) in sc.links.iter().enumerate() {
        for (d, qc) in [(li * 2, &l.queue_ab), (li * 2 + 1, &l.queue_ba)] {
            for (sub, x) in qc.with_subqueues() {
                if let Some((signal, delay)) = x.discipline.signal_source() {
                    let ci = conds
                        .iter()
                        .position(|c| c.cfg.name == signal)
                        .expect("validated signal");
                    targets.push((ci, d, sub, delay));
                }
            }
        }
    }
    targets
}

#[cfg(test)]
mod queue_tests;
#[cfg(test)]
mod transfer_tests;
#[cfg(test)]
mod twam_tests;
