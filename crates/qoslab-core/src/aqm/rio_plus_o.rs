//! RI+O — RED with IN, IN+OUT and OUT (H.-G. Kim, "A modified RIO for improving Assured
//! Service performance", KIPS Transactions 1999, Section 4 and Fig. 4).
//!
//! RIO-C (Clark & Fang) judges IN packets on `avg_in` with the IN parameters and OUT packets
//! on `avg_total` with the IN+OUT parameters; below 100 % subscription only OUT packets are
//! ever dropped, so the IN/OUT composition of the queue is left uncontrolled. RI+O adds a third
//! parameter set, the OUT parameters `min_out / max_out / P_max_out`, applied to
//! `avg_out = avg_total − avg_in`:
//!
//! * an arriving **IN** packet is judged as in RIO: the IN curve on `avg_in`;
//! * an arriving **OUT** packet is first judged by the IN+OUT curve on `avg_total`; if it
//!   survives, it is judged by the OUT curve on `avg_out`.
//!
//! As the paper states, both averages are computed on *every* arrival with the same `w_q`
//! ("whenever a packet arrives, the router calculates avg_in and avg_total, and with a single
//! subtraction obtains avg_out"), so `avg_out` is exactly the RED average of the OUT backlog.
//! (Clark & Fang's RIO-C, [`super::rio`], updates `avg_in` on IN arrivals only.)
//!
//! Each curve has its own RED count (a [`RedDropper`]); averaging, idle correction, count
//! spreading and forced drops are RED's. Two precedences only: precedence 0 is IN, every other
//! precedence (AFx2, AFx3, best effort) is OUT. Packet mode only.

use super::af::{curve_param, need_curve, AfAverage, AF_AVERAGE};
use super::ewma::AvgQueue;
use super::red::{RedCurve, RedDropper};
use super::registry::{LineDiscipline, Ns2Export, QueueDiscipline};
use super::{Aqm, QueueView, Verdict};
use crate::packet::PacketMeta;
use crate::params::{KeyError, Param, Table, LIMIT};
use crate::rng::SimRng;
use crate::units::{Limit, SimTime};

/// RI+O's configuration: the averaging and the `in`, `out` (IN+OUT) and `avg_out` curves.
#[derive(Debug, Clone)]
pub struct RioPlusOConfig {
    pub avg: AfAverage,
    pub curves: [RedCurve; 3],
}

impl QueueDiscipline for RioPlusOConfig {
    const AVERAGES: crate::aqm::registry::Averages = crate::aqm::registry::Averages {
        one: None,
        by_mode: &[(
            "",
            ["avg_in", "avg_total"],
            ["avg_in", "avg_total", "avg_out = avg_total − avg_in"],
        )],
    };
    const DOC: &'static str =
        "RI+O (Kim 1999): RIO-C plus OUT parameters judged on avg_out = avg_total − avg_in.";
    const PARAMS: &'static [Param] = &[
        LIMIT,
        AF_AVERAGE[0],
        AF_AVERAGE[1],
        AF_AVERAGE[2],
        AF_AVERAGE[3],
        curve_param("in", "The IN curve, judged on avg_in."),
        curve_param("out", "The IN+OUT curve, judged on avg_total."),
        curve_param(
            "avg_out",
            "The OUT curve, judged on avg_out = avg_total − avg_in.",
        ),
    ];
    fn hint(key: &str) -> &'static str {
        match key {
            "min_th" | "max_th" | "max_p" => {
                ": give the curves as `in` (on avg_in), `out` (IN+OUT, on avg_total) and \
                 `avg_out` (OUT, on avg_out) tables"
            }
            "mid" => ": RI+O has two drop precedences, IN and OUT",
            "flavour" => ": ns-2's dsRED has no RI+O, so there is no ns2 flavour of it",
            _ => "",
        }
    }
    fn from_table(t: &Table, _limit: Limit) -> Result<Self, KeyError> {
        let avg = AfAverage::read(t)?;
        let mut curves = [avg.gentle; 3].map(|_| None);
        for (i, (name, role)) in [
            ("in", "the IN curve, judged on avg_in"),
            ("out", "the IN+OUT curve, judged on avg_total"),
            (
                "avg_out",
                "the OUT curve, judged on avg_out = avg_total - avg_in",
            ),
        ]
        .into_iter()
        .enumerate()
        {
            let what =
                format!("a rio_plus_o queue needs `{name}` = {{ min_th, max_th, max_p }} ({role})");
            curves[i] = Some(need_curve(t, name, avg.gentle, &what)?);
        }
        Ok(RioPlusOConfig {
            avg,
            curves: curves.map(|c| c.expect("read")),
        })
    }
    fn ns2(&self, _limit: Limit) -> Ns2Export {
        Ns2Export::Refused(
            "queue type 'rio_plus_o' (RI+O) has no ns-2 equivalent: dsRED's RIO-C/RIO-D/WRED judge \
             each precedence on one average and cannot test OUT packets a second time on \
             avg_out = avg_total - avg_in"
                .into(),
        )
    }
    fn emulable(&self) -> bool {
        // decides at enqueue from the codepoint and its own state, as in the simulator
        true
    }
}

impl LineDiscipline for RioPlusOConfig {
    type Runtime = RioPlusO;
    fn build(&self, link_bps: u64) -> RioPlusO {
        let (a, c) = (&self.avg, &self.curves);
        RioPlusO::new(c[0], c[1], c[2], a.w_q, a.wait, a.ptc(link_bps))
    }
}

#[derive(Debug, Clone)]
pub struct RioPlusO {
    pub w_q: f64,
    /// Link capacity in mean-size packets per second (idle correction).
    pub ptc: f64,
    pub avg_in: AvgQueue,
    pub avg_total: AvgQueue,
    /// The IN parameters (`min_in / max_in / P_max_in`) on `avg_in`.
    pub in_: RedDropper,
    /// The IN+OUT parameters (`min_total / max_total / P_max_total`) on `avg_total`.
    pub total: RedDropper,
    /// The OUT parameters (`min_out / max_out / P_max_out`) on `avg_out`.
    pub out: RedDropper,
}

impl RioPlusO {
    pub fn new(
        in_: RedCurve,
        total: RedCurve,
        out: RedCurve,
        w_q: f64,
        wait: bool,
        ptc: f64,
    ) -> Self {
        RioPlusO {
            w_q,
            ptc,
            avg_in: AvgQueue::default(),
            avg_total: AvgQueue::default(),
            in_: RedDropper::new(in_, wait),
            total: RedDropper::new(total, wait),
            out: RedDropper::new(out, wait),
        }
    }

    /// `avg_out = avg_total − avg_in`, the RED average of the OUT backlog.
    #[inline]
    pub fn avg_out(&self) -> f64 {
        self.avg_total.avg - self.avg_in.avg
    }
}

impl Aqm for RioPlusO {
    fn on_enqueue(
        &mut self,
        now: SimTime,
        pkt: &PacketMeta,
        q: QueueView,
        rng: &mut SimRng,
    ) -> Verdict {
        let in_backlog = q.len_by_prec[0] as f64;
        let total_backlog = q.len_pkts as f64;
        self.avg_in.on_arrival(now, in_backlog, self.w_q, self.ptc);
        self.avg_total
            .on_arrival(now, total_backlog, self.w_q, self.ptc);
        let qlen = q.len_pkts as f64;
        if pkt.prec == 0 {
            let v = self.in_.judge(self.avg_in.avg, pkt.size, None, qlen, rng);
            if v == Verdict::ForcedDrop {
                self.in_.on_forced_drop();
            }
            return v;
        }
        // OUT: the IN+OUT test on avg_total first ...
        let mut v = self
            .total
            .judge(self.avg_total.avg, pkt.size, None, qlen, rng);
        if v == Verdict::ForcedDrop {
            self.total.on_forced_drop();
        }
        // ... and only a survivor meets the OUT test on avg_out.
        if v == Verdict::Enqueue {
            let avg_out = self.avg_out();
            v = self.out.judge(avg_out, pkt.size, None, qlen, rng);
            if v == Verdict::ForcedDrop {
                self.out.on_forced_drop();
            }
        }
        v
    }

    /// An IN overflow restarts the IN count; an OUT packet both tests passed restarts the
    /// IN+OUT count (a drop the IN+OUT test did not choose).
    fn on_overflow(&mut self, _now: SimTime, pkt: &PacketMeta, decided: Verdict) {
        if pkt.prec == 0 {
            self.in_.on_forced_drop();
        } else if decided == Verdict::Enqueue {
            self.total.on_forced_drop();
        }
    }

    fn on_idle(&mut self, now: SimTime) {
        self.avg_in.on_idle(now);
        self.avg_total.on_idle(now);
    }

    /// `avg_in`.
    fn average(&self) -> Option<f64> {
        Some(self.avg_in.avg)
    }

    /// `[avg_in, avg_total, avg_out]`.
    fn averages(&self) -> [f64; 3] {
        [self.avg_in.avg, self.avg_total.avg, self.avg_out()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::PacketKind;
    use crate::units::Limit;

    /// The paper's Table I parameters: IN 60/180/0.02, IN+OUT 30/90/0.05, OUT 10/30/0.1.
    fn paper() -> RioPlusO {
        let c = |min_th, max_th, max_p| RedCurve {
            min_th,
            max_th,
            max_p,
            gentle: false,
        };
        RioPlusO::new(
            c(60.0, 180.0, 0.02),
            c(30.0, 90.0, 0.05),
            c(10.0, 30.0, 0.1),
            1e-12,
            false,
            1000.0,
        )
    }

    fn pkt(prec: u8) -> PacketMeta {
        let mut p = PacketMeta::new(0, PacketKind::Data, 1000, 0, 0);
        p.prec = prec;
        p
    }

    fn view(in_: u64, out: u64) -> QueueView {
        QueueView {
            len_pkts: in_ + out,
            len_bytes: 1000 * (in_ + out),
            limit: Limit::Packets(10_000),
            len_by_prec: [in_, out, 0],
        }
    }

    /// Holds the averages at (avg_in, avg_total) and feeds `n` arrivals of precedence
    /// `prec`; returns the fraction dropped early or forced.
    fn drop_rate(r: &mut RioPlusO, avg_in: f64, avg_total: f64, prec: u8, n: u32) -> f64 {
        let mut rng = SimRng::derive(11, 3);
        let mut drops = 0;
        for i in 0..n {
            r.avg_in = AvgQueue {
                avg: avg_in,
                idle: false,
                idle_since: 0,
            };
            r.avg_total = AvgQueue {
                avg: avg_total,
                idle: false,
                idle_since: 0,
            };
            let v = r.on_enqueue(
                i as u64,
                &pkt(prec),
                view(avg_in as u64, (avg_total - avg_in) as u64),
                &mut rng,
            );
            if matches!(v, Verdict::EarlyDrop | Verdict::ForcedDrop) {
                drops += 1;
            }
        }
        drops as f64 / n as f64
    }

    /// The long-run drop rate of one RED curve held at `p_b` without `wait`: the mean gap
    /// between drops under ns-2's count spreading (count includes the arrival).
    fn curve_rate(p_b: f64) -> f64 {
        let (mut survive, mut mean_gap) = (1.0, 0.0);
        for k in 1..10_000 {
            let p = RedDropper::spread(p_b, k as f64, false);
            mean_gap += k as f64 * survive * p;
            survive *= 1.0 - p;
            if survive < 1e-15 {
                break;
            }
        }
        1.0 / mean_gap
    }

    /// avg_total below min_total (passes the IN+OUT test) but avg_out above max_out: every
    /// OUT packet is dropped by the OUT test, and RIO would have dropped none.
    #[test]
    fn out_passing_total_test_fails_avg_out_test() {
        let mut r = paper();
        // avg_in 0, avg_total = avg_out = 29: below min_total (30), inside the OUT band.
        let rate = drop_rate(&mut r, 0.0, 29.0, 1, 100_000);
        // p_b = 0.1 * 19/20 = 0.095 on the OUT curve.
        let expect = curve_rate(0.095);
        assert!((rate - expect).abs() < 0.01, "{rate} vs {expect}");
        assert_eq!(
            r.total.last_p, 0.0,
            "the IN+OUT test never drops below min_total"
        );
        // And with avg_out above max_out the OUT test forces every drop.
        let mut r = paper();
        let rate = drop_rate(&mut r, 50.0, 85.0, 2, 10_000);
        // avg_total 85 on 30/90/0.05 gives p_b ≈ 0.046; avg_out 35 > 30: forced.
        assert_eq!(rate, 1.0);
    }

    /// The reverse: avg_out below min_out (the OUT test would pass) but avg_total above
    /// max_total: the IN+OUT test drops the packet before the OUT test is consulted.
    #[test]
    fn out_failing_total_test_never_reaches_avg_out_test() {
        let mut r = paper();
        let rate = drop_rate(&mut r, 95.0, 100.0, 1, 10_000);
        assert_eq!(rate, 1.0);
        assert_eq!(
            r.out.count, 0.0,
            "the OUT test saw none of the packets the IN+OUT test dropped"
        );
        // In the probabilistic band of the IN+OUT curve, with avg_out = 5 < min_out, the
        // drop rate is the IN+OUT curve's alone: p_b = 0.05 * 30/60 = 0.025.
        let mut r = paper();
        let rate = drop_rate(&mut r, 55.0, 60.0, 1, 200_000);
        let expect = curve_rate(0.025);
        assert!((rate - expect).abs() < 0.003, "{rate} vs {expect}");
    }

    /// IN packets are judged on avg_in with the IN curve only: a huge avg_out (which would
    /// force every OUT drop) does not touch them.
    #[test]
    fn in_packets_ignore_the_out_parameters() {
        let mut r = paper();
        // avg_in 20 < min_in 60; avg_out 150 >> max_out 30, avg_total 170 >> max_total 90.
        assert_eq!(drop_rate(&mut r, 20.0, 170.0, 0, 10_000), 0.0);
        assert_eq!(r.out.count, 0.0);
        assert_eq!(r.total.count, 0.0);
        // In the IN curve's band: p_b = 0.02 * 60/120 = 0.01, whatever avg_out is.
        let mut r = paper();
        let rate = drop_rate(&mut r, 120.0, 240.0, 0, 200_000);
        let expect = curve_rate(0.01);
        assert!((rate - expect).abs() < 0.002, "{rate} vs {expect}");
    }

    /// Both averages move on every arrival with the same w_q, so avg_out = avg_total −
    /// avg_in is exactly the EWMA of the OUT backlog, also across idle periods.
    #[test]
    fn avg_out_is_the_ewma_of_the_out_backlog() {
        let w = 0.01;
        let c = RedCurve {
            min_th: 1e6,
            max_th: 2e6,
            max_p: 0.1,
            gentle: false,
        };
        let mut r = RioPlusO::new(c, c, c, w, false, 1000.0);
        let mut rng = SimRng::derive(1, 1);
        let (mut ein, mut eout) = (0.0f64, 0.0f64);
        let mut t = 0u64;
        for i in 0..5000u64 {
            let (qi, qo) = (i % 7, 20 + i % 5);
            t += 1_000_000;
            let mut decay = 1.0 - w;
            if i % 1000 == 999 {
                // 10 ms idle at 1000 pkt/s: m = 10 packets' worth of decay.
                r.on_idle(t);
                t += 10_000_000;
                decay = (1.0 - w).powi(11);
            }
            if i == 0 {
                // The first arrival ends the initial idle period (since t = 0).
                decay = (1.0 - w).powi(2);
            }
            let prec = (i % 3 == 0) as u8;
            r.on_enqueue(t, &pkt(prec), view(qi, qo), &mut rng);
            ein = decay * ein + w * qi as f64;
            eout = decay * eout + w * qo as f64;
            assert!((r.avg_in.avg - ein).abs() < 1e-9);
            assert!(
                (r.avg_out() - eout).abs() < 1e-9,
                "{} {}",
                r.avg_out(),
                eout
            );
            let a = r.averages();
            assert!((a[0] + a[2] - a[1]).abs() < 1e-12);
        }
    }

    /// A physically full queue overflows whatever the averages say.
    #[test]
    fn overflow_when_full() {
        let mut r = paper();
        let mut rng = SimRng::derive(1, 2);
        let mut v = view(2, 3);
        v.limit = Limit::Packets(5);
        let admit = crate::aqm::admit::<RioPlusO>;
        assert_eq!(admit(&mut r, 0, &pkt(0), v, &mut rng), Verdict::Overflow);
        assert_eq!(admit(&mut r, 1, &pkt(1), v, &mut rng), Verdict::Overflow);
    }
}
