//! Keys that would do nothing are refused, and a refusal names the key that was written: a
//! conditioner off its traffic's routes, a red action no packet can take, `[tcp]` keys no
//! sender reads, a packet size at the table that sets it.

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
fn tcp_keys_no_sender_reads_are_refused() {
    let e = err(&format!("{DUMBBELL}\n[tcp]\ndelack_interval = \"40ms\"\n"));
    assert_eq!(e.key, "tcp.delack_interval", "{e}");
    assert!(e.message.contains("set delayed_ack = true"), "{e}");
    let on = format!("{DUMBBELL}\n[tcp]\ndelayed_ack = true\ndelack_interval = \"40ms\"\n");
    assert_eq!(
        Scenario::from_toml(&on, "t.toml").unwrap().flows[0]
            .tcp
            .as_ref()
            .unwrap()
            .delack_interval_ns,
        40_000_000
    );
    // one flow delaying its ACKs reads it
    let one = format!(
        "{DUMBBELL}\n[[flow]]\nsrc = \"s0\"\ndst = \"d0\"\ntcp = {{ delayed_ack = true }}\n\
         [tcp]\ndelack_interval = \"40ms\"\n"
    );
    assert_eq!(
        Scenario::from_toml(&one, "t.toml").unwrap().flows[3]
            .tcp
            .as_ref()
            .unwrap()
            .delack_interval_ns,
        40_000_000
    );
    let own = DUMBBELL.replace(
        "tcp = { packet_size",
        "tcp = { delack_interval = \"40ms\", packet_size",
    );
    let e = err(&own);
    assert_eq!(e.key, "flow[0].tcp.delack_interval", "{e}");
    // [tcp] in a scenario with no TCP sender
    let udp = DUMBBELL.replace(
        "tcp = { packet_size = \"500B\" }",
        "type = \"cbr\"\nrate = \"100kbps\"",
    );
    Scenario::from_toml(&udp, "t.toml").unwrap();
    let e = err(&format!("{udp}\n[tcp]\nwindow = 30\n"));
    assert_eq!(e.key, "tcp", "{e}");
    assert!(
        e.message.contains("no flow or arrival process is TCP"),
        "{e}"
    );
}

#[test]
fn a_red_action_is_refused_where_no_packet_can_be_red() {
    let with = |meter: &str| {
        format!(
            "{DUMBBELL}\n[[conditioner]]\nlink = \"bottleneck\"\nred = \"drop\"\nmeter = {{ {meter} }}\n"
        )
    };
    let tb = "type = \"token_bucket\", cir = \"1Mbps\", cbs = \"10kB\"";
    let tsw = "type = \"tsw2cm\", cir = \"1Mbps\"";
    let e = err(&with(tb));
    assert_eq!(e.key, "conditioner[0].red", "{e}");
    assert!(
        e.message
            .contains("colour-blind `token_bucket` meter leaves no packet red"),
        "{e}"
    );
    assert!(e.message.contains("mode = \"aware\""), "{e}");
    let e = err(&with(tsw));
    assert_eq!(e.key, "conditioner[0].red", "{e}");
    assert!(e.message.ends_with(": remove it"), "{e}");
    // Colour-aware, a pre-coloured red packet stays red; a three-colour meter gives red itself.
    for meter in [
        format!("{tb}, mode = \"aware\""),
        "type = \"srtcm\", cir = \"1Mbps\", cbs = \"10kB\", ebs = \"10kB\"".to_string(),
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
}
