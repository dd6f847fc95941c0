//! FQ-CoDel's scheduling and overflow rules (RFC 8290 §4): byte fairness by DRR, new flows
//! first, drop from the fattest queue, and the hash spreading flows over the queues.

use super::*;
use crate::packet::{PacketKind, PacketMeta};

fn cfg(flows: u32) -> FqCodelConfig {
    FqCodelConfig {
        codel: CodelParams {
            target: 5_000_000,
            interval: 100_000_000,
            ecn: false,
        },
        quantum: 1514,
        flows,
        drop_batch: 64,
    }
}

/// A queue whose hash maps flows 0, 1, 2, ... to distinct queues (checked).
fn distinct(n_flows: u32, limit: Limit) -> FqCodel {
    let q = FqCodel::new(cfg(1024), limit, 0x5eed);
    let mut seen: Vec<usize> = (0..n_flows).map(|f| q.classify(f)).collect();
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(
        seen.len(),
        n_flows as usize,
        "the test flows share no queue"
    );
    q
}

fn push(q: &mut FqCodel, arena: &mut PacketArena, flow: u32, size: u32, now: SimTime) -> Verdict {
    let id = arena.alloc(PacketMeta::new(flow, PacketKind::Data, size, 0, now));
    let mut dropped = Vec::new();
    let v = q.enqueue(now, id, arena, &mut dropped);
    for (id, _) in dropped {
        arena.free(id);
    }
    if v != Verdict::Enqueue {
        arena.free(id);
    }
    v
}

#[test]
fn drr_shares_bytes_equally_whatever_the_packet_sizes() {
    // Flow 0 sends 1500-byte packets, flow 1 300-byte packets; both backlogged. Over many
    // rounds each gets the same bytes (within one quantum).
    let mut q = distinct(2, Limit::Packets(100_000));
    let mut arena = PacketArena::with_capacity(4096);
    for _ in 0..1000 {
        push(&mut q, &mut arena, 0, 1500, 0);
    }
    for _ in 0..5000 {
        push(&mut q, &mut arena, 1, 300, 0);
    }
    let mut bytes = [0u64; 2];
    let mut dropped = Vec::new();
    for _ in 0..3000 {
        // All at time 0: no sojourn time, so CoDel never drops.
        let d = q.dequeue(0, &mut arena, &mut dropped).expect("backlogged");
        let p = arena.free(d.id);
        bytes[p.flow as usize] += p.size as u64;
    }
    assert!(dropped.is_empty());
    let diff = bytes[0].abs_diff(bytes[1]);
    assert!(diff <= 1514 + 1500, "bytes served {bytes:?}");
}

#[test]
fn a_new_sparse_flow_is_served_before_backlogged_ones() {
    let mut q = distinct(3, Limit::Packets(100_000));
    let mut arena = PacketArena::with_capacity(1024);
    let mut dropped = Vec::new();
    for _ in 0..100 {
        push(&mut q, &mut arena, 0, 1500, 0);
        push(&mut q, &mut arena, 1, 1500, 0);
    }
    // Serve a few rounds so both bulk queues are old flows.
    for _ in 0..10 {
        let d = q.dequeue(0, &mut arena, &mut dropped).unwrap();
        arena.free(d.id);
    }
    // A sparse packet of flow 2 arrives: it is the very next to leave.
    push(&mut q, &mut arena, 2, 200, 0);
    let d = q.dequeue(0, &mut arena, &mut dropped).unwrap();
    assert_eq!(arena.free(d.id).flow, 2);
}

#[test]
fn overflow_drops_from_the_fattest_queue_head_not_the_arrival() {
    let mut q = distinct(2, Limit::Packets(10));
    let mut arena = PacketArena::with_capacity(64);
    for _ in 0..8 {
        assert_eq!(push(&mut q, &mut arena, 0, 1000, 0), Verdict::Enqueue);
    }
    assert_eq!(push(&mut q, &mut arena, 1, 1000, 0), Verdict::Enqueue);
    assert_eq!(push(&mut q, &mut arena, 1, 1000, 0), Verdict::Enqueue);
    // The 11th packet (flow 1, the thin flow) overflows the buffer: flow 0, the fattest with
    // 8 packets, loses half its bytes from its head; the arrival is kept.
    assert_eq!(push(&mut q, &mut arena, 1, 1000, 0), Verdict::Enqueue);
    let backlog: Vec<usize> = q.backlogs().filter(|&n| n > 0).collect();
    assert_eq!(q.waiting(), 7);
    assert!(backlog.contains(&4) && backlog.contains(&3), "{backlog:?}");
    // With one flow only, the arrival is at the tail of the fattest queue; the head goes.
    let mut one = distinct(1, Limit::Packets(2));
    assert_eq!(push(&mut one, &mut arena, 0, 1000, 0), Verdict::Enqueue);
    assert_eq!(push(&mut one, &mut arena, 0, 1000, 0), Verdict::Enqueue);
    assert_eq!(push(&mut one, &mut arena, 0, 1000, 0), Verdict::Enqueue);
    assert_eq!(one.waiting(), 1);
}

#[test]
fn the_hash_spreads_flows_and_depends_on_the_perturbation() {
    let a = FqCodel::new(cfg(1024), Limit::Packets(10), 1);
    let b = FqCodel::new(cfg(1024), Limit::Packets(10), 2);
    let mut counts = vec![0u32; 1024];
    for f in 0..100_000 {
        counts[a.classify(f)] += 1;
    }
    // 100000 flows in 1024 queues: about 97.7 each; every queue is used, none is crowded.
    assert!(
        counts.iter().all(|&c| (50..160).contains(&c)),
        "{:?}",
        (counts.iter().min(), counts.iter().max())
    );
    let same = (0..1000)
        .filter(|&f| a.classify(f) == b.classify(f))
        .count();
    assert!(
        same < 20,
        "{same} of 1000 flows in the same queue under another perturbation"
    );
}
