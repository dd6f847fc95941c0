//! The module parameters (`tcp.cc.cubic`, `tcp.cc.dctcp` under the linux flavour) change what
//! tcp_cubic.c and tcp_dctcp.c do, each checked against a closed form on a scripted [`Conn`];
//! every test fails if the module ignores the parameter (its kernel default gives another
//! number).

use super::cubic::{Cubic, CubicParams};
use super::dctcp::{Dctcp, DctcpParams};
use super::tests::{conn, time_to_reach};
use super::{LinuxCc, LinuxCcParams, LinuxCongestion, INFINITE_SSTHRESH};
use crate::traffic::cc::TcpVariant;

const MS: u64 = 1_000_000;

fn cubic(p: CubicParams) -> Cubic {
    Cubic::with_params(&mut conn(1000), &p)
}

#[test]
fn cubic_beta_sets_the_window_kept_at_a_loss() {
    // ssthresh = cwnd·beta/1024: 512 halves the window, the kernel's 717 keeps 0.7 of it.
    let half = CubicParams {
        beta: 512,
        ..CubicParams::default()
    };
    assert_eq!(cubic(half).ssthresh(&conn(1000)), 500);
    assert_eq!(cubic(CubicParams::default()).ssthresh(&conn(1000)), 700);
    // Fast convergence below W_max: W_max = cwnd·(1024 + beta)/2048.
    let mut cu = cubic(half);
    cu.ssthresh(&conn(1000));
    cu.ssthresh(&conn(800));
    assert_eq!(cu.last_max_cwnd, 800 * 1536 / 2048);
    // fast_convergence = 0: W_max is the window at the loss.
    let mut cu = cubic(CubicParams {
        fast_convergence: 0,
        ..CubicParams::default()
    });
    cu.ssthresh(&conn(1000));
    cu.ssthresh(&conn(800));
    assert_eq!(cu.last_max_cwnd, 800);
}

#[test]
fn cubic_bic_scale_sets_c_and_so_k() {
    // C = bic_scale·10/1024; after a loss from W_max = 1000 to 700 the curve is 50 below W_max
    // at K − cbrt(50/C), K = cbrt(W_max·(1 − β)/C) = cbrt(300/C).
    let at = |bic_scale: u32| {
        let mut cu = cubic(CubicParams {
            bic_scale,
            ..CubicParams::default()
        });
        assert_eq!(cu.ssthresh(&conn(1000)), 700);
        let c = (bic_scale * 10) as f64 / 1024.0;
        let want = (300.0 / c).cbrt() - (50.0 / c).cbrt();
        (time_to_reach(&mut cu, 700, 950), want)
    };
    let (p41, want41) = at(41);
    let (p164, want164) = at(164);
    for (p, want) in [(p41, want41), (p164, want164)] {
        assert!(
            (p - want).abs() < 0.05 * want,
            "at {p:.3} s, expected {want:.3} s"
        );
    }
    // Four times C: K shrinks by cbrt(4).
    assert!((p41 / p164 - 4f64.cbrt()).abs() < 0.1, "{p41} / {p164}");
}

#[test]
fn cubic_without_tcp_friendliness_grows_as_the_cubic_curve_alone() {
    // As tests::cubic_tcp_friendly_region_grows_at_least_as_reno_would: with the region the
    // window passes 40 in 40 RTTs; without it only the cubic term (towards W_max 28 and on).
    let grow = |tcp_friendliness: u32| {
        let mut c = conn(20);
        c.ssthresh = 20;
        let mut cu = Cubic::with_params(
            &mut c,
            &CubicParams {
                tcp_friendliness,
                ..CubicParams::default()
            },
        );
        cu.ssthresh(&conn(28));
        let mut t = 0;
        for _ in 0..40 {
            for _ in 0..c.cwnd {
                c.now = t;
                cu.cong_avoid(&mut c, 1);
            }
            t += 10 * MS;
        }
        c.cwnd
    };
    assert!(grow(1) >= 40, "{}", grow(1));
    assert!(grow(0) < 35, "{}", grow(0));
}

/// A flow in slow start with a 40 ms minimum delay, one ACK a ms (an ACK train); in its
/// second round (from 51 ms) every RTT sample is 20 ms more (a delay increase): whether
/// HyStart ends slow start within 100 ms, and ssthresh then.
fn hystart_exit(p: CubicParams) -> (bool, u32) {
    let mut c = conn(20);
    let mut cu = Cubic::with_params(&mut c, &p);
    for ms in 1..100 {
        c.now = ms * MS;
        if ms == 51 {
            (c.una, c.nxt) = (21, 200); // SND.UNA passes the round's end: a new round
        }
        let rtt = if ms > 50 { 60 } else { 40 };
        cu.pkts_acked(&mut c, 1, Some(rtt * MS));
    }
    (cu.found, c.ssthresh)
}

#[test]
fn cubic_hystart_parameters_choose_what_ends_slow_start() {
    let d = CubicParams::default();
    assert_eq!(hystart_exit(d), (true, 20));
    // hystart = 0: slow start is left to the first loss.
    let off = CubicParams { hystart: 0, ..d };
    assert_eq!(hystart_exit(off), (false, INFINITE_SSTHRESH));
    // A low window above cwnd keeps HyStart out.
    let high = CubicParams {
        hystart_low_window: 21,
        ..d
    };
    assert_eq!(hystart_exit(high), (false, INFINITE_SSTHRESH));
    // ACKs 1 ms apart are no train with hystart_ack_delta_us < 1000, but the delay still
    // ends it; with hystart_detect = 1 (train only) and no train, nothing does.
    let short = CubicParams {
        hystart_ack_delta_us: 500,
        ..d
    };
    assert_eq!(hystart_exit(short), (true, 20));
    let train_only = CubicParams {
        hystart_detect: 1,
        ..short
    };
    assert_eq!(hystart_exit(train_only), (false, INFINITE_SSTHRESH));
}

#[test]
fn cubic_initial_ssthresh_is_set_at_init() {
    let mut c = conn(10);
    let p = LinuxCcParams::Cubic(CubicParams {
        initial_ssthresh: 30,
        ..CubicParams::default()
    });
    LinuxCc::new(TcpVariant::Cubic, &mut c, 0.0, Some(&p));
    assert_eq!(c.ssthresh, 30);
    let mut c = conn(10);
    LinuxCc::new(TcpVariant::Cubic, &mut c, 0.0, None);
    assert_eq!(c.ssthresh, INFINITE_SSTHRESH);
}

/// α (of 1024) after `n` windows in which every delivered segment carried ECE, from
/// `dctcp_alpha_on_init` 0 with `dctcp_shift_g` `shift`.
fn alpha_after(shift: u32, n: u64) -> u32 {
    let mut c = conn(10);
    let p = DctcpParams {
        dctcp_shift_g: shift,
        dctcp_alpha_on_init: 0,
    };
    let mut d = Dctcp::with_params(&c, &p);
    assert_eq!(d.alpha, 0);
    for w in 1..=n {
        c.una = 10 * w as i64;
        c.nxt = c.una + 10;
        c.delivered = 10 * w;
        c.delivered_ce = 10 * w;
        d.in_ack_event(&mut c);
    }
    d.alpha
}

#[test]
fn dctcp_shift_g_sets_the_gain_of_alphas_ewma() {
    // α_n = 1024·(1 − (1 − g)^n) with g = 2^−shift, to the integer arithmetic's rounding
    // (at most one unit a window).
    for (shift, n) in [(4, 3), (4, 10), (2, 3), (1, 2)] {
        let g = 1.0 / f64::from(1u32 << shift);
        let want = 1024.0 * (1.0 - (1.0 - g).powi(n as i32));
        let got = alpha_after(shift, n);
        assert!(
            (f64::from(got) - want).abs() <= n as f64,
            "shift {shift}, {n}: {got} vs {want:.1}"
        );
    }
    // The kernel's g = 1/16 and g = 1/4 are far apart after three windows (180 vs 592).
    assert!(alpha_after(2, 3) > 3 * alpha_after(4, 3));
    // dctcp_alpha_on_init (capped at 1024) is α before any window: 0 cuts nothing.
    let c = conn(100);
    let zero = DctcpParams {
        dctcp_alpha_on_init: 0,
        ..DctcpParams::default()
    };
    assert_eq!(Dctcp::with_params(&c, &zero).ssthresh(&c), 100);
    assert_eq!(Dctcp::new(&c).ssthresh(&c), 50);
}
