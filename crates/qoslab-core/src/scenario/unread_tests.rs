//! Keys that would do nothing are refused, and a refusal names the key that was written: a
//! conditioner off its traffic's routes, a red action no packet can take, a packet size at the
//! table that sets it; `[tcp]` defaults an override may bring into use are kept.

use super::tests::DUMBBELL;
use super::*;

fn err(src: &str) -> ScenarioError {
    Scenario::from_toml(src, "t.toml").unwrap_err()
}

#[test]
fn a_tcp_packet_size_error_names_the_key_it_was_written_at() {
    let base = DUMBBELL.replace("tcp = { packet_size = \"500B\" }\n", "");
    for (size, limit) in [
        ("30B", "at least 41 bytes"),
        ("70000B", "packet size must be 1.."),
    ] {
        let e = err(&format!("{base}\n[tcp]\npacket_size = \"{size}\"\n"));
        assert_eq!(e.key, "tcp.packet_size", "{e}");
        assert!(e.message.contains(limit), "{e}");
        let e = err(&DUMBBELL.replace("500B", size));
        assert_eq!(e.key, "flow[0].tcp.packet_size", "{e}");
    }
}

#[test]
fn tcp_defaults_no_sender_reads_are_kept_for_overrides_that_switch_the_senders() {
    // A UDP variant of a TCP scenario (the flows' type overridden) keeps its [tcp]; defaults
    // the senders' settings leave unread stay accepted (a sweep over the flavour, delayed_ack
    // or the variant reads one file).
    let udp = DUMBBELL.replace(
        "tcp = { packet_size = \"500B\" }",
        "type = \"cbr\"\nrate = \"100kbps\"",
    );
    for (base, tcp) in [
        (udp.as_str(), "window = 30"),
        (DUMBBELL, "delack_interval = \"40ms\""),
        (DUMBBELL, "cc.bbr = { high_gain = 2.5 }"),
    ] {
        Scenario::from_toml(&format!("{base}\n[tcp]\n{tcp}\n"), "t.toml")
            .unwrap_or_else(|e| panic!("{tcp}: {e}"));
    }
    // ... but checked: a value out of range is refused though no sender reads it.
    let e = err(&format!("{udp}\n[tcp]\nwindow = 0\n"));
    assert_eq!(e.key, "tcp.window", "{e}");
}

#[test]
fn a_red_action_is_refused_where_no_packet_can_be_red() {
    let with = |meter: &str| {
        format!(
            "{DUMBBELL}\n[[conditioner]]\nlink = \"bottleneck\"\nred = \"drop\"\nmeter = {{ {meter} }}\n"
        )
    };
    let tb = "type = \"token_bucket\", cir = \"1Mbps\", cbs = \"10kB\"";
    for (meter, why) in [
        (
            tb.to_string(),
            "colour-blind, it colours a packet green or yellow (with meter.mode = \"aware\"",
        ),
        (
            format!("{tb}, flavour = \"ns2\""),
            "ns-2's TokenBucket policer is colour-blind",
        ),
        (
            "type = \"tsw2cm\", cir = \"1Mbps\"".to_string(),
            "it tags a packet green or yellow",
        ),
        (
            "type = \"arm\", tpr_max = \"1Mbps\"".to_string(),
            "drops none",
        ),
        (
            "type = \"ard\", tpr_max = \"1Mbps\", p_drop = 0".to_string(),
            "with p_drop = 0",
        ),
    ] {
        let e = err(&with(&meter));
        assert_eq!(e.key, "conditioner[0].red", "{meter}: {e}");
        assert!(
            e.message
                .contains("conditioner \"cond0\": no packet leaves its"),
            "{e}"
        );
        assert!(
            e.message.contains(why) && e.message.ends_with("`red` would do nothing: remove it"),
            "{e}"
        );
    }
    // Colour-aware, a packet that arrives red stays red; a three-colour meter and ARD's
    // dropper give red themselves.
    for meter in [
        format!("{tb}, mode = \"aware\""),
        "type = \"srtcm\", cir = \"1Mbps\", cbs = \"10kB\", ebs = \"10kB\"".to_string(),
        "type = \"ard\", tpr_max = \"1Mbps\"".to_string(),
    ] {
        let s =
            Scenario::from_toml(&with(&meter), "t.toml").unwrap_or_else(|e| panic!("{meter}: {e}"));
        assert_eq!(s.conditioners[0].red, Action::Drop);
    }
    // Without `red`, the blind token bucket is accepted as before.
    Scenario::from_toml(&with(tb).replace("red = \"drop\"\n", ""), "t.toml").unwrap();
}

#[test]
fn a_conditioner_no_classified_packet_crosses_is_refused() {
    let with = |link: &str, classify: &str, direction: &str| {
        format!(
            "{DUMBBELL}\n[[conditioner]]\nlink = \"{link}\"\nclassify = \"{classify}\"\n\
             direction = \"{direction}\"\nmeter = {{ type = \"token_bucket\", cir = \"1Mbps\", cbs = \"10kB\" }}\n"
        )
    };
    // On its route, and on the way back (its ACKs): accepted.
    for (link, classify, direction) in [
        ("s1-r1", "flow:ftp1", "ab"),
        ("bottleneck", "flow:ftp0", "ba"),
        ("s2-r1", "any", "ab"),
        ("r2-d0", "src:d0", "ba"),
        ("bottleneck", "dst:d2", "ab"),
        ("bottleneck", "dscp:AF11", "ab"),
    ] {
        Scenario::from_toml(&with(link, classify, direction), "t.toml")
            .unwrap_or_else(|e| panic!("{link} {classify} {direction}: {e}"));
    }
    // Another flow's access link; a node's packets in the other direction (an ACK from d0
    // travels d0 → r2, a packet to s2 r2 → r1).
    for (link, classify) in [
        ("s1-r1", "flow:ftp0"),
        ("s1-r1", "src:s0"),
        ("r2-d0", "src:d0"),
        ("bottleneck", "dst:s2"),
    ] {
        let e = err(&with(link, classify, "ab"));
        assert_eq!(e.key, "conditioner[0].link", "{e}");
        assert!(
            e.message
                .contains(&format!("no packet of {classify} crosses link \"{link}\"")),
            "{e}"
        );
        assert!(e.message.contains("meter nothing"), "{e}");
    }
    // A UDP source's receiver sends nothing back: its route back carries none of its packets.
    let udp = DUMBBELL.replace(
        "tcp = { packet_size = \"500B\" }",
        "type = \"cbr\"\nrate = \"100kbps\"",
    );
    let on = |direction: &str| with("bottleneck", "flow:ftp0", direction).replace(DUMBBELL, &udp);
    Scenario::from_toml(&on("ab"), "t.toml").unwrap();
    let e = err(&on("ba"));
    assert_eq!(e.key, "conditioner[0].link", "{e}");
    // and the error points to the direction that carries it
    assert!(
        e.message
            .contains("set direction = \"ab\" (its traffic crosses the link that way)"),
        "{e}"
    );
}
