//! The resolved scenario's canonical TOML (what its hash is computed from) written directly:
//! the same text as `toml::to_string(&toml::Value::try_from(value))`, byte for byte, without
//! the `toml::Value` tree and toml's document buffer in between.
//!
//! At 10,000 flows and 20,001 links (26.8 MB of TOML) the two-step form took 0.7-1.3 s
//! (building the value's B-trees 0.15-0.5 s, writing the document 0.35-0.5 s, freeing the
//! tree 0.2 s): a scenario's hash outlasted a short run. Here one serde pass builds a light
//! tree (see [`Tree`]: every scalar already formatted into one text buffer by toml's own
//! `ValueSerializer`, each key once, each table's order of keys sorted once per shape) and one
//! walk writes the document: 0.1-0.2 s.
//!
//! What `toml::Value::try_from` does is followed rule for rule (as `topy` does): tables keep
//! their keys in byte order (a repeated key keeps its last value), a field or map value of
//! `None` is left out (a `None` anywhere below it drops the whole field), a unit variant is
//! its name, other variants are one-key tables, `f32` widens to `f64`. What toml's document
//! writer does with that value is followed too: a table's scalars and inline arrays under its
//! header, then its sub-tables and arrays of tables (a non-empty array all of whose elements
//! are tables) under their own dotted headers in key order, depth first; a header is left out
//! for a table that has sub-tables but no value of its own; tables apart by one empty line.
//!
//! Whatever this writer does not reproduce itself it declines ([`canonical_toml`] returns
//! `None`) and the caller takes the two-step path, which then gives toml's own text or error:
//! a key that would need quotes, a table inside an inline array, an integer out of `i64`,
//! a unit value, a map key that is not a string.

use std::collections::HashMap;
use std::fmt;

use serde::ser::{self, Serialize};

/// `value` as canonical TOML, or `None` where the two-step path must decide (see the module's
/// doc).
pub fn canonical_toml<T: Serialize + ?Sized>(value: &T) -> Option<String> {
    let mut tree = Tree::default();
    let root = match value.serialize(Build { tree: &mut tree }) {
        Ok(Piece::Table(entries)) => entries,
        _ => return None,
    };
    let mut w = Writer {
        tree: &tree,
        out: String::with_capacity(tree.text.len() * 3),
        path: Vec::new(),
        first: true,
    };
    w.table(root, None);
    Some(w.out)
}

/// Why a value is not built: a `None` (left out by the enclosing table, as toml does), or
/// anything left to the two-step path.
#[derive(Debug)]
enum Decline {
    None,
    Other,
}

impl fmt::Display for Decline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("left to toml")
    }
}

impl std::error::Error for Decline {}

impl ser::Error for Decline {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Decline::Other
    }
}

/// `start..end` of one of the tree's vectors (32 bits: the tree's size is most of its cost).
#[derive(Clone, Copy)]
struct Span {
    start: u32,
    end: u32,
}

impl Span {
    /// `start..end`, or declined beyond 32 bits.
    fn new(start: usize, end: usize) -> Result<Span, Decline> {
        let at = |i: usize| u32::try_from(i).map_err(|_| Decline::Other);
        Ok(Span {
            start: at(start)?,
            end: at(end)?,
        })
    }

    fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// A value of the tree: a scalar's TOML text (a span of `Tree::text`), an inline array or an
/// array of tables (a span of `Tree::items`), a table (a span of `Tree::entries`).
#[derive(Clone, Copy)]
enum Piece {
    Scalar(Span),
    Array(Span),
    Table(Span),
    Tables(Span),
}

/// A table's entry: its key (a span of `Tree::keys`) and value.
#[derive(Clone, Copy)]
struct Entry {
    key: Span,
    piece: Piece,
}

impl Piece {
    fn is_table(&self) -> bool {
        matches!(self, Piece::Table(_) | Piece::Tables(_))
    }
}

/// The whole tree in a few vectors (an allocation per table or array, wider pieces, a copy of
/// each key and sorting every table were most of the time: 1.35 million entries at 10,000
/// flows). An array's items and a table's entries wait on a stack while they are built (serde
/// builds depth first, so the innermost open array or table owns the top of its stack) and
/// move to their place when it ends.
#[derive(Default)]
struct Tree {
    text: String,
    keys: String,
    items: Vec<Piece>,
    entries: Vec<Entry>,
    item_stack: Vec<Piece>,
    entry_stack: Vec<Entry>,
    /// Where a struct's field name already is in `keys`, by the name's address (direct-mapped):
    /// 10,000 flows repeat the same few dozen names.
    fields: Vec<(usize, Span)>,
    /// Where a key already is in `keys`, by a hash of its text (direct-mapped).
    texts: Vec<Span>,
    /// The order a table's keys sort in, by a hash of its keys (their places in `keys`) as they
    /// came: those keys and their sorted order (indices). 20,000 links' queues have the same
    /// keys in the same order, and sorting each was a fifth of the time.
    orders: HashMap<u64, (Vec<u32>, Vec<u32>)>,
}

/// Slots of `Tree::fields` and `Tree::texts`.
const SLOTS: usize = 1024;

impl Tree {
    /// [`Tree::key`] of a struct's field name (or a variant's).
    fn field(&mut self, key: &'static str) -> Result<Span, Decline> {
        if self.fields.is_empty() {
            self.fields = vec![(0, Span { start: 0, end: 0 }); SLOTS];
        }
        let address = key.as_ptr() as usize;
        let slot = ((address >> 3) ^ (address >> 13)) % SLOTS;
        let (at, span) = self.fields[slot];
        if at == address && span.range().len() == key.len() {
            return Ok(span);
        }
        let span = self.key(key)?;
        self.fields[slot] = (address, span);
        Ok(span)
    }

    /// `key`'s place in the keys (added once, mostly), if TOML writes it as it is
    /// (toml_writer's bare keys); the two-step path quotes the others.
    fn key(&mut self, key: &str) -> Result<Span, Decline> {
        if self.texts.is_empty() {
            self.texts = vec![Span { start: 0, end: 0 }; SLOTS];
        }
        let slot = (fnv(key.bytes().map(u64::from)) as usize) % SLOTS;
        let span = self.texts[slot];
        if !key.is_empty() && self.key_text(span) == key {
            return Ok(span);
        }
        let bare = !key.is_empty()
            && key
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if !bare {
            return Err(Decline::Other);
        }
        let start = self.keys.len();
        self.keys.push_str(key);
        let span = Span::new(start, self.keys.len())?;
        self.texts[slot] = span;
        Ok(span)
    }

    fn key_text(&self, key: Span) -> &str {
        &self.keys[key.range()]
    }

    /// Whether two keys are the same.
    fn same(&self, a: Span, b: Span) -> bool {
        a.start == b.start || self.key_text(a) == self.key_text(b)
    }

    /// How two keys compare, byte by byte (toml's tables are B-trees of strings): the first
    /// eight bytes of each decide most comparisons.
    fn order(&self, a: Span, b: Span) -> std::cmp::Ordering {
        let (a, b) = (
            &self.keys.as_bytes()[a.range()],
            &self.keys.as_bytes()[b.range()],
        );
        prefix(a).cmp(&prefix(b)).then_with(|| a.cmp(b))
    }
}

/// FNV-1a of a sequence of numbers.
fn fnv(values: impl Iterator<Item = u64>) -> u64 {
    values.fold(0xcbf2_9ce4_8422_2325, |h, v| {
        (h ^ v).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The first eight bytes of `s` as a big-endian number (zeros after its end): in the same
/// order as the strings, or equal.
fn prefix(s: &[u8]) -> u64 {
    let mut p = 0;
    for (i, &b) in s.iter().take(8).enumerate() {
        p |= u64::from(b) << (56 - 8 * i);
    }
    p
}

/// Builds the tree, formatting scalars into its text.
struct Build<'t> {
    tree: &'t mut Tree,
}

type Out = Result<Piece, Decline>;

impl<'t> Build<'t> {
    /// A scalar written by toml's own value serializer.
    fn scalar(
        self,
        write: impl FnOnce(toml::ser::ValueSerializer<'_>) -> Result<&mut String, toml::ser::Error>,
    ) -> Out {
        let text = &mut self.tree.text;
        let start = text.len();
        write(toml::ser::ValueSerializer::new(text)).map_err(|_| Decline::Other)?;
        Ok(Piece::Scalar(Span::new(start, text.len())?))
    }

    fn int(self, v: i64) -> Out {
        self.scalar(|s| ser::Serializer::serialize_i64(s, v))
    }

    /// `{variant: inner}`.
    fn variant(self, variant: &'static str, inner: Piece) -> Out {
        let key = self.tree.field(variant)?;
        let start = self.tree.entries.len();
        self.tree.entries.push(Entry { key, piece: inner });
        Ok(Piece::Table(Span::new(start, start + 1)?))
    }

    fn seq(self) -> Seq<'t> {
        Seq {
            base: self.tree.item_stack.len(),
            tree: self.tree,
        }
    }

    fn map(self) -> Map<'t> {
        Map {
            base: self.tree.entry_stack.len(),
            tree: self.tree,
            next_key: None,
        }
    }
}

impl<'t> ser::Serializer for Build<'t> {
    type Ok = Piece;
    type Error = Decline;
    type SerializeSeq = Seq<'t>;
    type SerializeTuple = Seq<'t>;
    type SerializeTupleStruct = Seq<'t>;
    type SerializeTupleVariant = Variant<Seq<'t>>;
    type SerializeMap = Map<'t>;
    type SerializeStruct = Map<'t>;
    type SerializeStructVariant = Variant<Map<'t>>;

    fn serialize_bool(self, v: bool) -> Out {
        self.scalar(|s| ser::Serializer::serialize_bool(s, v))
    }
    fn serialize_i8(self, v: i8) -> Out {
        self.int(v.into())
    }
    fn serialize_i16(self, v: i16) -> Out {
        self.int(v.into())
    }
    fn serialize_i32(self, v: i32) -> Out {
        self.int(v.into())
    }
    fn serialize_i64(self, v: i64) -> Out {
        self.int(v)
    }
    fn serialize_u8(self, v: u8) -> Out {
        self.int(v.into())
    }
    fn serialize_u16(self, v: u16) -> Out {
        self.int(v.into())
    }
    fn serialize_u32(self, v: u32) -> Out {
        self.int(v.into())
    }
    fn serialize_u64(self, v: u64) -> Out {
        self.int(i64::try_from(v).map_err(|_| Decline::Other)?)
    }
    fn serialize_f32(self, v: f32) -> Out {
        self.serialize_f64(v.into())
    }
    fn serialize_f64(self, v: f64) -> Out {
        // toml's serializer drops a NaN's sign itself
        self.scalar(|s| ser::Serializer::serialize_f64(s, v))
    }
    fn serialize_char(self, v: char) -> Out {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> Out {
        self.scalar(|s| ser::Serializer::serialize_str(s, v))
    }
    fn serialize_bytes(self, v: &[u8]) -> Out {
        let mut seq = self.seq();
        for b in v {
            seq.push(b)?;
        }
        seq.finish()
    }
    fn serialize_none(self) -> Out {
        Err(Decline::None)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Out {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Out {
        Err(Decline::Other)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Out {
        Err(Decline::Other)
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Out {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, v: &T) -> Out {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        name: &'static str,
        v: &T,
    ) -> Out {
        let inner = v.serialize(Build {
            tree: &mut *self.tree,
        })?;
        self.variant(name, inner)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Seq<'t>, Decline> {
        Ok(self.seq())
    }
    fn serialize_tuple(self, _: usize) -> Result<Seq<'t>, Decline> {
        Ok(self.seq())
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Seq<'t>, Decline> {
        Ok(self.seq())
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        name: &'static str,
        _: usize,
    ) -> Result<Variant<Seq<'t>>, Decline> {
        Ok(Variant {
            name,
            inner: self.seq(),
        })
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Map<'t>, Decline> {
        Ok(self.map())
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Map<'t>, Decline> {
        Ok(self.map())
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        name: &'static str,
        _: usize,
    ) -> Result<Variant<Map<'t>>, Decline> {
        Ok(Variant {
            name,
            inner: self.map(),
        })
    }
}

/// An array being built: its items are `tree.item_stack[base..]`.
struct Seq<'t> {
    tree: &'t mut Tree,
    base: usize,
}

impl Seq<'_> {
    fn push<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Decline> {
        let p = v.serialize(Build {
            tree: &mut *self.tree,
        })?;
        self.tree.item_stack.push(p);
        Ok(())
    }

    /// An array of tables if it has items and all are tables; an inline array if none is
    /// (one with a table among other values would need inline tables: declined).
    fn finish(&mut self) -> Out {
        let tree = &mut *self.tree;
        let items = &tree.item_stack[self.base..];
        let tables = !items.is_empty() && items.iter().all(|p| matches!(p, Piece::Table(_)));
        if !tables && items.iter().any(Piece::is_table) {
            return Err(Decline::Other);
        }
        let start = tree.items.len();
        tree.items.extend(tree.item_stack.drain(self.base..));
        let span = Span::new(start, tree.items.len())?;
        Ok(if tables {
            Piece::Tables(span)
        } else {
            Piece::Array(span)
        })
    }
}

/// serde's three array-like traits, all `Seq::push` per element and `Seq::finish` at the end.
macro_rules! seq_impl {
    ($($trait:ident :: $element:ident),*) => {$(
        impl ser::$trait for Seq<'_> {
            type Ok = Piece;
            type Error = Decline;
            fn $element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Decline> {
                self.push(v)
            }
            fn end(mut self) -> Out {
                self.finish()
            }
        }
    )*};
}

seq_impl!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field
);

/// A table being built: its entries are `tree.entry_stack[base..]`, sorted by key when it
/// ends.
struct Map<'t> {
    tree: &'t mut Tree,
    base: usize,
    next_key: Option<Span>,
}

impl Map<'_> {
    /// Adds `key = v`, or nothing when `v` is (or holds) `None`.
    fn entry<T: Serialize + ?Sized>(&mut self, key: Span, v: &T) -> Result<(), Decline> {
        let (items, entries) = (self.tree.item_stack.len(), self.tree.entry_stack.len());
        match v.serialize(Build {
            tree: &mut *self.tree,
        }) {
            Ok(piece) => self.tree.entry_stack.push(Entry { key, piece }),
            Err(Decline::None) => {
                // what the arrays and tables left unfinished by the `None` had stacked
                self.tree.item_stack.truncate(items);
                self.tree.entry_stack.truncate(entries);
            }
            Err(e) => return Err(e),
        }
        Ok(())
    }

    fn finish(&mut self) -> Out {
        let tree = &mut *self.tree;
        let mut orders = std::mem::take(&mut tree.orders);
        let table = &tree.entry_stack[self.base..];
        let sorted: &[u32] = match table.len() {
            0 => &[],
            _ => {
                let shape = fnv(table.iter().map(|e| u64::from(e.key.start)));
                let (keys, sorted) = orders.entry(shape).or_default();
                if !keys.iter().copied().eq(table.iter().map(|e| e.key.start)) {
                    *keys = table.iter().map(|e| e.key.start).collect();
                    *sorted = (0..keys.len() as u32).collect();
                    // stable: of equal keys the last one added is the value the table keeps
                    sorted
                        .sort_by(|&a, &b| tree.order(table[a as usize].key, table[b as usize].key));
                }
                sorted
            }
        };
        let start = tree.entries.len();
        for &i in sorted {
            let e = tree.entry_stack[self.base + i as usize];
            match tree.entries[start..].last() {
                Some(last) if tree.same(last.key, e.key) => *tree.entries.last_mut().unwrap() = e,
                _ => tree.entries.push(e),
            }
        }
        tree.entry_stack.truncate(self.base);
        tree.orders = orders;
        Ok(Piece::Table(Span::new(start, tree.entries.len())?))
    }
}

impl ser::SerializeMap for Map<'_> {
    type Ok = Piece;
    type Error = Decline;
    /// A key is what toml writes as a plain string (a string, a char, a unit variant, and those
    /// inside `Some` or a newtype): written as a value, then unquoted; anything else declined.
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Decline> {
        let tree = &mut *self.tree;
        let start = tree.text.len();
        let Ok(Piece::Scalar(text)) = key.serialize(Build { tree: &mut *tree }) else {
            return Err(Decline::Other);
        };
        let quoted = tree.text[text.range()].to_owned();
        tree.text.truncate(start);
        let bare = quoted.strip_prefix('"').and_then(|q| q.strip_suffix('"'));
        self.next_key = Some(tree.key(bare.ok_or(Decline::Other)?)?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Decline> {
        let key = self.next_key.take().ok_or(Decline::Other)?;
        self.entry(key, v)
    }
    fn end(mut self) -> Out {
        self.finish()
    }
}

impl ser::SerializeStruct for Map<'_> {
    type Ok = Piece;
    type Error = Decline;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        v: &T,
    ) -> Result<(), Decline> {
        let key = self.tree.field(key)?;
        self.entry(key, v)
    }
    fn end(mut self) -> Out {
        self.finish()
    }
}

/// A tuple or struct variant being built: `{variant: inner}` when it ends.
struct Variant<I> {
    name: &'static str,
    inner: I,
}

impl ser::SerializeTupleVariant for Variant<Seq<'_>> {
    type Ok = Piece;
    type Error = Decline;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Decline> {
        self.inner.push(v)
    }
    fn end(mut self) -> Out {
        let inner = self.inner.finish()?;
        Build {
            tree: self.inner.tree,
        }
        .variant(self.name, inner)
    }
}

impl ser::SerializeStructVariant for Variant<Map<'_>> {
    type Ok = Piece;
    type Error = Decline;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        v: &T,
    ) -> Result<(), Decline> {
        let key = self.inner.tree.field(key)?;
        self.inner.entry(key, v)
    }
    fn end(mut self) -> Out {
        let inner = self.inner.finish()?;
        Build {
            tree: self.inner.tree,
        }
        .variant(self.name, inner)
    }
}

/// Writes the tree as toml's document writer does.
struct Writer<'a> {
    tree: &'a Tree,
    out: String,
    /// The dotted key of the table being written.
    path: Vec<&'a str>,
    first: bool,
}

impl<'a> Writer<'a> {
    /// The table of `entries`: its header (`None` for the root, else whether it is an element
    /// of an array of tables) and its values, then its sub-tables. toml leaves out the root
    /// when it has no values, and a table's header when the table has sub-tables but no values.
    fn table(&mut self, entries: Span, header: Option<bool>) {
        let tree = self.tree;
        let entries = &tree.entries[entries.range()];
        let values = entries.iter().any(|e| !e.piece.is_table());
        let children = entries.iter().any(|e| e.piece.is_table());
        let shown = match header {
            None => values,
            Some(array) => array || values || !children,
        };
        if shown {
            if !self.first {
                self.out.push('\n');
            }
            self.first = false;
            if let Some(array) = header {
                self.out.push_str(if array { "[[" } else { "[" });
                for (i, k) in self.path.iter().enumerate() {
                    if i > 0 {
                        self.out.push('.');
                    }
                    self.out.push_str(k);
                }
                self.out.push_str(if array { "]]\n" } else { "]\n" });
            }
            for e in entries.iter().filter(|e| !e.piece.is_table()) {
                self.out.push_str(tree.key_text(e.key));
                self.out.push_str(" = ");
                self.value(e.piece);
                self.out.push('\n');
            }
        }
        for e in entries {
            match e.piece {
                Piece::Table(sub) => {
                    self.path.push(tree.key_text(e.key));
                    self.table(sub, Some(false));
                    self.path.pop();
                }
                Piece::Tables(subs) => {
                    self.path.push(tree.key_text(e.key));
                    for sub in &tree.items[subs.range()] {
                        if let Piece::Table(sub) = *sub {
                            self.table(sub, Some(true));
                        }
                    }
                    self.path.pop();
                }
                Piece::Scalar(_) | Piece::Array(_) => {}
            }
        }
    }

    /// A scalar or an inline array (`[a, b]`).
    fn value(&mut self, p: Piece) {
        let tree = self.tree;
        match p {
            Piece::Scalar(text) => self.out.push_str(&tree.text[text.range()]),
            Piece::Array(items) => {
                self.out.push('[');
                for (i, &x) in tree.items[items.range()].iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    self.value(x);
                }
                self.out.push(']');
            }
            Piece::Table(_) | Piece::Tables(_) => unreachable!("tables are not inline values"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::canonical_toml;
    use std::collections::BTreeMap;

    fn two_step<T: serde::Serialize>(v: &T) -> Option<String> {
        toml::to_string(&toml::Value::try_from(v).ok()?).ok()
    }

    #[derive(serde::Serialize)]
    enum E {
        Unit,
        New(u8),
        Tup(u8, String),
        Rec { z: f32, a: Option<u8> },
    }

    #[derive(serde::Serialize)]
    struct Inner {
        b: Vec<Vec<i32>>,
        a: String,
        e: E,
        none: Option<u8>,
        nested_none: Vec<Option<u8>>,
    }

    #[derive(serde::Serialize)]
    struct Top {
        z: f64,
        tables: Vec<Inner>,
        empty: Vec<Inner>,
        only_children: BTreeMap<String, Inner>,
        empty_table: BTreeMap<String, u8>,
        kinds: Vec<E>,
        unit: E,
        text: Vec<String>,
        nan: f64,
        ch: char,
        bytes: serde_bytes_like::Bytes,
        a: i64,
        /// tables of one shape, then others with the same first key and length
        shapes: Shapes,
    }

    struct Shapes(Vec<Vec<(&'static str, u8)>>);

    impl serde::Serialize for Shapes {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.collect_seq(self.0.iter().map(|v| Pairs(v)))
        }
    }

    /// A map of the pairs, in their order (a key may repeat: the last value stays).
    struct Pairs<'a>(&'a [(&'static str, u8)]);

    impl serde::Serialize for Pairs<'_> {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            use serde::ser::SerializeMap;
            let mut m = s.serialize_map(Some(self.0.len()))?;
            for (k, v) in self.0 {
                m.serialize_entry(k, v)?;
            }
            m.end()
        }
    }

    mod serde_bytes_like {
        pub struct Bytes(pub Vec<u8>);
        impl serde::Serialize for Bytes {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_bytes(&self.0)
            }
        }
    }

    fn inner(a: &str) -> Inner {
        Inner {
            b: vec![vec![1, -2], vec![]],
            a: a.to_string(),
            e: E::Rec { z: 0.1, a: Some(3) },
            none: None,
            nested_none: vec![Some(1), None],
        }
    }

    #[test]
    fn the_same_text_as_toml_through_a_value() {
        let mut only_children = BTreeMap::new();
        only_children.insert("k-1".to_string(), inner("x"));
        let top = Top {
            z: -0.0,
            tables: vec![
                inner("quote\"d"),
                inner("line\nbreak"),
                inner("tab\tand 'single'"),
            ],
            empty: vec![],
            only_children,
            empty_table: BTreeMap::new(),
            kinds: vec![E::New(7), E::Tup(1, "t".into()), E::Rec { z: 2.5, a: None }],
            unit: E::Unit,
            text: vec!["é".into(), "back\\slash".into(), String::new()],
            nan: -f64::NAN,
            ch: 'c',
            bytes: serde_bytes_like::Bytes(vec![0, 255]),
            a: i64::MIN,
            shapes: Shapes(vec![
                vec![("z", 1), ("b", 2), ("a", 3)],
                vec![("z", 1), ("b", 2), ("a", 3)],
                vec![("z", 1), ("a", 2), ("b", 3)],
                vec![("z", 1), ("b", 2), ("z", 3)],
                vec![("z", 1), ("b", 2), ("a", 3)],
                vec![("b_1", 1), ("b-1", 2), ("B", 3), ("b", 4), ("ba", 5)],
                vec![("long_key_a", 1), ("long_key", 2), ("long_key_", 3)],
            ]),
        };
        let got = canonical_toml(&top).expect("written");
        assert_eq!(Some(got), two_step(&top));
    }

    #[test]
    fn map_keys_of_every_kind_toml_takes() {
        #[derive(serde::Serialize, PartialEq, Eq, PartialOrd, Ord)]
        enum K {
            Alpha,
            Beta,
        }
        let chars: BTreeMap<char, u8> = [('b', 1), ('a', 2)].into();
        let variants: BTreeMap<K, u8> = [(K::Beta, 1), (K::Alpha, 2)].into();
        let some: BTreeMap<Option<&str>, u8> = [(Some("x-y"), 1)].into();
        let ints: BTreeMap<u8, u8> = [(1, 1)].into();
        assert!(canonical_toml(&chars).is_some());
        assert_eq!(canonical_toml(&chars), two_step(&chars));
        assert!(canonical_toml(&variants).is_some());
        assert_eq!(canonical_toml(&variants), two_step(&variants));
        assert!(canonical_toml(&some).is_some());
        assert_eq!(canonical_toml(&some), two_step(&some));
        // left to toml, whatever it makes of them
        assert!(canonical_toml(&ints).is_none());
    }

    #[test]
    fn declines_what_it_does_not_write_itself() {
        let mut quoted = BTreeMap::new();
        quoted.insert("needs quotes".to_string(), 1);
        assert!(canonical_toml(&quoted).is_none());
        assert!(two_step(&quoted).is_some());
        #[derive(serde::Serialize)]
        struct Big {
            v: u64,
        }
        assert!(canonical_toml(&Big { v: u64::MAX }).is_none());
        assert!(two_step(&Big { v: u64::MAX }).is_none());
        #[derive(serde::Serialize)]
        struct Mixed {
            v: Vec<E>,
        }
        // a table among other values in an array: inline tables, left to toml
        let m = Mixed {
            v: vec![E::Unit, E::New(1)],
        };
        assert!(canonical_toml(&m).is_none());
        assert!(two_step(&m).is_some());
    }
}
