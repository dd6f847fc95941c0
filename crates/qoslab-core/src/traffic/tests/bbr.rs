//! BBR v1 on the scripted path of [`super::pipe`]: a 10,000 packet/s bottleneck (100 µs per
//! segment, an unlimited buffer) and a 40 ms propagation RTT (40.1 ms with one
//! serialisation: the smallest RTT a segment can see), BDP 401 packets.

use super::pipe::Pipe;
use super::{config, TcpVariant, MS};
use crate::traffic::cc::bbr::{Bbr, Mode, GAIN_CYCLE};
use crate::traffic::cc::AnyCc;
use crate::units::NS_PER_SEC;

fn bbr(p: &Pipe) -> &Bbr {
    let AnyCc::Bbr(b) = &p.tcp.cc else {
        panic!("not BBR")
    };
    b
}

#[test]
fn bbr_estimates_the_path_cycles_its_gains_and_probes_rtt() {
    let mut c = config("reno");
    c.variant = TcpVariant::Bbr;
    c.window_pkts = 100_000;
    let mut p = Pipe::new(&c, 40 * MS, 100_000);
    p.start();
    // The ProbeBW phases of each stay in ProbeBW (sampled every millisecond), and the times
    // ProbeRTT is entered.
    let mut stints: Vec<Vec<usize>> = vec![Vec::new()];
    let mut probe_rtt_at = Vec::new();
    let mut last_mode = Mode::Startup;
    for ms in 1..=45_000u64 {
        assert_eq!(p.run_until(ms * MS), 0, "no timeout");
        let b = bbr(&p);
        let phases = stints.last_mut().expect("a stint");
        let phase = b.cycle_index as usize;
        if b.mode == Mode::ProbeBw && phases.last() != Some(&phase) {
            phases.push(phase);
        }
        if b.mode == Mode::ProbeRtt && last_mode != Mode::ProbeRtt {
            probe_rtt_at.push(ms as f64 / 1e3);
            stints.push(Vec::new());
        }
        last_mode = b.mode;
    }
    let b = bbr(&p);
    let (rate, rtprop) = (b.btlbw, b.rtprop as f64 / NS_PER_SEC as f64);
    eprintln!(
        "bbr: btlbw {rate:.1} pkt/s (10000), rtprop {:.4} ms (40.1), probe_rtt at {probe_rtt_at:?}, \
         first phases {:?}",
        rtprop * 1e3,
        &stints[0][..12]
    );
    assert!((rate - 10_000.0).abs() / 10_000.0 < 0.02, "btlbw {rate}");
    assert!((rtprop - 0.0401).abs() / 0.0401 < 0.02, "rtprop {rtprop}");
    // The gain cycle: in each stay in ProbeBW (the cycle restarts after ProbeRTT), the eight
    // phases in order; every one of them used.
    for phases in &stints {
        for w in phases.windows(2) {
            assert_eq!(w[1], (w[0] + 1) % GAIN_CYCLE.len(), "{phases:?}");
        }
    }
    let mut seen: Vec<usize> = stints.concat();
    assert!(seen.len() > 64);
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen, (0..8).collect::<Vec<_>>());
    // ProbeRTT about every 10 s (10 s after the last RTprop update, which ProbeRTT refreshes
    // 200 ms and a round after entering it).
    assert!(probe_rtt_at.len() >= 3, "{probe_rtt_at:?}");
    for w in probe_rtt_at.windows(2) {
        let gap = w[1] - w[0];
        assert!((10.0..10.6).contains(&gap), "{probe_rtt_at:?}");
    }
    assert_eq!(b.probe_rtt_count as usize, probe_rtt_at.len());
}

/// The send quantum of draft §4.2.2 in segments of 1500 bytes: 1 below a pacing rate of
/// 1.2 Mbit/s (100 segments/s), 2 below 24 Mbit/s, else 1 ms of the rate up to 64 KB; none
/// before the segment size is known.
#[test]
fn the_send_quantum_follows_the_draft() {
    use crate::traffic::cc::CongestionControl;
    let mut b = Bbr::default();
    b.pacing_rate = 10_000.0;
    assert_eq!(b.send_quantum(), 0.0);
    b.set_segment_size(1500);
    for (rate, quantum) in [(50.0, 1.0), (1_000.0, 2.0), (10_000.0, 10.0), (1e6, 43.0)] {
        b.pacing_rate = rate;
        assert_eq!(b.send_quantum(), quantum, "{rate} segments/s");
    }
    // BBRInflight (§4.2.3.2): gain · BtlBw · RTprop + 3 quanta. At 1,000 segments/s and
    // 40 ms the BDP is 40 segments and the quantum 2: cwnd_gain 2 targets 86.
    b.pacing_rate = 1_000.0;
    b.btlbw = 1_000.0;
    b.rtprop = 40 * MS;
    assert_eq!(b.inflight(2.0), Some(86.0));
}
