//! The sections read by their declarations ([`super::keys`]): every declared default is the
//! value the reader uses, and a key no declaration names is refused at its line.

use super::keys::{
    ARRIVALS, CAPTURE, CONDITIONER, FLOW, LINK, MEASUREMENT, NODE, SCENARIO, TCP, TIMING,
};
use super::tests::DUMBBELL;
use super::*;
use crate::params::{typed::check_number, Param, ParamKind};
use crate::units;

/// The dumbbell with a capture and a flow that sets no TCP key, as a table to edit.
fn base() -> toml::Table {
    let src = format!(
        "{DUMBBELL}\n[[flow]]\nsrc = \"s0\"\ndst = \"d0\"\n\n[[capture]]\nlink = \"bottleneck\"\n\n\
         [[arrivals]]\nname = \"web\"\nsrc = \"s1\"\ndst = \"d1\"\nsize = \"10KB\"\narrival_rate = 5\n\n\
         [[conditioner]]\nlink = \"bottleneck\"\n\
         meter = {{ type = \"tsw2cm\", cir = \"1Mbps\", window = \"1s\" }}\n"
    );
    toml::from_str(&src).expect("the dumbbell parses")
}

fn resolved(t: &toml::Table) -> Result<toml::Value, ScenarioError> {
    let src = toml::to_string(t).expect("a table writes");
    Ok(Scenario::from_toml(&src, "t.toml")?
        .to_toml_value()
        .expect("in range"))
}

/// The table of `section` in `t`: the top level (""), `measurement`, `timing` or `tcp`, or the first member of `[[node]]`, … that
/// is not a group (so that writing `count = 1` leaves its names alone).
fn section<'a>(t: &'a mut toml::Table, section: &str) -> &'a mut toml::Table {
    match section {
        "" => t,
        "measurement" | "timing" | "tcp" => t
            .entry(section)
            .or_insert_with(|| toml::Value::Table(toml::Table::new()))
            .as_table_mut()
            .expect("a table"),
        s => t[s]
            .as_array_mut()
            .and_then(|a| {
                a.iter_mut()
                    .filter_map(toml::Value::as_table_mut)
                    .find(|m| !m.contains_key("count"))
            })
            .expect("a member that is not a group"),
    }
}

/// A declared default as the value a scenario file writes, if it is one (not "required" nor
/// a sentence about other keys).
fn written(p: &Param) -> Option<toml::Value> {
    let d = p.default;
    match p.kind {
        ParamKind::Number { .. } => d
            .parse::<f64>()
            .ok()
            .filter(|x| check_number(p.name, &p.kind, *x).is_ok())
            .map(toml::Value::Float),
        ParamKind::Integer { .. } | ParamKind::IntegerIn { .. } => {
            d.parse::<i64>().ok().map(toml::Value::Integer)
        }
        ParamKind::Bool => d.parse::<bool>().ok().map(toml::Value::Boolean),
        ParamKind::Duration => units::parse_duration(d).ok().map(|_| d.into()),
        ParamKind::DurationOrPreset { presets } => {
            presets.iter().any(|x| x.name == d).then(|| d.into())
        }
        ParamKind::Rate => units::parse_rate(d).ok().map(|_| d.into()),
        ParamKind::Bytes => units::parse_bytes(d).ok().map(|_| d.into()),
        ParamKind::Choice { choices } => choices.contains(&d).then(|| d.into()),
        // a word ("any", "AF11"), not "required" nor a sentence or a quoted example
        ParamKind::Name if d != "required" && !d.contains([' ', '"']) => Some(d.into()),
        _ => None,
    }
}

const SECTIONS: [(&str, &[Param]); 8] = [
    ("conditioner", CONDITIONER),
    ("arrivals", ARRIVALS),
    ("tcp", TCP),
    ("measurement", MEASUREMENT),
    ("timing", TIMING),
    ("node", NODE),
    ("link", LINK),
    ("capture", CAPTURE),
];

/// Writing a key at its declared default resolves to the same scenario as leaving it out:
/// the reader's default is the declaration's (a reader falling back to a value of its own
/// fails here).
#[test]
fn every_declared_default_is_what_the_reader_uses() {
    let want = resolved(&base()).expect("the dumbbell resolves");
    let mut checked = Vec::new();
    // a flow's undeclared keys are its source kind's, refused by the source registry; the
    // top level's by serde
    for (name, params) in SECTIONS.into_iter().chain([("flow", FLOW), ("", SCENARIO)]) {
        for p in params {
            let Some(v) = written(p) else { continue };
            let mut t = base();
            section(&mut t, name).insert(p.name.to_string(), v.clone());
            let got = resolved(&t).unwrap_or_else(|e| panic!("{name}.{} = {v}: {e}", p.name));
            assert_eq!(got, want, "{name}.{} = {v} (its declared default)", p.name);
            checked.push(format!("{name}.{}", p.name));
        }
    }
    // arrivals.start, max_active; tcp: all 18 but cc; measurement.start, point, cwnd;
    // timing.jitter; node.count; link.count; capture.direction; flow.count, type, start;
    // conditioner.count, direction, classify, green, yellow; seed
    assert_eq!(checked.len(), 36, "{checked:?}");
}

/// A key no declaration of the section names is refused at its line, with the declared keys.
#[test]
fn an_unknown_key_of_a_declared_section_is_refused_at_its_line() {
    for (name, params) in SECTIONS {
        let mut t = base();
        section(&mut t, name).insert("qoslab_no_such_key".into(), 1.into());
        let src = toml::to_string(&t).unwrap();
        let e = Scenario::from_toml(&src, "t.toml").unwrap_err();
        assert!(e.key.starts_with(name), "{e}");
        assert!(e.key.ends_with(".qoslab_no_such_key"), "{e}");
        let line = e.line.expect("located");
        let text = src.lines().nth(line - 1).unwrap();
        assert!(text.starts_with("qoslab_no_such_key"), "{e}: line {text:?}");
        // serde's words, which these sections had before their declarations read them
        let names: Vec<String> = params.iter().map(|p| format!("`{}`", p.name)).collect();
        let expected = match names.as_slice() {
            [a] => format!("expected {a}"),
            [a, b] => format!("expected {a} or {b}"),
            _ => format!("expected one of {}", names.join(", ")),
        };
        assert_eq!(
            e.message,
            format!("unknown field `qoslab_no_such_key`, {expected}")
        );
    }
}

/// A required key left out is named, at its table's line.
#[test]
fn a_missing_required_key_is_named() {
    let mut t = base();
    section(&mut t, "link").remove("delay");
    let e = resolved(&t).unwrap_err();
    assert_eq!(e.key, "link[1].delay");
    assert_eq!(e.message, "missing field `delay`");
    assert!(e.line.is_some());
}

/// The linux flavour's own defaults are declared on `[tcp]` keys, with the same kinds, and are
/// Linux 6.x's (what a linux flow that sets none of them resolves to).
#[test]
fn linux_defaults_are_declared_on_tcp_keys_and_are_the_kernels() {
    use crate::traffic::linux::config::{keys, FlavourDefaults};
    for own in keys::ALL {
        let k = TCP
            .iter()
            .find(|p| p.name == own.name)
            .expect("a [tcp] key");
        assert_eq!(
            format!("{:?}", k.kind),
            format!("{:?}", own.kind),
            "{}",
            own.name
        );
    }
    let d = FlavourDefaults::linux();
    assert_eq!((d.window_pkts, d.initial_window_pkts), (10_000, 10));
    assert_eq!(
        (d.min_rto_ns, d.max_rto_ns, d.initial_rto_ns),
        (200_000_000, 120_000_000_000, 1_000_000_000)
    );
    assert_eq!((d.delayed_ack, d.delack_interval_ns), (true, 40_000_000));
    assert_eq!((d.syn, d.sack), (false, true));
}
