//! Unit tests of the TCP sender state machine against ns-2.35's Reno/NewReno
//! (docs/ns2-behaviour.md §4), driven by a scripted network without the engine.
//!
//! The harness plays the network and a TCPSink (§6.1): the test decides which segments reach
//! the receiver, and every arrival is answered at once by a cumulative ACK (the highest
//! in-order segment held, -1 if none) fed back to the sender. Time only moves when a test says
//! so, in steps of one round-trip time `RTT`, and moving it past an armed retransmission
//! deadline fails the test: a timeout happens only where a test calls `timeout()`.
//!
//! Expected values are computed by hand from the doc; "Rn" in comments is the n-th round
//! trip (time n·RTT). All senders use boot_phase 0.5 (tick phase 5 ms) unless noted, so an
//! RTT sample of k·10 ms + 5 ms phase never sits on a tick boundary.

use super::{SendBuf, TcpSender};
use crate::scenario::TcpConfig;
use crate::units::SimTime;
use std::collections::BTreeSet;

const MS: SimTime = 1_000_000;
/// Round-trip time of the scripted network.
const RTT: SimTime = 50 * MS;

/// ns-2 defaults (§1) except a large advertised window; `syn` true.
fn config(variant: &str) -> TcpConfig {
    TcpConfig {
        variant: variant.into(),
        ack_size_bytes: 40,
        window_pkts: 1000,
        initial_window_pkts: 2,
        min_rto_ns: 200 * MS,
        max_rto_ns: 60_000 * MS,
        initial_rto_ns: 3_000 * MS,
        tick_ns: 10 * MS,
        delayed_ack: false,
        delack_interval_ns: 100 * MS,
        max_burst: 0,
        dupack_threshold: 3,
        ecn: false,
        syn: true,
    }
}

/// What a TCPSink acknowledges: the highest n with 0..=n all delivered, -1 if none.
fn cum_ack(delivered: &BTreeSet<u64>) -> i64 {
    let mut ack = -1;
    while delivered.contains(&((ack + 1) as u64)) {
        ack += 1;
    }
    ack
}

/// New (first) transmissions of `seqs`.
fn new(seqs: impl IntoIterator<Item = u64>) -> SendBuf {
    seqs.into_iter().map(|s| (s, false)).collect()
}

/// A retransmission of `seq`.
fn rtx(seq: u64) -> SendBuf {
    vec![(seq, true)]
}

fn assert_close(got: f64, want: f64) {
    assert!((got - want).abs() < 1e-9, "got {got}, want {want}");
}

struct Net {
    tcp: TcpSender,
    now: SimTime,
    delivered: BTreeSet<u64>,
    /// Every segment the sender emitted, in order: (seqno, is a retransmission).
    log: SendBuf,
}

impl Net {
    fn new(cfg: &TcpConfig) -> Net {
        Net::with_phase(cfg, 0.5)
    }

    fn with_phase(cfg: &TcpConfig, boot_phase: f64) -> Net {
        Net {
            tcp: TcpSender::new(cfg, boot_phase),
            now: 0,
            delivered: BTreeSet::new(),
            log: SendBuf::new(),
        }
    }

    fn start(&mut self) -> SendBuf {
        let mut out = SendBuf::new();
        self.tcp.start(self.now, &mut out);
        self.log.extend(&out);
        out
    }

    /// Advances the clock; the retransmission timer must not expire on the way.
    fn wait(&mut self, dt: SimTime) {
        self.now += dt;
        if let Some(d) = self.tcp.rtx_deadline {
            assert!(
                d > self.now,
                "RTO at {d} ns would fire before {} ns",
                self.now
            );
        }
    }

    /// Segment `seq` reaches the receiver; its cumulative ACK goes back to the sender.
    /// Returns what the sender emitted in response.
    fn deliver(&mut self, seq: u64) -> SendBuf {
        self.delivered.insert(seq);
        let mut out = SendBuf::new();
        self.tcp
            .on_ack(self.now, cum_ack(&self.delivered), &mut out);
        self.log.extend(&out);
        out
    }

    /// `deliver` for each segment in order; everything emitted, concatenated.
    fn deliver_all(&mut self, seqs: impl IntoIterator<Item = u64>) -> SendBuf {
        let mut all = SendBuf::new();
        for s in seqs {
            all.extend(self.deliver(s));
        }
        all
    }

    /// The retransmission timer fires at its deadline.
    fn timeout(&mut self) -> SendBuf {
        self.now = self
            .tcp
            .rtx_deadline
            .expect("no retransmission timer armed");
        let mut out = SendBuf::new();
        self.tcp.on_timeout(self.now, &mut out);
        self.log.extend(&out);
        out
    }

    /// Sequence numbers of all retransmissions so far.
    fn retransmitted(&self) -> Vec<u64> {
        self.log.iter().filter(|s| s.1).map(|s| s.0).collect()
    }
}

/// A sender in congestion avoidance with cwnd exactly 16 and 16 segments (15..=30) in flight.
///
/// ssthresh is set to 16 before the start (the initial ssthresh is window_pkts = 1000; 16
/// stands for a small ssthresh left by an earlier loss). SYN at 0; each round delivers what the
/// previous one sent, in order, and every new ACK below ssthresh adds 1 (§4.4):
///   R1: ack 0 (SYN) → cwnd = initial window 2 → sends 1, 2
///   R2: acks 1, 2 → cwnd 3, 4 → sends 3..=6
///   R3: acks 3..=6 → cwnd 5..=8 → sends 7..=14
///   R4: acks 7..=14 → cwnd 9..=16 → sends 15..=30 (two per ACK).
fn in_congestion_avoidance(variant: &str) -> Net {
    let mut net = Net::new(&config(variant));
    net.tcp.ssthresh = 16.0;
    assert_eq!(net.start(), new([0]));
    let mut flight = vec![0];
    for _ in 1..=4 {
        net.wait(RTT);
        flight = net.deliver_all(flight).iter().map(|s| s.0).collect();
    }
    assert_eq!(flight, (15..=30).collect::<Vec<_>>());
    assert_eq!(net.tcp.cwnd, 16.0);
    assert_eq!(net.tcp.ssthresh, 16.0);
    assert_eq!(net.tcp.highest_ack, 14);
    assert_eq!(net.tcp.maxseq, 30);
    assert_eq!(net.tcp.t_seqno, 31);
    assert!(net.retransmitted().is_empty());
    // Every RTT sample is 50 ms = 5 ticks: RTO = max(minrto, 5 + 4·2.5 ticks) = 0.2 s.
    assert_close(net.tcp.rto(), 0.2);
    net
}

/// The start of R5 for `in_congestion_avoidance` with segment 16 lost (and possibly more
/// after it): segment 15 and the first two segments after the hole arrive.
/// Checks the new ACK and limited transmit, and returns before the third duplicate ACK.
fn r5_until_third_dupack(net: &mut Net, after_hole: [u64; 2]) {
    net.wait(RTT);
    // ACK 15: cwnd 16 ≥ ssthresh → cwnd += 1/16 = 16.0625 (§4.4); window int(16.0625) = 16
    // → send up to 15 + 16 = 31.
    assert_eq!(net.deliver(15), new([31]));
    assert_eq!(net.tcp.cwnd, 16.0625);
    // Dupacks 1 and 2: limited transmit (singledup_, §4.3 send_one) sends one new segment
    // each, since t_seqno ≤ highest_ack + cwnd + dupacks (32 ≤ 15 + 16.06 + 1, 33 ≤ … + 2).
    assert_eq!(net.deliver(after_hole[0]), new([32]));
    assert_eq!((net.tcp.dupacks, net.tcp.dupwnd), (1, 0));
    assert_eq!(net.deliver(after_hole[1]), new([33]));
    assert_eq!((net.tcp.dupacks, net.tcp.dupwnd), (2, 0));
}

/// The third duplicate ACK of R5: fast retransmit of 16 (§4.6).
fn r5_fast_retransmit(net: &mut Net, seq: u64) {
    let fr_time = net.now;
    assert_eq!(net.deliver(seq), rtx(16));
    // slowdown(CLOSE_SSTHRESH_HALF|CLOSE_CWND_HALF) (§4.5): halfwin = min(cwnd, wnd)/2 =
    // 16.0625/2 = 8.03125; ssthresh = int(halfwin) = 8; cwnd = halfwin, NOT truncated.
    assert_eq!(net.tcp.ssthresh, 8.0);
    assert_eq!(net.tcp.cwnd, 8.03125);
    // dupwnd_ = numdupacks_ = 3: window int(8.03125) + 3 = 11, 15 + 11 = 26 < t_seqno 34, so
    // nothing new goes out.
    assert_eq!((net.tcp.dupacks, net.tcp.dupwnd), (3, 3));
    assert_eq!(net.tcp.t_seqno, 34);
    assert_eq!(net.tcp.stats.fast_retransmits, 1);
    // reset_rtx_timer(1, 0): the timer restarts with the current RTO, no backoff.
    assert_eq!(net.tcp.rtx_deadline, Some(fr_time + 200 * MS));
    assert_eq!(net.tcp.backoff, 1);
}

/// Further duplicate ACKs in fast recovery: each inflates dupwnd by 1 (§4.3), and a new
/// segment goes out once int(cwnd) + dupwnd = 8 + dupwnd reaches t_seqno - highest_ack.
/// Returns the new segments sent.
fn inflate(net: &mut Net, seqs: impl IntoIterator<Item = u64>) -> Vec<u64> {
    let mut sent = Vec::new();
    for s in seqs {
        let dupwnd = net.tcp.dupwnd;
        let out = net.deliver(s);
        assert_eq!(net.tcp.dupwnd, dupwnd + 1, "dupwnd after delivering {s}");
        assert!(
            out.iter().all(|o| !o.1),
            "no retransmission on delivering {s}"
        );
        assert!(out.len() <= 1);
        sent.extend(out.iter().map(|o| o.0));
        // Whatever the inflated window allows has been sent.
        let window = 8 + net.tcp.dupwnd;
        assert!(net.tcp.t_seqno > net.tcp.highest_ack + window);
    }
    sent
}

// --- 1. Reno, one loss ------------------------------------------------------------------

#[test]
fn reno_single_loss_fast_retransmit_and_recovery() {
    let mut net = in_congestion_avoidance("reno");
    // R5: segment 16 is lost; 15 and 17..=30 arrive.
    r5_until_third_dupack(&mut net, [17, 18]);
    r5_fast_retransmit(&mut net, 19);
    // Dupacks 4..=14 (segments 20..=30): dupwnd 4..=14. Sending resumes when
    // 15 + 8 + dupwnd ≥ 34, i.e. dupwnd 11 (segment 27): 34, then 35, 36, 37.
    assert_eq!(inflate(&mut net, 20..=30), vec![34, 35, 36, 37]);
    assert_eq!(net.tcp.dupwnd, 14);
    assert_eq!(net.tcp.cwnd, 8.03125);

    // R6: 31, 32, 33 (sent before the retransmission) are three more dupacks → 38, 39, 40.
    net.wait(RTT);
    assert_eq!(inflate(&mut net, 31..=33), vec![38, 39, 40]);
    assert_eq!(net.tcp.dupwnd, 17);
    // The retransmitted 16 fills the hole: ACK 33 (17..=33 are held). Reno leaves recovery:
    // dupwnd = 0, cwnd stays halfwin and opencwnd adds 1/cwnd (cwnd ≥ ssthresh 8).
    // Window int(8.1557) = 8 → send up to 33 + 8 = 41: one new segment.
    assert_eq!(net.deliver(16), new([41]));
    assert_eq!(net.tcp.highest_ack, 33);
    assert_eq!(net.tcp.dupwnd, 0);
    assert_eq!(net.tcp.dupacks, 0);
    assert_eq!(net.tcp.cwnd, 8.03125 + 1.0 / 8.03125);
    assert_eq!(net.tcp.ssthresh, 8.0);
    // Exactly one retransmission: the fast retransmit of 16.
    assert_eq!(net.retransmitted(), vec![16]);
    assert_eq!(net.tcp.stats.retransmits, 1);
    assert_eq!(net.tcp.stats.fast_retransmits, 1);
    assert_eq!(net.tcp.stats.timeouts, 0);
}

// --- 2. Reno, burst of losses -----------------------------------------------------------

#[test]
fn reno_burst_loss_needs_a_timeout() {
    let mut net = in_congestion_avoidance("reno");
    // R5: 16, 17, 18 are lost; 15 and 19..=30 arrive.
    r5_until_third_dupack(&mut net, [19, 20]);
    r5_fast_retransmit(&mut net, 21);
    // 22..=30: dupwnd 4..=12; sends at dupwnd 11, 12 (segments 29, 30).
    assert_eq!(inflate(&mut net, 22..=30), vec![34, 35]);

    // R6: 31..=33 → dupwnd 13..=15 → 36, 37, 38.
    net.wait(RTT);
    assert_eq!(inflate(&mut net, 31..=33), vec![36, 37, 38]);
    // Retransmitted 16 arrives: ACK 16, a partial ACK (17 is missing). Reno exits recovery on
    // any new ACK (§4.6): dupwnd 0, cwnd = 8.03125 + 1/8.03125 = 8.1557; window 8 → up to
    // 16 + 8 = 24 < t_seqno 39: nothing to send. The timer restarts (newtimer).
    let exit_time = net.now;
    assert!(net.deliver(16).is_empty());
    let cwnd = 8.03125 + 1.0 / 8.03125;
    assert_eq!(net.tcp.cwnd, cwnd);
    assert_eq!(net.tcp.dupwnd, 0);
    assert_eq!(net.tcp.rtx_deadline, Some(exit_time + 200 * MS));
    // 34, 35 are dupacks 1, 2 of ACK 16; limited transmit is blocked by the window
    // (39 > 16 + 8.16 + dupacks).
    assert!(net.deliver_all([34, 35]).is_empty());

    // R7: 36 is the third dupack, but highest_ack 16 ≤ recover 33 and the last action was
    // EXITED: bug_fix_ forbids a second fast retransmit in the same window (§4.6).
    // 37, 38: no inflation either (last_cwnd_action_ is not DUPACK).
    net.wait(RTT);
    assert!(net.deliver(36).is_empty());
    assert_eq!(net.tcp.dupacks, 3);
    assert!(net.deliver_all([37, 38]).is_empty());
    assert_eq!(net.tcp.dupacks, 5);
    assert_eq!(net.tcp.dupwnd, 0);
    assert_eq!(net.tcp.stats.fast_retransmits, 1);
    assert_eq!(net.retransmitted(), vec![16]);

    // Nothing is left in flight: the RTO fires 0.2 s after the exit (§4.8).
    // ssthresh = max(2, int(min(cwnd, wnd)/2)) = int(8.1557/2) = 4; cwnd = 1; backoff 2;
    // go-back-N: t_seqno = highest_ack + 1 = 17, which is resent at once (window 1).
    assert_eq!(net.timeout(), rtx(17));
    assert_eq!(net.now, exit_time + 200 * MS);
    assert_eq!(net.tcp.stats.timeouts, 1);
    assert_eq!(net.tcp.ssthresh, 4.0);
    assert_eq!(net.tcp.cwnd, 1.0);
    assert_eq!(net.tcp.backoff, 2);
    assert_close(net.tcp.rto(), 0.4);
    assert_eq!(net.tcp.rtx_deadline, Some(net.now + 400 * MS));
    assert_eq!(net.tcp.t_seqno, 18); // reset to 17, then 17 was sent
    assert_eq!(net.tcp.highest_ack, 16);

    // 17 arrives: ACK 17; slow start cwnd 2 → sends 18 and 19, although 19 already reached
    // the receiver: go-back-N resends everything above highest_ack (no SACK).
    net.wait(RTT);
    assert_eq!(net.deliver(17), vec![(18, true), (19, true)]);
    assert_eq!(net.tcp.cwnd, 2.0);
    // 17's ACK was for a retransmission, so no RTT sample and the backoff stays (§4.3).
    assert_eq!(net.tcp.backoff, 2);
    // 18 arrives: ACK 38 (all of 19..=38 are held); cwnd 3; t_seqno jumps to 39 → 39..=41.
    net.wait(RTT);
    assert_eq!(net.deliver(18), new(39..=41));
    assert_eq!(net.tcp.cwnd, 3.0);
    assert_eq!(net.retransmitted(), vec![16, 17, 18, 19]);
}

// --- 3. NewReno, burst of losses --------------------------------------------------------

#[test]
fn newreno_burst_loss_recovers_with_partial_acks() {
    let mut net = in_congestion_avoidance("newreno");
    // R5 exactly as for Reno: 16, 17, 18 lost; fast retransmit of 16 on segment 21,
    // recover = maxseq = 33.
    r5_until_third_dupack(&mut net, [19, 20]);
    r5_fast_retransmit(&mut net, 21);
    assert_eq!(inflate(&mut net, 22..=30), vec![34, 35]);

    // R6: 31..=33 → dupwnd 13..=15 → 36, 37, 38.
    net.wait(RTT);
    assert_eq!(inflate(&mut net, 31..=33), vec![36, 37, 38]);
    // Retransmitted 16 arrives: ACK 16 < recover 33, a partial ACK (§4.6):
    // deflate = 16 - 15 = 1; dupwnd 15 > 1 → dupwnd -= deflate - 1 = 0 → 15; cwnd unchanged;
    // the next hole, 17, is retransmitted at once; then send_much(maxburst 2) with window
    // 8 + 15 = 23: up to 16 + 23 = 39 → one new segment, 39.
    let first_partial = net.now;
    assert_eq!(net.deliver(16), vec![(17, true), (39, false)]);
    assert_eq!(net.tcp.dupwnd, 15);
    assert_eq!(net.tcp.cwnd, 8.03125);
    assert_eq!(net.tcp.ssthresh, 8.0);
    // dupacks_ is not reset by a partial ACK; the first partial ACK restarts the timer.
    assert_eq!(net.tcp.dupacks, 15);
    assert_eq!(net.tcp.rtx_deadline, Some(first_partial + 200 * MS));
    // 34, 35: dupacks of ACK 16 → dupwnd 16, 17 → 40, 41.
    assert_eq!(inflate(&mut net, 34..=35), vec![40, 41]);

    // R7: 36..=38 → dupwnd 18..=20 → 42..=44.
    net.wait(RTT);
    assert_eq!(inflate(&mut net, 36..=38), vec![42, 43, 44]);
    // Retransmitted 17: ACK 17, second partial ACK: dupwnd stays 20, 18 is retransmitted,
    // window 8 + 20 = 28 → up to 45 → 45. The timer is NOT restarted (newreno_changes1_).
    assert_eq!(net.deliver(17), vec![(18, true), (45, false)]);
    assert_eq!(net.tcp.dupwnd, 20);
    assert_eq!(net.tcp.rtx_deadline, Some(first_partial + 200 * MS));
    assert_eq!(inflate(&mut net, 39..=41), vec![46, 47, 48]);

    // R8 (still 50 ms before the RTO): 42..=44 → 49..=51.
    net.wait(RTT);
    assert_eq!(inflate(&mut net, 42..=44), vec![49, 50, 51]);
    // Retransmitted 18: ACK 44 ≥ recover 33, a full ACK: recovery ends. dupwnd = 0 (EXITED),
    // cwnd keeps halfwin (exit_recovery_fix_ 0) plus opencwnd's 1/cwnd; window 8 →
    // up to 44 + 8 = 52 → one new segment.
    assert_eq!(net.deliver(18), new([52]));
    assert_eq!(net.tcp.highest_ack, 44);
    assert_eq!(net.tcp.dupwnd, 0);
    assert_eq!(net.tcp.dupacks, 0);
    assert_eq!(net.tcp.cwnd, 8.03125 + 1.0 / 8.03125);
    assert_eq!(net.tcp.ssthresh, 8.0);
    // One retransmission per hole, one fast retransmit, no timeout.
    assert_eq!(net.retransmitted(), vec![16, 17, 18]);
    assert_eq!(net.tcp.stats.fast_retransmits, 1);
    assert_eq!(net.tcp.stats.timeouts, 0);
    // The next ACKs are ordinary congestion-avoidance ACKs.
    let cwnd = net.tcp.cwnd;
    assert_eq!(net.deliver(45), new([53]));
    assert_eq!(net.tcp.cwnd, cwnd + 1.0 / cwnd);
}

#[test]
fn newreno_partial_ack_deflates_window() {
    let mut net = in_congestion_avoidance("newreno");
    // R5: 16 and 29 are lost.
    r5_until_third_dupack(&mut net, [17, 18]);
    r5_fast_retransmit(&mut net, 19);
    // 20..=28: dupwnd 4..=12 → 34, 35 (at dupwnd 11, 12); 29 lost; 30: dupwnd 13 → 36.
    assert_eq!(inflate(&mut net, 20..=28), vec![34, 35]);
    assert_eq!(inflate(&mut net, [30]), vec![36]);

    // R6: 31..=33 → dupwnd 14..=16 → 37..=39.
    net.wait(RTT);
    assert_eq!(inflate(&mut net, 31..=33), vec![37, 38, 39]);
    // Retransmitted 16: ACK 28 < recover 33 (29 missing). deflate = 28 - 15 = 13 < dupwnd 16
    // → dupwnd -= 13 - 1 → 4: the 13 segments that left the network no longer inflate the
    // window, except the retransmission. cwnd stays 8.03125. 29 is retransmitted; window
    // 8 + 4 = 12 → up to 28 + 12 = 40 → one new segment.
    assert_eq!(net.deliver(16), vec![(29, true), (40, false)]);
    assert_eq!(net.tcp.dupwnd, 4);
    assert_eq!(net.tcp.cwnd, 8.03125);
    assert_eq!(net.tcp.highest_ack, 28);
    // 34..=36 (sent during recovery): dupacks of 28 → dupwnd 5..=7 → 41..=43.
    assert_eq!(inflate(&mut net, 34..=36), vec![41, 42, 43]);

    // R7: 37..=39 → dupwnd 8..=10 → 44..=46; retransmitted 29 → ACK 39 ≥ recover: exit.
    net.wait(RTT);
    assert_eq!(inflate(&mut net, 37..=39), vec![44, 45, 46]);
    // Window 8 (cwnd 8.1557) → up to 39 + 8 = 47.
    assert_eq!(net.deliver(29), new([47]));
    assert_eq!(net.tcp.dupwnd, 0);
    assert_eq!(net.tcp.cwnd, 8.03125 + 1.0 / 8.03125);
    assert_eq!(net.retransmitted(), vec![16, 29]);
    assert_eq!(net.tcp.stats.timeouts, 0);
}

// --- 4. Lost retransmission ---------------------------------------------------------------

/// One loss (16) whose fast retransmission is lost as well; the retransmission timer armed at
/// the fast retransmit is not restarted by duplicate ACKs and fires 0.2 s later.
fn lost_retransmission_times_out(variant: &str) {
    let mut net = in_congestion_avoidance(variant);
    r5_until_third_dupack(&mut net, [17, 18]);
    let fr_time = net.now;
    r5_fast_retransmit(&mut net, 19);
    assert_eq!(inflate(&mut net, 20..=30), vec![34, 35, 36, 37]);

    // The retransmission of 16 is lost. Every later round is all duplicate ACKs, each sending
    // one new segment (dupwnd +1 per ACK): R6 delivers 31..=37, R7 38..=44, R8 45..=51.
    let mut flight: Vec<u64> = (31..=37).collect();
    while net.now + RTT < fr_time + 200 * MS {
        net.wait(RTT);
        flight = inflate(&mut net, flight);
        assert_eq!(flight.len(), 7);
    }
    assert_eq!(net.now, fr_time + 150 * MS);
    assert_eq!(net.tcp.dupwnd, 14 + 3 * 7);
    assert_eq!(net.tcp.cwnd, 8.03125);
    assert_eq!(net.tcp.backoff, 1);

    // Timeout (§4.8): dupwnd is zeroed first, so the halving uses cwnd alone:
    // ssthresh = max(2, int(8.03125/2)) = 4 (cut again, from 8); cwnd = 1; backoff 1 → 2, so
    // RTO = 0.2·2 = 0.4 s; go-back-N resends 16.
    assert_eq!(net.timeout(), rtx(16));
    assert_eq!(net.now, fr_time + 200 * MS);
    assert_eq!(net.tcp.ssthresh, 4.0);
    assert_eq!(net.tcp.cwnd, 1.0);
    assert_eq!(net.tcp.dupwnd, 0);
    assert_eq!(net.tcp.dupacks, 0);
    assert_eq!(net.tcp.backoff, 2);
    assert_close(net.tcp.rto(), 0.4);
    assert_eq!(net.tcp.rtx_deadline, Some(net.now + 400 * MS));
    assert_eq!(net.tcp.t_seqno, 17); // highest_ack + 1 = 16, then 16 was sent
    assert_eq!(net.tcp.stats.timeouts, 1);

    // That retransmission is lost too: second timeout. ssthresh = max(2, int(1/2)) = 2,
    // backoff 4, RTO 0.8 s; 16 is sent a third time.
    assert_eq!(net.timeout(), rtx(16));
    assert_eq!(net.tcp.ssthresh, 2.0);
    assert_eq!(net.tcp.cwnd, 1.0);
    assert_eq!(net.tcp.backoff, 4);
    assert_close(net.tcp.rto(), 0.8);
    assert_eq!(net.retransmitted(), vec![16, 16, 16]);
    assert_eq!(net.tcp.stats.fast_retransmits, 1);
}

#[test]
fn reno_lost_retransmission_times_out() {
    lost_retransmission_times_out("reno");
}

#[test]
fn newreno_lost_retransmission_times_out() {
    lost_retransmission_times_out("newreno");
}

// --- 5. RTO backoff -----------------------------------------------------------------------

#[test]
fn rto_backoff_from_initial_rto_is_capped_at_max_rto() {
    // Nothing is ever acknowledged: the SYN is lost again and again.
    let mut net = Net::new(&config("reno"));
    assert_eq!(net.start(), new([0]));
    assert_close(net.tcp.rto(), 3.0);
    assert_eq!(net.tcp.rtx_deadline, Some(3_000 * MS));
    // rtt_backoff (§4.7) doubles while backoff < 64 or RTO < maxrto; RTO = 3 s·backoff,
    // capped at 60 s: 6, 12, 24, 48, 96→60 (backoff 32), then backoff 64 (RTO 60) and no
    // further doubling because backoff ≥ 64 and RTO == maxrto.
    let expected = [
        (2, 6.0),
        (4, 12.0),
        (8, 24.0),
        (16, 48.0),
        (32, 60.0),
        (64, 60.0),
        (64, 60.0),
        (64, 60.0),
    ];
    for (i, &(backoff, rto)) in expected.iter().enumerate() {
        assert_eq!(net.timeout(), rtx(0), "timeout {}", i + 1);
        assert_eq!(net.tcp.backoff, backoff, "timeout {}", i + 1);
        assert_close(net.tcp.rto(), rto);
        let rto_ns = (rto * 1000.0) as u64 * MS;
        assert_eq!(net.tcp.rtx_deadline, Some(net.now + rto_ns));
        assert_eq!(net.tcp.cwnd, 1.0);
        assert_eq!(net.tcp.ssthresh, 2.0);
    }
    assert_eq!(net.tcp.stats.timeouts, 8);
    // 3 + 6 + 12 + 24 + 48 + 60·3 s.
    assert_eq!(net.now, 273_000 * MS);
}

#[test]
fn rto_backoff_from_min_rto_and_reset_by_timed_ack() {
    let mut net = Net::new(&config("reno"));
    net.start();
    // SYN acknowledged after 20 ms: the doc's example, t_rtt 2, srtt 16, rttvar 4 (scaled),
    // rtxcur 0.06 s → RTO = minrto 0.2 s. cwnd 2 → 1 (timed) and 2 go out.
    net.wait(20 * MS);
    assert_eq!(net.deliver(0), new([1, 2]));
    assert_close(net.tcp.srtt(), 0.02);
    assert_close(net.tcp.rto(), 0.2);
    // 1 and 2 and all their retransmissions are lost. RTO = 0.2·backoff (rfc2988_: minrto is
    // applied before the backoff), doubling up to 51.2 s (backoff 256); backoff 512 gives
    // 102.4 → 60 s, and there it stays.
    for k in 1..=10 {
        assert_eq!(net.timeout(), rtx(1), "timeout {k}");
        let backoff = 1i64 << k.min(9);
        assert_eq!(net.tcp.backoff, backoff, "timeout {k}");
        assert_close(net.tcp.rto(), (0.2 * backoff as f64).min(60.0));
        if k == 4 {
            // Backoff > 8 clobbers srtt (moved into rttvar): the next sample re-initialises.
            assert_eq!(net.tcp.srtt(), 0.0);
        }
    }
    assert_eq!(net.tcp.backoff, 512);
    assert_close(net.tcp.rto(), 60.0);

    // The retransmitted 1 finally arrives. Its ACK is new but 1 is a retransmission, never
    // timed (Karn): the backoff stays. cwnd 1 → 2 (< ssthresh 2): resend 2, send 3 (new and
    // timed).
    net.wait(20 * MS);
    assert_eq!(net.deliver(1), vec![(2, true), (3, false)]);
    assert_eq!(net.tcp.backoff, 512);
    assert_close(net.tcp.rto(), 60.0);
    net.wait(20 * MS);
    // ACK 2 acknowledges a retransmission: backoff still 512.
    assert_eq!(net.deliver(2), new([4]));
    assert_eq!(net.tcp.backoff, 512);
    // ACK 3 acknowledges the timed segment 3: backoff = 1 and a fresh first sample of 20 ms
    // (srtt was clobbered) → RTO back to 0.2 s.
    assert_eq!(net.deliver(3), new([5]));
    assert_eq!(net.tcp.backoff, 1);
    assert_close(net.tcp.srtt(), 0.02);
    assert_close(net.tcp.rto(), 0.2);
    assert_eq!(net.tcp.rtx_deadline, Some(net.now + 200 * MS));
}

// --- 6. Slow start and initial window -------------------------------------------------------

/// syn true, window_pkts 6, so the initial ssthresh is 6.
fn small_window() -> Net {
    let cfg = TcpConfig {
        window_pkts: 6,
        ..config("reno")
    };
    Net::new(&cfg)
}

#[test]
fn slow_start_after_syn_then_congestion_avoidance() {
    let mut net = small_window();
    assert_eq!(net.tcp.ssthresh, 6.0);
    assert_eq!(net.tcp.cwnd, 1.0);
    // The SYN (segment 0) goes alone: cwnd 1.
    assert_eq!(net.start(), new([0]));
    // ACK 0: cwnd = initial window 2 → 1, 2.
    net.wait(RTT);
    assert_eq!(net.deliver(0), new([1, 2]));
    assert_eq!(net.tcp.cwnd, 2.0);
    // Slow start: +1 per new ACK while cwnd < ssthresh, so two segments per ACK.
    net.wait(RTT);
    assert_eq!(net.deliver(1), new([3, 4]));
    assert_eq!(net.tcp.cwnd, 3.0);
    assert_eq!(net.deliver(2), new([5, 6]));
    assert_eq!(net.tcp.cwnd, 4.0);
    net.wait(RTT);
    assert_eq!(net.deliver(3), new([7, 8]));
    assert_eq!(net.tcp.cwnd, 5.0);
    assert_eq!(net.deliver(4), new([9, 10]));
    assert_eq!(net.tcp.cwnd, 6.0);
    // cwnd 6 ≥ ssthresh 6: congestion avoidance, +1/cwnd per ACK, one segment per ACK.
    assert_eq!(net.deliver(5), new([11]));
    assert_eq!(net.tcp.cwnd, 6.0 + 1.0 / 6.0);
    let cwnd = net.tcp.cwnd;
    assert_eq!(net.deliver(6), new([12]));
    assert_eq!(net.tcp.cwnd, cwnd + 1.0 / cwnd);
    // cwnd is not capped by window_ (§4.4); only the window used for sending is.
    assert!(net.tcp.cwnd > 6.0);
    assert_eq!(net.tcp.window(), 6);
    assert_eq!(net.tcp.ssthresh, 6.0);
}

#[test]
fn halving_uses_the_advertised_window_when_smaller() {
    let mut net = small_window();
    net.start();
    for flight in [vec![0], vec![1, 2], vec![3, 4, 5, 6]] {
        net.wait(RTT);
        net.deliver_all(flight);
    }
    // As in the slow-start test: cwnd 6.32, window_ 6, 7..=12 in flight.
    assert!(net.tcp.cwnd > 6.3);
    assert_eq!(net.tcp.maxseq, 12);
    // 7 is lost. Limited transmit is blocked by the advertised window:
    // t_seqno 13 > highest_ack 6 + wnd 6.
    net.wait(RTT);
    assert!(net.deliver_all([8, 9]).is_empty());
    // Third dupack: halfwin = min(cwnd, wnd)/2 = 6/2 = 3 → ssthresh 3, cwnd 3.
    assert_eq!(net.deliver(10), rtx(7));
    assert_eq!(net.tcp.ssthresh, 3.0);
    assert_eq!(net.tcp.cwnd, 3.0);
    // Inflation is capped by window_ too: min(3 + dupwnd, 6) = 6 → nothing new.
    assert!(net.deliver_all([11, 12]).is_empty());
    assert_eq!(net.tcp.dupwnd, 5);
    // ACK 12: exit, cwnd 3 + 1/3, window 3 → 13..=15.
    net.wait(RTT);
    assert_eq!(net.deliver(7), new(13..=15));
    assert_eq!(net.tcp.cwnd, 3.0 + 1.0 / 3.0);
}

#[test]
fn ack_of_segment_zero_sets_the_initial_window() {
    // §4.3: `if last_ack_ == 0 && delay_growth_: cwnd_ = initial_window()`, after opencwnd.
    // With initial window 4 the SYN's ACK gives cwnd 4, not 1 + 1.
    let cfg = TcpConfig {
        initial_window_pkts: 4,
        ..config("newreno")
    };
    let mut net = Net::new(&cfg);
    assert_eq!(net.start(), new([0]));
    net.wait(RTT);
    assert_eq!(net.deliver(0), new(1..=4));
    assert_eq!(net.tcp.cwnd, 4.0);

    // Without the SYN (syn_ false, delay_growth_ true as exported to ns-2) cwnd starts at the
    // initial window 2, and the ACK of segment 0 sets it to the initial window again instead
    // of opening it to 3: only segment 2 goes out.
    let cfg = TcpConfig {
        syn: false,
        ..config("reno")
    };
    let mut net = Net::new(&cfg);
    assert_eq!(net.tcp.cwnd, 2.0);
    assert_eq!(net.start(), new([0, 1]));
    net.wait(RTT);
    assert_eq!(net.deliver(0), new([2]));
    assert_eq!(net.tcp.cwnd, 2.0);
    assert_eq!(net.deliver(1), new([3, 4]));
    assert_eq!(net.tcp.cwnd, 3.0);
}

#[test]
fn lost_syn_falls_back_to_initial_window_one() {
    let mut net = Net::new(&config("reno"));
    net.start();
    // The SYN is lost: timeout at the initial RTO, 3 s (§4.7). highest_ack_ == -1, so
    // wnd_init_ = 1 (§4.8); ssthresh = max(2, int(1/2)) = 2.
    assert_eq!(net.timeout(), rtx(0));
    assert_eq!(net.now, 3_000 * MS);
    assert_eq!(net.tcp.ssthresh, 2.0);
    // Its retransmission is acknowledged: cwnd = initial window, now 1: one segment.
    net.wait(RTT);
    assert_eq!(net.deliver(0), new([1]));
    assert_eq!(net.tcp.cwnd, 1.0);
    // From there, slow start as usual.
    net.wait(RTT);
    assert_eq!(net.deliver(1), new([2, 3]));
    assert_eq!(net.tcp.cwnd, 2.0);
}

// --- 7. RTT estimation ---------------------------------------------------------------------

#[test]
fn rtt_first_sample_and_update() {
    let mut net = Net::new(&config("reno"));
    net.start();
    // SYN acknowledged after 100 ms: t_rtt = int((0.1 + 0.005 tick phase)/0.01) = 10 ticks.
    // First sample: srtt = 10, rttvar = 5 ticks → RTO = floor(10 + 4·5) = 30 ticks = 0.3 s
    // (> minrto 0.2).
    net.wait(100 * MS);
    assert_eq!(net.deliver(0), new([1, 2]));
    assert_close(net.tcp.srtt(), 0.1);
    assert_close(net.tcp.rto(), 0.3);
    assert_eq!(net.tcp.backoff, 1);
    // timerfix_: the timer is restarted after the update, with the new RTO.
    assert_eq!(net.tcp.rtx_deadline, Some(400 * MS));

    // Segment 1 (the timed one, sent at 100 ms) is acknowledged at 300 ms: t_rtt = 20.
    // delta = 20 - 10 = 10; srtt = 10 + 10/8 = 11.25 ticks; rttvar = 5 + (10 - 5)/4 = 6.25;
    // RTO = floor(11.25 + 4·6.25) = floor(36.25) = 36 ticks = 0.36 s.
    net.wait(200 * MS);
    net.deliver(1);
    assert_close(net.tcp.srtt(), 0.1125);
    assert_close(net.tcp.rto(), 0.36);
    // Segment 2 was sent with 1, while 1 was being timed: not timed, no sample.
    net.deliver(2);
    assert_close(net.tcp.srtt(), 0.1125);

    // The doc's example: a 20 ms sample gives rtxcur 0.06 s, so RTO = minrto = 0.2 s.
    let mut net = Net::new(&config("reno"));
    net.start();
    net.wait(20 * MS);
    net.deliver(0);
    assert_close(net.tcp.srtt(), 0.02);
    assert_close(net.tcp.rto(), 0.2);
}

#[test]
fn rtt_sample_counts_ticks_of_the_senders_clock() {
    // A 105 ms RTT measured on a 10 ms clock: t_rtt = int((tao + fmod(sendtime, tick))/tick).
    // Phase 0: int(10.5) = 10 ticks → RTO 30 ticks. Phase 0.6 (6 ms): int(11.1) = 11 ticks →
    // srtt 11, rttvar 5.5 → RTO floor(11 + 22) = 33 ticks.
    for (phase, srtt, rto) in [(0.0, 0.1, 0.3), (0.6, 0.11, 0.33)] {
        let mut net = Net::with_phase(&config("reno"), phase);
        net.start();
        net.wait(105 * MS);
        net.deliver(0);
        assert_close(net.tcp.srtt(), srtt);
        assert_close(net.tcp.rto(), rto);
    }
}

#[test]
fn karn_retransmissions_are_not_timed() {
    let mut net = Net::new(&config("newreno"));
    net.start();
    // The SYN (timed at 0) is lost; it is retransmitted at 3 s (backoff 2, RTO 6 s).
    assert_eq!(net.timeout(), rtx(0));
    assert_eq!(net.tcp.backoff, 2);
    // The retransmission is acknowledged 100 ms later. Had it been timed, the sample would
    // be 0.1 s (or 3.1 s from the original): neither is taken, srtt stays 0 and the
    // backoff stays, so RTO = 3 s·2 = 6 s.
    net.wait(100 * MS);
    assert_eq!(net.deliver(0), new([1]));
    assert_eq!(net.tcp.srtt(), 0.0);
    assert_eq!(net.tcp.backoff, 2);
    assert_close(net.tcp.rto(), 6.0);
    // Segment 1 is new and timed: its ACK gives the first sample and resets the backoff.
    net.wait(100 * MS);
    net.deliver(1);
    assert_close(net.tcp.srtt(), 0.1);
    assert_eq!(net.tcp.backoff, 1);
    assert_close(net.tcp.rto(), 0.3);
}
