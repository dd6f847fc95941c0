//! Simulated time always advances: a component that re-arms itself at the same instant stops
//! the run with a [`Stall`] naming it (never a loop no signal ends), the scenario check refuses
//! the durations that would make a timer re-arm at `now`, and the loop's checkpoint stops and
//! resumes a run without changing it.

use qoslab_core::sim::stall::{CHECK_EVERY, MAX_EVENTS_AT_ONE_INSTANT};
use qoslab_core::{Scenario, Simulation};

const LINUX_SINGLE: &str = include_str!("../../../scenarios/linux/single.toml");

/// The linux flavour's single-flow scenario with `extra` lines added to its `[tcp]` table.
fn linux_single(extra: &str) -> String {
    LINUX_SINGLE.replace("[tcp]\n", &format!("[tcp]\n{extra}\n"))
}

#[test]
fn a_zero_retransmission_timeout_stops_the_run_naming_its_flow() {
    // The values `check` refuses, put into the resolved scenario as a scenario that slipped
    // past a missing floor would be: the linux sender's RTO is then 0 µs, re-armed at `now`.
    let mut sc = Scenario::from_toml(&linux_single(""), "single.toml").unwrap();
    let tcp = sc.flows[0].tcp.as_mut().unwrap();
    tcp.min_rto_ns = 0;
    tcp.max_rto_ns = 500;
    tcp.initial_rto_ns = 500;
    let mut sim = Simulation::new(&sc, 1);
    sim.run();
    let stall = sim.stalled().expect("the run stalls").clone();
    assert!(stall.owner.contains("flow 'single'"), "{}", stall.owner);
    assert!(
        stall.owner.contains("retransmission timer"),
        "{}",
        stall.owner
    );
    assert!(stall.events >= MAX_EVENTS_AT_ONE_INSTANT, "{stall:?}");
    assert!(stall.at < sc.duration_ns, "{stall:?}");
    assert_eq!(sim.now(), stall.at);
    let line = stall.to_string();
    assert!(!line.contains('\n'), "{line}");
    assert!(line.starts_with("simulated time stopped at t = "), "{line}");
    // Once stalled, the run goes no further.
    let events = sim.results().events;
    sim.run();
    assert_eq!(sim.results().events, events);
}

#[test]
fn a_valid_run_never_stalls_and_a_lower_bound_is_reached_only_by_a_stall() {
    let sc = Scenario::from_toml(&linux_single(""), "single.toml").unwrap();
    let mut sim = Simulation::new(&sc, 1);
    sim.set_stall_bound(2 * CHECK_EVERY);
    sim.run_until(5_000_000_000);
    assert!(sim.stalled().is_none());
    assert_eq!(sim.now(), 5_000_000_000);
}

#[test]
fn the_check_refuses_retransmission_timeouts_under_a_microsecond() {
    for (key, value) in [
        ("max_rto", "0.5us"),
        ("min_rto", "0s"),
        ("initial_rto", "999ns"),
    ] {
        let src = linux_single(&format!("{key} = \"{value}\""));
        let e = Scenario::from_toml(&src, "single.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains(&format!("tcp.{key}")), "{e}");
        assert!(e.contains("1us"), "{e}");
        assert!(e.starts_with("single.toml"), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }
    // A flow's own table too.
    let src = linux_single("").replace(
        "tcp = { variant = \"bbr\" }",
        "tcp = { variant = \"bbr\", max_rto = \"100ns\", min_rto = \"100ns\" }",
    );
    let e = Scenario::from_toml(&src, "single.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("rto") && e.contains("1us"), "{e}");
    // The floor itself is accepted.
    let src = linux_single("min_rto = \"1us\"\nmax_rto = \"1us\"\ninitial_rto = \"1us\"");
    Scenario::from_toml(&src, "single.toml").unwrap();
}

#[test]
fn stopping_at_checkpoints_and_resuming_leaves_the_run_unchanged() {
    let sc = Scenario::from_toml(&linux_single(""), "single.toml").unwrap();
    let until = 20_000_000_000;
    let mut whole = Simulation::new(&sc, 7);
    whole.run_until(until);
    let mut pieces = Simulation::new(&sc, 7);
    let mut stops = 0u64;
    let mut calls = 0u64;
    while !pieces.run_until_or(until, &mut || {
        calls += 1;
        calls % 2 == 0
    }) {
        stops += 1;
    }
    assert!(stops > 5, "{stops}");
    let (a, b) = (whole.results(), pieces.results());
    assert_eq!(a.events, b.events);
    assert_eq!(a.packet_hops, b.packet_hops);
    assert_eq!(format!("{:?}", a.flows), format!("{:?}", b.flows));
    assert_eq!(format!("{:?}", a.links), format!("{:?}", b.links));
}
