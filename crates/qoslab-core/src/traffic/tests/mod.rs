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

use super::{Ns2Sender, SendBuf};
use super::{TcpConfig, TcpVariant};
use crate::units::SimTime;
use std::collections::BTreeSet;

const MS: SimTime = 1_000_000;
/// Round-trip time of the scripted network.
const RTT: SimTime = 50 * MS;

/// ns-2 defaults (§1) except a large advertised window; `syn` true.
fn config(variant: &str) -> TcpConfig {
    TcpConfig {
        variant: match variant {
            "newreno" => TcpVariant::Newreno,
            _ => TcpVariant::Reno,
        },
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
        pacing: false,
        sack: false,
        flavour: super::Flavour::Ns2,
        explicit: 0,
        cc: None,
        linux_cc: None,
        cc_tables: Default::default(),
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
    seqs.into_iter().map(|s| (s, false, false)).collect()
}

/// A retransmission of `seq`.
fn rtx(seq: u64) -> SendBuf {
    vec![(seq, true, false)]
}

fn assert_close(got: f64, want: f64) {
    assert!((got - want).abs() < 1e-9, "got {got}, want {want}");
}

struct Net {
    tcp: Ns2Sender,
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
            tcp: Ns2Sender::new(cfg, boot_phase),
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
            .on_ack(self.now, cum_ack(&self.delivered), false, &mut out);
        self.log.extend(&out);
        out
    }

    /// `deliver` with the ACK carrying ECN-Echo.
    fn deliver_ece(&mut self, seq: u64) -> SendBuf {
        self.delivered.insert(seq);
        let mut out = SendBuf::new();
        self.tcp
            .on_ack(self.now, cum_ack(&self.delivered), true, &mut out);
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
    assert_eq!(net.deliver(17), vec![(18, true, false), (19, true, false)]);
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
    assert_eq!(net.deliver(16), vec![(17, true, false), (39, false, false)]);
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
    assert_eq!(net.deliver(17), vec![(18, true, false), (45, false, false)]);
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
    assert_eq!(net.deliver(16), vec![(29, true, false), (40, false, false)]);
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

mod bbr;
mod cc;
mod ecn;
mod pipe;
mod timers;
