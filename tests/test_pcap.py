"""Packet capture: tshark reads the file; counts and DSCP values match qoslab's counters."""

import subprocess
from collections import Counter

import qoslab
from conftest import SCENARIOS, require


def test_pcap_read_by_tshark_matches_counters(tmp_path):
    tshark = require("tshark")
    table = qoslab.load_scenario(SCENARIOS / "fdd-red-s1.toml").table()
    table["duration"] = "10s"
    table["measurement"] = {"start": "1s", "end": "10s", "bottleneck": "bottleneck"}
    flows = table["flow"]
    flows[0]["dscp"] = 10  # AF11 for every packet of the five flows
    table["capture"] = [{"link": "bottleneck", "direction": "both", "file": "bn.pcap"}]
    res = qoslab.run(qoslab.Scenario.from_table(table), seed=5, out=tmp_path)
    fields = subprocess.run(
        [
            tshark,
            "-r",
            str(tmp_path / "bn.ab.pcap"),
            "-T",
            "fields",
            "-e",
            "ip.dsfield.dscp",
            "-e",
            "ip.proto",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")
    rows = [r.split("\t") for r in fields if r.strip()]
    lk = res.links.set_index(["link_name", "direction"])
    assert len(rows) == lk.loc[("bottleneck", "ab"), "departures"]
    assert Counter(r[0] for r in rows) == {"10": len(rows)}
    assert {r[1] for r in rows} == {"6"}
    acks = subprocess.run(
        [tshark, "-r", str(tmp_path / "bn.ba.pcap"), "-T", "fields", "-e", "ip.dsfield.dscp"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert len(acks) == lk.loc[("bottleneck", "ba"), "departures"]
    assert set(acks) == {"0"}


def test_pcap_ack_numbers_acknowledge_the_datas_bytes(tmp_path):
    """A capture of both directions of a TCP flow of 1500-byte packets: every ACK's number is
    the byte after some data segment's (seq + len), as a reader such as tshark or Wireshark
    takes it (until 2026-11-27 ACKs were numbered in units of 1000 bytes)."""
    tshark = require("tshark")
    table = qoslab.load_scenario(SCENARIOS / "fdd-red-s1.toml").table()
    table["duration"] = "2s"
    table["measurement"] = {"start": "0s", "end": "2s", "bottleneck": "bottleneck"}
    table["flow"] = table["flow"][:1]
    table["flow"][0]["count"] = 1
    table.setdefault("tcp", {})["packet_size"] = "1500B"
    table["capture"] = [{"link": "bottleneck", "direction": "both", "file": "bn.pcap"}]
    qoslab.run(qoslab.Scenario.from_table(table), seed=1, out=tmp_path)

    def fields(name: str, *f: str) -> list[list[str]]:
        out = subprocess.run(
            [tshark, "-r", str(tmp_path / name), "-T", "fields", *(x for e in f for x in ("-e", e))],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        return [r.split("\t") for r in out.splitlines() if r.strip()]

    # the agent's first packet is a 40-byte SYN (ns-2's `syn_`): segment 0, no payload
    data = [(int(s), int(n)) for s, n in fields("bn.ab.pcap", "tcp.seq_raw", "tcp.len")]
    full = [(s, n) for s, n in data if n]
    acks = {int(a[0]) for a in fields("bn.ba.pcap", "tcp.ack_raw")}
    assert full and acks and {n for _, n in full} == {1460} and all(s % 1460 == 0 for s, _ in data)
    # an ACK names the next byte expected: the start of a segment sent, or the end of one
    edges = {s for s, _ in data} | {s + n for s, n in full}
    assert acks <= edges, sorted(acks - edges)[:5]
