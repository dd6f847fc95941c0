//! Thin PyO3 bindings of qoslab-core. Scenario errors become `qoslab.ScenarioError`, any
//! other failure a Python exception; a panic in the core is caught here and never crosses
//! into Python. The GIL is released while simulating.
//!
//! By job: `resolve` (parsing a scenario once, its resolved form; `topy` and `canon` write
//! it), `simulate` (running it), `columns` (the columns of the tables a run returns, declared
//! once), `records` (finished transfers, held or spilled), `parquet_io` (writing Parquet),
//! `convert` (Python tables to TOML and back); this file registers the module.

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

mod canon;
mod columns;
mod convert;
mod parquet_io;
mod records;
mod resolve;
mod simulate;
mod topy;

create_exception!(
    qoslab,
    ScenarioError,
    PyValueError,
    "A scenario file or table is invalid."
);

/// The JSON Schema of the scenario format, generated from the core's declarations.
#[pyfunction]
fn scenario_schema(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    convert::toml_to_py(py, &qoslab_core::scenario::schema::json_schema())
}

/// A codepoint's drop precedence in a RIO/WRED queue (AFx1/EF 0, AFx2 1, else 2): the rule
/// the simulator uses, for the Python side (ns-2 export, comparisons) to share.
#[pyfunction]
fn drop_precedence(dscp: u8) -> u8 {
    qoslab_core::ds::drop_precedence(dscp)
}

/// A codepoint's conventional name ("AF11", "EF", "CS1", "BE", else its number).
#[pyfunction]
fn dscp_name(dscp: u8) -> String {
    qoslab_core::ds::dscp_name(dscp)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add(
        "FQ_CODEL_QUEUE_BYTES",
        qoslab_core::aqm::fq_codel::QUEUE_BYTES,
    )?;
    // A transfers spill file's row (records.rs), which python/qoslab/runs/transfers.py reads.
    m.add("TRANSFER_SPILL_FIELDS", records::COLUMNS.to_vec())?;
    // The numeric and text columns of each table a run returns, from their one declaration
    // (columns.rs), which tests/test_outputs_doc.py checks against the outputs catalogue.
    let tables = pyo3::types::PyDict::new(m.py());
    for (name, cols) in columns::tables() {
        tables.set_item(name, cols)?;
    }
    m.add("TABLE_COLUMNS", tables)?;
    // The package version plus a fingerprint of the simulator's source (see build.rs).
    m.add(
        "__version__",
        concat!(env!("CARGO_PKG_VERSION"), "+", env!("QOSLAB_SOURCE_HASH")),
    )?;
    m.add_function(wrap_pyfunction!(resolve::resolve_scenario, m)?)?;
    m.add_class::<resolve::Resolved>()?;
    m.add_function(wrap_pyfunction!(resolve::resolve, m)?)?;
    m.add_function(wrap_pyfunction!(simulate::simulate_resolved, m)?)?;
    m.add_function(wrap_pyfunction!(simulate::simulate, m)?)?;
    m.add_function(wrap_pyfunction!(drop_precedence, m)?)?;
    m.add_function(wrap_pyfunction!(dscp_name, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_schema, m)?)?;
    m.add_function(wrap_pyfunction!(convert::table_to_toml, m)?)?;
    m.add_function(wrap_pyfunction!(parquet_io::write_parquet, m)?)?;
    m.add_function(wrap_pyfunction!(records::write_parquet_groups, m)?)?;
    Ok(())
}
