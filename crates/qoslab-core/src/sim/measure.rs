//! Measurement: time-series samples and the results of a run, with the conservation checks.

use super::delay::DelaySummary;
use super::{ClassResult, Endpoint, FlowRecord, FlowStats, ProcessCounts, Simulation};
use crate::conditioner::Meter;
use crate::engine::EventKind;
use crate::net::link::LINE_SHRINK_EVERY_NS;
use crate::packet::PacketKind;
use crate::scenario::{MeasurementPoint, Scope};
use crate::traffic::sender::FlowCounts;
use crate::units::SimTime;

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
    /// The queue disciplines' gauges ([`crate::aqm::Aqm::gauges`]), one column per gauge name
    /// in order of first appearance, NaN in the rows of queues that do not publish it; empty
    /// when no queue of the run publishes any.
    pub q_gauges: Vec<(&'static str, Vec<f64>)>,
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

/// Memory the simulation holds, by part (allocated capacity, so high-water marks: vectors
/// and queues keep their capacity, except the links' lines, which give back most of what
/// they no longer hold once a simulated second), bytes. The scenario's own configuration is not
/// counted.
#[derive(Debug, Clone, Copy, Default)]
pub struct MemoryUse {
    /// The packet arena: one slot per packet alive at the high-water mark.
    pub packets: usize,
    /// Link directions: their state and queue disciplines, and their lines of packets
    /// (admitted, not yet arrived). A line's capacity is at most four times what it held at
    /// the last shrink (once a simulated second), or its longest queue since if that is more.
    pub links: usize,
    /// Flows: routes, counters, TCP senders and receivers.
    pub flows: usize,
    /// The event queue.
    pub events: usize,
    /// Conditioners and their meters.
    pub conditioners: usize,
    /// The time series recorded so far (grows with the number of samples).
    pub series: usize,
}

impl MemoryUse {
    /// Everything but the time series: the state that must not grow with simulated time.
    pub fn state(&self) -> usize {
        self.packets + self.links + self.flows + self.events + self.conditioners
    }
}

impl Series {
    /// Heap memory held by the columns, bytes.
    pub fn heap_bytes(&self) -> usize {
        fn b<T>(v: &Vec<T>) -> usize {
            v.capacity() * std::mem::size_of::<T>()
        }
        b(&self.q_time_ns)
            + b(&self.q_dir)
            + b(&self.q_sub)
            + b(&self.q_len_pkts)
            + b(&self.q_len_bytes)
            + b(&self.q_avg)
            + self.q_avg_prec.iter().map(b).sum::<usize>()
            + self.q_gauges.iter().map(|(_, v)| b(v)).sum::<usize>()
            + b(&self.f_time_ns)
            + b(&self.f_flow)
            + b(&self.f_throughput_bps)
            + b(&self.f_cwnd)
            + b(&self.f_ssthresh)
            + b(&self.m_time_ns)
            + b(&self.m_cond)
            + b(&self.m_flow)
            + b(&self.m_level)
            + b(&self.g_time_ns)
            + b(&self.g_cond)
            + b(&self.g_flow)
            + b(&self.g_name)
            + b(&self.g_value)
    }
}

impl Series {
    /// Gauge `name` of the queue row just pushed (the last of `q_time_ns`).
    fn q_gauge(&mut self, name: &'static str, value: f64) {
        let row = self.q_time_ns.len() - 1;
        let k = match self.q_gauges.iter().position(|(n, _)| *n == name) {
            Some(k) => k,
            None => {
                self.q_gauges.push((name, Vec::new()));
                self.q_gauges.len() - 1
            }
        };
        let col = &mut self.q_gauges[k].1;
        col.resize(row, f64::NAN);
        col.push(value);
    }

    /// Every gauge column as long as the queue rows (NaN where a queue did not publish it).
    fn pad_q_gauges(&mut self) {
        let rows = self.q_time_ns.len();
        for (_, col) in &mut self.q_gauges {
            col.resize(rows, f64::NAN);
        }
    }
}

impl Simulation {
    /// Packet-hops counted so far: departures from every link direction. Mid-run the count
    /// lags by the packets whose transmission ended on a lazy direction since it was last
    /// looked at (at most its line); [`Self::results`] brings it up to date.
    pub fn packet_hops(&self) -> u64 {
        self.dirs.iter().map(|l| l.stats.departures).sum()
    }

    /// Packets alive now: admitted to a link or being handled, not yet delivered or dropped.
    pub fn packets_alive(&self) -> usize {
        self.arena.len()
    }

    /// Memory held now, by part ([`MemoryUse`]).
    pub fn memory(&self) -> MemoryUse {
        use crate::net::link::{InLine, LinkDir};
        let links = self.dirs.capacity() * std::mem::size_of::<LinkDir>()
            + self
                .dirs
                .iter()
                .map(|d| {
                    d.line.capacity() * std::mem::size_of::<InLine>()
                        + d.held().map_or(0, |m| m.heap_bytes())
                })
                .sum::<usize>();
        let flows = self.flows.capacity() * std::mem::size_of::<super::Flow>()
            + self
                .flows
                .iter()
                .map(|f| {
                    f.stats.drops_at.capacity() * 16
                        + match &f.ep {
                            Endpoint::Tcp { sender, sink, .. } => {
                                sender.heap_bytes() + sink.heap_bytes()
                            }
                            Endpoint::Udp { .. } => 0,
                        }
                })
                .sum::<usize>()
            + self.cwnd_buf.capacity() * 8
            + self.path_rtts.capacity() * 8
            + self.routes.capacity() * 4
            + self.sack_blocks.capacity() * std::mem::size_of::<crate::traffic::sink::SackBlocks>()
            + self.ack_windows.capacity() * std::mem::size_of::<u32>();
        let conditioners = self
            .conds
            .iter()
            .map(|c| {
                std::mem::size_of_val(c)
                    + c.meters.capacity()
                        * std::mem::size_of::<Option<crate::conditioner::AnyMeter>>()
            })
            .sum::<usize>();
        MemoryUse {
            packets: self.arena.heap_bytes(),
            links,
            flows,
            events: self.q.heap_bytes(),
            conditioners,
            series: self.series.heap_bytes(),
        }
    }

    // --- measurement -----------------------------------------------------------------

    pub(super) fn on_sample(&mut self, now: SimTime) {
        for d in 0..self.dirs.len() {
            self.advance(now, d);
        }
        let s = &mut self.series;
        for (d, l) in self.dirs.iter().enumerate() {
            match l.held() {
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
                    crate::aqm::Aqm::gauges(&l.aqm, now, &mut |n, v| s.q_gauge(n, v));
                }
                Some(m) => {
                    for i in 0..m.queues() {
                        let q = m.sample(i);
                        s.q_time_ns.push(now);
                        s.q_dir.push(d as u32);
                        s.q_sub.push(i as u32);
                        s.q_len_pkts.push(q.len_pkts as u32);
                        s.q_len_bytes.push(q.len_bytes);
                        s.q_avg.push(q.average);
                        for (k, v) in q.averages.into_iter().enumerate() {
                            s.q_avg_prec[k].push(v);
                        }
                        m.gauges(i, now, &mut |n, v| s.q_gauge(n, v));
                    }
                }
            }
        }
        s.pad_q_gauges();
        let dt = (now - self.last_sample) as f64 / 1e9;
        let record_cwnd = self.scenario.measurement.cwnd;
        let declared = self.scenario.flows.len();
        let rate = |bytes: u64| {
            if dt > 0.0 {
                bytes as f64 * 8.0 / dt
            } else {
                0.0
            }
        };
        for (fi, f) in self.flows[..declared].iter_mut().enumerate() {
            s.f_time_ns.push(now);
            s.f_flow.push(fi as u32);
            s.f_throughput_bps.push(rate(f.stats.bin_bytes));
            f.stats.bin_bytes = 0;
            let (c, t) = match &f.ep {
                Endpoint::Tcp { sender, .. } if record_cwnd => sender.window(),
                _ => (f64::NAN, f64::NAN),
            };
            s.f_cwnd.push(c);
            s.f_ssthresh.push(t);
        }
        // An arrival process is one row: the throughput of all its connections.
        // Only the slots built so far (at most the most connections open at once).
        for (p, pr) in self.procs.iter().enumerate() {
            let mut bytes = 0u64;
            for &fi in &pr.slots {
                let st = &mut self.flows[fi as usize].stats;
                bytes += st.bin_bytes;
                st.bin_bytes = 0;
            }
            s.f_time_ns.push(now);
            s.f_flow.push((declared + p) as u32);
            s.f_throughput_bps.push(rate(bytes));
            s.f_cwnd.push(f64::NAN);
            s.f_ssthresh.push(f64::NAN);
        }
        for (ci, c) in self.conds.iter().enumerate() {
            let aggregate = c.cfg.scope == Scope::Aggregate;
            // Per-flow meters of the declared flows (an arrival process's connections come
            // and go; their meters are not sampled).
            let meters = if aggregate {
                &c.meters[..]
            } else {
                &c.meters[..declared]
            };
            for (slot, m) in meters.iter().enumerate() {
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

    /// Every link's line gives back the capacity it no longer needs
    /// ([`LINE_SHRINK_EVERY_NS`]); [`Simulation::run_until`] calls it between slices of
    /// events, outside the event loop. The next shrink is the first whole second at or after
    /// the next event: with no event in between the lines do not change, and a sparse run
    /// (a long duration, its flows ended) does not walk every direction every second.
    #[cold]
    #[inline(never)]
    pub(super) fn shrink_lines(&mut self) {
        for l in &mut self.dirs {
            l.shrink_line();
        }
        let next = self.next_line_shrink + LINE_SHRINK_EVERY_NS;
        let first_event = self.q.peek_time().unwrap_or(SimTime::MAX);
        self.next_line_shrink = next.max(
            first_event
                .div_ceil(LINE_SHRINK_EVERY_NS)
                .saturating_mul(LINE_SHRINK_EVERY_NS),
        );
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
        let (window_flows, window_links) = self.window_counts();
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
                let (cwnd, ssthresh, srtt, timeouts, fast_rtx, ecn_responses) = match &f.ep {
                    Endpoint::Tcp { sender, .. } => {
                        let ((cwnd, ssthresh), st) = (sender.window(), sender.stats());
                        let srtt = sender.srtt();
                        (
                            cwnd,
                            ssthresh,
                            srtt,
                            st.timeouts,
                            st.fast_retransmits,
                            st.ecn_responses,
                        )
                    }
                    Endpoint::Udp { .. } => (f64::NAN, f64::NAN, f64::NAN, 0, 0, 0),
                };
                let counts = match &f.ep {
                    Endpoint::Tcp { sender, .. } => sender.counts(),
                    Endpoint::Udp { .. } => FlowCounts::default(),
                };
                let window_bytes = if m.point == MeasurementPoint::Sender {
                    st.window_sent_bytes
                } else {
                    st.window_delivered_bytes
                };
                FlowResult {
                    delay: DelaySummary::of(&f.delay.sketch),
                    jitter_s: if f.delay.jitter.packets() < 2 {
                        f64::NAN
                    } else {
                        f.delay.jitter.jitter_ns() / 1e9
                    },
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
                    ecn_responses,
                    counts,
                    window: window_flows[i],
                    stats: st.clone(),
                }
            })
            .collect();
        let (flows, classes) = self.fold_processes(flows);
        let mut records = std::mem::take(&mut self.records);
        records.extend(self.unfinished_records());
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
                    window: window_links[d],
                    stats: st.clone(),
                }
            })
            .collect();
        let memory = self.memory();
        RunResults {
            flows,
            classes,
            records,
            processes: self.process_counts(),
            links,
            series: std::mem::take(&mut self.series),
            events: self.events,
            // Every packet-hop is one departure from a link direction (all brought up to date above).
            packet_hops: self.dirs.iter().map(|l| l.stats.departures).sum(),
            peak_packets_in_flight: self.arena.slots_used() as u64,
            memory,
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
    /// One-way delay of the data packets delivered in the measurement window.
    pub delay: DelaySummary,
    /// RFC 3550 interarrival jitter at the end of the run (NaN for an arrival process).
    pub jitter_s: f64,
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
    /// Window reductions in response to ECN-Echo.
    pub ecn_responses: u64,
    /// The counters its sender declares, over the whole run
    /// ([`crate::traffic::sender::counters`]).
    pub counts: FlowCounts,
    /// The event counters inside the measurement window.
    pub window: super::window::FlowCounters,
    pub stats: FlowStats,
}

#[derive(Debug, Clone)]
pub struct LinkResult {
    pub link: usize,
    pub direction: &'static str,
    pub utilization: f64,
    pub queued: u64,
    pub in_pipe: u64,
    /// The event counters inside the measurement window.
    pub window: super::window::LinkCounters,
    pub stats: crate::net::link::LinkStats,
}

#[derive(Debug, Clone)]
pub struct RunResults {
    /// The declared flows, then one row per arrival process (its connections together).
    pub flows: Vec<FlowResult>,
    /// Per DiffServ class (the codepoint the hosts set): the flows' delays together.
    pub classes: Vec<ClassResult>,
    /// Finite transfers: those finished since the last [`Simulation::take_records`], then
    /// those unfinished at the end (no `end_ns`).
    pub records: Vec<FlowRecord>,
    /// Per arrival process: arrivals, refusals, completions.
    pub processes: Vec<ProcessCounts>,
    pub links: Vec<LinkResult>,
    pub series: Series,
    pub events: u64,
    pub packet_hops: u64,
    /// The most packets alive at once (queued, being sent or propagating): the packet
    /// arena's high-water mark, for memory figures.
    pub peak_packets_in_flight: u64,
    /// Memory held at the end of the run (high-water marks), by part.
    pub memory: MemoryUse,
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
mod tests {
    use super::Series;

    fn row(s: &mut Series, t: u64) {
        s.q_time_ns.push(t);
    }

    fn col(s: &Series, name: &str) -> Vec<String> {
        let (_, c) = s.q_gauges.iter().find(|(n, _)| *n == name).expect(name);
        c.iter().map(|v| format!("{v}")).collect()
    }

    /// A gauge column is as long as the queue rows: NaN in the rows of queues that do not
    /// publish it, including the samples before its first value.
    #[test]
    fn gauge_columns_are_padded_with_nan() {
        let mut s = Series::default();
        // sample 1: three queues, none publishes
        for _ in 0..3 {
            row(&mut s, 0);
        }
        s.pad_q_gauges();
        assert!(s.q_gauges.is_empty());
        // sample 2: the second queue publishes p_m, the third x
        row(&mut s, 1);
        row(&mut s, 1);
        s.q_gauge("p_m", 0.25);
        row(&mut s, 1);
        s.q_gauge("x", 7.0);
        s.pad_q_gauges();
        assert_eq!(col(&s, "p_m"), ["NaN", "NaN", "NaN", "NaN", "0.25", "NaN"]);
        assert_eq!(col(&s, "x"), ["NaN", "NaN", "NaN", "NaN", "NaN", "7"]);
        // sample 3: only the first queue publishes p_m
        row(&mut s, 2);
        s.q_gauge("p_m", 0.5);
        row(&mut s, 2);
        row(&mut s, 2);
        s.pad_q_gauges();
        assert_eq!(col(&s, "p_m")[6..], ["0.5", "NaN", "NaN"]);
        assert_eq!(col(&s, "x").len(), 9);
        assert_eq!(
            s.q_gauges.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
            ["p_m", "x"]
        );
    }
}
