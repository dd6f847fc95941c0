//! Per-component micro-benchmarks (`cargo bench -p qoslab-core`): the cost of one decision of
//! each marker and queue discipline, of the event queue, and of a whole small simulation.
//! Speed is reported here and by `qoslab bench` (whole runs against ns-2), never asserted.

use divan::{black_box, Bencher};
use qoslab_core::aqm::red::{RedCurve, RedParams};
use qoslab_core::aqm::{Aqm, QueueView, Red, Rio, RioMode};
use qoslab_core::conditioner::{
    Ard, ArdParams, Color, ColorMode, Meter, TokenBucket, TokenBucketParams, Tsw2cm, Tsw2cmParams,
};
use qoslab_core::engine::{EventKind, EventQueue};
use qoslab_core::packet::{PacketKind, PacketMeta};
use qoslab_core::params::Flavour;
use qoslab_core::rng::SimRng;
use qoslab_core::units::Limit;
use qoslab_core::{Scenario, Simulation};

fn main() {
    divan::main();
}

const N: u64 = 10_000;
/// 1000-byte packets arriving every 5 ms (1.6 Mbit/s).
const GAP_NS: u64 = 5_000_000;

fn meter_stream<M: Meter>(bencher: Bencher, make: impl Fn() -> M) {
    bencher.with_inputs(&make).bench_local_values(|mut m| {
        let mut rng = SimRng::derive(1, 1);
        let mut greens = 0u64;
        for k in 0..N {
            let pre = if k % 3 == 0 {
                Color::Yellow
            } else {
                Color::Green
            };
            greens += (m.meter(k * GAP_NS, 1000, pre, &mut rng) == Color::Green) as u64;
        }
        black_box(greens)
    });
}

/// 10 000 packets through a token bucket (1 Mbit/s, 10 kB).
#[divan::bench]
fn token_bucket_10k(bencher: Bencher) {
    meter_stream(bencher, || {
        TokenBucket::new(TokenBucketParams {
            cir: 1_000_000,
            cbs: 10_000,
            mode: ColorMode::Blind,
            flavour: Flavour::Reference,
        })
    });
}

/// 10 000 packets through TSW2CM (1 Mbit/s, 1 s window).
#[divan::bench]
fn tsw2cm_10k(bencher: Bencher) {
    meter_stream(bencher, || {
        Tsw2cm::new(Tsw2cmParams {
            ctr: 1_000_000,
            win_len: 1_000_000_000,
            flavour: Flavour::Reference,
        })
    });
}

/// 10 000 packets through ARD (TPR_max 1.2 Mbit/s, the paper's defaults).
#[divan::bench]
fn ard_10k(bencher: Bencher) {
    meter_stream(bencher, || Ard::new(ArdParams::paper(1_200_000)));
}

fn queue_stream<A: Aqm>(bencher: Bencher, make: impl Fn() -> A) {
    bencher.with_inputs(&make).bench_local_values(|mut a| {
        let mut rng = SimRng::derive(2, 2);
        let mut pkt = PacketMeta::new(0, PacketKind::Data, 1000, 0, 0);
        let mut admitted = 0u64;
        for k in 0..N {
            // A queue oscillating between 0 and 119 packets.
            let len = k % 120;
            pkt.prec = (k % 3 == 0) as u8 * 2;
            let q = QueueView {
                len_pkts: len,
                len_bytes: len * 1000,
                limit: Limit::Packets(150),
                len_by_prec: [len / 2, 0, len - len / 2],
            };
            let v = a.on_enqueue(k * 100_000, &pkt, q, &mut rng);
            admitted += matches!(v, qoslab_core::aqm::Verdict::Enqueue) as u64;
        }
        black_box(admitted)
    });
}

fn curve(lo: f64, hi: f64, p: f64) -> RedCurve {
    RedCurve {
        min_th: lo,
        max_th: hi,
        max_p: p,
        gentle: false,
    }
}

/// 10 000 RED decisions (25/75/0.1, w_q 0.002).
#[divan::bench]
fn red_10k(bencher: Bencher) {
    queue_stream(bencher, || {
        Red::new(RedParams {
            curve: curve(25.0, 75.0, 0.1),
            w_q: 0.002,
            wait: true,
            byte_mode: false,
            mean_pkt_size: 1000,
            ecn: false,
            ptc: 1250.0,
        })
    });
}

/// 10 000 RIO-C decisions (IN 40/70/0.02, OUT 10/30/0.1).
#[divan::bench]
fn rio_10k(bencher: Bencher) {
    queue_stream(bencher, || {
        Rio::new(
            RioMode::Coupled,
            &[curve(40.0, 70.0, 0.02), curve(10.0, 30.0, 0.1)],
            0.002,
            false,
            1250.0,
        )
    });
}

/// 10 000 push/pop pairs with `pending` events pending, each rescheduled up to 100 ms ahead:
/// 400 is the 200-flow workload's queue (a heap), 50 000 the 10,000-flow one's (a calendar).
#[divan::bench(args = [400, 50_000])]
fn event_queue_10k(bencher: Bencher, pending: u32) {
    bencher
        .with_inputs(|| {
            let mut q = EventQueue::new();
            let mut rng = SimRng::derive(3, 3);
            for i in 0..pending {
                q.at((rng.uniform() * 1e8) as u64, EventKind::Arrive(i, 0));
            }
            (q, rng)
        })
        .bench_local_values(|(mut q, mut rng)| {
            for _ in 0..N {
                let e = q.pop().expect("non-empty");
                q.at(e.time + (rng.uniform() * 1e8) as u64, e.kind);
            }
            black_box(q.now())
        });
}

/// 10 000 packets arriving at one direction of the 5-flow scenario's bottleneck (1 Mbit/s),
/// a 500-byte packet every 3.6 ms: admission, transmission times, departure counting and
/// arrival at the far node, as the simulator does them, through its RED queue (`queue_ab`) or
/// its tail-drop one (`queue_ba`; the bench's dumbbells' access and exit links, two of a
/// packet's three hops). The link is 10 % overloaded: 8,997 packets are delivered, 925 (RED)
/// and 950 (tail-drop) dropped at admission. Each packet is also taken from the arena and given
/// back ([`arena_alloc_free_10k`] alone), which the simulator does once a packet, not once a
/// hop.
#[divan::bench(args = ["red", "droptail"])]
fn link_hop_10k(bencher: Bencher, queue: &str) {
    use qoslab_core::net::link::{Admit, LinkDir};
    use qoslab_core::packet::PacketArena;
    let sc = Scenario::from_toml(FIVE_FLOWS, "bench").expect("valid scenario");
    let l = &sc.links[sc.measurement.bottleneck_idx];
    let q = if queue == "red" {
        &l.queue_ab
    } else {
        &l.queue_ba
    };
    let aqm = qoslab_core::sim::build_aqm(q, l.bandwidth_bps);
    assert_eq!(
        q.type_name(),
        queue,
        "the bottleneck's queue in that direction"
    );
    bencher
        .with_inputs(|| {
            let link = LinkDir::new(
                0,
                0,
                1,
                l.bandwidth_bps,
                l.delay_ns,
                q.limit(),
                aqm.clone(),
                SimRng::derive(4, 4),
                (0, u64::MAX),
            );
            (link, PacketArena::with_capacity(64))
        })
        .bench_local_values(|(mut link, mut arena)| {
            let mut pending: Option<u64> = None;
            let mut delivered = 0u64;
            for k in 0..N {
                let now = k * 3_600_000;
                while let Some(t) = pending.filter(|&t| t <= now) {
                    link.advance(t);
                    let (id, next) = link.arrive();
                    arena.free(id);
                    delivered += 1;
                    pending = next.map(|(t, _)| t);
                }
                link.advance(now);
                let id = arena.alloc(PacketMeta::new(0, PacketKind::Data, 500, k, now));
                match link.enqueue(now, id, &mut arena) {
                    Admit::Queued { schedule_arrival } => {
                        pending = pending.or(schedule_arrival);
                    }
                    Admit::Dropped(_) => {
                        arena.free(id);
                    }
                }
            }
            black_box(delivered)
        });
}

/// 10 000 packets taken from the arena and given back: the part of `link_hop_10k` that the
/// simulator does once a packet (about every three hops in a dumbbell), not once a hop.
#[divan::bench]
fn arena_alloc_free_10k(bencher: Bencher) {
    use qoslab_core::packet::PacketArena;
    bencher
        .with_inputs(|| PacketArena::with_capacity(64))
        .bench_local_values(|mut arena| {
            let mut ids = 0;
            for k in 0..N {
                let now = k * 3_600_000;
                let id = arena.alloc(PacketMeta::new(0, PacketKind::Data, 500, k, now));
                ids += id;
                black_box(arena.free(id));
            }
            black_box(ids)
        });
}

/// 10 000 ACKs to a Reno sender in congestion avoidance (each acknowledges one segment and
/// releases the next): window growth, RTT sampling and the retransmission timer.
#[divan::bench]
fn tcp_ack_10k(bencher: Bencher) {
    use qoslab_core::traffic::tcp::Ns2Sender;
    let sc = Scenario::from_toml(FIVE_FLOWS, "bench").expect("valid scenario");
    let cfg = sc.flows[0].tcp.clone().expect("a TCP flow");
    bencher
        .with_inputs(|| {
            let mut s = Ns2Sender::new(&cfg, 0.0);
            let mut buf = Vec::new();
            s.start(0, &mut buf);
            (s, buf)
        })
        .bench_local_values(|(mut s, mut buf)| {
            for k in 0..N as i64 {
                buf.clear();
                s.on_ack((k as u64 + 1) * 1_000_000, k, false, &mut buf);
            }
            black_box(s.cwnd)
        });
}

const FIVE_FLOWS: &str = r#"
name = "bench-red-5flows"
duration = "20s"
[tcp]
packet_size = "500B"
window = 1000
[measurement]
start = "0s"
end = "20s"
[[node]]
name = "s{i}"
count = 5
[[node]]
name = "r1"
[[node]]
name = "r2"
[[link]]
name = "access{i}"
count = 5
a = "s{i}"
b = "r1"
bandwidth = "10Mbps"
delay = "44ms"
[[link]]
name = "bottleneck"
a = "r1"
b = "r2"
bandwidth = "1Mbps"
delay = "5ms"
queue_ab = { type = "red", limit = "100pkts", min_th = 25, max_th = 75, max_p = 0.01, w_q = 0.002 }
[[flow]]
name = "ftp{i}"
count = 5
src = "s{i}"
dst = "r2"
start = "uniform(0s, 1s)"
"#;

/// A whole simulation: 5 TCP flows over a 1 Mbit/s RED bottleneck for 20 s.
#[divan::bench]
fn simulate_red_5flows_20s(bencher: Bencher) {
    let sc = Scenario::from_toml(FIVE_FLOWS, "bench").expect("valid scenario");
    bencher.bench_local(|| {
        let mut sim = Simulation::new(&sc, 1);
        sim.run();
        black_box(sim.results().packet_hops)
    });
}
