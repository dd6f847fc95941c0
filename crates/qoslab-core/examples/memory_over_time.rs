//! Runs a scenario in steps of simulated time and prints, after each step, the simulation's
//! state by part (allocated capacity, as `Simulation::memory` counts it), the packets alive,
//! and the packet-hops and wall time of the step: does memory stay flat once the flows are
//! past their warm-up, and does the cost of a hop?
//!
//! `cargo run --release -p qoslab-core --example memory_over_time -- FILE [SEED] [STEP_S]`
//!
//! A bench workload as a file, longer than the bench runs it (docs/performance.md, "After the
//! warm-up"):
//!
//! ```sh
//! mkdir -p build
//! .venv/bin/python -c "from qoslab.bench.workloads import workloads; open('build/d10k-40s.toml', 'w').write(
//!     workloads()['red-10000flows-10Gbps-2s'].with_overrides(['duration=40s']).text)"
//! ```
//!
//! Packet-hops are counted as `Simulation::packet_hops` counts them mid-run: they lag by what
//! lazy directions have not yet counted (at most the packets in their lines), so a step's
//! count is off by the change in that lag, not by the lag.
use qoslab_core::Simulation;

mod common;

fn mb(b: usize) -> f64 {
    b as f64 / 1048576.0
}

fn main() {
    let args = common::args("memory_over_time FILE [SEED] [STEP_S]", 1, 2);
    let seed = common::seed(args.get(1));
    let step_s: f64 = match args.get(2).map(|s| s.parse::<f64>()) {
        None => 1.0,
        Some(Ok(s)) if s.is_finite() && s >= 1e-6 => s,
        _ => {
            eprintln!("STEP_S {:?}: a number of seconds, at least 1e-6", args[2]);
            std::process::exit(2);
        }
    };
    let sc = common::scenario(&args[0]);
    let step_ns = (step_s * 1e9).round().min(u64::MAX as f64) as u64;
    let mut sim = Simulation::new(&sc, seed);
    out!(
        "{:>7} {:>9} {:>8} {:>8} {:>8} {:>8} {:>9} {:>12} {:>8} {:>9}",
        "time s",
        "state MB",
        "packets",
        "links",
        "flows",
        "events",
        "alive",
        "hops",
        "wall s",
        "M hops/s"
    );
    let mut t = 0u64;
    let mut hops_before = 0u64;
    while t < sc.duration_ns {
        t = t.saturating_add(step_ns).min(sc.duration_ns);
        let w0 = std::time::Instant::now();
        sim.run_until(t);
        let wall = w0.elapsed().as_secs_f64();
        let hops = sim.packet_hops();
        let m = sim.memory();
        out!(
            "{:>7.1} {:>9.1} {:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>9} {:>12} {:>8.3} {:>9.2}",
            t as f64 / 1e9,
            mb(m.state()),
            mb(m.packets),
            mb(m.links),
            mb(m.flows),
            mb(m.events),
            sim.packets_alive(),
            hops - hops_before,
            wall,
            (hops - hops_before) as f64 / wall / 1e6
        );
        hops_before = hops;
    }
}
