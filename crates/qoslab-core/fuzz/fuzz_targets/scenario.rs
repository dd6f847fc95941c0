//! The scenario parser and resolver on arbitrary text, then the simulation it describes built
//! and run for 20 ms of simulated time and at most [`MAX_EVENTS`] events. Any panic (an
//! overflow, an index out of range, an allocation failure) is a crash; a `ScenarioError` is the
//! expected answer to bad input. A scenario that passed validation and stops simulated time
//! (a component re-arming itself at the same instant: a duration key without the floor its
//! model needs) is a crash too: the run's stall bound is lowered here so that it shows within
//! the input's time, and libFuzzer's `-timeout` (`make fuzz-smoke`) is the watchdog for any
//! other hang. `make fuzz` runs it from the project's scenarios; `make test` for a bounded time.
//! The time series a run records are bounded as the run budget bounds them
//! (`qoslab.budget`: intervals × (flows + 2 links + 2 conditioners) rows, sampled from
//! t = 0 whatever `measurement.start` says): an input whose 20 ms would record more than
//! [`MAX_SERIES_ROWS`] rows (a `measurement.interval` of 1 ns) is refused there before it
//! runs, and skipped here.
//!
//! Besides libFuzzer's byte mutations, the mutator applies the format's own operators
//! ([`mutate_scenario`]): `[tcp]` keys (`flavour`, `variant`, the RTO and delayed-ACK
//! durations, ...), `tcp.cc.*` constants of both flavours, a link's `jitter` and a flow's own
//! `tcp` table, with ordinary and extreme values.
#![no_main]

use libfuzzer_sys::{fuzz_mutator, fuzz_target, fuzzer_mutate};
use qoslab_core::sim::stall::{CHECK_EVERY, MAX_EVENTS_AT_ONE_INSTANT};
use qoslab_core::{Scenario, Simulation};

/// Events an input's run may take (its work bound; simulated time is bounded too).
const MAX_EVENTS: u64 = 1 << 21;

/// Time-series rows an input's run may record (the run budget refuses a scenario whose series
/// would not fit its memory; this is a test machine's share).
const MAX_SERIES_ROWS: u64 = 1 << 21;

/// Events at one instant that count as a stall here (plus the per-component share the
/// simulation's own bound has).
const STALL_EVENTS: u64 = 1 << 16;

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
    let horizon = sc.duration_ns.min(20_000_000);
    let intervals = horizon / sc.measurement.interval_ns.max(1) + 1;
    let per_interval = (sc.flows.len() + 2 * sc.links.len() + 2 * sc.conditioners.len()) as u64;
    if intervals.saturating_mul(per_interval) > MAX_SERIES_ROWS {
        return;
    }
    let mut sim = Simulation::new(&sc, 1);
    let share = sim.stall_bound() - MAX_EVENTS_AT_ONE_INSTANT;
    sim.set_stall_bound(STALL_EVENTS + share);
    let mut checkpoints = 0u64;
    sim.run_until_or(horizon, &mut || {
        checkpoints += 1;
        checkpoints * CHECK_EVERY >= MAX_EVENTS
    });
    if let Some(stall) = sim.stalled() {
        panic!("a valid scenario stops simulated time: {stall}");
    }
});

fuzz_mutator!(|data: &mut [u8], size: usize, max_size: usize, seed: u32| {
    let mut rng = Rng(u64::from(seed).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    if rng.below(2) == 0 {
        if let Ok(text) = std::str::from_utf8(&data[..size]) {
            let out = mutate_scenario(text, &mut rng);
            if out.len() <= max_size {
                data[..out.len()].copy_from_slice(out.as_bytes());
                return out.len();
            }
        }
    }
    fuzzer_mutate(data, size, max_size)
});

/// A small xorshift generator seeded by libFuzzer's seed (the mutation is reproducible).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
}

const DURATIONS: &[&str] = &[
    "\"0s\"",
    "\"1ns\"",
    "\"999ns\"",
    "\"1us\"",
    "\"2us\"",
    "\"1ms\"",
    "\"40ms\"",
    "\"200ms\"",
    "\"1s\"",
    "\"3s\"",
    "\"60s\"",
    "\"1e6s\"",
    "\"-1s\"",
    "\"nan s\"",
];
const NUMBERS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "10",
    "512",
    "1024",
    "4294967295",
    "-1",
    "0.5",
    "0.8",
    "1e300",
    "nan",
    "true",
    "false",
];
const SWITCHES: &[&str] = &["true", "false"];

/// The `[tcp]` keys (also a flow's `tcp` table's) and their values.
const TCP_KEYS: &[(&str, &[&str])] = &[
    ("flavour", &["\"linux\"", "\"ns2\"", "\"bsd\""]),
    (
        "variant",
        &[
            "\"reno\"",
            "\"newreno\"",
            "\"sack\"",
            "\"cubic\"",
            "\"dctcp\"",
            "\"bbr\"",
            "\"vegas\"",
        ],
    ),
    ("min_rto", DURATIONS),
    ("max_rto", DURATIONS),
    ("initial_rto", DURATIONS),
    ("tick", DURATIONS),
    ("delack_interval", DURATIONS),
    ("delayed_ack", SWITCHES),
    ("sack", SWITCHES),
    ("pacing", SWITCHES),
    ("ecn", SWITCHES),
    ("syn", SWITCHES),
    ("window", NUMBERS),
    ("initial_window", NUMBERS),
    ("max_burst", NUMBERS),
    ("dupack_threshold", NUMBERS),
    (
        "packet_size",
        &["\"1B\"", "\"40B\"", "\"1500B\"", "\"65535B\"", "\"65536B\""],
    ),
    ("ack_size", &["\"1B\"", "\"40B\"", "\"65536B\""]),
];

/// The `tcp.cc.*` tables' keys, of both flavours (each flavour refuses the other's).
const CC_KEYS: &[(&str, &[&str])] = &[
    (
        "cubic",
        &[
            "beta",
            "c",
            "fast_convergence",
            "tcp_friendliness",
            "bic_scale",
            "hystart",
            "hystart_detect",
            "hystart_low_window",
            "hystart_ack_delta_us",
            "initial_ssthresh",
        ],
    ),
    ("dctcp", &["g", "dctcp_shift_g", "dctcp_alpha_on_init"]),
    ("bbr", &["high_gain", "cwnd_gain"]),
    ("reno", &["beta"]),
];

/// One of the format's operators applied to a scenario's text: a `[tcp]` key (the table made
/// if there is none), a `tcp.cc.<variant>` table, a link's `jitter`, a key of a flow's own
/// `tcp` table (made if it has none), or one of these given to every member of a group.
fn mutate_scenario(text: &str, rng: &mut Rng) -> String {
    let tcp_line = |rng: &mut Rng| {
        let (k, vs) = TCP_KEYS[rng.below(TCP_KEYS.len())];
        (k, rng.pick(vs))
    };
    match rng.below(6) {
        0 => {
            let (k, v) = tcp_line(rng);
            insert_after(text, "[tcp]", &format!("{k} = {v}"), rng)
                .unwrap_or_else(|| format!("{text}\n[tcp]\n{k} = {v}\n"))
        }
        1 => {
            let (variant, keys) = CC_KEYS[rng.below(CC_KEYS.len())];
            let mut fields = Vec::new();
            for _ in 0..=rng.below(3) {
                fields.push(format!("{} = {}", rng.pick(keys), rng.pick(NUMBERS)));
            }
            let line = format!("cc.{variant} = {{ {} }}", fields.join(", "));
            insert_after(text, "[tcp]", &line, rng)
                .unwrap_or_else(|| format!("{text}\n[tcp]\nvariant = \"{variant}\"\n{line}\n"))
        }
        2 => {
            let line = format!("jitter = {}", rng.pick(DURATIONS));
            insert_after(text, "[[link]]", &line, rng).unwrap_or_else(|| text.to_string())
        }
        3 => {
            let (k, v) = tcp_line(rng);
            let field = format!("{k} = {v}");
            let flows = text.matches("tcp = {").count();
            if flows > 0 && rng.below(2) == 0 {
                let nth = rng.below(flows);
                let at = text.match_indices("tcp = {").nth(nth).map(|(i, _)| i + 7);
                at.map(|i| format!("{} {field},{}", &text[..i], &text[i..]))
                    .unwrap_or_else(|| text.to_string())
            } else {
                insert_after(text, "[[flow]]", &format!("tcp = {{ {field} }}"), rng)
                    .unwrap_or_else(|| text.to_string())
            }
        }
        4 => {
            let (k, v) = tcp_line(rng);
            let flavour = rng.pick(&["\"linux\"", "\"ns2\""]);
            let line = format!("tcp = {{ flavour = {flavour}, {k} = {v} }}");
            insert_after(text, "[[flow]]", &line, rng).unwrap_or_else(|| text.to_string())
        }
        _ => replace_duration(text, rng),
    }
}

/// Duration keys of every section whose zero or tiny value could make a timer re-arm at the
/// same instant (the hang class).
const DURATION_KEYS: &[&str] = &[
    "on",
    "off",
    "interval",
    "target",
    "t_update",
    "delay",
    "jitter",
    "rtt",
    "tau",
    "window",
    "freeze_time",
    "signal_delay",
    "min_rto",
    "max_rto",
    "initial_rto",
    "delack_interval",
    "tick",
    "start",
    "stop",
    "duration",
];

/// `text` with the value of one of its duration keys ([`DURATION_KEYS`]) replaced.
fn replace_duration(text: &str, rng: &mut Rng) -> String {
    let mut at = Vec::new();
    for k in DURATION_KEYS {
        for (i, _) in text.match_indices(&format!("{k} = \"")) {
            let before = text[..i].chars().next_back();
            if before.is_none_or(|c| !(c.is_alphanumeric() || c == '_')) {
                at.push(i + k.len() + 3);
            }
        }
    }
    if at.is_empty() {
        return text.to_string();
    }
    let start = at[rng.below(at.len())];
    let Some(len) = text[start + 1..].find('"') else {
        return text.to_string();
    };
    let end = start + 1 + len + 1;
    format!("{}{}{}", &text[..start], rng.pick(DURATIONS), &text[end..])
}

/// `text` with `line` on the line after one of its `header` lines (chosen by `rng`), if any.
fn insert_after(text: &str, header: &str, line: &str, rng: &mut Rng) -> Option<String> {
    let at: Vec<usize> = text
        .match_indices(header)
        .filter(|&(i, _)| i == 0 || text.as_bytes()[i - 1] == b'\n')
        .map(|(i, _)| i + header.len())
        .filter(|&i| text[i..].starts_with('\n'))
        .collect();
    if at.is_empty() {
        return None;
    }
    let i = at[rng.below(at.len())] + 1;
    Some(format!("{}{line}\n{}", &text[..i], &text[i..]))
}
