//! CoDel, FQ-CoDel, PIE and step marking end to end, each against the same bottleneck with a
//! tail-drop queue of the same buffer (the mechanism disabled): TCP flows over a 10 Mbit/s,
//! 100 ms bottleneck with a 1000-packet buffer, where tail drop builds a standing queue of
//! hundreds of milliseconds.

mod common;

use common::Dumbbell;
use qoslab_core::{RunResults, Scenario, Simulation};

/// `n` Reno flows (and, with `cbr`, a 64 kbit/s CBR flow) over the bottleneck with queue
/// table `queue`; returns the results and the bottleneck direction's index.
fn run(queue: &str, n: usize, cbr: bool, tcp: &str, seed: u64) -> (RunResults, usize) {
    let cbr_flow = if cbr {
        r#"
[[flow]]
name = "voice"
type = "cbr"
src = "s0"
dst = "d0"
rate = "64kbps"
packet_size = "200B"
"#
    } else {
        ""
    };
    let src = Dumbbell {
        n,
        tcp,
        packet_size: "1000B",
        bandwidth: "10Mbps",
        delay: "48ms",
        queue,
        access_queue: "",
        duration: "40s",
        start: "uniform(0s, 1s)",
        measure_from: "10s",
        extra: cbr_flow,
    }
    .toml();
    let sc = Scenario::from_toml(&src, "aqm.toml").unwrap_or_else(|e| panic!("{e}"));
    let mut sim = Simulation::new(&sc, seed);
    sim.run();
    let r = sim.results();
    let b = sc.measurement.bottleneck_idx * 2;
    (r, b)
}

/// Mean waiting time (s) of the packets that began transmission in the window.
fn mean_wait(r: &RunResults, b: usize) -> f64 {
    let s = &r.links[b].stats;
    s.window_wait_ns as f64 / s.window_admitted as f64 / 1e9
}

const TAIL: &str = r#"{ type = "droptail", limit = "1000pkts" }"#;

#[test]
fn codel_drives_a_standing_queue_to_its_target() {
    let (tail, b) = run(TAIL, 5, false, "", 1);
    let (codel, _) = run(
        r#"{ type = "codel", limit = "1000pkts", target = "5ms", interval = "100ms" }"#,
        5,
        false,
        "",
        1,
    );
    let (t, c) = (mean_wait(&tail, b), mean_wait(&codel, b));
    eprintln!(
        "mean queueing delay: droptail {:.1} ms, codel {:.1} ms; utilisation {:.3} / {:.3}",
        t * 1e3,
        c * 1e3,
        tail.links[b].utilization,
        codel.links[b].utilization
    );
    assert!(t > 0.2, "tail drop builds a standing queue: {t} s");
    // CoDel keeps the standing queue near its 5 ms target (above it while it probes for the
    // drop rate; never the tail-drop queue's hundreds of ms), at a small cost in utilisation.
    assert!((0.003..0.020).contains(&c), "codel mean delay {c} s");
    assert!(
        codel.links[b].stats.drops[0] > 0,
        "CoDel's drops are early drops"
    );
    assert!(codel.links[b].utilization > 0.85);
}

#[test]
fn fq_codel_isolates_a_sparse_flow_from_bulk_flows() {
    let (tail, b) = run(TAIL, 4, true, "", 2);
    let (codel, _) = run(r#"{ type = "codel", limit = "1000pkts" }"#, 4, true, "", 2);
    let (fq, _) = run(
        r#"{ type = "fq_codel", limit = "1000pkts" }"#,
        4,
        true,
        "",
        2,
    );
    let voice = |r: &RunResults| r.flows[4].delay;
    let (dt, dc, df) = (voice(&tail), voice(&codel), voice(&fq));
    eprintln!(
        "voice one-way delay p99: droptail {:.1} ms, codel {:.1} ms, fq_codel {:.1} ms",
        dt.p99_s * 1e3,
        dc.p99_s * 1e3,
        df.p99_s * 1e3
    );
    // The propagation delay is 50 ms and the voice packet's own serialisation 0.16 ms: under
    // FQ-CoDel the voice flow is a new flow at each packet and waits for at most one bulk
    // packet (0.8 ms); in a shared FIFO it waits for the bulk flows' queue.
    assert!(df.p99_s < 0.0525, "fq_codel voice p99 {} s", df.p99_s);
    assert!(dc.p99_s > df.p99_s + 0.003, "codel shares its queue");
    assert!(dt.p99_s > 0.2);
    // The bulk flows still fill the link.
    assert!(fq.links[b].utilization > 0.9);
}

#[test]
fn pie_controls_the_queueing_delay_around_its_target() {
    let (tail, b) = run(TAIL, 5, false, "", 3);
    let (pie, _) = run(
        r#"{ type = "pie", limit = "1000pkts", target = "15ms" }"#,
        5,
        false,
        "",
        3,
    );
    let (t, p) = (mean_wait(&tail, b), mean_wait(&pie, b));
    eprintln!(
        "mean queueing delay: droptail {:.1} ms, pie {:.1} ms; utilisation {:.3}",
        t * 1e3,
        p * 1e3,
        pie.links[b].utilization
    );
    assert!((0.005..0.035).contains(&p), "pie mean delay {p} s");
    assert!(t > 0.2);
    assert!(pie.links[b].stats.drops[0] > 0);
}

#[test]
fn step_marking_keeps_ecn_flows_lossless_and_the_queue_near_the_threshold() {
    let step = r#"{ type = "step", limit = "1000pkts", threshold = "20pkts" }"#;
    let (ecn, b) = run(step, 5, false, ", ecn = true", 4);
    let s = &ecn.links[b].stats;
    let w = mean_wait(&ecn, b);
    eprintln!(
        "step K=20: marks {}, drops {}, mean wait {:.1} ms",
        s.marks,
        s.total_drops(),
        w * 1e3
    );
    assert!(s.marks > 100);
    assert_eq!(
        s.total_drops(),
        0,
        "ECN-capable Reno flows never overflow the buffer"
    );
    // Reno halves on each mark: the queue swings below and a little above K = 20 packets
    // (16 ms at 10 Mbit/s).
    assert!(w < 0.03, "mean wait {w} s");
    // Without ECN the same queue never marks: tail drop only.
    let (plain, _) = run(step, 5, false, "", 4);
    assert_eq!(plain.links[b].stats.marks, 0);
    assert!(plain.links[b].stats.total_drops() > 0);
}
