//! WRED — weighted RED: one average over the whole physical queue, and one RED curve and count
//! per drop precedence (RFC 2597 AFx1..AFx3), so lower precedences are dropped earlier at the
//! same congestion level. Averaging, idle correction and count spreading are RED's.

use super::af::{AfAverage, AF_AVERAGE};
use super::dsred::{DsredMode, DsredOptions, Flavoured, AF_ECN};
use super::ewma::AvgQueue;
use super::red::{RedCurve, RedDropper};
use super::registry::{LineDiscipline, Ns2Export, QueueDiscipline};
use super::rio::{read_precedences, PRECEDENCE_CURVES};
use super::{Aqm, QueueView, Verdict};
use crate::packet::PacketMeta;
use crate::params::{KeyError, Param, Table, FLAVOUR, LIMIT};
use crate::rng::SimRng;
use crate::units::{Limit, SimTime};

/// WRED's configuration: the averaging and a curve per precedence, IN first.
#[derive(Debug, Clone)]
pub struct WredConfig {
    pub avg: AfAverage,
    pub curves: Vec<RedCurve>,
    pub options: DsredOptions,
}

impl QueueDiscipline for WredConfig {
    const AVERAGES: crate::aqm::registry::Averages = crate::aqm::registry::Averages {
        one: Some("WRED's average queue"),
        by_mode: &[],
    };
    const DOC: &'static str =
        "WRED: one average of the whole queue, a RED curve and count per drop precedence.";
    const NS3: Result<&'static str, &'static str> =
        Err("WRED (per-precedence RED) has no ns-3 queue disc");
    /// It has no `mode` (its flat form's is empty).
    const NS2_DSRED: &'static [(&'static str, &'static str)] = &[("", "WRED")];
    const PARAMS: &'static [Param] = &[
        LIMIT,
        AF_AVERAGE[0],
        AF_AVERAGE[1],
        AF_AVERAGE[2],
        AF_AVERAGE[3],
        PRECEDENCE_CURVES[0],
        PRECEDENCE_CURVES[1],
        PRECEDENCE_CURVES[2],
        AF_ECN.param,
        FLAVOUR,
    ];
    fn hint(key: &str) -> &'static str {
        match key {
            "min_th" | "max_th" | "max_p" => {
                ": give each precedence's curve as `in`, `mid` and `out` tables"
            }
            _ => "",
        }
    }
    fn from_table(t: &Table, limit: Limit) -> Result<Self, KeyError> {
        let avg = AfAverage::read(t)?;
        let curves = read_precedences(t, avg.gentle)?;
        Ok(WredConfig {
            avg,
            options: DsredOptions::read(t, &avg, &curves, limit)?,
            curves,
        })
    }
    fn ns2(&self, limit: Limit) -> Ns2Export {
        DsredOptions::ns2(&self.avg, &self.curves, limit)
    }
    fn emulable(&self) -> bool {
        // decides at enqueue from the codepoint and its own state, as in the simulator
        true
    }
}

impl LineDiscipline for WredConfig {
    type Runtime = Flavoured<Wred>;
    fn build(&self, link_bps: u64) -> Flavoured<Wred> {
        let a = &self.avg;
        let reference = Wred::new(&self.curves, a.w_q, a.wait, a.ptc(link_bps));
        self.options
            .build(reference, DsredMode::Wred, a, &self.curves, link_bps)
    }
}

#[derive(Debug, Clone)]
pub struct Wred {
    pub w_q: f64,
    pub ptc: f64,
    pub avg: AvgQueue,
    pub droppers: Vec<RedDropper>,
}

impl Wred {
    pub fn new(curves: &[RedCurve], w_q: f64, wait: bool, ptc: f64) -> Self {
        assert!(
            (1..=3).contains(&curves.len()),
            "WRED takes 1 to 3 precedences"
        );
        Wred {
            w_q,
            ptc,
            avg: AvgQueue::default(),
            droppers: curves.iter().map(|c| RedDropper::new(*c, wait)).collect(),
        }
    }
}

impl Aqm for Wred {
    fn on_enqueue(
        &mut self,
        now: SimTime,
        pkt: &PacketMeta,
        q: QueueView,
        rng: &mut SimRng,
    ) -> Verdict {
        let p = (pkt.prec as usize).min(self.droppers.len() - 1);
        let avg = self
            .avg
            .on_arrival(now, q.len_pkts as f64, self.w_q, self.ptc);
        let v = self.droppers[p].judge(avg, pkt.size, None, q.len_pkts as f64, rng);
        if v == Verdict::ForcedDrop {
            self.droppers[p].on_forced_drop();
        }
        v
    }

    fn on_overflow(&mut self, _now: SimTime, pkt: &PacketMeta, _decided: Verdict) {
        let p = (pkt.prec as usize).min(self.droppers.len() - 1);
        self.droppers[p].on_forced_drop();
    }

    fn on_idle(&mut self, now: SimTime) {
        self.avg.on_idle(now);
    }

    fn average(&self) -> Option<f64> {
        Some(self.avg.avg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::PacketKind;
    use crate::units::Limit;

    /// One shared average (every arrival moves it, whatever its precedence), and per
    /// precedence the curve's drop rate at that average: AF13 above its max_th is always
    /// dropped while AF11 sees p_b = 0.1·(50−40)/(100−40).
    #[test]
    fn shared_average_per_precedence_curves() {
        let curves = [
            RedCurve {
                min_th: 40.0,
                max_th: 100.0,
                max_p: 0.1,
                gentle: false,
            },
            RedCurve {
                min_th: 20.0,
                max_th: 60.0,
                max_p: 0.2,
                gentle: false,
            },
            RedCurve {
                min_th: 10.0,
                max_th: 30.0,
                max_p: 0.5,
                gentle: false,
            },
        ];
        let mut w = Wred::new(&curves, 1e-9, false, 1000.0);
        w.avg.idle = false;
        w.avg.avg = 50.0;
        let mut rng = SimRng::derive(2, 2);
        let view = QueueView {
            len_pkts: 50,
            len_bytes: 0,
            limit: Limit::Packets(1000),
            len_by_prec: [20, 20, 10],
        };
        let mut drops = [0u32; 3];
        let mut forced = 0;
        let n = 150_000;
        for i in 0..n {
            let mut p = PacketMeta::new(0, PacketKind::Data, 1000, 0, 0);
            p.prec = (i % 3) as u8;
            match w.on_enqueue(i as u64, &p, view, &mut rng) {
                Verdict::EarlyDrop => drops[p.prec as usize] += 1,
                Verdict::ForcedDrop => forced += 1,
                _ => {}
            }
            w.avg.avg = 50.0;
        }
        let per = (n / 3) as f64;
        let pb0 = 0.1 * 10.0 / 60.0;
        let pb1 = 0.2 * 30.0 / 40.0;
        assert!(
            (drops[0] as f64 / per - 2.0 * pb0).abs() < 0.1 * 2.0 * pb0,
            "{}",
            drops[0] as f64 / per
        );
        assert!(
            (drops[1] as f64 / per - 2.0 * pb1).abs() < 0.05 * 2.0 * pb1,
            "{}",
            drops[1] as f64 / per
        );
        assert_eq!(drops[2], 0);
        assert_eq!(forced as f64, per);
    }
}
