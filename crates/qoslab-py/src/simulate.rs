//! Running a scenario: the simulation advanced in slices with the GIL released (Ctrl-C and
//! the progress callback seen every 20 ms of wall-clock time, inside a slice too), then its results handed to Python as a dict of
//! tables whose columns come from their declaration (columns.rs) and a few totals.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use pyo3::exceptions::{PyKeyboardInterrupt, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict};
use qoslab_core::sim::{FlowRecord, RunResults};
use qoslab_core::{Scenario, Simulation};

use crate::columns::{self, FlowDrop};
use crate::records;
use crate::resolve::{parse, Resolved};
use crate::ScenarioError;

/// Runs a scenario with `seed`. `captures` lists (link direction, pcap path) pairs;
/// `progress(fraction)` is called between `chunks` slices of simulated time.
#[pyfunction]
#[pyo3(signature = (text, file, seed, captures=Vec::new(), progress=None, chunks=100))]
pub(crate) fn simulate<'py>(
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
    run(py, (&sc, file), seed, captures, progress, chunks, 0, sink)
}

/// [`simulate`] for a scenario resolved once by [`resolve`].
#[pyfunction]
#[pyo3(signature = (scenario, seed, captures=Vec::new(), progress=None, chunks=100, capture_limit=0, spill=None, spill_after=100_000))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn simulate_resolved<'py>(
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
        (&scenario.inner, &scenario.file),
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
    (sc, file): (&Scenario, &str),
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
    let (until, interrupted) = advance(py, &mut sim, file, total, chunks, progress, &mut records)?;
    let mut r = sim.results();
    records.push(&mut r.records)?;
    if let Some(e) = &r.capture_error {
        return Err(PyOSError::new_err(format!(
            "writing a packet capture failed: {e}"
        )));
    }
    let out = tables(py, &mut r, records)?;
    out.set_item("events", r.events)?;
    out.set_item("packet_hops", r.packet_hops)?;
    out.set_item("peak_packets_in_flight", r.peak_packets_in_flight)?;
    out.set_item("memory_bytes", memory(py, &r)?)?;
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

/// Wall-clock time the core runs with the GIL released before Ctrl-C, SIGTERM and the
/// progress callback (the time budget) are looked at, inside a slice as between slices: the
/// core asks every [`qoslab_core::sim::stall::CHECK_EVERY`] events (a clock read per 4096
/// events, nothing measurable), so a stop is seen within about this time whatever a slice of
/// simulated time holds.
const LOOK_EVERY: Duration = Duration::from_millis(20);

/// Runs `sim` to `total` in slices, the GIL released during each (a panic in the core becomes
/// a RuntimeError, a stall of simulated time a ScenarioError naming `file`); returns where it
/// stopped and whether Ctrl-C or the progress callback stopped it early.
#[allow(clippy::too_many_arguments)]
fn advance<'py>(
    py: Python<'py>,
    sim: &mut Simulation,
    file: &str,
    total: u64,
    chunks: u64,
    progress: Option<Bound<'py, PyAny>>,
    records: &mut records::RecordSink,
) -> PyResult<(u64, bool)> {
    let chunk = (total / chunks.max(1)).max(1);
    // Slices of simulated time: a slice that took longer than 50 ms halves the next, one
    // under 10 ms doubles it, up to the progress chunk (from 10 ms of simulated time); within
    // a slice the core stops every LOOK_EVERY of wall-clock time for Ctrl-C (or SIGTERM, which
    // the CLI turns into KeyboardInterrupt) and the progress callback to be looked at. Where
    // a run pauses does not change it (events are processed in the same order); progress is
    // reported after every slice.
    // Finished transfers leave the simulation after every slice into `records`, which holds
    // them in memory or spills them to its file (records.rs).
    let mut step = chunk.min(10_000_000);
    let mut until: u64 = 0;
    while until < total {
        until = until.saturating_add(step).min(total);
        let t0 = Instant::now();
        loop {
            let look = Instant::now();
            let reached = py.detach(|| {
                catch_unwind(AssertUnwindSafe(|| {
                    sim.run_until_or(until, &mut || look.elapsed() >= LOOK_EVERY)
                }))
            });
            let Ok(reached) = reached else {
                return Err(PyRuntimeError::new_err(format!(
                    "internal error in the simulation at t = {:.6} s (please report it with the scenario and seed)",
                    sim.now() as f64 / 1e9
                )));
            };
            if let Some(stall) = sim.stalled() {
                let m = stall.to_string();
                return Err(ScenarioError::new_err((
                    format!("{file}: {m}"),
                    file.to_string(),
                    None::<usize>,
                    String::new(),
                    m,
                )));
            }
            if reached {
                break;
            }
            // Stopped inside the slice: the signals and the budget at the time reached.
            let now = sim.now();
            if let Some(stop) = stop_here(py, &progress, now as f64 / total as f64)? {
                return Ok((now, stop == Stop::Interrupt || now < total));
            }
        }
        records.push(&mut sim.take_records())?;
        let wall = t0.elapsed();
        if wall > Duration::from_millis(50) {
            step = (step / 2).max(1_000);
        } else if wall < Duration::from_millis(10) {
            step = step.saturating_mul(2).min(chunk);
        }
        // Progress after every slice (at most ~100 calls a second; the caller throttles what it
        // shows).
        if let Some(stop) = stop_here(py, &progress, until as f64 / total as f64)? {
            return Ok((until, stop == Stop::Interrupt || until < total));
        }
    }
    Ok((until, false))
}

/// What stopped a run early.
#[derive(PartialEq, Eq)]
enum Stop {
    /// Ctrl-C (or SIGTERM, which the CLI turns into KeyboardInterrupt).
    Interrupt,
    /// The progress callback returned False (the caller's time budget).
    Callback,
}

/// Whether the run stops at `fraction` of its simulated time, and why; an exception other
/// than KeyboardInterrupt (from the signal handlers or the callback) is raised.
fn stop_here(
    py: Python<'_>,
    progress: &Option<Bound<'_, PyAny>>,
    fraction: f64,
) -> PyResult<Option<Stop>> {
    if let Err(e) = py.check_signals() {
        if e.is_instance_of::<PyKeyboardInterrupt>(py) {
            return Ok(Some(Stop::Interrupt));
        }
        return Err(e);
    }
    if let Some(cb) = progress {
        let keep = cb.call1((fraction,))?;
        if keep.is_instance_of::<PyBool>() && !keep.is_truthy()? {
            return Ok(Some(Stop::Callback));
        }
    }
    Ok(None)
}

/// The tables of a run's results, as the dict `simulate` returns (its totals added after):
/// flows, classes, transfers, processes, flow_drops, links, the four time series with the
/// meters' gauge names, conditioners.
fn tables<'py>(
    py: Python<'py>,
    r: &mut RunResults,
    records: records::RecordSink,
) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("flows", columns::table(py, &r.flows, columns::FLOWS)?)?;
    out.set_item("classes", columns::table(py, &r.classes, columns::CLASSES)?)?;
    records.finish(py, &out)?;
    out.set_item(
        "processes",
        columns::table(py, &r.processes, columns::PROCESSES)?,
    )?;
    // Where drops happened: (flow, link direction, drops).
    let mut drops = Vec::new();
    for (i, x) in r.flows.iter().enumerate() {
        for &(d, n) in &x.stats.drops_at {
            drops.push(FlowDrop {
                flow: i as u64,
                direction: d as u64,
                drops: n,
            });
        }
    }
    out.set_item(
        "flow_drops",
        columns::table(py, &drops, columns::FLOW_DROPS)?,
    )?;
    out.set_item("links", columns::table(py, &r.links, columns::LINKS)?)?;
    let s = &mut r.series;
    let sq = columns::series(py, s, columns::SERIES_QUEUE)?;
    // The queue disciplines' gauges (`Aqm::gauges`): a column each, only when a queue of the
    // run publishes it (documented in python/qoslab/outputs/ from the kinds' declarations).
    for (name, col) in std::mem::take(&mut s.q_gauges) {
        columns::float_column(py, &sq, name, col)?;
    }
    out.set_item("series_queue", sq)?;
    out.set_item("series_flow", columns::series(py, s, columns::SERIES_FLOW)?)?;
    out.set_item(
        "series_meter",
        columns::series(py, s, columns::SERIES_METER)?,
    )?;
    out.set_item(
        "series_gauges",
        columns::series(py, s, columns::SERIES_GAUGES)?,
    )?;
    out.set_item("gauge_names", s.gauge_names.to_vec())?;
    out.set_item(
        "conditioners",
        columns::table(py, &r.conditioner_colored, columns::CONDITIONERS)?,
    )?;
    Ok(out)
}

/// The memory the run held, by part (bytes), with the sizes of a packet slot and a line entry.
fn memory<'py>(py: Python<'py>, r: &RunResults) -> PyResult<Bound<'py, PyDict>> {
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
    Ok(mem)
}

/// One row per finite transfer (finished, then unfinished at the end of the run).
pub(crate) fn transfer_columns<'py>(
    py: Python<'py>,
    recs: &[FlowRecord],
) -> PyResult<Bound<'py, PyDict>> {
    columns::table(py, recs, columns::TRANSFERS)
}
