//! The scenario file schema: what a user writes, deserialised with serde. Unknown keys are
//! errors everywhere (`deny_unknown_fields`). The sections whose keys are declared once in
//! [`super::keys`] (`[tcp]` and a flow's `tcp`, `[measurement]`, `[timing]`, `[[node]]`, `[[link]]`,
//! `[[flow]]`, `[[arrivals]]`, `[[capture]]`, `[[conditioner]]`) are kept here as
//! TOML tables, read (unknown keys refused) by their declarations. Values with units are strings parsed by
//! [`crate::units`]; a group of `count` identical items is written once, with `{i}` in its
//! names replaced by the index 0..count and per-index values given as lists.

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::Deserialize;
use std::fmt;
use std::marker::PhantomData;

use crate::params::{key_error, KeyError, Table};
pub use crate::traffic::tcp::TcpVariant;
use crate::units;

/// The most members a group (`count`) may have.
pub const MAX_COUNT: u32 = 1_000_000;

macro_rules! unit_newtype {
    ($name:ident, $ty:ty, $parse:path, $what:expr) => {
        #[derive(Debug, Clone, Copy, PartialEq)]
        pub struct $name(pub $ty);
        impl TryFrom<String> for $name {
            type Error = String;
            fn try_from(s: String) -> Result<Self, String> {
                $parse(&s).map($name)
            }
        }
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str($what)
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$name, E> {
                        $parse(s).map($name).map_err(E::custom)
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$name, E> {
                        Err(E::custom(format!("{v} has no unit: expected {}", $what)))
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$name, E> {
                        Err(E::custom(format!("{v} has no unit: expected {}", $what)))
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$name, E> {
                        Err(E::custom(format!("{v} has no unit: expected {}", $what)))
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

unit_newtype!(
    DurationStr,
    u64,
    units::parse_duration,
    "a duration string such as \"26ms\""
);
unit_newtype!(
    BytesStr,
    u64,
    units::parse_bytes,
    "a size string such as \"500B\""
);
unit_newtype!(
    StartStr,
    Start,
    parse_start,
    "a start time such as \"0s\" or \"uniform(0s, 1s)\""
);

/// A DiffServ codepoint written as a name ("EF", "AF11", "BE", "CS1") or a number 0..=63.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dscp(pub u8);

impl<'de> Deserialize<'de> for Dscp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Dscp;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a codepoint such as \"AF11\", \"EF\", \"BE\" or a number 0..=63")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Dscp, E> {
                crate::ds::parse_dscp(s).map(Dscp).map_err(E::custom)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Dscp, E> {
                if (0..=63).contains(&v) {
                    Ok(Dscp(v as u8))
                } else {
                    Err(E::custom(format!("a DSCP is 6 bits (0..=63), got {v}")))
                }
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Dscp, E> {
                self.visit_i64(v.min(i64::MAX as u64) as i64)
            }
        }
        d.deserialize_any(V)
    }
}

/// When a flow starts: a fixed time, or uniform in [lo, hi) drawn from the run seed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Start {
    At(u64),
    Uniform(u64, u64),
}

pub fn parse_start(s: &str) -> Result<Start, String> {
    let t = s.trim();
    if let Some(inner) = t.strip_prefix("uniform(").and_then(|r| r.strip_suffix(')')) {
        let mut parts = inner.split(',');
        let (Some(a), Some(b), None) = (parts.next(), parts.next(), parts.next()) else {
            return Err(format!(
                "{s:?}: expected \"uniform(LO, HI)\" with two durations"
            ));
        };
        let (lo, hi) = (units::parse_duration(a)?, units::parse_duration(b)?);
        if hi < lo {
            return Err(format!("{s:?}: the upper bound is below the lower bound"));
        }
        return Ok(Start::Uniform(lo, hi));
    }
    units::parse_duration(t).map(Start::At)
}

/// A value given once for a whole group, or once per member (a list of `count` values).
#[derive(Debug, Clone, PartialEq)]
pub enum PerIndex<T> {
    One(T),
    Many(Vec<T>),
}

impl<T: Clone> PerIndex<T> {
    pub fn get(&self, i: usize) -> T {
        match self {
            PerIndex::One(v) => v.clone(),
            PerIndex::Many(v) => v[i].clone(),
        }
    }
    /// The number of per-member values, `None` for a single shared value.
    pub fn values(&self) -> Option<usize> {
        match self {
            PerIndex::One(_) => None,
            PerIndex::Many(v) => Some(v.len()),
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for PerIndex<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = PerIndex<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a value, or a list of one value per group member")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut v = Vec::new();
                while let Some(x) = seq.next_element()? {
                    v.push(x);
                }
                Ok(PerIndex::Many(v))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
                T::deserialize(de::value::StrDeserializer::new(s)).map(PerIndex::One)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                T::deserialize(de::value::I64Deserializer::new(v)).map(PerIndex::One)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                T::deserialize(de::value::U64Deserializer::new(v)).map(PerIndex::One)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                T::deserialize(de::value::F64Deserializer::new(v)).map(PerIndex::One)
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioSpec {
    /// Short name, recorded in every output.
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Simulated time.
    pub duration: DurationStr,
    /// Default seed (overridden by `--seed`).
    pub seed: Option<u64>,
    /// Defaults for every TCP flow: `[tcp]`, read by its declarations ([`super::keys::tcp`]).
    #[serde(default)]
    pub tcp: toml::Table,
    /// `[measurement]`, read by its declarations ([`super::keys::measurement`]).
    #[serde(default)]
    pub measurement: toml::Table,
    /// `[timing]`, read by its declarations ([`super::keys::timing`]).
    #[serde(default)]
    pub timing: toml::Table,
    /// `[[node]]` tables ([`super::keys::node`]).
    #[serde(default, rename = "node")]
    pub nodes: Vec<toml::Table>,
    /// `[[link]]` tables ([`super::keys::link`]).
    #[serde(default, rename = "link")]
    pub links: Vec<toml::Table>,
    /// `[[flow]]` tables ([`FlowSpec::read`]).
    #[serde(default, rename = "flow")]
    pub flows: Vec<toml::Table>,
    /// `[[arrivals]]` tables ([`super::keys::arrivals`]).
    #[serde(default)]
    pub arrivals: Vec<toml::Table>,
    /// `[[capture]]` tables ([`super::keys::capture`]).
    #[serde(default, rename = "capture")]
    pub captures: Vec<toml::Table>,
    /// `[[conditioner]]` tables ([`ConditionerSpec::read`]).
    #[serde(default, rename = "conditioner")]
    pub conditioners: Vec<toml::Table>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScopeSpec {
    PerFlow,
    Aggregate,
}

/// A traffic conditioner (RFC 2475): classifier, meter and marking/dropping action, guarding
/// the queue of one link direction (a host's egress or an edge router's interface), as its
/// declarations read it ([`super::keys::conditioner`]).
#[derive(Debug)]
pub struct ConditionerSpec {
    pub name: Option<String>,
    /// `Some` for a group (`count` given).
    pub count: Option<u32>,
    /// The link whose queue it guards; `{i}` is replaced in groups.
    pub link: String,
    /// "ab" or "ba".
    pub direction: &'static str,
    /// "any", "flow:NAME", "src:NODE", "dst:NODE" or "dscp:CODEPOINT".
    pub classify: String,
    /// The meter table, read by the meter registry ([`crate::conditioner::MeterSpec`]).
    pub meter: toml::Table,
    /// One meter per flow or one for all matching traffic (default: the meter kind's).
    pub scope: Option<ScopeSpec>,
    /// What to do with each colour: a codepoint to write (e.g. "AF11"), "keep" or "drop".
    pub green: String,
    pub yellow: String,
    /// Default: the meter kind's (AF13, or drop).
    pub red: Option<String>,
}

impl ConditionerSpec {
    /// Reads the `[[conditioner]]` table `t` at `key`.
    pub fn read(t: &toml::Table, key: &str) -> Result<ConditionerSpec, KeyError> {
        use super::keys::conditioner::*;
        let r = Table::section(t, key, super::keys::CONDITIONER)?;
        let count = r.get(&COUNT)?;
        Ok(ConditionerSpec {
            name: r.opt(&NAME)?,
            count: r.has(COUNT.name()).then_some(count),
            link: r.get(&LINK)?,
            direction: r.get(&DIRECTION)?,
            classify: r.get(&CLASSIFY)?,
            meter: r
                .table(METER.name)?
                .cloned()
                .ok_or_else(|| r.missing(METER.name))?,
            scope: match r.opt(&SCOPE)? {
                Some("aggregate") => Some(ScopeSpec::Aggregate),
                Some(_) => Some(ScopeSpec::PerFlow),
                None => None,
            },
            green: r.get(&GREEN)?,
            yellow: r.get(&YELLOW)?,
            red: r.opt(&RED)?,
        })
    }
}

/// A size in bytes: fixed ("500B") or drawn from a distribution, written as a table
/// `{ dist = "exponential", mean = "500B" }` (see [`SizeDistSpec`]).
#[derive(Debug, Clone)]
pub enum SizeSpec {
    Fixed(BytesStr),
    /// The table, read by [`SizeDistSpec::read`].
    Dist(toml::Table),
}

impl<'de> Deserialize<'de> for SizeSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = SizeSpec;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "a size such as \"100KB\", or a distribution table such as \
                     { dist = \"pareto\", mean = \"100KB\", shape = 1.2 }",
                )
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<SizeSpec, E> {
                units::parse_bytes(s)
                    .map(|b| SizeSpec::Fixed(BytesStr(b)))
                    .map_err(E::custom)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<SizeSpec, E> {
                Err(E::custom(format!(
                    "{v} has no unit: expected a size such as \"{v}B\""
                )))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<SizeSpec, E> {
                self.visit_i64(v.min(i64::MAX as u64) as i64)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<SizeSpec, E> {
                Err(E::custom(format!(
                    "{v} has no unit: expected a size such as \"1000B\""
                )))
            }
            fn visit_map<A: de::MapAccess<'de>>(self, m: A) -> Result<SizeSpec, A::Error> {
                toml::Table::deserialize(de::value::MapAccessDeserializer::new(m))
                    .map(SizeSpec::Dist)
            }
        }
        d.deserialize_any(V)
    }
}

/// A size distribution: `dist` is "fixed", "exponential", "pareto" (with `shape`, > 1),
/// "lognormal" (with `sigma`) or "empirical" (with `cdf`: "websearch", "datamining" or a CDF
/// file). `mean` is required except for "empirical". Read by its declarations
/// ([`super::keys::size`]); which keys a `dist` needs or refuses is the reader's rule.
#[derive(Debug, Clone)]
pub struct SizeDistSpec {
    pub dist: &'static str,
    pub mean: Option<u64>,
    pub shape: Option<f64>,
    pub sigma: Option<f64>,
    pub cdf: Option<String>,
}

impl SizeDistSpec {
    /// Reads the distribution table `t` at `key`.
    pub fn read(t: &toml::Table, key: &str) -> Result<SizeDistSpec, KeyError> {
        use super::keys::size::*;
        let r = Table::section(t, key, super::keys::SIZE_DIST)?;
        Ok(SizeDistSpec {
            dist: r.get(&DIST)?,
            mean: r.opt(&MEAN)?,
            shape: r.opt(&SHAPE)?,
            sigma: r.opt(&SIGMA)?,
            cdf: r.opt(&CDF)?,
        })
    }
}

/// A `[[flow]]` as its declarations read it ([`super::keys::flow`]): the keys every flow takes;
/// the keys of its traffic source's kind (`type`) are collected in `source` and read by the
/// source registry ([`crate::traffic::sources`]), which refuses any key its kind does not
/// declare.
#[derive(Debug)]
pub struct FlowSpec {
    pub name: Option<String>,
    /// `Some` for a group (`count` given).
    pub count: Option<u32>,
    pub src: String,
    pub dst: String,
    /// "tcp" or a source kind of the registry.
    pub kind: String,
    pub start: Option<PerIndex<StartStr>>,
    pub stop: Option<u64>,
    pub packet_size: Option<SizeSpec>,
    pub size: Option<u64>,
    pub dscp: Option<Dscp>,
    pub tcp: Option<toml::Table>,
    /// Every other key: the source kind's.
    pub source: toml::Table,
}

impl FlowSpec {
    /// Reads the `[[flow]]` table `t` at `key`.
    pub fn read(t: &toml::Table, key: &str) -> Result<FlowSpec, KeyError> {
        use super::keys::flow::*;
        let r = Table::open_section(t, key);
        let count = r.get(&COUNT)?;
        let source = t
            .iter()
            .filter(|(k, _)| !super::keys::FLOW.iter().any(|p| p.name == k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        Ok(FlowSpec {
            name: r.opt(&NAME)?,
            count: r.has(COUNT.name()).then_some(count),
            src: r.get(&SRC)?,
            dst: r.get(&DST)?,
            kind: r.get(&TYPE)?,
            start: serde_value(&r, START.name)?,
            stop: r.opt(&STOP)?,
            packet_size: serde_value(&r, PACKET_SIZE.name)?,
            size: r.opt(&SIZE)?,
            dscp: serde_value(&r, DSCP.name)?,
            tcp: r.table(TCP.name)?.cloned(),
            source,
        })
    }
}

/// The value of `name` in `t` parsed by serde (a key whose structure serde reads: a start, a
/// size or distribution table, a codepoint), with serde's message at the key.
pub fn serde_value<T: serde::de::DeserializeOwned>(
    t: &Table,
    name: &str,
) -> Result<Option<T>, KeyError> {
    t.value(name)
        .map(|v| {
            v.clone().try_into().map_err(|e: toml::de::Error| {
                key_error(t.key(name), super::plain_types(e.message().trim()))
            })
        })
        .transpose()
}
