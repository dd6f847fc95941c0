//! A Parquet file written a row group at a time ([`GroupWriter`]), and its footer.
//!
//! [`super::write_table`] writes one row group; a table too long to hold in memory (the
//! finished transfers of a long run of arrivals, read back from their spill file) is written
//! as one row group per chunk, each laid out as a whole table is, the footer listing them all.

use std::io::{self, Write};

use super::{
    code, definition_levels, dictionary_page_header, hybrid, page_header, Annotation, Column,
    ParquetError, SchemaType, Thrift, CREATED_BY, MAGIC,
};

/// A writer that counts the bytes written (the offsets the footer records).
struct Counting<W> {
    inner: W,
    pos: u64,
}

impl<W: Write> Counting<W> {
    fn put(&mut self, b: &[u8]) -> io::Result<()> {
        self.inner.write_all(b)?;
        self.pos += b.len() as u64;
        Ok(())
    }
}

/// What the footer says of one column chunk.
struct ChunkMeta {
    /// Where the chunk starts: its dictionary page if any, else its first data page.
    start: i64,
    dictionary: bool,
    data_page_offset: i64,
    bytes: i64,
}

/// A Parquet file being written: its magic, then row groups ([`GroupWriter::group`]) of the
/// same columns (names and types), then the footer ([`GroupWriter::finish`]).
pub struct GroupWriter<W: Write> {
    w: Counting<W>,
    schema: Vec<(String, SchemaType)>,
    groups: Vec<(i64, Vec<ChunkMeta>)>,
}

impl<W: Write> GroupWriter<W> {
    /// Writes the magic.
    pub fn start(w: W) -> io::Result<Self> {
        let mut w = Counting { inner: w, pos: 0 };
        w.put(MAGIC)?;
        Ok(GroupWriter {
            w,
            schema: Vec::new(),
            groups: Vec::new(),
        })
    }

    /// Writes `columns` (of equal lengths) as the next row group. The first group fixes the
    /// schema; a later one with other names or types is an error (nothing of it written).
    pub fn group(&mut self, columns: &[Column<'_>]) -> Result<(), ParquetError> {
        super::check(columns)?;
        let schema: Vec<(String, SchemaType)> = columns
            .iter()
            .map(|c| (c.name.to_string(), c.values.schema_type()))
            .collect();
        if !self.groups.is_empty() && schema != self.schema {
            return Err(ParquetError::Schema {
                group: self.groups.len(),
            });
        }
        self.write_group(columns)
            .map_err(|source| ParquetError::Io {
                path: "<row group>".into(),
                source,
            })
    }

    /// [`GroupWriter::group`] of columns already checked.
    pub(super) fn write_group(&mut self, columns: &[Column<'_>]) -> io::Result<()> {
        if self.groups.is_empty() {
            self.schema = columns
                .iter()
                .map(|c| (c.name.to_string(), c.values.schema_type()))
                .collect();
        }
        let w = &mut self.w;
        let rows = columns.first().map_or(0, |c| c.values.len());
        let mut body = Vec::new();
        let mut chunks = Vec::with_capacity(columns.len());
        // checked: a page is ~PAGE_BYTES (its indices fewer), a dictionary at most
        // DICT_PAGE_BYTES plus one entry, or one string of at most MAX_PAGE_BODY bytes
        let size = |body: &Vec<u8>| {
            i32::try_from(body.len()).map_err(|_| io::Error::other("page too large"))
        };
        for c in columns {
            let start = w.pos;
            let dictionary = c.values.dictionary();
            if let Some(d) = &dictionary {
                body.clear();
                c.values.plain(d.first_rows.iter().copied(), &mut body);
                w.put(&dictionary_page_header(
                    d.first_rows.len() as i32,
                    size(&body)?,
                ))?;
                w.put(&body)?;
            }
            let data_page_offset = w.pos;
            for (a, b) in c.values.pages() {
                body.clear();
                definition_levels(b - a, &mut body);
                let encoding = match &dictionary {
                    Some(d) => {
                        body.push(d.bit_width());
                        hybrid(&d.indices[a..b], d.bit_width(), &mut body);
                        code::RLE_DICTIONARY
                    }
                    None => {
                        c.values.plain(a..b, &mut body);
                        code::PLAIN
                    }
                };
                w.put(&page_header((b - a) as i32, size(&body)?, encoding))?;
                w.put(&body)?;
            }
            chunks.push(ChunkMeta {
                start: start as i64,
                dictionary: dictionary.is_some(),
                data_page_offset: data_page_offset as i64,
                bytes: (w.pos - start) as i64,
            });
        }
        self.groups.push((rows as i64, chunks));
        Ok(())
    }

    /// Writes the footer (with `metadata` as the file's key-value metadata) and flushes;
    /// returns the bytes written. A file with no group has an empty schema and no rows.
    pub fn finish(mut self, metadata: &[(String, String)]) -> io::Result<u64> {
        let footer = file_metadata(&self.schema, &self.groups, metadata);
        self.w.put(&footer)?;
        self.w.put(&(footer.len() as u32).to_le_bytes())?;
        self.w.put(MAGIC)?;
        self.w.inner.flush()?;
        Ok(self.w.pos)
    }
}

/// FileMetaData: the schema, every row group's column chunks, the key-value metadata.
fn file_metadata(
    schema: &[(String, SchemaType)],
    groups: &[(i64, Vec<ChunkMeta>)],
    metadata: &[(String, String)],
) -> Vec<u8> {
    let mut t = Thrift::default();
    t.i32(1, 2);
    t.list_of_structs(2, schema.len() + 1, |t, i| {
        if i == 0 {
            t.i32(3, code::REQUIRED);
            t.binary(4, b"schema");
            t.i32(5, schema.len() as i32);
            return;
        }
        let (name, ty) = &schema[i - 1];
        t.i32(1, ty.physical);
        t.i32(3, code::OPTIONAL);
        t.binary(4, name.as_bytes());
        match ty.annotation {
            None => {}
            Some(Annotation::String) => {
                t.i32(6, code::UTF8);
                t.strukt(10, |t| t.strukt(code::LOGICAL_STRING, |_| {}));
            }
            Some(Annotation::Integer { bits, signed }) => {
                let converted = match (bits, signed) {
                    (8, true) => code::INT_8,
                    (16, true) => code::INT_16,
                    (8, false) => code::UINT_8,
                    (16, false) => code::UINT_16,
                    (32, false) => code::UINT_32,
                    _ => code::UINT_64,
                };
                t.i32(6, converted);
                t.strukt(10, |t| {
                    t.strukt(code::LOGICAL_INTEGER, |t| {
                        t.i8(1, bits);
                        t.bool(2, signed);
                    })
                });
            }
        }
    });
    // a file of no group is a table of no rows (written as one empty group, as before)
    let empty = [(0i64, Vec::new())];
    let groups = if groups.is_empty() {
        &empty[..]
    } else {
        groups
    };
    t.i64(3, groups.iter().map(|g| g.0).sum());
    t.list_of_structs(4, groups.len(), |t, g| {
        let (rows, chunks) = (&groups[g].0, &groups[g].1);
        let total: i64 = chunks.iter().map(|c| c.bytes).sum();
        t.list_of_structs(1, schema.len(), |t, i| {
            let ((name, ty), m) = (&schema[i], &chunks[i]);
            t.i64(2, 0); // file_offset: deprecated, required; 0 as pyarrow writes it
            t.strukt(3, |t| {
                t.i32(1, ty.physical);
                // PLAIN: the values or the dictionary page; RLE: the levels
                if m.dictionary {
                    t.list_i32(2, &[code::PLAIN, code::RLE, code::RLE_DICTIONARY]);
                } else {
                    t.list_i32(2, &[code::PLAIN, code::RLE]);
                }
                t.list_binary(3, &[name.as_bytes()]);
                t.i32(4, code::UNCOMPRESSED);
                t.i64(5, *rows);
                t.i64(6, m.bytes);
                t.i64(7, m.bytes);
                t.i64(9, m.data_page_offset);
                if m.dictionary {
                    t.i64(11, m.start);
                }
            });
        });
        t.i64(2, total);
        t.i64(3, *rows);
        t.i64(5, chunks.first().map_or(MAGIC.len() as i64, |m| m.start));
        t.i64(6, total);
        t.i16(7, g as i16);
    });
    if !metadata.is_empty() {
        t.list_of_structs(5, metadata.len(), |t, i| {
            t.binary(1, metadata[i].0.as_bytes());
            t.binary(2, metadata[i].1.as_bytes());
        });
    }
    t.binary(6, CREATED_BY.as_bytes());
    t.finish()
}
