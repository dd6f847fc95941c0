//! The registry of traffic sources: the one list of the open-loop source kinds a `[[flow]]`
//! may take (`type`; TCP, a closed-loop sender, is read by the TCP layer).
//!
//! Each kind is one file holding its configuration, which implements [`SourceKind`]: the keys
//! it owns ([`Param`]s declared once with [`crate::params::typed::Decl`]: unit, default, range,
//! doc), reading them from the flow's table, the packet-time generator it builds (a
//! [`Generate`]) and what it can do elsewhere ([`Exports`]: ns-2 and ns-3 export, the
//! emulator). [`source_registry!`] turns one line per kind into [`SourceSpec`] (the typed
//! configurations, serialised as the kind's own keys in the resolved flow), [`AnyGenerator`]
//! (the run-time generators, dispatched by `match`) and the dispatch between them. An unknown
//! kind is an error when the scenario is read; nothing downstream matches on a kind's name.

use std::sync::Arc;

use serde::Serialize;

use crate::params::{key_error, KeyError, Param, Table};
use crate::rng::SimRng;
use crate::traffic::trace::{TraceInfo, TraceRow};
use crate::units::SimTime;

/// Where a source kind can run besides the simulator (asked by the exporters and the
/// emulator, which name no kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Exports {
    /// `qoslab export-ns2` writes it as an ns-2 `Application/Traffic/…`.
    pub ns2: bool,
    /// `qoslab.ns3` writes it into the ns-3 program's input (the ns-3 cross-checks).
    pub ns3: bool,
    /// The emulator's traffic generator replays it on real sockets.
    pub emulator: bool,
}

impl Exports {
    /// Runs in the simulator only.
    pub const NONE: Exports = Exports {
        ns2: false,
        ns3: false,
        emulator: false,
    };
}

/// A source as ns-2.35 generates it: `set app [new CLASS]`, then `$app set NAME VALUE` lines.
/// A VALUE in braces is one the Tcl writer computes for the flow (python/qoslab/ns2/tcl.py):
/// `{rate_bps}`, `{on_s}`, `{off_s}`, and for a Poisson process run as ns-2's exponential
/// on/off source with no ON time, `{peak_bps}` and `{idle_s}` (the mean gap less one
/// packet's time at the peak rate).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ns2App {
    pub class: &'static str,
    pub settings: &'static [(&'static str, &'static str)],
}

/// A trace read: what the resolved scenario records of it, and its rows (shared).
pub type TraceRead = (TraceInfo, Arc<[TraceRow]>);

/// What a source's table may need from the scenario reader.
pub struct SourceContext<'a> {
    /// Reads a trace file named at a key (`key`, `file`, `flow`), shared between the flows
    /// naming the same file.
    pub read_trace: &'a mut TraceReader<'a>,
}

/// Reads the trace file named at a key: (`key`, `file`, `flow`).
pub type TraceReader<'a> = dyn FnMut(&str, &str, Option<&str>) -> Result<TraceRead, KeyError> + 'a;

/// A source kind's configuration: see the module documentation.
pub trait SourceKind: Sized {
    /// The generator it builds.
    type Runtime: Generate;
    /// One line: what it is and where it comes from (for the references and the builder).
    const DOC: &'static str;
    /// Its model page under docs/ (the site's nav and front page link it).
    const PAGE: &'static str;
    /// Its keys (those of the flow's table it owns).
    const PARAMS: &'static [Param];
    /// Where else it runs.
    const EXPORTS: Exports = Exports::NONE;
    /// How ns-2 generates it, when it exports there ([`Exports::ns2`]).
    const NS2_APP: Option<Ns2App> = None;
    /// Whether its packet sizes may be drawn from a distribution (`packet_size` table); a
    /// trace gives its own.
    const SIZE_DIST: bool = true;
    /// Reads its keys for one member of the flow group (list values are per member).
    fn from_table(t: &Table, ctx: &mut SourceContext) -> Result<Self, KeyError>;
    /// The generator in its initial state.
    fn build(&self) -> Self::Runtime;
    /// A replayed trace's rows (its send times are the rows', not the generator's).
    fn rows(&self) -> Option<Arc<[TraceRow]>> {
        None
    }
}

/// A source's packet times, drawn from the flow's traffic stream.
pub trait Generate {
    /// The delay until the next packet after one was sent; `size` is the flow's packet size
    /// in bytes (the mean one when sizes are drawn per packet).
    fn gap(&mut self, size: u32, rng: &mut SimRng) -> SimTime;
    /// The next ON (`on`) or OFF period of a source that alternates; `None`, drawing nothing,
    /// for the others.
    fn period(&mut self, _on: bool, _rng: &mut SimRng) -> Option<SimTime> {
        None
    }
}

/// One line per source kind: `"type" => Variant(file::Config) as "PythonClass"`, the kind's
/// file being `traffic/sources/file.rs`. Declares the files' modules and generates
/// [`SourceSpec`], [`AnyGenerator`], [`SOURCE_TYPES`] and the dispatch between them; the
/// Python builder's class of the kind (`qoslab schema --python source`) takes the name after
/// `as`.
macro_rules! source_registry {
    ($( $name:literal => $variant:ident($file:ident :: $config:ident) as $class:literal ),* $(,)?) => {
        $( mod $file; )*
        source_registry!(@kinds $( $name => $variant($file::$config) as $class ),*);
    };
    (@kinds $( $name:literal => $variant:ident($config:ty) as $class:literal ),*) => {
        /// A traffic source with its resolved parameters, one variant per kind (serialised as
        /// the kind's own keys).
        #[derive(Debug, Clone, Serialize)]
        #[serde(untagged)]
        pub enum SourceSpec {
            $( $variant($config), )*
        }

        /// The run-time generators, dispatched by `match`.
        #[derive(Debug, Clone)]
        pub enum AnyGenerator {
            $( $variant(<$config as SourceKind>::Runtime), )*
        }

        /// Every source kind's `type`, in registry order.
        pub const SOURCE_TYPES: &[&str] = &[$($name),*];
        /// Every `type` a `[[flow]]` takes: `tcp`, then the source kinds.
        pub const FLOW_TYPES: &[&str] = &["tcp", $($name),*];

        /// What the scenario layer and the schema need to know of a kind.
        #[derive(Debug, Clone, Copy)]
        pub struct SourceInfo {
            pub doc: &'static str,
            /// Its model page under docs/.
            pub page: &'static str,
            /// The Python builder's class name.
            pub class: &'static str,
            pub params: &'static [Param],
            pub exports: Exports,
            pub ns2_app: Option<Ns2App>,
            pub size_dist: bool,
        }

        impl SourceSpec {
            /// The `type` of this kind.
            pub fn type_name(&self) -> &'static str {
                match self { $( SourceSpec::$variant(_) => $name, )* }
            }
            /// The description of kind `name`.
            pub fn describe(name: &str) -> Option<SourceInfo> {
                match name {
                    $( $name => Some(SourceInfo {
                        doc: <$config as SourceKind>::DOC,
                        page: <$config as SourceKind>::PAGE,
                        class: $class,
                        params: <$config as SourceKind>::PARAMS,
                        exports: <$config as SourceKind>::EXPORTS,
                        ns2_app: <$config as SourceKind>::NS2_APP,
                        size_dist: <$config as SourceKind>::SIZE_DIST,
                    }), )*
                    _ => None,
                }
            }
            fn read(name: &str, t: &Table, ctx: &mut SourceContext) -> Option<Result<Self, KeyError>> {
                match name {
                    $( $name => Some(<$config as SourceKind>::from_table(t, ctx).map(SourceSpec::$variant)), )*
                    _ => None,
                }
            }
            /// The generator in its initial state.
            pub fn build(&self) -> AnyGenerator {
                match self { $( SourceSpec::$variant(c) => AnyGenerator::$variant(c.build()), )* }
            }
            /// A replayed trace's rows.
            pub fn rows(&self) -> Option<Arc<[TraceRow]>> {
                match self { $( SourceSpec::$variant(c) => c.rows(), )* }
            }
        }

        impl Generate for AnyGenerator {
            #[inline]
            fn gap(&mut self, size: u32, rng: &mut SimRng) -> SimTime {
                match self { $( AnyGenerator::$variant(g) => g.gap(size, rng), )* }
            }
            fn period(&mut self, on: bool, rng: &mut SimRng) -> Option<SimTime> {
                match self { $( AnyGenerator::$variant(g) => g.period(on, rng), )* }
            }
        }
    };
}

source_registry! {
    "cbr" => Cbr(cbr::Cbr) as "CbrSource",
    "onoff" => Onoff(onoff::OnOff) as "OnOffSource",
    "poisson" => Poisson(poisson::Poisson) as "PoissonSource",
    "pareto" => Pareto(pareto::Pareto) as "ParetoSource",
    "trace" => Trace(trace::TraceReplay) as "TraceSource",
    "mmpp2" => Mmpp2(mmpp2::Mmpp2) as "Mmpp2Source",
}

/// "`a`, `b` or `c`".
fn one_of(items: &[&str]) -> String {
    let q: Vec<String> = items.iter().map(|c| format!("`{c}`")).collect();
    match q.as_slice() {
        [] => String::new(),
        [a] => a.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// "a" or "an" before `word`.
fn article(word: &str) -> &'static str {
    if word.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    }
}

/// The source kinds that take key `k`.
pub fn kinds_taking(k: &str) -> Vec<&'static str> {
    SOURCE_TYPES
        .iter()
        .copied()
        .filter(|s| SourceSpec::describe(s).is_some_and(|i| i.params.iter().any(|p| p.name == k)))
        .collect()
}

/// The error for the key `k` that kind `kind` (a source kind, or "tcp" with no keys) does not
/// take, at `key.k`.
fn not_a_key(key: &str, kind: &str, params: &[Param], k: &str) -> KeyError {
    let takes: Vec<&str> = params.iter().map(|p| p.name).collect();
    let takes = if takes.is_empty() {
        String::new()
    } else {
        format!(" (it takes {})", takes.join(", "))
    };
    let owners = kinds_taking(k);
    let owners = if owners.is_empty() {
        String::new()
    } else {
        format!("; `{k}` is a key of {} flows", one_of(&owners))
    };
    key_error(
        format!("{key}.{k}"),
        format!(
            "`{k}` is not a key of {} {kind} flow{takes}{owners}",
            article(kind)
        ),
    )
}

/// The list values of a group of `count` members (`None`: not a group): one per member.
fn check_lists(key: &str, t: &toml::Table, count: Option<u32>) -> Result<(), KeyError> {
    for (k, v) in t {
        let toml::Value::Array(a) = v else { continue };
        match count {
            None => {
                return Err(key_error(
                    format!("{key}.{k}"),
                    "a list of values needs `count` (one value per group member)",
                ))
            }
            Some(n) if a.len() != n as usize => {
                return Err(key_error(
                    format!("{key}.{k}"),
                    format!(
                        "expected {n} values (one per group member, count = {n}), got {}",
                        a.len()
                    ),
                ))
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// The kind `kind` of the flow at `key` (its `type`), checked before its members are read:
/// its description, or the error at `key.type` listing the kinds; `tcp` (the closed-loop
/// sender) is `Ok(None)` and must have none of the sources' keys in `t`.
pub fn kind_of(
    key: &str,
    kind: &str,
    t: &toml::Table,
    count: Option<u32>,
) -> Result<Option<SourceInfo>, KeyError> {
    if kind == "tcp" {
        if let Some(k) = t.keys().next() {
            return Err(not_a_key(key, "tcp", &[], k));
        }
        return Ok(None);
    }
    let Some(info) = SourceSpec::describe(kind) else {
        let mut all = vec!["tcp"];
        all.extend(SOURCE_TYPES);
        return Err(key_error(
            format!("{key}.type"),
            format!("unknown flow type `{kind}`, expected {}", one_of(&all)),
        ));
    };
    if let Some(k) = t
        .keys()
        .find(|k| !info.params.iter().any(|p| p.name == k.as_str()))
    {
        return Err(not_a_key(key, kind, info.params, k));
    }
    check_lists(key, t, count)?;
    Ok(Some(info))
}

/// Reads the source of kind `kind` (checked by [`kind_of`]) of member `member` of the flow at
/// `key`, from its table `t` (the flow's keys the kind owns).
pub fn read(
    key: &str,
    kind: &str,
    t: &toml::Table,
    member: usize,
    ctx: &mut SourceContext,
) -> Result<SourceSpec, KeyError> {
    let name = SOURCE_TYPES
        .iter()
        .copied()
        .find(|s| *s == kind)
        .expect("checked by kind_of");
    let table = Table::source(t, key, name, member);
    SourceSpec::read(name, &table, ctx).expect("registered")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_described_and_its_keys_are_unique() {
        for k in SOURCE_TYPES {
            let info = SourceSpec::describe(k).expect("registered");
            assert!(!info.doc.is_empty(), "{k}");
            let mut names: Vec<&str> = info.params.iter().map(|p| p.name).collect();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), info.params.len(), "{k}: a key declared twice");
        }
    }

    #[test]
    fn a_kind_exported_to_ns2_says_how_ns2_generates_it() {
        let mut apps = 0;
        for k in SOURCE_TYPES {
            let info = SourceSpec::describe(k).expect("registered");
            assert_eq!(info.exports.ns2, info.ns2_app.is_some(), "{k}");
            apps += usize::from(info.ns2_app.is_some());
        }
        assert_eq!(apps, 3, "cbr, onoff, poisson");
    }

    #[test]
    fn an_unknown_kind_lists_the_kinds() {
        let e = kind_of("flow[0]", "mmpp", &toml::Table::new(), None).unwrap_err();
        assert_eq!(e.key, "flow[0].type");
        assert!(e
            .message
            .starts_with("unknown flow type `mmpp`, expected `tcp`, `cbr`"));
        assert!(e.message.contains("`trace`"), "{}", e.message);
    }

    #[test]
    fn a_key_of_another_kind_is_named_with_its_owners() {
        let t: toml::Table = toml::from_str("shape = 1.2").unwrap();
        let e = kind_of("flow[1]", "onoff", &t, None).unwrap_err();
        assert_eq!(e.key, "flow[1].shape");
        assert_eq!(
            e.message,
            "`shape` is not a key of an onoff flow (it takes rate, on, off); `shape` is a key \
             of `pareto` flows"
        );
        let t: toml::Table = toml::from_str("rate = \"1Mbps\"").unwrap();
        let e = kind_of("flow[0]", "tcp", &t, None).unwrap_err();
        assert!(e
            .message
            .starts_with("`rate` is not a key of a tcp flow; `rate` is a key of `cbr`"));
    }
}
