//! Python tables (nested dicts and lists) to TOML and back: the one input form the core
//! parses, and the scenario schema's values as Python objects.

use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple,
};

use crate::ScenarioError;

pub(crate) fn toml_to_py<'py>(py: Python<'py>, v: &toml::Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        toml::Value::String(s) => PyString::new(py, s).into_any(),
        toml::Value::Integer(i) => i.into_pyobject(py)?.into_any(),
        toml::Value::Float(f) => PyFloat::new(py, *f).into_any(),
        toml::Value::Boolean(b) => PyBool::new(py, *b).to_owned().into_any(),
        toml::Value::Datetime(d) => PyString::new(py, &d.to_string()).into_any(),
        toml::Value::Array(a) => {
            let l = PyList::empty(py);
            for x in a {
                l.append(toml_to_py(py, x)?)?;
            }
            l.into_any()
        }
        toml::Value::Table(t) => {
            let d = PyDict::new(py);
            for (k, x) in t {
                d.set_item(k, toml_to_py(py, x)?)?;
            }
            d.into_any()
        }
    })
}

/// A ScenarioError about the value at `path` of a table given from Python.
pub(crate) fn table_err(path: &str, message: String) -> PyErr {
    let shown = if path.is_empty() { "(the table)" } else { path };
    ScenarioError::new_err((
        format!("<python>: key `{shown}`: {message}"),
        "<python>".to_string(),
        None::<usize>,
        path.to_string(),
        message,
    ))
}

/// How deep a Python table may nest: a scenario nests five levels at most (a conditioner's
/// meter's per-member list), and a deeper or self-containing table would overflow the stack.
const MAX_DEPTH: usize = 64;
/// The most elements an array of a table may hold (a per-member list of a group of this many
/// members is 16.8 M values).
const MAX_ELEMENTS: usize = 1 << 24;

fn py_to_toml(v: &Bound<'_, PyAny>, path: &str) -> PyResult<toml::Value> {
    to_toml_at(v, path, 0)
}

fn to_toml_at(v: &Bound<'_, PyAny>, path: &str, depth: usize) -> PyResult<toml::Value> {
    if depth > MAX_DEPTH {
        // the key as far as it is readable (a table containing itself repeats its name)
        let shown: String = path.chars().take(40).collect();
        return Err(table_err(
            &format!("{shown}…"),
            format!("nested deeper than {MAX_DEPTH} levels (a table that contains itself?)"),
        ));
    }
    if v.is_instance_of::<PyBool>() {
        return Ok(toml::Value::Boolean(v.extract()?));
    }
    if v.is_instance_of::<PyInt>() {
        return v.extract::<i64>().map(toml::Value::Integer).map_err(|_| {
            table_err(
                path,
                format!("the integer {v} is out of range: from -2^63 to 2^63-1"),
            )
        });
    }
    if v.is_instance_of::<PyFloat>() {
        return Ok(toml::Value::Float(v.extract()?));
    }
    if v.is_instance_of::<PyString>() {
        return v
            .extract::<String>()
            .map(toml::Value::String)
            .map_err(|_| table_err(path, "a string that is not valid Unicode".to_string()));
    }
    if let Ok(d) = v.cast::<PyDict>() {
        let mut t = toml::Table::new();
        for (k, x) in d.iter() {
            let k: String = k
                .extract()
                .map_err(|_| table_err(path, "table keys must be strings".to_string()))?;
            let sub = if path.is_empty() {
                k.clone()
            } else {
                format!("{path}.{k}")
            };
            if x.is_none() {
                continue;
            }
            t.insert(k, to_toml_at(&x, &sub, depth + 1)?);
        }
        return Ok(toml::Value::Table(t));
    }
    // An array: a list or tuple, or another sized sequence (a range, a NumPy array); not an
    // iterator or generator (it may never end), a set (no order) or bytes.
    let sized = v.is_instance_of::<PyList>()
        || v.is_instance_of::<PyTuple>()
        || (v.hasattr("__getitem__")?
            && !v.is_instance_of::<PyBytes>()
            && !v.is_instance_of::<PyByteArray>());
    if let (true, Ok(n)) = (sized, v.len()) {
        if n > MAX_ELEMENTS {
            return Err(table_err(
                path,
                format!("an array of {n} elements: at most {MAX_ELEMENTS}"),
            ));
        }
        let mut a = Vec::with_capacity(n);
        for (i, x) in v.try_iter()?.enumerate() {
            if i >= n {
                break; // a sequence that grows while it is read
            }
            a.push(to_toml_at(&x?, &format!("{path}[{i}]"), depth + 1)?);
        }
        return Ok(toml::Value::Array(a));
    }
    Err(table_err(
        path,
        format!(
            "cannot represent a value of type {} in a scenario",
            v.get_type().name()?
        ),
    ))
}

/// Converts a Python table (nested dicts/lists) to TOML text, the one input form the core parses.
#[pyfunction]
pub(crate) fn table_to_toml(table: &Bound<'_, PyAny>) -> PyResult<String> {
    let v = py_to_toml(table, "")?;
    toml::to_string(&v)
        .map_err(|e| table_err("", format!("cannot write the scenario as TOML: {e}")))
}
