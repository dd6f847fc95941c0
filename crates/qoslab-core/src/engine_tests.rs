//! Unit tests of the event queue (`engine.rs`).

use super::*;

#[test]
fn every_kind_survives_the_queue() {
    let kinds = [
        EventKind::TxDone(u32::MAX),
        EventKind::Arrive(7, u32::MAX),
        EventKind::FlowStart(1),
        EventKind::FlowStop(2),
        EventKind::UdpSend(3),
        EventKind::UdpToggle(4),
        EventKind::Rto(5),
        EventKind::DelAck(6, u32::MAX),
        EventKind::Timer(8),
        EventKind::Signal(9, 1.5f32.to_bits()),
        EventKind::Sample,
        EventKind::MeasureStart,
        EventKind::MeasureEnd,
        EventKind::FlowArrival(u32::MAX),
        EventKind::Pace(u32::MAX),
    ];
    let mut q = EventQueue::new();
    for k in kinds {
        q.at(3, k);
    }
    let back: Vec<_> = std::iter::from_fn(|| q.pop()).map(|e| e.kind).collect();
    assert_eq!(back, kinds);
}

/// Pops every event, each handled one scheduling `follow(time)` if it returns a time;
/// checks the order against (time, scheduling order) and returns how many pops there were
/// and how many of them found the current bucket kept as a sorted run.
fn drain_counting_runs(q: &mut EventQueue, follow: impl Fn(u64) -> Option<u64>) -> (usize, usize) {
    let (mut pops, mut runs) = (0, 0);
    let mut last = (0, 0);
    while let Some(e) = q.pop() {
        let EventKind::FlowStart(id) = e.kind else {
            unreachable!()
        };
        // Ids are given in scheduling order, so (time, id) must rise.
        assert!(
            (e.time, id) > last || last == (0, 0),
            "{:?} after {last:?}",
            (e.time, id)
        );
        last = (e.time, id);
        pops += 1;
        runs += q.run_mode as usize;
        if let Some(t) = follow(e.time) {
            let id = q.next_seq as u32;
            q.at(t, EventKind::FlowStart(id));
        }
    }
    (pops, runs)
}

/// Events scheduled into the bucket being handled are rare: each bucket is sorted once
/// and taken in order.
#[test]
fn a_bucket_is_a_run_while_few_events_join_it_late() {
    let mut q = EventQueue::with_calendar_thresholds(0, 0);
    // 8 events a bucket, each scheduling one 3 ms on (a later bucket) for a while.
    for i in 0..20_000u32 {
        q.at(u64::from(i) * 1_000, EventKind::FlowStart(i));
    }
    let (pops, runs) = drain_counting_runs(&mut q, |t| (t < 40_000_000).then_some(t + 3_000_000));
    assert!(
        pops > 100_000 && runs > pops * 99 / 100,
        "{runs} of {pops} pops from a run"
    );
}

/// Events scheduled into the bucket being handled (back-to-back packets 100 ns apart)
/// outnumber the bucket's own: each bucket becomes a heap, whose top the next event
/// replaces.
#[test]
fn a_bucket_is_a_heap_while_late_events_outnumber_its_own() {
    let mut q = EventQueue::with_calendar_thresholds(0, 0);
    // 2 events a bucket, each starting a chain of 30 events 100 ns apart (3 µs).
    for i in 0..2_000u32 {
        q.at(u64::from(i) * 4_000, EventKind::FlowStart(i));
    }
    let (pops, runs) = drain_counting_runs(&mut q, |t| {
        ((t % 4_000) < 3_000 && t < 8_000_000).then_some(t + 100)
    });
    assert!(
        pops > 50_000 && runs < pops / 100,
        "{runs} of {pops} pops from a run"
    );
}

#[test]
fn simultaneous_events_are_fifo() {
    let mut q = EventQueue::new();
    q.at(10, EventKind::FlowStart(2));
    q.at(5, EventKind::FlowStart(9));
    q.at(10, EventKind::FlowStart(0));
    q.at(10, EventKind::FlowStart(1));
    let order: Vec<_> = std::iter::from_fn(|| q.pop())
        .map(|e| (e.time, e.kind))
        .collect();
    assert_eq!(
        order,
        vec![
            (5, EventKind::FlowStart(9)),
            (10, EventKind::FlowStart(2)),
            (10, EventKind::FlowStart(0)),
            (10, EventKind::FlowStart(1)),
        ]
    );
}

/// Up to `SMALL_ON` pending events the queue is one run; one more makes it a heap, and below
/// `SMALL_OFF` it is a run again; the order is the same throughout.
#[test]
fn a_few_events_are_one_run_and_more_one_heap() {
    let mut q = EventQueue::new();
    assert!(q.is_run());
    // Times out of order, some equal: the order popped is (time, scheduling order).
    let times: Vec<u64> = (0..=SMALL_ON as u64).map(|i| (i * 37) % 11).collect();
    for (i, &t) in times.iter().enumerate().take(SMALL_ON) {
        q.at(t, EventKind::FlowStart(i as u32));
    }
    assert!(q.is_run(), "{SMALL_ON} pending: one run");
    q.at(times[SMALL_ON], EventKind::FlowStart(SMALL_ON as u32));
    assert!(!q.is_run() && !q.is_large(), "one more: one heap");
    let mut expected: Vec<(u64, u32)> = times
        .iter()
        .enumerate()
        .map(|(i, &t)| (t, i as u32))
        .collect();
    expected.sort();
    let mut popped = Vec::new();
    let mut was_run_again = false;
    while let Some(e) = q.pop() {
        let EventKind::FlowStart(i) = e.kind else {
            unreachable!()
        };
        popped.push((e.time, i));
        if q.peek_time().is_some() && q.len() < SMALL_OFF {
            was_run_again |= q.is_run();
        }
    }
    assert!(was_run_again, "below {SMALL_OFF} pending: one run again");
    assert_eq!(popped, expected);
}
