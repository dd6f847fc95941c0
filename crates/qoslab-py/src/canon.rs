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
//!
//! The jobs, one module each: [`tree`] (the light tree: spans, interned keys, the sort order
//! of each shape of table), [`serialize`] (the serde pass that builds it), [`document`] (the
//! walk that writes it).

mod document;
mod serialize;
mod tree;

use std::fmt;

use serde::ser::{self, Serialize};

use document::Writer;
use serialize::Build;
use tree::{Piece, Tree};

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
