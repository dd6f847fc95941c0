//! Thin PyO3 bindings of qoslab-core. Scenario errors become `qoslab.ScenarioError`, any
//! other failure a Python exception; a panic in the core is caught here and never crosses
//! into Python. The GIL is released while simulating.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use pyo3::buffer::{Element, ElementType, PyBuffer};
use pyo3::create_exception;
use pyo3::exceptions::{PyKeyboardInterrupt, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyMemoryView, PyString};
use qoslab_core::aqm::DROP_REASONS;
use qoslab_core::parquet::{self, Column, ParquetError, Strings, Values};
use qoslab_core::{Scenario, ScenarioError as CoreScenarioError, Simulation};

mod canon;
mod records;
mod topy;

create_exception!(
    qoslab,
    ScenarioError,
    PyValueError,
    "A scenario file or table is invalid."
);

fn scenario_err(e: CoreScenarioError) -> PyErr {
    ScenarioError::new_err((e.to_string(), e.file, e.line, e.key, e.message, e.column))
}

fn toml_to_py<'py>(py: Python<'py>, v: &toml::Value) -> PyResult<Bound<'py, PyAny>> {
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
fn table_err(path: &str, message: String) -> PyErr {
    let shown = if path.is_empty() { "(the table)" } else { path };
    ScenarioError::new_err((
        format!("<python>: key `{shown}`: {message}"),
        "<python>".to_string(),
        None::<usize>,
        path.to_string(),
        message,
    ))
}

fn py_to_toml(v: &Bound<'_, PyAny>, path: &str) -> PyResult<toml::Value> {
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
            t.insert(k, py_to_toml(&x, &sub)?);
        }
        return Ok(toml::Value::Table(t));
    }
    if let Ok(l) = v.try_iter() {
        let mut a = Vec::new();
        for (i, x) in l.enumerate() {
            a.push(py_to_toml(&x?, &format!("{path}[{i}]"))?);
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
fn table_to_toml(table: &Bound<'_, PyAny>) -> PyResult<String> {
    let v = py_to_toml(table, "")?;
    toml::to_string(&v)
        .map_err(|e| table_err("", format!("cannot write the scenario as TOML: {e}")))
}

fn parse(text: &str, file: &str) -> PyResult<Scenario> {
    parse_allowing(text, file, &[])
}

/// [`parse`], the files the scenario reads allowed in the folders `allow` too.
fn parse_allowing(text: &str, file: &str, allow: &[std::path::PathBuf]) -> PyResult<Scenario> {
    catch_unwind(|| Scenario::from_toml_allowing(text, file, allow))
        .map_err(|_| {
            PyRuntimeError::new_err("internal error while parsing the scenario (please report it)")
        })?
        .map_err(scenario_err)
}

/// Parses and validates scenario TOML; returns the resolved scenario as a dict.
#[pyfunction]
fn resolve_scenario<'py>(py: Python<'py>, text: &str, file: &str) -> PyResult<Bound<'py, PyAny>> {
    let sc = parse(text, file)?;
    resolved_py(py, &sc, file)
}

/// A ScenarioError naming the file: the resolved scenario holds a value TOML cannot (`m`).
fn resolved_err(file: &str, m: String) -> PyErr {
    ScenarioError::new_err((
        format!("{file}: {m}"),
        file.to_string(),
        None::<usize>,
        String::new(),
        m,
    ))
}

/// The resolved form as Python objects (what `toml_to_py` of the resolved `toml::Value` gave,
/// built directly: see `topy`), or a ScenarioError naming the file.
fn resolved_py<'py>(py: Python<'py>, sc: &Scenario, file: &str) -> PyResult<Bound<'py, PyAny>> {
    topy::to_py(py, sc).map_err(|e| topy_err(file, e))
}

fn topy_err(file: &str, e: topy::ToPyError) -> PyErr {
    match e {
        topy::ToPyError::Python(e) => e,
        e => resolved_err(file, format!("a value is out of range: {e}")),
    }
}

/// A parsed, validated and resolved scenario, kept typed on the Rust side so that a run does
/// not parse its TOML again.
#[pyclass(frozen, module = "qoslab._core")]
struct Resolved {
    inner: Scenario,
    file: String,
}

#[pymethods]
impl Resolved {
    /// (nodes, links, flows, arrival processes, conditioners): the sizes `qoslab check` prints,
    /// without building the resolved form in Python.
    fn counts(&self) -> (usize, usize, usize, usize, usize) {
        let s = &self.inner;
        (
            s.nodes.len(),
            s.links.len(),
            s.flows.len(),
            s.arrivals.len(),
            s.conditioners.len(),
        )
    }

    /// (FQ-CoDel flow queues, trace rows) in bytes: what the queues hold from the start
    /// (`flows` queues of every FQ-CoDel, sub-queues included) and the traces' rows (one
    /// shared copy per file and `trace_flow`), for the memory budget.
    fn state_bytes(&self) -> (u64, u64) {
        use qoslab_core::aqm::Discipline;
        let mut fq = 0u64;
        for l in &self.inner.links {
            for q in [&l.queue_ab, &l.queue_ba] {
                for (_, x) in q.with_subqueues() {
                    if let Discipline::FqCodel(c) = &x.discipline {
                        fq += c.flows as u64 * qoslab_core::aqm::fq_codel::QUEUE_BYTES as u64;
                    }
                }
            }
        }
        let mut seen: Vec<*const qoslab_core::traffic::trace::TraceRow> = Vec::new();
        let mut trace = 0u64;
        for f in &self.inner.flows {
            if let Some(rows) = f.source.as_ref().and_then(|s| s.rows()) {
                if !seen.contains(&rows.as_ptr()) {
                    seen.push(rows.as_ptr());
                    trace += std::mem::size_of_val(&*rows) as u64;
                }
            }
        }
        (fq, trace)
    }

    /// Bytes each arrival process's connection slot takes when built
    /// (`qoslab_core::sim::slot_bytes`), for the memory budget.
    fn slot_bytes(&self) -> Vec<usize> {
        self.inner
            .arrivals
            .iter()
            .map(qoslab_core::sim::slot_bytes)
            .collect()
    }

    /// The resolved scenario as a dict (the flat form the Python side reads).
    fn table<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        resolved_py(py, &self.inner, &self.file)
    }

    /// `table()` in which each array named in `fields` (pairs such as `("flows", ["name",
    /// "src"])`) keeps, of each of its elements, only the listed keys (those it has): what a run
    /// reads, without the 3.35 million objects of a 10,000-flow table (0.35 s to build, and a
    /// cyclic collector walking them whenever it runs).
    fn outline<'py>(
        &self,
        py: Python<'py>,
        fields: Vec<(String, Vec<String>)>,
    ) -> PyResult<Bound<'py, PyAny>> {
        topy::to_py_outline(py, &self.inner, &fields).map_err(|e| topy_err(&self.file, e))
    }

    /// The resolved scenario as TOML: `table_to_toml(self.table())` without the round trip
    /// through Python objects (the scenario's hash; a second at 10,000 flows that way), written
    /// by `canon` (the same text, 0.7-1.3 s at 10,000 flows through toml's `Value` and document
    /// writer, which remain for what `canon` declines). The GIL is released while it is written
    /// (a run computes it beside the simulation).
    fn canonical_toml(&self, py: Python<'_>) -> PyResult<String> {
        let written = py.detach(|| match canon::canonical_toml(&self.inner) {
            Some(text) => Ok(Ok(text)),
            None => self.inner.to_toml_value().map(|v| toml::to_string(&v)),
        });
        match written {
            Ok(Ok(text)) => Ok(text),
            Ok(Err(e)) => Err(table_err(
                "",
                format!("cannot write the scenario as TOML: {e}"),
            )),
            Err(m) => Err(resolved_err(&self.file, m)),
        }
    }
}

/// Parses and validates scenario TOML once, for [`simulate_resolved`] and [`Resolved::table`];
/// the files it reads may lie in its folder or in the folders `allow`. With `max_bytes` (0:
/// none), a scenario whose resolved form would take more memory is refused before its groups
/// are expanded (`limit_what` says what sets the limit).
#[pyfunction]
#[pyo3(signature = (text, file, allow=Vec::new(), max_bytes=0, limit_what=""))]
fn resolve(
    text: &str,
    file: &str,
    allow: Vec<std::path::PathBuf>,
    max_bytes: u64,
    limit_what: &str,
) -> PyResult<Resolved> {
    let limit = (max_bytes > 0).then_some((max_bytes, limit_what));
    let inner = catch_unwind(|| Scenario::from_toml_checked(text, file, &allow, limit))
        .map_err(|_| {
            PyRuntimeError::new_err("internal error while parsing the scenario (please report it)")
        })?
        .map_err(scenario_err)?;
    Ok(Resolved {
        inner,
        file: file.to_string(),
    })
}

/// A numeric column as Python's `array.array` of type code `code` ("d": f64, "Q": u64), from
/// the values' native-endian bytes. Not a numpy array: building one imports numpy (0.1-0.2 s,
/// a third of a short run's whole process), which a run that only writes its summary never
/// needs; the tables wrap these buffers in numpy arrays without copying (qoslab.simulate).
fn column<'py, T: Copy>(
    py: Python<'py>,
    d: &Bound<'py, PyDict>,
    name: &str,
    code: &str,
    values: &[T],
    bytes: fn(T) -> [u8; 8],
) -> PyResult<()> {
    let raw = PyBytes::new_with(py, values.len() * 8, |buf| {
        for (c, &x) in buf.chunks_exact_mut(8).zip(values) {
            c.copy_from_slice(&bytes(x));
        }
        Ok(())
    })?;
    let a = py.import("array")?.getattr("array")?.call1((code,))?;
    a.call_method1("frombytes", (raw,))?;
    d.set_item(name, a)
}
fn cols<'py>(py: Python<'py>, d: &Bound<'py, PyDict>, name: &str, v: Vec<f64>) -> PyResult<()> {
    column(py, d, name, "d", &v, f64::to_ne_bytes)
}
fn colu<'py>(py: Python<'py>, d: &Bound<'py, PyDict>, name: &str, v: Vec<u64>) -> PyResult<()> {
    column(py, d, name, "Q", &v, u64::to_ne_bytes)
}

/// Runs a scenario with `seed`. `captures` lists (link direction, pcap path) pairs;
/// `progress(fraction)` is called between `chunks` slices of simulated time.
#[pyfunction]
#[pyo3(signature = (text, file, seed, captures=Vec::new(), progress=None, chunks=100))]
fn simulate<'py>(
    py: Python<'py>,
    text: &str,
    file: &str,
    seed: u64,
    captures: Vec<(usize, String)>,
    progress: Option<Bound<'py, PyAny>>,
    chunks: u64,
) -> PyResult<Bound<'py, PyDict>> {
    let sc = parse(text, file)?;
    let sink = records::RecordSink::new(None, usize::MAX);
    run(py, &sc, seed, captures, progress, chunks, 0, sink)
}

/// [`simulate`] for a scenario resolved once by [`resolve`].
#[pyfunction]
#[pyo3(signature = (scenario, seed, captures=Vec::new(), progress=None, chunks=100, capture_limit=0, spill=None, spill_after=100_000))]
#[allow(clippy::too_many_arguments)]
fn simulate_resolved<'py>(
    py: Python<'py>,
    scenario: &Resolved,
    seed: u64,
    captures: Vec<(usize, String)>,
    progress: Option<Bound<'py, PyAny>>,
    chunks: u64,
    capture_limit: u64,
    spill: Option<String>,
    spill_after: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let sink = records::RecordSink::new(spill, spill_after);
    run(
        py,
        &scenario.inner,
        seed,
        captures,
        progress,
        chunks,
        capture_limit,
        sink,
    )
}

#[allow(clippy::too_many_arguments)]
fn run<'py>(
    py: Python<'py>,
    sc: &Scenario,
    seed: u64,
    captures: Vec<(usize, String)>,
    progress: Option<Bound<'py, PyAny>>,
    chunks: u64,
    capture_limit: u64,
    mut records: records::RecordSink,
) -> PyResult<Bound<'py, PyDict>> {
    let mut sim = catch_unwind(|| Simulation::new(sc, seed)).map_err(|_| {
        PyRuntimeError::new_err("internal error while building the simulation (please report it)")
    })?;
    for (dir, path) in captures {
        if dir >= sc.links.len() * 2 {
            return Err(PyValueError::new_err(format!(
                "capture: no link direction {dir}"
            )));
        }
        let f =
            std::fs::File::create(&path).map_err(|e| PyOSError::new_err(format!("{path}: {e}")))?;
        sim.attach_capture(dir, Box::new(std::io::BufWriter::new(f)))
            .map_err(|e| PyOSError::new_err(format!("{path}: {e}")))?;
    }
    sim.set_capture_limit(capture_limit);
    let total = sc.duration_ns;
    let chunk = (total / chunks.max(1)).max(1);
    // Slices of simulated time short enough in wall-clock time that Ctrl-C (or SIGTERM, which
    // the CLI turns into KeyboardInterrupt) is seen within about 0.1 s whatever the run's
    // length: a slice that took longer than 50 ms halves the next, one under 10 ms doubles it,
    // up to the progress chunk (from 10 ms of simulated time). Where a run pauses does not change it (events are processed in
    // the same order); progress is reported once per chunk.
    // Finished transfers leave the simulation after every slice into `records`, which holds
    // them in memory or spills them to its file (records.rs).
    let mut step = chunk.min(10_000_000);
    let mut until: u64 = 0;
    let mut next_report = chunk;
    let mut interrupted = false;
    while until < total {
        until = until.saturating_add(step).min(total);
        let t0 = Instant::now();
        let ok = py.detach(|| catch_unwind(AssertUnwindSafe(|| sim.run_until(until))).is_ok());
        if !ok {
            return Err(PyRuntimeError::new_err(format!(
                "internal error in the simulation at t = {:.6} s (please report it with the scenario and seed)",
                sim.now() as f64 / 1e9
            )));
        }
        records.push(&mut sim.take_records())?;
        let wall = t0.elapsed();
        if wall > Duration::from_millis(50) {
            step = (step / 2).max(1_000);
        } else if wall < Duration::from_millis(10) {
            step = step.saturating_mul(2).min(chunk);
        }
        if let Err(e) = py.check_signals() {
            if e.is_instance_of::<PyKeyboardInterrupt>(py) {
                interrupted = true;
                break;
            }
            return Err(e);
        }
        // Progress after every slice (at most ~100 calls a second; the caller throttles what it
        // shows) and at least once per chunk; a callback that returns False stops the run here,
        // as Ctrl-C does (the caller's time budget).
        if until >= next_report || until == total || progress.is_some() {
            while next_report <= until {
                next_report = next_report.saturating_add(chunk);
            }
            if let Some(cb) = &progress {
                let keep = cb.call1((until as f64 / total as f64,))?;
                if keep.is_instance_of::<PyBool>() && !keep.is_truthy()? {
                    interrupted = until < total;
                    break;
                }
            }
        }
    }
    let mut r = sim.results();
    records.push(&mut r.records)?;
    if let Some(e) = &r.capture_error {
        return Err(PyOSError::new_err(format!(
            "writing a packet capture failed: {e}"
        )));
    }
    let out = PyDict::new(py);

    let f = PyDict::new(py);
    let fl = &r.flows;
    let g =
        |h: &dyn Fn(&qoslab_core::sim::FlowResult) -> u64| fl.iter().map(h).collect::<Vec<u64>>();
    let gf =
        |h: &dyn Fn(&qoslab_core::sim::FlowResult) -> f64| fl.iter().map(h).collect::<Vec<f64>>();
    cols(py, &f, "throughput_bps", gf(&|x| x.throughput_bps))?;
    cols(py, &f, "goodput_bps", gf(&|x| x.goodput_bps))?;
    cols(py, &f, "in_throughput_bps", gf(&|x| x.in_throughput_bps))?;
    colu(py, &f, "start_ns", g(&|x| x.start_ns))?;
    colu(py, &f, "sent_packets", g(&|x| x.stats.sent_pkts))?;
    colu(py, &f, "sent_bytes", g(&|x| x.stats.sent_bytes))?;
    colu(py, &f, "retransmitted_packets", g(&|x| x.stats.retransmits))?;
    colu(py, &f, "delivered_packets", g(&|x| x.stats.delivered_pkts))?;
    colu(py, &f, "delivered_bytes", g(&|x| x.stats.delivered_bytes))?;
    colu(py, &f, "dropped_packets", g(&|x| x.stats.dropped_pkts))?;
    colu(py, &f, "early_drops", g(&|x| x.stats.drops_by_reason[0]))?;
    colu(py, &f, "forced_drops", g(&|x| x.stats.drops_by_reason[1]))?;
    colu(py, &f, "overflow_drops", g(&|x| x.stats.drops_by_reason[2]))?;
    colu(py, &f, "policed_drops", g(&|x| x.stats.drops_by_reason[3]))?;
    for (k, c) in ["green", "yellow", "red"].iter().enumerate() {
        colu(py, &f, &format!("{c}_packets"), g(&|x| x.stats.colored[k]))?;
        colu(
            py,
            &f,
            &format!("drops_prec{k}"),
            g(&|x| x.stats.drops_by_prec[k]),
        )?;
    }
    colu(py, &f, "in_flight_packets", g(&|x| x.in_flight))?;
    colu(py, &f, "acks_sent", g(&|x| x.stats.acks_sent))?;
    colu(py, &f, "acks_dropped", g(&|x| x.stats.acks_dropped))?;
    colu(py, &f, "timeouts", g(&|x| x.timeouts))?;
    colu(py, &f, "fast_retransmits", g(&|x| x.fast_retransmits))?;
    colu(py, &f, "ecn_marks", g(&|x| x.stats.ecn_marks))?;
    colu(py, &f, "ecn_responses", g(&|x| x.ecn_responses))?;
    // The same event counters inside the measurement window.
    colu(
        py,
        &f,
        "window_retransmitted_packets",
        g(&|x| x.window.retransmits),
    )?;
    colu(py, &f, "window_timeouts", g(&|x| x.window.timeouts))?;
    colu(
        py,
        &f,
        "window_fast_retransmits",
        g(&|x| x.window.fast_retransmits),
    )?;
    colu(py, &f, "window_ecn_marks", g(&|x| x.window.ecn_marks))?;
    colu(
        py,
        &f,
        "window_ecn_responses",
        g(&|x| x.window.ecn_responses),
    )?;
    for (k, reason) in DROP_REASONS.iter().enumerate() {
        colu(
            py,
            &f,
            &format!("window_{reason}_drops"),
            g(&|x| x.window.drops_by_reason[k]),
        )?;
    }
    for (k, c) in ["green", "yellow", "red"].iter().enumerate() {
        colu(
            py,
            &f,
            &format!("window_{c}_packets"),
            g(&|x| x.window.colored[k]),
        )?;
        colu(
            py,
            &f,
            &format!("window_drops_prec{k}"),
            g(&|x| x.window.drops_by_prec[k]),
        )?;
    }
    cols(py, &f, "final_cwnd", gf(&|x| x.final_cwnd))?;
    cols(py, &f, "final_ssthresh", gf(&|x| x.final_ssthresh))?;
    cols(py, &f, "srtt_s", gf(&|x| x.srtt_s))?;
    delay_columns(py, &f, &fl.iter().map(|x| x.delay).collect::<Vec<_>>())?;
    cols(py, &f, "jitter_s", gf(&|x| x.jitter_s))?;
    out.set_item("flows", f)?;
    let c = PyDict::new(py);
    colu(
        py,
        &c,
        "dscp",
        r.classes.iter().map(|x| x.dscp as u64).collect(),
    )?;
    colu(py, &c, "flows", r.classes.iter().map(|x| x.flows).collect())?;
    delay_columns(
        py,
        &c,
        &r.classes.iter().map(|x| x.delay).collect::<Vec<_>>(),
    )?;
    out.set_item("classes", c)?;
    records.finish(py, &out)?;
    let pc = PyDict::new(py);
    let ps = &r.processes;
    colu(py, &pc, "arrivals", ps.iter().map(|x| x.arrivals).collect())?;
    colu(py, &pc, "refused", ps.iter().map(|x| x.refused).collect())?;
    colu(
        py,
        &pc,
        "completed",
        ps.iter().map(|x| x.completed).collect(),
    )?;
    colu(
        py,
        &pc,
        "peak_active",
        ps.iter().map(|x| x.peak_active).collect(),
    )?;
    out.set_item("processes", pc)?;
    // Where drops happened: (flow, link direction, drops).
    let (mut df, mut dd, mut dn) = (Vec::new(), Vec::new(), Vec::new());
    for (i, x) in fl.iter().enumerate() {
        for &(d, n) in &x.stats.drops_at {
            df.push(i as u64);
            dd.push(d as u64);
            dn.push(n);
        }
    }
    let dropsat = PyDict::new(py);
    colu(py, &dropsat, "flow", df)?;
    colu(py, &dropsat, "direction_index", dd)?;
    colu(py, &dropsat, "drops", dn)?;
    out.set_item("flow_drops", dropsat)?;

    let l = PyDict::new(py);
    let ls = &r.links;
    colu(py, &l, "link", ls.iter().map(|x| x.link as u64).collect())?;
    l.set_item(
        "direction",
        ls.iter().map(|x| x.direction).collect::<Vec<_>>(),
    )?;
    colu(
        py,
        &l,
        "arrivals",
        ls.iter().map(|x| x.stats.arrivals).collect(),
    )?;
    colu(
        py,
        &l,
        "departures",
        ls.iter().map(|x| x.stats.departures).collect(),
    )?;
    colu(
        py,
        &l,
        "departed_bytes",
        ls.iter().map(|x| x.stats.departed_bytes).collect(),
    )?;
    colu(
        py,
        &l,
        "early_drops",
        ls.iter().map(|x| x.stats.drops[0]).collect(),
    )?;
    colu(
        py,
        &l,
        "forced_drops",
        ls.iter().map(|x| x.stats.drops[1]).collect(),
    )?;
    colu(
        py,
        &l,
        "overflow_drops",
        ls.iter().map(|x| x.stats.drops[2]).collect(),
    )?;
    colu(py, &l, "marks", ls.iter().map(|x| x.stats.marks).collect())?;
    colu(
        py,
        &l,
        "window_arrivals",
        ls.iter().map(|x| x.window.arrivals).collect(),
    )?;
    colu(
        py,
        &l,
        "window_marks",
        ls.iter().map(|x| x.window.marks).collect(),
    )?;
    for (k, reason) in DROP_REASONS.iter().enumerate() {
        colu(
            py,
            &l,
            &format!("window_{reason}_drops"),
            ls.iter().map(|x| x.window.drops[k]).collect(),
        )?;
    }
    colu(
        py,
        &l,
        "policed_drops",
        ls.iter().map(|x| x.stats.drops[3]).collect(),
    )?;
    for k in 0..3 {
        colu(
            py,
            &l,
            &format!("arrivals_prec{k}"),
            ls.iter().map(|x| x.stats.arrivals_by_prec[k]).collect(),
        )?;
        colu(
            py,
            &l,
            &format!("drops_prec{k}"),
            ls.iter().map(|x| x.stats.drops_by_prec[k]).collect(),
        )?;
        colu(
            py,
            &l,
            &format!("window_arrivals_prec{k}"),
            ls.iter()
                .map(|x| x.stats.window_arrivals_by_prec[k])
                .collect(),
        )?;
        colu(
            py,
            &l,
            &format!("window_drops_prec{k}"),
            ls.iter().map(|x| x.stats.window_drops_by_prec[k]).collect(),
        )?;
    }
    colu(
        py,
        &l,
        "window_admitted",
        ls.iter().map(|x| x.stats.window_admitted).collect(),
    )?;
    colu(
        py,
        &l,
        "window_wait_ns",
        ls.iter().map(|x| x.stats.window_wait_ns).collect(),
    )?;
    colu(
        py,
        &l,
        "queued_at_end",
        ls.iter().map(|x| x.queued).collect(),
    )?;
    cols(
        py,
        &l,
        "utilization",
        ls.iter().map(|x| x.utilization).collect(),
    )?;
    out.set_item("links", l)?;

    let s = r.series;
    let sq = PyDict::new(py);
    colu(py, &sq, "time_ns", s.q_time_ns)?;
    colu(
        py,
        &sq,
        "direction_index",
        s.q_dir.into_iter().map(u64::from).collect(),
    )?;
    colu(
        py,
        &sq,
        "physical_queue",
        s.q_sub.into_iter().map(u64::from).collect(),
    )?;
    colu(
        py,
        &sq,
        "queue_packets",
        s.q_len_pkts.into_iter().map(u64::from).collect(),
    )?;
    colu(py, &sq, "queue_bytes", s.q_len_bytes)?;
    cols(py, &sq, "avg_queue", s.q_avg)?;
    let [a0, a1, a2] = s.q_avg_prec;
    cols(py, &sq, "avg_prec0", a0)?;
    cols(py, &sq, "avg_prec1", a1)?;
    cols(py, &sq, "avg_prec2", a2)?;
    // The queue disciplines' gauges (`Aqm::gauges`): a column each, only when a queue of the
    // run publishes it (documented in python/qoslab/outputs.py from the kinds' declarations).
    for (name, col) in s.q_gauges {
        cols(py, &sq, name, col)?;
    }
    out.set_item("series_queue", sq)?;
    let sf = PyDict::new(py);
    colu(py, &sf, "time_ns", s.f_time_ns)?;
    colu(
        py,
        &sf,
        "flow",
        s.f_flow.into_iter().map(u64::from).collect(),
    )?;
    cols(py, &sf, "throughput_bps", s.f_throughput_bps)?;
    cols(py, &sf, "cwnd", s.f_cwnd)?;
    cols(py, &sf, "ssthresh", s.f_ssthresh)?;
    out.set_item("series_flow", sf)?;
    let sm = PyDict::new(py);
    colu(py, &sm, "time_ns", s.m_time_ns)?;
    colu(
        py,
        &sm,
        "conditioner",
        s.m_cond.into_iter().map(u64::from).collect(),
    )?;
    colu(
        py,
        &sm,
        "flow",
        s.m_flow.into_iter().map(u64::from).collect(),
    )?;
    cols(py, &sm, "token_bytes", s.m_level)?;
    out.set_item("series_meter", sm)?;
    let sg = PyDict::new(py);
    colu(py, &sg, "time_ns", s.g_time_ns)?;
    colu(
        py,
        &sg,
        "conditioner",
        s.g_cond.into_iter().map(u64::from).collect(),
    )?;
    colu(
        py,
        &sg,
        "flow",
        s.g_flow.into_iter().map(u64::from).collect(),
    )?;
    colu(
        py,
        &sg,
        "gauge",
        s.g_name.into_iter().map(u64::from).collect(),
    )?;
    cols(py, &sg, "value", s.g_value)?;
    out.set_item("series_gauges", sg)?;
    out.set_item("gauge_names", s.gauge_names.to_vec())?;
    let cc = PyDict::new(py);
    for (k, c) in ["green", "yellow", "red"].iter().enumerate() {
        colu(
            py,
            &cc,
            &format!("{c}_packets"),
            r.conditioner_colored.iter().map(|x| x[k]).collect(),
        )?;
    }
    out.set_item("conditioners", cc)?;

    out.set_item("events", r.events)?;
    out.set_item("packet_hops", r.packet_hops)?;
    out.set_item("peak_packets_in_flight", r.peak_packets_in_flight)?;
    let mem = PyDict::new(py);
    for (k, v) in [
        ("packets", r.memory.packets),
        ("links", r.memory.links),
        ("flows", r.memory.flows),
        ("events", r.memory.events),
        ("conditioners", r.memory.conditioners),
        ("series", r.memory.series),
        ("state", r.memory.state()),
        ("packet_slot", qoslab_core::packet::PacketArena::SLOT_BYTES),
        (
            "line_entry",
            std::mem::size_of::<qoslab_core::net::link::InLine>(),
        ),
    ] {
        mem.set_item(k, v)?;
    }
    out.set_item("memory_bytes", mem)?;
    out.set_item("end_ns", r.end_ns)?;
    // Interrupted (Ctrl-C): the results so far, simulated up to `simulated_until_ns`.
    out.set_item("interrupted", interrupted)?;
    out.set_item(
        "simulated_until_ns",
        if interrupted { until } else { total },
    )?;
    out.set_item("violations", r.violations)?;
    out.set_item("capture_records", r.capture_records)?;
    out.set_item("capture_bytes", sim.capture_bytes())?;
    out.set_item("capture_stopped_ns", sim.capture_stopped())?;
    Ok(out)
}

/// The delay columns of a table: packets counted, mean and percentiles (seconds).
fn delay_columns<'py>(
    py: Python<'py>,
    d: &Bound<'py, PyDict>,
    v: &[qoslab_core::sim::DelaySummary],
) -> PyResult<()> {
    colu(
        py,
        d,
        "delay_packets",
        v.iter().map(|x| x.packets).collect(),
    )?;
    cols(py, d, "delay_mean_s", v.iter().map(|x| x.mean_s).collect())?;
    cols(py, d, "delay_p50_s", v.iter().map(|x| x.p50_s).collect())?;
    cols(py, d, "delay_p90_s", v.iter().map(|x| x.p90_s).collect())?;
    cols(py, d, "delay_p99_s", v.iter().map(|x| x.p99_s).collect())?;
    cols(py, d, "delay_p999_s", v.iter().map(|x| x.p999_s).collect())?;
    cols(py, d, "delay_max_s", v.iter().map(|x| x.max_s).collect())
}

/// One row per finite transfer (finished, then unfinished at the end of the run).
pub(crate) fn transfer_columns<'py>(
    py: Python<'py>,
    recs: &[qoslab_core::sim::FlowRecord],
) -> PyResult<Bound<'py, PyDict>> {
    let t = PyDict::new(py);
    let u = |h: &dyn Fn(&qoslab_core::sim::FlowRecord) -> u64| recs.iter().map(h).collect();
    let s = |h: &dyn Fn(&qoslab_core::sim::FlowRecord) -> f64| recs.iter().map(h).collect();
    colu(py, &t, "process", u(&|r| r.process as u64))?;
    colu(py, &t, "id", u(&|r| r.id))?;
    colu(py, &t, "slot", u(&|r| r.slot as u64))?;
    colu(py, &t, "dscp", u(&|r| r.dscp as u64))?;
    colu(py, &t, "size_bytes", u(&|r| r.size_bytes))?;
    colu(py, &t, "segments", u(&|r| r.segments))?;
    cols(py, &t, "start_s", s(&|r| r.start_ns as f64 / 1e9))?;
    cols(
        py,
        &t,
        "end_s",
        s(&|r| r.end_ns.map_or(f64::NAN, |e| e as f64 / 1e9)),
    )?;
    cols(
        py,
        &t,
        "fct_s",
        s(&|r| r.end_ns.map_or(f64::NAN, |e| (e - r.start_ns) as f64 / 1e9)),
    )?;
    cols(py, &t, "ideal_fct_s", s(&|r| r.ideal_ns as f64 / 1e9))?;
    cols(
        py,
        &t,
        "slowdown",
        s(&|r| {
            r.end_ns.map_or(f64::NAN, |e| {
                (e - r.start_ns) as f64 / r.ideal_ns.max(1) as f64
            })
        }),
    )?;
    colu(py, &t, "retransmits", u(&|r| r.retransmits))?;
    colu(py, &t, "timeouts", u(&|r| r.timeouts))?;
    Ok(t)
}

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
    fn values(&self) -> Values<'_> {
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
fn write_parquet(
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

/// The JSON Schema of the scenario format, generated from the core's declarations.
#[pyfunction]
fn scenario_schema(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    toml_to_py(py, &qoslab_core::scenario::schema::json_schema())
}

/// A codepoint's drop precedence in a RIO/WRED queue (AFx1/EF 0, AFx2 1, else 2): the rule
/// the simulator uses, for the Python side (ns-2 export, comparisons) to share.
#[pyfunction]
fn drop_precedence(dscp: u8) -> u8 {
    qoslab_core::ds::drop_precedence(dscp)
}

/// A codepoint's conventional name ("AF11", "EF", "CS1", "BE", else its number).
#[pyfunction]
fn dscp_name(dscp: u8) -> String {
    qoslab_core::ds::dscp_name(dscp)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add(
        "FQ_CODEL_QUEUE_BYTES",
        qoslab_core::aqm::fq_codel::QUEUE_BYTES,
    )?;
    // A transfers spill file's row (records.rs), which python/qoslab/transfers.py reads.
    m.add("TRANSFER_SPILL_FIELDS", records::COLUMNS.to_vec())?;
    // The package version plus a fingerprint of the simulator's source (see build.rs).
    m.add(
        "__version__",
        concat!(env!("CARGO_PKG_VERSION"), "+", env!("QOSLAB_SOURCE_HASH")),
    )?;
    m.add_function(wrap_pyfunction!(resolve_scenario, m)?)?;
    m.add_class::<Resolved>()?;
    m.add_function(wrap_pyfunction!(resolve, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_resolved, m)?)?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(drop_precedence, m)?)?;
    m.add_function(wrap_pyfunction!(dscp_name, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_schema, m)?)?;
    m.add_function(wrap_pyfunction!(table_to_toml, m)?)?;
    m.add_function(wrap_pyfunction!(write_parquet, m)?)?;
    m.add_function(wrap_pyfunction!(records::write_parquet_groups, m)?)?;
    Ok(())
}
