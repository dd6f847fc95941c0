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
