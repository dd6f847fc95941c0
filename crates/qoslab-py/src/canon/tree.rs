//! The light tree a serde pass builds (see the parent module): scalars already formatted
//! into one text buffer, keys interned once, a table's entries as spans of a few vectors.

use std::collections::HashMap;

use super::Decline;

/// `start..end` of one of the tree's vectors (32 bits: the tree's size is most of its cost).
#[derive(Clone, Copy)]
pub(super) struct Span {
    pub(super) start: u32,
    pub(super) end: u32,
}

impl Span {
    /// `start..end`, or declined beyond 32 bits.
    pub(super) fn new(start: usize, end: usize) -> Result<Span, Decline> {
        let at = |i: usize| u32::try_from(i).map_err(|_| Decline::Other);
        Ok(Span {
            start: at(start)?,
            end: at(end)?,
        })
    }

    pub(super) fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// A value of the tree: a scalar's TOML text (a span of `Tree::text`), an inline array or an
/// array of tables (a span of `Tree::items`), a table (a span of `Tree::entries`).
#[derive(Clone, Copy)]
pub(super) enum Piece {
    Scalar(Span),
    Array(Span),
    Table(Span),
    Tables(Span),
}

/// A table's entry: its key (a span of `Tree::keys`) and value.
#[derive(Clone, Copy)]
pub(super) struct Entry {
    pub(super) key: Span,
    pub(super) piece: Piece,
}

impl Piece {
    pub(super) fn is_table(&self) -> bool {
        matches!(self, Piece::Table(_) | Piece::Tables(_))
    }
}

/// The whole tree in a few vectors (an allocation per table or array, wider pieces, a copy of
/// each key and sorting every table were most of the time: 1.35 million entries at 10,000
/// flows). An array's items and a table's entries wait on a stack while they are built (serde
/// builds depth first, so the innermost open array or table owns the top of its stack) and
/// move to their place when it ends.
#[derive(Default)]
pub(super) struct Tree {
    pub(super) text: String,
    keys: String,
    pub(super) items: Vec<Piece>,
    pub(super) entries: Vec<Entry>,
    pub(super) item_stack: Vec<Piece>,
    pub(super) entry_stack: Vec<Entry>,
    /// Where a struct's field name already is in `keys`, by the name's address (direct-mapped):
    /// 10,000 flows repeat the same few dozen names.
    fields: Vec<(usize, Span)>,
    /// Where a key already is in `keys`, by a hash of its text (direct-mapped).
    texts: Vec<Span>,
    /// The order a table's keys sort in, by a hash of its keys (their places in `keys`) as they
    /// came: those keys and their sorted order (indices). 20,000 links' queues have the same
    /// keys in the same order, and sorting each was a fifth of the time.
    pub(super) orders: HashMap<u64, (Vec<u32>, Vec<u32>)>,
}

/// Slots of `Tree::fields` and `Tree::texts`.
const SLOTS: usize = 1024;

impl Tree {
    /// [`Tree::key`] of a struct's field name (or a variant's).
    pub(super) fn field(&mut self, key: &'static str) -> Result<Span, Decline> {
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
    pub(super) fn key(&mut self, key: &str) -> Result<Span, Decline> {
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

    pub(super) fn key_text(&self, key: Span) -> &str {
        &self.keys[key.range()]
    }

    /// Whether two keys are the same.
    pub(super) fn same(&self, a: Span, b: Span) -> bool {
        a.start == b.start || self.key_text(a) == self.key_text(b)
    }

    /// How two keys compare, byte by byte (toml's tables are B-trees of strings): the first
    /// eight bytes of each decide most comparisons.
    pub(super) fn order(&self, a: Span, b: Span) -> std::cmp::Ordering {
        let (a, b) = (
            &self.keys.as_bytes()[a.range()],
            &self.keys.as_bytes()[b.range()],
        );
        prefix(a).cmp(&prefix(b)).then_with(|| a.cmp(b))
    }
}

/// FNV-1a of a sequence of numbers.
pub(super) fn fnv(values: impl Iterator<Item = u64>) -> u64 {
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
