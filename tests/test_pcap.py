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
