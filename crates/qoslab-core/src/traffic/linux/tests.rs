//! Scripted loss and ACK sequences for the linux flavour's sender: each test checks a
//! closed form or an RFC's rule, and each fails when its mechanism is switched off (the
//! test switches are fields that only tests set: `rate.cum_only`, `no_prr`,
//! `rack.disabled`).
//!
//! [`Net`] is a one-flow network: a FIFO bottleneck of one segment per `gap` with a buffer
//! limit, `delay` each way, Linux's receiver ([`TcpSink`] in the linux flavour, here without
//! delayed ACKs) and the sender's timers; segments listed in `drop_once` are lost on their
//! first transmission.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};

use super::cc::CaState;
use super::rate::RateSample;
use super::sender::{PACING_STALLS, RACK_MARKS, SPURIOUS_UNDOS, TLP_PROBES};
use super::{Io, Linux, Timer};
use crate::traffic::cc::TcpVariant;
use crate::traffic::pacing::Pacer;
use crate::traffic::sink::{SackBlocks, SinkAction, TcpSink};
use crate::traffic::tcp::{Flavour, SendBuf, TcpConfig, TcpStats};
use crate::units::SimTime;

const MS: SimTime = 1_000_000;

fn config(variant: TcpVariant, iw: u32, window: u32) -> TcpConfig {
    let mut c = TcpConfig {
        flavour: Flavour::Linux,
        variant,
        ack_size_bytes: 40,
        window_pkts: window,
        initial_window_pkts: iw,
        min_rto_ns: 200 * MS,
        max_rto_ns: 120_000 * MS,
        initial_rto_ns: 1_000 * MS,
        tick_ns: MS,
        delayed_ack: false,
        delack_interval_ns: 40 * MS,
        max_burst: 0,
        dupack_threshold: 3,
        ecn: false,
        syn: false,
        pacing: false,
        sack: true,
        explicit: 0,
        cc: None,
        linux_cc: None,
        cc_tables: Default::default(),
    };
    c.explicit = u16::MAX;
    c
}

/// A sender and what it shares with its host.
struct Host {
    l: Linux,
    pacer: Pacer,
    stats: TcpStats,
    out: SendBuf,
}

impl Host {
    fn new(cfg: &TcpConfig) -> Self {
        Host {
            l: Linux::new(cfg, 0.5, 1500),
            pacer: Pacer::new(cfg.pacing || cfg.variant == TcpVariant::Bbr),
            stats: TcpStats::default(),
            out: SendBuf::new(),
        }
    }

    fn run(&mut self, f: impl FnOnce(&mut Linux, &mut Io)) -> SendBuf {
        let mut io = Io {
            pacer: &mut self.pacer,
            stats: &mut self.stats,
            out: &mut self.out,
        };
        f(&mut self.l, &mut io);
        std::mem::take(&mut self.out)
    }

    fn ack(&mut self, now: SimTime, ackno: i64, blocks: SackBlocks) -> SendBuf {
        self.run(|l, io| l.on_ack(now, ackno, false, &blocks, io))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// A data segment reaches the receiver.
    Arrive(u64),
    /// An ACK reaches the sender.
    Ack(i64, SackBlocks),
    Pace,
}

struct Net {
    h: Host,
    sink: TcpSink,
    now: SimTime,
    gap: SimTime,
    delay: SimTime,
    limit: usize,
    free_at: SimTime,
    /// Departure times of the segments in the bottleneck queue.
    queue: std::collections::VecDeque<SimTime>,
    events: BinaryHeap<Reverse<(SimTime, u64, Ev)>>,
    n: u64,
    drop_once: BTreeSet<u64>,
    drops: u64,
    samples: Vec<RateSample>,
}

impl Net {
    fn new(cfg: &TcpConfig, gap: SimTime, delay: SimTime, limit: usize) -> Self {
        Net {
            h: Host::new(cfg),
            sink: TcpSink::linux(cfg),
            now: 0,
            gap,
            delay,
            limit,
            free_at: 0,
            queue: Default::default(),
            events: BinaryHeap::new(),
            n: 0,
            drop_once: BTreeSet::new(),
            drops: 0,
            samples: Vec::new(),
        }
    }

    fn push(&mut self, at: SimTime, ev: Ev) {
        self.n += 1;
        self.events.push(Reverse((at, self.n, ev)));
    }

    fn send(&mut self, buf: SendBuf) {
        for (seq, _, _) in buf {
            while self.queue.front().is_some_and(|&d| d <= self.now) {
                self.queue.pop_front();
            }
            if self.drop_once.remove(&seq) || self.queue.len() >= self.limit {
                self.drops += 1;
                continue;
            }
            let depart = self.now.max(self.free_at) + self.gap;
            self.free_at = depart;
            self.queue.push_back(depart);
            self.push(depart + self.delay, Ev::Arrive(seq));
        }
        if let Some(at) = self.h.pacer.request() {
            self.push(at, Ev::Pace);
        }
    }

    fn start(&mut self) {
        let buf = self.h.run(|l, io| l.start(0, i64::MAX, io));
        self.send(buf);
    }

    /// Runs until `until`, firing the sender's timer when it comes first.
    fn run(&mut self, until: SimTime) {
        loop {
            let next_ev = self.events.peek().map(|Reverse((t, _, _))| *t);
            let dl = self.h.l.deadline;
            let t = match (next_ev, dl) {
                (Some(e), Some(d)) if d < e => d,
                (None, Some(d)) => d,
                (Some(e), _) => e,
                (None, None) => break,
            };
            if t > until {
                break;
            }
            self.now = t;
            if dl == Some(t) && next_ev.is_none_or(|e| t < e) {
                let buf = self.h.run(|l, io| l.on_timeout(t, io));
                self.send(buf);
                continue;
            }
            let Some(Reverse((_, _, ev))) = self.events.pop() else {
                break;
            };
            match ev {
                Ev::Arrive(seq) => {
                    let SinkAction::AckNow = self.sink.on_data(seq) else {
                        panic!("no delayed ACKs in these tests");
                    };
                    let blocks = self.sink.sack_blocks().unwrap_or([(0, 0); 3]);
                    let ackno = self.sink.ackno();
                    self.push(t + self.delay, Ev::Ack(ackno, blocks));
                }
                Ev::Ack(ackno, blocks) => {
                    let buf = self.h.ack(t, ackno, blocks);
                    self.samples.push(self.h.l.last_rs);
                    self.send(buf);
                }
                Ev::Pace => {
                    if self.h.pacer.on_event(t) {
                        let buf = self.h.run(|l, io| l.on_pace(t, io));
                        self.send(buf);
                    }
                }
            }
        }
    }
}

/// A bulk Reno flow through a 1000-segment/s bottleneck (RTT 20 ms + queueing, window 60)
/// loses segments 100..=104 once; returns the largest delivery-rate sample, segments/s.
fn max_rate_after_a_hole(cum_only: bool) -> (f64, u64) {
    let cfg = config(TcpVariant::Reno, 10, 60);
    let mut net = Net::new(&cfg, MS, 10 * MS, 1000);
    net.h.l.rate_cum_only = cum_only;
    net.drop_once.extend(100..=104);
    net.start();
    net.run(3_000 * MS);
    assert!(
        net.h.l.sb.una > 1000,
        "the flow made progress: {}",
        net.h.l.sb.una
    );
    let max = net
        .samples
        .iter()
        .filter_map(|s| s.rate_pps())
        .fold(0.0, f64::max);
    (max, net.h.stats.timeouts)
}

#[test]
fn delivery_rate_never_exceeds_the_bottleneck_when_a_hole_closes() {
    // tcp_rate.c: SACKed segments count as delivered when SACKed, so the ACK that closes
    // the hole carries one segment's worth, not the hundred behind it.
    let (max, timeouts) = max_rate_after_a_hole(false);
    assert_eq!(timeouts, 0);
    assert!(max <= 1000.0 * 1.0001, "max sample {max} segments/s > 1000");
    assert!(max > 900.0, "the samples reach the bottleneck rate: {max}");
    // Counting only at the cumulative ACK (the ns-2 flavour's sampler) overshoots (by 13 %
    // here: the interval's max(send, ACK phase) limits it).
    let (max_cum, _) = max_rate_after_a_hole(true);
    assert!(max_cum > 1100.0, "cumulative-only delivery gives {max_cum}");
}

/// Twenty segments out, segment 0 lost, then one SACK per ACK: the PRR closed form holds
/// while pipe > ssthresh. Returns whether it held at every ACK.
fn prr_closed_form_holds(no_prr: bool) -> bool {
    let cfg = config(TcpVariant::Reno, 20, 1000);
    let mut h = Host::new(&cfg);
    h.l.no_prr = no_prr;
    let sent = h.run(|l, io| l.start(0, i64::MAX, io));
    assert_eq!(sent.len(), 20);
    let mut held = true;
    let mut in_recovery = 0;
    for k in 1..20u64 {
        let now = 50 * MS + k * MS;
        h.ack(now, -1, [(1, k + 1), (0, 0), (0, 0)]);
        if h.l.conn.ca_state != CaState::Recovery {
            continue;
        }
        in_recovery += 1;
        // RFC 6937 with Linux's RecoverFS = prior_cwnd: prr_out = ceil(ssthresh ·
        // prr_delivered / prior_cwnd) while pipe exceeds ssthresh.
        if h.l.sb.in_flight() > h.l.conn.ssthresh {
            let (ss, pd, pc) = (
                h.l.conn.ssthresh as u64,
                h.l.prr_delivered as u64,
                h.l.conn.prior_cwnd as u64,
            );
            held &= h.l.prr_out as u64 == (ss * pd).div_ceil(pc);
        }
    }
    assert!(in_recovery >= 10, "recovery entered on the third SACK");
    assert_eq!(h.l.conn.ssthresh, 10);
    held
}

#[test]
fn prr_sends_in_proportion_to_deliveries() {
    assert!(prr_closed_form_holds(false));
    assert!(
        !prr_closed_form_holds(true),
        "without PRR the closed form must fail"
    );
}

/// Ten segments out; segment 0 lost and only segment 1 SACKed (below DupThresh): RACK waits
/// for RACK.rtt + reo_wnd (min_rtt/4) after segment 0 was sent, then marks it lost.
fn rack_after_reo_wnd(disabled: bool) -> (Timer, SimTime, u64, CaState, u64) {
    let cfg = config(TcpVariant::Reno, 10, 1000);
    let mut h = Host::new(&cfg);
    h.l.rack.disabled = disabled;
    h.l.tlp_disabled = true;
    h.run(|l, io| l.start(0, i64::MAX, io));
    // Segment 1's SACK arrives at 40 ms: RTT sample 40 ms, reo_wnd = 10 ms.
    h.ack(40 * MS, -1, [(1, 2), (0, 0), (0, 0)]);
    assert_eq!(h.l.sb.lost_out, 0, "one SACK is not enough at once");
    let (timer, at) = (h.l.timer, h.l.deadline.unwrap());
    h.run(|l, io| l.on_timeout(at, io));
    let marks = h.l.counts.get(&RACK_MARKS);
    (timer, at, h.stats.retransmits, h.l.conn.ca_state, marks)
}

#[test]
fn rack_marks_lost_after_the_reordering_window() {
    let (timer, at, rtx, state, marks) = rack_after_reo_wnd(false);
    assert_eq!(timer, Timer::Reo);
    // Sent at 0: lost at RACK.rtt (40 ms) + reo_wnd (10 ms), plus the 2 ms timer slack.
    assert_eq!(at, 52 * MS);
    assert_eq!((rtx, state), (1, CaState::Recovery));
    assert_eq!(marks, 1, "RACK marked segment 0");
    let (timer, at, rtx, _, marks) = rack_after_reo_wnd(true);
    assert_eq!(timer, Timer::Rto, "without RACK only the RTO is left");
    assert!(at >= 200 * MS);
    assert_eq!(rtx, 1, "the RTO retransmits");
    assert_eq!(marks, 0, "the timeout's marking is not RACK's");
}

#[test]
fn rto_is_srtt_plus_at_least_the_minimum() {
    // tcp_rtt_estimator: rttvar never falls below rto_min, so RTO = srtt + 200 ms for
    // steady 10 ms samples, and 1 s before any sample.
    let mut r = super::rtt::RttEstimator::new(1_000 * MS, 200 * MS, 120_000 * MS);
    assert_eq!(r.rto_ns(0), 1_000 * MS);
    for i in 0..50 {
        r.sample(10 * MS, i, i + 10);
    }
    assert_eq!(r.srtt_ns(), 10 * MS);
    assert_eq!(r.rto_ns(0), 210 * MS);
    assert_eq!(r.rto_ns(2), 840 * MS, "two backoffs double it twice");
}

#[test]
fn tail_loss_probe_repairs_a_lost_tail_without_a_timeout() {
    // The last two of 30 segments are lost: no SACK can reveal them, the probe does
    // (RFC 8985 §7), two RTTs after the last ACK, not an RTO later.
    let cfg = config(TcpVariant::Reno, 10, 1000);
    let mut net = Net::new(&cfg, MS, 10 * MS, 1000);
    net.drop_once.extend([28, 29]);
    let buf = net.h.run(|l, io| l.start(0, 30, io));
    net.send(buf);
    net.run(5_000 * MS);
    assert_eq!(net.h.l.sb.una, 30, "everything delivered");
    assert_eq!(net.h.stats.timeouts, 0);
    assert!(net.h.l.counts.get(&TLP_PROBES) >= 1);
}

/// Ten segments out; three SACKs (1..4) mark segment 0 lost and it is retransmitted (Recovery,
/// ssthresh 5); the original then arrives late (cumulative ACK of all ten) and, when `dsack`,
/// the retransmission's duplicate is reported by a D-SACK. Returns the undos counted and
/// ssthresh.
fn undo_after_a_reordered_segment(dsack: bool) -> (u64, u32) {
    let cfg = config(TcpVariant::Reno, 10, 1000);
    let mut h = Host::new(&cfg);
    h.l.tlp_disabled = true;
    h.run(|l, io| l.start(0, 10, io));
    let rtx = h.ack(40 * MS, -1, [(1, 4), (0, 0), (0, 0)]);
    assert_eq!(
        rtx.first(),
        Some(&(0, true, false)),
        "segment 0 retransmitted"
    );
    assert_eq!(
        (h.l.conn.ca_state, h.l.conn.ssthresh),
        (CaState::Recovery, 5)
    );
    h.ack(41 * MS, 9, [(0, 0); 3]);
    assert_eq!(h.l.conn.ca_state, CaState::Open);
    assert_eq!(
        h.l.counts.get(&SPURIOUS_UNDOS),
        0,
        "no undo before the D-SACK"
    );
    if dsack {
        h.ack(80 * MS, 9, [(0, 1), (0, 0), (0, 0)]);
    }
    (h.l.counts.get(&SPURIOUS_UNDOS), h.l.conn.ssthresh)
}

#[test]
fn a_dsack_of_every_retransmission_undoes_the_reduction_once() {
    // tcp_try_undo_dsack: undo_retrans reaches 0, tcp_undo_cwnd_reduction restores the
    // prior ssthresh (infinite: still in slow start) and is counted once.
    let (undos, ssthresh) = undo_after_a_reordered_segment(true);
    assert_eq!(undos, 1);
    assert!(ssthresh > 5, "the reduction undone: ssthresh {ssthresh}");
    // Without the D-SACK the retransmission may have been needed: nothing is undone.
    assert_eq!(undo_after_a_reordered_segment(false), (0, 5));
}

#[test]
fn a_pacing_wait_is_counted_once_until_the_next_transmission() {
    // Reno with pacing: the first window leaves unpaced (no srtt yet); the ACK of segment 0
    // (RTT 10 ms) sets the pacing rate, so of the two segments the window then allows the
    // second waits for the earliest departure time (tcp_pacing_check).
    let cfg = TcpConfig {
        pacing: true,
        ..config(TcpVariant::Reno, 10, 1000)
    };
    let mut h = Host::new(&cfg);
    assert_eq!(h.run(|l, io| l.start(0, i64::MAX, io)).len(), 10);
    assert_eq!(
        h.l.counts.get(&PACING_STALLS),
        0,
        "unpaced before an RTT sample"
    );
    assert_eq!(h.ack(10 * MS, 0, [(0, 0); 3]).len(), 1);
    assert_eq!(h.l.counts.get(&PACING_STALLS), 1);
    // Refused again in the same wait: not a new stall.
    assert!(h.run(|l, io| l.on_pace(10 * MS, io)).is_empty());
    assert_eq!(h.l.counts.get(&PACING_STALLS), 1, "one count a wait");
    // The pacer releases the segment; the window is then full: no wait.
    let next = h.pacer.next;
    assert!(next > 10 * MS);
    assert_eq!(h.run(|l, io| l.on_pace(next, io)).len(), 1);
    assert_eq!(h.l.counts.get(&PACING_STALLS), 1);
    // The next ACK, at the next departure time, opens the window by two again: a new wait
    // after one segment.
    let next = h.pacer.next;
    assert_eq!(h.ack(next, 1, [(0, 0); 3]).len(), 1);
    assert_eq!(h.l.counts.get(&PACING_STALLS), 2);
    // Unpaced, the same ACKs send at once and never stall.
    let mut u = Host::new(&config(TcpVariant::Reno, 10, 1000));
    u.run(|l, io| l.start(0, i64::MAX, io));
    assert_eq!(u.ack(10 * MS, 0, [(0, 0); 3]).len(), 2);
    assert_eq!(u.l.counts.get(&PACING_STALLS), 0);
}

#[test]
fn cubic_takes_its_delay_sample_from_a_sack_only_ack() {
    // tcp_clean_rtx_queue calls pkts_acked on every ACK with the RTT of the newest
    // (S)ACKed segment: a duplicate ACK SACKing segment 5 after 30 ms sets delay_min.
    let cfg = config(TcpVariant::Cubic, 10, 1000);
    let mut h = Host::new(&cfg);
    let first = h.run(|l, io| l.start(0, i64::MAX, io));
    assert_eq!(first.len(), 10);
    h.ack(30 * MS, -1, [(5, 6), (0, 0), (0, 0)]);
    assert_eq!(h.l.sb.una, 0, "nothing cumulatively acknowledged");
    let super::cc::LinuxCc::Cubic(cu) = &h.l.cc else {
        panic!("not cubic");
    };
    assert_eq!(cu.delay_min, 30 * MS);
}

#[test]
fn linux_receiver_quick_acks_then_delays_and_reports_dsack() {
    let cfg = {
        let mut c = config(TcpVariant::Reno, 10, 1000);
        c.delayed_ack = true;
        c
    };
    let mut s = TcpSink::linux(&cfg);
    for q in 0..16 {
        assert_eq!(s.on_data(q), SinkAction::AckNow, "quick ACK {q}");
    }
    assert_eq!(s.on_data(16), SinkAction::Delay);
    assert_eq!(
        s.on_data(17),
        SinkAction::AckNow,
        "every second full segment"
    );
    assert_eq!(s.on_data(19), SinkAction::AckNow, "out of order: at once");
    assert_eq!(s.sack_blocks().unwrap()[0], (19, 20));
    assert_eq!(s.on_data(5), SinkAction::AckNow, "a duplicate: at once");
    let b = s.sack_blocks().unwrap();
    assert_eq!((b[0], b[1]), ((5, 6), (19, 20)), "D-SACK first (RFC 2883)");
    assert_eq!(s.sack_blocks().unwrap()[0], (19, 20), "reported once");
}

#[test]
fn a_sack_block_less_the_last_acks_blocks_is_what_is_left_to_tag() {
    use super::scoreboard::uncovered;
    let pieces = |lo, hi, mut known: [(i64, i64); 3]| {
        known.sort_unstable();
        let (p, n) = uncovered(lo, hi, &known);
        p[..n].to_vec()
    };
    // nothing known: the whole block; a block grown by two segments: the two
    assert_eq!(pieces(10, 20, [(0, 0); 3]), vec![(10, 20)]);
    assert_eq!(pieces(10, 20, [(10, 18), (0, 0), (0, 0)]), vec![(18, 20)]);
    // holes between known ranges, given in any order, overlapping or past the block
    assert_eq!(
        pieces(10, 30, [(25, 40), (12, 15), (14, 20)]),
        vec![(10, 12), (20, 25)]
    );
    assert_eq!(pieces(10, 20, [(5, 25), (0, 0), (0, 0)]), vec![]);
    assert_eq!(pieces(10, 20, [(30, 40), (0, 5), (0, 0)]), vec![(10, 20)]);
}

#[test]
fn the_initial_window_is_at_most_the_window_clamp() {
    // tcp_init_cwnd: min(initial window, snd_cwnd_clamp).
    let h = Host::new(&config(TcpVariant::Bbr, 1 << 30, 20));
    assert_eq!((h.l.conn.cwnd, h.l.conn.cwnd_clamp), (20, 20));
    let h = Host::new(&config(TcpVariant::Cubic, 10, 20));
    assert_eq!(h.l.conn.cwnd, 10);
}

#[test]
fn the_window_an_ack_offers_limits_what_the_sender_sends() {
    // `tcp_snd_wnd_test`: a segment goes only when it fits below SND.UNA + SND.WND. Ten
    // segments (0-9) are out; the ACK of 0-1 offers 6 segments: SND.UNA is 2, the edge 8, and
    // nothing new may go (the window would allow four: the congestion window grew by two).
    // Offering 8, the next ACK (of 0-3, SND.UNA 4) releases segments 10 and 11 only.
    let cfg = config(TcpVariant::Cubic, 10, 10_000);
    let mut h = Host::new(&cfg);
    let first: Vec<u64> = h
        .run(|l, io| l.start(0, i64::MAX, io))
        .into_iter()
        .map(|s| s.0)
        .collect();
    assert_eq!(first, (0..10).collect::<Vec<_>>());
    h.l.set_send_window(1, 6);
    assert!(h.ack(10 * MS, 1, [(0, 0); 3]).into_iter().next().is_none());
    h.l.set_send_window(3, 8);
    let sent: Vec<u64> = h
        .ack(11 * MS, 3, [(0, 0); 3])
        .into_iter()
        .map(|s| s.0)
        .collect();
    assert_eq!(sent, [10, 11]);
    // the configured `window` stays the cap whatever is offered
    let mut h = Host::new(&config(TcpVariant::Cubic, 10, 4));
    h.l.set_send_window(0, 1_000);
    assert_eq!(h.run(|l, io| l.start(0, i64::MAX, io)).len(), 4);
}

#[test]
fn the_first_flight_fits_the_syn_acks_window_and_an_older_ack_moves_no_window() {
    // No handshake is modelled, but its window is: 65,535 bytes unscaled, 44 segments of 1,460,
    // bound an initial window of 100 until the first ACK.
    let mut h = Host::new(&config(TcpVariant::Cubic, 100, 10_000));
    assert_eq!(h.run(|l, io| l.start(0, i64::MAX, io)).len(), 44);
    // `tcp_may_update_window`: the ACK of 0-9 offers 20 (SND.UNA 10, the edge 30); a duplicate
    // offering less, or an ACK of older data, leaves the window where it is; a duplicate
    // offering more moves it
    h.l.set_send_window(9, 20);
    h.ack(50 * MS, 9, [(0, 0); 3]);
    h.l.set_send_window(9, 12);
    h.l.set_send_window(5, 2);
    assert_eq!(h.l.rwnd, 20);
    h.l.set_send_window(9, 24);
    assert_eq!(h.l.rwnd, 24);
}

/// Ten Reno segments out; SACKs of 1..4 put segment 0 in Recovery and retransmit it; then an
/// undo clears every LOST mark (`tcp_undo_cwnd_reduction` with `unmark_loss`) while that
/// retransmission is still in flight.
fn retransmitted_then_undone() -> Host {
    let cfg = config(TcpVariant::Reno, 10, 1000);
    let mut h = Host::new(&cfg);
    h.l.tlp_disabled = true;
    h.run(|l, io| l.start(0, 10, io));
    let rtx = h.ack(40 * MS, -1, [(1, 4), (0, 0), (0, 0)]);
    assert_eq!(rtx.first(), Some(&(0, true, false)));
    h.l.sb.unmark_lost();
    h
}

#[test]
fn after_an_undo_a_retransmission_in_flight_holds_the_next_until_more_are_lost() {
    // Segment 0 retransmitted in Recovery, then an undo clears every LOST mark
    // (`tcp_undo_cwnd_reduction` with `unmark_loss`): its retransmission is still in flight,
    // counted in retrans_out and no longer lost. Linux 6.x then (`tcp_xmit_retransmit_queue`)
    // sends no retransmission while retrans_out ≥ lost_out, and (`tcp_mark_skb_lost`) a
    // segment marked lost keeps its retransmission's mark, so marking segment 0 lost again
    // does not queue it a second time; marking it once more loses that retransmission.
    let mut h = retransmitted_then_undone();
    h.l.conn.cwnd = 100; // the window does not stop what follows
    let sent = |h: &mut Host| -> Vec<u64> {
        let buf = h.run(|l, io| l.xmit_retransmit_queue(41 * MS, io));
        buf.iter().map(|s| s.0).collect()
    };
    assert_eq!((h.l.sb.lost_out, h.l.sb.retrans_out), (0, 1));
    assert_eq!(h.l.sb.mark_lost(5), (true, false));
    assert_eq!(
        sent(&mut h),
        Vec::<u64>::new(),
        "retrans_out 1 ≥ lost_out 1"
    );
    assert_eq!(h.l.sb.mark_lost(0), (true, false), "lost, still in flight");
    assert_eq!((h.l.sb.lost_out, h.l.sb.retrans_out), (2, 1));
    assert_eq!(
        sent(&mut h),
        vec![5],
        "segment 0's retransmission is in flight"
    );
    assert_eq!(h.l.sb.mark_lost(0), (true, true), "its retransmission lost");
    assert_eq!(sent(&mut h), vec![0]);
}

#[test]
fn a_timeout_after_an_undo_counts_the_head_twice_until_nothing_is_outstanding() {
    // After an undo segment 0's retransmission is in flight, not marked lost. The timeout marks
    // it lost (keeping its retransmission) and sends it again: `tcp_retransmit_skb` counts it a
    // second time (Linux logs "retrans_out leaked"). With FASTRETRANS_DEBUG the count is reset
    // once nothing is outstanding; without that the leak would hold every later loss back.
    let mut h = retransmitted_then_undone();
    h.l.timer = Timer::Rto;
    let rto = h.run(|l, io| l.on_timeout(500 * MS, io));
    assert_eq!(rto.first(), Some(&(0, true, false)), "the head sent again");
    assert_eq!(h.l.sb.retrans_out, 2, "counted twice, as Linux does");
    h.ack(600 * MS, 9, [(0, 0); 3]);
    assert_eq!(h.l.sb.packets_out(), 0);
    assert_eq!(
        (h.l.sb.retrans_out, h.l.sb.lost_out, h.l.sb.sacked_out),
        (0, 0, 0)
    );
}

#[test]
fn rack_passes_by_a_segment_it_marked_lost_until_it_is_sent_again() {
    // tcp_rack_detect_loss takes a segment it marks lost off its send-ordered list: a segment
    // whose retransmission is in flight (after an undo) stays LOST and RETRANS and is not
    // marked again by the next walk; sent again, it is back on the list.
    use super::scoreboard::{walkable, LOST, RETRANS};
    let mut sb = super::scoreboard::Scoreboard::new();
    for _ in 0..4 {
        sb.push(0, Default::default());
    }
    let f = sb.segs()[1].flags();
    sb.set_flags(1, f | RETRANS);
    sb.retrans_out += 1;
    assert_eq!(sb.mark_lost(1), (true, false));
    assert!(
        walkable(sb.segs()[1].flags()),
        "RETRANS and LOST: RACK may look at it"
    );
    sb.off_rack(1);
    assert_eq!(sb.segs()[1].flags() & (LOST | RETRANS), LOST | RETRANS);
    assert!(!walkable(sb.segs()[1].flags()) && !sb.walks(1));
    sb.on_rack(1);
    assert!(walkable(sb.segs()[1].flags()) && sb.walks(1));
}
