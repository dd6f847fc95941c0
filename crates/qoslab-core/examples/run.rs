//! Runs a scenario file and prints per-flow throughput: `cargo run --release --example run -- FILE [SEED]`.
use qoslab_core::{jain_index, Simulation};

mod common;

fn main() {
    let args = common::args("run FILE [SEED]", 1, 1);
    let seed = common::seed(args.get(1));
    let sc = common::scenario(&args[0]);
    let t0 = std::time::Instant::now();
    let mut sim = Simulation::new(&sc, seed);
    let setup = t0.elapsed().as_secs_f64();
    sim.run();
    let r = sim.results();
    let wall = t0.elapsed().as_secs_f64();
    let thr: Vec<f64> = r.flows.iter().map(|f| f.throughput_bps).collect();
    for (f, fr) in sc.flows.iter().zip(&r.flows) {
        out!(
            "{:>8} {:>10.0} bps sent {:>6} drops {:>5} rtx {:>5} to {:>3} fr {:>4} cwnd {:>6.2}",
            f.name,
            fr.throughput_bps,
            fr.stats.sent_pkts,
            fr.stats.dropped_pkts,
            fr.stats.retransmits,
            fr.timeouts,
            fr.fast_retransmits,
            fr.final_cwnd
        );
    }
    let b = sc.measurement.bottleneck_idx * 2;
    out!(
        "jain {:.4} util {:.4} bottleneck drops {:?}",
        jain_index(&thr),
        r.links[b].utilization,
        r.links[b].stats.drops
    );
    out!(
        "memory: state {:.2} MB (packets {:.2}, links {:.2}, flows {:.2}, events {:.2}), series {:.2} MB, peak {} packets in flight",
        r.memory.state() as f64 / 1048576.0,
        r.memory.packets as f64 / 1048576.0,
        r.memory.links as f64 / 1048576.0,
        r.memory.flows as f64 / 1048576.0,
        r.memory.events as f64 / 1048576.0,
        r.memory.series as f64 / 1048576.0,
        r.peak_packets_in_flight
    );
    out!(
        "events {} hops {} wall {:.3}s (setup {:.3}s) {:.2} Mhops/s violations {:?}",
        r.events,
        r.packet_hops,
        wall,
        setup,
        r.packet_hops as f64 / wall / 1e6,
        r.violations
    );
}
