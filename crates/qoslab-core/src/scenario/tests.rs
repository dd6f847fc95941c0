use super::*;

pub const DUMBBELL: &str = r#"
name = "dumbbell"
duration = "20s"

[[node]]
name = "s{i}"
count = 3
[[node]]
name = "r1"
[[node]]
name = "r2"
[[node]]
name = "d{i}"
count = 3

[[link]]
count = 3
a = "s{i}"
b = "r1"
bandwidth = "10Mbps"
delay = ["4ms", "14ms", "24ms"]

[[link]]
name = "bottleneck"
a = "r1"
b = "r2"
bandwidth = "1Mbps"
delay = "5ms"
queue_ab = { type = "red", limit = "100pkts", min_th = 25, max_th = 75, max_p = 0.01, w_q = 0.002 }

[[link]]
count = 3
a = "r2"
b = "d{i}"
bandwidth = "10Mbps"
delay = "1ms"

[[flow]]
name = "ftp{i}"
count = 3
src = "s{i}"
dst = "d{i}"
start = "uniform(0s, 1s)"
tcp = { packet_size = "500B" }
"#;

fn err(src: &str) -> ScenarioError {
    Scenario::from_toml(src, "t.toml").unwrap_err()
}

#[test]
fn resolves_groups_and_defaults() {
    let s = Scenario::from_toml(DUMBBELL, "t.toml").unwrap();
    assert_eq!(s.nodes.len(), 8);
    assert_eq!(s.links.len(), 7);
    assert_eq!(s.links[1].delay_ns, 14_000_000);
    assert_eq!(s.links[3].name, "bottleneck");
    assert!(matches!(s.links[3].queue_ab.discipline, Discipline::Red(_)));
    assert!(matches!(
        s.links[3].queue_ba.discipline,
        Discipline::DropTail(_)
    ));
    assert_eq!(s.flows[2].name, "ftp2");
    assert_eq!(s.flows[2].packet_size_bytes, 500);
    assert_eq!(
        (s.flows[0].start_ns, s.flows[0].start_max_ns),
        (0, 1_000_000_000)
    );
    assert_eq!(s.measurement.bottleneck, "bottleneck");
}

#[test]
fn typo_in_key_names_line_and_key() {
    let src = DUMBBELL.replace("bandwidth = \"1Mbps\"", "bandwdith = \"1Mbps\"");
    let e = err(&src);
    assert_eq!(e.line, Some(27), "{e}");
    assert!(e.message.contains("bandwdith"), "{e}");
    assert!(e.key.starts_with("link[1]"), "{e}");
}

#[test]
fn unknown_unit_and_negative_rate() {
    let e = err(&DUMBBELL.replace("\"1Mbps\"", "\"1Mbit\""));
    assert!(e.message.contains("unknown rate unit"), "{e}");
    assert_eq!(e.key, "link[1].bandwidth", "{e}");
    let e = err(&DUMBBELL.replace("\"1Mbps\"", "\"-1Mbps\""));
    assert!(e.message.contains("negative"), "{e}");
}

#[test]
fn semantic_errors_are_located() {
    let e = err(&DUMBBELL.replace("dst = \"d{i}\"", "dst = \"x{i}\""));
    assert_eq!(e.key, "flow[0].dst");
    assert!(e.message.contains("unknown node \"x0\""), "{e}");
    assert!(e.line.is_some());
    let e = err(&DUMBBELL.replace("min_th = 25", "min_th = 80"));
    assert_eq!(e.key, "link[1].queue_ab.min_th", "{e}");
    assert!(e.message.contains("smaller than max_th"), "{e}");
    let e = err(&DUMBBELL.replace("delay = [\"4ms\", \"14ms\", \"24ms\"]", "delay = [\"4ms\"]"));
    assert!(e.message.contains("expected 3 values"), "{e}");
}

#[test]
fn missing_route() {
    let src = DUMBBELL.replace(
        "[[link]]\ncount = 3\na = \"r2\"",
        "[[link]]\ncount = 2\na = \"r2\"",
    );
    let e = err(&src);
    assert!(e.message.contains("no route"), "{e}");
}

#[test]
fn paths_a_scenario_names_stay_inside_the_output_directory() {
    use super::confined;
    for ok in ["a.pcap", "caps/bottleneck.pcap", "x..y.pcap", "./a.pcap"] {
        assert!(confined(ok).is_ok(), "{ok}");
    }
    for (bad, why) in [
        ("../escaped.pcap", "leaves"),
        ("caps/../../x.pcap", "leaves"),
        ("/tmp/x.pcap", "absolute"),
        ("~/x.pcap", "absolute"),
        ("", "names no file"),
        ("dir/", "names no file"),
        ("a\\..\\b.pcap", "backslash"),
        ("a\0b", "NUL"),
    ] {
        let e = confined(bad).expect_err(bad);
        assert!(e.contains(why), "{bad}: {e}");
    }
}

/// A capture file inside a folder named as one of the run's own outputs would stop the run
/// writing that output (after it ran): refused while reading the scenario.
#[test]
fn capture_files_stay_out_of_the_runs_own_output_names() {
    use super::{check_capture_names, CaptureDirection};
    for ok in [
        "a.pcap",
        "caps/summary.json.pcap",
        "x/summary.json/a.pcap",
        "flows.parquet.pcap",
    ] {
        assert!(
            check_capture_names(0, ok, CaptureDirection::Ab, &[]).is_ok(),
            "{ok}"
        );
    }
    for bad in [
        "summary.json/x.pcap",
        "./scenario.toml/x.pcap",
        "flows.parquet/x.pcap",
        "series_queue.parquet/a/b.pcap",
        ".qoslab-run/x.pcap",
    ] {
        for d in [CaptureDirection::Ab, CaptureDirection::Both] {
            let e = check_capture_names(0, bad, d, &[]).expect_err(bad);
            assert!(
                e.message.contains("a file qoslab writes"),
                "{bad}: {}",
                e.message
            );
        }
    }
}

/// Every `[[flow]]` naming one trace file (however spelled) shares one copy of its rows; a
/// different `trace_flow` of it is a copy of its own.
#[test]
fn flows_naming_one_trace_share_its_rows() {
    let dir = std::env::temp_dir().join(format!("qoslab-trace-share-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("t.csv"), "0.001,100,x\n0.002,200,y\n").unwrap();
    let file = dir.join("s.toml");
    let flow = |name: &str, trace: &str, extra: &str| {
        format!(
            "[[flow]]\nname = \"{name}\"\nsrc = \"a\"\ndst = \"b\"\ntype = \"trace\"\ntrace = \"{trace}\"\n{extra}"
        )
    };
    let text = format!(
        "name = \"t\"\nduration = \"1s\"\n[[node]]\nname = \"a\"\n[[node]]\nname = \"b\"\n\
         [[link]]\na = \"a\"\nb = \"b\"\nbandwidth = \"1Mbps\"\ndelay = \"1ms\"\n{}{}{}{}",
        flow("p", "t.csv", ""),
        flow("q", "./t.csv", ""),
        flow("r", "t.csv", "count = 3\n").replace("name = \"r\"", "name = \"r{i}\""),
        flow("s", "t.csv", "trace_flow = \"y\"\n"),
    );
    std::fs::write(&file, &text).unwrap();
    let sc = Scenario::from_toml(&text, file.to_str().unwrap()).unwrap();
    let rows: Vec<_> = sc
        .flows
        .iter()
        .map(|f| f.source.as_ref().and_then(|s| s.rows()).unwrap())
        .collect();
    for r in &rows[1..5] {
        assert!(std::sync::Arc::ptr_eq(&rows[0], r));
    }
    assert!(!std::sync::Arc::ptr_eq(&rows[0], &rows[5]));
    assert_eq!((rows[0].len(), rows[5].len()), (2, 1));
    let Some(crate::traffic::sources::SourceSpec::Trace(t)) = &sc.flows[1].source else {
        panic!("a trace flow")
    };
    assert_eq!(t.trace.file, "./t.csv");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn tcp_flavour_linux_defaults_overrides_and_refusals() {
    use crate::traffic::tcp::Flavour;
    // [tcp] flavour = "linux": Linux's values fill the keys no table sets; a flow's own
    // table overrides the flavour and keeps what it sets.
    let src = DUMBBELL.replace(
        "[[flow]]",
        "[tcp]\nflavour = \"linux\"\nwindow = 300\n\n[[flow]]",
    );
    let s = Scenario::from_toml(&src, "t.toml").unwrap();
    let t = s.flows[0].tcp.as_ref().unwrap();
    assert_eq!(t.flavour, Flavour::Linux);
    assert_eq!(
        (t.window_pkts, t.initial_window_pkts, t.syn, t.delayed_ack),
        (300, 10, false, true)
    );
    assert_eq!(
        (t.delack_interval_ns, t.initial_rto_ns),
        (40_000_000, 1_000_000_000)
    );
    let src2 = DUMBBELL.replace(
        "tcp = { packet_size = \"500B\" }",
        "tcp = { flavour = \"linux\", initial_window = 4 }",
    );
    let s = Scenario::from_toml(&src2, "t.toml").unwrap();
    let t = s.flows[1].tcp.as_ref().unwrap();
    assert_eq!(
        (t.flavour, t.initial_window_pkts, t.window_pkts),
        (Flavour::Linux, 4, 10_000)
    );
    // The ns2 flavour's defaults are untouched.
    let s = Scenario::from_toml(DUMBBELL, "t.toml").unwrap();
    let t = s.flows[0].tcp.as_ref().unwrap();
    assert_eq!(
        (t.flavour, t.initial_window_pkts, t.syn),
        (Flavour::Ns2, 2, true)
    );
    // What it cannot honour, and an unknown flavour: one error naming the key.
    for (set, key) in [
        ("flavour = \"bsd\"", "flow[0].tcp.flavour"),
        (
            "flavour = \"linux\", variant = \"newreno\"",
            "flow[0].tcp.variant",
        ),
        ("flavour = \"linux\", syn = true", "flow[0].tcp.syn"),
        ("flavour = \"linux\", sack = false", "flow[0].tcp.sack"),
        ("flavour = \"linux\", tick = \"1ms\"", "flow[0].tcp.tick"),
        (
            "flavour = \"linux\", max_burst = 3",
            "flow[0].tcp.max_burst",
        ),
    ] {
        let src = DUMBBELL.replace("packet_size = \"500B\"", set);
        let e = err(&src);
        assert!(
            e.key.starts_with(key),
            "{set}: key {} ({})",
            e.key,
            e.message
        );
    }
}

/// A flow's resolved values of the keys whose defaults differ between the flavours.
fn flavoured_keys(t: &TcpConfig) -> (u32, u32, bool, u64, bool, u64, u64, u64, bool) {
    (
        t.initial_window_pkts,
        t.window_pkts,
        t.delayed_ack,
        t.delack_interval_ns,
        t.syn,
        t.initial_rto_ns,
        t.min_rto_ns,
        t.max_rto_ns,
        t.sack,
    )
}

#[test]
fn a_flows_flavour_brings_its_own_defaults() {
    use crate::traffic::tcp::Flavour;
    let with = |tcp: &str, own: &str| {
        let src = DUMBBELL
            .replace("[[flow]]", &format!("[tcp]\n{tcp}\n\n[[flow]]"))
            .replace(
                "tcp = { packet_size = \"500B\" }",
                &format!("tcp = {{ {own} }}"),
            );
        let s =
            Scenario::from_toml(&src, "t.toml").unwrap_or_else(|e| panic!("{tcp} / {own}: {e}"));
        s.flows[0].tcp.clone().unwrap()
    };
    // ns-2.35's: IW 2, window 20, no delayed ACKs (100 ms when on), SYN, RTO 3 s in
    // [200 ms, 60 s], no SACK; Linux's: IW 10, window 10000, delayed ACKs after 40 ms, no SYN,
    // RTO 1 s in [200 ms, 120 s], SACK.
    let ns2 = (
        2,
        20,
        false,
        100_000_000,
        true,
        3_000_000_000,
        200_000_000,
        60_000_000_000,
        false,
    );
    let linux = (
        10,
        10_000,
        true,
        40_000_000,
        false,
        1_000_000_000,
        200_000_000,
        120_000_000_000,
        true,
    );
    // An ns2 flow under a linux [tcp] has ns-2's, as under no [tcp] at all; its own table
    // alone (`flavour = "ns2"`, variant reno: ns-2's non-SACK agent) is accepted.
    for own in [
        "flavour = \"ns2\"",
        "flavour = \"ns2\", variant = \"newreno\"",
    ] {
        let t = with("flavour = \"linux\"", own);
        assert_eq!(
            (t.flavour, flavoured_keys(&t)),
            (Flavour::Ns2, ns2),
            "{own}"
        );
    }
    let t = with(
        "flavour = \"linux\"",
        "flavour = \"ns2\", variant = \"cubic\"",
    );
    assert_eq!(flavoured_keys(&t), ns2);
    assert_eq!(flavoured_keys(&with("", "variant = \"cubic\"")), ns2);
    // What [tcp] sets is still inherited (the user's value, not a flavour's default).
    let t = with("flavour = \"linux\"\nwindow = 300", "flavour = \"ns2\"");
    assert_eq!((t.window_pkts, t.initial_window_pkts), (300, 2));
    // The other way round: a linux flow under an ns2 [tcp] has Linux's.
    for tcp in [
        "flavour = \"ns2\"",
        "",
        "variant = \"newreno\"\nflavour = \"ns2\"",
    ] {
        let t = with(tcp, "flavour = \"linux\", variant = \"reno\"");
        assert_eq!(
            (t.flavour, flavoured_keys(&t)),
            (Flavour::Linux, linux),
            "{tcp}"
        );
    }
    assert_eq!(flavoured_keys(&with("flavour = \"linux\"", "")), linux);
    // A variant's implied SACK is inherited within a flavour as before (ns2 CUBIC under
    // [tcp] variant = "sack" recovers with SACK).
    let t = with("variant = \"sack\"", "variant = \"cubic\"");
    assert!(t.sack && t.flavour == Flavour::Ns2);
}

#[test]
fn tcp_variant_constants_inherit_key_by_key_and_are_checked() {
    use crate::traffic::cc::{cubic::CubicParams, CcParams};
    // [tcp] sets CUBIC's β for every flow; the group's own table sets C: both apply.
    let src = DUMBBELL
        .replace(
            "[[flow]]",
            "[tcp]\nvariant = \"cubic\"\ncc = { cubic = { beta = 0.8 } }\n\n[[flow]]",
        )
        .replace(
            "tcp = { packet_size = \"500B\" }",
            "tcp = { cc = { cubic = { c = 0.2 } } }",
        );
    let s = Scenario::from_toml(&src, "t.toml").unwrap();
    let want = CcParams::Cubic(CubicParams { c: 0.2, beta: 0.8 });
    assert_eq!(s.flows[0].tcp.as_ref().unwrap().cc, Some(want));
    // A flow of another variant does not take them; defaults are not recorded (the resolved
    // scenario of one that sets none is unchanged).
    let reno = src.replace(
        "tcp = { cc = { cubic = { c = 0.2 } } }",
        "tcp = { variant = \"reno\" }",
    );
    let s = Scenario::from_toml(&reno, "t.toml").unwrap();
    assert_eq!(s.flows[0].tcp.as_ref().unwrap().cc, None);
    let s = Scenario::from_toml(DUMBBELL, "t.toml").unwrap();
    assert_eq!(s.flows[0].tcp.as_ref().unwrap().cc, None);
    assert!(!s.to_toml_value().unwrap().to_string().contains("beta"));
    // Errors name the key: a variant without constants, an unknown key, a value out of range,
    // and the linux flavour, which runs Linux's modules.
    for (cc, key, words) in [
        (
            "{ reno = { x = 1 } }",
            "tcp.cc.reno",
            "not a TCP variant with constants",
        ),
        (
            "{ cubic = { gamma = 1 } }",
            "tcp.cc.cubic.gamma",
            "`gamma` is not a key of cubic under the ns2 flavour (it takes c, beta)",
        ),
        (
            "{ cubic = { beta = 1.0 } }",
            "tcp.cc.cubic.beta",
            "beta must be in (0, 1)",
        ),
        (
            "{ dctcp = { g = 0 } }",
            "tcp.cc.dctcp.g",
            "g must be in (0, 1]",
        ),
    ] {
        let src = DUMBBELL.replace("[[flow]]", &format!("[tcp]\ncc = {cc}\n\n[[flow]]"));
        let e = err(&src);
        assert_eq!(e.key, key, "{e}");
        assert!(e.message.contains(words) && e.line.is_some(), "{e}");
    }
}

#[test]
fn linux_module_parameters_are_the_linux_flavours_cc_keys() {
    use crate::traffic::linux::cc::{cubic::CubicParams, dctcp::DctcpParams, LinuxCcParams};
    let with = |tcp: &str| DUMBBELL.replace("[[flow]]", &format!("[tcp]\n{tcp}\n\n[[flow]]"));
    let linux = "flavour = \"linux\"\nvariant = \"cubic\"";
    // tcp_cubic.c's beta (of 1024) under the linux flavour; the others keep the kernel's.
    let s = Scenario::from_toml(
        &with(&format!("{linux}\ncc = {{ cubic = {{ beta = 512 }} }}")),
        "t",
    )
    .unwrap();
    let tcp = s.flows[0].tcp.as_ref().unwrap();
    let want = CubicParams {
        beta: 512,
        ..CubicParams::default()
    };
    assert_eq!(
        (tcp.cc.clone(), tcp.linux_cc),
        (None, Some(LinuxCcParams::Cubic(want)))
    );
    // The kernel's defaults are not recorded: the resolved scenario is unchanged.
    let s = Scenario::from_toml(
        &with(&format!("{linux}\ncc = {{ cubic = {{ beta = 717 }} }}")),
        "t",
    )
    .unwrap();
    assert_eq!(s.flows[0].tcp.as_ref().unwrap().linux_cc, None);
    let dctcp = "flavour = \"linux\"\nvariant = \"dctcp\"\ncc = { dctcp = { dctcp_shift_g = 2 } }";
    let marking = with(dctcp).replace("w_q = 0.002 }", "w_q = 0.002, ecn = true }");
    let s = Scenario::from_toml(&marking, "t").unwrap();
    let want = DctcpParams {
        dctcp_shift_g: 2,
        ..DctcpParams::default()
    };
    assert_eq!(
        s.flows[0].tcp.as_ref().unwrap().linux_cc,
        Some(LinuxCcParams::Dctcp(want))
    );
    // One flavour's keys under the other are refused in one line naming key, flavour and keys;
    // so is an ns2 [tcp] table inherited by a linux flow, and a range the kernel refuses.
    for (tcp, key, words) in [
        (
            format!("{linux}\ncc = {{ cubic = {{ c = 0.2 }} }}"),
            "tcp.cc.cubic.c",
            "`c` is not a key of cubic under the linux flavour (it takes fast_convergence, beta, \
             initial_ssthresh, bic_scale,",
        ),
        (
            "variant = \"cubic\"\ncc = { cubic = { bic_scale = 82 } }".to_string(),
            "tcp.cc.cubic.bic_scale",
            "`bic_scale` is not a key of cubic under the ns2 flavour (it takes c, beta)",
        ),
        (
            format!("{linux}\ncc = {{ bbr = {{ high_gain = 2.0 }} }}"),
            "tcp.cc.bbr",
            "not a TCP variant with constants under the linux flavour (those are cubic, dctcp)",
        ),
        (
            "flavour = \"linux\"\ncc = { dctcp = { dctcp_shift_g = 11 } }".to_string(),
            "tcp.cc.dctcp.dctcp_shift_g",
            "dctcp_shift_g must be between 0 and 10, got 11",
        ),
        (
            format!("{linux}\ncc = {{ cubic = {{ beta = 0.8 }} }}"),
            "tcp.cc.cubic.beta",
            "",
        ),
    ] {
        let e = err(&with(&tcp));
        assert_eq!(e.key, key, "{e}");
        assert!(e.message.contains(words) && e.line.is_some(), "{e}");
        assert!(!e.to_string().contains('\n'), "{e}");
    }
    let inherited = with("variant = \"cubic\"\ncc = { cubic = { c = 0.2 } }").replace(
        "tcp = { packet_size = \"500B\" }",
        "tcp = { flavour = \"linux\" }",
    );
    let e = err(&inherited);
    assert!(e.key.ends_with(".tcp.cc.cubic.c"), "{e}");
    assert!(e.message.contains("under the linux flavour"), "{e}");
}

#[test]
fn a_tcp_window_past_two_to_the_thirty_is_refused_in_both_flavours() {
    // 2^30 packets is the largest window TCP's window scale can advertise in one-byte
    // segments; past it a sender's window arithmetic would leave u32 (a fuzzed BBR flow with
    // initial_window = 4294967295 overflowed `cwnd + acked`).
    for flavour in ["ns2", "linux"] {
        for key in ["window", "initial_window"] {
            let src = DUMBBELL.replace(
                "[[flow]]",
                &format!("[tcp]\nflavour = \"{flavour}\"\n{key} = 4294967295\n\n[[flow]]"),
            );
            let e = err(&src).to_string();
            assert!(
                e.contains(&format!("tcp.{key}")) && e.contains("1073741824"),
                "{flavour} {key}: {e}"
            );
            let ok = src.replace("4294967295", "1073741824");
            Scenario::from_toml(&ok, "t.toml").unwrap();
        }
    }
}

/// Integers from 2^63 to 2^64 - 1 fit serde's u64 but not TOML's integers (nor the resolved
/// form): each is refused at its key with the largest value taken.
#[test]
fn a_whole_number_of_2_to_the_63_or_more_is_refused_with_the_limit() {
    let with_seed = format!("seed = {}\n{DUMBBELL}", 1u64 << 63);
    let e = err(&with_seed);
    assert_eq!(e.key, "seed", "{e}");
    assert!(e.message.contains("from 0 to 2^63 - 1"), "{e}");
    let ok = format!("seed = {}\n{DUMBBELL}", i64::MAX);
    assert!(Scenario::from_toml(&ok, "t.toml").is_ok());
    let e = err(&format!("{DUMBBELL}\n[tcp]\nwindow = {}\n", 1u64 << 63));
    assert_eq!(e.key, "tcp.window", "{e}");
    assert!(e.message.contains("at most 2^63 - 1"), "{e}");
}

/// A memory limit below what a scenario takes to read names the group to shrink: its `count`
/// where it has one, else the group itself (a `flow[0].count` in a file without `count` sent
/// the reader looking for it), and says both sizes in units they can be read in (a 1-byte
/// limit was "0 MB").
#[test]
fn reading_above_the_memory_limit_names_the_group_and_both_sizes() {
    let one = DUMBBELL.replace("count = 3\nsrc", "src");
    let e = Scenario::from_toml_within(&one, "t.toml", Some((1, "--max-memory"))).unwrap_err();
    assert_eq!(e.key, "link[0].count", "{e}"); // the first group of three
    assert!(
        e.message
            .ends_with("above 1 B (--max-memory); make its groups smaller"),
        "{e}"
    );
    let single = "name = \"x\"\nduration = \"1s\"\n[[node]]\nname = \"a\"\n";
    let e = Scenario::from_toml_within(single, "t.toml", Some((1, "--max-memory"))).unwrap_err();
    assert_eq!(e.key, "node[0]", "{e}");
    assert!(
        e.message.contains("(0 flows)") && e.message.ends_with("raise the limit"),
        "{e}"
    );
    let e = Scenario::from_toml_within(
        &DUMBBELL.replace("count = 3", "count = 1"),
        "t.toml",
        Some((1, "--max-memory")),
    );
    let e = e.unwrap_err();
    assert!(e.message.contains("(1 flow)"), "{e}");
}
