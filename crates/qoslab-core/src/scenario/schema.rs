//! The scenario format described from the code: every section's keys ([`Param`]s with kind,
//! unit, default, range and doc) and every queue kind from the registry. [`json_schema`] turns
//! it into a JSON Schema (draft 2020-12; `qoslab schema`), from which the scenario reference
//! page is generated. The sections read by their declarations ([`super::keys`]) accept
//! exactly the declared keys by construction; for those serde still reads, a test checks that
//! the keys declared are exactly the keys the structs of [`super::spec`] accept.

use toml::{Table, Value};

pub use super::keys::*;
use crate::aqm::{Discipline, QUEUE_TYPES};
use crate::conditioner::{MeterSpec, METER_TYPES};
use crate::params::{Param, ParamKind};
use crate::traffic::sources::{kinds_taking, SourceSpec, SOURCE_TYPES};

fn s(x: &str) -> Value {
    Value::String(x.to_string())
}

fn obj(pairs: Vec<(&str, Value)>) -> Value {
    Value::Table(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

/// The JSON Schema of one value of `kind`.
fn value_schema(kind: &ParamKind) -> Value {
    let unit = |pattern: &str, example: &str| {
        obj(vec![
            ("type", s("string")),
            ("pattern", s(pattern)),
            ("examples", Value::Array(vec![s(example)])),
        ])
    };
    match kind {
        ParamKind::Number {
            min,
            max,
            min_open,
            max_open,
        } => {
            let mut t = vec![("type", s("number"))];
            if let Some(m) = min {
                t.push((
                    if *min_open {
                        "exclusiveMinimum"
                    } else {
                        "minimum"
                    },
                    Value::Float(*m),
                ));
            }
            if let Some(m) = max {
                t.push((
                    if *max_open {
                        "exclusiveMaximum"
                    } else {
                        "maximum"
                    },
                    Value::Float(*m),
                ));
            }
            obj(t)
        }
        ParamKind::Integer { min } => obj(vec![
            ("type", s("integer")),
            ("minimum", Value::Integer(*min as i64)),
        ]),
        ParamKind::IntegerIn { min, max } => obj(vec![
            ("type", s("integer")),
            ("minimum", Value::Integer(*min as i64)),
            ("maximum", Value::Integer(*max as i64)),
        ]),
        ParamKind::Bool => obj(vec![("type", s("boolean"))]),
        ParamKind::Duration => unit(r"^\s*[0-9.eE+-]+\s*(ns|us|µs|ms|s|min)\s*$", "26ms"),
        ParamKind::DurationOrPreset { presets } => {
            let names = presets.iter().map(|p| s(p.name)).collect();
            let named: Table = presets
                .iter()
                .map(|p| {
                    let o = obj(vec![("value", s(p.value)), ("description", s(p.doc))]);
                    (p.name.to_string(), o)
                })
                .collect();
            obj(vec![
                (
                    "anyOf",
                    Value::Array(vec![
                        value_schema(&ParamKind::Duration),
                        obj(vec![("enum", Value::Array(names))]),
                    ]),
                ),
                ("x-presets", Value::Table(named)),
            ])
        }
        ParamKind::Rate => unit(
            r"^\s*[0-9.eE+-]+\s*[kKmMgGtT]?(bps|b/s|bit/s|bits/s)\s*$",
            "1.2Mbps",
        ),
        ParamKind::Bytes => unit(
            r"^\s*[0-9.eE+-]+\s*(B|bytes|[kK]B|MB|GB|KiB|MiB)\s*$",
            "500B",
        ),
        ParamKind::Limit => unit(
            r"^\s*[0-9.eE+-]+\s*(pkts|pkt|packets|B|bytes|[kK]B|MB|GB|KiB|MiB)\s*$",
            "100pkts",
        ),
        ParamKind::Curve => obj(vec![("$ref", s("#/$defs/curve"))]),
        ParamKind::Size => obj(vec![("$ref", s("#/$defs/size"))]),
        ParamKind::Choice { choices } => obj(vec![(
            "enum",
            Value::Array(choices.iter().map(|c| s(c)).collect()),
        )]),
        ParamKind::Name => obj(vec![]),
        ParamKind::Codepoints => obj(vec![
            ("type", s("array")),
            ("items", obj(vec![("type", s("string"))])),
        ]),
        ParamKind::Queue => obj(vec![("$ref", s("#/$defs/queue"))]),
        ParamKind::Constants => {
            let mut t = match object(&[], &[], None) {
                Value::Table(t) => t,
                _ => unreachable!(),
            };
            // Per variant, one object per flavour whose sender takes keys for it (each
            // flavour's congestion control declares its own), tagged `x-flavour`.
            use crate::traffic::tcp::Flavour;
            let props: Table = crate::traffic::cc::VARIANT_NAMES
                .iter()
                .filter_map(|n| {
                    let v = crate::traffic::cc::TcpVariant::from_name(n)?;
                    let alts: Vec<Value> = [Flavour::Ns2, Flavour::Linux]
                        .into_iter()
                        .filter(|f| !f.cc_keys(v).is_empty())
                        .map(|f| match object(f.cc_keys(v), &[], None) {
                            Value::Table(mut o) => {
                                o.insert("x-flavour".into(), s(f.name()));
                                Value::Table(o)
                            }
                            o => o,
                        })
                        .collect();
                    (!alts.is_empty())
                        .then(|| (n.to_string(), obj(vec![("anyOf", Value::Array(alts))])))
                })
                .collect();
            t.insert("properties".into(), Value::Table(props));
            t.insert("x-constants".into(), Value::Boolean(true));
            Value::Table(t)
        }
        ParamKind::Tables { params } if !params.is_empty() => obj(vec![
            ("type", s("array")),
            ("items", object(params, &[], None)),
        ]),
        ParamKind::Tables { .. } => obj(vec![]),
    }
}

/// An object schema of `params` (with `description` and `default` per key); `required` keys;
/// a `type` constant for tagged tables.
fn object(params: &[Param], required: &[&str], tag: Option<&str>) -> Value {
    let mut props = Table::new();
    if let Some(t) = tag {
        props.insert("type".into(), obj(vec![("const", s(t))]));
    }
    for prm in params {
        let mut v = match value_schema(&prm.kind) {
            Value::Table(t) => t,
            _ => Table::new(),
        };
        v.insert(
            "description".into(),
            s(&format!("{} Default: {}.", prm.doc, prm.default)),
        );
        props.insert(prm.name.to_string(), Value::Table(v));
    }
    let mut req: Vec<Value> = required.iter().map(|r| s(r)).collect();
    if tag.is_some() {
        req.insert(0, s("type"));
    }
    obj(vec![
        ("type", s("object")),
        ("additionalProperties", Value::Boolean(false)),
        ("required", Value::Array(req)),
        ("properties", Value::Table(props)),
    ])
}

/// The keys in their declared order (a JSON object has none): the order the Python builder's
/// generated classes keep.
/// One kind of a family (queue, meter, source) as an object of its keys tagged with its
/// `type`, with its doc line, its builder class and its keys' order.
fn kind_object(kind: &str, params: &[Param], doc: &str, class: &str) -> Table {
    let mut o = match object(params, &required(params), Some(kind)) {
        Value::Table(t) => t,
        _ => unreachable!("object() builds a table"),
    };
    o.insert("description".into(), s(doc));
    o.insert("title".into(), s(class));
    o.insert("x-order".into(), order(params));
    o
}

fn order(params: &[Param]) -> Value {
    Value::Array(params.iter().map(|p| s(p.name)).collect())
}

fn required(params: &[Param]) -> Vec<&'static str> {
    params
        .iter()
        .filter(|p| p.default == "required")
        .map(|p| p.name)
        .collect()
}

/// An array-of-tables schema whose items' `tcp` key is the `[tcp]` section's schema.
fn with_tcp(mut array: Value, tcp: Value) -> Value {
    if let Some(p) = array
        .get_mut("items")
        .and_then(|i| i.get_mut("properties"))
        .and_then(Value::as_table_mut)
    {
        p.insert("tcp".into(), tcp);
    }
    array
}

/// A size: a string with a unit, or a distribution table.
/// Every source kind as an object of its keys, with its doc line, its builder class and
/// where else it runs (`x-exports`).
fn source_kinds() -> Vec<Value> {
    SOURCE_TYPES
        .iter()
        .map(|k| {
            let info = SourceSpec::describe(k).expect("registered");
            let mut o = kind_object(k, info.params, info.doc, info.class);
            o.insert("x-page".into(), s(info.page));
            if let Some(app) = info.ns2_app {
                let settings = app
                    .settings
                    .iter()
                    .map(|(k, v)| Value::Array(vec![s(k), s(v)]));
                o.insert(
                    "x-ns2-app".into(),
                    obj(vec![
                        ("class", s(app.class)),
                        ("settings", Value::Array(settings.collect())),
                    ]),
                );
            }
            let e = info.exports;
            o.insert(
                "x-exports".into(),
                obj(vec![
                    ("ns2", Value::Boolean(e.ns2)),
                    ("ns3", Value::Boolean(e.ns3)),
                    ("emulator", Value::Boolean(e.emulator)),
                ]),
            );
            Value::Table(o)
        })
        .collect()
}

/// Every per-flow counter a TCP sender declares in its own file
/// ([`crate::traffic::sender::COUNTERS_BY_FLAVOUR`]), in the order of the flows table's
/// columns: its name, unit, description (`{span}` where the catalogue says over which span),
/// how it folds, and the `tcp.flavour` whose sender counts it.
fn flow_counters() -> Value {
    use crate::traffic::sender::COUNTERS_BY_FLAVOUR;
    let all = COUNTERS_BY_FLAVOUR.iter().flat_map(|(flavour, list)| {
        list.iter().map(|c| {
            obj(vec![
                ("name", s(c.name)),
                ("unit", s(c.unit)),
                ("description", s(c.doc)),
                ("fold", s(c.fold.name())),
                ("flavour", s(flavour.name())),
            ])
        })
    });
    Value::Array(all.collect())
}

/// Every TCP sender (`tcp.variant`) by name, in registry order: its doc line, its loss
/// recovery's facts and where else it runs (`x-exports`, declared in its algorithm's file).
fn senders() -> Value {
    use crate::traffic::cc::{Recovery, TcpVariant, VARIANT_NAMES};
    let t: Table = VARIANT_NAMES
        .iter()
        .map(|n| {
            let v = TcpVariant::from_name(n).expect("registered");
            let o = obj(vec![
                ("description", s(v.doc())),
                ("x-sack", Value::Boolean(v.recovery() == Recovery::Sack)),
                ("x-implies-ecn", Value::Boolean(v.requires_ecn())),
                ("x-always-paces", Value::Boolean(v.always_paces())),
                ("x-exports", v.exports().schema()),
            ]);
            (n.to_string(), o)
        })
        .collect();
    obj(vec![
        (
            "x-order",
            Value::Array(VARIANT_NAMES.iter().map(|n| s(n)).collect()),
        ),
        ("properties", Value::Table(t)),
    ])
}

/// What queue kind `k`'s averages are (`one`: its one average's name; `by_mode`: by its
/// `mode`, "" for any, the names of avg_prec0.. with two and three precedences;
/// `default_mode`: its `mode` key's default, when it has one).
fn averages(k: &str, params: &[Param]) -> Value {
    let a = Discipline::averages_of(k).expect("registered");
    let mut t = Table::new();
    if let Some(one) = a.one {
        t.insert("one".into(), s(one));
    }
    let names = |n: &[&str]| Value::Array(n.iter().map(|x| s(x)).collect());
    let modes = a.by_mode.iter().map(|(m, two, three)| {
        let o = obj(vec![("two", names(two)), ("three", names(three))]);
        (m.to_string(), o)
    });
    t.insert("by_mode".into(), Value::Table(modes.collect()));
    if let Some(p) = params.iter().find(|p| p.name == "mode") {
        t.insert("default_mode".into(), s(p.default));
    }
    Value::Table(t)
}

/// A `[[flow]]` array with the source kinds' keys among its keys (they are written at the
/// top of the flow's table), each once, documented by the kinds that take it.
fn with_source_keys(mut array: Value) -> Value {
    let Some(p) = array
        .get_mut("items")
        .and_then(|i| i.get_mut("properties"))
        .and_then(Value::as_table_mut)
    else {
        return array;
    };
    for k in SOURCE_TYPES {
        let info = SourceSpec::describe(k).expect("registered");
        for prm in info.params {
            if p.contains_key(prm.name) {
                continue;
            }
            let mut v = match value_schema(&prm.kind) {
                Value::Table(t) => t,
                _ => Table::new(),
            };
            let owners: Vec<String> = kinds_taking(prm.name)
                .iter()
                .map(|o| format!("`{o}`"))
                .collect();
            v.insert(
                "description".into(),
                s(&format!(
                    "A key of the {} sources: see their `type` below.",
                    owners.join(", ")
                )),
            );
            v.insert("x-source".into(), Value::Boolean(true));
            p.insert(prm.name.to_string(), Value::Table(v));
        }
    }
    array
}

fn size_schema() -> Value {
    obj(vec![(
        "oneOf",
        Value::Array(vec![
            value_schema(&ParamKind::Bytes),
            object(SIZE_DIST, &["dist"], None),
        ]),
    )])
}

/// The JSON Schema of the scenario format (draft 2020-12), as a TOML value (the Python side
/// writes it as JSON).
/// The `[tcp]` table's schema: each key whose default a flavour declares for itself
/// ([`Flavour::own_defaults`]) says both defaults, and lists them under `x-flavour-defaults`.
fn tcp_section() -> Value {
    use crate::traffic::tcp::Flavour;
    let mut t = object(TCP, &required(TCP), None);
    let props = t
        .get_mut("properties")
        .and_then(Value::as_table_mut)
        .expect("properties");
    for own in Flavour::Linux.own_defaults() {
        let ns2 = TCP
            .iter()
            .find(|p| p.name == own.name)
            .expect("a [tcp] key");
        let Some(Value::Table(v)) = props
            .get_mut(own.name)
            .filter(|_| ns2.default != own.default)
        else {
            continue;
        };
        let both = format!(
            "{} Default: {} in the ns2 flavour, {} in the linux flavour ({})",
            ns2.doc,
            ns2.default,
            own.default,
            own.doc.trim_end_matches('.')
        );
        v.insert("description".into(), s(&format!("{both}.")));
        let defaults = obj(vec![("ns2", s(ns2.default)), ("linux", s(own.default))]);
        v.insert("x-flavour-defaults".into(), defaults);
    }
    t
}

pub fn json_schema() -> Value {
    let section = |params: &[Param]| object(params, &required(params), None);
    let array_of = |params: &[Param]| {
        obj(vec![
            ("type", s("array")),
            ("items", object(params, &required(params), None)),
        ])
    };
    let queue_ref = obj(vec![("$ref", s("#/$defs/queue"))]);
    let mut top = match object(SCENARIO, &["name", "duration", "node", "link"], None) {
        Value::Table(t) => t,
        _ => unreachable!("an object schema is a table"),
    };
    let props = top
        .get_mut("properties")
        .and_then(Value::as_table_mut)
        .expect("properties");
    let mut link = match array_of(LINK) {
        Value::Table(t) => t,
        _ => unreachable!(),
    };
    if let Some(lp) = link
        .get_mut("items")
        .and_then(|i| i.get_mut("properties"))
        .and_then(Value::as_table_mut)
    {
        for k in ["queue", "queue_ab", "queue_ba"] {
            lp.insert(k.into(), queue_ref.clone());
        }
    }
    let mut cond = match array_of(CONDITIONER) {
        Value::Table(t) => t,
        _ => unreachable!(),
    };
    if let Some(cp) = cond
        .get_mut("items")
        .and_then(|i| i.get_mut("properties"))
        .and_then(Value::as_table_mut)
    {
        cp.insert("meter".into(), obj(vec![("$ref", s("#/$defs/meter"))]));
    }
    let mut put = |k: &str, v: Value| {
        let doc = props
            .get(k)
            .and_then(|o| o.get("description"))
            .cloned()
            .expect("declared");
        let mut t = match v {
            Value::Table(t) => t,
            _ => unreachable!(),
        };
        t.insert("description".into(), doc);
        props.insert(k.into(), Value::Table(t));
    };
    put("tcp", tcp_section());
    put("measurement", section(MEASUREMENT));
    put("timing", section(TIMING));
    put("node", array_of(NODE));
    put("link", Value::Table(link));
    put(
        "flow",
        with_source_keys(with_tcp(array_of(FLOW), tcp_section())),
    );
    put("arrivals", with_tcp(array_of(ARRIVALS), tcp_section()));
    put("capture", array_of(CAPTURE));
    put("conditioner", Value::Table(cond));
    let queues: Vec<Value> = QUEUE_TYPES
        .iter()
        .map(|k| {
            let (doc, params) = Discipline::describe(k).expect("registered");
            let class = Discipline::class_name(k).expect("registered");
            let mut o = kind_object(k, params, doc, class);
            // What the kind owns outside the scenario: the gauges it publishes in the queue
            // series (the outputs catalogue documents them from here) and its ns-3 export.
            let gauges = Discipline::gauges_of(k).expect("registered").iter();
            let gauges = gauges.map(|g| {
                obj(vec![
                    ("name", s(g.name)),
                    ("unit", s(g.unit)),
                    ("description", s(g.doc)),
                ])
            });
            o.insert("x-gauges".into(), Value::Array(gauges.collect()));
            let ns3 = match Discipline::ns3_of(k).expect("registered") {
                Ok(disc) => obj(vec![("queue_disc", s(disc))]),
                Err("") => obj(vec![(
                    "refused",
                    s(&format!(
                        "queue type `{k}` has no ns-3 queue disc the export maps it to"
                    )),
                )]),
                Err(why) => obj(vec![("refused", s(why))]),
            };
            o.insert("x-ns3".into(), ns3);
            o.insert("x-averages".into(), averages(k, params));
            let dsred = Discipline::ns2_dsred_of(k).expect("registered");
            if !dsred.is_empty() {
                let modes = dsred.iter().map(|(m, mred)| (m.to_string(), s(mred)));
                o.insert("x-ns2-dsred".into(), Value::Table(modes.collect()));
            }
            Value::Table(o)
        })
        .collect();
    let meters: Vec<Value> = METER_TYPES
        .iter()
        .map(|k| {
            let info = MeterSpec::describe(k).expect("registered");
            let mut o = kind_object(k, info.params, info.doc, info.class);
            o.insert("x-exports".into(), info.exports.schema());
            Value::Table(o)
        })
        .collect();
    let curve = object(&crate::aqm::af::CURVE, &["min_th", "max_th", "max_p"], None);
    top.insert(
        "$schema".into(),
        s("https://json-schema.org/draft/2020-12/schema"),
    );
    top.insert("title".into(), s("qoslab scenario"));
    top.insert(
        "$defs".into(),
        obj(vec![
            ("queue", obj(vec![("oneOf", Value::Array(queues))])),
            ("meter", obj(vec![("oneOf", Value::Array(meters))])),
            ("source", obj(vec![("oneOf", Value::Array(source_kinds()))])),
            ("sender", senders()),
            ("flow_counters", flow_counters()),
            ("curve", curve),
            ("size", size_schema()),
        ]),
    );
    Value::Table(top)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fields a serde struct accepts, read from its "unknown field" error.
    fn serde_fields<T: serde::de::DeserializeOwned + std::fmt::Debug>(extra: &str) -> Vec<String> {
        let src = format!("{extra}\nqoslab_no_such_key = 1\n");
        let e = toml::from_str::<T>(&src).expect_err("an unknown key is rejected");
        let msg = e.message().to_string();
        let list = msg
            .split("expected one of ")
            .nth(1)
            .or_else(|| msg.split("expected ").nth(1))
            .unwrap_or_else(|| panic!("no field list in {msg:?}"));
        list.replace(" or ", ",")
            .split(',')
            .map(|x| x.trim().trim_matches('`').to_string())
            .filter(|x| !x.is_empty())
            .collect()
    }

    /// A value of `kind` the parser accepts.
    fn sample(kind: &ParamKind) -> &'static str {
        match kind {
            ParamKind::Integer { .. } | ParamKind::IntegerIn { .. } => "2",
            ParamKind::Duration => "\"1s\"",
            ParamKind::Bytes | ParamKind::Size => "\"1KB\"",
            ParamKind::Tables { .. } => "{}",
            ParamKind::Choice { choices } if choices.contains(&"tcp") => "\"tcp\"",
            _ => "\"AF11\"",
        }
    }

    fn names(params: &[Param]) -> Vec<String> {
        params.iter().map(|p| p.name.to_string()).collect()
    }

    fn same(mut a: Vec<String>, mut b: Vec<String>, what: &str) {
        a.sort();
        b.sort();
        assert_eq!(
            a, b,
            "{what}: declared keys differ from the keys the parser accepts"
        );
    }

    #[test]
    fn declared_keys_are_the_keys_the_parser_accepts() {
        use crate::scenario::spec::*;
        // A flow's other keys are its source kind's: every declared key is a field of
        // FlowSpec (none lands among the source's keys), and an undeclared one is not.
        let mut src = String::from("src = \"a\"\ndst = \"b\"\nqoslab_no_such_key = 1\n");
        for p in FLOW.iter().filter(|p| !["src", "dst"].contains(&p.name)) {
            src.push_str(&format!("{} = {}\n", p.name, sample(&p.kind)));
        }
        let t: toml::Table = toml::from_str(&src).expect("a table");
        let fs = FlowSpec::read(&t, "flow[0]").expect("every [[flow]] key reads");
        let rest: Vec<&String> = fs.source.keys().collect();
        assert_eq!(rest, ["qoslab_no_such_key"], "[[flow]]");
        let mut top = serde_fields::<ScenarioSpec>("name = \"x\"\nduration = \"1s\"");
        top.sort();
        same(names(SCENARIO), top, "top level");
    }

    #[test]
    fn every_registered_queue_kind_is_in_the_schema() {
        let v = json_schema();
        let queues = v["$defs"]["queue"]["oneOf"].as_array().unwrap();
        assert_eq!(queues.len(), QUEUE_TYPES.len());
        let ared = queues
            .iter()
            .find(|q| q["properties"]["type"]["const"].as_str() == Some("ared"))
            .expect("ared");
        assert!(ared["properties"].get("beta").is_some());
        assert_eq!(
            ared["properties"]["w_q"]["exclusiveMaximum"].as_float(),
            Some(1.0)
        );
    }
}
