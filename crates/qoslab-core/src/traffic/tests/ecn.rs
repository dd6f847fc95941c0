//! The ECN response of the sender (RFC 3168 §6.1.2 as ns-2.35's `TcpAgent::ecn`,
//! `dupack_action` and `timeout` implement it): halve once per window of data on ECN-Echo,
//! retransmit nothing, put CWR on the next segment; a loss in a window already halved by ECN
//! is retransmitted without halving again; a timeout during ECN recovery keeps ssthresh.

use super::*;

/// `in_congestion_avoidance` for an ECN-capable sender: the ACK of segment 0 carries ns-2's
/// negotiation echo (no response: 0 is not above `recover` 0), after which ECN is on.
fn ecn_in_congestion_avoidance(variant: &str) -> Net {
    let mut cfg = config(variant);
    cfg.ecn = true;
    let mut net = Net::new(&cfg);
    net.tcp.ssthresh = 16.0;
    assert_eq!(net.start(), new([0]));
    net.wait(RTT);
    let mut flight: Vec<u64> = net.deliver_ece(0).iter().map(|s| s.0).collect();
    assert_eq!(flight, vec![1, 2]);
    for _ in 2..=4 {
        net.wait(RTT);
        flight = net.deliver_all(flight).iter().map(|s| s.0).collect();
    }
    assert_eq!(flight, (15..=30).collect::<Vec<_>>());
    assert_eq!((net.tcp.cwnd, net.tcp.ssthresh), (16.0, 16.0));
    assert_eq!(net.tcp.stats.ecn_responses, 0);
    net
}

#[test]
fn ecn_echo_halves_once_per_window_without_retransmitting() {
    for variant in ["reno", "newreno"] {
        let mut net = ecn_in_congestion_avoidance(variant);
        net.wait(RTT);
        // ECE on ACK 15: halve (windowd 16 → 8, ssthresh 8); this ACK does not open cwnd.
        assert_eq!(net.deliver_ece(15), new([]));
        assert_eq!((net.tcp.cwnd, net.tcp.ssthresh), (8.0, 8.0));
        assert_eq!(net.tcp.stats.ecn_responses, 1);
        // More ECE within the same window (up to recover = 30): no second halving.
        assert_eq!(net.deliver_ece(16), new([]));
        assert_eq!(net.tcp.cwnd, 8.0);
        // ACKs 17..=22 open cwnd by 1/cwnd each; window stays 8, 22 + 8 < 31: nothing sent.
        assert_eq!(net.deliver_all(17..=22), new([]));
        // ACK 23: 23 + 8 = 31 → segment 31 goes out carrying CWR.
        assert_eq!(net.deliver(23), vec![(31, false, true)]);
        // Only the first segment after the reduction carries CWR.
        assert!(net.deliver(24).iter().all(|s| !s.2));
        assert_eq!(net.tcp.stats.ecn_responses, 1);
        assert!(
            net.retransmitted().is_empty(),
            "{variant}: ECN never retransmits"
        );
        // ECE on an ACK above recover (30): the next window's congestion, halved again.
        net.deliver_all(25..=30);
        let before = net.tcp.cwnd;
        net.deliver_ece(31);
        assert_eq!(net.tcp.stats.ecn_responses, 2);
        assert!(
            net.tcp.cwnd < before * 0.51,
            "{variant}: {} vs {before}",
            net.tcp.cwnd
        );
    }
}

#[test]
fn a_loss_in_a_window_halved_by_ecn_is_retransmitted_without_halving_again() {
    for variant in ["reno", "newreno"] {
        let mut net = ecn_in_congestion_avoidance(variant);
        net.wait(RTT);
        net.deliver_ece(15);
        assert_eq!(net.tcp.cwnd, 8.0);
        // Segment 16 lost: three duplicate ACKs (no limited transmit: 31 > 15 + 8 + dupacks).
        assert_eq!(net.deliver_all([17, 18]), new([]));
        // The retransmission is the first segment since the reduction: it carries CWR
        // (ns-2 SetCWRonRetransmit_ true).
        assert_eq!(net.deliver(19), vec![(16, true, true)]);
        assert_eq!((net.tcp.cwnd, net.tcp.ssthresh), (8.0, 8.0), "{variant}");
        assert_eq!(net.tcp.stats.fast_retransmits, 1);
        assert_eq!(net.tcp.stats.ecn_responses, 1);
    }
}

#[test]
fn a_timeout_during_ecn_recovery_restarts_at_one_and_keeps_ssthresh() {
    let mut net = ecn_in_congestion_avoidance("newreno");
    net.wait(RTT);
    net.deliver_ece(15);
    assert_eq!(net.tcp.ssthresh, 8.0);
    // Everything after 15 is lost: the timer fires; go back to 16 with cwnd 1, CWR set.
    assert_eq!(net.timeout(), vec![(16, true, true)]);
    assert_eq!((net.tcp.cwnd, net.tcp.ssthresh), (1.0, 8.0));
    assert_eq!(net.tcp.stats.timeouts, 1);
}

#[test]
fn a_sender_without_ecn_ignores_ecn_echo() {
    let mut net = in_congestion_avoidance("reno");
    net.wait(RTT);
    net.deliver_ece(15);
    assert_eq!(net.tcp.cwnd, 16.0625);
    assert_eq!(net.tcp.stats.ecn_responses, 0);
    assert!(net.log.iter().all(|s| !s.2), "no CWR without ECN");
}
