//! Finished transfers' records on their way out of a run.
//!
//! A run of `[[arrivals]]` finishes transfers without bound (a busy web mix, tens of thousands
//! a simulated minute). The records leave the simulation after every slice of simulated time
//! ([`qoslab_core::Simulation::take_records`]); here they are held in memory up to
//! `spill_after` records, and past that, when the caller gave a spill file, written to it as
//! fixed little-endian rows ([`ROW_BYTES`] each, the fields of [`COLUMNS`] in order, every one a
//! `u64`; an unfinished transfer's `end_ns` is `u64::MAX`). Memory then stays flat over any
//! number of transfers: the Python side folds the file into the summary and writes
//! transfers.parquet from it a chunk at a time (python/qoslab/runs/transfers.py).

use std::fs::File;
use std::io::{self, BufWriter, Write};

use pyo3::prelude::*;
use pyo3::types::PyDict;
use qoslab_core::sim::FlowRecord;

/// The spill file's fields, in the order of a row.
pub const COLUMNS: [&str; 11] = [
    "process",
    "id",
    "slot",
    "dscp",
    "size_bytes",
    "segments",
    "start_ns",
    "end_ns",
    "ideal_ns",
    "retransmits",
    "timeouts",
];

/// Bytes of one spilled row.
pub const ROW_BYTES: usize = 8 * COLUMNS.len();

/// The records of one run: in memory, or (past `spill_after`) in the spill file.
pub struct RecordSink {
    held: Vec<FlowRecord>,
    spill_after: usize,
    path: Option<String>,
    file: Option<BufWriter<File>>,
    spilled: u64,
    /// The most records held in memory at once (after a slice's records were added).
    pub peak_held: usize,
}

impl RecordSink {
    pub fn new(path: Option<String>, spill_after: usize) -> Self {
        RecordSink {
            held: Vec::new(),
            spill_after,
            path,
            file: None,
            spilled: 0,
            peak_held: 0,
        }
    }

    /// Takes `recs`; writes every held record to the spill file once more than `spill_after`
    /// are held (and a spill file was given). An I/O error names the file.
    pub fn push(&mut self, recs: &mut Vec<FlowRecord>) -> PyResult<()> {
        self.held.append(recs);
        self.peak_held = self.peak_held.max(self.held.len());
        if self.held.len() > self.spill_after || self.file.is_some() {
            self.spill().map_err(|e| self.io_error(e))?;
        }
        Ok(())
    }

    fn io_error(&self, e: io::Error) -> PyErr {
        let shown = self.path.as_deref().unwrap_or("");
        pyo3::exceptions::PyOSError::new_err(format!(
            "{shown}: writing the transfers' records: {e}"
        ))
    }

    fn spill(&mut self) -> io::Result<()> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        if self.file.is_none() {
            self.file = Some(BufWriter::with_capacity(1 << 16, File::create(path)?));
        }
        if let Some(w) = self.file.as_mut() {
            for r in self.held.drain(..) {
                w.write_all(&row(&r))?;
                self.spilled += 1;
            }
        }
        Ok(())
    }

    /// The transfers' entry of the run's results: the columns (records held in memory), or
    /// `{"spill": path, "rows": n, "row_bytes": ROW_BYTES}` once spilled (the file flushed).
    pub fn finish<'py>(mut self, py: Python<'py>, out: &Bound<'py, PyDict>) -> PyResult<()> {
        if self.file.is_some() {
            self.spill().map_err(|e| self.io_error(e))?;
        }
        out.set_item("transfers_peak_held", self.peak_held)?;
        match self.file.take() {
            Some(w) => {
                w.into_inner().map_err(|e| self.io_error(e.into_error()))?;
                let d = PyDict::new(py);
                d.set_item("spill", self.path.as_deref())?;
                d.set_item("rows", self.spilled)?;
                d.set_item("row_bytes", ROW_BYTES)?;
                out.set_item("transfers_spill", d)?;
                out.set_item("transfers", crate::simulate::transfer_columns(py, &[])?)
            }
            None => out.set_item(
                "transfers",
                crate::simulate::transfer_columns(py, &self.held)?,
            ),
        }
    }
}

fn row(r: &FlowRecord) -> [u8; ROW_BYTES] {
    let fields = [
        r.process as u64,
        r.id,
        r.slot as u64,
        r.dscp as u64,
        r.size_bytes,
        r.segments,
        r.start_ns,
        r.end_ns.unwrap_or(u64::MAX),
        r.ideal_ns,
        r.retransmits,
        r.timeouts,
    ];
    let mut b = [0u8; ROW_BYTES];
    for (i, v) in fields.iter().enumerate() {
        b[8 * i..8 * i + 8].copy_from_slice(&v.to_le_bytes());
    }
    b
}

/// Writes the Parquet file `path` a row group at a time (`qoslab_core::parquet::GroupWriter`):
/// `groups` yields each group's columns (as [`crate::parquet_io::write_parquet`] takes them, the same names
/// and types every time); `metadata` is the file's key-value metadata. Only one group's columns
/// are held at once (transfers.parquet of a spilled run: python/qoslab/runs/transfers.py). The GIL is
/// released while a group is written; errors as [`crate::parquet_io::write_parquet`]'s.
#[pyfunction]
pub fn write_parquet_groups(
    py: Python<'_>,
    path: std::path::PathBuf,
    groups: Bound<'_, PyAny>,
    metadata: Vec<(String, String)>,
) -> PyResult<()> {
    use qoslab_core::parquet::{Column, GroupWriter, ParquetError};
    use std::panic::{catch_unwind, AssertUnwindSafe};

    let io = |source: io::Error| ParquetError::Io {
        path: path.clone(),
        source,
    };
    let file = match File::create(&path) {
        Ok(f) => f,
        Err(e) => return crate::parquet_io::parquet_outcome(Ok(Err(io(e))), &path),
    };
    let mut writer = match GroupWriter::start(BufWriter::with_capacity(1 << 16, file)) {
        Ok(w) => w,
        Err(e) => return crate::parquet_io::parquet_outcome(Ok(Err(io(e))), &path),
    };
    for group in groups.try_iter()? {
        let columns: Vec<(String, Bound<'_, PyAny>)> = group?.extract()?;
        let owned = columns
            .iter()
            .map(|(name, v)| crate::parquet_io::owned_column(name, v))
            .collect::<PyResult<Vec<_>>>()?;
        let cols: Vec<Column<'_>> = columns
            .iter()
            .zip(&owned)
            .map(|((name, _), v)| Column {
                name,
                values: v.values(),
            })
            .collect();
        let written = py.detach(|| catch_unwind(AssertUnwindSafe(|| writer.group(&cols))));
        crate::parquet_io::parquet_outcome(written, &path)?;
    }
    let done = py.detach(|| {
        catch_unwind(AssertUnwindSafe(|| {
            writer.finish(&metadata).map(|_| ()).map_err(io)
        }))
    });
    crate::parquet_io::parquet_outcome(done, &path)
}
