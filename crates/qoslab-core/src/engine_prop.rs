//! Property tests of the event queue (`engine.rs`): a stable sort's order, and the hint.

use super::*;
use proptest::prelude::*;

proptest! {
    /// Against a reference (stable sort by time): same order, FIFO among equal times,
    /// with events scheduled while popping (never in the past).
    #[test]
    fn matches_a_stable_sort(
        ops in proptest::collection::vec((0u64..1_000, 0u32..5, 0u64..4, any::<bool>()), 1..400),
        thresholds in prop_oneof![Just((usize::MAX, 0)), Just((0, 0)), Just((8, 2)), Just((40, 10))],
    ) {
        // Thresholds: always a heap, always a calendar, and switching often both ways.
        let mut q = EventQueue::with_calendar_thresholds(thresholds.0, thresholds.1);
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
        thresholds in prop_oneof![Just((usize::MAX, 0)), Just((0, 0)), Just((8, 2))],
    ) {
        let mut q = EventQueue::with_calendar_thresholds(thresholds.0, thresholds.1);
        for (i, &t) in times.iter().enumerate() {
            q.at(t, EventKind::FlowStart(i as u32));
        }
        let one_heap = thresholds.0 == usize::MAX;
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
}
