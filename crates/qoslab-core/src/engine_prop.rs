//! Property tests of the event queue (`engine.rs`): a stable sort's order, and the hint.

use super::*;
use proptest::prelude::*;

proptest! {
    /// Against a reference (stable sort by time): same order, FIFO among equal times,
    /// with events scheduled while popping (never in the past).
    #[test]
    fn matches_a_stable_sort(
        ops in proptest::collection::vec((0u64..1_000, 0u32..5, 0u64..4, any::<bool>()), 1..400),
        thresholds in prop_oneof![
            Just(((0, 0), (usize::MAX, 0))),
            Just(((0, 0), (0, 0))),
            Just(((0, 0), (8, 2))),
            Just(((0, 0), (40, 10))),
            Just(((usize::MAX, 0), (usize::MAX, 0))),
            Just(((4, 2), (usize::MAX, 0))),
            Just(((4, 2), (8, 2))),
            Just(((SMALL_ON, SMALL_OFF), (40, 10))),
        ],
    ) {
        // Thresholds (one run's, then the calendar's): always a heap, always a calendar, a
        // heap and a calendar switching often both ways, always one run, a run and a heap
        // switching, and all three.
        let mut q = EventQueue::with_thresholds(thresholds.0, thresholds.1);
        let mut reference: Vec<(u64, u32)> = Vec::new();
        let mut popped = Vec::new();
        let mut expected = Vec::new();
        let mut id = 0u32;
        for (dt, scale, burst, pop) in ops {
            // Gaps from nanoseconds to minutes, around a bucket's width and beyond the
            // calendar's horizon.
            let dt = dt * [1, 20_000, 1_000_000, 60_000_000_000, 8_192][scale as usize];
            for _ in 0..=burst {
                let t = q.now() + dt;
                q.at(t, EventKind::FlowStart(id));
                reference.push((t, id));
                id += 1;
            }
            if pop {
                reference.sort_by_key(|&(t, _)| t);
                let (t, i) = reference.remove(0);
                expected.push((t, i));
                let e = q.pop().unwrap();
                let EventKind::FlowStart(j) = e.kind else { unreachable!() };
                popped.push((e.time, j));
            }
        }
        reference.sort_by_key(|&(t, _)| t);
        expected.extend(reference);
        while let Some(e) = q.pop() {
            let EventKind::FlowStart(j) = e.kind else { unreachable!() };
            popped.push((e.time, j));
        }
        prop_assert_eq!(popped, expected);
    }

    /// The look-ahead the event loop prefetches by: after a pop, with nothing scheduled
    /// since, the hint is the next event or none (a calendar whose front holds only the
    /// taken top); never another event.
    #[test]
    fn the_hint_is_the_next_event(
        times in proptest::collection::vec(0u64..200_000, 1..300),
        thresholds in prop_oneof![
            Just(((0, 0), (usize::MAX, 0))),
            Just(((0, 0), (0, 0))),
            Just(((0, 0), (8, 2))),
            Just(((usize::MAX, 0), (usize::MAX, 0))),
            Just(((4, 2), (usize::MAX, 0))),
            Just(((4, 2), (8, 2))),
        ],
    ) {
        let mut q = EventQueue::with_thresholds(thresholds.0, thresholds.1);
        for (i, &t) in times.iter().enumerate() {
            q.at(t, EventKind::FlowStart(i as u32));
        }
        // Without a calendar (one run or one heap) the next event is always known.
        let one_heap = thresholds.1 .0 == usize::MAX;
        let mut hint = q.peek_kind();
        loop {
            let next = q.pop().map(|e| e.kind);
            if one_heap {
                // One heap always knows its next event.
                prop_assert_eq!(hint, next);
            } else {
                prop_assert!(hint.is_none() || hint == next);
            }
            if next.is_none() {
                break;
            }
            hint = q.peek_kind();
        }
    }

    /// A lazily armed timer: an event whose sequence number was reserved when it would have
    /// been scheduled, and scheduled later (before its time) under that number, pops exactly
    /// where it would have had it been scheduled at once, among events scheduled in between
    /// for the same time too.
    #[test]
    fn a_reserved_number_keeps_the_order_of_scheduling_at_once(
        ops in proptest::collection::vec((0u64..1_000, 0u32..4, 0u64..4, any::<bool>(), 0u8..3), 1..300),
        thresholds in prop_oneof![
            Just(((0, 0), (usize::MAX, 0))),
            Just(((0, 0), (0, 0))),
            Just(((0, 0), (8, 2))),
            Just(((usize::MAX, 0), (usize::MAX, 0))),
            Just(((4, 2), (8, 2))),
        ],
    ) {
        let mut at_once = EventQueue::with_thresholds(thresholds.0, thresholds.1);
        let mut lazy = EventQueue::with_thresholds(thresholds.0, thresholds.1);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let mut deferred: Vec<(u64, u64, u32)> = Vec::new();
        let mut id = 0u32;
        for (dt, scale, burst, pop, defer) in ops {
            // Coarse gaps, so that many events share a time.
            let dt = dt * [0, 1, 8_192, 1_000_000][scale as usize];
            for _ in 0..=burst {
                let t = at_once.now() + dt;
                at_once.at(t, EventKind::DelAck(id, 0));
                if defer == 0 {
                    deferred.push((t, lazy.reserve(), id));
                } else {
                    lazy.at(t, EventKind::DelAck(id, 0));
                }
                id += 1;
            }
            if pop {
                // What was deferred is scheduled before time can pass it.
                for (t, seq, i) in deferred.drain(..) {
                    lazy.at_reserved(t, seq, EventKind::DelAck(i, 0));
                }
                a.push(at_once.pop().map(|e| (e.time, e.kind)));
                b.push(lazy.pop().map(|e| (e.time, e.kind)));
            }
        }
        for (t, seq, i) in deferred.drain(..) {
            lazy.at_reserved(t, seq, EventKind::DelAck(i, 0));
        }
        while let Some(e) = at_once.pop() {
            a.push(Some((e.time, e.kind)));
        }
        while let Some(e) = lazy.pop() {
            b.push(Some((e.time, e.kind)));
        }
        prop_assert_eq!(a, b);
    }
}
