//! The memory a scenario's resolved form would take, read from its groups' counts before
//! any group is expanded: a scenario whose reading alone would pass the memory limit is
//! refused naming the group to shrink.

use super::spec::*;
use super::{bad, keys, Bad, ConditionerConfig, FlowConfig, LinkConfig, MAX_COUNT};

/// Bytes the resolved form of `spec` takes at most while it is built: every expanded flow,
/// link, node and conditioner as its struct twice over (a vector grows by doubling) plus its
/// strings; and the `[[flow]]`/`[[link]]`/... key with the most entries (the one to shrink).
fn resolved_bytes(spec: &ScenarioSpec) -> (u64, String) {
    // Names and endpoints: three short strings of an expanded entry (24-byte headers, a
    // 16-byte heap block each at least).
    const STRINGS: u64 = 3 * 40;
    let per = |size: usize| 2 * size as u64 + STRINGS;
    let mut largest = (0u64, String::from("flow"));
    let mut total = 0u64;
    let groups = [
        (
            "flow",
            spec.flows.iter().map(group_count).collect::<Vec<_>>(),
            per(std::mem::size_of::<FlowConfig>()),
        ),
        (
            "link",
            spec.links.iter().map(group_count).collect(),
            per(std::mem::size_of::<LinkConfig>()),
        ),
        (
            "node",
            spec.nodes.iter().map(group_count).collect(),
            per(std::mem::size_of::<String>()),
        ),
        (
            "conditioner",
            spec.conditioners.iter().map(group_count).collect(),
            per(std::mem::size_of::<ConditionerConfig>()),
        ),
    ];
    for (key, counts, each) in groups {
        for (i, c) in counts.into_iter().enumerate() {
            total = total.saturating_add(c.saturating_mul(each));
            if c > largest.0 {
                // a group of one (no `count`) is named as itself: it has no `count` to shrink
                let count = if c > 1 { ".count" } else { "" };
                largest = (c, format!("{key}[{i}]{count}"));
            }
        }
    }
    (total, largest.1)
}

/// The `count` of a group read as a table (`[[node]]`, `[[link]]`) for [`resolved_bytes`],
/// before its reader checks it: 1 unless it is a whole number in [`keys::COUNT`]'s range.
fn group_count(t: &toml::Table) -> u64 {
    t.get(keys::COUNT.name())
        .and_then(toml::Value::as_integer)
        .filter(|c| (1..=i64::from(MAX_COUNT)).contains(c))
        .map_or(1, |c| c as u64)
}

/// Refuses `spec` when [`resolved_bytes`] is above `max` bytes (`what` sets them).
pub(super) fn within(spec: &ScenarioSpec, max: u64, what: &str) -> Result<(), Bad> {
    let (need, key) = resolved_bytes(spec);
    if need <= max {
        return Ok(());
    }
    let flows: u64 = spec.flows.iter().map(group_count).sum();
    let flows = if flows == 1 {
        "1 flow".to_string()
    } else {
        format!("{flows} flows")
    };
    // with no group of more than one, there is no group to shrink: the limit is what is off
    let advice = if key.ends_with(".count") {
        "make its groups smaller"
    } else {
        "raise the limit"
    };
    Err(bad(
        key,
        format!(
            "the scenario ({flows}) would take about {} of memory just to read, above {} \
             ({what}); {advice}",
            in_bytes(need),
            in_bytes(max)
        ),
    ))
}

/// `n` bytes in the unit an error line reads best: B, kB or MB (rounded up).
fn in_bytes(n: u64) -> String {
    match n {
        0..=999 => format!("{n} B"),
        1_000..=999_999 => format!("{} kB", n.div_ceil(1_000)),
        _ => format!("{} MB", n.div_ceil(1_000_000)),
    }
}
