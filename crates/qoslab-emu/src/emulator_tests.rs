//! Unit tests of the emulator (`emulator.rs`): packets through its queues and markers, with
//! scripted times.

use super::*;
use crate::ipv4::{parse, tests::packet, UDP};

const MS: u64 = 1_000_000;

fn scenario(queue: &str, extra: &str) -> Scenario {
    let src = format!(
        r#"
name = "t"
duration = "10s"
[[node]]
name = "h0"
[[node]]
name = "h1"
[[link]]
name = "l"
a = "h0"
b = "h1"
bandwidth = "8Mbps"
delay = "10ms"
queue_ab = {queue}
[[flow]]
name = "u"
src = "h0"
dst = "h1"
type = "cbr"
rate = "1Mbps"
{extra}
"#
    );
    Scenario::from_toml(&src, "t.toml").unwrap()
}

fn udp(tos: u8, size: u16) -> Headers {
    parse(&packet(UDP, tos, 40000, 5000, size)).unwrap()
}

fn emu(sc: &Scenario) -> Emulator {
    Emulator::new(
        sc,
        1,
        &[DirSpec {
            dir_idx: 0,
            delay_only: false,
        }],
        &[FlowPort {
            protocol: UDP,
            port: 5000,
            mss: 0,
        }],
    )
}

#[test]
fn a_packet_is_due_after_transmission_and_propagation() {
    let sc = scenario(r#"{ type = "droptail", limit = "2pkts" }"#, "");
    let mut e = emu(&sc);
    // 1000 B at 8 Mbit/s: 1 ms each; 10 ms propagation.
    for _ in 0..4 {
        e.arrive(0, 0, &udp(0, 1000));
    }
    // One in transmission, two waiting, the fourth overflows the 2-packet buffer.
    assert_eq!(e.held(), 3);
    assert_eq!(e.next_due(), Some(11 * MS));
    let mut out = Vec::new();
    e.due(11 * MS - 1, &mut out);
    assert!(out.is_empty());
    let conserved = |e: &Emulator| {
        let (_, st, held, _) = e.dir_stats().next().unwrap();
        st.arrivals == st.departures + st.drops.iter().sum::<u64>() + held
    };
    assert!(conserved(&e));
    e.due(12 * MS, &mut out);
    let (_, _, _, propagating) = e.dir_stats().next().unwrap();
    assert!(conserved(&e) && propagating >= 1, "{propagating}");
    e.due(13 * MS, &mut out);
    let times: Vec<_> = out.iter().map(|x| x.1).collect();
    assert_eq!(times, vec![11 * MS, 12 * MS, 13 * MS]);
    let (_, st, held, propagating) = e.dir_stats().next().unwrap();
    assert_eq!(propagating, 0);
    assert_eq!(
        (st.arrivals, st.departures, st.drops[2], held),
        (4, 3, 1, 0)
    );
    assert_eq!(e.flows[0].drops_by_reason[2], 1);
    // The overflow is timed at its arrival, and taken once.
    let mut drops = Vec::new();
    e.take_data_drops(&mut drops);
    assert_eq!(drops, vec![(0, 0)]);
    e.take_data_drops(&mut drops);
    assert_eq!(drops.len(), 1);
    // An unknown port passes uncounted.
    let other = parse(&packet(UDP, 0, 1, 2, 100)).unwrap();
    assert_eq!(e.arrive(20 * MS, 0, &other), Admission::Unclassified);
    assert_eq!(e.unclassified, 1);
}

/// A daemon's line gives back what a burst made it take once the burst has left: 600
/// packets queued at once take 1,024 entries; a second after they are all due, the core's
/// floor ([`qoslab_core::net::link::LINE_FLOOR`], 8 entries).
#[test]
fn a_drained_line_gives_its_capacity_back() {
    let sc = scenario(r#"{ type = "droptail", limit = "1000pkts" }"#, "");
    let mut e = emu(&sc);
    for _ in 0..600 {
        e.arrive(0, 0, &udp(0, 1000));
    }
    assert_eq!(e.dirs[0].link.line.capacity(), 1024);
    let mut out = Vec::new();
    e.due(700 * MS, &mut out);
    assert_eq!(out.len(), 600);
    assert_eq!(e.dirs[0].link.line.capacity(), 1024, "not yet a second");
    e.due(1000 * MS, &mut out);
    assert_eq!(
        e.dirs[0].link.line.capacity(),
        qoslab_core::net::link::LINE_FLOOR
    );
}

#[test]
fn the_token_bucket_marker_rewrites_the_codepoint() {
    let sc = scenario(
        r#"{ type = "droptail", limit = "100pkts" }"#,
        r#"
[[conditioner]]
name = "m"
link = "l"
classify = "flow:u"
meter = { type = "token_bucket", cir = "800kbps", cbs = "2000B" }
green = "AF11"
yellow = "AF12"
"#,
    );
    let mut e = emu(&sc);
    // Three 1000-byte packets at once: the 2000-byte bucket holds two.
    for _ in 0..3 {
        e.arrive(0, 0, &udp(0, 1000));
    }
    // 10 ms later the bucket has earned exactly 1000 bytes again.
    e.arrive(10 * MS, 0, &udp(0, 1000));
    let mut out = Vec::new();
    e.due(SimTime::MAX / 2, &mut out);
    let dscps: Vec<u8> = out.iter().map(|&(id, _)| e.release(id).dscp).collect();
    assert_eq!(dscps, vec![10, 10, 12, 10]);
    assert_eq!(e.flows[0].colored, [3, 1, 0]);
    let (i, here, c) = e.cond_stats().next().unwrap();
    assert_eq!((i, here, c), (0, true, [3, 1, 0]));
}

#[test]
fn tcp_sequence_numbers_count_packets_from_the_syn() {
    use crate::ipv4::TCP;
    let sc = scenario(r#"{ type = "droptail", limit = "100pkts" }"#, "");
    let mut e = Emulator::new(
        &sc,
        1,
        &[DirSpec {
            dir_idx: 0,
            delay_only: false,
        }],
        &[FlowPort {
            protocol: TCP,
            port: 5000,
            mss: 960,
        }],
    );
    let seg = |seq: u32, ack: u32, flags: u8, dport: u16, sport: u16| {
        let mut p = packet(TCP, 0, sport, dport, 1000);
        p[24..28].copy_from_slice(&seq.to_be_bytes());
        p[28..32].copy_from_slice(&ack.to_be_bytes());
        p[33] = flags;
        parse(&p).unwrap()
    };
    let isn = u32::MAX - 1000; // the byte numbers wrap
    let syn = e.arrive(0, 0, &seg(isn, 0, crate::ipv4::SYN, 5000, 40000));
    let third = e.arrive(
        1,
        0,
        &seg(isn.wrapping_add(1 + 2 * 960), 0, 0x10, 5000, 40000),
    );
    let ack = e.arrive(
        2,
        0,
        &seg(7, isn.wrapping_add(1 + 3 * 960), 0x10, 40000, 5000),
    );
    let mut out = Vec::new();
    e.due(SimTime::MAX / 2, &mut out);
    let metas: Vec<_> = out.iter().map(|&(id, _)| e.release(id)).collect();
    assert!(matches!(
        (syn, third, ack),
        (Admission::Held(_), Admission::Held(_), Admission::Held(_))
    ));
    // SYN = 0, the third data segment = 3; the ACK of three segments acknowledges 3.
    assert_eq!((metas[0].seq, metas[1].seq), (0, 3));
    assert_eq!((metas[2].kind, metas[2].ack), (PacketKind::Ack, 3));
}

/// Drives a 300-packet burst (1 ms each) through the direction in 1 ms steps; returns the
/// packets released with their ECN bits and the ids the queue dropped after holding them.
fn burst_through(e: &mut Emulator, tos: u8) -> (Vec<u8>, Vec<PacketId>) {
    let (mut released, mut dropped, mut out) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..300 {
        assert!(matches!(
            e.arrive(0, 0, &udp(tos, 1000)),
            Admission::Held(_)
        ));
    }
    e.take_dropped_held(&mut dropped);
    for step in 1..=400 {
        e.due(step * MS, &mut out);
        let before = dropped.len();
        e.take_dropped_held(&mut dropped);
        // a dropped packet is never also released (the daemon drops its message)
        assert!(dropped[before..]
            .iter()
            .all(|d| out.iter().all(|(id, _)| id != d)));
        released.extend(out.drain(..).map(|(id, _)| e.release(id).ecn));
    }
    (released, dropped)
}

/// CoDel drops at dequeue (RFC 8289): the packets it drops after holding them reach the
/// daemon, which drops the kernel's messages; without ECN they are dropped, with ECN
/// (ECT(0) packets) marked CE instead. A pfifo of the same size drops none of the burst.
#[test]
fn codel_drops_held_packets_at_dequeue_and_marks_them_with_ecn() {
    let codel = r#"{ type = "codel", limit = "1000pkts", target = "5ms", interval = "100ms" }"#;
    let mut e = emu(&scenario(codel, ""));
    let (released, dropped) = burst_through(&mut e, 0);
    // the sojourn stays above target from the 6th packet on: CoDel drops an interval later,
    // then at interval/sqrt(count) spacing (about 105, 176 and 234 ms) until the burst is
    // gone after 300 ms
    assert_eq!(dropped.len(), 3);
    assert_eq!(released.len() + dropped.len(), 300);
    assert_eq!(e.held(), 0, "every dropped packet freed");
    let (_, st, _, _) = e.dir_stats().next().unwrap();
    assert_eq!(st.drops.iter().sum::<u64>(), dropped.len() as u64);
    assert_eq!(
        e.flows[0].drops_by_reason.iter().sum::<u64>(),
        dropped.len() as u64
    );
    // Each drop is timed where CoDel made it, at a dequeue an interval or more in.
    let mut drops = Vec::new();
    e.take_data_drops(&mut drops);
    assert!(drops.iter().all(|&(f, _)| f == 0));
    let at: Vec<_> = drops.iter().map(|&(_, t)| t).collect();
    assert_eq!(at.len(), dropped.len());
    assert!(
        at.windows(2).all(|w| w[0] < w[1]) && at[0] >= 100 * MS && at[2] < 300 * MS,
        "{at:?}"
    );

    let ecn =
        r#"{ type = "codel", limit = "1000pkts", target = "5ms", interval = "100ms", ecn = true }"#;
    let mut e = emu(&scenario(ecn, ""));
    let (released, dropped) = burst_through(&mut e, 2);
    assert!(dropped.is_empty());
    assert_eq!(released.iter().filter(|&&x| x == 3).count(), 3);

    let mut e = emu(&scenario(
        r#"{ type = "droptail", limit = "1000pkts" }"#,
        "",
    ));
    let (released, dropped) = burst_through(&mut e, 0);
    assert_eq!((released.len(), dropped.len()), (300, 0));
}

#[test]
fn a_priority_multi_queue_serves_ef_first() {
    let sc = scenario(
        r#"{ type = "multi", scheduler = "priority", queues = [ { name = "ef", dscp = ["EF"], queue = { type = "droptail", limit = "10pkts" } }, { name = "be", default = true, queue = { type = "droptail", limit = "10pkts" } } ] }"#,
        "",
    );
    let mut e = emu(&sc);
    // 1000 B at 8 Mbit/s = 1 ms each. Two best-effort packets, then one EF: the first BE is
    // already on the wire, the EF packet overtakes the second.
    e.arrive(0, 0, &udp(0, 1000));
    e.arrive(0, 0, &udp(0, 1000));
    e.arrive(100, 0, &udp(46 << 2, 1000));
    let mut out = Vec::new();
    e.due(SimTime::MAX / 2, &mut out);
    let got: Vec<(u8, u64)> = out.iter().map(|&(id, t)| (e.release(id).dscp, t)).collect();
    assert_eq!(got, vec![(0, 11 * MS), (46, 12 * MS), (0, 13 * MS)]);
}

#[test]
fn a_delay_only_direction_adds_the_propagation_delay() {
    let sc = scenario(r#"{ type = "droptail", limit = "1pkts" }"#, "");
    let mut e = Emulator::new(
        &sc,
        1,
        &[DirSpec {
            dir_idx: 0,
            delay_only: true,
        }],
        &[FlowPort {
            protocol: UDP,
            port: 5000,
            mss: 0,
        }],
    );
    for t in 0..5 {
        assert!(matches!(e.arrive(t, 0, &udp(0, 1000)), Admission::Held(_)));
    }
    let mut out = Vec::new();
    e.due(10 * MS + 4, &mut out);
    assert_eq!(
        out.iter().map(|x| x.1).collect::<Vec<_>>(),
        (0..5).map(|t| 10 * MS + t).collect::<Vec<_>>()
    );
}
