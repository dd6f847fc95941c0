//! The scenario parser and resolver on arbitrary text, then the simulation it describes built
//! and run for 20 ms of simulated time. Any panic (an overflow, an index out of range, an
//! allocation failure) is a crash; a `ScenarioError` is the expected answer to bad input.
//! `make fuzz` runs it from the project's scenarios; `make test` for a bounded time.
#![no_main]

use libfuzzer_sys::fuzz_target;
use qoslab_core::{Scenario, Simulation};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(sc) = Scenario::from_toml(text, "fuzz") else {
        return;
    };
    // The resolved form serialises (what `qoslab check` prints and the store keeps) and
    // parses back to the same scenario.
    let value = sc.to_toml_value().expect("a resolved scenario serialises");
    let again = toml::to_string(&value).expect("the resolved table is TOML");
    assert!(!again.is_empty());
    // Building allocates per node, link and flow: keep the fuzzer's inputs to sizes a test
    // machine holds (the parser caps counts at 10^6; 2,000 elements here).
    if sc.nodes.len() + sc.links.len() + sc.flows.len() > 2_000 {
        return;
    }
    let mut sim = Simulation::new(&sc, 1);
    sim.run_until(sc.duration_ns.min(20_000_000));
});
