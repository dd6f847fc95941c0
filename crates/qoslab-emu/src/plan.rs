//! What the Python side needs from the core to build the real network: each flow's route
//! (the simulator's minimum-hop paths, as link directions) and start time (drawn from the
//! run seed exactly as the simulator draws it).

use qoslab_core::rng::{stream, SimRng};
use qoslab_core::scenario::Scenario;
use serde::Serialize;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FlowPlan {
    /// Link directions (link * 2 + 0 for a→b, 1 for b→a) from source to destination.
    pub fwd: Vec<u32>,
    /// Link directions from destination back to source (the ACKs' route).
    pub rev: Vec<u32>,
    pub start_ns: u64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Plan {
    pub flows: Vec<FlowPlan>,
}

/// The routes and start times of `sc`'s flows for `seed`.
pub fn plan(sc: &Scenario, seed: u64) -> Plan {
    let flows = sc
        .flows
        .iter()
        .enumerate()
        .zip(sc.flow_routes())
        .map(|((f, fc), (fwd, rev))| {
            // The same draw as `Simulation::new`.
            let mut start_rng = SimRng::derive(seed, stream::FLOW_START | f as u64);
            let start_ns = if fc.start_max_ns > fc.start_ns {
                fc.start_ns + (start_rng.uniform() * (fc.start_max_ns - fc.start_ns) as f64) as u64
            } else {
                fc.start_ns
            };
            FlowPlan { fwd, rev, start_ns }
        })
        .collect();
    Plan { flows }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_follow_the_links_and_starts_stay_in_range() {
        let src = r#"
name = "t"
duration = "10s"
[[node]]
name = "h{i}"
count = 2
[[node]]
name = "r"
[[link]]
name = "a{i}"
count = 2
a = "h{i}"
b = "r"
bandwidth = "10Mbps"
delay = "1ms"
[[flow]]
src = "h0"
dst = "h1"
start = "uniform(1s, 2s)"
"#;
        let sc = Scenario::from_toml(src, "t.toml").unwrap();
        let p = plan(&sc, 7);
        assert_eq!(p.flows[0].fwd, vec![0, 3]);
        assert_eq!(p.flows[0].rev, vec![2, 1]);
        let s = p.flows[0].start_ns;
        assert!((1_000_000_000..2_000_000_000).contains(&s), "{s}");
        assert_eq!(plan(&sc, 7), p, "deterministic");
    }
}
