//! The event queue's two structures run a simulation identically: the same scenario with the
//! queue a heap throughout, a calendar throughout, and switching between the two every few
//! events gives the same results, bit for bit (the order of events is the same total order).
//! Likewise the link host's two ways of counting departures: lazily (`LinkDir::lazy`) and as
//! every arrival advances its direction (what a capture on a direction requires), and runs
//! with and without the lines' shrinking.

use super::*;
use crate::engine::EventQueue;

/// 40 TCP flows over a 50 Mbit/s RED bottleneck: round trips of about 70 ms (inside the
/// calendar's horizon) and retransmission timers of 200 ms and more (beyond it).
const MANY: &str = r#"
name = "queue-structures"
duration = "5s"
tcp = { packet_size = "1000B", window = 1000 }

[[node]]
name = "s{i}"
count = 40
[[node]]
name = "r1"
[[node]]
name = "r2"
[[node]]
name = "d{i}"
count = 40

[[link]]
count = 40
a = "s{i}"
b = "r1"
bandwidth = "1Gbps"
delay = "2ms"

[[link]]
name = "bottleneck"
a = "r1"
b = "r2"
bandwidth = "50Mbps"
delay = "30ms"
queue_ab = { type = "red", limit = "300pkts", min_th = 30, max_th = 90, max_p = 0.1, w_q = 0.002 }

[[link]]
count = 40
a = "r2"
b = "d{i}"
bandwidth = "1Gbps"
delay = "1ms"

[[flow]]
count = 40
src = "s{i}"
dst = "d{i}"
start = "uniform(0s, 1s)"

[measurement]
bottleneck = "bottleneck"
interval = "100ms"
"#;

/// Everything a run reports that the order of events could change.
fn fingerprint(thresholds: Option<(usize, usize)>) -> Vec<u64> {
    run_fingerprint(thresholds, false)
}

/// [`fingerprint`], with a capture on every link direction if `capture_all` (none is lazy then).
fn run_fingerprint(thresholds: Option<(usize, usize)>, capture_all: bool) -> Vec<u64> {
    run_fingerprint_shrinking(MANY, thresholds, capture_all, true).0
}

/// [`run_fingerprint`] of `scenario`, with the links' lines never shrunk unless
/// `shrink_lines`; and the link directions' memory at the end.
fn run_fingerprint_shrinking(
    scenario: &str,
    thresholds: Option<(usize, usize)>,
    capture_all: bool,
    shrink_lines: bool,
) -> (Vec<u64>, usize) {
    let sc = Scenario::from_toml(scenario, "queue-structures").expect("valid scenario");
    let mut sim = Simulation::new(&sc, 7);
    if !shrink_lines {
        sim.next_line_shrink = SimTime::MAX;
    }
    if capture_all {
        for d in 0..sim.dirs.len() {
            sim.attach_capture(d, Box::new(std::io::sink()))
                .expect("a capture");
        }
    }
    assert_eq!(
        sim.dirs.iter().any(|d| d.lazy()),
        !capture_all,
        "tail-drop and RED directions without a capture count lazily"
    );
    if let Some((on, off)) = thresholds {
        // Move the initial events, in order, into a queue with the given thresholds.
        let mut q = EventQueue::with_calendar_thresholds(on, off);
        while let Some(e) = sim.q.pop() {
            q.at(e.time, e.kind);
        }
        sim.q = q;
        if on == 0 {
            assert!(sim.q.is_large(), "a calendar from the start");
        } else if on == usize::MAX {
            assert!(!sim.q.is_large(), "a heap throughout");
        }
    }
    sim.run();
    let r = sim.results();
    let links_bytes = r.memory.links;
    let mut out = vec![r.events, r.packet_hops, r.end_ns];
    for f in &r.flows {
        out.extend([
            f.stats.sent_pkts,
            f.stats.delivered_bytes,
            f.stats.retransmits,
            f.stats.dropped_pkts,
            f.throughput_bps.to_bits(),
        ]);
    }
    for l in &r.links {
        out.extend([
            l.stats.departures,
            l.stats.departed_bytes,
            l.stats.window_bytes,
            l.stats.total_drops(),
            l.stats.window_wait_ns,
        ]);
    }
    out.extend(r.series.q_avg.iter().map(|v| v.to_bits()));
    out.extend(r.series.f_cwnd.iter().map(|v| v.to_bits()));
    (out, links_bytes)
}

#[test]
fn heap_calendar_and_switching_give_the_same_run() {
    let heap = fingerprint(Some((usize::MAX, 0)));
    assert!(heap[1] > 10_000, "the run moves packets: {} hops", heap[1]);
    assert_eq!(heap, fingerprint(None), "default thresholds");
    assert_eq!(heap, fingerprint(Some((0, 0))), "a calendar throughout");
    assert_eq!(heap, fingerprint(Some((40, 10))), "switching often");
}

#[test]
fn lazy_and_eager_departure_counts_give_the_same_run() {
    let lazy = fingerprint(None);
    assert_eq!(lazy, run_fingerprint(None, true));
}

/// The lines' shrinking (once a simulated second, between slices of events) changes where a
/// line keeps its packets, never which or when: the run is the same with it and without.
/// The 40 flows stop at 3 s, a second before the run's last shrink, so that the shrinking
/// is seen to give capacity back, not only to leave the run alone.
#[test]
fn shrinking_the_lines_gives_the_same_run() {
    let stopping = MANY.replace(
        "start = \"uniform(0s, 1s)\"",
        "start = \"uniform(0s, 1s)\"\nstop = \"3s\"",
    );
    assert_ne!(stopping, MANY);
    let (with, with_bytes) = run_fingerprint_shrinking(&stopping, None, false, true);
    let (without, without_bytes) = run_fingerprint_shrinking(&stopping, None, false, false);
    assert!(with[1] > 10_000, "the run moves packets: {} hops", with[1]);
    assert_eq!(with, without);
    assert!(
        with_bytes + 10 * 1024 < without_bytes,
        "links {with_bytes} bytes with the shrinking, {without_bytes} without"
    );
}

/// A line that held a 600-packet queue for half a second gives its capacity back once the
/// queue has drained: 1,024 entries at the peak, the floor (32) two seconds later; without
/// the shrinking it would keep the 1,024 for the rest of the run.
#[test]
fn a_drained_line_gives_its_capacity_back() {
    let sc = Scenario::from_toml(
        r#"
name = "burst"
duration = "3s"
[[node]]
name = "a"
[[node]]
name = "b"
[[link]]
a = "a"
b = "b"
bandwidth = "10Mbps"
delay = "10ms"
queue = { type = "droptail", limit = "2000pkts" }
[[flow]]
src = "a"
dst = "b"
type = "cbr"
rate = "20Mbps"
packet_size = "1000B"
start = "0s"
stop = "0.5s"
"#,
        "burst",
    )
    .expect("valid scenario");
    let mut sim = Simulation::new(&sc, 1);
    sim.run_until(500_000_000);
    let peak = sim.dirs[0].line.capacity();
    assert!(sim.dirs[0].line.len() > 600, "{}", sim.dirs[0].line.len());
    assert_eq!(peak, 1024);
    let links_at_peak = sim.memory().links;
    sim.run_until(2_500_000_000);
    assert!(sim.dirs[0].line.is_empty());
    let floor = crate::net::link::LINE_FLOOR;
    assert_eq!(sim.dirs[0].line.capacity(), floor);
    assert_eq!(
        links_at_peak - sim.memory().links,
        (1024 - floor) * std::mem::size_of::<crate::net::link::InLine>()
    );
}
