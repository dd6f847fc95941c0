//! Writing Parquet files from Python's columns (qoslab_core::parquet): the columns are copied
//! out of their Python objects, then the GIL is released while writing.

use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::buffer::{Element, ElementType, PyBuffer};
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyMemoryView, PyString};
use qoslab_core::parquet::{self, Column, ParquetError, Strings, Values};

/// A column given to [`write_parquet`], copied out of its Python object (so that the GIL can be
/// released while writing).
pub(crate) enum OwnedColumn {
    Bool(Vec<bool>),
    I8(Vec<i8>),
    I16(Vec<i16>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    U8(Vec<u8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    Utf8(Strings),
}

impl OwnedColumn {
    pub(crate) fn values(&self) -> Values<'_> {
        match self {
            OwnedColumn::Bool(v) => Values::Bool(v),
            OwnedColumn::I8(v) => Values::I8(v),
            OwnedColumn::I16(v) => Values::I16(v),
            OwnedColumn::I32(v) => Values::I32(v),
            OwnedColumn::I64(v) => Values::I64(v),
            OwnedColumn::U8(v) => Values::U8(v),
            OwnedColumn::U16(v) => Values::U16(v),
            OwnedColumn::U32(v) => Values::U32(v),
            OwnedColumn::U64(v) => Values::U64(v),
            OwnedColumn::F32(v) => Values::F32(v),
            OwnedColumn::F64(v) => Values::F64(v),
            OwnedColumn::Utf8(v) => Values::Utf8(v),
        }
    }
}

fn buffer_vec<T: Element + Copy>(v: &Bound<'_, PyAny>) -> PyResult<Vec<T>> {
    // an empty array.array's buffer may be unaligned (PyBuffer refuses it): nothing to copy
    if v.len()? == 0 {
        return Ok(Vec::new());
    }
    PyBuffer::<T>::get(v)?.to_vec(v.py())
}

/// A column from Python: a list of str, or a one-dimensional buffer of numbers whose format
/// gives the type (array.array's b B h H i I l L q Q f d; "?" for booleans, e.g.
/// `memoryview(bytes_of_0_and_1).cast("?")`).
pub(crate) fn owned_column(name: &str, v: &Bound<'_, PyAny>) -> PyResult<OwnedColumn> {
    if let Ok(list) = v.cast::<PyList>() {
        let mut s = Strings::with_capacity(list.len(), 0);
        for x in list.iter() {
            let x = x.cast::<PyString>().map_err(|_| {
                PyValueError::new_err(format!(
                    "column `{name}`: a list column must hold only str, not {}",
                    x.get_type()
                        .name()
                        .map_or_else(|_| "?".to_string(), |n| n.to_string())
                ))
            })?;
            s.push(x.to_str()?);
        }
        return Ok(OwnedColumn::Utf8(s));
    }
    let not_a_column = || {
        PyValueError::new_err(format!(
            "column `{name}`: expected a one-dimensional buffer of numbers (array.array) or a list of str, not {}",
            v.get_type()
                .name()
                .map_or_else(|_| "?".to_string(), |n| n.to_string())
        ))
    };
    let view = PyMemoryView::from(v).map_err(|_| not_a_column())?;
    let format: String = view.getattr("format")?.extract()?;
    if view.getattr("ndim")?.extract::<usize>()? != 1 {
        return Err(not_a_column());
    }
    let cformat = std::ffi::CString::new(format.clone()).map_err(|_| not_a_column())?;
    use ElementType::*;
    Ok(match ElementType::from_format(&cformat) {
        Bool => OwnedColumn::Bool(
            buffer_vec::<u8>(&view.call_method1("cast", ("B",))?)?
                .into_iter()
                .map(|x| x != 0)
                .collect(),
        ),
        SignedInteger { bytes: 1 } => OwnedColumn::I8(buffer_vec(&view)?),
        SignedInteger { bytes: 2 } => OwnedColumn::I16(buffer_vec(&view)?),
        SignedInteger { bytes: 4 } => OwnedColumn::I32(buffer_vec(&view)?),
        SignedInteger { bytes: 8 } => OwnedColumn::I64(buffer_vec(&view)?),
        UnsignedInteger { bytes: 1 } => OwnedColumn::U8(buffer_vec(&view)?),
        UnsignedInteger { bytes: 2 } => OwnedColumn::U16(buffer_vec(&view)?),
        UnsignedInteger { bytes: 4 } => OwnedColumn::U32(buffer_vec(&view)?),
        UnsignedInteger { bytes: 8 } => OwnedColumn::U64(buffer_vec(&view)?),
        Float { bytes: 4 } => OwnedColumn::F32(buffer_vec(&view)?),
        Float { bytes: 8 } => OwnedColumn::F64(buffer_vec(&view)?),
        _ => {
            return Err(PyValueError::new_err(format!(
                "column `{name}`: unsupported buffer format {format:?} (supported: b B h H i I l L q Q f d ?)"
            )))
        }
    })
}

/// Writes a table as the Parquet file `path` (qoslab_core::parquet): `columns` in order, each a
/// list of str or a buffer of numbers, all of one length; `metadata` as the file's key-value
/// metadata. The columns are copied, then the GIL is released while writing. An I/O error is
/// an OSError naming the path; a bad column a ValueError.
#[pyfunction]
pub(crate) fn write_parquet(
    py: Python<'_>,
    path: std::path::PathBuf,
    columns: Vec<(String, Bound<'_, PyAny>)>,
    metadata: Vec<(String, String)>,
) -> PyResult<()> {
    let owned = columns
        .iter()
        .map(|(name, v)| owned_column(name, v))
        .collect::<PyResult<Vec<_>>>()?;
    let cols: Vec<Column<'_>> = columns
        .iter()
        .zip(&owned)
        .map(|((name, _), v)| Column {
            name,
            values: v.values(),
        })
        .collect();
    let written = py.detach(|| {
        catch_unwind(AssertUnwindSafe(|| {
            parquet::write_table(&path, &cols, &metadata)
        }))
    });
    parquet_outcome(written, &path)
}

/// What a Parquet write came to, as Python sees it: an I/O error is an OSError naming the path
/// (errno and strerror apart), a bad column a ValueError, a panic a RuntimeError.
pub(crate) fn parquet_outcome(
    written: std::thread::Result<Result<(), ParquetError>>,
    path: &std::path::Path,
) -> PyResult<()> {
    let shown = path.display();
    match written {
        Ok(Ok(())) => Ok(()),
        Ok(Err(ParquetError::Io { source, .. })) => Err(match source.raw_os_error() {
            // OSError(errno, strerror, filename): Python picks the subclass (PermissionError…)
            // and prints "[Errno 13] Permission denied: 'PATH'"
            Some(code) => {
                let text = source.to_string();
                let suffix = format!(" (os error {code})");
                let strerror = text.strip_suffix(&suffix).unwrap_or(&text).to_string();
                PyOSError::new_err((code, strerror, shown.to_string()))
            }
            None => PyOSError::new_err(format!("{shown}: {source}")),
        }),
        Ok(Err(e)) => Err(PyValueError::new_err(format!("{shown}: {e}"))),
        Err(_) => Err(PyRuntimeError::new_err(format!(
            "internal error while writing {shown} (please report it)"
        ))),
    }
}
