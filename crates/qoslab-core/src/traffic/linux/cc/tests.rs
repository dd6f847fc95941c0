//! The modules' arithmetic against the kernel's closed forms, on a scripted [`Conn`].

use super::bbr::Bbr;
use super::cubic::Cubic;
use super::dctcp::Dctcp;
use super::{CaState, Conn, LinuxCongestion, INFINITE_SSTHRESH};
use crate::traffic::linux::rate::RateSample;

const MS: u64 = 1_000_000;

pub(super) fn conn(cwnd: u32) -> Conn {
    Conn {
        now: 0,
        cwnd,
        cwnd_cnt: 0,
        ssthresh: INFINITE_SSTHRESH,
        cwnd_clamp: 100_000,
        prior_cwnd: 0,
        ca_state: CaState::Open,
        una: 0,
        nxt: cwnd as i64,
        packets_out: cwnd,
        in_flight: cwnd,
        srtt_ns: 0,
        min_rtt_ns: u64::MAX,
        delivered: 0,
        delivered_ce: 0,
        lost: 0,
        app_limited: false,
        cwnd_limited: true,
        pacing_rate: 0.0,
        paced: false,
        mss: 1500,
        lsndtime: 0,
        delivered_time: 0,
        edt: 0,
        app_limited_until: None,
    }
}

#[test]
fn reno_avoidance_counts_acknowledged_segments() {
    // tcp_cong_avoid_ai: +1 per cwnd segments acknowledged, whatever the ACKs' sizes.
    let mut c = conn(10);
    c.ssthresh = 10;
    let mut r = super::Reno;
    for _ in 0..5 {
        r.cong_avoid(&mut c, 2); // five stretch ACKs of 2 segments: one window
    }
    assert_eq!((c.cwnd, c.cwnd_cnt), (11, 0));
    // Slow start: cwnd + acked, capped at ssthresh, the rest in avoidance.
    let mut c = conn(8);
    c.ssthresh = 10;
    r.cong_avoid(&mut c, 4);
    assert_eq!((c.cwnd, c.cwnd_cnt), (10, 2));
}

/// Avoidance from the window after a loss, ten segments acknowledged per ms (an RTT of
/// about 0.1 s, so the window lags the curve little): when cwnd first reaches `target`, s.
pub(super) fn time_to_reach(cu: &mut Cubic, from: u32, target: u32) -> f64 {
    let mut c = conn(from);
    c.ssthresh = from;
    let mut t = 0;
    while t < 60_000 * MS {
        c.now = t;
        cu.cong_avoid(&mut c, 10);
        if c.cwnd >= target {
            return t as f64 / 1e9;
        }
        t += MS;
    }
    panic!("cwnd {} never reached {target}", c.cwnd);
}

#[test]
fn cubic_reduction_fast_convergence_and_k() {
    let c: f64 = 410.0 / 1024.0;
    let mut cu = Cubic::new(&mut conn(1000));
    // β = 717/1024; the first loss sets Wmax = cwnd.
    assert_eq!(cu.ssthresh(&conn(1000)), 700);
    assert_eq!(cu.last_max_cwnd, 1000);
    // W(t) = Wmax − C·(K − t)³ with K = cbrt((Wmax − cwnd)/C): the window is 50 below Wmax
    // at K − cbrt(50/C) (the Reno-friendly term stays far below the curve here).
    let k = ((1000.0 - 700.0) / c).cbrt();
    let want = k - (50.0 / c).cbrt();
    let p = time_to_reach(&mut cu, 700, 950);
    assert!(
        (p - want).abs() < 0.05 * want,
        "950 at {p:.3} s, expected {want:.3} s"
    );
    // A loss below Wmax: fast convergence, Wmax = cwnd·(1 + β)/2 = 800·1741/2048.
    assert_eq!(cu.ssthresh(&conn(800)), 800 * 717 / 1024);
    assert_eq!(cu.last_max_cwnd, 800 * 1741 / 2048);
    let k = ((680.0 - 560.0) / c).cbrt();
    let want = k - (20.0 / c).cbrt();
    let p = time_to_reach(&mut cu, 560, 660);
    assert!(
        (p - want).abs() < 0.05 * want,
        "660 at {p:.3} s, expected {want:.3} s"
    );
}

#[test]
fn cubic_tcp_friendly_region_grows_at_least_as_reno_would() {
    // Small window, short RTT: the cubic curve is flat, the Reno emulation
    // (3β'/(2−β') ≈ 0.53 segments per RTT with β' = 1 − 717/1024) sets the pace.
    let mut c = conn(20);
    c.ssthresh = 20;
    let mut cu = Cubic::new(&mut c);
    cu.ssthresh(&conn(28)); // Wmax 28 far above: the cubic term alone is slow at first
    let rtt = 10 * MS;
    let mut t = 0;
    for _ in 0..40 {
        // one RTT: cwnd ACKs, one segment each
        for _ in 0..c.cwnd {
            c.now = t;
            cu.cong_avoid(&mut c, 1);
        }
        t += rtt;
    }
    // 40 RTTs at ≥ 0.5 segments per RTT: at least +20 (the cubic term reaches only 28).
    assert!(c.cwnd >= 40, "cwnd {} after 40 RTTs", c.cwnd);
}

/// HyStart's ACK train on a flow in slow start with a 40 ms minimum delay, one ACK a ms
/// (closer than `hystart_ack_delta_us`): the time since the round began at which it ends
/// slow start, ms.
fn ack_train_exit_ms(paced: bool) -> u64 {
    let mut c = conn(20);
    c.pacing_rate = 1000.0; // computed by tcp_update_pacing_rate for every flow
    c.paced = paced;
    let mut cu = Cubic::new(&mut c);
    for ms in 1..100 {
        c.now = ms * MS;
        cu.pkts_acked(&mut c, 1, Some(40 * MS));
        if cu.found {
            assert_eq!(c.ssthresh, c.cwnd);
            return ms;
        }
    }
    panic!("no ACK train found");
}

#[test]
fn cubic_hystart_ack_train_halves_the_threshold_of_an_unpaced_sender() {
    // threshold = delay_min + hystart_ack_delay (min(1 ms, 4 x 64 KB at the rate)) = 41 ms,
    // halved when sk_pacing_status is SK_PACING_NONE: found once the train passes 20.5 ms.
    assert_eq!(ack_train_exit_ms(false), 21);
    // A paced sender (BBR's or sch_fq's pacing) waits for the whole 41 ms.
    assert_eq!(ack_train_exit_ms(true), 42);
}

#[test]
fn dctcp_alpha_follows_its_ewma_once_per_window() {
    let mut c = conn(10);
    let mut d = Dctcp::new(&c);
    assert_eq!(d.alpha, 1024);
    // One window (SND.UNA passes next_seq = 10): 100 delivered, 25 with ECE.
    c.una = 10;
    c.nxt = 20;
    c.delivered = 100;
    c.delivered_ce = 25;
    d.in_ack_event(&mut c);
    // α ← α − α/16 + (25 << 6)/100 = 1024 − 64 + 16.
    assert_eq!(d.alpha, 976);
    // Not again before SND.UNA passes the new window end (20).
    c.una = 15;
    c.delivered = 150;
    d.in_ack_event(&mut c);
    assert_eq!(d.alpha, 976);
    // The reduction: cwnd − cwnd·α/2048.
    c.cwnd = 100;
    assert_eq!(d.ssthresh(&c), 100 - ((100 * 976) >> 11));
    // Growth is per acknowledged segment (tcp_reno_cong_avoid), not per ACK.
    let mut c = conn(10);
    c.ssthresh = 10;
    for _ in 0..5 {
        d.cong_avoid(&mut c, 2);
    }
    assert_eq!(c.cwnd, 11);
}

/// A BBR flow of 40 ms (its window 40), and a rate sample of ten segments over one RTT.
fn bbr_40ms() -> (Conn, Bbr, RateSample) {
    let mut c = conn(40);
    c.srtt_ns = 40 * MS;
    c.min_rtt_ns = 40 * MS;
    let b = Bbr::new(&c, 0.5);
    let mut rs = RateSample::default();
    rs.delivered = Some(10);
    rs.interval = Some(40 * MS);
    rs.acked_sacked = 1;
    c.delivered = 10;
    (c, b, rs)
}

#[test]
fn bbr_conserves_packets_in_the_first_round_of_recovery_and_restores_the_window() {
    let (mut c, mut b, rs) = bbr_40ms();
    b.cong_control(&mut c, &rs);
    // Recovery begins: tcp_enter_recovery asks for ssthresh (BBR saves cwnd).
    let before = c.cwnd;
    b.ssthresh(&c);
    assert_eq!(b.prior_cwnd, before);
    c.ca_state = CaState::Recovery;
    c.in_flight = 20;
    let mut rs2 = rs;
    rs2.losses = 3;
    b.cong_control(&mut c, &rs2);
    // Packet conservation: cwnd = in_flight + acked.
    assert_eq!(c.cwnd, 21);
    // Leaving recovery restores the saved window.
    c.ca_state = CaState::Open;
    b.cong_control(&mut c, &rs);
    assert!(
        c.cwnd >= before,
        "cwnd {} restored to at least {before}",
        c.cwnd
    );
}

#[test]
fn cubic_hystart_tracks_rounds_below_the_low_window() {
    // Slow start from 10: one ACK per segment, the flights of 10, 20, 40 ... segments each
    // acknowledged in a train. The round that begins at the first ACK (SND.UNA past the
    // end_seq set at init) must end where the first flight ends (SND.NXT = 10 then), although
    // the window reaches `hystart_low_window` (16) only mid-round.
    let mut c = conn(10);
    c.nxt = 0; // at init, before the initial window leaves (tcp_init_transfer)
    let mut cu = Cubic::new(&mut c);
    c.nxt = 10;
    c.una = 1;
    c.now = 40 * MS;
    cu.pkts_acked(&mut c, 1, Some(40 * MS));
    assert_eq!(
        cu.end_seq, 10,
        "the first round ends with the initial window's flight"
    );
    // The window grows past 16 within the round: its end is not moved.
    for k in 2..=10 {
        c.una = k;
        c.cwnd = 9 + k as u32;
        c.nxt = 10 + 2 * (k - 1);
        c.now += MS;
        cu.pkts_acked(&mut c, 1, Some(40 * MS));
        assert_eq!(cu.end_seq, 10);
    }
    // The next ACK passes it: a new round, to the end of the second flight.
    c.una = 11;
    c.nxt = 30;
    c.now += MS;
    cu.pkts_acked(&mut c, 1, Some(40 * MS));
    assert_eq!(cu.end_seq, 30);
}

#[test]
fn bbr_pacing_rate_and_tso_goal_follow_their_inputs() {
    // Both are kept between calls (recomputed when an input changes): each new input must
    // give its own value, as the kernel's closed forms.
    let mut c = conn(10);
    c.srtt_ns = 40 * MS;
    c.min_rtt_ns = 40 * MS;
    let mut b = Bbr::new(&c, 0.5);
    let startup = |bw: u64| (bw as f64) * 739.0 / 256.0 * 1e6 / (1u64 << 24) as f64 * 0.99;
    for delivered in [100u64, 100, 200, 400] {
        let mut rs = RateSample::default();
        rs.delivered = Some(delivered);
        rs.interval = Some(40 * MS);
        rs.acked_sacked = 1;
        b.cong_control(&mut c, &rs);
        // Startup's gain 2.885 (739/256) on the windowed max, 1 % margin
        let bw = (delivered << 24) / 40_000;
        assert_eq!(c.pacing_rate, startup(bw), "{delivered} delivered in 40 ms");
    }
    // `tcp_tso_autosize`: about 1 ms of data a skb (sk_pacing_shift 10), at least 2 segments
    // (1 below 1.2 Mbit/s), at most 127.
    for (rate, mss, goal) in [
        (10_000.0, 1500, 9),
        (10.0, 1500, 1),
        (10_000.0, 1500, 9),
        (1e6, 1500, 127),
        (150.0, 1000, 2),
        (150.0, 999, 1),
    ] {
        c.pacing_rate = rate;
        c.mss = mss;
        assert_eq!(b.tso_segs(&c), goal, "{rate} segments/s of {mss} B");
    }
}

#[test]
fn bbr_does_not_postpone_probe_rtt_on_a_sample_equal_to_its_min_rtt() {
    // `bbr_update_min_rtt`: `rs->rtt_us < bbr->min_rtt_us` renews the stamp, not an equal sample
    // (Linux 5.10's "only postpone PROBE_RTT if RTT is < current min_rtt estimate"), so a flow
    // that keeps seeing its minimum enters ProbeRTT 10 s after the first such sample.
    let (mut c, mut b, mut rs) = bbr_40ms();
    rs.rtt = Some(40 * MS);
    b.cong_control(&mut c, &rs);
    c.now = 6_000 * MS;
    b.cong_control(&mut c, &rs); // equal to the estimate: no new stamp
    rs.rtt = Some(50 * MS);
    c.now = 9_500 * MS;
    b.cong_control(&mut c, &rs);
    assert_ne!(b.mode, super::bbr::Mode::ProbeRtt);
    c.now = 10_500 * MS; // 10.5 s after the first sample: expired
    b.cong_control(&mut c, &rs);
    assert_eq!(b.mode, super::bbr::Mode::ProbeRtt);
}
