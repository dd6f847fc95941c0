//! Trace replay ([`crate::traffic::trace`]): the rows of a CSV file of `time, size[, flow]`
//! sent open loop, each `time` seconds after the flow's start with its own size.

use std::sync::Arc;

use serde::Serialize;

use super::{Generate, SourceContext, SourceKind};
use crate::params::{KeyError, Param, ParamKind, Table};
use crate::rng::SimRng;
use crate::traffic::trace::{TraceInfo, TraceRow};
use crate::units::SimTime;

const FILE: Param = Param::new(
    "trace",
    ParamKind::Name,
    "required",
    "A CSV file of `time, size[, flow]` rows (seconds, bytes), relative to the scenario file.",
);
const FLOW: Param = Param::new(
    "trace_flow",
    ParamKind::Name,
    "every row",
    "Replay only the rows of this flow id.",
);

#[derive(Debug, Clone, Serialize)]
pub struct TraceReplay {
    /// The file, its digest and row count (the rows themselves are shared).
    pub trace: TraceInfo,
    #[serde(skip)]
    pub rows: Arc<[TraceRow]>,
}

impl SourceKind for TraceReplay {
    type Runtime = RowsGen;
    const DOC: &'static str = "A trace replayed open loop: the (time, size[, flow]) rows of a \
                               CSV file.";
    const PAGE: &'static str = "models/udp.md";
    const PARAMS: &'static [Param] = &[FILE, FLOW];
    const SIZE_DIST: bool = false;
    fn from_table(t: &Table, ctx: &mut SourceContext) -> Result<Self, KeyError> {
        let file = t.required(
            FILE.name,
            t.str(FILE.name)?,
            "`trace`, a CSV file of (time, size[, flow]) rows",
        )?;
        let flow = t.str(FLOW.name)?;
        let (trace, rows) = (ctx.read_trace)(&t.key(FILE.name), file, flow)?;
        Ok(TraceReplay { trace, rows })
    }
    fn build(&self) -> RowsGen {
        RowsGen
    }
    fn rows(&self) -> Option<Arc<[TraceRow]>> {
        Some(self.rows.clone())
    }
}

/// A trace's send times are its rows' ([`SourceKind::rows`]): no gap is drawn.
#[derive(Debug, Clone)]
pub struct RowsGen;

impl Generate for RowsGen {
    fn gap(&mut self, _: u32, _: &mut SimRng) -> SimTime {
        unreachable!("a trace's packets are sent at its rows' times")
    }
}
