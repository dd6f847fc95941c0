//! The columns of the tables a run hands to Python, declared once: each table is a list of
//! (name, how its value is read from a row), from which [`table`] builds the table (a dict of
//! columns) and [`TABLES`] lists the names, which `qoslab._core.TABLE_COLUMNS` gives Python to
//! check against its outputs catalogue (python/qoslab/outputs/, where each column's unit and
//! definition are written). A new column is one line here, in the order of the table.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use qoslab_core::sim::{
    ClassResult, DelaySummary, FlowRecord, FlowResult, LinkResult, ProcessCounts, Series,
};
use qoslab_core::traffic::sender::{counters, FlowCounts};

/// How a column's value is read from a row.
pub(crate) enum Get<T> {
    /// An unsigned count: Python's `array.array("Q")`.
    U64(fn(&T) -> u64),
    /// A float: `array.array("d")`.
    F64(fn(&T) -> f64),
    /// A text: a list of str.
    Text(fn(&T) -> &'static str),
    /// The delay columns of the row's [`DelaySummary`] ([`DELAY`], named there).
    Delay(fn(&T) -> DelaySummary),
    /// A column per counter the senders declare (`qoslab_core::traffic::sender::counters`),
    /// named by the declaration after the column's name (a prefix: "" or "window_").
    Counters(fn(&T) -> FlowCounts),
}

/// One column: its name in the table and how its value is read from a row.
pub(crate) struct Col<T> {
    pub name: &'static str,
    pub get: Get<T>,
}

const fn u<T>(name: &'static str, f: fn(&T) -> u64) -> Col<T> {
    Col {
        name,
        get: Get::U64(f),
    }
}
const fn f<T>(name: &'static str, f: fn(&T) -> f64) -> Col<T> {
    Col {
        name,
        get: Get::F64(f),
    }
}
const fn text<T>(name: &'static str, f: fn(&T) -> &'static str) -> Col<T> {
    Col {
        name,
        get: Get::Text(f),
    }
}
const fn declared<T>(prefix: &'static str, f: fn(&T) -> FlowCounts) -> Col<T> {
    Col {
        name: prefix,
        get: Get::Counters(f),
    }
}
const fn delay<T>(f: fn(&T) -> DelaySummary) -> Col<T> {
    Col {
        name: "delay_*",
        get: Get::Delay(f),
    }
}

/// A delay distribution's columns: packets counted, mean and percentiles (seconds).
pub(crate) const DELAY: &[Col<DelaySummary>] = &[
    u("delay_packets", |d| d.packets),
    f("delay_mean_s", |d| d.mean_s),
    f("delay_p50_s", |d| d.p50_s),
    f("delay_p90_s", |d| d.p90_s),
    f("delay_p99_s", |d| d.p99_s),
    f("delay_p999_s", |d| d.p999_s),
    f("delay_max_s", |d| d.max_s),
];

/// flows.parquet's numeric columns, with the drop and colour counters listed once and written
/// twice: over the whole run (`stats`) and as `window_*` inside the measurement window
/// (`window`), which count them in fields of the same names.
macro_rules! flows_table {
    ($($name:literal: $field:ident[$i:literal]),+ $(,)?) => {
        &[
            f("throughput_bps", |x| x.throughput_bps),
            f("goodput_bps", |x| x.goodput_bps),
            f("in_throughput_bps", |x| x.in_throughput_bps),
            u("start_ns", |x| x.start_ns),
            u("sent_packets", |x| x.stats.sent_pkts),
            u("sent_bytes", |x| x.stats.sent_bytes),
            u("retransmitted_packets", |x| x.stats.retransmits),
            u("delivered_packets", |x| x.stats.delivered_pkts),
            u("delivered_bytes", |x| x.stats.delivered_bytes),
            u("dropped_packets", |x| x.stats.dropped_pkts),
            $(u($name, |x| x.stats.$field[$i]),)+
            u("in_flight_packets", |x| x.in_flight),
            u("acks_sent", |x| x.stats.acks_sent),
            u("acks_dropped", |x| x.stats.acks_dropped),
            u("timeouts", |x| x.timeouts),
            u("fast_retransmits", |x| x.fast_retransmits),
            u("ecn_marks", |x| x.stats.ecn_marks),
            u("ecn_responses", |x| x.ecn_responses),
            // The counters the senders declare in their own files.
            declared("", |x| x.counts),
            // The same event counters inside the measurement window.
            u("window_retransmitted_packets", |x| x.window.retransmits),
            u("window_timeouts", |x| x.window.timeouts),
            u("window_fast_retransmits", |x| x.window.fast_retransmits),
            u("window_ecn_marks", |x| x.window.ecn_marks),
            u("window_ecn_responses", |x| x.window.ecn_responses),
            $(u(concat!("window_", $name), |x| x.window.$field[$i]),)+
            declared("window_", |x| x.window.declared),
            f("final_cwnd", |x| x.final_cwnd),
            f("final_ssthresh", |x| x.final_ssthresh),
            f("srtt_s", |x| x.srtt_s),
            delay(|x| x.delay),
            f("jitter_s", |x| x.jitter_s),
        ]
    };
}

/// flows.parquet's numeric columns: one row per flow, then one per arrival process. Drop
/// reasons in the order of `qoslab_core::aqm::DROP_REASONS`; colours green, yellow, red.
pub(crate) const FLOWS: &[Col<FlowResult>] = flows_table!(
    "early_drops": drops_by_reason[0],
    "forced_drops": drops_by_reason[1],
    "overflow_drops": drops_by_reason[2],
    "policed_drops": drops_by_reason[3],
    "green_packets": colored[0],
    "drops_prec0": drops_by_prec[0],
    "yellow_packets": colored[1],
    "drops_prec1": drops_by_prec[1],
    "red_packets": colored[2],
    "drops_prec2": drops_by_prec[2],
);

/// classes.parquet's numeric columns: one row per DiffServ class.
pub(crate) const CLASSES: &[Col<ClassResult>] = &[
    u("dscp", |x| x.dscp as u64),
    u("flows", |x| x.flows),
    delay(|x| x.delay),
];

/// The arrival processes' counts (summary.json's `arrivals`).
pub(crate) const PROCESSES: &[Col<ProcessCounts>] = &[
    u("arrivals", |x| x.arrivals),
    u("refused", |x| x.refused),
    u("completed", |x| x.completed),
    u("peak_active", |x| x.peak_active),
];

/// One row of flow_drops: data packets of a flow dropped at a link direction.
pub(crate) struct FlowDrop {
    pub flow: u64,
    pub direction: u64,
    pub drops: u64,
}

/// flow_drops.parquet's numeric columns.
pub(crate) const FLOW_DROPS: &[Col<FlowDrop>] = &[
    u("flow", |x| x.flow),
    u("direction_index", |x| x.direction),
    u("drops", |x| x.drops),
];

/// links.parquet's columns: one row per link direction. Drops by reason in the order of
/// `qoslab_core::aqm::DROP_REASONS`.
pub(crate) const LINKS: &[Col<LinkResult>] = &[
    u("link", |x| x.link as u64),
    text("direction", |x| x.direction),
    u("arrivals", |x| x.stats.arrivals),
    u("departures", |x| x.stats.departures),
    u("departed_bytes", |x| x.stats.departed_bytes),
    u("early_drops", |x| x.stats.drops[0]),
    u("forced_drops", |x| x.stats.drops[1]),
    u("overflow_drops", |x| x.stats.drops[2]),
    u("marks", |x| x.stats.marks),
    u("window_arrivals", |x| x.window.arrivals),
    u("window_marks", |x| x.window.marks),
    u("window_early_drops", |x| x.window.drops[0]),
    u("window_forced_drops", |x| x.window.drops[1]),
    u("window_overflow_drops", |x| x.window.drops[2]),
    u("window_policed_drops", |x| x.window.drops[3]),
    u("policed_drops", |x| x.stats.drops[3]),
    u("arrivals_prec0", |x| x.stats.arrivals_by_prec[0]),
    u("drops_prec0", |x| x.stats.drops_by_prec[0]),
    u("window_arrivals_prec0", |x| {
        x.stats.window_arrivals_by_prec[0]
    }),
    u("window_drops_prec0", |x| x.stats.window_drops_by_prec[0]),
    u("arrivals_prec1", |x| x.stats.arrivals_by_prec[1]),
    u("drops_prec1", |x| x.stats.drops_by_prec[1]),
    u("window_arrivals_prec1", |x| {
        x.stats.window_arrivals_by_prec[1]
    }),
    u("window_drops_prec1", |x| x.stats.window_drops_by_prec[1]),
    u("arrivals_prec2", |x| x.stats.arrivals_by_prec[2]),
    u("drops_prec2", |x| x.stats.drops_by_prec[2]),
    u("window_arrivals_prec2", |x| {
        x.stats.window_arrivals_by_prec[2]
    }),
    u("window_drops_prec2", |x| x.stats.window_drops_by_prec[2]),
    u("window_admitted", |x| x.stats.window_admitted),
    u("window_wait_ns", |x| x.stats.window_wait_ns),
    u("queued_at_end", |x| x.queued),
    f("utilization", |x| x.utilization),
];

/// conditioners.parquet's numeric columns: one row per conditioner (its colour counts).
pub(crate) const CONDITIONERS: &[Col<[u64; 3]>] = &[
    u("green_packets", |x| x[0]),
    u("yellow_packets", |x| x[1]),
    u("red_packets", |x| x[2]),
];

/// transfers.parquet's numeric columns: one row per finite transfer.
pub(crate) const TRANSFERS: &[Col<FlowRecord>] = &[
    u("process", |r| r.process as u64),
    u("id", |r| r.id),
    u("slot", |r| r.slot as u64),
    u("dscp", |r| r.dscp as u64),
    u("size_bytes", |r| r.size_bytes),
    u("segments", |r| r.segments),
    f("start_s", |r| r.start_ns as f64 / 1e9),
    f("end_s", |r| r.end_ns.map_or(f64::NAN, |e| e as f64 / 1e9)),
    f("fct_s", |r| {
        r.end_ns.map_or(f64::NAN, |e| (e - r.start_ns) as f64 / 1e9)
    }),
    f("ideal_fct_s", |r| r.ideal_ns as f64 / 1e9),
    f("slowdown", |r| {
        r.end_ns.map_or(f64::NAN, |e| {
            (e - r.start_ns) as f64 / r.ideal_ns.max(1) as f64
        })
    }),
    u("retransmits", |r| r.retransmits),
    u("timeouts", |r| r.timeouts),
];

/// A time series' column, moved out of the core's [`Series`] (already one vector per column).
pub(crate) enum Owned {
    U64(Vec<u64>),
    F64(Vec<f64>),
}

/// One column of a time series: its name and how it is taken out of the [`Series`].
pub(crate) type SeriesCol = (&'static str, fn(&mut Series) -> Owned);

fn u64s(v: &mut Vec<u64>) -> Owned {
    Owned::U64(std::mem::take(v))
}
fn widen(v: &mut Vec<u32>) -> Owned {
    Owned::U64(std::mem::take(v).into_iter().map(u64::from).collect())
}
fn f64s(v: &mut Vec<f64>) -> Owned {
    Owned::F64(std::mem::take(v))
}

/// series_queue's columns; the queue disciplines' gauges (`Series::q_gauges`) follow them, a
/// column each, only when a queue of the run publishes it.
pub(crate) const SERIES_QUEUE: &[SeriesCol] = &[
    ("time_ns", |s| u64s(&mut s.q_time_ns)),
    ("direction_index", |s| widen(&mut s.q_dir)),
    ("physical_queue", |s| widen(&mut s.q_sub)),
    ("queue_packets", |s| widen(&mut s.q_len_pkts)),
    ("queue_bytes", |s| u64s(&mut s.q_len_bytes)),
    ("avg_queue", |s| f64s(&mut s.q_avg)),
    ("avg_prec0", |s| f64s(&mut s.q_avg_prec[0])),
    ("avg_prec1", |s| f64s(&mut s.q_avg_prec[1])),
    ("avg_prec2", |s| f64s(&mut s.q_avg_prec[2])),
];

/// series_flow's columns.
pub(crate) const SERIES_FLOW: &[SeriesCol] = &[
    ("time_ns", |s| u64s(&mut s.f_time_ns)),
    ("flow", |s| widen(&mut s.f_flow)),
    ("throughput_bps", |s| f64s(&mut s.f_throughput_bps)),
    ("cwnd", |s| f64s(&mut s.f_cwnd)),
    ("ssthresh", |s| f64s(&mut s.f_ssthresh)),
];

/// series_meter's columns.
pub(crate) const SERIES_METER: &[SeriesCol] = &[
    ("time_ns", |s| u64s(&mut s.m_time_ns)),
    ("conditioner", |s| widen(&mut s.m_cond)),
    ("flow", |s| widen(&mut s.m_flow)),
    ("token_bytes", |s| f64s(&mut s.m_level)),
];

/// series_gauges' columns (`gauge` indexes `Series::gauge_names`).
pub(crate) const SERIES_GAUGES: &[SeriesCol] = &[
    ("time_ns", |s| u64s(&mut s.g_time_ns)),
    ("conditioner", |s| widen(&mut s.g_cond)),
    ("flow", |s| widen(&mut s.g_flow)),
    ("gauge", |s| widen(&mut s.g_name)),
    ("value", |s| f64s(&mut s.g_value)),
];

/// The names of a table's declared columns, in order, delay and counter columns expanded.
pub(crate) fn names<T>(cols: &[Col<T>]) -> Vec<String> {
    cols.iter()
        .flat_map(|c| match c.get {
            Get::Delay(_) => DELAY.iter().map(|d| d.name.to_string()).collect(),
            Get::Counters(_) => counters()
                .map(|k| format!("{}{}", c.name, k.name))
                .collect(),
            _ => vec![c.name.to_string()],
        })
        .collect()
}

/// Every table's declared column names, by the key of the run's result that holds it
/// (`qoslab._core.TABLE_COLUMNS`).
pub(crate) fn tables() -> Vec<(&'static str, Vec<String>)> {
    let series = |cols: &[SeriesCol]| cols.iter().map(|c| c.0.to_string()).collect::<Vec<_>>();
    vec![
        ("flows", names(FLOWS)),
        ("classes", names(CLASSES)),
        ("transfers", names(TRANSFERS)),
        ("processes", names(PROCESSES)),
        ("flow_drops", names(FLOW_DROPS)),
        ("links", names(LINKS)),
        ("series_queue", series(SERIES_QUEUE)),
        ("series_flow", series(SERIES_FLOW)),
        ("series_meter", series(SERIES_METER)),
        ("series_gauges", series(SERIES_GAUGES)),
        ("conditioners", names(CONDITIONERS)),
    ]
}

/// A numeric column as Python's `array.array` of type code `code` ("d": f64, "Q": u64), from
/// the values' native-endian bytes. Not a numpy array: building one imports numpy (0.1-0.2 s,
/// a third of a short run's whole process), which a run that only writes its summary never
/// needs; the tables wrap these buffers in numpy arrays without copying (qoslab.runs.simulate).
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
pub(crate) fn float_column<'py>(
    py: Python<'py>,
    d: &Bound<'py, PyDict>,
    name: &str,
    v: Vec<f64>,
) -> PyResult<()> {
    column(py, d, name, "d", &v, f64::to_ne_bytes)
}
pub(crate) fn count_column<'py>(
    py: Python<'py>,
    d: &Bound<'py, PyDict>,
    name: &str,
    v: Vec<u64>,
) -> PyResult<()> {
    column(py, d, name, "Q", &v, u64::to_ne_bytes)
}

/// Adds the columns `cols` of `rows` to `d`, in order.
pub(crate) fn add<'py, T>(
    py: Python<'py>,
    d: &Bound<'py, PyDict>,
    rows: &[T],
    decl: &[Col<T>],
) -> PyResult<()> {
    for c in decl {
        match c.get {
            Get::U64(g) => count_column(py, d, c.name, rows.iter().map(g).collect())?,
            Get::F64(g) => float_column(py, d, c.name, rows.iter().map(g).collect())?,
            Get::Text(g) => d.set_item(c.name, rows.iter().map(g).collect::<Vec<_>>())?,
            Get::Delay(g) => add(py, d, &rows.iter().map(g).collect::<Vec<_>>(), DELAY)?,
            Get::Counters(g) => {
                let all: Vec<FlowCounts> = rows.iter().map(g).collect();
                for (k, counter) in counters().enumerate() {
                    let name = format!("{}{}", c.name, counter.name);
                    count_column(py, d, &name, all.iter().map(|x| x.0[k]).collect())?;
                }
            }
        }
    }
    Ok(())
}

/// The table of `rows` with the columns `cols`.
pub(crate) fn table<'py, T>(
    py: Python<'py>,
    rows: &[T],
    decl: &[Col<T>],
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    add(py, &d, rows, decl)?;
    Ok(d)
}

/// The time series table of the columns `cols`, moved out of `s`.
pub(crate) fn series<'py>(
    py: Python<'py>,
    s: &mut Series,
    decl: &[SeriesCol],
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (name, take) in decl {
        match take(s) {
            Owned::U64(v) => count_column(py, &d, name, v)?,
            Owned::F64(v) => float_column(py, &d, name, v)?,
        }
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use qoslab_core::aqm::DROP_REASONS;

    #[test]
    fn every_table_names_each_column_once() {
        for (table, names) in tables() {
            let mut seen = std::collections::HashSet::new();
            for n in &names {
                assert!(seen.insert(n), "{table}: column {n} declared twice");
            }
        }
        assert_eq!(names(CLASSES)[2..], names(DELAY)[..]);
    }

    #[test]
    fn drop_reason_columns_follow_the_cores_reasons() {
        // The declarations index the drop counters by position: their names must be the core's
        // reasons in the core's order.
        let flows = names(FLOWS);
        let links = names(LINKS);
        // the senders' declared counters come between the whole-run and the window columns
        let n = qoslab_core::traffic::sender::N_COUNTERS;
        for (k, reason) in DROP_REASONS.iter().enumerate() {
            let at = |t: &[String], n: String| t.iter().position(|x| *x == n).unwrap();
            assert_eq!(at(&flows, format!("{reason}_drops")), 10 + k);
            assert_eq!(at(&flows, format!("window_{reason}_drops")), 32 + n + k);
            assert_eq!(at(&links, format!("window_{reason}_drops")), 11 + k);
        }
    }
}
