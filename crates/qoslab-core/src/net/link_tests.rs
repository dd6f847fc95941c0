//! Tests of the link host ([`super`]): the transmitter's clock, the window's counters, and
//! the layout of a link direction.

/// A link direction of `bps` bit/s with no propagation delay and a tail-drop queue of
/// `limit`, measuring over `win` (the tests' common set-up).
fn tail_drop_dir(
    bps: u64,
    limit: crate::units::Limit,
    win: (crate::units::SimTime, crate::units::SimTime),
) -> super::LinkDir {
    use crate::aqm::{droptail::DropTail, AnyAqm};
    super::LinkDir::new(
        0,
        0,
        1,
        bps,
        0,
        limit,
        AnyAqm::DropTail(DropTail),
        crate::rng::SimRng::derive(0, 0),
        win,
    )
}

mod busy_clock_tests {
    use super::super::BusyClock;
    use crate::units::{ceil_div, NS_PER_SEC};
    use proptest::prelude::*;

    proptest! {
        /// Every end equals the busy period's start plus the division of the period's
        /// cumulative bits, whatever the sizes, the rate (1 bit/s to the largest accepted,
        /// 10 Tbit/s), the restarts and their times.
        #[test]
        fn ends_are_the_cumulative_division(
            bps in prop_oneof![1u64..1_000, 1_000u64..=crate::units::MAX_RATE_BPS],
            packets in proptest::collection::vec(
                (
                    prop_oneof![Just(1000u32), Just(40u32), 0u32..70_000],
                    proptest::option::of(prop_oneof![Just(0u64), 0u64..1 << 50]),
                ),
                1..300,
            ),
        ) {
            let mut clock = BusyClock::default();
            let (mut start, mut bits): (u64, u128) = (0, 0);
            for (size, restart) in packets {
                if let Some(t) = restart {
                    clock.restart(t);
                    (start, bits) = (t, 0);
                }
                bits += size as u128 * 8;
                let expected = start + ceil_div(bits * NS_PER_SEC as u128, bps as u128) as u64;
                prop_assert_eq!(clock.add(size, bps), expected);
            }
        }
    }
}

mod window_tests {
    use super::super::*;
    use super::tail_drop_dir;
    use crate::packet::{PacketKind, PacketMeta};

    #[test]
    fn window_counts_waiting_times_and_per_precedence_arrivals() {
        // 8 Mbit/s: a 1000-byte packet takes 1 ms. Window [10 ms, 20 ms).
        const MS: u64 = 1_000_000;
        let mut l = tail_drop_dir(8_000_000, Limit::Packets(2), (10 * MS, 20 * MS));
        let mut arena = PacketArena::with_capacity(8);
        let mut send = |l: &mut LinkDir, t: u64, dscp: u8| {
            let mut p = PacketMeta::new(0, PacketKind::Data, 1000, 0, t);
            p.dscp = dscp;
            let id = arena.alloc(p);
            l.advance(t);
            matches!(l.enqueue(t, id, &mut arena), Admit::Queued { .. })
        };
        // Before the window: not counted.
        assert!(send(&mut l, 5 * MS, 10));
        // Four back-to-back arrivals at 12 ms: the first starts at once, the next two wait 1 ms
        // and 2 ms, the fourth finds two waiting (limit 2) and is dropped.
        assert!(send(&mut l, 12 * MS, 10));
        assert!(send(&mut l, 12 * MS, 12));
        assert!(send(&mut l, 12 * MS, 12));
        assert!(!send(&mut l, 12 * MS, 12));
        // After the window: not counted.
        assert!(send(&mut l, 30 * MS, 12));
        let s = &l.stats;
        assert_eq!(s.window_admitted, 3);
        assert_eq!(s.window_wait_ns, 3 * MS);
        assert_eq!(s.window_arrivals_by_prec, [1, 3, 0]);
        assert_eq!(s.window_drops_by_prec, [0, 1, 0]);
        assert_eq!(s.arrivals_by_prec, [2, 4, 0]);
    }

    /// A packet-holding queue's transmitter: a packet handed over when the last one ends
    /// (`now == last_done`) continues the busy period, so its end is the rounded-up division
    /// of the period's bits, not the last end plus its own rounded-up time; one handed over
    /// after an idle spell starts a new period. At 7 Mbit/s a 1000-byte packet takes
    /// 1,142,857.14 ns: 1,142,858 rounded up, two back to back 2,285,715 (restarting at the
    /// first end would give 2,285,716).
    #[test]
    fn a_held_queue_continues_its_busy_period_at_the_last_end() {
        use crate::aqm::codel::{Codel, CodelParams};
        const MS: u64 = 1_000_000;
        let mut l = tail_drop_dir(7_000_000, Limit::Packets(10), (0, u64::MAX));
        let params = CodelParams {
            target: 5 * MS,
            interval: 100 * MS,
            ecn: false,
        };
        l.set_held(Some(Box::new(Codel::new(params, Limit::Packets(10)))));
        let mut arena = PacketArena::with_capacity(8);
        let arrive = |l: &mut LinkDir, arena: &mut PacketArena, t: u64| {
            let id = arena.alloc(PacketMeta::new(0, PacketKind::Data, 1000, 0, t));
            assert!(matches!(l.enqueue_held(t, id, arena), Admit::Queued { .. }));
        };
        // What the simulation does at the end of a transmission (`on_tx_done`).
        let tx_done = |l: &mut LinkDir, arena: &mut PacketArena, t: u64| {
            l.tx_pending = false;
            l.advance(t);
            l.start_next(t, arena).map(|(end, _)| end)
        };
        arrive(&mut l, &mut arena, 0);
        arrive(&mut l, &mut arena, 0);
        let first = l.start_next(0, &mut arena).unwrap().0;
        assert_eq!(first, 1_142_858);
        // The second, waiting, is handed over at the first's end: the period goes on.
        assert_eq!(tx_done(&mut l, &mut arena, first), Some(2_285_715));
        assert_eq!(tx_done(&mut l, &mut arena, 2_285_715), None);
        // After an idle spell a new period starts.
        arrive(&mut l, &mut arena, 10 * MS);
        assert_eq!(
            l.start_next(10 * MS, &mut arena).unwrap().0,
            10 * MS + 1_142_858
        );
    }

    /// The window holds its start and not its end; a window ending before it starts holds
    /// nothing (times on both sides of the wrap of the start-and-length test).
    #[test]
    fn the_window_holds_its_start_not_its_end() {
        let dir = |win| tail_drop_dir(8_000_000, Limit::Packets(2), win);
        let l = dir((10, 20));
        let inside: Vec<u64> = [0, 9, 10, 19, 20, u64::MAX]
            .into_iter()
            .filter(|&t| l.in_window(t))
            .collect();
        assert_eq!(inside, [10, 19]);
        let all = dir((0, u64::MAX));
        assert!(all.in_window(0) && all.in_window(u64::MAX - 1) && !all.in_window(u64::MAX));
        let none = dir((20, 10));
        assert!([0, 10, 15, 20, u64::MAX]
            .iter()
            .all(|&t| !none.in_window(t)));
    }
}

/// A hop through a tail-drop queue reads and writes only the first four cache lines of its
/// link direction (the field order of [`LinkDir`], aligned to a line): every field such a
/// hop touches ends by byte 256, and the queue discipline's state, which it leaves alone,
/// starts after. (Its queue length comes from the line, `LinkDir::line_view`: until the
/// eleventh round it was asked of `held`, behind the discipline, a sixth line that this list
/// did not show. Until the fourteenth the fields ended at byte 304, and the directions,
/// aligned to 8 bytes, started 16 bytes into a line: five lines. The timing noise, added
/// after, was looked up at byte 720 by every hop, a fifth line, until its flag `jittered`
/// joined the hot fields.)
#[test]
fn a_tail_drop_hop_touches_the_first_four_cache_lines() {
    use super::*;
    use std::mem::{align_of, offset_of, size_of};
    assert_eq!(align_of::<LinkDir>(), 64);
    assert_eq!(size_of::<Ring<InLine>>(), 24);
    let stats = offset_of!(LinkDir, stats);
    let ends = [
        offset_of!(LinkDir, line) + size_of::<Ring<InLine>>(),
        offset_of!(LinkDir, started) + size_of::<u32>(),
        offset_of!(LinkDir, departed) + size_of::<u32>(),
        offset_of!(LinkDir, q_bytes) + 8,
        offset_of!(LinkDir, last_done) + 8,
        offset_of!(LinkDir, bps) + 8,
        offset_of!(LinkDir, delay) + 8,
        offset_of!(LinkDir, win_start) + 8,
        offset_of!(LinkDir, win_len) + 8,
        offset_of!(LinkDir, idle_notified) + 1,
        offset_of!(LinkDir, dequeue_hook) + 1,
        offset_of!(LinkDir, idle_hook) + 1,
        offset_of!(LinkDir, enqueue_hook) + 1,
        offset_of!(LinkDir, lazy) + 1,
        offset_of!(LinkDir, guarded) + 1,
        offset_of!(LinkDir, watched) + 1,
        offset_of!(LinkDir, busy) + size_of::<BusyClock>(),
        offset_of!(LinkDir, waiting_by_prec) + size_of::<[u32; 3]>(),
        offset_of!(LinkDir, jittered) + 1,
        offset_of!(LinkDir, limit) + size_of::<Limit>(),
        stats + offset_of!(LinkStats, arrivals) + 8,
        stats + offset_of!(LinkStats, departures) + 8,
        stats + offset_of!(LinkStats, departed_bytes) + 8,
        stats + offset_of!(LinkStats, window_bytes) + 8,
        stats + offset_of!(LinkStats, arrivals_by_prec) + 24,
        stats + offset_of!(LinkStats, window_arrivals_by_prec) + 24,
        stats + offset_of!(LinkStats, window_admitted) + 8,
        stats + offset_of!(LinkStats, window_wait_ns) + 8,
    ];
    let hot_end = ends.into_iter().max().unwrap();
    assert!(hot_end <= 4 * 64, "a hop's fields end at byte {hot_end}");
    assert!(offset_of!(LinkDir, aqm) >= hot_end);
}

/// The FIFO line's view, which a hop takes from its own cache lines, is the general view
/// (which asks the packet-holding queue, when there is one) before and after every arrival,
/// as packets of every precedence start at once, wait, are dropped and leave. (What the line's
/// view saves, a cache line, is measured by cachegrind, not here.)
#[test]
fn the_line_view_is_the_queue_view() {
    use super::*;
    use crate::packet::{PacketKind, PacketMeta};
    // 8 Mbit/s: a 1000-byte packet takes 1 ms; a burst of six every 4 ms, of three
    // precedences (AF11, AF12, AF13), some dropped by the five-packet buffer.
    let mut l = tail_drop_dir(8_000_000, Limit::Packets(5), (0, u64::MAX));
    let mut arena = PacketArena::with_capacity(64);
    let mut lens = Vec::new();
    for k in 0..40u64 {
        let t = (k / 6) * 4_000_000 + k % 6;
        l.advance(t);
        while l.line.front().is_some_and(|h| h.done + l.delay <= t) {
            arena.free(l.arrive().0);
        }
        assert_eq!(l.line_view(), l.view(), "before arrival {k}");
        let mut p = PacketMeta::new(0, PacketKind::Data, 1000, 0, t);
        p.dscp = [10, 12, 14][k as usize % 3];
        let id = arena.alloc(p);
        if let Admit::Dropped(_) = l.enqueue(t, id, &mut arena) {
            arena.free(id);
        }
        assert_eq!(l.line_view(), l.view(), "after arrival {k}");
        lens.push(l.view().len_pkts);
    }
    // The queue filled and drained: the views were compared empty, partly full and full.
    assert_eq!(lens.iter().max(), Some(&5));
    assert!(lens.contains(&0) && l.stats.total_drops() > 0);
}

/// A tail drop does not judge arrivals ([`crate::aqm::Aqm::wants_enqueue`]): the host admits
/// on its buffer check alone, in bytes as in packets, and counts the overflow.
#[test]
fn a_tail_drop_is_admitted_on_the_buffer_check_alone() {
    use super::*;
    use crate::packet::{PacketKind, PacketMeta};
    for (limit, admitted) in [(Limit::Bytes(2500), 3), (Limit::Packets(1), 2)] {
        // 8 Mbit/s: a 1000-byte packet takes 1 ms; five arrive at once.
        let mut l = tail_drop_dir(8_000_000, limit, (0, u64::MAX));
        assert!(!l.enqueue_hook);
        let mut arena = PacketArena::with_capacity(8);
        let verdicts: Vec<bool> = (0..5)
            .map(|_| {
                let id = arena.alloc(PacketMeta::new(0, PacketKind::Data, 1000, 0, 0));
                matches!(l.enqueue(0, id, &mut arena), Admit::Queued { .. })
            })
            .collect();
        // The first starts at once (never waits); then the buffer fills.
        let expected: Vec<bool> = (0..5).map(|k| k < admitted).collect();
        assert_eq!(verdicts, expected, "{limit:?}");
        assert_eq!(
            l.stats.drops[DropReason::Overflow as usize],
            5 - admitted as u64
        );
    }
}

/// A line's entry is 24 bytes (eight entries in three cache lines, where 32-byte entries made
/// two a line) and keeps what it is given at the edges of its narrowed fields: the largest IP
/// packet, the last 32-bit packet id, every drop precedence, and times of the whole range.
#[test]
fn a_line_entry_is_24_bytes_and_keeps_its_fields() {
    use super::*;
    assert_eq!(std::mem::size_of::<InLine>(), 24);
    for (id, size, prec) in [
        (0, 1, 0),
        (u32::MAX as usize, MAX_PACKET_BYTES, 2),
        (7, 40, 1),
    ] {
        let e = InLine::new(id, size, prec, 3, u64::MAX);
        assert_eq!(
            (e.id(), e.size(), e.prec(), e.start, e.done),
            (id, size, prec, 3, u64::MAX)
        );
    }
}

mod jitter_tests {
    use super::super::*;
    use super::tail_drop_dir;
    use crate::packet::{PacketKind, PacketMeta};

    const MS: u64 = 1_000_000;

    /// Sends `n` packets of 1000 bytes every `gap` ns through a direction of 8 Mbit/s (1 ms a
    /// packet), 5 ms of propagation and `jitter`; returns each packet's (end of transmission,
    /// far-end arrival), the arrivals taken from the link as the engine takes them.
    fn arrivals(n: u64, gap: u64, jitter: SimTime) -> Vec<(SimTime, SimTime)> {
        let mut l = tail_drop_dir(8_000_000, Limit::Packets(100_000), (0, u64::MAX));
        l.delay = 5 * MS;
        l.set_jitter(jitter, crate::rng::SimRng::derive(1, 2));
        let mut arena = PacketArena::with_capacity(n as usize);
        let mut first = None;
        for k in 0..n {
            let id = arena.alloc(PacketMeta::new(0, PacketKind::Data, 1000, 0, k * gap));
            l.advance(k * gap);
            match l.enqueue(k * gap, id, &mut arena) {
                Admit::Queued { schedule_arrival } => first = first.or(schedule_arrival),
                Admit::Dropped(_) => panic!("admitted under the limit"),
            }
        }
        let mut out = Vec::new();
        let mut next = first.map(|t| (t, 0));
        while let Some((at, _)) = next {
            let done = l.line.front().expect("a packet per arrival").done;
            let (_, n) = l.arrive();
            out.push((done, at));
            next = n;
        }
        assert_eq!(out.len() as u64, n);
        out
    }

    #[test]
    fn without_jitter_every_packet_arrives_its_delay_after_its_transmission() {
        for (done, at) in arrivals(200, MS / 2, 0) {
            assert_eq!(at, done + 5 * MS);
        }
    }

    #[test]
    fn jitter_is_uniform_over_its_bound_when_packets_are_spaced_wider() {
        // Packets 2 ms apart, jitter 300 µs: no packet can catch the one ahead, so each
        // extra delay is the draw itself, uniform on [0, 300 µs]: mean 150 µs (sd of the mean
        // of 20,000: 0.6 µs), every extra inside the bound, and both ends of it reached.
        let extra: Vec<u64> = arrivals(20_000, 2 * MS, 300_000)
            .iter()
            .map(|&(done, at)| at - done - 5 * MS)
            .collect();
        assert!(extra.iter().all(|&e| e <= 300_000));
        let mean = extra.iter().sum::<u64>() as f64 / extra.len() as f64;
        assert!((mean - 150_000.0).abs() < 3_000.0, "mean extra {mean} ns");
        assert!(extra.iter().any(|&e| e < 3_000) && extra.iter().any(|&e| e > 297_000));
        let low = extra.iter().filter(|&&e| e < 150_000).count() as f64 / extra.len() as f64;
        assert!((low - 0.5).abs() < 0.02, "share below the middle {low}");
    }

    #[test]
    fn a_jittered_packet_never_overtakes_the_one_ahead() {
        // Back to back (1 ms apart on the wire) with 3 ms of jitter: draws would reorder
        // often; the line keeps order and each packet arrives no earlier than its own draw
        // allows and no later than the packet ahead or its own bound.
        let a = arrivals(5_000, 0, 3 * MS);
        let mut clamped = 0;
        for w in a.windows(2) {
            let ((_, prev), (done, at)) = (w[0], w[1]);
            assert!(at >= prev, "arrivals out of order");
            assert!(at >= done + 5 * MS && at <= (done + 8 * MS).max(prev));
            clamped += (at == prev) as u32;
        }
        assert!(
            clamped > 100,
            "the bound was reached by the packet ahead {clamped} times"
        );
    }
}
