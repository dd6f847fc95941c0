//! Parsing a scenario once into a [`Resolved`] (kept typed on the Rust side), and its
//! resolved form as Python objects or as canonical TOML.

use std::panic::catch_unwind;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use qoslab_core::{Scenario, ScenarioError as CoreScenarioError};

use crate::convert::table_err;
use crate::{canon, topy, ScenarioError};

fn scenario_err(e: CoreScenarioError) -> PyErr {
    ScenarioError::new_err((e.to_string(), e.file, e.line, e.key, e.message, e.column))
}

pub(crate) fn parse(text: &str, file: &str) -> PyResult<Scenario> {
    parse_allowing(text, file, &[])
}

/// [`parse`], the files the scenario reads allowed in the folders `allow` too.
fn parse_allowing(text: &str, file: &str, allow: &[std::path::PathBuf]) -> PyResult<Scenario> {
    catch_unwind(|| Scenario::from_toml_allowing(text, file, allow))
        .map_err(|_| {
            PyRuntimeError::new_err("internal error while parsing the scenario (please report it)")
        })?
        .map_err(scenario_err)
}

/// Parses and validates scenario TOML; returns the resolved scenario as a dict.
#[pyfunction]
pub(crate) fn resolve_scenario<'py>(
    py: Python<'py>,
    text: &str,
    file: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let sc = parse(text, file)?;
    resolved_py(py, &sc, file)
}

/// A ScenarioError naming the file: the resolved scenario holds a value TOML cannot (`m`).
fn resolved_err(file: &str, m: String) -> PyErr {
    ScenarioError::new_err((
        format!("{file}: {m}"),
        file.to_string(),
        None::<usize>,
        String::new(),
        m,
    ))
}

/// The resolved form as Python objects (what `toml_to_py` of the resolved `toml::Value` gave,
/// built directly: see `topy`), or a ScenarioError naming the file.
fn resolved_py<'py>(py: Python<'py>, sc: &Scenario, file: &str) -> PyResult<Bound<'py, PyAny>> {
    topy::to_py(py, sc).map_err(|e| topy_err(file, e))
}

fn topy_err(file: &str, e: topy::ToPyError) -> PyErr {
    match e {
        topy::ToPyError::Python(e) => e,
        e => resolved_err(file, format!("a value is out of range: {e}")),
    }
}

/// A parsed, validated and resolved scenario, kept typed on the Rust side so that a run does
/// not parse its TOML again.
#[pyclass(frozen, module = "qoslab._core")]
pub(crate) struct Resolved {
    pub(crate) inner: Scenario,
    pub(crate) file: String,
}

#[pymethods]
impl Resolved {
    /// (nodes, links, flows, arrival processes, conditioners): the sizes `qoslab check` prints,
    /// without building the resolved form in Python.
    fn counts(&self) -> (usize, usize, usize, usize, usize) {
        let s = &self.inner;
        (
            s.nodes.len(),
            s.links.len(),
            s.flows.len(),
            s.arrivals.len(),
            s.conditioners.len(),
        )
    }

    /// (queue state, trace rows) in bytes: what the queues hold from the start (each kind's
    /// `state_bytes`, sub-queues included: FQ-CoDel's flow queues) and the traces' rows (one
    /// shared copy per file and `trace_flow`), for the memory budget.
    fn state_bytes(&self) -> (u64, u64) {
        let mut fq = 0u64;
        for l in &self.inner.links {
            for q in [&l.queue_ab, &l.queue_ba] {
                for (_, x) in q.with_subqueues() {
                    fq += x.discipline.state_bytes();
                }
            }
        }
        let mut seen: Vec<*const qoslab_core::traffic::trace::TraceRow> = Vec::new();
        let mut trace = 0u64;
        for f in &self.inner.flows {
            if let Some(rows) = f.source.as_ref().and_then(|s| s.rows()) {
                if !seen.contains(&rows.as_ptr()) {
                    seen.push(rows.as_ptr());
                    trace += std::mem::size_of_val(&*rows) as u64;
                }
            }
        }
        (fq, trace)
    }

    /// Bytes each arrival process's connection slot takes when built
    /// (`qoslab_core::sim::slot_bytes`), for the memory budget.
    fn slot_bytes(&self) -> Vec<usize> {
        self.inner
            .arrivals
            .iter()
            .map(qoslab_core::sim::slot_bytes)
            .collect()
    }

    /// The resolved scenario as a dict (the flat form the Python side reads).
    fn table<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        resolved_py(py, &self.inner, &self.file)
    }

    /// `table()` in which each array named in `fields` (pairs such as `("flows", ["name",
    /// "src"])`) keeps, of each of its elements, only the listed keys (those it has): what a run
    /// reads, without the 3.35 million objects of a 10,000-flow table (0.35 s to build, and a
    /// cyclic collector walking them whenever it runs).
    fn outline<'py>(
        &self,
        py: Python<'py>,
        fields: Vec<(String, Vec<String>)>,
    ) -> PyResult<Bound<'py, PyAny>> {
        topy::to_py_outline(py, &self.inner, &fields).map_err(|e| topy_err(&self.file, e))
    }

    /// The resolved scenario as TOML: `table_to_toml(self.table())` without the round trip
    /// through Python objects (the scenario's hash; a second at 10,000 flows that way), written
    /// by `canon` (the same text, 0.7-1.3 s at 10,000 flows through toml's `Value` and document
    /// writer, which remain for what `canon` declines). The GIL is released while it is written
    /// (a run computes it beside the simulation).
    fn canonical_toml(&self, py: Python<'_>) -> PyResult<String> {
        let written = py.detach(|| match canon::canonical_toml(&self.inner) {
            Some(text) => Ok(Ok(text)),
            None => self.inner.to_toml_value().map(|v| toml::to_string(&v)),
        });
        match written {
            Ok(Ok(text)) => Ok(text),
            Ok(Err(e)) => Err(table_err(
                "",
                format!("cannot write the scenario as TOML: {e}"),
            )),
            Err(m) => Err(resolved_err(&self.file, m)),
        }
    }
}

/// Parses and validates scenario TOML once, for [`simulate_resolved`] and [`Resolved::table`];
/// the files it reads may lie in its folder or in the folders `allow`. With `max_bytes` (0:
/// none), a scenario whose resolved form would take more memory is refused before its groups
/// are expanded (`limit_what` says what sets the limit).
#[pyfunction]
#[pyo3(signature = (text, file, allow=Vec::new(), max_bytes=0, limit_what=""))]
pub(crate) fn resolve(
    text: &str,
    file: &str,
    allow: Vec<std::path::PathBuf>,
    max_bytes: u64,
    limit_what: &str,
) -> PyResult<Resolved> {
    let limit = (max_bytes > 0).then_some((max_bytes, limit_what));
    let inner = catch_unwind(|| Scenario::from_toml_checked(text, file, &allow, limit))
        .map_err(|_| {
            PyRuntimeError::new_err("internal error while parsing the scenario (please report it)")
        })?
        .map_err(scenario_err)?;
    Ok(Resolved {
        inner,
        file: file.to_string(),
    })
}
