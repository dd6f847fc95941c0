//! The host's timing noise, a declared part of the scenario (`[timing]`): the default of every
//! link direction's `jitter` (a `[[link]]`'s own `jitter` overrides it), written as a duration
//! or as a named preset: `exact` (no noise, the default) or `testbed` (the noise measured on the
//! kernel testbed the linux flavour is validated against). The arithmetic of the noise is the
//! link's ([`crate::net::jitter`]).

use serde::Serialize;

use super::Bad;
use crate::params::typed::{Decl, DurationOrPreset};
use crate::params::{Param, ParamKind, Preset, Table};

/// The keys of `[timing]`.
pub mod keys {
    use super::*;

    /// Exact timing: every packet's propagation takes exactly its link's delay.
    pub const EXACT: Preset = Preset {
        name: "exact",
        value: "0s",
        doc: "Exact timing: every packet's propagation takes exactly its link's delay, as in \
              ns-2, ns-3 and the papers; at a tail-drop queue the flows' shares then follow their \
              packets' phases (Floyd and Jacobson 1992).",
    };
    /// The timing noise of the Linux-kernel testbed (docs/validation/linux.md, "Timing").
    pub const TESTBED: Preset = Preset {
        name: "testbed",
        value: "130us",
        doc: "The timing noise of the Linux-kernel testbed the linux flavour is validated \
              against (every link a qoslab-linkd): uniform jitter of 0-130 µs on every link \
              direction gives the noise measured on the kernel's ACK clock, 90-95 µs sd \
              between successive ACKs at three points (docs/validation/linux.md#method, \
              \"Timing\").",
    };
    /// Every preset, by name.
    pub const PRESETS: &[Preset] = &[EXACT, TESTBED];

    pub const JITTER: Decl<DurationOrPreset> = Decl::new(
        "jitter",
        ParamKind::DurationOrPreset { presets: PRESETS },
        "exact",
        "Timing noise of every link direction whose link sets no `jitter` of its own: every \
         packet's propagation takes a further delay drawn uniformly in [0, jitter] from the \
         direction's own stream, never ending before the packet ahead's (no reordering). A \
         duration, or a preset: `exact` (0s) or `testbed` (130us, measured on the kernel \
         testbed: docs/validation/linux.md#method, \"Timing\").",
    );
}

/// `[timing]`.
pub const TIMING: &[Param] = &[keys::JITTER.param];

/// The resolved `[timing]` of a scenario whose timing is not exact (an exact one has none, so
/// that writing `jitter = "exact"` resolves to the scenario without `[timing]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TimingConfig {
    /// The default bound of every link direction's jitter (`timing.jitter`), ns.
    pub jitter_ns: u64,
    /// The preset `timing.jitter` named, if it named one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
}

/// `[timing]`: None for exact timing (the default).
pub(super) fn resolve_timing(t: &toml::Table) -> Result<Option<TimingConfig>, Bad> {
    let t = Table::section(t, "timing", TIMING)?;
    let (jitter_ns, preset) = t.get(&keys::JITTER)?;
    Ok((jitter_ns > 0).then(|| TimingConfig {
        jitter_ns,
        preset: preset.map(str::to_string),
    }))
}

#[cfg(test)]
mod tests {
    use super::super::tests::DUMBBELL;
    use super::super::{Scenario, ScenarioError};

    fn with(timing: &str, link_jitter: Option<&str>) -> Result<Scenario, ScenarioError> {
        let mut src = format!("{DUMBBELL}\n[[flow]]\nsrc = \"s0\"\ndst = \"d0\"\n");
        if let Some(j) = link_jitter {
            src = src.replacen(
                "name = \"bottleneck\"",
                &format!("name = \"bottleneck\"\njitter = {j}"),
                1,
            );
            assert!(
                src.contains("jitter"),
                "the dumbbell has a link named bottleneck"
            );
        }
        if !timing.is_empty() {
            src.push_str(&format!("\n[timing]\njitter = {timing}\n"));
        }
        Scenario::from_toml(&src, "t.toml")
    }

    fn jitters(sc: &Scenario) -> Vec<(String, u64)> {
        sc.links
            .iter()
            .map(|l| (l.name.clone(), l.jitter_ns))
            .collect()
    }

    #[test]
    fn the_testbed_preset_is_130us_on_every_link_direction() {
        let sc = with("\"testbed\"", None).unwrap();
        assert!(sc.links.len() > 2);
        assert!(
            jitters(&sc).iter().all(|(_, j)| *j == 130_000),
            "{:?}",
            jitters(&sc)
        );
        let t = sc.timing.as_ref().expect("non-exact timing is resolved");
        assert_eq!(
            (t.jitter_ns, t.preset.as_deref()),
            (130_000, Some("testbed"))
        );
        let v = sc.to_toml_value().unwrap();
        assert_eq!(v["timing"]["preset"].as_str(), Some("testbed"));
        assert_eq!(v["timing"]["jitter_ns"].as_integer(), Some(130_000));
    }

    #[test]
    fn exact_is_no_jitter_and_resolves_as_the_default() {
        let default = with("", None).unwrap();
        for exact in ["\"exact\"", "\"0s\""] {
            let sc = with(exact, None).unwrap();
            assert!(jitters(&sc).iter().all(|(_, j)| *j == 0));
            assert!(sc.timing.is_none(), "{exact}");
            assert_eq!(sc.to_toml_value(), default.to_toml_value(), "{exact}");
        }
        assert!(default.to_toml_value().unwrap().get("timing").is_none());
    }

    #[test]
    fn a_duration_is_taken_as_written_without_a_preset() {
        let sc = with("\"50us\"", None).unwrap();
        assert!(jitters(&sc).iter().all(|(_, j)| *j == 50_000));
        let t = sc.timing.expect("resolved");
        assert_eq!((t.jitter_ns, t.preset), (50_000, None));
    }

    #[test]
    fn a_links_own_jitter_overrides_the_default() {
        let sc = with("\"testbed\"", Some("\"20us\"")).unwrap();
        for (name, j) in jitters(&sc) {
            assert_eq!(
                j,
                if name == "bottleneck" {
                    20_000
                } else {
                    130_000
                },
                "{name}"
            );
        }
        let sc = with("\"testbed\"", Some("\"0s\"")).unwrap();
        let exact: Vec<_> = jitters(&sc).into_iter().filter(|(_, j)| *j == 0).collect();
        assert_eq!(exact, [("bottleneck".to_string(), 0)]);
        let sc = with("", Some("\"20us\"")).unwrap();
        for (name, j) in jitters(&sc) {
            assert_eq!(j, if name == "bottleneck" { 20_000 } else { 0 }, "{name}");
        }
    }

    #[test]
    fn a_bad_value_is_one_line_naming_the_key_and_the_presets() {
        for (value, says) in [
            ("\"tesbed\"", "unknown preset \"tesbed\" for timing.jitter"),
            ("\"Testbed\"", "unknown preset \"Testbed\""),
            ("\"a\\u0007b\"", "unknown preset \"a\\u{7}b\""),
            ("\"5 furlongs\"", "unknown time unit"),
            ("\"-1ms\"", "jitter"),
            ("5", "has no unit"),
            ("true", "expected a duration"),
        ] {
            let e = with(value, None).unwrap_err();
            let msg = e.to_string();
            assert_eq!(e.key, "timing.jitter", "{msg}");
            assert!(e.line.is_some(), "{msg}");
            assert!(msg.contains(says), "{value}: {msg}");
            assert!(!msg.contains('\n'), "{msg}");
            if says.starts_with("unknown preset") {
                assert!(
                    msg.contains("\"exact\" (0s)") && msg.contains("\"testbed\" (130us)"),
                    "{msg}"
                );
            }
        }
        let e = Scenario::from_toml(
            &format!(
                "{DUMBBELL}\n[[flow]]\nsrc = \"s0\"\ndst = \"d0\"\n[timing]\nnoise = \"1us\"\n"
            ),
            "t.toml",
        )
        .unwrap_err();
        assert_eq!(e.key, "timing.noise");
        assert_eq!(e.message, "unknown field `noise`, expected `jitter`");
    }
}
