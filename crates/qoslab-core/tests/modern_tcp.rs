//! The TCP variants end to end: DCTCP against a step-marking queue (and the checks that keep
//! it from silently running as Reno), CUBIC against Reno on a long fat path, and the variant
//! registry's error messages.

mod common;

use common::Dumbbell;
use qoslab_core::{RunResults, Scenario, Simulation};

/// `n` TCP flows with settings `tcp` over a 100 Mbit/s bottleneck of queue `queue`; the
/// propagation RTT is 2·(1 + `delay_ms` + 1) ms. Returns the results and the bottleneck
/// direction's index.
fn dumbbell(tcp: &str, queue: &str, delay_ms: u32, n: usize) -> Result<String, String> {
    let dur = if delay_ms > 10 { "60s" } else { "20s" };
    let delay = format!("{delay_ms}ms");
    let src = Dumbbell {
        n,
        tcp,
        packet_size: "1500B",
        bandwidth: "100Mbps",
        delay: &delay,
        queue,
        access_queue: r#"{ type = "droptail", limit = "1000pkts" }"#,
        duration: dur,
        start: "uniform(0s, 0.1s)",
        measure_from: "5s",
        extra: "",
    }
    .toml();
    Scenario::from_toml(&src, "tcp.toml")
        .map(|_| src)
        .map_err(|e| e.to_string())
}

fn run(src: &str) -> (RunResults, usize) {
    let sc = Scenario::from_toml(src, "tcp.toml").unwrap_or_else(|e| panic!("{e}"));
    let mut sim = Simulation::new(&sc, 1);
    sim.run();
    (sim.results(), sc.measurement.bottleneck_idx * 2)
}

const STEP: &str = r#"{ type = "step", threshold = "20pkts", limit = "1000pkts" }"#;

/// DCTCP's point (Alizadeh et al. 2010, §3): with a marking threshold K well below the
/// bandwidth-delay product (here K = 20 packets, BDP = 100 Mbit/s × 10 ms = 83 packets) it
/// keeps the link busy with a queue near K and no loss, where an RFC 3168 sender halving on
/// the same marks leaves the link idle part of the time.
#[test]
fn dctcp_keeps_a_short_queue_busy_where_ecn_reno_does_not() {
    let (d, b) = run(&dumbbell(r#", variant = "dctcp""#, STEP, 3, 2).unwrap());
    let (r, _) = run(&dumbbell(r#", variant = "newreno", ecn = true"#, STEP, 3, 2).unwrap());
    // Mean one-way delay: 5 ms of propagation, 0.15 ms of transmission, and the queue.
    let delay = |x: &RunResults| x.flows.iter().map(|f| f.delay.mean_s).sum::<f64>() / 2.0;
    eprintln!(
        "step K=20: dctcp util {:.4} delay {:.2} ms marks {} drops {}; ecn newreno util {:.4} delay {:.2} ms",
        d.links[b].utilization,
        delay(&d) * 1e3,
        d.flows.iter().map(|f| f.stats.ecn_marks).sum::<u64>(),
        d.flows.iter().map(|f| f.stats.dropped_pkts).sum::<u64>(),
        r.links[b].utilization,
        delay(&r) * 1e3,
    );
    assert!(d.links[b].utilization > 0.97);
    assert!(r.links[b].utilization < d.links[b].utilization - 0.03);
    // With delayed ACKs the receiver still echoes each CE change at once (RFC 8257 §3.2):
    // the same utilisation, more ACKs than one per two segments.
    let (dd, _) = run(&dumbbell(r#", variant = "dctcp", delayed_ack = true"#, STEP, 3, 2).unwrap());
    let acks = |x: &RunResults| x.flows.iter().map(|f| f.stats.acks_sent).sum::<u64>();
    let segs = |x: &RunResults| x.flows.iter().map(|f| f.stats.delivered_pkts).sum::<u64>();
    eprintln!(
        "dctcp delayed ACKs: util {:.4}, {} ACKs for {} segments",
        dd.links[b].utilization,
        acks(&dd),
        segs(&dd)
    );
    assert!(dd.links[b].utilization > 0.97);
    assert!(acks(&dd) * 2 > segs(&dd) && acks(&dd) < segs(&dd));
    assert!(d
        .flows
        .iter()
        .all(|f| f.stats.dropped_pkts == 0 && f.timeouts == 0));
    assert!(d.flows.iter().all(|f| f.stats.ecn_marks > 0));
    // The queue stays near K: 20 packets of 120 µs are 2.4 ms.
    assert!(delay(&d) < 0.0052 + 0.0036, "delay {}", delay(&d));
}

#[test]
fn dctcp_needs_a_marking_queue_on_its_route() {
    let tail = r#"{ type = "droptail", limit = "1000pkts" }"#;
    let err = dumbbell(r#", variant = "dctcp""#, tail, 3, 1).unwrap_err();
    assert!(err.contains("flow[0].tcp.variant"), "{err}");
    assert!(
        err.contains("no queue on its route s0 → d0 marks ECN"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    let err = dumbbell(r#", variant = "dctcp", ecn = false"#, STEP, 3, 1).unwrap_err();
    assert!(
        err.contains("tcp.ecn") && err.contains("requires ECN"),
        "{err}"
    );
}

/// The check covers arrival processes too: each of their connections takes the route of the
/// process, so a DCTCP web mix over a tail-drop bottleneck is refused, and accepted once the
/// bottleneck marks.
#[test]
fn dctcp_arrivals_need_a_marking_queue_on_their_route() {
    let web = |queue: &str| {
        let mut d = Dumbbell {
            n: 1,
            tcp: "",
            packet_size: "1500B",
            bandwidth: "100Mbps",
            delay: "3ms",
            queue,
            access_queue: "",
            duration: "10s",
            start: "0s",
            measure_from: "1s",
            extra: "",
        };
        let extra = "[[arrivals]]\nname = \"web\"\nsrc = \"s0\"\ndst = \"d0\"\n\
                     arrival_rate = 20\nsize = \"30KB\"\ntcp = { variant = \"dctcp\" }\n";
        d.extra = extra;
        Scenario::from_toml(&d.toml(), "web.toml").map_err(|e| e.to_string())
    };
    let err = web(r#"{ type = "droptail", limit = "1000pkts" }"#).unwrap_err();
    assert!(err.contains("arrivals[0].tcp.variant"), "{err}");
    assert!(
        err.contains("`web` uses dctcp, but no queue on its route s0 → d0 marks ECN"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    let sc = web(STEP).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(sc.arrivals[0].tcp.variant.name(), "dctcp");
}

#[test]
fn an_unknown_variant_names_the_key_and_the_choices() {
    let err = dumbbell(r#", variant = "vegas""#, STEP, 3, 1).unwrap_err();
    assert!(err.contains("tcp.variant"), "{err}");
    for name in ["reno", "newreno", "cubic", "dctcp", "bbr"] {
        assert!(err.contains(&format!("`{name}`")), "{err}");
    }
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// The resolved scenario carries each flow's variant by name (the Python side and the
/// exporters read it), DCTCP's implied `ecn` included.
#[test]
fn the_resolved_tcp_settings_name_the_variant() {
    let src = dumbbell(r#", variant = "dctcp""#, STEP, 3, 1).unwrap();
    let sc = Scenario::from_toml(&src, "tcp.toml").unwrap();
    let v = sc.to_toml_value().unwrap();
    let tcp = &v["flows"][0]["tcp"];
    assert_eq!(tcp["variant"].as_str(), Some("dctcp"));
    assert_eq!(tcp["ecn"].as_bool(), Some(true));
}

/// Pacing end to end: one flow whose 1 Gbit/s access meets a 100 Mbit/s bottleneck with a
/// 10-packet buffer; the propagation RTT is 24 ms (BDP 200 packets) and the advertised
/// window 50 packets, so the flow never needs a queue. Unpaced, each slow-start ACK releases
/// two segments back to back and the queue grows by one per ACK, half a window per round: it
/// overflows the buffer. Paced at 2·cwnd/srtt the round's segments arrive slower than the
/// bottleneck serves them: nothing is lost. Its memory does not grow with simulated time
/// (one pending pace event per flow, no per-packet allocation).
#[test]
fn pacing_spreads_bursts_and_keeps_memory_flat() {
    let q = r#"{ type = "droptail", limit = "10pkts" }"#;
    let run_for = |tcp: &str, secs: u32| {
        let src = dumbbell(tcp, q, 10, 1)
            .unwrap()
            .replace("duration = \"20s\"", &format!("duration = \"{secs}s\""))
            .replace("window = 100000", "window = 50");
        run(&src).0
    };
    let paced = run_for(r#", variant = "newreno", pacing = true"#, 20);
    let unpaced = run_for(r#", variant = "newreno""#, 20);
    let drops = |r: &RunResults| r.flows[0].stats.dropped_pkts;
    eprintln!(
        "pacing: drops {} vs {} unpaced; throughput {:.1} / {:.1} Mbit/s",
        drops(&paced),
        drops(&unpaced),
        paced.flows[0].throughput_bps / 1e6,
        unpaced.flows[0].throughput_bps / 1e6
    );
    assert_eq!(drops(&paced), 0);
    assert!(drops(&unpaced) > 0);
    let long = run_for(r#", variant = "newreno", pacing = true"#, 60);
    eprintln!(
        "pacing memory: 20 s {} B events {} B packets, 60 s {} B / {} B",
        paced.memory.events, paced.memory.packets, long.memory.events, long.memory.packets
    );
    assert_eq!(paced.memory.events, long.memory.events);
    assert_eq!(paced.memory.packets, long.memory.packets);
}

/// BBR end to end: one flow over a 100 Mbit/s bottleneck with a 1000-packet tail-drop buffer
/// and a 10 ms propagation RTT (BDP 83 packets). BBR keeps the link busy with a queue of
/// about a BDP at most (cwnd gain 2), where NewReno fills the buffer (120 ms of queue).
#[test]
fn bbr_fills_the_link_without_filling_the_buffer() {
    let q = r#"{ type = "droptail", limit = "1000pkts" }"#;
    let (bbr, b) = run(&dumbbell(r#", variant = "bbr""#, q, 3, 1).unwrap());
    let (reno, _) = run(&dumbbell(r#", variant = "newreno""#, q, 3, 1).unwrap());
    let delay = |r: &RunResults| r.flows[0].delay.mean_s;
    eprintln!(
        "bbr util {:.4} delay {:.2} ms drops {}; newreno util {:.4} delay {:.2} ms",
        bbr.links[b].utilization,
        delay(&bbr) * 1e3,
        bbr.flows[0].stats.dropped_pkts,
        reno.links[b].utilization,
        delay(&reno) * 1e3
    );
    assert!(bbr.links[b].utilization > 0.95);
    assert_eq!(bbr.flows[0].stats.dropped_pkts, 0);
    // 5.15 ms of propagation and transmission, plus at most one BDP (10 ms) of queue.
    assert!(delay(&bbr) < 0.0152, "{}", delay(&bbr));
    assert!(delay(&reno) > 0.05);
}

#[test]
fn bbr_implies_pacing_and_refuses_it_off() {
    let src = dumbbell(r#", variant = "bbr""#, STEP, 3, 1).unwrap();
    let v = Scenario::from_toml(&src, "tcp.toml")
        .unwrap()
        .to_toml_value()
        .unwrap();
    assert_eq!(v["flows"][0]["tcp"]["pacing"].as_bool(), Some(true));
    let err = dumbbell(r#", variant = "bbr", pacing = false"#, STEP, 3, 1).unwrap_err();
    assert!(
        err.contains("tcp.pacing") && err.contains("always paces"),
        "{err}"
    );
}

/// SACK end to end: one flow over a long fat path (100 Mbit/s, 100 ms, BDP 833 packets) with a
/// 160-packet buffer: slow start overshoots by hundreds of packets, which NewReno recovery
/// repairs one per round trip and abandons to timeouts; with SACK (RFC 6675) the same CUBIC
/// sender recovers them in a round trip or two.
#[test]
fn sack_recovers_the_slow_start_overshoot() {
    let q = r#"{ type = "droptail", limit = "160pkts" }"#;
    let (plain, b) = run(&dumbbell(r#", variant = "cubic""#, q, 48, 1).unwrap());
    let (sack, _) = run(&dumbbell(r#", variant = "cubic", sack = true"#, q, 48, 1).unwrap());
    let (reno_sack, _) = run(&dumbbell(r#", variant = "sack""#, q, 48, 1).unwrap());
    eprintln!(
        "long fat path, cubic: util {:.4} timeouts {}; cubic+sack: util {:.4} timeouts {}; \
         sack (reno): util {:.4} timeouts {}",
        plain.links[b].utilization,
        plain.flows[0].timeouts,
        sack.links[b].utilization,
        sack.flows[0].timeouts,
        reno_sack.links[b].utilization,
        reno_sack.flows[0].timeouts
    );
    assert!(plain.flows[0].timeouts > 0);
    assert!(sack.flows[0].timeouts < plain.flows[0].timeouts);
    // The memory accounting sees the SACK state: the sender's scoreboard (one entry per
    // segment it held, hundreds here) and the receiver's blocks carried to the sender.
    eprintln!(
        "flow state: cubic {} B, cubic+sack {} B",
        plain.memory.flows, sack.memory.flows
    );
    assert!(sack.memory.flows > plain.memory.flows + 200);
    assert!(sack.links[b].utilization > plain.links[b].utilization + 0.2);
    let err = dumbbell(r#", variant = "newreno", sack = true"#, STEP, 3, 1).unwrap_err();
    assert!(
        err.contains("tcp.sack") && err.contains("variant = \"sack\""),
        "{err}"
    );
    let err = dumbbell(r#", variant = "sack", sack = false"#, STEP, 3, 1).unwrap_err();
    assert!(err.contains("tcp.sack"), "{err}");
}
