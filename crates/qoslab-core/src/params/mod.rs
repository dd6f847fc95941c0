//! Mechanism parameters: how a mechanism declares its keys ([`Param`]: name, kind, unit,
//! default, doc) and reads them from its scenario table ([`Table`]). The declarations are the
//! single source of the keys a mechanism accepts, of the error for a key it does not, of the
//! JSON Schema (`qoslab schema`) and of the generated scenario reference; the reader gives
//! every error the full key path, which the scenario layer locates in the source file.

pub mod resolved;
pub mod typed;

use serde::Serialize;

use crate::units::{self, Limit};

/// An error at one key of the scenario: the full key path and what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyError {
    pub key: String,
    pub message: String,
}

/// A [`KeyError`] at `key`.
pub fn key_error(key: impl Into<String>, message: impl Into<String>) -> KeyError {
    KeyError {
        key: key.into(),
        message: message.into(),
    }
}

/// The type of a parameter's value, as written in the scenario file.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ParamKind {
    /// A number; `min`/`max` bound it, `*_open` says whether the bound itself is excluded.
    Number {
        min: Option<f64>,
        max: Option<f64>,
        min_open: bool,
        max_open: bool,
    },
    /// A whole number at least `min`.
    Integer {
        min: u64,
    },
    /// A whole number in [min, max].
    IntegerIn {
        min: u64,
        max: u64,
    },
    Bool,
    /// A duration string such as "26ms".
    Duration,
    /// A duration string, or the name of one of `presets` standing for its duration.
    DurationOrPreset {
        presets: &'static [Preset],
    },
    /// A rate string such as "1.2Mbps".
    Rate,
    /// A size string such as "500B".
    Bytes,
    /// A queue limit such as "100pkts" or "64KB".
    Limit,
    /// A size string, or a size-distribution table `{ dist, mean, shape, sigma, cdf }`.
    Size,
    /// A RED curve table `{ min_th, max_th, max_p }` (thresholds in packets).
    Curve,
    /// One of a fixed set of words.
    Choice {
        choices: &'static [&'static str],
    },
    /// A name (of another component).
    Name,
    /// A list of DiffServ codepoint names ("AF11", "EF", "CS1", "BE").
    Codepoints,
    /// A queue table with a `type` (a physical queue of a multi-queue link).
    Queue,
    /// The TCP variants' constants: a table per variant with constants, of its keys.
    Constants,
    /// A list of tables, each described by `params`.
    Tables {
        #[serde(skip)]
        params: &'static [Param],
    },
}

/// A named value of a [`ParamKind::DurationOrPreset`] key: its name, its value as a scenario
/// file writes it ("130us") and what it stands for (where the value was measured).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Preset {
    pub name: &'static str,
    pub value: &'static str,
    pub doc: &'static str,
}

/// A number in the open interval (min, max).
pub const fn open(min: f64, max: f64) -> ParamKind {
    ParamKind::Number {
        min: Some(min),
        max: Some(max),
        min_open: true,
        max_open: true,
    }
}

/// A number in (min, max].
pub const fn open_closed(min: f64, max: f64) -> ParamKind {
    ParamKind::Number {
        min: Some(min),
        max: Some(max),
        min_open: true,
        max_open: false,
    }
}

/// A number in the closed interval [min, max].
pub const fn closed(min: f64, max: f64) -> ParamKind {
    ParamKind::Number {
        min: Some(min),
        max: Some(max),
        min_open: false,
        max_open: false,
    }
}

/// A number at least `min`.
pub const fn at_least(min: f64) -> ParamKind {
    ParamKind::Number {
        min: Some(min),
        max: None,
        min_open: false,
        max_open: false,
    }
}

/// One key of a mechanism's table.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Param {
    pub name: &'static str,
    #[serde(flatten)]
    pub kind: ParamKind,
    /// The default as it would be written, or "required", or a sentence.
    pub default: &'static str,
    pub doc: &'static str,
}

impl Param {
    pub const fn new(
        name: &'static str,
        kind: ParamKind,
        default: &'static str,
        doc: &'static str,
    ) -> Param {
        Param {
            name,
            kind,
            default,
            doc,
        }
    }
}

/// The `limit` key every single queue takes.
pub const LIMIT: Param = Param {
    name: "limit",
    kind: ParamKind::Limit,
    default: "50pkts",
    doc: "Buffer size, in packets or bytes (ns-2's default limit).",
};

/// Which reading of a mechanism runs: the reference algorithm (the RFC or the original paper)
/// or ns-2.35's implementation of it, rule for rule (the flavour `export-ns2` and `crosscheck`
/// compare against). Only mechanisms ns-2's dsRED has take the key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Flavour {
    #[default]
    Reference,
    Ns2,
}

impl Flavour {
    pub fn name(self) -> &'static str {
        match self {
            Flavour::Reference => "reference",
            Flavour::Ns2 => "ns2",
        }
    }
}

/// The `flavour` key of the mechanisms ns-2's dsRED has.
pub const FLAVOUR: Param = Param {
    name: "flavour",
    kind: ParamKind::Choice {
        choices: &["reference", "ns2"],
    },
    default: "reference",
    doc: "`reference` (the RFC or paper) or `ns2` (ns-2.35 dsRED's behaviour, rule for rule: \
          what export-ns2 and crosscheck compare against).",
};

/// A mechanism's table being read: the TOML table at `key` (the `type` key excluded), the
/// kind's name for messages and its declared parameters.
#[derive(Clone, Copy)]
pub struct Table<'a> {
    t: &'a toml::Table,
    key: &'a str,
    kind: &'static str,
    /// "queue" or "meter", for messages.
    noun: &'static str,
    /// For a member of a group (`count`): a list value gives member `i` its element `i`.
    member: Option<usize>,
    /// Where the values it resolves are recorded ([`Table::recording`]), if anywhere.
    rec: Option<&'a resolved::Record>,
}

impl<'a> Table<'a> {
    /// Checks that every key of `t` (but `type`) is one of `params`; `hint(key)` adds a
    /// sentence to the error for a key that belongs elsewhere.
    pub fn new(
        t: &'a toml::Table,
        key: &'a str,
        kind: &'static str,
        params: &[Param],
        hint: fn(&str) -> &'static str,
    ) -> Result<Table<'a>, KeyError> {
        Table::with_noun(t, key, kind, "queue", None, params, hint)
    }

    /// The table at `key` read by its host (e.g. a queue's `limit`), without checking its
    /// keys: the kind checks them.
    pub fn host(t: &'a toml::Table, key: &'a str) -> Table<'a> {
        Table {
            t,
            key,
            kind: "any",
            noun: "queue",
            member: None,
            rec: None,
        }
    }

    /// A meter's table, for group member `member` (list values are per member).
    pub fn meter(
        t: &'a toml::Table,
        key: &'a str,
        kind: &'static str,
        member: usize,
        params: &[Param],
        hint: fn(&str) -> &'static str,
    ) -> Result<Table<'a>, KeyError> {
        Table::with_noun(t, key, kind, "meter", Some(member), params, hint)
    }

    /// A TCP variant's constants (`tcp.cc.VARIANT`), checked against its declared keys.
    pub fn constants(
        t: &'a toml::Table,
        key: &'a str,
        kind: &'static str,
        params: &[Param],
    ) -> Result<Table<'a>, KeyError> {
        Table::with_noun(t, key, kind, "TCP variant", None, params, |_| "")
    }

    /// A traffic source's table (the keys of a `[[flow]]` its kind owns), for group member
    /// `member`, without checking its keys: the source registry checks them.
    pub fn source(
        t: &'a toml::Table,
        key: &'a str,
        kind: &'static str,
        member: usize,
    ) -> Table<'a> {
        Table {
            t,
            key,
            kind,
            noun: "flow",
            member: Some(member),
            rec: None,
        }
    }

    /// A section of the scenario file (`[measurement]`, a `[[link]]`) whose keys are all
    /// declared in `params`: a key that is not is an error in the words serde used for these
    /// sections ("unknown field `x`, expected one of …"), and so is a required one left out
    /// ("missing field `x`").
    pub fn section(
        t: &'a toml::Table,
        key: &'a str,
        params: &[Param],
    ) -> Result<Table<'a>, KeyError> {
        if let Some(k) = t
            .keys()
            .find(|k| !params.iter().any(|p| p.name == k.as_str()))
        {
            let names: Vec<String> = params.iter().map(|p| format!("`{}`", p.name)).collect();
            let expected = match names.as_slice() {
                [] => "there are no fields".to_string(),
                [a] => format!("expected {a}"),
                [a, b] => format!("expected {a} or {b}"),
                _ => format!("expected one of {}", names.join(", ")),
            };
            return Err(key_error(
                join_key(key, k),
                format!("unknown field `{k}`, {expected}"),
            ));
        }
        Ok(Table {
            t,
            key,
            kind: "section",
            noun: SECTION,
            member: None,
            rec: None,
        })
    }

    /// A section whose undeclared keys belong to something else (a `[[flow]]`'s are its
    /// source kind's, checked by the source registry): read like [`Table::section`], keys
    /// unchecked.
    pub fn open_section(t: &'a toml::Table, key: &'a str) -> Table<'a> {
        Table {
            t,
            key,
            kind: "section",
            noun: SECTION,
            member: None,
            rec: None,
        }
    }

    /// The same table, each value it resolves ([`Table::get`], [`Table::opt`], [`Table::record`])
    /// recorded in `rec`: a queue's resolved form is written from the record.
    pub fn recording(self, rec: &'a resolved::Record) -> Table<'a> {
        Table {
            rec: Some(rec),
            ..self
        }
    }

    /// Records `v` as the resolved value of parameter `name` (a value the kind reads or
    /// computes itself: a curve table, a default other keys decide).
    pub fn record(&self, name: &'static str, v: resolved::Resolved) {
        if let Some(r) = self.rec {
            r.push(name, v);
        }
    }

    /// The same table read for group member `i`: a list value gives it its element `i`.
    pub fn for_member(&self, i: usize) -> Table<'a> {
        Table {
            member: Some(i),
            ..*self
        }
    }

    fn with_noun(
        t: &'a toml::Table,
        key: &'a str,
        kind: &'static str,
        noun: &'static str,
        member: Option<usize>,
        params: &[Param],
        hint: fn(&str) -> &'static str,
    ) -> Result<Table<'a>, KeyError> {
        if let Some(k) = t
            .keys()
            .filter(|k| k.as_str() != "type")
            .find(|k| !params.iter().any(|p| p.name == k.as_str()))
        {
            let names: Vec<&str> = params.iter().map(|p| p.name).collect();
            return Err(key_error(
                format!("{key}.{k}"),
                format!(
                    "`{k}` is not a parameter of a {kind} {noun} (it takes {}){}",
                    names.join(", "),
                    hint(k)
                ),
            ));
        }
        Ok(Table {
            t,
            key,
            kind,
            noun,
            member,
            rec: None,
        })
    }

    /// The value of `name`: for a group member, element `i` of a list.
    fn raw(&self, name: &str) -> Option<&'a toml::Value> {
        match (self.t.get(name), self.member) {
            (Some(toml::Value::Array(a)), Some(i)) => a.get(i),
            (v, _) => v,
        }
    }

    /// The full key path of `name`.
    pub fn key(&self, name: &str) -> String {
        join_key(self.key, name)
    }

    /// The kind's name (e.g. "red").
    pub fn kind(&self) -> &'static str {
        self.kind
    }

    /// A rate, in bit/s.
    pub fn rate(&self, name: &str) -> Result<Option<u64>, KeyError> {
        self.unit(name, "a rate string such as \"1.2Mbps\"", units::parse_rate)
    }

    /// The value of `name` as written (for a group member, its element), for a key whose
    /// structure serde parses.
    pub fn value(&self, name: &str) -> Option<&'a toml::Value> {
        self.raw(name)
    }

    /// The number of values of `name` when it is written as a list (per group member).
    pub fn list_len(&self, name: &str) -> Option<usize> {
        match self.t.get(name) {
            Some(toml::Value::Array(a)) => Some(a.len()),
            _ => None,
        }
    }

    pub fn has(&self, name: &str) -> bool {
        self.t.contains_key(name)
    }

    fn wrong(&self, name: &str, what: &str, v: &toml::Value) -> KeyError {
        key_error(
            self.key(name),
            format!("expected {what}, got {} {v}", v.type_str()),
        )
    }

    pub fn f64(&self, name: &str) -> Result<Option<f64>, KeyError> {
        match self.raw(name) {
            None => Ok(None),
            Some(toml::Value::Float(x)) => Ok(Some(*x)),
            Some(toml::Value::Integer(i)) => Ok(Some(*i as f64)),
            Some(v) => Err(self.wrong(name, "a number", v)),
        }
    }

    pub fn bool(&self, name: &str) -> Result<Option<bool>, KeyError> {
        match self.raw(name) {
            None => Ok(None),
            Some(toml::Value::Boolean(b)) => Ok(Some(*b)),
            Some(v) => Err(self.wrong(name, "true or false", v)),
        }
    }

    pub fn u32(&self, name: &str) -> Result<Option<u32>, KeyError> {
        match self.raw(name) {
            None => Ok(None),
            Some(toml::Value::Integer(i)) => u32::try_from(*i).map(Some).map_err(|_| {
                key_error(
                    self.key(name),
                    format!("expected a whole number 0..={}, got {i}", u32::MAX),
                )
            }),
            Some(v) => Err(self.wrong(name, "a whole number", v)),
        }
    }

    pub fn str(&self, name: &str) -> Result<Option<&'a str>, KeyError> {
        match self.raw(name) {
            None => Ok(None),
            Some(toml::Value::String(s)) => Ok(Some(s.as_str())),
            Some(v) => Err(self.wrong(name, "a string", v)),
        }
    }

    fn unit<T>(
        &self,
        name: &str,
        what: &str,
        parse: fn(&str) -> Result<T, String>,
    ) -> Result<Option<T>, KeyError> {
        match self.raw(name) {
            None => Ok(None),
            Some(toml::Value::String(s)) => {
                parse(s).map(Some).map_err(|e| key_error(self.key(name), e))
            }
            Some(v @ (toml::Value::Integer(_) | toml::Value::Float(_))) => Err(key_error(
                self.key(name),
                format!("{v} has no unit: expected {what}"),
            )),
            Some(v) => Err(self.wrong(name, what, v)),
        }
    }

    /// A duration, in ns.
    pub fn duration(&self, name: &str) -> Result<Option<u64>, KeyError> {
        self.unit(
            name,
            "a duration string such as \"26ms\"",
            units::parse_duration,
        )
    }

    /// A size, in bytes.
    pub fn bytes(&self, name: &str) -> Result<Option<u64>, KeyError> {
        self.unit(name, "a size string such as \"500B\"", units::parse_bytes)
    }

    pub fn limit(&self, name: &str) -> Result<Option<Limit>, KeyError> {
        self.unit(
            name,
            "a queue limit such as \"100pkts\" or \"64KB\"",
            units::parse_limit,
        )
    }

    /// The `flavour` key ([`FLAVOUR`]).
    pub fn flavour(&self) -> Result<Flavour, KeyError> {
        let ParamKind::Choice { choices } = FLAVOUR.kind else {
            unreachable!("FLAVOUR is a choice")
        };
        let f = match self.choice(FLAVOUR.name, choices)? {
            Some("ns2") => Flavour::Ns2,
            _ => Flavour::Reference,
        };
        self.record(FLAVOUR.name, resolved::Resolved::Word(f.name()));
        Ok(f)
    }

    /// One of `choices`.
    pub fn choice(
        &self,
        name: &str,
        choices: &[&'static str],
    ) -> Result<Option<&'static str>, KeyError> {
        let Some(s) = self.str(name)? else {
            return Ok(None);
        };
        choices
            .iter()
            .copied()
            .find(|c| *c == s)
            .map(Some)
            .ok_or_else(|| {
                let list: Vec<String> = choices.iter().map(|c| format!("`{c}`")).collect();
                key_error(
                    self.key(name),
                    format!("unknown variant `{s}`, expected {}", one_of(&list)),
                )
            })
    }

    /// A sub-table (e.g. a RED curve), checked against `params`.
    pub fn table(&self, name: &str) -> Result<Option<&'a toml::Table>, KeyError> {
        match self.t.get(name) {
            None => Ok(None),
            Some(toml::Value::Table(t)) => Ok(Some(t)),
            Some(v) => Err(self.wrong(name, "a table", v)),
        }
    }

    /// A list of tables.
    pub fn tables(&self, name: &str) -> Result<Option<Vec<&'a toml::Table>>, KeyError> {
        match self.t.get(name) {
            None => Ok(None),
            Some(toml::Value::Array(a)) => a
                .iter()
                .enumerate()
                .map(|(i, v)| match v {
                    toml::Value::Table(t) => Ok(t),
                    v => Err(key_error(
                        format!("{}[{i}]", self.key(name)),
                        format!("expected a table, got {} {v}", v.type_str()),
                    )),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(v) => Err(self.wrong(name, "a list of tables", v)),
        }
    }

    /// `v`, or an error at `name` saying that the kind needs it (`what` describes it).
    pub fn required<T>(&self, name: &str, v: Option<T>, what: &str) -> Result<T, KeyError> {
        v.ok_or_else(|| {
            key_error(
                self.key(name),
                format!("a {} {} needs {what}", self.kind, self.noun),
            )
        })
    }
}

/// The noun of a scenario section's [`Table`] (its messages are serde's).
pub(crate) const SECTION: &str = "section";

/// `name` under `key` ("" for the top level of the file).
fn join_key(key: &str, name: &str) -> String {
    if key.is_empty() {
        name.to_string()
    } else {
        format!("{key}.{name}")
    }
}

/// "`a`, `b` or `c`".
fn one_of(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [a] => a.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}
