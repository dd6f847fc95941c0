//! CoDel against RFC 8289's timing: entry after one interval above target, then drops spaced
//! by the control law interval/√count; marks instead of drops with ECN; leaving the dropping
//! state when the sojourn time falls below target.

use super::*;
use crate::packet::{PacketKind, PacketMeta};

const MS: u64 = 1_000_000;

/// A scripted queue: `arrivals_per_ms` packets of 1000 bytes arrive each millisecond and one
/// leaves (the transmitter asks once per millisecond), for `ms` milliseconds. Returns the times
/// of drops and marks.
fn script(
    params: CodelParams,
    arrivals_per_ms: impl Fn(u64) -> u32,
    ms: u64,
    ect: bool,
) -> (Vec<SimTime>, Vec<SimTime>, Codel) {
    let mut q = Codel::new(params, Limit::Packets(1_000_000));
    let mut arena = PacketArena::with_capacity(64);
    let mut dropped = Vec::new();
    let (mut drops, mut marks) = (Vec::new(), Vec::new());
    for t in 0..ms {
        let now = t * MS;
        for _ in 0..arrivals_per_ms(t) {
            let mut p = PacketMeta::new(0, PacketKind::Data, 1000, 0, now);
            p.ecn = if ect { 2 } else { 0 };
            let id = arena.alloc(p);
            assert_eq!(
                q.enqueue(now, id, &mut arena, &mut dropped),
                Verdict::Enqueue
            );
        }
        if let Some(d) = q.dequeue(now, &mut arena, &mut dropped) {
            if d.marked {
                marks.push(now);
            }
            arena.free(d.id);
        }
        for (id, r) in dropped.drain(..) {
            assert_eq!(r, DropReason::Early);
            drops.push(now);
            arena.free(id);
        }
    }
    (drops, marks, q)
}

const RFC: CodelParams = CodelParams {
    target: 5 * MS,
    interval: 100 * MS,
    ecn: false,
};

/// The k-th drop (k ≥ 1, the first being the entry) is due at T0 + Σ_{j<k} interval/√j.
fn due(t0: SimTime, k: usize) -> SimTime {
    (1..k).fold(t0, |t, j| control_law(t, 100 * MS, j as u32))
}

#[test]
fn drops_follow_the_control_law_in_a_growing_queue() {
    // Two arrivals and one departure per ms: the queue and the sojourn time grow without bound.
    let (drops, marks, q) = script(RFC, |_| 2, 3000, false);
    assert!(marks.is_empty());
    // The packet leaving at t arrived at ⌊t/2⌋: its sojourn time reaches target (5 ms) at
    // t = 9 ms, and one interval later CoDel enters the dropping state.
    assert_eq!(drops[0], 109 * MS, "entry after one interval above target");
    assert!(drops.len() > 20, "{} drops", drops.len());
    for (k, &t) in drops.iter().enumerate() {
        let expect = due(drops[0], k + 1);
        // The transmitter asks once per ms: a drop happens at the first ask at or after its
        // due time.
        assert!(
            t >= expect && t < expect + MS,
            "drop {} at {} ms, due {} ms",
            k + 1,
            t as f64 / 1e6,
            expect as f64 / 1e6
        );
    }
    assert_eq!(q.state.count as usize, drops.len());
    assert!(q.state.dropping);
}

#[test]
fn ecn_marks_where_it_would_drop() {
    let (drops, marks, _) = script(RFC, |_| 2, 1500, false);
    let ecn = CodelParams { ecn: true, ..RFC };
    let (no_drops, ecn_marks, _) = script(ecn, |_| 2, 1500, true);
    assert!(
        no_drops.is_empty(),
        "ECN-capable packets are marked, not dropped"
    );
    assert_eq!(marks.len(), 0);
    // Marks come at the control law's times as drops do (a mark does not shorten the queue,
    // so later sojourn times differ slightly; the schedule does not depend on them).
    assert_eq!(ecn_marks[0], drops[0]);
    for (k, &t) in ecn_marks.iter().enumerate() {
        let expect = due(ecn_marks[0], k + 1);
        assert!(t >= expect && t < expect + MS, "mark {} at {t}", k + 1);
    }
    // Packets that are not ECN-capable are still dropped with `ecn` on.
    let (plain_drops, plain_marks, _) = script(ecn, |_| 2, 1500, false);
    assert_eq!(plain_drops, drops);
    assert!(plain_marks.is_empty());
}

#[test]
fn leaves_the_dropping_state_below_target_and_never_drops_an_uncongested_queue() {
    // 2 per ms for 400 ms, then nothing: the queue drains, the sojourn time falls and the
    // dropping state ends once the queue has drained below target.
    let (drops, _, q) = script(RFC, |t| if t < 400 { 2 } else { 0 }, 2000, false);
    assert!(!drops.is_empty());
    assert!(!q.state.dropping);
    // One arrival and one departure per ms: sojourn 0, never a drop.
    let (none, _, _) = script(RFC, |_| 1, 3000, false);
    assert!(none.is_empty());
    // A standing queue of 4 ms (below target) is left alone, however long it stands.
    let (none, _, _) = script(RFC, |t| if t == 0 { 5 } else { 1 }, 3000, false);
    assert!(none.is_empty());
}

#[test]
fn tail_drops_at_the_buffer_limit() {
    let mut q = Codel::new(RFC, Limit::Packets(2));
    let mut arena = PacketArena::with_capacity(4);
    let mut dropped = Vec::new();
    let verdicts: Vec<Verdict> = (0..3)
        .map(|_| {
            let id = arena.alloc(PacketMeta::new(0, PacketKind::Data, 500, 0, 0));
            q.enqueue(0, id, &mut arena, &mut dropped)
        })
        .collect();
    assert_eq!(
        verdicts,
        [Verdict::Enqueue, Verdict::Enqueue, Verdict::Overflow]
    );
    assert_eq!((q.waiting(), q.waiting_bytes()), (2, 1000));
}
