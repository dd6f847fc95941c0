//! A serde serializer that builds Python objects directly: the resolved scenario as the dict
//! `Resolved.table()` returns, without first building a `toml::Value` and converting that.
//!
//! It gives what `toml::Value::try_from` followed by a value-by-value conversion gave (the form
//! the Python side has always read), rule for rule: tables are dicts with their keys in
//! byte order (`toml::Table` is a `BTreeMap` here; a repeated key keeps its last value), a
//! field or map value of `None` is left out, `None` in an array, a unit and a unit struct
//! are errors, an unsigned integer above `i64::MAX` is an error, `f32` widens to `f64`, a
//! NaN loses its sign, a unit variant is its name and the other variants are one-key tables
//! `{variant: value}`. Keys are interned: ten thousand flows repeat the same few dozen.
//!
//! At 10,000 flows the two-step conversion took 1.66 s of the scenario's 2.7 s load.
//!
//! An outline ([`to_py_outline`], `Resolved.outline`) builds the same objects but only the
//! listed keys of the elements of the listed arrays: a run reads a flow's name and endpoints,
//! not its 30 TCP and queue parameters.

use std::borrow::Cow;
use std::fmt;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyList, PyString};
use serde::ser::{self, Serialize};

/// Why a value could not be converted.
#[derive(Debug)]
pub enum ToPyError {
    /// A `None` where a value must be: skipped by tables, an error anywhere else.
    UnsupportedNone,
    Python(PyErr),
    Message(String),
}

impl fmt::Display for ToPyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToPyError::UnsupportedNone => f.write_str("unsupported None value"),
            ToPyError::Python(e) => write!(f, "{e}"),
            ToPyError::Message(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for ToPyError {}

impl ser::Error for ToPyError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        ToPyError::Message(msg.to_string())
    }
}

impl From<PyErr> for ToPyError {
    fn from(e: PyErr) -> Self {
        ToPyError::Python(e)
    }
}

/// `value` as Python objects (see the module's doc for the rules).
pub fn to_py<'py, T: Serialize + ?Sized>(
    py: Python<'py>,
    value: &T,
) -> Result<Bound<'py, PyAny>, ToPyError> {
    value.serialize(ToPy {
        py,
        keep: Keep::All,
    })
}

/// [`to_py`] of a table in which each entry named in `fields` (an array of tables) keeps, of
/// each of its elements, only the listed keys: the same objects as `to_py` gives, less the
/// keys left out (which are not converted at all, so nothing they hold can fail).
pub fn to_py_outline<'py, T: Serialize + ?Sized>(
    py: Python<'py>,
    value: &T,
    fields: &[(String, Vec<String>)],
) -> Result<Bound<'py, PyAny>, ToPyError> {
    value.serialize(ToPy {
        py,
        keep: Keep::Outline(fields),
    })
}

/// What of a value to build.
#[derive(Clone, Copy)]
enum Keep<'k> {
    /// All of it.
    All,
    /// A table whose entries named here keep only the listed keys of their elements.
    Outline(&'k [(String, Vec<String>)]),
    /// An array whose elements keep only these keys.
    Elements(&'k [String]),
    /// A table that keeps only these keys.
    Keys(&'k [String]),
}

#[derive(Clone, Copy)]
struct ToPy<'py, 'k> {
    py: Python<'py>,
    keep: Keep<'k>,
}

type Out<'py> = Result<Bound<'py, PyAny>, ToPyError>;

impl<'py> ToPy<'py, '_> {
    fn int(self, v: i64) -> Out<'py> {
        Ok(v.into_pyobject(self.py)
            .map(Bound::into_any)
            .unwrap_or_else(|e| match e {}))
    }

    /// The same serializer building all of a value (a variant's contents).
    fn all(self) -> Self {
        ToPy {
            py: self.py,
            keep: Keep::All,
        }
    }

    /// `{variant: inner}`.
    fn variant(self, variant: &'static str, inner: Bound<'py, PyAny>) -> Out<'py> {
        let d = PyDict::new(self.py);
        d.set_item(PyString::intern(self.py, variant), inner)?;
        Ok(d.into_any())
    }
}

impl<'py, 'k> ser::Serializer for ToPy<'py, 'k> {
    type Ok = Bound<'py, PyAny>;
    type Error = ToPyError;
    type SerializeSeq = Seq<'py, 'k>;
    type SerializeTuple = Seq<'py, 'k>;
    type SerializeTupleStruct = Seq<'py, 'k>;
    type SerializeTupleVariant = Variant<Seq<'py, 'k>>;
    type SerializeMap = Map<'py, 'k>;
    type SerializeStruct = Map<'py, 'k>;
    type SerializeStructVariant = Variant<Map<'py, 'k>>;

    fn serialize_bool(self, v: bool) -> Out<'py> {
        Ok(PyBool::new(self.py, v).to_owned().into_any())
    }
    fn serialize_i8(self, v: i8) -> Out<'py> {
        self.int(v.into())
    }
    fn serialize_i16(self, v: i16) -> Out<'py> {
        self.int(v.into())
    }
    fn serialize_i32(self, v: i32) -> Out<'py> {
        self.int(v.into())
    }
    fn serialize_i64(self, v: i64) -> Out<'py> {
        self.int(v)
    }
    fn serialize_u8(self, v: u8) -> Out<'py> {
        self.int(v.into())
    }
    fn serialize_u16(self, v: u16) -> Out<'py> {
        self.int(v.into())
    }
    fn serialize_u32(self, v: u32) -> Out<'py> {
        self.int(v.into())
    }
    fn serialize_u64(self, v: u64) -> Out<'py> {
        match i64::try_from(v) {
            Ok(i) => self.int(i),
            Err(_) => Err(ser::Error::custom("u64 value was too large")),
        }
    }
    fn serialize_f32(self, v: f32) -> Out<'py> {
        self.serialize_f64(v.into())
    }
    fn serialize_f64(self, v: f64) -> Out<'py> {
        let v = if v.is_nan() { v.copysign(1.0) } else { v };
        Ok(PyFloat::new(self.py, v).into_any())
    }
    fn serialize_char(self, v: char) -> Out<'py> {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> Out<'py> {
        Ok(PyString::new(self.py, v).into_any())
    }
    fn serialize_bytes(self, v: &[u8]) -> Out<'py> {
        Ok(PyList::new(self.py, v.iter().map(|&b| i64::from(b)))?.into_any())
    }
    fn serialize_none(self) -> Out<'py> {
        Err(ToPyError::UnsupportedNone)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Out<'py> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Out<'py> {
        Err(ser::Error::custom("unsupported unit type"))
    }
    fn serialize_unit_struct(self, name: &'static str) -> Out<'py> {
        Err(ser::Error::custom(format!("unsupported {name} type")))
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Out<'py> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, v: &T) -> Out<'py> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        v: &T,
    ) -> Out<'py> {
        let inner = v.serialize(self.all())?;
        self.variant(variant, inner)
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Seq<'py, 'k>, ToPyError> {
        // the elements of an array of an outline keep only their listed keys
        let keep = match self.keep {
            Keep::Elements(keys) => Keep::Keys(keys),
            _ => Keep::All,
        };
        Ok(Seq {
            to: ToPy { py: self.py, keep },
            items: Vec::with_capacity(len.unwrap_or(0)),
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<Seq<'py, 'k>, ToPyError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        len: usize,
    ) -> Result<Seq<'py, 'k>, ToPyError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Variant<Seq<'py, 'k>>, ToPyError> {
        Ok(Variant {
            variant,
            inner: self.all().serialize_seq(Some(len))?,
        })
    }
    fn serialize_map(self, len: Option<usize>) -> Result<Map<'py, 'k>, ToPyError> {
        Ok(Map {
            to: self,
            entries: Vec::with_capacity(len.unwrap_or(0)),
            next_key: None,
        })
    }
    fn serialize_struct(self, _: &'static str, len: usize) -> Result<Map<'py, 'k>, ToPyError> {
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Variant<Map<'py, 'k>>, ToPyError> {
        Ok(Variant {
            variant,
            inner: self.all().serialize_map(Some(len))?,
        })
    }
}

/// An array being built.
pub struct Seq<'py, 'k> {
    to: ToPy<'py, 'k>,
    items: Vec<Bound<'py, PyAny>>,
}

impl<'py> Seq<'py, '_> {
    fn push<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), ToPyError> {
        self.items.push(v.serialize(self.to)?);
        Ok(())
    }
    fn finish(self) -> Out<'py> {
        Ok(PyList::new(self.to.py, self.items)?.into_any())
    }
}

/// serde's three array-like traits, all `Seq::push` per element and `Seq::finish` at the end.
macro_rules! seq_impl {
    ($($trait:ident :: $element:ident),*) => {$(
        impl<'py> ser::$trait for Seq<'py, '_> {
            type Ok = Bound<'py, PyAny>;
            type Error = ToPyError;
            fn $element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), ToPyError> {
                self.push(v)
            }
            fn end(self) -> Out<'py> {
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

/// A table being built: its entries are sorted by key when it ends.
pub struct Map<'py, 'k> {
    to: ToPy<'py, 'k>,
    entries: Vec<(Cow<'static, str>, Bound<'py, PyAny>)>,
    next_key: Option<String>,
}

impl<'py> Map<'py, '_> {
    /// Adds `key = v`, or nothing when `v` is `None` (or when an outline leaves `key` out).
    fn entry<T: Serialize + ?Sized>(
        &mut self,
        key: Cow<'static, str>,
        v: &T,
    ) -> Result<(), ToPyError> {
        let keep = match self.to.keep {
            Keep::Outline(fields) => fields
                .iter()
                .find(|(k, _)| *k == key)
                .map_or(Keep::All, |(_, keys)| Keep::Elements(keys)),
            Keep::Keys(keys) if !keys.iter().any(|k| *k == key) => return Ok(()),
            _ => Keep::All,
        };
        match v.serialize(ToPy {
            py: self.to.py,
            keep,
        }) {
            Ok(x) => self.entries.push((key, x)),
            Err(ToPyError::UnsupportedNone) => {}
            Err(e) => return Err(e),
        }
        Ok(())
    }

    fn finish(mut self) -> Out<'py> {
        // Stable: of two equal keys the later comes last and its value overwrites the first's.
        self.entries.sort_by(|a, b| a.0.cmp(&b.0));
        let d = PyDict::new(self.to.py);
        for (k, v) in self.entries {
            d.set_item(PyString::intern(self.to.py, &k), v)?;
        }
        Ok(d.into_any())
    }
}

impl<'py> ser::SerializeMap for Map<'py, '_> {
    type Ok = Bound<'py, PyAny>;
    type Error = ToPyError;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), ToPyError> {
        let k = key.serialize(self.to.all())?;
        let k = k
            .cast::<PyString>()
            .map_err(|_| ToPyError::Message("map key was not a string".to_string()))?;
        self.next_key = Some(k.to_str()?.to_owned());
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), ToPyError> {
        let key = self
            .next_key
            .take()
            .ok_or_else(|| ToPyError::Message("a map value before its key".to_string()))?;
        self.entry(Cow::Owned(key), v)
    }
    fn end(self) -> Out<'py> {
        self.finish()
    }
}

impl<'py> ser::SerializeStruct for Map<'py, '_> {
    type Ok = Bound<'py, PyAny>;
    type Error = ToPyError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        v: &T,
    ) -> Result<(), ToPyError> {
        self.entry(Cow::Borrowed(key), v)
    }
    fn end(self) -> Out<'py> {
        self.finish()
    }
}

/// A tuple or struct variant being built: `{variant: inner}` when it ends.
pub struct Variant<I> {
    variant: &'static str,
    inner: I,
}

impl<'py> ser::SerializeTupleVariant for Variant<Seq<'py, '_>> {
    type Ok = Bound<'py, PyAny>;
    type Error = ToPyError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), ToPyError> {
        self.inner.push(v)
    }
    fn end(self) -> Out<'py> {
        let to = self.inner.to;
        to.variant(self.variant, self.inner.finish()?)
    }
}

impl<'py> ser::SerializeStructVariant for Variant<Map<'py, '_>> {
    type Ok = Bound<'py, PyAny>;
    type Error = ToPyError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        v: &T,
    ) -> Result<(), ToPyError> {
        self.inner.entry(Cow::Borrowed(key), v)
    }
    fn end(self) -> Out<'py> {
        let to = self.inner.to;
        to.variant(self.variant, self.inner.finish()?)
    }
}
