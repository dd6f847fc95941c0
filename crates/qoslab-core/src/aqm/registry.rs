//! The registry of queue disciplines: the one list of queue kinds.
//!
//! Each kind is one file holding its algorithm (an [`Aqm`] state machine) and its
//! configuration, which implements [`QueueDiscipline`]: the keys it takes ([`Param`]s, with
//! units, defaults and docs), reading and validating its table (its resolved form, which the
//! Python side reads, is written from the same reads: [`FlatQueue`]), building the state
//! machine for a link, and what it can do elsewhere (ns-2 export, the emulator, signals it
//! listens to). [`queue_registry!`] turns one line per kind into the
//! typed [`Discipline`] enum, the run-time [`AnyAqm`] enum (dispatched by `match`, no boxing
//! on the hot path) and every dispatch between them. An unknown kind is an error when the
//! scenario is read; nothing downstream matches on a kind's name.

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use super::{Aqm, Gauge, Qdisc, QueueView, Verdict};
use crate::packet::PacketMeta;
use crate::params::resolved::{serialize_entries, Record, Resolved};
use crate::params::typed::{Decl, QueueLimit};
use crate::params::{key_error, KeyError, Param, Table, LIMIT};
use crate::rng::SimRng;
use crate::units::{Limit, SimTime};

/// A queue discipline's configuration: see the module documentation.
pub trait QueueDiscipline: Sized {
    /// One line: what it is and where it comes from (for the scenario reference).
    const DOC: &'static str;
    /// Its keys, `type` excluded.
    const PARAMS: &'static [Param];
    /// Why `key` is not one of its parameters, when there is more to say than that.
    fn hint(_key: &str) -> &'static str {
        ""
    }
    /// Reads and validates its table; `limit` is the queue's buffer (read by the host).
    fn from_table(t: &Table, limit: Limit) -> Result<Self, KeyError>;
    /// How ns-2 expresses it (`limit` is the queue's buffer).
    fn ns2(&self, limit: Limit) -> Ns2Export;
    /// Whether the emulator's link daemon can run it on real packets: every kind answers (a new
    /// kind is not claimed runnable by default).
    fn emulable(&self) -> bool;
    /// The conditioner whose window signal it follows, and the signalling delay (ns).
    fn signal_source(&self) -> Option<(&str, u64)> {
        None
    }
    /// Bytes its state holds from the start of a run whatever the traffic (FQ-CoDel's flow
    /// queues), for the memory budget the bindings check before a run.
    fn state_bytes(&self) -> u64 {
        0
    }
    /// The state variables its state machine publishes ([`Aqm::gauges`]): each a column of the
    /// queue series, documented in the outputs catalogue from this declaration.
    const GAUGES: &'static [Gauge] = &[];
    /// The ns-3 export's treatment: `Ok(queue disc)`, the ns-3 `TypeId` the export
    /// (python/qoslab/ns3/mapping.py) maps it to, or `Err(why)` it has none; `Err("")` (the
    /// default) says so in a general sentence.
    const NS3: Result<&'static str, &'static str> = Err("");
    /// What its averages in the queue series are (`avg_queue`, `avg_prec0..2`), for the
    /// plots' legends: generic names when empty.
    const AVERAGES: Averages = Averages {
        one: None,
        by_mode: &[],
    };
    /// Whether it marks ECN-capable packets whatever its parameters (step marking); the others
    /// mark when their resolved `ecn` is true.
    const ALWAYS_MARKS: bool = false;
    /// For the kinds ns-2 runs as dsRED physical queues: the MRED mode (`setMREDMode`) of
    /// each value of its resolved `mode` ("" for a kind without one); empty for the others.
    const NS2_DSRED: &'static [(&'static str, &'static str)] = &[];
}

/// A kind the FIFO line runs: its state machine judges the arrivals at the line (and watches
/// dequeues and idle periods there if it asks to). Its registry line names the state machine.
pub trait LineDiscipline: QueueDiscipline {
    /// The state machine it builds.
    type Runtime: Aqm;
    /// The state machine for a link of `link_bps` bit/s.
    fn build(&self, link_bps: u64) -> Self::Runtime;
}

/// A kind that holds its packets and decides at dequeue too (CoDel, FQ-CoDel, PIE, multi
/// queues): its [`Qdisc`] is the direction's queue, the FIFO line of the direction carries
/// nothing ([`NoLine`]), and it cannot be a multi queue's physical queue. Its registry line
/// says `held`.
pub trait HeldDiscipline: QueueDiscipline {
    /// The [`Qdisc`] of one link direction.
    fn qdisc(&self, env: &QdiscEnv) -> Box<dyn Qdisc>;
}

/// The FIFO line's discipline on a direction whose kind holds its packets
/// ([`HeldDiscipline`]): every arrival of that direction goes to its [`Qdisc`], none to the
/// line, so this judges nothing, watches nothing and publishes nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoLine;

impl Aqm for NoLine {
    fn on_enqueue(
        &mut self,
        _now: SimTime,
        _pkt: &PacketMeta,
        _q: QueueView,
        _rng: &mut SimRng,
    ) -> Verdict {
        // No arrival reaches the line; were one to, the buffer alone would decide.
        Verdict::Enqueue
    }
    fn wants_enqueue(&self) -> bool {
        false
    }
    fn wants_idle(&self) -> bool {
        false
    }
}

/// What a kind's averages are ([`QueueDiscipline::AVERAGES`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Averages {
    /// Its one average (`avg_queue`), named: e.g. "RED's average queue".
    pub one: Option<&'static str>,
    /// With averages per precedence, by its resolved `mode` ("" for any, or a kind without one): the names of
    /// `avg_prec0..` with two precedences and with three.
    pub by_mode: &'static [(&'static str, [&'static str; 2], [&'static str; 3])],
}

/// What a [`Qdisc`] is built for: its link direction and run.
#[derive(Debug, Clone, Copy)]
pub struct QdiscEnv {
    pub link_bps: u64,
    /// The queue's buffer.
    pub limit: Limit,
    pub seed: u64,
    /// The link direction (link index · 2 + direction), which names its random streams.
    pub dir_id: u64,
}

impl QdiscEnv {
    /// The direction's own random stream (the one a FIFO-line discipline would get).
    pub fn rng(&self) -> SimRng {
        SimRng::derive(self.seed, crate::rng::stream::QUEUE | self.dir_id)
    }
}

/// How ns-2.35 expresses a queue.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ns2Export {
    /// A `Queue/CLASS` configured with `$q set NAME VALUE` lines; `early_drops` when the
    /// class drops early (its monitor then snoops early drops).
    Queue {
        class: &'static str,
        settings: Vec<(&'static str, Ns2Value)>,
        early_drops: bool,
        /// ECN marking instead of early drops (the senders must be ECN-capable).
        ecn: bool,
    },
    /// One of dsRED's queues, planned with the scenario's conditioners by the exporter.
    Dsred,
    /// ns-2 has no counterpart; the reason.
    Refused(String),
}

/// A value of an ns-2 setting, formatted by the exporter (Tcl).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Ns2Value {
    Float(f64),
    Int(u64),
    Bool(bool),
    Str(&'static str),
}

/// The resolved form of a queue: what the Python side and the exporters read. Written from
/// the kind's declarations: `type`, each declared parameter's resolved value under its name
/// and unit ([`Resolved::key`]: `limit_pkts`, `target_ns`, `mean_pkt_size_bytes`, an optional
/// one left out when not given), a multi queue's physical queues (`queues`), then `ns2` (how
/// ns-2 expresses it) and `emulable` (whether the emulator's link daemon can run it).
pub struct FlatQueue<'a> {
    pub kind: &'static str,
    /// The kind's declared parameters and their resolved values, `limit` among them.
    pub params: &'a [(&'static str, Resolved)],
    /// A multi queue's physical queues (a `ParamKind::Tables` parameter); empty for the others.
    pub queues: &'a [super::multi::SubQueueConfig],
    pub ns2: Ns2Export,
    /// Whether the emulator's link daemon can run it ([`QueueDiscipline::emulable`]).
    pub emulable: bool,
}

impl FlatQueue<'_> {
    /// The resolved value of parameter `name`, if the kind declares it.
    pub fn get(&self, name: &str) -> Option<&Resolved> {
        self.params.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }
}

impl Serialize for FlatQueue<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("type", self.kind)?;
        serialize_entries(&mut m, self.params)?;
        if !self.queues.is_empty() {
            m.serialize_entry("queues", self.queues)?;
        }
        m.serialize_entry("ns2", &self.ns2)?;
        m.serialize_entry("emulable", &self.emulable)?;
        m.end()
    }
}

impl<T: Aqm + ?Sized> Aqm for Box<T> {
    #[inline]
    fn on_enqueue(
        &mut self,
        now: SimTime,
        pkt: &PacketMeta,
        q: QueueView,
        rng: &mut SimRng,
    ) -> Verdict {
        (**self).on_enqueue(now, pkt, q, rng)
    }
    fn on_idle(&mut self, now: SimTime) {
        (**self).on_idle(now)
    }
    fn wants_enqueue(&self) -> bool {
        (**self).wants_enqueue()
    }
    fn wants_idle(&self) -> bool {
        (**self).wants_idle()
    }
    fn on_dequeue(&mut self, at: SimTime, prec: u8, q: QueueView) {
        (**self).on_dequeue(at, prec, q)
    }
    fn wants_dequeue(&self) -> bool {
        (**self).wants_dequeue()
    }
    fn average(&self) -> Option<f64> {
        (**self).average()
    }
    fn averages(&self) -> [f64; 3] {
        (**self).averages()
    }
    fn on_reverse(&mut self, now: SimTime, pkt: &PacketMeta) {
        (**self).on_reverse(now, pkt)
    }
    fn wants_reverse(&self) -> bool {
        (**self).wants_reverse()
    }
    fn set_path_rtts(&mut self, rtts: &[SimTime]) {
        (**self).set_path_rtts(rtts)
    }
    fn on_signal(&mut self, now: SimTime, value: f64) {
        (**self).on_signal(now, value)
    }
    fn on_overflow(&mut self, now: SimTime, pkt: &PacketMeta, decided: Verdict) {
        (**self).on_overflow(now, pkt, decided)
    }
    fn gauges(&self, now: SimTime, out: &mut dyn FnMut(&'static str, f64)) {
        (**self).gauges(now, out)
    }
}

/// The FIFO line's state machine type of a registry line's `Runtime` or `held`.
macro_rules! line_runtime {
    (held) => {
        NoLine
    };
    ($runtime:ty) => {
        $runtime
    };
}

/// A registry line's FIFO-line state machine for config `c` on a link of `bps` bit/s.
macro_rules! line_build {
    ($c:ident, $bps:ident, held) => {{
        let _ = $c;
        NoLine
    }};
    ($c:ident, $bps:ident, $runtime:ty) => {
        LineDiscipline::build($c, $bps)
    };
}

/// A registry line's packet-holding queue for config `c`, or `None` for a FIFO-line kind.
macro_rules! held_qdisc {
    ($c:ident, $env:ident, held) => {
        Some(HeldDiscipline::qdisc($c, $env))
    };
    ($c:ident, $env:ident, $runtime:ty) => {{
        let _ = $c;
        None
    }};
}

/// Whether a registry line says `held`.
macro_rules! is_held {
    (held) => {
        true
    };
    ($runtime:ty) => {
        false
    };
}

/// One line per queue kind: `"type" => Variant(Config => Runtime) as "PythonClass"` for a kind
/// the FIFO line runs ([`LineDiscipline`], `Runtime` its state machine), `"type" =>
/// Variant(Config => held) as "PythonClass"` for a kind that holds its packets
/// ([`HeldDiscipline`]). Generates [`Discipline`], [`AnyAqm`], [`QUEUE_TYPES`] and the dispatch
/// between them; the Python builder's class of the kind (`qoslab schema --python`) takes the
/// name after `as`.
macro_rules! queue_registry {
    ($( $(#[$doc:meta])* $name:literal => $variant:ident($config:ty => $($runtime:tt)+) as $class:literal ),* $(,)?) => {
        /// A queue discipline with its resolved parameters, one variant per kind.
        #[derive(Debug, Clone)]
        pub enum Discipline {
            $( $(#[$doc])* $variant($config), )*
        }

        /// The run-time FIFO-line disciplines, dispatched by `match` (no boxing on the hot
        /// path); a kind that holds its packets has [`NoLine`] there.
        #[derive(Debug, Clone)]
        pub enum AnyAqm {
            $( $(#[$doc])* $variant(line_runtime!($($runtime)+)), )*
        }

        /// Every queue kind's `type`, in registry order.
        pub const QUEUE_TYPES: &[&str] = &[$($name),*];

        impl Discipline {
            /// The `type` of this kind.
            pub fn type_name(&self) -> &'static str {
                match self { $( Discipline::$variant(_) => $name, )* }
            }
            /// The documentation line and keys of kind `name`.
            pub fn describe(name: &str) -> Option<(&'static str, &'static [Param])> {
                match name {
                    $( $name => Some((<$config as QueueDiscipline>::DOC, <$config as QueueDiscipline>::PARAMS)), )*
                    _ => None,
                }
            }
            /// The gauges kind `name` publishes ([`QueueDiscipline::GAUGES`]).
            pub fn gauges_of(name: &str) -> Option<&'static [Gauge]> {
                match name {
                    $( $name => Some(<$config as QueueDiscipline>::GAUGES), )*
                    _ => None,
                }
            }
            /// The ns-3 export's treatment of kind `name` ([`QueueDiscipline::NS3`]).
            pub fn ns3_of(name: &str) -> Option<Result<&'static str, &'static str>> {
                match name {
                    $( $name => Some(<$config as QueueDiscipline>::NS3), )*
                    _ => None,
                }
            }
            /// What kind `name`'s averages are ([`QueueDiscipline::AVERAGES`]).
            pub fn averages_of(name: &str) -> Option<Averages> {
                match name {
                    $( $name => Some(<$config as QueueDiscipline>::AVERAGES), )*
                    _ => None,
                }
            }
            /// ns-2's dsRED MRED mode of kind `name` by its `mode` ([`QueueDiscipline::NS2_DSRED`]).
            pub fn ns2_dsred_of(name: &str) -> Option<&'static [(&'static str, &'static str)]> {
                match name {
                    $( $name => Some(<$config as QueueDiscipline>::NS2_DSRED), )*
                    _ => None,
                }
            }
            /// The Python builder's class name of kind `name`.
            pub fn class_name(name: &str) -> Option<&'static str> {
                match name {
                    $( $name => Some($class), )*
                    _ => None,
                }
            }
            /// Reads kind `name`'s table: its configuration and the resolved value of each of its
            /// declared parameters (`limit`, which the host reads, among them when declared).
            fn from_kind(name: &str, t: &toml::Table, key: &str, limit: Limit) -> Option<Result<(Self, Vec<(&'static str, Resolved)>), KeyError>> {
                match name {
                    $( $name => Some({
                        let params = <$config as QueueDiscipline>::PARAMS;
                        let rec = Record::default();
                        rec.push(LIMIT.name, Resolved::Limit(limit));
                        Table::new(t, key, $name, params, <$config as QueueDiscipline>::hint)
                            .and_then(|t| <$config as QueueDiscipline>::from_table(&t.recording(&rec), limit))
                            .map(|c| (Discipline::$variant(c), rec.declared(params)))
                    }), )*
                    _ => None,
                }
            }
            /// The FIFO line's state machine for a link of `link_bps` bit/s ([`NoLine`] for a
            /// kind that holds its packets).
            pub fn build(&self, link_bps: u64) -> AnyAqm {
                match self { $( Discipline::$variant(c) => AnyAqm::$variant(line_build!(c, link_bps, $($runtime)+)), )* }
            }
            /// Whether it marks ECN-capable packets whatever its parameters ([`QueueDiscipline::ALWAYS_MARKS`]).
            pub fn always_marks(&self) -> bool {
                match self { $( Discipline::$variant(_) => <$config as QueueDiscipline>::ALWAYS_MARKS, )* }
            }
            pub fn ns2(&self, limit: Limit) -> Ns2Export {
                match self { $( Discipline::$variant(c) => c.ns2(limit), )* }
            }
            pub fn emulable(&self) -> bool {
                match self { $( Discipline::$variant(c) => c.emulable(), )* }
            }
            pub fn signal_source(&self) -> Option<(&str, u64)> {
                match self { $( Discipline::$variant(c) => c.signal_source(), )* }
            }
            /// Bytes its state holds from the start ([`QueueDiscipline::state_bytes`]).
            pub fn state_bytes(&self) -> u64 {
                match self { $( Discipline::$variant(c) => c.state_bytes(), )* }
            }
            /// Whether it holds its packets ([`HeldDiscipline`]).
            pub fn holds_packets(&self) -> bool {
                match self { $( Discipline::$variant(_) => is_held!($($runtime)+), )* }
            }
            /// The packet-holding queue of kinds that decide at dequeue ([`HeldDiscipline`]);
            /// `None` for the kinds the FIFO line runs.
            pub fn qdisc(&self, env: &QdiscEnv) -> Option<Box<dyn Qdisc>> {
                match self { $( Discipline::$variant(c) => held_qdisc!(c, env, $($runtime)+), )* }
            }
        }

        impl Aqm for AnyAqm {
            #[inline]
            fn on_enqueue(&mut self, now: SimTime, pkt: &PacketMeta, q: QueueView, rng: &mut SimRng) -> Verdict {
                match self { $( AnyAqm::$variant(a) => a.on_enqueue(now, pkt, q, rng), )* }
            }
            #[inline]
            fn on_idle(&mut self, now: SimTime) {
                match self { $( AnyAqm::$variant(a) => a.on_idle(now), )* }
            }
            fn wants_enqueue(&self) -> bool {
                match self { $( AnyAqm::$variant(a) => a.wants_enqueue(), )* }
            }
            fn wants_idle(&self) -> bool {
                match self { $( AnyAqm::$variant(a) => a.wants_idle(), )* }
            }
            #[inline]
            fn on_dequeue(&mut self, at: SimTime, prec: u8, q: QueueView) {
                match self { $( AnyAqm::$variant(a) => a.on_dequeue(at, prec, q), )* }
            }
            fn wants_dequeue(&self) -> bool {
                match self { $( AnyAqm::$variant(a) => a.wants_dequeue(), )* }
            }
            fn average(&self) -> Option<f64> {
                match self { $( AnyAqm::$variant(a) => a.average(), )* }
            }
            fn averages(&self) -> [f64; 3] {
                match self { $( AnyAqm::$variant(a) => a.averages(), )* }
            }
            fn on_reverse(&mut self, now: SimTime, pkt: &PacketMeta) {
                match self { $( AnyAqm::$variant(a) => a.on_reverse(now, pkt), )* }
            }
            fn wants_reverse(&self) -> bool {
                match self { $( AnyAqm::$variant(a) => a.wants_reverse(), )* }
            }
            fn set_path_rtts(&mut self, rtts: &[SimTime]) {
                match self { $( AnyAqm::$variant(a) => a.set_path_rtts(rtts), )* }
            }
            fn on_signal(&mut self, now: SimTime, value: f64) {
                match self { $( AnyAqm::$variant(a) => a.on_signal(now, value), )* }
            }
            fn on_overflow(&mut self, now: SimTime, pkt: &PacketMeta, decided: Verdict) {
                match self { $( AnyAqm::$variant(a) => a.on_overflow(now, pkt, decided), )* }
            }
            fn gauges(&self, now: SimTime, out: &mut dyn FnMut(&'static str, f64)) {
                match self { $( AnyAqm::$variant(a) => a.gauges(now, out), )* }
            }
        }
    };
}

// Every discipline's module (each `pub mod` of aqm/mod.rs), so that a kind is one line below.
use super::*;

queue_registry! {
    /// Tail drop at the buffer limit.
    "droptail" => DropTail(droptail::DropTailConfig => droptail::DropTail) as "DropTail",
    /// RED (Floyd & Jacobson 1993, as ns-2.35's Queue/RED).
    "red" => Red(red::RedConfig => red::Red) as "RED",
    /// Adaptive RED (Floyd, Gummadi & Shenker 2001, as ns-2.35's Queue/RED with adaptive_ 1).
    "ared" => Ared(ared::AredConfig => ared::AdaptiveRed) as "AdaptiveRED",
    /// RIO (Clark & Fang 1998), coupled (RIO-C) or decoupled (RIO-D).
    "rio" => Rio(rio::RioConfig => dsred::Flavoured<rio::Rio>) as "RIO",
    /// WRED: one average, a RED curve per drop precedence.
    "wred" => Wred(wred::WredConfig => dsred::Flavoured<wred::Wred>) as "WRED",
    /// RI+O (Kim 1999): RIO-C plus OUT parameters on avg_total − avg_in.
    "rio_plus_o" => RioPlusO(rio_plus_o::RioPlusOConfig => rio_plus_o::RioPlusO) as "RIOPlusO",
    /// DWRED (Bouras & Sevasti): OUT thresholds from a TWAM's window signal.
    "dwred" => Dwred(dwred::DwredConfig => dwred::Dwred) as "DWRED",
    /// Several physical queues served by a scheduler; the physical queues hold the
    /// disciplines.
    "multi" => Multi(multi::MultiConfig => held) as "MultiQueue",
    /// FDD-RED (Hashemi et al.): RED decides when, a fair-dropping index whose packet.
    "fdd_red" => FddRed(fdd_red::FddRedConfig => Box<fdd_red::FddRed>) as "FDDRED",
    /// CoDel (RFC 8289): drops (or marks) at dequeue when the sojourn time stays above target.
    "codel" => Codel(codel::CodelConfig => held) as "CoDel",
    /// FQ-CoDel (RFC 8290): flow queues served by DRR, CoDel in each.
    "fq_codel" => FqCodel(fq_codel::FqCodelConfig => held) as "FQCoDel",
    /// PIE (RFC 8033): a drop probability driven by the queueing delay.
    "pie" => Pie(pie::PieConfig => held) as "PIE",
    /// Step marking at an instantaneous threshold (DCTCP's switch, RFC 8257 §3.1).
    "step" => Step(step::StepConfig => step::Step) as "StepMarking",
    "blue" => Blue(blue::BlueConfig => blue::Blue) as "BLUE",
}

/// The `limit` every queue takes, read by the host.
const QUEUE_LIMIT: Decl<QueueLimit> =
    Decl::new(LIMIT.name, LIMIT.kind, LIMIT.default, LIMIT.doc).positive();

/// One queue: its buffer limit and discipline, and the key path of its table (for errors
/// found after the conditioners resolve).
#[derive(Debug, Clone)]
pub struct QueueConfig {
    pub limit: Limit,
    pub discipline: Discipline,
    pub key: String,
    /// Each declared parameter's resolved value, in declared order (the resolved form's).
    pub params: Vec<(&'static str, Resolved)>,
}

impl QueueConfig {
    /// Reads the queue table at `key` (a link's `queue`, `queue_ab`, `queue_ba`, or a physical
    /// queue of a multi queue).
    pub fn from_table(t: &toml::Table, key: &str) -> Result<QueueConfig, KeyError> {
        let kind = match t.get("type") {
            Some(toml::Value::String(s)) => s.as_str(),
            Some(v) => {
                return Err(key_error(
                    format!("{key}.type"),
                    format!("expected a queue type (a string), got {} {v}", v.type_str()),
                ))
            }
            None => return Err(key_error(key, "missing field `type`")),
        };
        let limit = Table::host(t, key).get(&QUEUE_LIMIT)?;
        let (discipline, params) =
            Discipline::from_kind(kind, t, key, limit).unwrap_or_else(|| {
                let list: Vec<String> = QUEUE_TYPES.iter().map(|c| format!("`{c}`")).collect();
                Err(key_error(
                    format!("{key}.type"),
                    format!(
                        "unknown variant `{kind}`, expected one of {}",
                        list.join(", ")
                    ),
                ))
            })?;
        Ok(QueueConfig {
            limit,
            discipline,
            key: key.to_string(),
            params,
        })
    }

    /// A DropTail queue of the default limit (a link's queue when none is given).
    pub fn droptail(key: &str) -> QueueConfig {
        QueueConfig {
            limit: Limit::Packets(50),
            discipline: Discipline::DropTail(droptail::DropTailConfig),
            key: key.to_string(),
            params: vec![(LIMIT.name, Resolved::Limit(Limit::Packets(50)))],
        }
    }

    pub fn limit(&self) -> Limit {
        self.limit
    }

    pub fn type_name(&self) -> &'static str {
        self.discipline.type_name()
    }

    /// The physical queues of a multi queue (none for other kinds).
    pub fn subqueues(&self) -> &[multi::SubQueueConfig] {
        match &self.discipline {
            Discipline::Multi(m) => &m.queues,
            _ => &[],
        }
    }

    /// This queue and, for a multi queue, each physical queue (with its index).
    pub fn with_subqueues(&self) -> impl Iterator<Item = (Option<usize>, &QueueConfig)> {
        std::iter::once((None, self)).chain(
            self.subqueues()
                .iter()
                .enumerate()
                .map(|(i, s)| (Some(i), &s.queue)),
        )
    }
}

impl QueueConfig {
    /// The resolved form ([`FlatQueue`]).
    pub fn flat_form(&self) -> FlatQueue<'_> {
        FlatQueue {
            kind: self.type_name(),
            params: &self.params,
            queues: self.subqueues(),
            ns2: self.discipline.ns2(self.limit),
            emulable: self.discipline.emulable(),
        }
    }

    /// Whether it can set ECN Congestion Experienced (its resolved `ecn`, or a kind that always
    /// marks; a multi queue: any of its physical queues). DCTCP needs such a queue on its path.
    pub fn marks_ecn(&self) -> bool {
        let ecn = self
            .params
            .iter()
            .any(|(n, v)| *n == "ecn" && *v == Resolved::Bool(true));
        ecn || self.discipline.always_marks()
            || self.subqueues().iter().any(|s| s.queue.marks_ecn())
    }
}

impl Serialize for QueueConfig {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.flat_form().serialize(s)
    }
}

#[cfg(test)]
#[path = "registry_tests.rs"]
mod tests;
