//! Whole-sender tests of CUBIC and DCTCP on the scripted path of [`super::pipe`].

use super::pipe::Pipe;
use super::{config, TcpConfig, TcpVariant, MS};
use crate::traffic::cc::{cubic, AnyCc};
use crate::units::NS_PER_SEC;

fn cfg(variant: TcpVariant) -> TcpConfig {
    let mut c = config("reno");
    c.variant = variant;
    c.window_pkts = 100_000;
    c.ecn = variant == TcpVariant::Dctcp;
    c
}

/// One loss (segment 500) in slow start on an idle 100 ms path (1000-byte segments at
/// 1 Gbit/s: a 500-segment window is sent in 4 ms): after the recovery, cwnd follows
/// W_cubic(t) = C(t − K)³ + W_max with W_max the window at the loss and K = ∛(W_max(1 − β)/C).
#[test]
fn cubic_window_between_losses_is_the_cubic_function() {
    let rtt = 100 * MS;
    let mut p = Pipe::new(&cfg(TcpVariant::Cubic), rtt, 8_000);
    p.drops.insert(500);
    p.start();
    assert_eq!(p.run_until(30 * NS_PER_SEC), 0, "no timeout");
    assert_eq!(p.tcp.stats.fast_retransmits, 1);
    // The window at the loss: the last cwnd before the multiplicative decrease.
    let cut = p.trace.windows(2).position(|w| w[1].1 < w[0].1).unwrap();
    let w_max = p.trace[cut].1;
    assert!((p.trace[cut + 1].1 - cubic::BETA * w_max).abs() < 1e-9);
    let AnyCc::Cubic(cc) = &p.tcp.cc else {
        panic!("not CUBIC")
    };
    let t0 = cc.t_epoch().expect("in congestion avoidance");
    let k = (w_max * (1.0 - cubic::BETA) / cubic::C).cbrt();
    let w = |t: f64| cubic::C * (t - k).powi(3) + w_max;
    let r = rtt as f64 / NS_PER_SEC as f64;
    for t in [0.5, 2.0, 4.0, k, 10.0, 14.0, 18.0] {
        let cwnd = p.cwnd_at(t0 + (t * NS_PER_SEC as f64) as u64);
        eprintln!(
            "cubic W_max {w_max:.2} K {k:.3}s: t {t:.2}s cwnd {cwnd:.2} W_cubic(t) {:.2} ({:+.2} %)",
            w(t),
            100.0 * (cwnd - w(t)) / w(t)
        );
        // cwnd chases W_cubic(t + RTT): it lies within one round trip of the curve.
        assert!(
            cwnd >= w(t - r) - 1.0 && cwnd <= w(t + r) + 1.0,
            "t {t}: cwnd {cwnd}, W_cubic {} .. {}",
            w(t - r),
            w(t + r)
        );
        assert!((cwnd - w(t)).abs() / w(t) < 0.02);
    }
}

/// The sender and a DCTCP sink over a path that marks every tenth segment: DCTCP.Alpha
/// converges to the marked fraction 0.1 and the window settles where a cut of Alpha/2 per
/// window balances one packet of growth per window; an RFC 3168 sender (Reno with ECN) on
/// the same marks halves instead and keeps a window several times smaller (measured: Alpha
/// 0.0993, mean cwnd 18.8 against 1.15 for Reno, which also times out).
#[test]
fn dctcp_alpha_tracks_the_marked_fraction() {
    let run = |variant: TcpVariant| {
        let mut c = cfg(variant);
        c.ecn = true;
        let mut p = Pipe::new(&c, 10 * MS, 10_000);
        p.mark = |seq| seq % 10 == 0;
        p.start();
        let timeouts = p.run_until(30 * NS_PER_SEC);
        let tail = &p.trace[p.trace.len() / 2..];
        let mean = tail.iter().map(|x| x.1).sum::<f64>() / tail.len() as f64;
        (p, mean, timeouts)
    };
    let (dctcp, dctcp_cwnd, timeouts) = run(TcpVariant::Dctcp);
    assert_eq!(timeouts, 0);
    let AnyCc::Dctcp(cc) = &dctcp.tcp.cc else {
        panic!("not DCTCP")
    };
    let (_, reno_cwnd, _) = run(TcpVariant::Reno);
    eprintln!(
        "dctcp alpha {:.4}, mean cwnd {dctcp_cwnd:.2}; reno+ecn {reno_cwnd:.2}",
        cc.alpha
    );
    assert!((cc.alpha - 0.1).abs() < 0.02, "alpha {}", cc.alpha);
    assert!(dctcp_cwnd > 3.0 * reno_cwnd);
}

/// A paced sender (`pacing = true`) on a 20 ms path: after the first RTT sample no two new
/// segments leave closer than Linux's gap srtt/(gain·cwnd) allows (gain 2 below ssthresh/2,
/// 1.2 above), while the unpaced sender sends two segments per ACK in slow start, back to
/// back; both deliver the same data.
#[test]
fn paced_sender_spaces_its_segments() {
    let run = |pacing: bool| {
        let mut c = cfg(TcpVariant::Newreno);
        c.pacing = pacing;
        c.window_pkts = 40;
        let mut p = Pipe::new(&c, 20 * MS, 10_000);
        p.start();
        assert_eq!(p.run_until(2 * NS_PER_SEC), 0);
        p
    };
    let (paced, unpaced) = (run(true), run(false));
    let min_gap = |p: &Pipe| {
        p.sent
            .windows(2)
            .filter(|w| w[0].0 > 25 * MS)
            .map(|w| w[1].0 - w[0].0)
            .min()
            .unwrap()
    };
    let got = min_gap(&paced);
    eprintln!(
        "min gap: paced {got} ns, unpaced {} ns; segments {} / {}",
        min_gap(&unpaced),
        paced.sent.len(),
        unpaced.sent.len()
    );
    assert_eq!(min_gap(&unpaced), 0);
    // The smallest gap: cwnd 40 (the window cap) at 1.2, srtt ≥ 20 ms: 20 ms / 48.
    assert!(got >= 20 * MS / 48, "{got}");
    assert!(paced.sent.len() as f64 > 0.9 * unpaced.sent.len() as f64);
}

/// SACK recovery: five segments lost from one window (every third from 300) on a 100 ms path.
/// NewReno repairs one hole per round trip and its retransmission timer, restarted only at
/// the first partial ACK (ns-2), expires first; SACK (RFC 6675) retransmits every hole within
/// the first round trip of recovery, with no timeout and each segment sent again once.
#[test]
fn sack_recovers_several_losses_in_a_window_without_timeout() {
    let run = |variant: TcpVariant, sack: bool| {
        let mut c = cfg(variant);
        c.sack = sack;
        c.window_pkts = 1000;
        let mut p = Pipe::new(&c, 100 * MS, 100_000);
        p.drops.extend([300, 303, 306, 309, 312]);
        p.start();
        let timeouts = p.run_until(10 * NS_PER_SEC);
        (p, timeouts)
    };
    let (sack, sack_to) = run(TcpVariant::Sack, true);
    let (newreno, newreno_to) = run(TcpVariant::Newreno, false);
    let (cubic_sack, cubic_to) = run(TcpVariant::Cubic, true);
    eprintln!(
        "5 losses: sack {} timeouts {} retransmits {} fr; newreno {} timeouts {} retransmits; \
         cubic+sack {} timeouts {} retransmits",
        sack_to,
        sack.tcp.stats.retransmits,
        sack.tcp.stats.fast_retransmits,
        newreno_to,
        newreno.tcp.stats.retransmits,
        cubic_to,
        cubic_sack.tcp.stats.retransmits
    );
    assert_eq!((sack_to, sack.tcp.stats.retransmits), (0, 5));
    assert_eq!(sack.tcp.stats.fast_retransmits, 1);
    assert!(newreno_to > 0);
    assert_eq!((cubic_to, cubic_sack.tcp.stats.retransmits), (0, 5));
}

/// HyStart: CUBIC on a 10,000 packet/s bottleneck (unlimited buffer, so no loss ever ends
/// slow start) with a 40 ms RTT, BDP 401 packets. The ACK train of a round outlasts
/// delay_min/2 once the window is about half the BDP or more: slow start ends there
/// (ssthresh = cwnd) instead of growing the window, and the queue, without bound.
#[test]
fn hystart_ends_slow_start_near_the_bdp() {
    let mut p = Pipe::new(&cfg(TcpVariant::Cubic), 40 * MS, 100_000);
    p.start();
    let mut exit = None;
    for ms in 1..=3_000u64 {
        p.run_until(ms * MS);
        if exit.is_none() && p.tcp.ssthresh < 100_000.0 {
            exit = Some((ms, p.tcp.ssthresh));
        }
    }
    let (at, ssthresh) = exit.expect("slow start ended");
    eprintln!(
        "hystart: slow start ended at {at} ms with cwnd {ssthresh:.1} (BDP 401); cwnd at 3 s {:.1}",
        p.tcp.cwnd
    );
    assert_eq!(p.tcp.stats.fast_retransmits + p.tcp.stats.timeouts, 0);
    assert!((200.0..=600.0).contains(&ssthresh), "{ssthresh}");
    assert!(p.tcp.cwnd < 1000.0, "{}", p.tcp.cwnd);
}
