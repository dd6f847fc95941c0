//! Typed parameter declarations: a [`Decl<T>`] is one key declared once (its [`Param`]: name,
//! kind with its range or choices, default as written in a scenario file, doc line) with the
//! type `T` of its value. [`Table::get`] reads it: the value given, or the declared default
//! parsed by the same reader, checked against the declared range or choices, with a
//! one-line [`KeyError`] at the key. The JSON Schema, the scenario reference and the Python
//! builder's kind classes are generated from the same [`Param`], so a kind's `from_table`
//! keeps only the rules between keys (RED's min_th < max_th).

use std::marker::PhantomData;

use super::resolved::Resolved;
use super::{key_error, KeyError, Param, ParamKind, Preset, Table};
use crate::units::{self, Limit};

/// A parameter whose value is read as `T` ([`Value`]): see the module documentation.
#[derive(Debug)]
pub struct Decl<T> {
    pub param: Param,
    /// For a duration, rate or size: the least value (in ns, bit/s or bytes; 0: any) and how
    /// the message writes it ("" for 1: "must be positive").
    pub least: (u64, &'static str),
    ty: PhantomData<fn() -> T>,
}

impl<T> Clone for Decl<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Decl<T> {}

impl<T> Decl<T> {
    /// A key named `name` of `kind`; `default` as a scenario file writes it ("0.1", "5ms",
    /// "true"), or "required", or a sentence for a default other keys decide.
    pub const fn new(
        name: &'static str,
        kind: ParamKind,
        default: &'static str,
        doc: &'static str,
    ) -> Decl<T> {
        Decl {
            param: Param {
                name,
                kind,
                default,
                doc,
            },
            least: (0, ""),
            ty: PhantomData,
        }
    }

    /// The same declaration for a duration, rate or size that must not be zero.
    pub const fn positive(self) -> Decl<T> {
        Decl {
            least: (1, ""),
            ..self
        }
    }

    /// The same declaration for a duration, rate or size of at least `least` (in ns, bit/s or
    /// bytes), written `text` in the message ("1us").
    pub const fn at_least(self, least: u64, text: &'static str) -> Decl<T> {
        Decl {
            least: (least, text),
            ..self
        }
    }

    pub const fn name(&self) -> &'static str {
        self.param.name
    }

    /// The same declaration under another doc line (a kind whose default or meaning differs).
    pub const fn with_doc(self, doc: &'static str) -> Decl<T> {
        Decl {
            param: Param { doc, ..self.param },
            ..self
        }
    }

    /// The same declaration with another default.
    pub const fn with_default(self, default: &'static str) -> Decl<T> {
        Decl {
            param: Param {
                default,
                ..self.param
            },
            ..self
        }
    }
}

impl<T: Value> Decl<T> {
    /// `v`, read by serde for a key whose structure serde parses, checked against the declared
    /// limits; the error is at `key`.
    pub fn checked(&self, key: String, v: T::Out) -> Result<T::Out, KeyError> {
        T::check(self, &v).map_err(|m| key_error(key, m))?;
        Ok(v)
    }

    /// The declared default, parsed: for a declaration whose default is a value (not
    /// "required" nor a sentence), checked by [`check_default`]'s tests.
    pub fn default_value(&self) -> T::Out {
        let p = &self.param;
        T::parse(p, p.default)
            .unwrap_or_else(|e| panic!("the declared default of {} ({}): {e}", p.name, p.default))
    }
}

/// The type of a parameter's value: how it is read, how its default is parsed, and the
/// declared limits it is checked against.
pub trait Value {
    type Out;
    /// The value at `p.name`, if given (wrong type: an error at the key).
    fn read(t: &Table, p: &Param) -> Result<Option<Self::Out>, KeyError>;
    /// A default as declared.
    fn parse(p: &Param, text: &str) -> Result<Self::Out, String>;
    /// Whether `v` is within the declaration's limits; the message names the key.
    fn check(d: &Decl<Self>, v: &Self::Out) -> Result<(), String>
    where
        Self: Sized;
    /// `v` as the resolved form writes it.
    fn resolved(v: &Self::Out) -> Resolved;
}

/// Whether `x` lies in a [`ParamKind::Number`]'s range, with the message if not.
pub fn check_number(name: &str, kind: &ParamKind, x: f64) -> Result<(), String> {
    let ParamKind::Number {
        min,
        max,
        min_open,
        max_open,
    } = *kind
    else {
        return Ok(());
    };
    // TOML's `inf` is a float: no declared number takes it (an unbounded range means any
    // finite value; PIE's β = inf would switch its early drops off).
    if x.is_infinite() {
        return Err(format!("{name} must be finite, got {x}"));
    }
    let lo_ok = min.is_none_or(|m| if min_open { x > m } else { x >= m });
    let hi_ok = max.is_none_or(|m| if max_open { x < m } else { x <= m });
    if lo_ok && hi_ok && !x.is_nan() {
        return Ok(());
    }
    let x = Shown(x);
    Err(match (min, max) {
        (Some(lo), Some(hi)) => format!(
            "{name} must be in {}{lo}, {hi}{}, got {x}",
            if min_open { "(" } else { "[" },
            if max_open { ")" } else { "]" }
        ),
        (Some(lo), None) if min_open && lo == 0.0 => format!("{name} must be positive, got {x}"),
        (Some(lo), None) => format!(
            "{name} must be {} {lo}, got {x}",
            if min_open { ">" } else { ">=" }
        ),
        (None, Some(hi)) => format!(
            "{name} must be {} {hi}, got {x}",
            if max_open { "<" } else { "<=" }
        ),
        (None, None) => format!("{name} must be a number, got {x}"),
    })
}

impl Value for f64 {
    type Out = f64;
    fn read(t: &Table, p: &Param) -> Result<Option<f64>, KeyError> {
        t.f64(p.name)
    }
    fn parse(_: &Param, text: &str) -> Result<f64, String> {
        text.parse().map_err(|e| format!("{e}"))
    }
    fn check(d: &Decl<f64>, v: &f64) -> Result<(), String> {
        check_number(d.param.name, &d.param.kind, *v)
    }
    fn resolved(v: &Self::Out) -> Resolved {
        Resolved::Number(*v)
    }
}

impl Value for bool {
    type Out = bool;
    fn read(t: &Table, p: &Param) -> Result<Option<bool>, KeyError> {
        t.bool(p.name)
    }
    fn parse(_: &Param, text: &str) -> Result<bool, String> {
        text.parse().map_err(|e| format!("{e}"))
    }
    fn check(_: &Decl<bool>, _: &bool) -> Result<(), String> {
        Ok(())
    }
    fn resolved(v: &Self::Out) -> Resolved {
        Resolved::Bool(*v)
    }
}

/// A whole number's declared minimum.
fn check_integer(d: &Param, v: u64) -> Result<(), String> {
    match d.kind {
        ParamKind::Integer { min } if v < min => {
            Err(format!("{} must be at least {min}, got {v}", d.name))
        }
        ParamKind::IntegerIn { min, max } if v < min || v > max => Err(format!(
            "{} must be between {min} and {max}, got {v}",
            d.name
        )),
        _ => Ok(()),
    }
}

impl Value for u32 {
    type Out = u32;
    fn read(t: &Table, p: &Param) -> Result<Option<u32>, KeyError> {
        // A whole number beyond 32 bits (or negative) with a declared range: the range.
        match (t.raw(p.name), p.kind) {
            (Some(toml::Value::Integer(i)), ParamKind::IntegerIn { min, max })
                if u32::try_from(*i).is_err() =>
            {
                Err(key_error(
                    t.key(p.name),
                    format!("{} must be between {min} and {max}, got {i}", p.name),
                ))
            }
            _ => t.u32(p.name),
        }
    }
    fn parse(_: &Param, text: &str) -> Result<u32, String> {
        text.parse().map_err(|e| format!("{e}"))
    }
    fn check(d: &Decl<u32>, v: &u32) -> Result<(), String> {
        check_integer(&d.param, u64::from(*v))
    }
    fn resolved(v: &Self::Out) -> Resolved {
        Resolved::Integer(u64::from(*v))
    }
}

impl Value for u64 {
    type Out = u64;
    fn read(t: &Table, p: &Param) -> Result<Option<u64>, KeyError> {
        match t.raw(p.name) {
            None => Ok(None),
            Some(toml::Value::Integer(i)) => u64::try_from(*i).map(Some).map_err(|_| {
                key_error(
                    t.key(p.name),
                    format!("expected a whole number 0..={}, got {i}", i64::MAX),
                )
            }),
            Some(v) => Err(t.wrong(p.name, "a whole number", v)),
        }
    }
    fn parse(_: &Param, text: &str) -> Result<u64, String> {
        text.parse().map_err(|e| format!("{e}"))
    }
    fn check(d: &Decl<u64>, v: &u64) -> Result<(), String> {
        check_integer(&d.param, *v)
    }
    fn resolved(v: &Self::Out) -> Resolved {
        Resolved::Integer(*v)
    }
}

/// The least value of a [`Decl::positive`] or [`Decl::at_least`] declaration.
fn check_least<T>(d: &Decl<T>, v: u64) -> Result<(), String> {
    match d.least {
        (least, _) if v >= least => Ok(()),
        (_, "") => Err(format!("{} must be positive", d.param.name)),
        (_, text) => Err(format!("{} must be at least {text}", d.param.name)),
    }
}

macro_rules! unit_value {
    ($(#[$doc:meta])* $marker:ident, $reader:ident, $parse:path) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy)]
        pub struct $marker;
        impl Value for $marker {
            type Out = u64;
            fn resolved(v: &u64) -> Resolved {
                Resolved::$marker(*v)
            }
            fn read(t: &Table, p: &Param) -> Result<Option<u64>, KeyError> {
                t.$reader(p.name)
            }
            fn parse(_: &Param, text: &str) -> Result<u64, String> {
                $parse(text)
            }
            fn check(d: &Decl<$marker>, v: &u64) -> Result<(), String> {
                check_least(d, *v)
            }
        }
    };
}

unit_value!(
    /// A duration string ("26ms"), read in ns.
    Duration,
    duration,
    units::parse_duration
);
unit_value!(
    /// A rate string ("1.2Mbps"), read in bit/s.
    Rate,
    rate,
    units::parse_rate
);
unit_value!(
    /// A size string ("500B"), read in bytes.
    Bytes,
    bytes,
    units::parse_bytes
);

/// A duration string, or the name of one of the key's presets
/// ([`ParamKind::DurationOrPreset`]), read as (ns, the preset's name when one was named).
#[derive(Debug, Clone, Copy)]
pub struct DurationOrPreset;

fn presets(p: &Param) -> &'static [Preset] {
    match p.kind {
        ParamKind::DurationOrPreset { presets } => presets,
        _ => &[],
    }
}

/// What a [`DurationOrPreset`] key takes, for messages: `a duration such as "130us" or a
/// preset: "exact" (0s) or "testbed" (130us)`.
fn duration_or_preset(p: &Param) -> String {
    let names: Vec<String> = presets(p)
        .iter()
        .map(|x| format!("{:?} ({})", x.name, x.value))
        .collect();
    format!(
        "a duration such as \"130us\" or a preset: {}",
        super::one_of(&names)
    )
}

/// A preset's name, or a duration; a word that is neither is an unknown preset of `key`,
/// and the message names the presets.
fn preset_or_duration(
    p: &Param,
    text: &str,
    key: &str,
) -> Result<(u64, Option<&'static str>), String> {
    if let Some(x) = presets(p).iter().find(|x| x.name == text) {
        return units::parse_duration(x.value).map(|ns| (ns, Some(x.name)));
    }
    let number = text
        .trim_start()
        .starts_with(|c: char| c.is_ascii_digit() || "+-.".contains(c));
    if !number {
        return Err(format!(
            "unknown preset {text:?} for {key}: expected {}",
            duration_or_preset(p)
        ));
    }
    units::parse_duration(text).map(|ns| (ns, None))
}

impl Value for DurationOrPreset {
    type Out = (u64, Option<&'static str>);
    fn read(t: &Table, p: &Param) -> Result<Option<Self::Out>, KeyError> {
        match t.raw(p.name) {
            Some(toml::Value::String(s)) => {
                let key = t.key(p.name);
                preset_or_duration(p, s, &key)
                    .map(Some)
                    .map_err(|m| key_error(key, m))
            }
            _ => Ok(t
                .unit(p.name, &duration_or_preset(p), units::parse_duration)?
                .map(|ns| (ns, None))),
        }
    }
    fn parse(p: &Param, text: &str) -> Result<Self::Out, String> {
        preset_or_duration(p, text, p.name)
    }
    fn check(d: &Decl<DurationOrPreset>, v: &Self::Out) -> Result<(), String> {
        check_least(d, v.0)
    }
    fn resolved(v: &Self::Out) -> Resolved {
        Resolved::Duration(v.0)
    }
}

/// A size string ("500B") that must fit in 32 bits (a packet size), read in bytes.
#[derive(Debug, Clone, Copy)]
pub struct Bytes32;

impl Value for Bytes32 {
    type Out = u32;
    fn read(t: &Table, p: &Param) -> Result<Option<u32>, KeyError> {
        match t.bytes(p.name)? {
            None => Ok(None),
            Some(b) => u32::try_from(b).map(Some).map_err(|_| {
                key_error(
                    t.key(p.name),
                    format!("{} must be below 4 GB, got {b} bytes", p.name),
                )
            }),
        }
    }
    fn parse(_: &Param, text: &str) -> Result<u32, String> {
        let b = units::parse_bytes(text)?;
        u32::try_from(b).map_err(|e| format!("{e}"))
    }
    fn check(d: &Decl<Bytes32>, v: &u32) -> Result<(), String> {
        check_least(d, u64::from(*v))
    }
    fn resolved(v: &Self::Out) -> Resolved {
        Resolved::Bytes(u64::from(*v))
    }
}

/// A queue limit ("100pkts", "64KB").
#[derive(Debug, Clone, Copy)]
pub struct QueueLimit;

impl Value for QueueLimit {
    type Out = Limit;
    fn read(t: &Table, p: &Param) -> Result<Option<Limit>, KeyError> {
        t.limit(p.name)
    }
    fn parse(_: &Param, text: &str) -> Result<Limit, String> {
        units::parse_limit(text)
    }
    fn check(d: &Decl<QueueLimit>, v: &Limit) -> Result<(), String> {
        match v {
            Limit::Packets(n) | Limit::Bytes(n) if *n < d.least.0 => {
                Err(format!("{} must be positive", d.param.name))
            }
            _ => Ok(()),
        }
    }
    fn resolved(v: &Self::Out) -> Resolved {
        Resolved::Limit(*v)
    }
}

/// One of a [`ParamKind::Choice`]'s words.
#[derive(Debug, Clone, Copy)]
pub struct Word;

fn choices(p: &Param) -> &'static [&'static str] {
    match p.kind {
        ParamKind::Choice { choices } => choices,
        _ => &[],
    }
}

impl Value for Word {
    type Out = &'static str;
    fn read(t: &Table, p: &Param) -> Result<Option<&'static str>, KeyError> {
        t.choice(p.name, choices(p))
    }
    fn parse(p: &Param, text: &str) -> Result<&'static str, String> {
        choices(p)
            .iter()
            .copied()
            .find(|c| *c == text)
            .ok_or_else(|| format!("{text} is not one of {:?}", choices(p)))
    }
    fn check(_: &Decl<Word>, _: &&'static str) -> Result<(), String> {
        Ok(())
    }
    fn resolved(v: &Self::Out) -> Resolved {
        Resolved::Word(v)
    }
}

/// A string: a name of another component, a file name, a template with `{i}`.
#[derive(Debug, Clone, Copy)]
pub struct Text;

impl Value for Text {
    type Out = String;
    fn read(t: &Table, p: &Param) -> Result<Option<String>, KeyError> {
        Ok(t.str(p.name)?.map(str::to_string))
    }
    fn parse(_: &Param, text: &str) -> Result<String, String> {
        Ok(text.to_string())
    }
    fn check(_: &Decl<Text>, _: &String) -> Result<(), String> {
        Ok(())
    }
    fn resolved(v: &Self::Out) -> Resolved {
        Resolved::Text(v.clone())
    }
}

impl Table<'_> {
    /// `d`'s value if the table gives it, checked against the declaration's limits.
    /// The value is recorded ([`Table::recording`]), [`Resolved::Absent`] when not given.
    pub fn opt<T: Value>(&self, d: &Decl<T>) -> Result<Option<T::Out>, KeyError> {
        let v = self.given(d)?;
        self.record(
            d.param.name,
            v.as_ref().map_or(Resolved::Absent, |v| T::resolved(v)),
        );
        Ok(v)
    }

    /// `d`'s value if the table gives it, checked, not recorded.
    fn given<T: Value>(&self, d: &Decl<T>) -> Result<Option<T::Out>, KeyError> {
        let Some(v) = T::read(self, &d.param)? else {
            return Ok(None);
        };
        T::check(d, &v).map_err(|m| key_error(self.key(d.param.name), m))?;
        Ok(Some(v))
    }

    /// Records `v` as `d`'s resolved value (a default other keys decide).
    pub fn record_value<T: Value>(&self, d: &Decl<T>, v: &T::Out) {
        self.record(d.param.name, T::resolved(v));
    }

    /// `d`'s value, or its declared default; an error at the key when it is out of its
    /// declared limits, or missing and required. The value is recorded ([`Table::recording`]).
    pub fn get<T: Value>(&self, d: &Decl<T>) -> Result<T::Out, KeyError> {
        let v = match self.given(d)? {
            Some(v) => v,
            None if d.param.default == "required" => return Err(self.missing(d.param.name)),
            // Every declared default parses and lies in its limits (params::typed tests, per kind).
            None => d.default_value(),
        };
        self.record_value(d, &v);
        Ok(v)
    }

    /// The error for a required key that is missing.
    pub fn missing(&self, name: &str) -> KeyError {
        if self.noun == super::SECTION {
            return key_error(self.key(name), format!("missing field `{name}`"));
        }
        key_error(
            self.key(name),
            format!(
                "{} {} {} needs `{name}`",
                if self.kind.starts_with(['a', 'e', 'i', 'o', 'u']) {
                    "an"
                } else {
                    "a"
                },
                self.kind,
                self.noun
            ),
        )
    }
}

/// Checks a kind's declared defaults: each one that is written as a value parses with the
/// key's type and lies within its limits. Used by each family's test over every kind.
pub fn check_default<T: Value>(d: &Decl<T>) -> Result<(), String> {
    let p = &d.param;
    if p.default == "required" {
        return Ok(());
    }
    let v = T::parse(p, p.default)?;
    T::check(d, &v)
}

/// A number as an error message shows it: as written for everyday magnitudes, in scientific
/// notation beyond (1e300 is "1e300", not its 301 digits).
#[derive(Debug, Clone, Copy)]
pub struct Shown(pub f64);

impl std::fmt::Display for Shown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let a = self.0.abs();
        if a != 0.0 && a.is_finite() && !(1e-6..1e16).contains(&a) {
            write!(f, "{:e}", self.0)
        } else {
            write!(f, "{}", self.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::{Discipline, QUEUE_TYPES};
    use crate::conditioner::{MeterSpec, METER_TYPES};

    /// Every queue, meter and source kind's declared defaults: a default written as a value parses
    /// with the key's kind and lies within its declared limits (the others are "required" or
    /// a sentence saying what other keys decide).
    #[test]
    fn an_error_shows_a_huge_or_tiny_number_in_scientific_notation() {
        assert_eq!(Shown(1e300).to_string(), "1e300");
        assert_eq!(Shown(-2.5e-9).to_string(), "-2.5e-9");
        assert_eq!(Shown(0.002).to_string(), "0.002");
        assert_eq!(Shown(60.0).to_string(), "60");
        assert_eq!(Shown(0.0).to_string(), "0");
    }

    #[test]
    fn every_declared_default_parses_and_lies_in_its_limits() {
        let mut params: Vec<(&str, Param)> = Vec::new();
        for k in QUEUE_TYPES {
            let (_, ps) = Discipline::describe(k).expect("registered");
            params.extend(ps.iter().map(|p| (*k, *p)));
        }
        for k in METER_TYPES {
            let info = MeterSpec::describe(k).expect("registered");
            params.extend(info.params.iter().map(|p| (*k, *p)));
        }
        for k in crate::traffic::sources::SOURCE_TYPES {
            let info = crate::traffic::sources::SourceSpec::describe(k).expect("registered");
            params.extend(info.params.iter().map(|p| (*k, *p)));
        }
        let mut checked = 0;
        for (kind, p) in &params {
            let d = p.default;
            let sentence = d == "required" || d == "none" || d.contains(' ');
            let ok: Result<(), String> = match p.kind {
                ParamKind::Number { .. } => d
                    .parse::<f64>()
                    .map_err(|e| e.to_string())
                    .and_then(|x| check_number(p.name, &p.kind, x)),
                ParamKind::Integer { .. } | ParamKind::IntegerIn { .. } => d
                    .parse::<u64>()
                    .map_err(|e| e.to_string())
                    .and_then(|x| check_integer(p, x)),
                ParamKind::Bool => d.parse::<bool>().map(|_| ()).map_err(|e| e.to_string()),
                ParamKind::Duration => units::parse_duration(d).map(|_| ()),
                ParamKind::Rate => units::parse_rate(d).map(|_| ()),
                ParamKind::Bytes => units::parse_bytes(d).map(|_| ()),
                ParamKind::Limit => units::parse_limit(d).map(|_| ()),
                ParamKind::Choice { choices } => {
                    if choices.contains(&d) {
                        Ok(())
                    } else {
                        Err(format!("not one of {choices:?}"))
                    }
                }
                _ => continue,
            };
            match ok {
                Ok(()) => checked += 1,
                Err(e) => assert!(sentence, "{kind}.{}: default {d:?}: {e}", p.name),
            }
        }
        assert!(checked > 60, "only {checked} defaults checked");
    }

    #[test]
    fn an_out_of_range_value_is_an_error_at_its_key() {
        let d: Decl<f64> = Decl::new("max_p", crate::params::open_closed(0.0, 1.0), "0.1", "");
        let read = |src: &str| {
            let t: toml::Table = toml::from_str(src).unwrap();
            let tab = Table::host(&t, "q");
            tab.get(&d)
        };
        assert_eq!(read("").unwrap(), 0.1);
        assert_eq!(read("max_p = 1").unwrap(), 1.0);
        let e = read("max_p = 1.5").unwrap_err();
        assert_eq!(e.key, "q.max_p");
        assert_eq!(e.message, "max_p must be in (0, 1], got 1.5");
        assert!(read("max_p = 0").is_err());
        assert!(read("max_p = nan").is_err());
        let beta: Decl<f64> = Decl::new("beta", crate::params::at_least(0.0), "1.25", "");
        let t: toml::Table = toml::from_str("beta = inf").unwrap();
        let e = Table::host(&t, "q").get(&beta).unwrap_err();
        assert_eq!(
            (e.key.as_str(), e.message.as_str()),
            ("q.beta", "beta must be finite, got inf")
        );
    }
}
