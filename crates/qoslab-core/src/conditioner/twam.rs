//! TWAM — the TCP-Window-Aware Marker of Bouras & Sevasti ("Performance enhancement of an AF
//! service using TCP-aware marking and dynamic WRED", Section 3).
//!
//! One TWAM sits at the ingress router of an AF FEC LSP and holds per-flow state for every flow
//! of the LSP: the contracted rate `r_i` and the congestion window `W_i`. Every operating
//! interval of `α·RTT_LSP` it recomputes, for each flow (Eq. 3),
//!
//! ```text
//!     p_i = min(1, r_i · Σ_k W_k / Σ_k r_k · W_k)
//! ```
//!
//! and throughout the next interval marks each data packet of flow `i` IN (green) with
//! probability `p_i` and OUT (yellow) otherwise. `Σ_k W_k` approximates the LSP's congestion
//! window (Eqs. 1–2) and is what the ingress signals to the Dynamic WRED queues along the LSP
//! ([`crate::aqm::Dwred`]); [`Twam::tick`] returns it.
//!
//! The paper assumes the ingress knows each flow's congestion window. Two sources:
//!
//! * [`WindowSource::Edge`] — an estimate from what the ingress itself observes: the data
//!   packets of flow `i` that crossed it during the last interval, divided by `α` (packets per
//!   `RTT_LSP`; a flow's cwnd is the data it sends per round trip). Only forward data passes
//!   the ingress's LSP-bound interface, so sequence/ACK bookkeeping is not available there.
//!   Retransmissions count (they occupy the window), pure ACKs do not.
//! * [`WindowSource::Oracle`] — the TCP senders' true cwnd, handed in by the simulator at each
//!   interval ([`Twam::tick`] with `Some(cwnds)`). A flow enters the sums once the ingress has
//!   seen one of its packets.
//!
//! Flows with no contract (`r_i = 0`, including flows the scenario did not list) get
//! `p_i = 0` from Eq. 3: all OUT. Pure ACKs are not metered: they keep the colour they carry
//! and draw nothing. Before the first interval ends the windows are unknown and Eq. 3 is
//! evaluated with equal windows (`p_i = min(1, n·r_i / Σ r_k)`). When an interval saw no
//! traffic at all the previous probabilities are kept.
//!
//! State is one small record per flow of the scenario, allocated when the marker is built;
//! nothing is allocated per packet or per interval.

use serde::Serialize;

use super::{Color, Meter};
use crate::packet::{PacketKind, PacketMeta};
use crate::rng::SimRng;
use crate::units::SimTime;

/// Where the per-flow congestion windows `W_i` come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WindowSource {
    /// Data packets of the flow seen at the ingress per `RTT_LSP`.
    Edge,
    /// The TCP sender's cwnd, supplied by the host every interval.
    Oracle,
}

/// How the IN probabilities are computed from the windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TwamFormula {
    /// Eq. 3 read with the denominator's Σ over the products:
    /// `p_i = min(1, r_i Σ W_k / Σ_k r_k W_k)`.
    Eq3,
    /// Eq. 3 read with each Σ binding only its neighbour (the printed formula uses `i` for both
    /// the flow and the summation index), so the denominator is `(Σ_k r_k) · W_i`:
    /// `p_i = min(1, (r_i / Σ r_k) · Σ W_k / W_i)` (1 when `W_i = 0`). Each flow's IN packets
    /// per interval are then its contract's share of the LSP window: the prose's "mark the W_i
    /// packets of each flow in proportion to r_i".
    Eq3Neighbour,
}

/// TWAM parameters. `rates[i]` is flow `i`'s contracted rate `r_i` (bit/s; index = the flow's
/// position in the scenario, 0 = no contract).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TwamParams {
    /// `RTT_LSP`, ns.
    pub rtt_lsp: SimTime,
    /// `α` ∈ {1, 2, 3, …}: the operating interval is `α·RTT_LSP`.
    pub alpha: u32,
    pub window: WindowSource,
    pub rates: Vec<u64>,
    pub formula: TwamFormula,
}

impl TwamParams {
    /// The operating interval `α·RTT_LSP`, ns.
    pub fn interval(&self) -> SimTime {
        self.rtt_lsp * self.alpha as u64
    }

    pub fn validate(&self) -> Result<(), String> {
        if self.rtt_lsp == 0 {
            return Err("rtt must be positive (the LSP round-trip time)".into());
        }
        if self.alpha == 0 {
            return Err("alpha must be a positive integer".into());
        }
        if self.rates.iter().all(|&r| r == 0) {
            return Err("rates must give at least one flow a positive contracted rate".into());
        }
        Ok(())
    }
}

/// Per-flow TWAM state.
#[derive(Debug, Clone, Copy, Default)]
struct FlowState {
    /// `r_i`, bit/s.
    rate: u64,
    /// Data packets seen in the current interval.
    seen: u64,
    /// Whether any packet of the flow has crossed the ingress.
    active: bool,
    /// `W_i` used for the current probabilities (packets).
    window: f64,
    /// `p_i` of the current interval.
    p_in: f64,
    /// Packets marked IN / OUT (cumulative).
    marked_in: u64,
    marked_out: u64,
}

/// The TWAM state machine: one instance for the whole LSP aggregate.
#[derive(Debug, Clone)]
pub struct Twam {
    p: TwamParams,
    flows: Vec<FlowState>,
    /// `Σ_k W_k` of the last completed interval (packets); NaN before the first.
    aggregate_window: f64,
    /// Completed intervals.
    pub intervals: u64,
}

impl Twam {
    pub fn new(p: TwamParams) -> Self {
        let mut flows: Vec<FlowState> = p
            .rates
            .iter()
            .map(|&rate| FlowState {
                rate,
                ..FlowState::default()
            })
            .collect();
        // Unknown windows: Eq. 3 with equal windows.
        let sum_r: f64 = p.rates.iter().map(|&r| r as f64).sum();
        let n = p.rates.iter().filter(|&&r| r > 0).count() as f64;
        for f in &mut flows {
            f.p_in = if sum_r > 0.0 {
                (f.rate as f64 * n / sum_r).min(1.0)
            } else {
                0.0
            };
        }
        Twam {
            p,
            flows,
            aggregate_window: f64::NAN,
            intervals: 0,
        }
    }

    pub fn params(&self) -> &TwamParams {
        &self.p
    }

    /// Eq. 3: `p_i = min(1, r_i Σ W_k / Σ r_k W_k)` for `rates` and `windows` of equal length;
    /// `None` when `Σ r_k W_k = 0` (no contracted flow has a window).
    pub fn p_in_for(rates: &[u64], windows: &[f64], i: usize) -> Option<f64> {
        let sum_w: f64 = windows.iter().sum();
        let sum_rw: f64 = rates.iter().zip(windows).map(|(&r, &w)| r as f64 * w).sum();
        (sum_rw > 0.0).then(|| (rates[i] as f64 * sum_w / sum_rw).min(1.0))
    }

    /// `p_i` of flow `i` for the current interval.
    pub fn p_in(&self, i: usize) -> f64 {
        self.flows.get(i).map_or(0.0, |f| f.p_in)
    }

    /// `W_i` used for the current probabilities (packets).
    pub fn window(&self, i: usize) -> f64 {
        self.flows.get(i).map_or(0.0, |f| f.window)
    }

    /// `Σ_k W_k` of the last completed interval (packets; NaN before the first).
    pub fn aggregate_window(&self) -> f64 {
        self.aggregate_window
    }

    /// Packets of flow `i` marked (IN, OUT) so far.
    pub fn marked(&self, i: usize) -> (u64, u64) {
        self.flows
            .get(i)
            .map_or((0, 0), |f| (f.marked_in, f.marked_out))
    }

    /// Closes an operating interval: takes the windows (`oracle[k]` = flow `k`'s cwnd for
    /// [`WindowSource::Oracle`], ignored for the edge estimate), recomputes every `p_i` by
    /// Eq. 3, restarts the packet counts and returns `Σ_k W_k` (packets), the LSP window to
    /// signal to the Dynamic WRED queues.
    pub fn tick(&mut self, _now: SimTime, oracle: Option<&[f64]>) -> f64 {
        let alpha = self.p.alpha as f64;
        let mut sum_w = 0.0;
        let mut sum_rw = 0.0;
        for (k, f) in self.flows.iter_mut().enumerate() {
            f.window = match (self.p.window, oracle) {
                (WindowSource::Oracle, Some(c)) if f.active => c.get(k).copied().unwrap_or(0.0),
                (WindowSource::Oracle, _) => 0.0,
                (WindowSource::Edge, _) => f.seen as f64 / alpha,
            };
            f.seen = 0;
            sum_w += f.window;
            sum_rw += f.rate as f64 * f.window;
        }
        if sum_rw > 0.0 {
            let sum_r: f64 = self.flows.iter().map(|f| f.rate as f64).sum();
            for f in &mut self.flows {
                f.p_in = match self.p.formula {
                    TwamFormula::Eq3 => (f.rate as f64 * sum_w / sum_rw).min(1.0),
                    TwamFormula::Eq3Neighbour if f.window > 0.0 => {
                        (f.rate as f64 / sum_r * sum_w / f.window).min(1.0)
                    }
                    TwamFormula::Eq3Neighbour => 1.0,
                };
            }
        }
        self.aggregate_window = sum_w;
        self.intervals += 1;
        sum_w
    }
}

impl Meter for Twam {
    fn timer_period(&self) -> Option<SimTime> {
        Some(self.p.interval())
    }

    /// Closes an operating interval ([`Twam::tick`]) and signals `Σ_k W_k`.
    fn on_timer(&mut self, now: SimTime, windows: &[f64]) -> Option<f64> {
        Some(self.tick(now, Some(windows)))
    }

    /// Without the flow the marker cannot tell whose packet it is: treated as uncontracted.
    fn meter(&mut self, _now: SimTime, _size: u32, _pre: Color, _rng: &mut SimRng) -> Color {
        Color::Yellow
    }

    fn meter_packet(
        &mut self,
        _now: SimTime,
        pkt: &PacketMeta,
        pre_color: Color,
        rng: &mut SimRng,
    ) -> Color {
        if pkt.kind == PacketKind::Ack {
            return pre_color;
        }
        let i = pkt.flow as usize;
        if i >= self.flows.len() {
            // Flows beyond the configured list have no contract (validated scenarios list
            // every flow, so this is only reached by direct use).
            return Color::Yellow;
        }
        let f = &mut self.flows[i];
        f.active = true;
        f.seen += 1;
        let green = f.p_in >= 1.0 || (f.p_in > 0.0 && rng.uniform() < f.p_in);
        if green {
            f.marked_in += 1;
            Color::Green
        } else {
            f.marked_out += 1;
            Color::Yellow
        }
    }

    fn gauges(&self, _now: SimTime, out: &mut dyn FnMut(&'static str, f64)) {
        out("aggregate_window_pkts", self.aggregate_window);
        out("intervals", self.intervals as f64);
    }
}

// --- scenario keys ----------------------------------------------------------------------

use super::registry::{FlatMeter, MeterContext, MeterExports, MeterKind, ScopeRule};
use crate::params::typed::{Decl, Duration, Word};
use crate::params::{at_least, key_error, KeyError, Param, ParamKind, Table};

const RTT: Decl<Duration> = Decl::new(
    "rtt",
    ParamKind::Duration,
    "required",
    "The LSP round-trip time RTT_LSP.",
)
.positive();
const ALPHA: Decl<u32> = Decl::new(
    "alpha",
    ParamKind::Integer { min: 1 },
    "1",
    "α: the operating interval in RTT_LSP (a whole number).",
);
const WINDOW_SOURCE: Decl<Word> = Decl::new(
    "window_source",
    ParamKind::Choice {
        choices: &["edge", "oracle"],
    },
    "edge",
    "Windows estimated at the ingress, or the senders' cwnd.",
);
const FORMULA: Decl<Word> = Decl::new(
    "formula",
    ParamKind::Choice {
        choices: &["eq3", "eq3_neighbour"],
    },
    "eq3",
    "How Eq. 3 is read: eq3, the denominator's Σ over the products Σ r_k·W_k; eq3_neighbour, each Σ binding its neighbour, (Σ r_k)·W_i.",
);

impl MeterKind for TwamParams {
    type Runtime = Twam;
    /// ns-2's dsRED has no window-aware marker; the emulator's link daemon does not drive its
    /// periodic ticks and window feed.
    const EXPORTS: MeterExports = MeterExports {
        ns2: Err("TWAM (Bouras & Sevasti's TCP-window-aware marker, per-flow IN probabilities from the flows' congestion windows) is not one of ns-2's dsRED policers"),
        emulator: Err("it needs the simulator's periodic window updates"),
    };
    const DOC: &'static str = "Bouras & Sevasti's TCP-Window-Aware Marker: per-flow IN probabilities from the flows' windows and contracted rates (Eq. 3), every α·RTT_LSP; signals Σ W to DWRED queues.";
    const PARAMS: &'static [Param] = &[
        Param {
            name: "rates",
            kind: ParamKind::Tables { params: &[] },
            default: "required",
            doc: "Contracted rate r_i per flow name, e.g. { f0 = \"1Mbps\" }; unlisted flows are all OUT.",
        },
        RTT.param,
        ALPHA.param,
        WINDOW_SOURCE.param,
        FORMULA.param,
    ];
    const SCOPE: ScopeRule = ScopeRule::Aggregate(
        "a twam marker holds all the LSP's flows: scope must be \"aggregate\"",
    );
    fn hint(key: &str) -> &'static str {
        if key == "mode" {
            ": a twam marker is colour-blind: remove `mode`"
        } else {
            ""
        }
    }
    fn from_table(t: &Table, ctx: &MeterContext) -> Result<Self, KeyError> {
        let table = t.table("rates")?.ok_or_else(|| {
            key_error(
                t.key("rates"),
                "a twam marker needs `rates`, a table of contracted rates by flow name (e.g. { f0 = \"1Mbps\" })",
            )
        })?;
        let mut rates = vec![0u64; ctx.flows.len()];
        for (name, r) in table {
            let k = format!("{}.{name}", t.key("rates"));
            let &i = ctx.flows.get(name).ok_or_else(|| {
                key_error(
                    k.clone(),
                    format!("unknown flow {name:?} (rates are keyed by flow name)"),
                )
            })?;
            rates[i] = match r {
                toml::Value::String(s) => {
                    crate::units::parse_rate(s).map_err(|e| key_error(k, e))?
                }
                v => {
                    return Err(key_error(
                        k,
                        format!("expected a rate such as \"1Mbps\", got {v}"),
                    ))
                }
            };
        }
        let rtt = t.get(&RTT)?;
        let alpha = t.get(&ALPHA)?;
        Ok(TwamParams {
            rtt_lsp: rtt,
            alpha,
            window: match t.get(&WINDOW_SOURCE)? {
                "oracle" => WindowSource::Oracle,
                _ => WindowSource::Edge,
            },
            rates,
            formula: match t.get(&FORMULA)? {
                "eq3_neighbour" => TwamFormula::Eq3Neighbour,
                _ => TwamFormula::Eq3,
            },
        })
    }
    fn check(&self) -> Result<(), String> {
        self.validate()
    }
    fn build(&self) -> Twam {
        Twam::new(self.clone())
    }
    fn flat<'a>(&'a self, f: &mut FlatMeter<'a>) {
        f.twam = Some(self);
    }
}

const _: ParamKind = at_least(0.0);

#[cfg(test)]
mod tests {
    use super::*;

    fn params(window: WindowSource, rates: &[u64]) -> TwamParams {
        TwamParams {
            rtt_lsp: 100_000_000,
            alpha: 1,
            window,
            rates: rates.to_vec(),
            formula: TwamFormula::Eq3,
        }
    }

    fn data(flow: u32) -> PacketMeta {
        PacketMeta::new(flow, PacketKind::Data, 1000, 0, 0)
    }

    #[test]
    fn eq3_by_hand_and_the_cap_at_one() {
        // r = 1, 2, 4 Mbit/s; W = 10, 10, 10: ΣW = 30, Σ rW = 70 → p = 30/70, 60/70, 120/70 → 1.
        let r = [1_000_000, 2_000_000, 4_000_000];
        let w = [10.0, 10.0, 10.0];
        let p: Vec<f64> = (0..3).map(|i| Twam::p_in_for(&r, &w, i).unwrap()).collect();
        assert!((p[0] - 3.0 / 7.0).abs() < 1e-12, "{p:?}");
        assert!((p[1] - 6.0 / 7.0).abs() < 1e-12, "{p:?}");
        assert_eq!(p[2], 1.0);
        // Windows in proportion to the rates: W_i = c r_i → p_i = r_i Σr / Σr².
        let w = [5.0, 10.0, 20.0];
        let p0 = Twam::p_in_for(&r, &w, 0).unwrap();
        assert!((p0 - 7.0 / 21.0).abs() < 1e-12, "{p0}");
        // Equal rates: p = 1 whatever the windows (r ΣW = Σ rW exactly: the "otherwise" case).
        let p = Twam::p_in_for(&[3, 3], &[1.0, 50.0], 1).unwrap();
        assert_eq!(p, 1.0);
        // No window anywhere: undefined.
        assert_eq!(Twam::p_in_for(&r, &[0.0; 3], 0), None);
        // An uncontracted flow is all OUT.
        assert_eq!(Twam::p_in_for(&[0, 5], &[10.0, 10.0], 0), Some(0.0));
    }

    #[test]
    fn edge_windows_are_packets_seen_per_rtt_and_feed_eq3() {
        let mut t = Twam::new(TwamParams {
            alpha: 2,
            ..params(WindowSource::Edge, &[1_000_000, 3_000_000])
        });
        // Initial probabilities: equal windows → p = min(1, 2 r_i / Σr) = 0.5, 1.
        assert!((t.p_in(0) - 0.5).abs() < 1e-12);
        assert_eq!(t.p_in(1), 1.0);
        let mut rng = SimRng::derive(1, 1);
        // One interval (α = 2 RTTs): flow 0 sends 40 packets, flow 1 sends 20, plus ACKs that
        // must not count.
        for _ in 0..40 {
            t.meter_packet(0, &data(0), Color::Green, &mut rng);
        }
        for _ in 0..20 {
            t.meter_packet(0, &data(1), Color::Green, &mut rng);
            let ack = PacketMeta::new(1, PacketKind::Ack, 40, 0, 0);
            assert_eq!(t.meter_packet(0, &ack, Color::Red, &mut rng), Color::Red);
        }
        let sum_w = t.tick(200_000_000, None);
        // W = 20, 10 packets per RTT.
        assert_eq!((t.window(0), t.window(1)), (20.0, 10.0));
        assert_eq!(sum_w, 30.0);
        assert_eq!(t.aggregate_window(), 30.0);
        // p_0 = 1·30 / (1·20 + 3·10) = 0.6; p_1 = 3·30/50 = 1.8 → 1.
        assert!((t.p_in(0) - 0.6).abs() < 1e-12, "{}", t.p_in(0));
        assert_eq!(t.p_in(1), 1.0);
        // An empty interval keeps the probabilities and signals 0.
        assert_eq!(t.tick(400_000_000, None), 0.0);
        assert!((t.p_in(0) - 0.6).abs() < 1e-12);
    }

    #[test]
    fn oracle_windows_come_from_the_host_for_flows_seen() {
        let mut t = Twam::new(params(
            WindowSource::Oracle,
            &[1_000_000, 1_000_000, 2_000_000],
        ));
        let mut rng = SimRng::derive(2, 2);
        t.meter_packet(0, &data(0), Color::Green, &mut rng);
        t.meter_packet(0, &data(2), Color::Green, &mut rng);
        // Flow 1 never crossed the ingress: its cwnd is ignored.
        let sum_w = t.tick(1, Some(&[8.0, 99.0, 4.0]));
        assert_eq!(sum_w, 12.0);
        // p_0 = 1·12 / (8 + 8) = 0.75; p_2 = 2·12/16 → 1.
        assert!((t.p_in(0) - 0.75).abs() < 1e-12);
        assert_eq!(t.p_in(2), 1.0);
        // Without the oracle values every window is 0: probabilities kept.
        assert_eq!(t.tick(2, None), 0.0);
        assert!((t.p_in(0) - 0.75).abs() < 1e-12);
    }

    #[test]
    fn marking_frequency_over_many_packets_is_p_i() {
        // r = 1, 2, 3, 4 Mbit/s, equal edge windows → p = 0.4, 0.8, 1, 1.
        let mut t = Twam::new(params(
            WindowSource::Edge,
            &[1_000_000, 2_000_000, 3_000_000, 4_000_000, 0],
        ));
        let mut rng = SimRng::derive(3, 3);
        // The uncontracted flow 4 is silent in the first interval (else it adds to Σ W).
        for k in 0..4 {
            for _ in 0..50 {
                t.meter_packet(0, &data(k), Color::Green, &mut rng);
            }
        }
        t.tick(1, None);
        let before: Vec<(u64, u64)> = (0..5).map(|k| t.marked(k)).collect();
        let n = 40_000u64;
        for k in 0..5u32 {
            for _ in 0..n {
                t.meter_packet(2, &data(k), Color::Green, &mut rng);
            }
        }
        let expect = [0.4, 0.8, 1.0, 1.0, 0.0];
        for (k, e) in expect.iter().enumerate() {
            let (i, o) = t.marked(k);
            let (i, o) = (i - before[k].0, o - before[k].1);
            assert_eq!(i + o, n);
            let frac = i as f64 / n as f64;
            // Four standard deviations of a binomial proportion (exact for p = 0 and 1).
            let tol = 4.0 * (e * (1.0 - e) / n as f64).sqrt();
            assert!((frac - e).abs() <= tol, "flow {k}: {frac} vs {e}");
        }
    }

    #[test]
    fn neighbour_reading_colours_each_flow_its_share_of_the_lsp_window() {
        let mut t = Twam::new(TwamParams {
            formula: TwamFormula::Eq3Neighbour,
            ..params(WindowSource::Oracle, &[1_000_000, 3_000_000])
        });
        let mut rng = SimRng::derive(4, 4);
        t.meter_packet(0, &data(0), Color::Green, &mut rng);
        t.meter_packet(0, &data(1), Color::Green, &mut rng);
        // W = 10, 30 → shares 10, 30: p = 1, 1; W = 20, 20 → shares 10, 30: p = 0.5, 1.
        t.tick(1, Some(&[10.0, 30.0]));
        assert_eq!((t.p_in(0), t.p_in(1)), (1.0, 1.0));
        t.tick(2, Some(&[20.0, 20.0]));
        assert!((t.p_in(0) - 0.5).abs() < 1e-12);
        assert_eq!(t.p_in(1), 1.0);
        // Eq. 3 on the same windows: p_0 = 40/80 = 0.5, p_1 = 3·40/80 → 1; on W = 10, 30 it
        // gives p_0 = 40/100 = 0.4 where the flow is exactly at its share.
        assert!((Twam::p_in_for(&[1, 3], &[10.0, 30.0], 0).unwrap() - 0.4).abs() < 1e-12);
    }

    #[test]
    fn the_largest_contract_always_gets_p_one_under_eq3() {
        // r_max Σ W ≥ Σ r_k W_k for any windows: Eq. 3 never marks the largest contract OUT.
        let r = [1u64, 2, 3, 4];
        for w in [
            [1.0, 1.0, 1.0, 100.0],
            [50.0, 1.0, 1.0, 1.0],
            [0.0, 0.0, 3.0, 7.0],
        ] {
            assert_eq!(Twam::p_in_for(&r, &w, 3), Some(1.0), "{w:?}");
        }
    }

    #[test]
    fn validation_names_the_parameter() {
        let mut p = params(WindowSource::Edge, &[1]);
        p.alpha = 0;
        assert!(p.validate().unwrap_err().contains("alpha"));
        let p = params(WindowSource::Edge, &[0, 0]);
        assert!(p.validate().unwrap_err().contains("rates"));
        let mut p = params(WindowSource::Edge, &[1]);
        p.rtt_lsp = 0;
        assert!(p.validate().unwrap_err().contains("rtt"));
    }
}
