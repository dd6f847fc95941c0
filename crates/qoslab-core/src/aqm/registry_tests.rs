//! How each kind runs on a link direction: a kind that holds its packets builds a `Qdisc` and
//! leaves the FIFO line empty (`NoLine`); a kind the FIFO line runs builds its state machine
//! there and no `Qdisc`.

use super::*;

fn queue(text: &str) -> QueueConfig {
    let t: toml::Table = toml::from_str(text).expect("a queue table");
    QueueConfig::from_table(&t, "queue").expect("a valid queue")
}

fn env() -> QdiscEnv {
    QdiscEnv {
        link_bps: 10_000_000,
        limit: Limit::Packets(100),
        seed: 1,
        dir_id: 0,
    }
}

#[test]
fn packet_holding_kinds_build_a_qdisc_and_leave_the_line_empty() {
    let multi = r#"type = "multi"
        [[queues]]
        name = "be"
        default = true
        queue = { type = "droptail", limit = "50pkts" }"#;
    for text in [
        r#"type = "codel""#,
        r#"type = "fq_codel""#,
        r#"type = "pie""#,
        multi,
    ] {
        let q = queue(text);
        assert!(q.discipline.holds_packets(), "{}", q.type_name());
        assert!(q.discipline.qdisc(&env()).is_some(), "{}", q.type_name());
        let line = q.discipline.build(10_000_000);
        let no_line = matches!(
            line,
            AnyAqm::Codel(NoLine)
                | AnyAqm::FqCodel(NoLine)
                | AnyAqm::Pie(NoLine)
                | AnyAqm::Multi(NoLine)
        );
        assert!(no_line, "{}: {line:?}", q.type_name());
        assert!(!line.wants_enqueue() && !line.wants_dequeue() && !line.wants_idle());
        assert!(!line.wants_reverse() && line.average().is_none());
    }
}

#[test]
fn line_kinds_build_their_state_machine_and_no_qdisc() {
    for text in [
        r#"type = "droptail""#,
        r#"type = "red"
        min_th = 5
        max_th = 15"#,
        r#"type = "step"
        threshold = "20pkts""#,
        r#"type = "blue""#,
    ] {
        let q = queue(text);
        let kind = q.type_name();
        assert!(!q.discipline.holds_packets(), "{kind}");
        assert!(q.discipline.qdisc(&env()).is_none(), "{kind}");
    }
    assert!(matches!(
        queue("type = \"red\"\nmin_th = 5\nmax_th = 15")
            .discipline
            .build(10_000_000),
        AnyAqm::Red(_)
    ));
}

/// Tables of each kind, every optional parameter (a "none" default) given in one of them.
const EVERY_KIND: &[&str] = &[
    r#"type = "droptail""#,
    "type = \"red\"\nmin_th = 5\nmax_th = 15",
    "type = \"ared\"\nmin_th = 5\nmax_th = 15\nbottom = 0.01",
    "type = \"rio\"\nin = { min_th = 40, max_th = 70, max_p = 0.02 }\n\
     mid = { min_th = 30, max_th = 50, max_p = 0.05 }\n\
     out = { min_th = 10, max_th = 30, max_p = 0.1 }",
    "type = \"wred\"\nin = { min_th = 40, max_th = 70, max_p = 0.02 }\n\
     mid = { min_th = 30, max_th = 50, max_p = 0.05 }\n\
     out = { min_th = 10, max_th = 30, max_p = 0.1 }",
    "type = \"rio_plus_o\"\nin = { min_th = 60, max_th = 80, max_p = 0.02 }\n\
     out = { min_th = 30, max_th = 50, max_p = 0.05 }\n\
     avg_out = { min_th = 10, max_th = 20, max_p = 0.1 }",
    "type = \"dwred\"\nsignal = \"twam\"\nmax_th = 40\nin_factor = 2.0",
    "type = \"dwred\"\nsignal = \"twam\"\nin = { min_th = 40, max_th = 70, max_p = 0.02 }",
    "type = \"multi\"\n[[queues]]\nname = \"be\"\ndefault = true\n\
     queue = { type = \"red\", min_th = 5, max_th = 15 }",
    "type = \"fdd_red\"\nmin_th = 5\nmax_th = 15",
    r#"type = "codel""#,
    r#"type = "fq_codel""#,
    r#"type = "pie""#,
    "type = \"step\"\nthreshold = \"20pkts\"",
    "type = \"blue\"\nthreshold = \"40pkts\"",
];

/// The resolved form of `q` as a TOML table (what `canonical_toml` and the Python side see).
fn resolved(q: &QueueConfig) -> toml::Table {
    match toml::Value::try_from(q).expect("the resolved form serializes") {
        toml::Value::Table(t) => t,
        v => panic!("not a table: {v}"),
    }
}

#[test]
fn every_declared_parameter_is_in_the_resolved_form() {
    // Each kind's declared parameters found in the resolved form of one of its tables.
    let mut found: Vec<(&str, &str)> = Vec::new();
    for text in EVERY_KIND {
        let q = queue(text);
        let kind = q.type_name();
        let form = resolved(&q);
        assert_eq!(form["type"].as_str(), Some(kind));
        assert!(
            form.contains_key("ns2") && form.contains_key("emulable"),
            "{kind}"
        );
        let (_, params) = Discipline::describe(kind).expect("registered");
        for p in params {
            let key = match q.params.iter().find(|(n, _)| *n == p.name) {
                Some((_, v)) => v.key(p.name),
                None => p.name.to_string(),
            };
            if form.contains_key(&key) {
                found.push((kind, p.name));
            }
        }
        // Nothing but the declared parameters and the keys every queue has.
        for k in form.keys() {
            let declared =
                q.params.iter().any(|(n, v)| v.key(n) == *k) || params.iter().any(|p| p.name == k);
            assert!(
                declared || ["type", "ns2", "emulable"].contains(&k.as_str()),
                "{kind}: `{k}` is in the resolved form but not declared"
            );
        }
    }
    for kind in QUEUE_TYPES {
        let (_, params) = Discipline::describe(kind).expect("registered");
        for p in params {
            assert!(
                found.contains(&(kind, p.name)),
                "{kind}: `{}` is declared but in the resolved form of none of its tables",
                p.name
            );
        }
    }
}

#[test]
fn resolved_values_have_their_declared_type_and_unit() {
    let pie = resolved(&queue("type = \"pie\"\ntarget = \"20ms\""));
    assert_eq!(pie["target_ns"].as_integer(), Some(20_000_000));
    assert_eq!(pie["t_update_ns"].as_integer(), Some(15_000_000));
    assert_eq!(pie["derandomize"].as_bool(), Some(true));
    assert_eq!(pie["alpha"].as_float(), Some(0.125));
    let fq = resolved(&queue("type = \"fq_codel\"\nflows = 64"));
    assert_eq!(fq["flows"].as_integer(), Some(64));
    assert_eq!(fq["quantum_bytes"].as_integer(), Some(1514));
    assert_eq!(fq["limit_pkts"].as_integer(), Some(50));
    let blue = resolved(&queue("type = \"blue\"\nlimit = \"64KB\""));
    assert_eq!(blue["limit_bytes"].as_integer(), Some(64_000));
    assert!(!blue.contains_key("threshold_pkts") && !blue.contains_key("threshold_bytes"));
    let rio = resolved(&queue(EVERY_KIND[3]));
    assert_eq!(rio["mid"]["max_p"].as_float(), Some(0.05));
    assert_eq!(rio["flavour"].as_str(), Some("reference"));
    assert_eq!(rio["mode"].as_str(), Some("coupled"));
    let dwred = resolved(&queue(
        "type = \"dwred\"\nsignal = \"twam\"\nlimit = \"80pkts\"",
    ));
    assert_eq!(
        dwred["max_th"].as_float(),
        Some(80.0),
        "the default the limit decides"
    );
    assert_eq!(dwred["signal"].as_str(), Some("twam"));
    let multi = resolved(&queue(EVERY_KIND[8]));
    assert!(
        !multi.contains_key("limit_pkts"),
        "the physical queues hold the limits"
    );
    assert_eq!(multi["scheduler"].as_str(), Some("priority"));
    assert_eq!(multi["queues"][0]["queue"]["max_th"].as_float(), Some(15.0));
}

#[test]
fn ecn_marking_is_read_from_the_resolved_ecn_or_the_kind() {
    assert!(queue("type = \"step\"\nthreshold = \"20pkts\"").marks_ecn());
    assert!(queue("type = \"codel\"\necn = true").marks_ecn());
    assert!(!queue("type = \"codel\"").marks_ecn());
    assert!(!queue(EVERY_KIND[8]).marks_ecn());
}

/// A physical queue's `weight` is WRR's and its `quantum` DRR's: either under another
/// scheduler would do nothing, so it is refused at its key.
#[test]
fn a_multi_queues_weight_or_quantum_is_refused_under_a_scheduler_that_ignores_it() {
    let multi = |scheduler: &str, key: &str| {
        let text = format!(
            "type = \"multi\"\nscheduler = \"{scheduler}\"\n[[queues]]\nname = \"be\"\n\
             default = true\n{key}\nqueue = {{ type = \"droptail\" }}"
        );
        let t: toml::Table = toml::from_str(&text).expect("a queue table");
        QueueConfig::from_table(&t, "queue")
    };
    for (scheduler, key, reader) in [
        ("rr", "weight = 2", None),
        ("priority", "weight = 2", None),
        ("drr", "weight = 2", None),
        ("wrr", "weight = 2", Some(())),
        ("rr", "quantum = \"3000B\"", None),
        ("wrr", "quantum = \"3000B\"", None),
        ("drr", "quantum = \"3000B\"", Some(())),
    ] {
        match (multi(scheduler, key), reader) {
            (Ok(_), Some(())) => {}
            (Err(e), None) => {
                let name = key.split(' ').next().unwrap();
                assert_eq!(
                    e.key,
                    format!("queue.queues[0].{name}"),
                    "{scheduler}: {e:?}"
                );
                assert!(e.message.contains("only the"), "{scheduler}: {e:?}");
            }
            (r, _) => panic!("{scheduler} {key}: {r:?}"),
        }
    }
}

/// BLUE's `threshold` counts a loss event when an arrival finds more than it waiting: from the
/// limit less one up, such an arrival overflows anyway, so the key would do nothing.
#[test]
fn a_blue_threshold_the_buffer_never_reaches_is_refused() {
    let blue = |threshold: &str, limit: &str| {
        let text = format!("type = \"blue\"\nthreshold = \"{threshold}\"\nlimit = \"{limit}\"");
        let t: toml::Table = toml::from_str(&text).expect("a queue table");
        QueueConfig::from_table(&t, "queue")
    };
    for (threshold, limit) in [
        ("100pkts", "10pkts"),
        ("9pkts", "10pkts"),
        ("14999B", "15000B"),
    ] {
        let e = blue(threshold, limit).expect_err(threshold);
        assert_eq!(e.key, "queue.threshold", "{e:?}");
        assert!(e.message.contains("at most the limit"), "{e:?}");
    }
    for (threshold, limit) in [
        ("8pkts", "10pkts"),
        ("100pkts", "15000B"),
        ("1000B", "10pkts"),
    ] {
        assert!(blue(threshold, limit).is_ok(), "{threshold} {limit}");
    }
}
