//! The flat form of the resolved meter and conditioner tables: what the Python side and the
//! ns-2 exporter read (every key of every kind, unused keys at neutral values), written by
//! `Serialize` from the typed configurations. (Queues: `crate::aqm::registry::FlatQueue`.)

use serde::{Serialize, Serializer};

use super::conditioner::{Action, ConditionerConfig, Direction, MeterConfig, Scope};

impl Serialize for MeterConfig {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.spec.flat().serialize(s)
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
