//! MMPP-2 against its closed forms: the mean rate (λ1·r2 + λ2·r1)/(r1 + r2) and the index of
//! dispersion of counts (Fischer & Meier-Hellstern 1993), over long runs of the generator; a
//! scenario reads it through the registry and runs it.

use super::*;
use crate::units::NS_PER_SEC;

/// Arrival times (ns) of `n` gaps of a source from seed `seed`, the first at 0.
fn arrivals(m: &Mmpp2, seed: u64, n: usize) -> Vec<u64> {
    let mut g = m.build();
    let mut rng = SimRng::derive(seed, 42);
    let mut t = 0u64;
    let mut out = Vec::with_capacity(n + 1);
    out.push(0);
    for _ in 0..n {
        t += g.gap(1000, &mut rng);
        out.push(t);
    }
    out
}

/// (mean rate per second, index of dispersion of the counts in windows of `w` seconds) over
/// the whole windows of `times`.
fn rate_and_dispersion(times: &[u64], w: f64) -> (f64, f64) {
    let w_ns = (w * NS_PER_SEC as f64) as u64;
    let windows = (*times.last().unwrap() / w_ns) as usize;
    let mut counts = vec![0f64; windows];
    for &t in times {
        if let Some(c) = counts.get_mut((t / w_ns) as usize) {
            *c += 1.0;
        }
    }
    let n = windows as f64;
    let mean = counts.iter().sum::<f64>() / n;
    let var = counts.iter().map(|c| (c - mean) * (c - mean)).sum::<f64>() / (n - 1.0);
    (mean / w, var / mean)
}

const BURSTY: Mmpp2 = Mmpp2 {
    lambda1: 1000.0,
    lambda2: 200.0,
    r1: 20.0,
    r2: 20.0,
};

#[test]
fn the_mean_rate_and_the_dispersion_are_the_closed_forms() {
    // λ̄ = (1000·20 + 200·20)/40 = 600/s; I(∞) = 1 + 2·800²·400/(40³·600) = 14.33.
    let m = BURSTY;
    assert_eq!(m.mean_rate(), 600.0);
    let times = arrivals(&m, 7, 1_200_000); // about 2,000 s
    let (rate, idc) = rate_and_dispersion(&times, 1.0);
    // The rate's standard error over T seconds is sqrt(I(∞)·λ̄/T) ≈ 2.1/s: allow 5 of them.
    let t = *times.last().unwrap() as f64 / 1e9;
    let sigma = (m.dispersion(1e6) * m.mean_rate() / t).sqrt();
    assert!(
        (rate - 600.0).abs() < 5.0 * sigma,
        "rate {rate} against 600 (σ {sigma})"
    );
    // I(1 s) = 1 + 13.33·(1 − (1 − e^−40)/40) = 14.0; the estimate over ~2,000 windows is within
    // a few percent (windows 1 s apart are all but independent: the chain mixes in 1/40 s).
    let want = m.dispersion(1.0);
    assert!((want - 14.0).abs() < 0.01, "{want}");
    assert!((idc - want).abs() < 0.2 * want, "dispersion {idc} against {want}");
}

#[test]
fn equal_rates_are_a_poisson_process() {
    // λ1 = λ2: the modulation changes nothing, the counts are Poisson (dispersion 1).
    let m = Mmpp2 {
        lambda1: 600.0,
        lambda2: 600.0,
        ..BURSTY
    };
    assert_eq!(m.dispersion(1.0), 1.0);
    let (rate, idc) = rate_and_dispersion(&arrivals(&m, 7, 1_200_000), 1.0);
    assert!((rate - 600.0).abs() < 5.0 * (600.0f64 / 2000.0).sqrt(), "{rate}");
    // The sample variance-to-mean ratio of ~2,000 Poisson counts: standard error √(2/2000).
    assert!((idc - 1.0).abs() < 0.15, "dispersion {idc}");
}

#[test]
fn the_chain_moves_between_its_states() {
    // With the chain stuck in one state the rate would be 1000 or 200 and the counts Poisson;
    // the time spent in state 1 is r2/(r1+r2) of the run, here 1/5 with r1 = 4·r2.
    let m = Mmpp2 {
        r1: 40.0,
        r2: 10.0,
        ..BURSTY
    };
    assert_eq!(m.mean_rate(), (1000.0 * 10.0 + 200.0 * 40.0) / 50.0);
    let times = arrivals(&m, 3, 720_000); // about 2,000 s at 360/s
    let (rate, idc) = rate_and_dispersion(&times, 1.0);
    let t = *times.last().unwrap() as f64 / 1e9;
    let sigma = (m.dispersion(1e6) * m.mean_rate() / t).sqrt();
    assert!((rate - 360.0).abs() < 5.0 * sigma, "rate {rate} (σ {sigma})");
    let want = m.dispersion(1.0);
    assert!((idc - want).abs() < 0.2 * want, "dispersion {idc} against {want}");
}

#[test]
fn a_seed_gives_the_same_arrivals_and_another_seed_others() {
    let a = arrivals(&BURSTY, 11, 10_000);
    assert_eq!(a, arrivals(&BURSTY, 11, 10_000));
    assert_ne!(a, arrivals(&BURSTY, 12, 10_000));
}

const SCENARIO: &str = r#"
name = "mmpp2"
duration = "20s"
[[node]]
name = "a"
[[node]]
name = "b"
[[link]]
a = "a"
b = "b"
bandwidth = "100Mbps"
delay = "1ms"
[[flow]]
name = "m"
src = "a"
dst = "b"
type = "mmpp2"
packet_size = "100B"
"#;

#[test]
fn a_scenario_reads_it_runs_it_and_refuses_bad_keys() {
    let src = format!("{SCENARIO}lambda1 = 1000\nlambda2 = 200\nr1 = 20\nr2 = 20\n");
    let sc = crate::Scenario::from_toml(&src, "mmpp2.toml").unwrap();
    assert_eq!(sc.flows[0].kind, "mmpp2");
    let mut sim = crate::Simulation::new(&sc, 5);
    sim.run();
    let sent = sim.results().flows[0].stats.sent_pkts as f64;
    // 20 s at 600/s: 12,000 packets, σ = √(I·λ̄·T) ≈ 415 (I(20 s) ≈ 14.3).
    assert!((sent - 12_000.0).abs() < 5.0 * 415.0, "{sent}");
    for (extra, key, words) in [
        ("lambda1 = 1000\nlambda2 = 200\nr1 = 20\n", "flow[0]", "needs `r2`"),
        ("lambda1 = 0\nlambda2 = 0\nr1 = 1\nr2 = 1\n", "flow[0].lambda1", "both 0"),
        ("lambda1 = 1\nlambda2 = 1\nr1 = 0\nr2 = 1\n", "flow[0].r1", "must be in (0"),
        ("lambda1 = -1\nlambda2 = 1\nr1 = 1\nr2 = 1\n", "flow[0].lambda1", "must be in [0"),
        ("lambda1 = 1\nlambda2 = 1\nr1 = 1\nr2 = 1\nrate = \"1Mbps\"\n", "flow[0].rate", "not a key"),
    ] {
        let e = crate::Scenario::from_toml(&format!("{SCENARIO}{extra}"), "m.toml").unwrap_err();
        assert!(e.key.starts_with(key) && e.message.contains(words), "{e}");
        assert!(e.line.is_some(), "{e}");
    }
}
