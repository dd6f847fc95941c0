//! Timers and the round-trip estimator: RTO backoff, the SYN, slow start, RTT samples, Karn.

use super::*;

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
    assert_eq!(net.deliver(1), vec![(2, true, false), (3, false, false)]);
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
