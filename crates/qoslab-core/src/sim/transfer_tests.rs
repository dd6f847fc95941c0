//! Finite transfers and arrival processes, end to end.

use crate::scenario::Scenario;
use crate::sim::Simulation;

fn run(toml: &str, seed: u64) -> (Simulation, crate::RunResults) {
    let sc = Scenario::from_toml(toml, "<test>").expect("valid scenario");
    let mut sim = Simulation::new(&sc, seed);
    sim.run();
    let r = sim.results();
    (sim, r)
}

fn one_link(extra: &str) -> String {
    let limit = if extra.contains("load = 0.9") {
        "20pkts"
    } else {
        "10000pkts"
    };
    format!(
        r#"
name = "t"
duration = "10s"
[tcp]
window = 10000
[[node]]
name = "a"
[[node]]
name = "b"
[[link]]
a = "a"
b = "b"
bandwidth = "100Mbps"
delay = "10ms"
queue = {{ type = "droptail", limit = "{limit}" }}
{extra}
"#
    )
}

/// A transfer of n segments on an idle path, with an initial window of 2 after the SYN and
/// one more segment per ACK (slow start, no delayed ACKs), takes the SYN's round trip and R
/// more, where R is the least with 2 + 4 + … + 2^R ≥ n; each round adds at most one
/// serialisation time per segment on top of the propagation round trip.
#[test]
fn a_finite_flow_completes_in_the_slow_start_rounds() {
    for (n, rounds) in [
        (1u64, 1u64),
        (2, 1),
        (3, 2),
        (6, 2),
        (7, 3),
        (100, 6),
        (126, 6),
        (127, 7),
    ] {
        let size = n * 1000;
        let sc = one_link(&format!(
            "[[flow]]\nsrc = \"a\"\ndst = \"b\"\nsize = \"{size}B\"\nstart = \"1s\"\n"
        ));
        let (_, r) = run(&sc, 1);
        assert_eq!(r.records.len(), 1, "n = {n}");
        let rec = r.records[0];
        assert_eq!(rec.segments, n);
        let fct = rec.end_ns.expect("finished") - rec.start_ns;
        let rtt = 20_000_000u64;
        let tx = 80_000u64; // 1000 B at 100 Mbit/s
        let lo = (1 + rounds) * rtt;
        let hi = lo + (rounds + 1) * 2 * tx + 2 * (1 << rounds) * tx;
        assert!(
            (lo..=hi).contains(&fct),
            "n = {n}: FCT {fct} ns outside [{lo}, {hi}] ({rounds} rounds after the SYN)"
        );
        assert!(rec.ideal_ns <= fct, "the ideal FCT is a lower bound");
        assert_eq!(r.flows[0].stats.delivered_pkts, n + 1, "SYN and n segments");
    }
}

/// Arrivals are accounted for: each is refused, completed or still running at the end; a
/// slot is reused only once its connection's packets are gone; the conservation laws hold.
#[test]
fn arrivals_reuse_slots_and_account_for_every_flow() {
    let sc = one_link(
        r#"
[[arrivals]]
name = "web"
src = "a"
dst = "b"
load = 0.9
size = { dist = "exponential", mean = "50KB" }
max_active = 4
"#,
    );
    let (_, r) = run(&sc, 3);
    assert!(r.violations.is_empty(), "{:?}", r.violations);
    let p = r.processes[0];
    let unfinished = r.records.iter().filter(|x| x.end_ns.is_none()).count() as u64;
    let finished = r.records.len() as u64 - unfinished;
    assert_eq!(finished, p.completed);
    assert_eq!(p.arrivals, p.completed + p.refused + unfinished);
    assert!(p.arrivals > 500, "{p:?}");
    assert!(p.refused > 0, "4 slots at load 0.9 refuse some: {p:?}");
    assert!(
        r.flows[0].timeouts > 0,
        "a 20-packet buffer at load 0.9 times out"
    );
    assert!(p.peak_active <= 4);
    // One row for the process, its bytes those of every connection.
    assert_eq!(r.flows.len(), 1);
    let sizes: u64 = r
        .records
        .iter()
        .filter(|x| x.end_ns.is_some())
        .map(|x| x.segments)
        .sum();
    assert!(r.flows[0].stats.delivered_pkts >= sizes);
    // The slots' counters run on across connections: the window's counts are differences of
    // snapshots and never wrap.
    assert!(r.flows[0].window.timeouts <= r.flows[0].timeouts);
    assert!(r.flows[0].window.fast_retransmits <= r.flows[0].fast_retransmits);
    let per_transfer: u64 = r.records.iter().map(|x| x.timeouts).sum();
    assert_eq!(per_transfer, r.flows[0].timeouts);
    // Connection ids are the arrival numbers of the accepted arrivals, each once.
    let mut ids: Vec<u64> = r.records.iter().map(|x| x.id).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), r.records.len());
}

/// The simulation's memory does not grow with the number of finished flows: 40,000 short
/// transfers, state measured after 10,000 and after 40,000.
#[test]
fn memory_stays_flat_over_finished_flows() {
    let sc = Scenario::from_toml(
        &one_link(
            r#"
[[arrivals]]
name = "web"
src = "a"
dst = "b"
arrival_rate = 2000
size = "5KB"
"#,
        )
        .replace("duration = \"10s\"", "duration = \"20s\""),
        "<test>",
    )
    .unwrap();
    let mut sim = Simulation::new(&sc, 1);
    let mut finished = 0;
    sim.run_until(5_000_000_000);
    finished += sim.take_records().len();
    let early = sim.memory().state();
    sim.run_until(20_000_000_000);
    finished += sim.take_records().len();
    let late = sim.memory().state();
    assert!(finished > 39_000, "{finished}");
    assert!(
        late as f64 <= early as f64 * 1.05,
        "state grew from {early} to {late} bytes"
    );
}

/// A transfer stopped before its end is not complete: its record has no end.
#[test]
fn a_stopped_transfer_is_recorded_unfinished() {
    let sc = one_link(
        "[[flow]]\nsrc = \"a\"\ndst = \"b\"\nsize = \"100KB\"\nstart = \"1s\"\nstop = \"1.1s\"\n",
    );
    let (_, r) = run(&sc, 1);
    assert_eq!(r.records.len(), 1);
    assert_eq!(r.records[0].end_ns, None, "{:?}", r.records[0]);
    assert!(r.flows[0].stats.delivered_pkts < 100);
}

/// With delayed ACKs the SYN is acknowledged at once (ns-2's SYN_immediate_ack_): a
/// one-segment transfer takes two round trips, not two plus the delayed-ACK interval.
#[test]
fn the_syn_is_not_delayed() {
    let sc = one_link(
        "[[flow]]\nsrc = \"a\"\ndst = \"b\"\nsize = \"1000B\"\nstart = \"1s\"\ntcp = { delayed_ack = true }\n",
    );
    let (_, r) = run(&sc, 1);
    let rec = r.records[0];
    let fct = rec.end_ns.unwrap() - rec.start_ns;
    // SYN round trip, then the one segment's round trip and the delayed ACK of it (100 ms).
    assert!(fct < 2 * 20_300_000 + 100_000_000, "{fct}");
    assert!(fct > 2 * 20_000_000 + 100_000_000 - 1, "{fct}");
}

/// Arrivals happen in [start, stop) only, and `arrival_rate` sets their mean rate.
#[test]
fn arrivals_keep_to_their_window_and_rate() {
    let sc = one_link(
        r#"
[[arrivals]]
name = "web"
src = "a"
dst = "b"
arrival_rate = 50
size = "2KB"
start = "2s"
stop = "6s"
"#,
    );
    let (_, r) = run(&sc, 5);
    let p = r.processes[0];
    assert!(r
        .records
        .iter()
        .all(|x| (2_000_000_000..6_000_000_000).contains(&x.start_ns)));
    // 4 s at 50 per second: 200 expected, Poisson standard deviation 14.
    assert!((150..=250).contains(&p.arrivals), "{p:?}");
    assert_eq!(p.completed, p.arrivals);
}

/// The counts a run reports mid-way (`examples/memory_over_time`): packet-hops never
/// decrease, lag the final count by no more than what is still in the lines, and come to
/// exactly the results' count; over one link each packet delivered or still travelling
/// made one hop; the packets alive are at most what a window holds.
#[test]
fn packet_hops_and_packets_alive_mid_run() {
    let sc = Scenario::from_toml(
        &one_link("[[flow]]\nsrc = \"a\"\ndst = \"b\"\nstart = \"0s\"\n"),
        "<test>",
    )
    .unwrap();
    let mut sim = Simulation::new(&sc, 1);
    let mut last = 0;
    for t in 1..=10u64 {
        sim.run_until(t * 1_000_000_000);
        let hops = sim.packet_hops();
        assert!(hops >= last, "packet-hops went back: {last} -> {hops}");
        last = hops;
        // at most the window (10,000 packets) and an ACK for each
        let alive = sim.packets_alive();
        assert!(
            (1..=20_000).contains(&alive),
            "{alive} packets alive at {t} s"
        );
    }
    let r = sim.results();
    // the lazy directions' departures, brought up to date by `results`, only add hops
    assert!(r.packet_hops >= last, "{last} -> {}", r.packet_hops);
    assert_eq!(sim.packet_hops(), r.packet_hops);
    let f = &r.flows[0].stats;
    assert!(f.delivered_pkts > 100_000, "{}", f.delivered_pkts);
    // every packet sent made its one hop, or is still on the link
    let sent = f.sent_pkts + f.acks_sent;
    let arrived = f.delivered_pkts + f.acks_delivered;
    assert!(
        (arrived..=sent).contains(&r.packet_hops),
        "{} hops for {arrived} arrived and {sent} sent",
        r.packet_hops
    );
}

/// An arrival process builds its slots as it needs them: `max_active = 1000000` (the schema's
/// limit) with a few hundred connections builds no more slots than there were open at once
/// (it built all million up front, 2.5 GB, and sampled each at every interval), and its
/// transfers and per-process row are those of a `max_active` never reached.
#[test]
fn arrival_slots_are_built_as_needed() {
    let arrivals = |max: u32| {
        one_link(&format!(
            r#"
[[arrivals]]
name = "web"
src = "a"
dst = "b"
arrival_rate = 200
size = {{ dist = "exponential", mean = "20KB" }}
max_active = {max}
"#
        ))
        .replace("duration = \"10s\"", "duration = \"2s\"")
    };
    let (small_sim, small) = run(&arrivals(1000), 5);
    let (big_sim, big) = run(&arrivals(1_000_000), 5);
    let p = big.processes[0];
    assert!(p.completed > 300 && p.peak_active < 1000, "{p:?}");
    assert_eq!(big.records, small.records);
    assert_eq!(big.processes, small.processes);
    assert_eq!(
        big.flows[0].throughput_bps.to_bits(),
        small.flows[0].throughput_bps.to_bits()
    );
    assert_eq!(big.flows[0].delay, small.flows[0].delay);
    assert_eq!(big.series.f_throughput_bps, small.series.f_throughput_bps);
    // The slots built are those of the most connections open at once.
    let per_slot = big_sim.memory().flows as f64 / p.peak_active as f64;
    assert!(
        big_sim.memory().flows == small_sim.memory().flows && per_slot < 20_000.0,
        "{} bytes of flows for {} slots",
        big_sim.memory().flows,
        p.peak_active
    );
}

/// Captures stop before the bytes they write together exceed their limit: the files end after
/// a whole record (40-byte TCP headers after each 16-byte record header), the run goes on.
#[test]
fn captures_stop_at_their_limit() {
    use std::sync::{Arc, Mutex};
    #[derive(Clone, Default)]
    struct Sink(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Sink {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let sc = Scenario::from_toml(
        &one_link(
            r#"
[[flow]]
name = "f"
src = "a"
dst = "b"
type = "tcp"
"#,
        ),
        "<test>",
    )
    .unwrap();
    let capture = |limit: u64| {
        let (ab, ba) = (Sink::default(), Sink::default());
        let mut sim = Simulation::new(&sc, 1);
        sim.attach_capture(0, Box::new(ab.clone())).unwrap();
        sim.attach_capture(1, Box::new(ba.clone())).unwrap();
        sim.set_capture_limit(limit);
        sim.run();
        let r = sim.results();
        let (ab, ba) = (ab.0.lock().unwrap().len(), ba.0.lock().unwrap().len());
        (sim.capture_stopped(), ab as u64, ba as u64, r.packet_hops)
    };
    let (stopped, ab, ba, hops) = capture(0);
    assert!(stopped.is_none() && ab + ba > 1_000_000);
    let (stopped, ab2, ba2, hops2) = capture(100_000);
    let stopped = stopped.expect("stopped at the limit");
    assert!(stopped > 0 && stopped < 10_000_000_000);
    assert!(ab2 + ba2 <= 100_000 && ab2 + ba2 > 100_000 - 56);
    assert_eq!(((ab2 - 24) % 56, (ba2 - 24) % 56), (0, 0));
    assert_eq!(hops2, hops);
}
