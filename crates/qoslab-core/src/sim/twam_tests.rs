//! TWAM → DWRED signalling through the simulator: the window a TWAM tick computes reaches every
//! DWRED queue that names it, after that queue's signalling delay, and sets its thresholds.

use super::*;
use crate::aqm::Dwred;
use crate::conditioner::AnyMeter;

const LSP: &str = r#"
name = "twam-lsp"
duration = "10s"
tcp = { packet_size = "1000B", window = 1000 }

[[node]]
name = "s{i}"
count = 2
[[node]]
name = "r1"
[[node]]
name = "r2"
[[node]]
name = "r3"
[[node]]
name = "d{i}"
count = 2

[[link]]
count = 2
a = "s{i}"
b = "r1"
bandwidth = "100Mbps"
delay = "1ms"

[[link]]
name = "r1-r2"
a = "r1"
b = "r2"
bandwidth = "10Mbps"
delay = "10ms"
queue_ab = { type = "dwred", limit = "200pkts", signal = "ingress" }

[[link]]
name = "r2-r3"
a = "r2"
b = "r3"
bandwidth = "10Mbps"
delay = "10ms"
queue_ab = { type = "dwred", limit = "200pkts", signal = "ingress", signal_delay = "10ms" }

[[link]]
count = 2
a = "r3"
b = "d{i}"
bandwidth = "100Mbps"
delay = "1ms"

[[flow]]
name = "f{i}"
count = 2
src = "s{i}"
dst = "d{i}"
dscp = "AF11"

[[conditioner]]
name = "ingress"
link = "r1-r2"
meter = { type = "twam", rates = { f0 = "2Mbps", f1 = "6Mbps" }, rtt = "46ms", window_source = "oracle" }
"#;

fn dwred(sim: &Simulation, dir: usize) -> &Dwred {
    match &sim.dirs[dir].aqm {
        AnyAqm::Dwred(d) => d,
        other => panic!("direction {dir} is not DWRED: {other:?}"),
    }
}

fn twam(sim: &Simulation) -> &crate::conditioner::Twam {
    match sim.conds[0].meters[0].as_ref() {
        Some(AnyMeter::Twam(t)) => t,
        _ => panic!("conditioner 0 is not a TWAM"),
    }
}

#[test]
fn the_twam_window_reaches_each_dwred_queue_after_its_delay() {
    let sc = Scenario::from_toml(LSP, "lsp.toml").expect("valid scenario");
    let mut sim = Simulation::new(&sc, 1);
    let (hop1, hop2) = (2 * 2, 3 * 2); // links r1-r2 and r2-r3, direction ab
    assert_eq!(dwred(&sim, hop1).thresholds(), (0.15 * 200.0, 200.0));
    // Ticks every 46 ms. Just after the 40th tick the first hop has its signal, the second
    // (10 ms later) still the previous one.
    let tick = 46_000_000u64;
    sim.run_until(40 * tick);
    let w40 = twam(&sim).aggregate_window();
    assert!(w40 > 1.0, "{w40}");
    assert_eq!(twam(&sim).intervals, 40);
    assert_eq!(dwred(&sim, hop1).thresholds().1, w40 as f32 as f64);
    assert_eq!(dwred(&sim, hop1).updates, 40);
    assert_eq!(dwred(&sim, hop2).updates, 39);
    sim.run_until(40 * tick + 10_000_000);
    assert_eq!(dwred(&sim, hop2).updates, 40);
    let (lo, hi) = dwred(&sim, hop2).thresholds();
    assert_eq!(hi, w40 as f32 as f64);
    assert!((lo - 0.15 * hi).abs() < 1e-9);
    sim.run();
    assert!(sim.results().violations.is_empty());
}
