//! The flat form of the resolved queue, meter and conditioner tables: what the Python side
//! and the ns-2 exporter read (every key of every kind, unused keys at neutral values), written
//! by `Serialize` from the typed configurations. It is the one place that knows this layout.

use serde::{Serialize, Serializer};

use super::conditioner::{Action, ConditionerConfig, Direction, MeterConfig, Scope};
use super::queue::{AfAverage, CurveConfig, Discipline, QueueConfig, RedConfig, SubQueueConfig};
use super::spec::SchedulerSpec;
use crate::aqm::{PenaltyRule, RioMode, RttSource};
use crate::conditioner::{ColorMode, MeterSpec};
use crate::units::Limit;

/// The flat form of a queue table that the Python side and the ns-2 exporter read.
#[derive(Serialize)]
struct FlatQueue<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    limit_pkts: Option<u64>,
    limit_bytes: Option<u64>,
    min_th: f64,
    max_th: f64,
    max_p: f64,
    w_q: f64,
    gentle: bool,
    wait: bool,
    byte_mode: bool,
    mean_pkt_size_bytes: u32,
    ecn: bool,
    mode: &'static str,
    precedences: Vec<CurveConfig>,
    scheduler: &'static str,
    queues: &'a [SubQueueConfig],
    rtt_source: &'static str,
    penalty: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    dwred_b: Option<f64>,
    #[serde(skip_serializing_if = "str::is_empty")]
    signal: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    signal_delay_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    in_factor: Option<f64>,
}

impl Serialize for QueueConfig {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (limit_pkts, limit_bytes) = match self.limit {
            Limit::Packets(p) => (Some(p), None),
            Limit::Bytes(b) => (None, Some(b)),
        };
        let mut f = FlatQueue {
            kind: self.type_name(),
            limit_pkts,
            limit_bytes,
            min_th: 0.0,
            max_th: 0.0,
            max_p: 0.0,
            w_q: 0.0,
            gentle: false,
            wait: true,
            byte_mode: false,
            mean_pkt_size_bytes: 500,
            ecn: false,
            mode: "",
            precedences: Vec::new(),
            scheduler: "",
            queues: &[],
            rtt_source: "",
            penalty: "",
            dwred_b: None,
            signal: "",
            signal_delay_ns: None,
            in_factor: None,
        };
        let red = |f: &mut FlatQueue, r: &RedConfig| {
            f.min_th = r.curve.min_th;
            f.max_th = r.curve.max_th;
            f.max_p = r.curve.max_p;
            f.gentle = r.curve.gentle;
            f.w_q = r.w_q;
            f.wait = r.wait;
            f.byte_mode = r.byte_mode;
            f.mean_pkt_size_bytes = r.mean_pkt_size;
            f.ecn = r.ecn;
        };
        let af = |f: &mut FlatQueue, a: &AfAverage, curves: &[CurveConfig]| {
            f.w_q = a.w_q;
            f.gentle = a.gentle;
            f.wait = a.wait;
            f.mean_pkt_size_bytes = a.mean_pkt_size;
            f.precedences = curves.to_vec();
        };
        match &self.discipline {
            Discipline::DropTail => {}
            Discipline::Red(r) => red(&mut f, r),
            Discipline::Rio { mode, avg, curves } => {
                af(&mut f, avg, curves);
                f.mode = match mode {
                    RioMode::Coupled => "coupled",
                    RioMode::Decoupled => "decoupled",
                };
            }
            Discipline::Wred { avg, curves } => af(&mut f, avg, curves),
            Discipline::RioPlusO { avg, curves } => {
                af(&mut f, avg, curves);
                f.mode = "coupled";
            }
            Discipline::FddRed {
                red: r,
                penalty,
                rtt_source,
            } => {
                red(&mut f, r);
                f.penalty = match penalty {
                    PenaltyRule::Shares => "shares",
                    PenaltyRule::Fig2 => "fig2",
                };
                f.rtt_source = match rtt_source {
                    RttSource::Estimator => "estimator",
                    RttSource::Oracle => "oracle",
                };
            }
            Discipline::Dwred {
                params,
                mean_pkt_size,
                signal,
                signal_delay_ns,
            } => {
                f.w_q = params.w_q;
                f.wait = params.wait;
                f.mean_pkt_size_bytes = *mean_pkt_size;
                f.max_p = params.max_p;
                f.max_th = params.initial_max_th;
                f.dwred_b = Some(params.b);
                f.signal = signal;
                f.signal_delay_ns = Some(*signal_delay_ns);
                f.in_factor = params.in_factor;
                f.precedences = params
                    .in_curve
                    .iter()
                    .map(|c| CurveConfig {
                        min_th: c.min_th,
                        max_th: c.max_th,
                        max_p: c.max_p,
                    })
                    .collect();
            }
            Discipline::Multi { scheduler, queues } => {
                f.scheduler = match scheduler {
                    SchedulerSpec::Priority => "priority",
                    SchedulerSpec::Rr => "rr",
                    SchedulerSpec::Wrr => "wrr",
                    SchedulerSpec::Drr => "drr",
                };
                f.queues = queues;
            }
        }
        f.serialize(s)
    }
}

/// The flat form of a meter that the Python side and the ns-2 exporter read.
#[derive(Serialize)]
struct FlatMeter<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    mode: &'static str,
    cir_bps: u64,
    cbs_bytes: Option<u64>,
    ebs_bytes: Option<u64>,
    pir_bps: Option<u64>,
    pbs_bytes: Option<u64>,
    win_len_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ard: Option<&'a crate::conditioner::ArdParams>,
    #[serde(skip_serializing_if = "Option::is_none")]
    twam: Option<&'a crate::conditioner::TwamParams>,
    #[serde(skip_serializing_if = "Option::is_none")]
    probe: Option<&'a crate::conditioner::ProbeParams>,
}

impl Serialize for MeterConfig {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut f = FlatMeter {
            kind: self.type_name(),
            mode: "blind",
            cir_bps: 0,
            cbs_bytes: None,
            ebs_bytes: None,
            pir_bps: None,
            pbs_bytes: None,
            win_len_ns: None,
            ard: None,
            twam: None,
            probe: None,
        };
        let mode = |m: ColorMode| match m {
            ColorMode::Blind => "blind",
            ColorMode::Aware => "aware",
        };
        match &self.spec {
            MeterSpec::TokenBucket(p) => {
                (f.cir_bps, f.cbs_bytes, f.mode) = (p.cir, Some(p.cbs), mode(p.mode));
            }
            MeterSpec::Srtcm(p) => {
                (f.cir_bps, f.cbs_bytes, f.mode) = (p.cir, Some(p.cbs), mode(p.mode));
                f.ebs_bytes = Some(p.ebs);
            }
            MeterSpec::Trtcm(p) => {
                (f.cir_bps, f.cbs_bytes, f.mode) = (p.cir, Some(p.cbs), mode(p.mode));
                (f.pir_bps, f.pbs_bytes) = (Some(p.pir), Some(p.pbs));
            }
            MeterSpec::Tsw2cm(p) => (f.cir_bps, f.win_len_ns) = (p.ctr, Some(p.win_len)),
            MeterSpec::Tsw3cm(p) => {
                (f.cir_bps, f.pir_bps, f.win_len_ns) = (p.ctr, Some(p.ptr), Some(p.win_len));
            }
            MeterSpec::Ard(p) => f.ard = Some(p),
            MeterSpec::Twam(p) => f.twam = Some(p),
            MeterSpec::Probe(p) => f.probe = Some(p),
        }
        f.serialize(s)
    }
}

/// The flat form of a conditioner that the Python side and the ns-2 exporter read.
#[derive(Serialize)]
struct FlatConditioner<'a> {
    name: &'a str,
    link: &'a str,
    direction: Direction,
    classifier: &'static str,
    classifier_value: &'a str,
    scope: Scope,
    meter: &'a MeterConfig,
    green: Action,
    yellow: Action,
    red: Action,
}

impl Serialize for ConditionerConfig {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        FlatConditioner {
            name: &self.name,
            link: &self.link,
            direction: self.direction,
            classifier: self.classifier.name(),
            classifier_value: &self.classifier_value,
            scope: self.scope,
            meter: &self.meter,
            green: self.green,
            yellow: self.yellow,
            red: self.red,
        }
        .serialize(s)
    }
}
