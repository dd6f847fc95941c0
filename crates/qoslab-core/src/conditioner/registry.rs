//! The registry of meters and markers: the one list of meter kinds.
//!
//! Each kind is one file holding its state machine (a [`Meter`]) and its parameters, which
//! implement [`MeterKind`]: the keys it takes, reading and validating its table (for one
//! member of a conditioner group: a list value gives each member its own element), the scope
//! it needs, building the state machine, its flat view for the Python side, and what it is
//! elsewhere ([`MeterExports`]: ns-2's dsRED policy, the emulator; the exporters name no kind).
//! [`meter_registry!`] turns one line per kind into [`MeterSpec`] (typed parameters),
//! [`AnyMeter`] (the run-time meters, dispatched by `match`) and every dispatch between them.

use std::collections::HashMap;

use serde::Serialize;

use super::{Color, Meter};
use crate::packet::PacketMeta;
use crate::params::typed::{Bytes, Decl, Duration, Rate, Word};
use crate::params::{KeyError, Param, ParamKind, Table};
use crate::rng::SimRng;
use crate::units::SimTime;

/// Which scopes a meter accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScopeRule {
    /// Per flow or aggregate; `aggregate_default` when `scope` is not given.
    Either { aggregate_default: bool },
    /// Aggregate only; the message when per_flow is asked for.
    Aggregate(&'static str),
    /// Per flow only; the message when aggregate is asked for.
    PerFlow(&'static str),
}

/// What a meter's table may refer to.
pub struct MeterContext<'a> {
    /// The scenario's flow names and their indices.
    pub flows: &'a HashMap<String, usize>,
}

/// A meter's parameters: see the module documentation.
pub trait MeterKind: Sized {
    /// The state machine it builds.
    type Runtime: Meter;
    /// One line: what it is and where it comes from.
    const DOC: &'static str;
    /// Its keys, `type` excluded.
    const PARAMS: &'static [Param];
    /// The scopes it accepts.
    const SCOPE: ScopeRule = ScopeRule::Either {
        aggregate_default: false,
    };
    /// Red packets are dropped unless the conditioner says otherwise (ARD's dropper).
    const RED_DROPS: bool = false;
    /// Why no packet can leave it red, if none can (a two-colour meter, unless colour-aware
    /// and handed a packet that arrives red; a dropper that never drops): a conditioner's
    /// `red` action would do nothing there and is refused with this reason.
    fn never_red(&self) -> Option<&'static str> {
        None
    }
    /// Why `key` is not one of its parameters, when there is more to say than that.
    fn hint(_key: &str) -> &'static str {
        ""
    }
    /// Reads its table for one group member (validation: [`MeterKind::check`]).
    fn from_table(t: &Table, ctx: &MeterContext) -> Result<Self, KeyError>;
    /// Checks the parameters; the message starts with the offending parameter's name.
    fn check(&self) -> Result<(), String>;
    /// The meter in its initial state.
    fn build(&self) -> Self::Runtime;
    /// Writes its parameters into the flat table the Python side reads.
    fn flat<'a>(&'a self, f: &mut FlatMeter<'a>);
    /// Where else it runs (the scenario schema's `x-exports`, read by the exporters).
    const EXPORTS: MeterExports = MeterExports {
        ns2: Err(""),
        emulator: Ok(()),
    };
}

/// What a meter kind is outside the simulator: asked by the ns-2 exporter and the emulator,
/// which name no kind. (ns-3 has no DiffServ conditioner: its export refuses every meter.)
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeterExports {
    /// ns-2's dsRED policy that runs it, or why ns-2 has none (`Err("")`, the default: a
    /// general sentence listing the kinds that have one).
    pub ns2: Result<Ns2PolicyEntry, &'static str>,
    /// The emulator's link daemon can run it (it needs none of the simulator's own hooks), or
    /// what it needs that the daemon does not drive.
    pub emulator: Result<(), &'static str>,
}

/// A meter as ns-2.35's dsRED edge queue runs it: `$q addPolicyEntry SRC DST POLICY CP ARGS…`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ns2PolicyEntry {
    /// The policer's name in ns-2 (`diffserv/dsPolicy.cc`).
    pub policy: &'static str,
    /// The colours it gives, in the order of their codepoints in the policer entry (a
    /// two-colour meter's out-of-profile colour is yellow: AFx2, the papers' OUT).
    pub colours: &'static [&'static str],
    /// The policy entry's arguments after the in-profile codepoint, read from the meter's
    /// resolved form (the exporters' SI form: rates bit/s, sizes bytes, times s).
    pub args: &'static [Ns2Arg],
    /// Its colour-aware mode is exported whatever colour the packets arrive with (the TSW
    /// taggers); the other policers are colour-blind in ns-2.
    pub any_pre_colour: bool,
    /// A window (s) ns-2 fixes: the meter's `win_len_s` must be unset or this.
    pub fixed_window_s: Option<f64>,
}

impl MeterExports {
    /// The scenario schema's `x-exports` of a meter kind: `ns2` is `{policy, colours, args,
    /// any_pre_colour, fixed_window_s?}` or `{refused}` (empty: no policer of ns-2's runs it);
    /// `emulator`, and `not_emulated` (why) when it is false.
    pub fn schema(&self) -> toml::Value {
        use toml::Value;
        let s = |x: &str| Value::String(x.to_string());
        let mut ns2 = toml::Table::new();
        match self.ns2 {
            Ok(p) => {
                ns2.insert("policy".into(), s(p.policy));
                let colours = p.colours.iter().map(|c| s(c)).collect();
                ns2.insert("colours".into(), Value::Array(colours));
                let args = p.args.iter().map(|a| {
                    let mut t = toml::Table::new();
                    let (key, format, default) = match *a {
                        Ns2Arg::Number(k) => (k, "number", None),
                        Ns2Arg::Integer(k) => (k, "integer", None),
                        Ns2Arg::NumberOr(k, d) => (k, "number", Some(d)),
                    };
                    t.insert("key".into(), s(key));
                    t.insert("format".into(), s(format));
                    if let Some(d) = default {
                        t.insert("default".into(), Value::Float(d));
                    }
                    Value::Table(t)
                });
                ns2.insert("args".into(), Value::Array(args.collect()));
                ns2.insert("any_pre_colour".into(), Value::Boolean(p.any_pre_colour));
                if let Some(w) = p.fixed_window_s {
                    ns2.insert("fixed_window_s".into(), Value::Float(w));
                }
            }
            Err(why) => {
                ns2.insert("refused".into(), s(why));
            }
        }
        let mut t = toml::Table::new();
        t.insert("ns2".into(), Value::Table(ns2));
        t.insert("emulator".into(), Value::Boolean(self.emulator.is_ok()));
        if let Err(why) = self.emulator {
            t.insert("not_emulated".into(), s(why));
        }
        Value::Table(t)
    }
}

/// One argument of an ns-2 policy entry: a key of the meter's resolved SI form.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Ns2Arg {
    /// A real number (Tcl's shortest round-trip form).
    Number(&'static str),
    /// An integer.
    Integer(&'static str),
    /// A real number, `default` when the key is unset.
    NumberOr(&'static str, f64),
}

/// The flat form of a meter (every key of every kind, unused ones empty): what the Python side
/// and the ns-2 exporter read.
#[derive(Serialize)]
pub struct FlatMeter<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub mode: &'static str,
    pub cir_bps: u64,
    pub cbs_bytes: Option<u64>,
    pub ebs_bytes: Option<u64>,
    pub pir_bps: Option<u64>,
    pub pbs_bytes: Option<u64>,
    pub win_len_ns: Option<u64>,
    /// `reference` or `ns2` for the meters with an ns-2 flavour; empty for the others.
    #[serde(skip_serializing_if = "str::is_empty")]
    pub flavour: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ard: Option<&'a super::ArdParams>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub twam: Option<&'a super::TwamParams>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probe: Option<&'a super::ProbeParams>,
}

/// The `flavour` key of a rate meter; ns-2's policies are colour-blind, so the `ns2` flavour
/// of a colour-aware meter is an error naming `mode`.
pub fn read_flavour(t: &Table, mode: super::ColorMode) -> Result<crate::params::Flavour, KeyError> {
    let f = t.flavour()?;
    if f == crate::params::Flavour::Ns2 && mode == super::ColorMode::Aware {
        return Err(crate::params::key_error(
            t.key("mode"),
            "flavour = \"ns2\" runs ns-2's policy, which is colour-blind: use mode = \"blind\"",
        ));
    }
    Ok(f)
}

/// TSW3CM's `flavour`: ns-2's TSW3CM has a window fixed at 1 s.
pub fn read_tsw3cm_flavour(t: &Table) -> Result<crate::params::Flavour, KeyError> {
    let f = t.flavour()?;
    let window = t.get(&WINDOW)?;
    if f == crate::params::Flavour::Ns2 && window != 1_000_000_000 {
        return Err(crate::params::key_error(
            t.key("window"),
            "flavour = \"ns2\" runs ns-2's TSW3CM, whose window is fixed at 1 s",
        ));
    }
    Ok(f)
}

/// The flat table's name of a colour mode.
pub fn mode_name(m: super::ColorMode) -> &'static str {
    match m {
        super::ColorMode::Blind => "blind",
        super::ColorMode::Aware => "aware",
    }
}

/// One line per meter kind: `"type" => Variant(Params => Runtime) as "PythonClass"` (the
/// Python builder's class of the kind, `qoslab schema --python`).
macro_rules! meter_registry {
    ($( $(#[$doc:meta])* $name:literal => $variant:ident($params:ty => $runtime:ty) as $class:literal ),* $(,)?) => {
        /// The configuration of one meter: its kind and parameters under the RFC or paper
        /// symbols (rates in bit/s, sizes in bytes, times in ns). Serialised with a `type` tag.
        #[derive(Debug, Clone, PartialEq, Serialize)]
        #[serde(tag = "type", rename_all = "snake_case")]
        pub enum MeterSpec {
            $( $(#[$doc])* $variant($params), )*
        }

        /// The run-time meters, dispatched by `match` (no boxing on the hot path).
        #[derive(Debug, Clone)]
        pub enum AnyMeter {
            $( $(#[$doc])* $variant($runtime), )*
        }

        /// Every meter kind's `type`, in registry order.
        pub const METER_TYPES: &[&str] = &[$($name),*];

        /// What the scenario layer needs to know of a kind before reading its table.
        pub struct MeterInfo {
            pub doc: &'static str,
            /// The Python builder's class name.
            pub class: &'static str,
            pub params: &'static [Param],
            pub scope: ScopeRule,
            pub red_drops: bool,
            pub hint: fn(&str) -> &'static str,
            pub exports: MeterExports,
        }

        impl MeterSpec {
            /// The `type` tag.
            pub fn kind(&self) -> &'static str {
                match self { $( MeterSpec::$variant(_) => $name, )* }
            }
            /// The description of kind `name`.
            pub fn describe(name: &str) -> Option<MeterInfo> {
                match name {
                    $( $name => Some(MeterInfo {
                        doc: <$params as MeterKind>::DOC,
                        class: $class,
                        params: <$params as MeterKind>::PARAMS,
                        scope: <$params as MeterKind>::SCOPE,
                        red_drops: <$params as MeterKind>::RED_DROPS,
                        hint: <$params as MeterKind>::hint,
                        exports: <$params as MeterKind>::EXPORTS,
                    }), )*
                    _ => None,
                }
            }
            /// Reads a table of kind `name` (checked by [`Table::meter`]).
            pub fn from_table(name: &str, t: &Table, ctx: &MeterContext) -> Option<Result<Self, KeyError>> {
                match name {
                    $( $name => Some(<$params as MeterKind>::from_table(t, ctx).map(MeterSpec::$variant)), )*
                    _ => None,
                }
            }
            /// Why no packet can leave it red, if none can ([`MeterKind::never_red`]).
            pub fn never_red(&self) -> Option<&'static str> {
                match self { $( MeterSpec::$variant(p) => p.never_red(), )* }
            }
            /// Checks the parameters; the message names the offending parameter and what was expected.
            pub fn validate(&self) -> Result<(), String> {
                match self { $( MeterSpec::$variant(p) => p.check(), )* }
            }
            /// Validates and builds the meter in its initial state.
            pub fn build(&self) -> Result<AnyMeter, String> {
                self.validate()?;
                Ok(match self { $( MeterSpec::$variant(p) => AnyMeter::$variant(p.build()), )* })
            }
            /// The flat view the Python side reads.
            pub fn flat(&self) -> FlatMeter<'_> {
                let mut f = FlatMeter {
                    kind: self.kind(),
                    mode: "blind",
                    cir_bps: 0,
                    cbs_bytes: None,
                    ebs_bytes: None,
                    pir_bps: None,
                    pbs_bytes: None,
                    win_len_ns: None,
                    flavour: "",
                    ard: None,
                    twam: None,
                    probe: None,
                };
                match self { $( MeterSpec::$variant(p) => p.flat(&mut f), )* }
                f
            }
        }

        impl Meter for AnyMeter {
            #[inline]
            fn meter(&mut self, now: SimTime, size_bytes: u32, pre_color: Color, rng: &mut SimRng) -> Color {
                match self { $( AnyMeter::$variant(m) => m.meter(now, size_bytes, pre_color, rng), )* }
            }
            fn token_level(&self, now: SimTime) -> Option<f64> {
                match self { $( AnyMeter::$variant(m) => m.token_level(now), )* }
            }
            #[inline]
            fn meter_packet(&mut self, now: SimTime, pkt: &PacketMeta, pre_color: Color, rng: &mut SimRng) -> Color {
                match self { $( AnyMeter::$variant(m) => m.meter_packet(now, pkt, pre_color, rng), )* }
            }
            fn gauges(&self, now: SimTime, out: &mut dyn FnMut(&'static str, f64)) {
                match self { $( AnyMeter::$variant(m) => m.gauges(now, out), )* }
            }
            fn timer_period(&self) -> Option<SimTime> {
                match self { $( AnyMeter::$variant(m) => m.timer_period(), )* }
            }
            fn on_timer(&mut self, now: SimTime, windows: &[f64]) -> Option<f64> {
                match self { $( AnyMeter::$variant(m) => m.on_timer(now, windows), )* }
            }
        }
    };
}

use super::ns2_policy::FlavouredMeter;
use super::{
    Ard, ArdParams, ArmParams, ProbeMarker, ProbeParams, SrTcm, SrTcmParams, TokenBucket,
    TokenBucketParams, TrTcm, TrTcmParams, Tsw2cm, Tsw2cmParams, Tsw3cm, Tsw3cmParams, Twam,
    TwamParams,
};

meter_registry! {
    /// Single-rate two-colour token bucket (CIR, CBS): the papers' IN/OUT profile marker.
    "token_bucket" => TokenBucket(TokenBucketParams => FlavouredMeter<TokenBucket>) as "TokenBucket",
    /// RFC 2697 single-rate three-colour marker.
    "srtcm" => Srtcm(SrTcmParams => FlavouredMeter<SrTcm>) as "SrTCM",
    /// RFC 2698 two-rate three-colour marker.
    "trtcm" => Trtcm(TrTcmParams => FlavouredMeter<TrTcm>) as "TrTCM",
    /// Clark & Fang's time-sliding-window two-colour tagger.
    "tsw2cm" => Tsw2cm(Tsw2cmParams => FlavouredMeter<Tsw2cm>) as "TSW2CM",
    /// RFC 2859 time-sliding-window three-colour marker.
    "tsw3cm" => Tsw3cm(Tsw3cmParams => FlavouredMeter<Tsw3cm>) as "TSW3CM",
    /// Hur's Adaptive Regulating Marker (aggregate re-marker).
    "arm" => Arm(ArmParams => Ard) as "ARM",
    /// Hur's Adaptive Regulating Drop marker (ARM plus an aggregate dropper).
    "ard" => Ard(ArdParams => Ard) as "ARD",
    /// Bouras & Sevasti's TCP-Window-Aware Marker (aggregate, per-flow state).
    "twam" => Twam(TwamParams => Twam) as "TWAM",
    /// Neglia et al.'s per-flow adaptive low-priority (probe) marker.
    "probe" => Probe(ProbeParams => ProbeMarker) as "ProbeMarker",
}

// --- keys shared by the rate meters ------------------------------------------------------

pub const MODE: Decl<Word> = Decl::new(
    "mode",
    ParamKind::Choice {
        choices: &["blind", "aware"],
    },
    "blind",
    "Colour-blind or colour-aware (RFC 2697/2698 §3).",
);
pub const CIR: Decl<Rate> = Decl::new(
    "cir",
    ParamKind::Rate,
    "required",
    "Committed information rate (TSW: CTR); a list gives each group member its own.",
)
.positive();
pub const CBS: Decl<Bytes> = Decl::new(
    "cbs",
    ParamKind::Bytes,
    "required",
    "Committed burst size; a list gives each group member its own.",
)
.positive();
pub const PIR: Decl<Rate> = Decl::new(
    "pir",
    ParamKind::Rate,
    "required",
    "Peak information rate (TSW3CM: PTR); a list gives each group member its own.",
);
pub const WINDOW: Decl<Duration> = Decl::new(
    "window",
    ParamKind::Duration,
    "1s",
    "TSW averaging window (win_len).",
)
.positive();

/// `mode` (default blind).
pub fn read_mode(t: &Table) -> Result<super::ColorMode, KeyError> {
    Ok(match t.get(&MODE)? {
        "aware" => super::ColorMode::Aware,
        _ => super::ColorMode::Blind,
    })
}

/// `pir`, required and at least `cir`.
pub fn read_pir(t: &Table, cir: u64) -> Result<u64, KeyError> {
    let pir = t.get(&PIR)?;
    if pir < cir {
        return Err(crate::params::key_error(
            t.key("pir"),
            format!("pir ({pir} bit/s) must be at least cir ({cir} bit/s)"),
        ));
    }
    Ok(pir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kinds_with_an_ns2_flavour_are_those_ns2_exports() {
        // A meter whose `flavour = "ns2"` runs ns-2's policy (conditioner::ns2_policy) is one
        // of ns-2's policers; every other kind is refused by the ns-2 export.
        let mut policers = 0;
        for k in METER_TYPES {
            let info = MeterSpec::describe(k).expect("registered");
            let flavoured = info.params.iter().any(|p| p.name == "flavour");
            assert_eq!(info.exports.ns2.is_ok(), flavoured, "{k}");
            if let Ok(p) = info.exports.ns2 {
                policers += 1;
                assert_eq!(p.colours[0], "green", "{k}: in-profile first");
                assert!(
                    matches!(p.args[0], Ns2Arg::Number("cir_bps")),
                    "{k}: rate first"
                );
            }
        }
        assert_eq!(policers, 5);
    }
}
