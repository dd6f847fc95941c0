//! FDD-RED unit tests: penalties, victim selection, deferred drops, the RTT estimator.

use super::*;
use crate::aqm::red::RedCurve;
use crate::units::Limit;

const MS: SimTime = 1_000_000;

fn params() -> RedParams {
    RedParams {
        curve: RedCurve {
            min_th: 25.0,
            max_th: 75.0,
            max_p: 0.01,
            gentle: false,
        },
        w_q: 0.002,
        wait: true,
        byte_mode: false,
        mean_pkt_size: 500,
        ecn: false,
        ptc: 250.0,
    }
}

fn fdd(rule: PenaltyRule, rtts_ms: &[u64]) -> FddRed {
    let mut a = FddRed::new(params(), rule, RttSource::Oracle);
    let r: Vec<SimTime> = rtts_ms.iter().map(|x| x * MS).collect();
    a.set_path_rtts(&r);
    a
}

/// Scripted arrivals: flow `arrivals[k]` arrives at k ms and RED asks for a drop; returns
/// the victims.
fn script(a: &mut FddRed, arrivals: &[u32]) -> Vec<u32> {
    arrivals
        .iter()
        .enumerate()
        .map(|(k, &f)| {
            let now = k as SimTime * MS;
            a.touch(now, f);
            a.penalize(now, f, &mut SimRng::derive(1, 1))
        })
        .collect()
}

#[test]
fn shares_spread_drops_evenly_over_equal_rtt_flows() {
    let mut a = fdd(PenaltyRule::Shares, &[100, 100, 100, 100]);
    // Every flow passes once, then flow 0 triggers every RED drop.
    for f in 0..4 {
        a.touch(0, f);
    }
    let v = script(&mut a, &[0; 8]);
    // Equal shares 1/4: ties go to the arriving flow, then to the lowest id.
    assert_eq!(v, vec![0, 1, 2, 3, 0, 1, 2, 3]);
    for f in &a.flows {
        assert!(f.penalty.abs() < 1e-12, "{}", f.penalty);
        assert_eq!(f.charged, 2);
    }
    assert_eq!(a.stats.immediate, 2);
    assert_eq!(a.stats.deferred, 6);
}

#[test]
fn shares_weight_drops_by_inverse_rtt() {
    // RTTs 20 and 80 ms: RTT_avg = 50 ms, weights 2.5 and 0.625, shares 0.8 and 0.2.
    let mut a = fdd(PenaltyRule::Shares, &[20, 80]);
    a.touch(0, 0);
    a.touch(0, 1);
    let v = script(&mut a, &[1; 10]);
    assert!((a.avg_rtt - 50.0 * MS as f64).abs() < 1e-6);
    let short = v.iter().filter(|&&x| x == 0).count();
    assert_eq!(short, 8, "{v:?}");
    // FDI-style balance: drops × RTT_i / RTT_avg equal, i.e. 8·20 = 2·80.
    assert_eq!(a.flows[0].charged * 20, a.flows[1].charged * 80);
    // The first decision: flow 1 accrues 0.2, flow 0 0.8 — flow 0 is the victim.
    assert_eq!(v[0], 0);
}

#[test]
fn random_victim_ignores_the_penalties() {
    // RTTs 20 and 80 ms: the penalty rule sends 8 of 10 drops to the short-RTT flow; drawn
    // uniformly, about half go to each, whatever flow triggered them.
    let mut a = fdd(PenaltyRule::Shares, &[20, 80]);
    a.victim_rule = VictimRule::Random;
    a.touch(0, 0);
    a.touch(0, 1);
    let mut rng = SimRng::derive(7, 3);
    let n = 4000;
    let short = (0..n)
        .filter(|_| {
            a.touch(0, 1);
            a.penalize(0, 1, &mut rng) == 0
        })
        .count();
    let frac = short as f64 / n as f64;
    assert!((frac - 0.5).abs() < 0.03, "{frac}");
    // A flow not seen during the last RTT_avg is never drawn.
    let mut b = fdd(PenaltyRule::Shares, &[100, 100, 100]);
    b.victim_rule = VictimRule::Random;
    b.touch(0, 0);
    b.touch(0, 2);
    b.touch(150 * MS, 1);
    b.touch(150 * MS, 2);
    assert!((0..200).all(|_| b.penalize(150 * MS, 1, &mut rng) != 0));
}

#[test]
fn flows_not_seen_for_rtt_avg_are_forgotten() {
    let mut a = fdd(PenaltyRule::Shares, &[100, 100]);
    a.touch(0, 0);
    a.touch(0, 1);
    let mut rng = SimRng::derive(1, 1);
    a.penalize(0, 0, &mut rng); // both accrue 0.5; flow 0 (arriving) pays
    assert!((a.flows[1].penalty - 0.5).abs() < 1e-12);
    // 150 ms later only flow 0 has passed: flow 1 is not eligible and not charged.
    a.touch(150 * MS, 0);
    assert_eq!(a.penalize(150 * MS, 0, &mut rng), 0);
    assert!((a.flows[1].penalty - 0.5).abs() < 1e-12);
    // When flow 1 reappears its state starts afresh.
    a.flows[1].owed = [1, 0];
    a.touch(160 * MS, 1);
    assert_eq!(a.flows[1].penalty, 0.0);
    assert_eq!(a.owed(1), 0);
    assert_eq!(a.stats.cancelled, 1);
}

#[test]
fn fig2_as_printed_recharges_the_last_victim() {
    // Equal RTTs: line 4 gives the last victim +1 at every decision and it pays 1, so the
    // arriving flow wins only when its own accrued penalty exceeds the victim's.
    let mut a = fdd(PenaltyRule::Fig2, &[100, 100, 100]);
    let v = script(&mut a, &[0, 1, 2, 1, 2, 1, 2]);
    // k=0: no previous drop, flow 0 +1 → victim 0 (pen 0).
    // k=1: flow 1 +1, last (0) +1 → tie 1 vs 1: arriving flow 1 wins (pen 0, flow 0 at 1).
    // k=2: flow 2 +1, last (1) +1 → 0:1, 1:1, 2:1 → arriving 2 (then 2:0).
    // k=3: flow 1 +1 → 2, last (2) +1 → 1 → victim 1 (1:1).
    // k=4: flow 2 +1 → 2, last (1) +1 → 2 → tie: arriving 2 (2:1).
    // k=5: flow 1 +1 → 3, last (2) +1 → 2 → victim 1 (1:2).
    // k=6: flow 2 +1 → 3, last (1) +1 → 3 → arriving 2 (2:2).
    assert_eq!(v, vec![0, 1, 2, 1, 2, 1, 2]);
    let p: Vec<f64> = a.flows.iter().map(|f| f.penalty).collect();
    assert_eq!(p, vec![1.0, 3.0, 2.0]);
    // Penalties grow by one per decision in total (two accruals, one payment).
    assert_eq!(p.iter().sum::<f64>(), 6.0);
}

#[test]
fn fig2_keeps_charging_a_short_rtt_victim() {
    // RTTs 25 and 100 ms: RTT_avg = 62.5 ms, weights 2.5 and 0.625. Once the short-RTT flow
    // has been the victim, line 4 adds 2.5 to it at every decision and it pays 1: its
    // penalty grows by 1.5 per decision and it takes every drop, whoever triggers them.
    let mut a = fdd(PenaltyRule::Fig2, &[25, 100]);
    a.touch(0, 1);
    let v = script(&mut a, &[0, 1, 1, 1, 1]);
    assert_eq!(v, vec![0, 0, 0, 0, 0]);
    assert!((a.flows[0].penalty - (2.5 - 1.0 + 4.0 * 1.5)).abs() < 1e-12);
    assert!((a.flows[1].penalty - 4.0 * 0.625).abs() < 1e-12);
}

fn view(n: u64) -> QueueView {
    QueueView {
        len_pkts: n,
        len_bytes: n * 500,
        limit: Limit::Packets(100),
        len_by_prec: [n, 0, 0],
    }
}

#[test]
fn a_deferred_drop_is_paid_by_the_victims_next_arrival() {
    let mut a = fdd(PenaltyRule::Shares, &[100, 100]);
    let mut rng = SimRng::derive(1, 1);
    // Hold the average above max_th: every arrival is a forced drop decision.
    a.red.est.avg = 80.0;
    a.red.est.idle = false;
    let p0 = PacketMeta::new(0, PacketKind::Data, 500, 0, 0);
    let p1 = PacketMeta::new(1, PacketKind::Data, 500, 0, 0);
    a.touch(0, 1);
    // Flow 0 arrives: shares 0.5/0.5, tie → arriving flow 0 dropped at once.
    assert_eq!(
        a.on_enqueue(MS, &p0, view(80), &mut rng),
        Verdict::ForcedDrop
    );
    // Flow 0 again: flow 1 now holds 1.0 > 0.5 → flow 1 owes; the arrival is admitted.
    assert_eq!(
        a.on_enqueue(2 * MS, &p0, view(80), &mut rng),
        Verdict::Enqueue
    );
    assert_eq!(a.owed(1), 1);
    // Flow 1's arrival triggers a decision (victim: flow 1 itself, tie at 0.5) and pays
    // one of its two owed drops.
    assert_eq!(
        a.on_enqueue(3 * MS, &p1, view(80), &mut rng),
        Verdict::ForcedDrop
    );
    assert_eq!(a.owed(1), 1);
    // A full buffer drops the arrival and pays the remaining owed drop.
    let full = QueueView {
        limit: Limit::Packets(80),
        ..view(80)
    };
    assert_eq!(a.on_enqueue(4 * MS, &p1, full, &mut rng), Verdict::Overflow);
    assert_eq!(a.owed(1), 0);
    assert_eq!(a.stats.decisions, 3);
    assert_eq!(a.stats.paid, 3);
}

#[test]
fn below_min_th_fdd_red_is_transparent() {
    let mut a = fdd(PenaltyRule::Shares, &[100]);
    let mut rng = SimRng::derive(1, 1);
    let p = PacketMeta::new(0, PacketKind::Data, 500, 0, 0);
    for k in 0..1000 {
        assert_eq!(
            a.on_enqueue(k * MS, &p, view(10), &mut rng),
            Verdict::Enqueue
        );
    }
    assert_eq!(a.stats.decisions, 0);
}

#[test]
fn estimator_adds_the_two_halves() {
    // Source → router: 40 ms; router → receiver and back: 30 ms; router → source: 40 ms.
    let mut e = RttEstimator::default();
    // data TSval 1000 seen at t = 40 ms; its ACK (TSval 5000, echo 1000) back at 70 ms.
    e.on_data(40 * MS, 1000, 0);
    assert_eq!(e.rtt(), None);
    e.on_ack(70 * MS, 5000, 1000);
    assert_eq!(e.down, Some(30.0 * MS as f64));
    assert_eq!(e.rtt(), None);
    // The source answers the ACK at 110 ms; the data echoing 5000 is seen at 150 ms.
    e.on_data(150 * MS, 2000, 5000);
    assert_eq!(e.up, Some(80.0 * MS as f64));
    assert_eq!(e.rtt(), Some(110.0 * MS as f64));
    // A second data echoing the same ACK gives no sample (the entry was consumed).
    e.on_data(151 * MS, 2001, 5000);
    assert_eq!(e.samples, 2);
    // Smoothing: a 50 ms downstream sample moves the half by 1/8 of the difference.
    e.on_ack(200 * MS, 6000, 2000);
    let d = 30.0 + 0.125 * (50.0 - 30.0);
    assert!((e.down.unwrap() - d * MS as f64).abs() < 1e-6);
}

#[test]
fn estimator_feeds_the_weights() {
    let mut a = FddRed::new(params(), PenaltyRule::Shares, RttSource::Estimator);
    let mut rng = SimRng::derive(1, 1);
    // Flow 0: 20 ms RTT, flow 1: 80 ms, each as one down sample + one up sample.
    for (f, half) in [(0u32, 10u64), (1, 40)] {
        let mut d = PacketMeta::new(f, PacketKind::Data, 500, 0, 0);
        d.created_at = 7;
        a.on_enqueue(0, &d, view(0), &mut rng);
        let mut ack = PacketMeta::new(f, PacketKind::Ack, 40, 0, 0);
        ack.created_at = 9;
        ack.ts_echo = 7;
        a.on_reverse(half * MS, &ack);
        let mut d2 = PacketMeta::new(f, PacketKind::Data, 500, 1, 0);
        d2.created_at = 11;
        d2.ts_echo = 9;
        a.on_enqueue(2 * half * MS, &d2, view(0), &mut rng);
    }
    assert_eq!(a.rtt_of(0), Some(20.0 * MS as f64));
    assert_eq!(a.rtt_of(1), Some(80.0 * MS as f64));
    a.update_avg_rtt(80 * MS);
    assert!((a.weight(0) / a.weight(1) - 4.0).abs() < 1e-12);
}

/// Scenario 3 of the paper (RTTs 20-100 ms) with an fdd_red bottleneck.
fn dumbbell(rtt_source: &str, delays: &str, limit: u32) -> crate::scenario::Scenario {
    let src = format!(
        r#"
name = "fdd"
duration = "30s"
[tcp]
packet_size = "500B"
window = 1000
[[node]]
name = "s{{i}}"
count = 5
[[node]]
name = "r1"
[[node]]
name = "r2"
[[node]]
name = "d{{i}}"
count = 5
[[link]]
name = "access{{i}}"
count = 5
a = "s{{i}}"
b = "r1"
bandwidth = "10Mbps"
delay = {delays}
queue = {{ type = "droptail", limit = "100pkts" }}
[[link]]
name = "bottleneck"
a = "r1"
b = "r2"
bandwidth = "1Mbps"
delay = "5ms"
queue_ab = {{ type = "fdd_red", limit = "{limit}pkts", min_th = 25, max_th = 75, max_p = 0.01, rtt_source = "{rtt_source}" }}
queue_ba = {{ type = "droptail", limit = "100pkts" }}
[[link]]
name = "exit{{i}}"
count = 5
a = "r2"
b = "d{{i}}"
bandwidth = "10Mbps"
delay = "1ms"
queue = {{ type = "droptail", limit = "100pkts" }}
[[flow]]
name = "ftp{{i}}"
count = 5
src = "s{{i}}"
dst = "d{{i}}"
start = "uniform(0s, 1s)"
"#
    );
    crate::scenario::Scenario::from_toml(&src, "fdd.toml").expect("valid")
}

const HETERO: &str = r#"["4ms", "14ms", "24ms", "34ms", "44ms"]"#;

fn run(rtt_source: &str, delays: &str) -> FddRed {
    run_with(rtt_source, delays, 100)
}

fn run_with(rtt_source: &str, delays: &str, limit: u32) -> FddRed {
    let sc = dumbbell(rtt_source, delays, limit);
    let mut sim = crate::sim::Simulation::new(&sc, 1);
    sim.run();
    // link 5 is the bottleneck; direction a→b
    match sim.aqm(10) {
        crate::aqm::AnyAqm::FddRed(a) => (**a).clone(),
        other => panic!("expected fdd_red, got {other:?}"),
    }
}

#[test]
fn in_a_simulation_the_oracle_gets_the_propagation_rtts() {
    let a = run("oracle", HETERO);
    let got: Vec<f64> = (0..5).map(|f| a.rtt_of(f).unwrap() / MS as f64).collect();
    assert_eq!(got, vec![20.0, 40.0, 60.0, 80.0, 100.0]);
    assert!(a.stats.decisions > 0);
    assert_eq!(
        a.stats.decisions,
        a.stats.immediate + a.stats.deferred,
        "{:?}",
        a.stats
    );
}

#[test]
fn in_a_simulation_the_estimator_tracks_propagation_plus_queueing() {
    let a = run("estimator", HETERO);
    for f in 0..5u32 {
        let prop = 20.0 + 20.0 * f as f64;
        let est = a.rtt_of(f).expect("an estimate") / MS as f64;
        // Propagation + serialisation (4 ms of a 500-byte packet at 1 Mbps, 0.4 ms on each
        // 10 Mbps link) + the bottleneck queue (up to 100 packets, 400 ms).
        assert!(
            est > prop + 4.0 && est < prop + 4.0 + 400.0,
            "flow {f}: {est} vs {prop}"
        );
        assert!(a.flows[f as usize].est.samples > 100);
    }
    // The order of the RTTs is recovered (the queueing delay is common to all flows).
    let e: Vec<f64> = (0..5).map(|f| a.rtt_of(f).unwrap()).collect();
    assert!(e.windows(2).all(|w| w[0] < w[1]), "{e:?}");
}

#[test]
fn in_a_simulation_the_oracle_window_forgets_bursty_flows() {
    // Equal RTTs: the configured RTT (100 ms) excludes the ~250 ms of queueing, so within
    // one RTT_avg only some flows pass; the others are forgotten between RED's sparse drop
    // decisions and every decision falls on the arriving flow, as under RED.
    let a = run("oracle", r#""44ms""#);
    assert!(a.stats.decisions > 10);
    assert_eq!(a.stats.deferred, 0, "{:?}", a.stats);
    // With the estimator's RTT_avg (propagation + queueing) the flows stay in the window.
    let e = run("estimator", r#""44ms""#);
    assert!(e.stats.deferred > e.stats.decisions / 2, "{:?}", e.stats);
}

#[test]
fn with_a_large_buffer_many_deferred_drops_are_cancelled() {
    // B = 200: the slow-start burst pushes RED's average above max_th; every arrival is a
    // drop decision, many charged to flows that then fall silent (timeouts) and are
    // forgotten with their owed drops. Fewer drops are executed than RED decided.
    let a = run_with("estimator", r#""44ms""#, 200);
    assert!(a.stats.decisions > 200, "{:?}", a.stats);
    assert!(a.stats.cancelled * 5 > a.stats.decisions, "{:?}", a.stats);
    assert!(a.stats.paid + a.stats.cancelled <= a.stats.decisions);
    // B = 100: few decisions, almost all paid.
    let b = run_with("estimator", r#""44ms""#, 100);
    assert!(
        b.stats.cancelled * 10 < b.stats.decisions.max(10),
        "{:?}",
        b.stats
    );
}
