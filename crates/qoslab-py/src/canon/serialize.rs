//! The serde pass that builds the [`Tree`]: a `Serializer` following `toml::Value::try_from`
//! rule for rule (the parent module lists them), each scalar formatted by toml's own
//! `ValueSerializer`.

use serde::ser::{self, Serialize};

use super::tree::{fnv, Entry, Piece, Span, Tree};
use super::Decline;

/// Builds the tree, formatting scalars into its text.
pub(super) struct Build<'t> {
    pub(super) tree: &'t mut Tree,
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
pub(super) struct Seq<'t> {
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
pub(super) struct Map<'t> {
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
pub(super) struct Variant<I> {
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
