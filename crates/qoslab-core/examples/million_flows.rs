//! A million short TCP transfers through one arrival process, the simulation's memory printed
//! as they finish: `cargo run --release --example million_flows`. The state must stay flat:
//! finished connections free their slots and their records are taken out (as the Python
//! binding does between slices of simulated time).
use qoslab_core::{Scenario, Simulation};

mod common;

const SCENARIO: &str = r#"
name = "million-flows"
duration = "520s"
[tcp]
window = 1000
[[node]]
name = "a"
[[node]]
name = "b"
[[link]]
a = "a"
b = "b"
bandwidth = "100Mbps"
delay = "5ms"
queue = { type = "red", limit = "500pkts", min_th = 50, max_th = 150, max_p = 0.1 }
[[arrivals]]
name = "short"
src = "a"
dst = "b"
arrival_rate = 2000
size = { dist = "pareto", mean = "4KB", shape = 1.5 }
"#;

fn main() {
    let sc = Scenario::from_toml(SCENARIO, "million_flows").expect("valid");
    let mut sim = Simulation::new(&sc, 1);
    let t0 = std::time::Instant::now();
    let mut finished = 0usize;
    out!(
        "{:>8} {:>10} {:>14} {:>10}",
        "time s",
        "finished",
        "state bytes",
        "wall s"
    );
    for step in 1..=26u64 {
        sim.run_until(step * 20_000_000_000);
        finished += sim.take_records().len();
        if step % 5 == 1 || step == 26 {
            out!(
                "{:>8} {:>10} {:>14} {:>10.1}",
                step * 20,
                finished,
                sim.memory().state(),
                t0.elapsed().as_secs_f64()
            );
        }
    }
}
