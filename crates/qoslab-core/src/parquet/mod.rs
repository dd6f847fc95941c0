//! A minimal Parquet writer for the flat tables of a run (`NAME.parquet`), so that writing them
//! needs neither pyarrow nor numpy on the Python side (their import alone took longer than a
//! short run's whole process).
//!
//! Written from the format's specification (apache/parquet-format: `parquet.thrift`,
//! `Encodings.md`), not from another implementation. The layout is the simplest a reader
//! must accept:
//!
//! ```text
//! "PAR1" | column 0: [dictionary page] page, page, … | column 1: … | FileMetaData
//!        | footer length (u32 LE) | "PAR1"
//! ```
//!
//! * one row group; one column chunk per column; data pages of version 1, UNCOMPRESSED, each
//!   about [`PAGE_BYTES`] of PLAIN values (at least one row), so that tables of millions of
//!   rows make no huge page;
//! * dictionary encoding where it pays, as pyarrow does by default (a run's tables have many
//!   repeated times, names, counters and NaNs): a PLAIN dictionary page, entries in order of
//!   first appearance, then data pages of RLE_DICTIONARY indices (the RLE/bit-packed hybrid,
//!   [`hybrid`]), all pages of the chunk referring to the one dictionary. The rule
//!   ([`Values::dictionary`]): a column is dictionary-encoded when it is not boolean, not empty,
//!   its dictionary is at most [`DICT_PAGE_BYTES`] (pyarrow's fallback limit, 1 MiB), and the
//!   dictionary plus every index at full bit width is smaller than the PLAIN values; otherwise
//!   it is PLAIN. Entries are told apart by their bits (NaN payloads, -0.0 and 0.0 are distinct
//!   entries) and strings by their bytes;
//! * every field OPTIONAL (nullable), as pyarrow writes a table's fields by default, with no
//!   null: a page's definition levels are one RLE run of 1s (bit width 1), behind the 4-byte
//!   length that version-1 pages put in front of them;
//! * page headers and the footer in Thrift's compact protocol ([`Thrift`]);
//! * types annotated the way pyarrow annotates them (logical type and the legacy converted
//!   type), so that a reader gets back the same Arrow types without an `ARROW:schema` entry:
//!   8/16-bit and unsigned integers as `INTEGER(bits, signed)`, strings as `STRING`;
//! * no compression, statistics, index or bloom filter (all optional).
//!
//! The output is a function of the columns alone: the same table writes the same bytes.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

mod dict;
mod groups;
#[cfg(test)]
mod tests;
mod thrift;

pub use dict::{bit_width, hybrid, Dictionary};
pub use groups::GroupWriter;

pub use thrift::{varint, zigzag, Thrift};

/// Target size of one data page's values in bytes (a page holds at least one row).
pub const PAGE_BYTES: usize = 1 << 20;

/// The largest dictionary page: a column whose dictionary would be larger is written PLAIN
/// (pyarrow's `dictionary_pagesize_limit`, 1 MiB, past which it falls back to PLAIN).
pub const DICT_PAGE_BYTES: usize = 1 << 20;

/// The largest page body Parquet can describe (its sizes are `i32`), less room for the
/// definition levels.
const MAX_PAGE_BODY: usize = i32::MAX as usize - 64;

const MAGIC: &[u8; 4] = b"PAR1";

/// The writer's name in the file's `created_by` (the format is "NAME version X").
const CREATED_BY: &str = concat!("qoslab-core version ", env!("CARGO_PKG_VERSION"));

/// UTF-8 strings stored back to back (one allocation however many rows): string `i` is
/// `data[ends[i - 1]..ends[i]]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Strings {
    data: String,
    ends: Vec<usize>,
}

impl Strings {
    pub fn with_capacity(rows: usize, bytes: usize) -> Self {
        Strings {
            data: String::with_capacity(bytes),
            ends: Vec::with_capacity(rows),
        }
    }

    pub fn push(&mut self, s: &str) {
        self.data.push_str(s);
        self.ends.push(self.data.len());
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// String `i` (panics if out of range, as slice indexing does).
    pub fn get(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.data[start..self.ends[i]]
    }

    pub fn iter(&self) -> impl Iterator<Item = &str> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }
}

impl<S: AsRef<str>> FromIterator<S> for Strings {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> Self {
        let mut s = Strings::default();
        for x in iter {
            s.push(x.as_ref());
        }
        s
    }
}

/// A column's values; the variant decides the Parquet type (see [`Values::schema_type`]).
#[derive(Debug, Clone, Copy)]
pub enum Values<'a> {
    Bool(&'a [bool]),
    I8(&'a [i8]),
    I16(&'a [i16]),
    I32(&'a [i32]),
    I64(&'a [i64]),
    U8(&'a [u8]),
    U16(&'a [u16]),
    U32(&'a [u32]),
    U64(&'a [u64]),
    F32(&'a [f32]),
    F64(&'a [f64]),
    Utf8(&'a Strings),
}

/// One named column of a table.
#[derive(Debug, Clone, Copy)]
pub struct Column<'a> {
    pub name: &'a str,
    pub values: Values<'a>,
}

/// Why a table was not written.
#[derive(Debug, thiserror::Error)]
pub enum ParquetError {
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
    #[error("column `{column}` has {len} values where column `{first}` has {expected}")]
    Length {
        column: String,
        len: usize,
        first: String,
        expected: usize,
    },
    #[error(
        "column `{column}` holds a string of {bytes} bytes, over the 2 GiB a Parquet page can hold"
    )]
    TooLarge { column: String, bytes: usize },
    #[error("row group {group} has other columns (names or types) than the first")]
    Schema { group: usize },
}

// Parquet's enums (parquet.thrift), the values this writer uses.
mod code {
    // Type
    pub const BOOLEAN: i32 = 0;
    pub const INT32: i32 = 1;
    pub const INT64: i32 = 2;
    pub const FLOAT: i32 = 4;
    pub const DOUBLE: i32 = 5;
    pub const BYTE_ARRAY: i32 = 6;
    // ConvertedType
    pub const UTF8: i32 = 0;
    pub const UINT_8: i32 = 11;
    pub const UINT_16: i32 = 12;
    pub const UINT_32: i32 = 13;
    pub const UINT_64: i32 = 14;
    pub const INT_8: i32 = 15;
    pub const INT_16: i32 = 16;
    // FieldRepetitionType
    pub const REQUIRED: i32 = 0;
    pub const OPTIONAL: i32 = 1;
    // Encoding
    pub const PLAIN: i32 = 0;
    pub const RLE: i32 = 3;
    pub const RLE_DICTIONARY: i32 = 8;
    // CompressionCodec
    pub const UNCOMPRESSED: i32 = 0;
    // PageType
    pub const DATA_PAGE: i32 = 0;
    pub const DICTIONARY_PAGE: i32 = 2;
    // LogicalType union members
    pub const LOGICAL_STRING: i16 = 1;
    pub const LOGICAL_INTEGER: i16 = 10;
}

/// How a column is declared in the schema: physical type, and the annotation if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchemaType {
    pub physical: i32,
    pub annotation: Option<Annotation>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Annotation {
    /// LogicalType STRING, ConvertedType UTF8.
    String,
    /// LogicalType INTEGER(bits, signed) and the matching ConvertedType.
    Integer { bits: i8, signed: bool },
}

impl Values<'_> {
    pub fn len(&self) -> usize {
        match self {
            Values::Bool(v) => v.len(),
            Values::I8(v) => v.len(),
            Values::I16(v) => v.len(),
            Values::I32(v) => v.len(),
            Values::I64(v) => v.len(),
            Values::U8(v) => v.len(),
            Values::U16(v) => v.len(),
            Values::U32(v) => v.len(),
            Values::U64(v) => v.len(),
            Values::F32(v) => v.len(),
            Values::F64(v) => v.len(),
            Values::Utf8(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The Parquet type of the column, annotated as pyarrow annotates the same Arrow type (a
    /// 32- or 64-bit signed integer, a float or a boolean needs none).
    pub fn schema_type(&self) -> SchemaType {
        use Annotation::*;
        let int = |bits, signed| Some(Integer { bits, signed });
        let (physical, annotation) = match self {
            Values::Bool(_) => (code::BOOLEAN, None),
            Values::I8(_) => (code::INT32, int(8, true)),
            Values::I16(_) => (code::INT32, int(16, true)),
            Values::I32(_) => (code::INT32, None),
            Values::I64(_) => (code::INT64, None),
            Values::U8(_) => (code::INT32, int(8, false)),
            Values::U16(_) => (code::INT32, int(16, false)),
            Values::U32(_) => (code::INT32, int(32, false)),
            Values::U64(_) => (code::INT64, int(64, false)),
            Values::F32(_) => (code::FLOAT, None),
            Values::F64(_) => (code::DOUBLE, None),
            Values::Utf8(_) => (code::BYTE_ARRAY, Some(String)),
        };
        SchemaType {
            physical,
            annotation,
        }
    }

    /// Row ranges of the pages: about [`PAGE_BYTES`] of values each, at least one row each,
    /// one empty page for an empty column.
    fn pages(&self) -> Vec<(usize, usize)> {
        let n = self.len();
        let rows_per_page = match self {
            Values::Bool(_) => PAGE_BYTES * 8,
            Values::I8(_) | Values::I16(_) | Values::I32(_) | Values::U8(_) => PAGE_BYTES / 4,
            Values::U16(_) | Values::U32(_) | Values::F32(_) => PAGE_BYTES / 4,
            Values::I64(_) | Values::U64(_) | Values::F64(_) => PAGE_BYTES / 8,
            Values::Utf8(s) => {
                let mut out = Vec::new();
                let (mut start, mut bytes) = (0, 0);
                for (i, x) in s.iter().enumerate() {
                    bytes += 4 + x.len();
                    if bytes >= PAGE_BYTES {
                        out.push((start, i + 1));
                        (start, bytes) = (i + 1, 0);
                    }
                }
                if start < n || out.is_empty() {
                    out.push((start, n));
                }
                return out;
            }
        };
        if n == 0 {
            return vec![(0, 0)];
        }
        (0..n)
            .step_by(rows_per_page)
            .map(|a| (a, (a + rows_per_page).min(n)))
            .collect()
    }

    /// Appends the values of `rows`, in that order, PLAIN-encoded: little-endian values (8-
    /// and 16-bit integers widened to INT32, unsigned ones as their two's-complement bits),
    /// booleans one bit each from the least significant, strings as a 4-byte length and the
    /// bytes. A data page's rows are a range; a dictionary page's, the rows where its entries
    /// first appear.
    fn plain(&self, rows: impl ExactSizeIterator<Item = usize>, out: &mut Vec<u8>) {
        fn put<T: Copy, const N: usize>(
            v: &[T],
            rows: impl ExactSizeIterator<Item = usize>,
            out: &mut Vec<u8>,
            le: fn(T) -> [u8; N],
        ) {
            out.reserve(rows.len() * N);
            for i in rows {
                out.extend_from_slice(&le(v[i]));
            }
        }
        match self {
            Values::Bool(v) => {
                let bits: Vec<bool> = rows.map(|i| v[i]).collect();
                for chunk in bits.chunks(8) {
                    let byte = chunk
                        .iter()
                        .enumerate()
                        .fold(0u8, |acc, (i, &x)| acc | (u8::from(x) << i));
                    out.push(byte);
                }
            }
            Values::I8(v) => put(v, rows, out, |x| i32::from(x).to_le_bytes()),
            Values::I16(v) => put(v, rows, out, |x| i32::from(x).to_le_bytes()),
            Values::I32(v) => put(v, rows, out, i32::to_le_bytes),
            Values::I64(v) => put(v, rows, out, i64::to_le_bytes),
            Values::U8(v) => put(v, rows, out, |x| u32::from(x).to_le_bytes()),
            Values::U16(v) => put(v, rows, out, |x| u32::from(x).to_le_bytes()),
            Values::U32(v) => put(v, rows, out, u32::to_le_bytes),
            Values::U64(v) => put(v, rows, out, u64::to_le_bytes),
            Values::F32(v) => put(v, rows, out, f32::to_le_bytes),
            Values::F64(v) => put(v, rows, out, f64::to_le_bytes),
            Values::Utf8(s) => {
                for i in rows {
                    let x = s.get(i).as_bytes();
                    // checked before writing: no string is over MAX_PAGE_BODY bytes
                    out.extend_from_slice(&(x.len() as u32).to_le_bytes());
                    out.extend_from_slice(x);
                }
            }
        }
    }

    /// The column's dictionary, or `None` if the column is to be written PLAIN: booleans, an
    /// empty column, a dictionary of over [`DICT_PAGE_BYTES`], or one that does not pay (its
    /// PLAIN size plus every row's index at the full bit width is not smaller than the PLAIN
    /// column; the RLE runs of the indices can only make the encoded column smaller). Both
    /// terms only grow as entries are added, so building stops at the first entry that breaks
    /// the rule: a column of distinct values costs at most about a dictionary page of work.
    pub fn dictionary(&self) -> Option<Dictionary> {
        let n = self.len();
        // keys: a number's bits (sign-extended or zero-extended integers, a float's
        // `to_bits`), a string's bytes
        match self {
            Values::Bool(_) => None,
            Values::I8(v) => Dictionary::build(n, v.iter().map(|&x| x as u64), |_| 4, 4 * n),
            Values::I16(v) => Dictionary::build(n, v.iter().map(|&x| x as u64), |_| 4, 4 * n),
            Values::I32(v) => Dictionary::build(n, v.iter().map(|&x| x as u64), |_| 4, 4 * n),
            Values::I64(v) => Dictionary::build(n, v.iter().map(|&x| x as u64), |_| 8, 8 * n),
            Values::U8(v) => Dictionary::build(n, v.iter().map(|&x| u64::from(x)), |_| 4, 4 * n),
            Values::U16(v) => Dictionary::build(n, v.iter().map(|&x| u64::from(x)), |_| 4, 4 * n),
            Values::U32(v) => Dictionary::build(n, v.iter().map(|&x| u64::from(x)), |_| 4, 4 * n),
            Values::U64(v) => Dictionary::build(n, v.iter().copied(), |_| 8, 8 * n),
            Values::F32(v) => {
                Dictionary::build(n, v.iter().map(|x| u64::from(x.to_bits())), |_| 4, 4 * n)
            }
            Values::F64(v) => Dictionary::build(n, v.iter().map(|x| x.to_bits()), |_| 8, 8 * n),
            Values::Utf8(s) => Dictionary::build(
                n,
                s.iter().map(str::as_bytes),
                |k: &[u8]| 4 + k.len(),
                4 * n + s.data.len(),
            ),
        }
    }
}

/// Writes `columns` (all of the same length) as a Parquet file at `path`, with `metadata` as
/// the file's key-value metadata. Columns are checked before the file is created; an I/O
/// error names the path.
pub fn write_table(
    path: &Path,
    columns: &[Column<'_>],
    metadata: &[(String, String)],
) -> Result<(), ParquetError> {
    check(columns)?;
    let io_err = |source| ParquetError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = File::create(path).map_err(io_err)?;
    let mut w = BufWriter::with_capacity(1 << 16, file);
    write_checked(&mut w, columns, metadata).map_err(io_err)?;
    // BufWriter's drop would swallow the last write's error
    w.into_inner().map_err(|e| io_err(e.into_error()))?;
    Ok(())
}

/// [`write_table`] into any writer (returns the bytes written).
pub fn write_to<W: Write>(
    w: W,
    columns: &[Column<'_>],
    metadata: &[(String, String)],
) -> Result<u64, ParquetError> {
    check(columns)?;
    write_checked(w, columns, metadata).map_err(|source| ParquetError::Io {
        path: PathBuf::from("<writer>"),
        source,
    })
}

/// Equal lengths, and no string too long for a page.
fn check(columns: &[Column<'_>]) -> Result<(), ParquetError> {
    if let Some(first) = columns.first() {
        let expected = first.values.len();
        for c in columns {
            if c.values.len() != expected {
                return Err(ParquetError::Length {
                    column: c.name.to_string(),
                    len: c.values.len(),
                    first: first.name.to_string(),
                    expected,
                });
            }
            if let Values::Utf8(s) = c.values {
                if let Some(bytes) = s.iter().map(str::len).find(|&l| l > MAX_PAGE_BODY - 4) {
                    return Err(ParquetError::TooLarge {
                        column: c.name.to_string(),
                        bytes,
                    });
                }
            }
        }
    }
    Ok(())
}

fn write_checked<W: Write>(
    w: W,
    columns: &[Column<'_>],
    metadata: &[(String, String)],
) -> io::Result<u64> {
    let mut g = GroupWriter::start(w)?;
    g.write_group(columns)?;
    g.finish(metadata)
}

/// A version-1 page's definition levels (maximum level 1, so bit width 1): the 4-byte
/// little-endian length, then one RLE run of `n` 1s (header `n << 1` as a varint, the value in
/// one byte); nothing after the length for an empty page (a run is at least one value long).
pub fn definition_levels(n: usize, out: &mut Vec<u8>) {
    let mut run = Vec::with_capacity(11);
    if n > 0 {
        varint((n as u64) << 1, &mut run);
        run.push(1);
    }
    out.extend_from_slice(&(run.len() as u32).to_le_bytes());
    out.extend_from_slice(&run);
}

/// PageHeader of a DATA_PAGE of `num_values` values and `size` bytes, uncompressed, the
/// values in `encoding` (PLAIN or RLE_DICTIONARY), RLE definition and repetition levels.
pub fn page_header(num_values: i32, size: i32, encoding: i32) -> Vec<u8> {
    let mut t = Thrift::default();
    t.i32(1, code::DATA_PAGE);
    t.i32(2, size);
    t.i32(3, size);
    t.strukt(5, |t| {
        t.i32(1, num_values);
        t.i32(2, encoding);
        t.i32(3, code::RLE);
        t.i32(4, code::RLE);
    });
    t.finish()
}

/// PageHeader of a DICTIONARY_PAGE of `num_values` PLAIN entries and `size` bytes,
/// uncompressed.
pub fn dictionary_page_header(num_values: i32, size: i32) -> Vec<u8> {
    let mut t = Thrift::default();
    t.i32(1, code::DICTIONARY_PAGE);
    t.i32(2, size);
    t.i32(3, size);
    t.strukt(7, |t| {
        t.i32(1, num_values);
        t.i32(2, code::PLAIN);
    });
    t.finish()
}
