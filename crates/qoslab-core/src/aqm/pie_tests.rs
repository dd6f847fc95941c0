//! PIE against RFC 8033: the update formula by hand for scripted delays, the controller run
//! through the discipline on a scripted queue, the burst allowance, and de-randomised drops.

use super::*;
use crate::packet::{PacketKind, PacketMeta};

const MS: u64 = 1_000_000;

fn rfc() -> PieConfig {
    PieConfig {
        target: 15 * MS,
        t_update: 15 * MS,
        alpha: 0.125,
        beta: 1.25,
        max_burst: 150 * MS,
        ecn: false,
        mark_ecn_th: 0.1,
        derandomize: true,
        mean_pkt_size: 1500,
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-15 + 1e-12 * b.abs()
}

#[test]
fn update_matches_the_rfc_formula_computed_by_hand() {
    let c = rfc();
    // drop_prob 0, qdelay 30 ms, qdelay_old 0: p = 0.125·0.015 + 1.25·0.030 = 0.039375, scaled
    // by 1/2048 because drop_prob < 1e-6.
    let p1 = update_drop_prob(&c, 0.0, 0.030, 0.0);
    assert!(close(p1, 0.039375 / 2048.0), "{p1}");
    // Next update, the delay unchanged: p = 0.001875, and 1e-5 ≤ drop_prob < 1e-4 scales it
    // by 1/128.
    let p2 = update_drop_prob(&c, p1, 0.030, 0.030);
    assert!(close(p2, p1 + 0.001875 / 128.0), "{p2}");
    // Above 10 % the increase is capped at 2 %.
    assert!(close(update_drop_prob(&c, 0.5, 0.1, 0.0), 0.52));
    // An empty queue twice in a row: the step (−0.001875, unscaled above 10 %) then a 2 %
    // decay.
    assert!(close(
        update_drop_prob(&c, 0.5, 0.0, 0.0),
        (0.5 - 0.001875) * 0.98
    ));
    // Bounded to [0, 1].
    assert_eq!(update_drop_prob(&c, 0.0, 0.0, 0.010), 0.0);
    assert_eq!(update_drop_prob(&c, 0.995, 0.2, 0.0), 1.0);
}

/// Feeds `pie` a scripted queue: `per_ms` arrivals of 1000 bytes and one departure each ms.
/// Returns the number of early drops per ms and the drop_prob after each ms.
fn drive(pie: &mut Pie, per_ms: impl Fn(u64) -> u32, ms: u64) -> (Vec<u32>, Vec<f64>) {
    let mut arena = PacketArena::with_capacity(1024);
    let mut dropped = Vec::new();
    let (mut drops, mut probs) = (Vec::new(), Vec::new());
    for t in 0..ms {
        let now = t * MS;
        let mut d = 0;
        for _ in 0..per_ms(t) {
            let id = arena.alloc(PacketMeta::new(0, PacketKind::Data, 1000, 0, now));
            match pie.enqueue(now, id, &mut arena, &mut dropped) {
                Verdict::Enqueue => {}
                Verdict::EarlyDrop => {
                    d += 1;
                    arena.free(id);
                }
                v => panic!("unexpected {v:?}"),
            }
        }
        if let Some(x) = pie.dequeue(now, &mut arena, &mut dropped) {
            arena.free(x.id);
        }
        drops.push(d);
        probs.push(pie.drop_prob);
    }
    (drops, probs)
}

#[test]
fn the_controller_follows_the_update_on_the_measured_delay_every_t_update() {
    // 31 packets at t = 0, then one in and one out per ms: a standing queue of 30 packets whose
    // sojourn time is 30 ms. No drop can shorten it during the burst allowance.
    let c = rfc();
    let mut pie = Pie::new(c, Limit::Packets(1000), SimRng::derive(1, 1));
    let (drops, probs) = drive(&mut pie, |t| if t == 0 { 31 } else { 1 }, 150);
    assert!(
        drops.iter().all(|&d| d == 0),
        "no drops within the burst allowance"
    );
    // Replay the updates at 15, 30, ... ms on the delays the queue had: 30 ms from t = 30 ms
    // (the first departure after the start saw 1 ms, the delay grows 1 ms per ms up to 30).
    let mut expect = 0.0;
    let mut old = 0.0;
    for k in 1..10u64 {
        let t = k * 15;
        // The delay measured by the last departure before the update at t (at t - 1 ms).
        let q = ((t - 1).min(30)) as f64 / 1e3;
        expect = update_drop_prob(&c, expect, q, old);
        old = q;
        assert!(
            close(probs[t as usize], expect),
            "update {k}: {} vs {expect}",
            probs[t as usize]
        );
    }
    assert!(expect > 0.0);
}

#[test]
fn burst_allowance_then_drops_under_a_persistent_overload() {
    // Two arrivals per departure: the delay grows; after the 150 ms allowance PIE drops.
    let mut pie = Pie::new(rfc(), Limit::Packets(100_000), SimRng::derive(1, 2));
    let (drops, probs) = drive(&mut pie, |_| 2, 3000);
    let first = drops.iter().position(|&d| d > 0).expect("PIE drops") as u64;
    assert!(
        first >= 150,
        "first drop at {first} ms, inside the burst allowance"
    );
    assert!(probs[2999] > 0.1, "drop_prob {}", probs[2999]);
    // Without PIE's drops (a disabled controller: α = β = 0) nothing is ever dropped.
    let off = PieConfig {
        alpha: 0.0,
        beta: 0.0,
        ..rfc()
    };
    let mut none = Pie::new(off, Limit::Packets(100_000), SimRng::derive(1, 2));
    assert_eq!(drive(&mut none, |_| 2, 3000).0.iter().sum::<u32>(), 0);
}

#[test]
fn derandomised_drops_are_spaced_between_0_85_and_8_5_over_drop_prob() {
    let mut pie = Pie::new(rfc(), Limit::Packets(1_000_000), SimRng::derive(3, 3));
    let mut arena = PacketArena::with_capacity(1 << 16);
    let mut dropped = Vec::new();
    // A long queue, a fixed drop_prob of 5 %, and a next update far away.
    for _ in 0..100 {
        let id = arena.alloc(PacketMeta::new(0, PacketKind::Data, 1000, 0, 0));
        pie.fifo.push(Held {
            id,
            size: 1000,
            enqueued_at: 0,
        });
    }
    pie.burst_allowance = 0;
    pie.drop_prob = 0.05;
    pie.qdelay_old = 0.1;
    pie.next_update = u64::MAX;
    let mut gaps = Vec::new();
    let mut since = 0;
    for _ in 0..200_000 {
        let id = arena.alloc(PacketMeta::new(0, PacketKind::Data, 1000, 0, 1));
        since += 1;
        if pie.enqueue(1, id, &mut arena, &mut dropped) == Verdict::EarlyDrop {
            arena.free(id);
            gaps.push(since);
            since = 0;
        } else {
            let h = pie.fifo.pop().unwrap();
            arena.free(h.id);
        }
    }
    let (min, max) = (*gaps.iter().min().unwrap(), *gaps.iter().max().unwrap());
    // accu_prob must reach 0.85 before a random drop (17 arrivals at 5 %) and forces one at
    // 8.5 (170 arrivals; one more if the sum rounds below).
    assert!(min >= 17 && max <= 171, "gaps {min}..{max}");
    // 17 arrivals, then geometric with mean 1/0.05: about 37.
    let mean = gaps.iter().sum::<u32>() as f64 / gaps.len() as f64;
    assert!((34.0..40.0).contains(&mean), "mean gap {mean}");
    // Independent drops: gaps as short as 1 and as long as chance makes them.
    let mut plain = Pie::new(
        PieConfig {
            derandomize: false,
            ..rfc()
        },
        Limit::Packets(1_000_000),
        SimRng::derive(3, 3),
    );
    plain.fifo = std::mem::take(&mut pie.fifo);
    plain.burst_allowance = 0;
    plain.drop_prob = 0.05;
    plain.qdelay_old = 0.1;
    plain.next_update = u64::MAX;
    let mut short = 0;
    let mut since = 0;
    for _ in 0..200_000 {
        let id = arena.alloc(PacketMeta::new(0, PacketKind::Data, 1000, 0, 1));
        since += 1;
        if plain.enqueue(1, id, &mut arena, &mut dropped) == Verdict::EarlyDrop {
            arena.free(id);
            short += (since < 17) as u32;
            since = 0;
        } else {
            let h = plain.fifo.pop().unwrap();
            arena.free(h.id);
        }
    }
    assert!(short > 1000, "{short} gaps under 17 packets");
}
