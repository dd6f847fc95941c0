//! The flat form of the resolved meter and conditioner tables: what the Python side and the
//! ns-2 exporter read (every key of every kind, unused keys at neutral values), written by
//! `Serialize` from the typed configurations. (Queues: `crate::aqm::registry::FlatQueue`.)

use serde::{Serialize, Serializer};

use super::conditioner::{Action, ConditionerConfig, Direction, MeterConfig, Scope};
use crate::conditioner::{ColorMode, MeterSpec};

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
