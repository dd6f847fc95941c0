//! Resolved values: what a kind's table resolved each of its declared parameters to (the value
//! given, or the declared default), of the parameter's declared type. A queue's resolved form
//! (`crate::aqm::registry::FlatQueue`) is written from them, so that a parameter declared and
//! read once is in the resolved form without a line of its own.
//!
//! A value's key in the resolved form is the declared name with its unit when it has one, in
//! the units of the rest of the resolved scenario: a duration in whole ns (`target_ns`), a rate
//! in bit/s (`_bps`), a size in bytes (`_bytes`), a queue limit in packets or bytes (`_pkts`,
//! `_bytes`); numbers, whole numbers, booleans and words under their name.

use std::cell::RefCell;

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use super::{Param, ParamKind};
use crate::units::Limit;

/// One parameter's resolved value, of its declared type.
#[derive(Debug, Clone, PartialEq)]
pub enum Resolved {
    Number(f64),
    Integer(u64),
    Bool(bool),
    /// One of a choice's words.
    Word(&'static str),
    /// A name or other text.
    Text(String),
    /// ns.
    Duration(u64),
    /// bit/s.
    Rate(u64),
    /// bytes.
    Bytes(u64),
    Limit(Limit),
    /// A RED curve table (thresholds in packets).
    Curve {
        min_th: f64,
        max_th: f64,
        max_p: f64,
    },
    /// An optional parameter left out (its default is "none"): not in the resolved form.
    Absent,
}

impl Resolved {
    /// The key it is written under for a parameter named `name`: see the module documentation.
    pub fn key(&self, name: &str) -> String {
        let unit = match self {
            Resolved::Duration(_) => "_ns",
            Resolved::Rate(_) => "_bps",
            Resolved::Bytes(_) | Resolved::Limit(Limit::Bytes(_)) => "_bytes",
            Resolved::Limit(Limit::Packets(_)) => "_pkts",
            _ => "",
        };
        format!("{name}{unit}")
    }
}

impl Serialize for Resolved {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Resolved::Number(x) => s.serialize_f64(*x),
            Resolved::Bool(b) => s.serialize_bool(*b),
            Resolved::Word(w) => s.serialize_str(w),
            Resolved::Text(t) => s.serialize_str(t),
            Resolved::Integer(n)
            | Resolved::Duration(n)
            | Resolved::Rate(n)
            | Resolved::Bytes(n)
            | Resolved::Limit(Limit::Packets(n) | Limit::Bytes(n)) => s.serialize_u64(*n),
            Resolved::Curve {
                min_th,
                max_th,
                max_p,
            } => {
                let mut m = s.serialize_map(Some(3))?;
                m.serialize_entry("min_th", min_th)?;
                m.serialize_entry("max_th", max_th)?;
                m.serialize_entry("max_p", max_p)?;
                m.end()
            }
            Resolved::Absent => s.serialize_none(),
        }
    }
}

/// The values a table's reading resolved, in the order read (a [`super::Table`] made with
/// [`super::Table::recording`] adds each parameter it reads).
#[derive(Debug, Default)]
pub struct Record(RefCell<Vec<(&'static str, Resolved)>>);

impl Record {
    pub fn push(&self, name: &'static str, v: Resolved) {
        self.0.borrow_mut().push((name, v));
    }

    /// The value last resolved for each of `params`, in their declared order; a parameter the
    /// reading did not resolve is left out (the registry's tests find it), and so is a list of
    /// tables (`ParamKind::Tables`: a multi queue's physical queues, written by their host).
    pub fn declared(self, params: &[Param]) -> Vec<(&'static str, Resolved)> {
        let read = self.0.into_inner();
        params
            .iter()
            .filter(|p| !matches!(p.kind, ParamKind::Tables { .. }))
            .filter_map(|p| {
                read.iter()
                    .rev()
                    .find(|(n, _)| *n == p.name)
                    .map(|(n, v)| (*n, v.clone()))
            })
            .collect()
    }
}

/// Resolved values written as entries of a map (under [`Resolved::key`]), absent ones left out.
pub fn serialize_entries<M: SerializeMap>(
    m: &mut M,
    values: &[(&'static str, Resolved)],
) -> Result<(), M::Error> {
    for (name, v) in values {
        if *v != Resolved::Absent {
            m.serialize_entry(&v.key(name), v)?;
        }
    }
    Ok(())
}
