"""Packet capture: tshark reads the file; counts and DSCP values match qoslab's counters."""

import struct
import subprocess
from collections import Counter
from pathlib import Path

import qoslab
from conftest import SCENARIOS, require


def _tshark_fields(tshark: str, path: Path, *f: str) -> list[list[str]]:
    """The fields ``f`` of each record of the capture at ``path``, as tshark reads them."""
    out = subprocess.run(
        [tshark, "-r", str(path), "-T", "fields", *(x for e in f for x in ("-e", e))],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [r.split("\t") for r in out.splitlines() if r.strip()]


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
        return _tshark_fields(tshark, tmp_path / name, *f)

    # the agent's first packet is a 40-byte SYN (ns-2's `syn_`): segment 0, no payload
    data = [(int(s), int(n)) for s, n in fields("bn.ab.pcap", "tcp.seq_raw", "tcp.len")]
    full = [(s, n) for s, n in data if n]
    acks = {int(a[0]) for a in fields("bn.ba.pcap", "tcp.ack_raw")}
    assert full and acks and {n for _, n in full} == {1460} and all(s % 1460 == 0 for s, _ in data)
    # an ACK names the next byte expected: the start of a segment sent, or the end of one
    edges = {s for s, _ in data} | {s + n for s, n in full}
    assert acks <= edges, sorted(acks - edges)[:5]


# One linux-flavour CUBIC flow over 100 Mbit/s with a 100 ms round trip and a deep buffer, its
# initial window (100 segments) larger than the 65,535 bytes the SYN-ACK offers: its first
# flight and the next are limited by the receiver's window, not by its congestion window.
RWND_SCENARIO = """
name = "rwnd"
duration = "3s"
[tcp]
flavour = "linux"
packet_size = "1500B"
initial_window = 100
variant = "cubic"
[[node]]
name = "h0"
[[node]]
name = "r1"
[[node]]
name = "r2"
[[link]]
name = "access"
a = "h0"
b = "r1"
bandwidth = "1Gbps"
delay = "1ms"
[[link]]
name = "bottleneck"
a = "r1"
b = "r2"
bandwidth = "100Mbps"
delay = "49ms"
queue = { type = "droptail", limit = "2000pkts" }
[[flow]]
name = "bulk"
src = "h0"
dst = "r2"
[[capture]]
link = "bottleneck"
direction = "both"
file = "bn.pcap"
"""

#: The SYN-ACK's window (bytes): what the sender may send before the first ACK.
SYN_WINDOW = 65535
#: The scale the capture's window field is written in (`RCV_WSCALE`, the validation host's).
WSCALE = 10


def _tcp_records(path: Path) -> list[tuple[int, int, int, int, int]]:
    """(time ns, seq, ack, window field, payload bytes) of each record of a qoslab capture
    (24-byte header, then 16-byte record headers before IPv4 + TCP headers)."""
    b, i, out = path.read_bytes(), 24, []
    while i + 16 <= len(b):
        sec, nsec, incl, _ = struct.unpack_from("<IIII", b, i)
        ip = b[i + 16 : i + 16 + incl]
        i += 16 + incl
        total = struct.unpack_from(">H", ip, 2)[0]
        seq, ack = struct.unpack_from(">II", ip, 24)
        win = struct.unpack_from(">H", ip, 34)[0]
        out.append((sec * 10**9 + nsec, seq, ack, win, total - 40))
    return out


def test_linux_receivers_window_is_on_the_wire_and_limits_the_sender(tmp_path):
    """The window a linux-flavour receiver offers travels in its ACKs to its sender (the host's
    side table, written at `send_ack`, read when the ACK arrives) and is written in the
    capture: no data segment ends past the right edge offered so far (the SYN-ACK's 65,535
    bytes, then the highest ACK + window seen), the window binds (segments end at that edge),
    and it grows, so the flow gets far more than the SYN-ACK's window allows a round trip.
    Fails if the sender ignores the window (its first flight of 100 segments passes the edge)
    or if the windows do not reach it (it stays at 44 segments a round trip, 5 Mbit/s)."""
    tshark = require("tshark")
    (tmp_path / "s.toml").write_text(RWND_SCENARIO)
    res = qoslab.run(qoslab.load_scenario(tmp_path / "s.toml"), seed=1, out=tmp_path / "run")
    data = _tcp_records(tmp_path / "run" / "bn.ab.pcap")
    acks = _tcp_records(tmp_path / "run" / "bn.ba.pcap")
    # the capture is at the bottleneck: an ACK passes it before the sender reads it, a data
    # segment after the sender sent it, so at each segment the sender knew no more than the
    # edges captured before it
    events = sorted(
        [(t, 0, ack + (win << WSCALE), 0) for t, _, ack, win, _ in acks]
        + [(t, 1, seq, n) for t, seq, _, _, n in data]
    )
    edge, past, at_edge = SYN_WINDOW, [], 0
    for _, is_data, x, n in events:
        if not is_data:
            edge = max(edge, x)
            continue
        # the field is the window in whole segments scaled down: up to 1,023 bytes under it
        if x + n > edge + (1 << WSCALE) - 1:
            past.append((x, n, edge))
        at_edge += x + n > edge - n
    assert not past, past[:5]
    assert at_edge >= 1
    windows = [w for *_, w, _ in acks]
    assert min(windows) > 0 and max(windows) >= 20 * min(windows), (min(windows), max(windows))
    syn_window_rate = SYN_WINDOW * 8 / 0.1
    assert res.flows["throughput_bps"].iloc[0] > 5 * syn_window_rate
    # a reader sees the same field (Wireshark's "window size value", unscaled: the SYN is not captured)
    out = _tshark_fields(tshark, tmp_path / "run" / "bn.ba.pcap", "tcp.window_size_value")
    assert [int(w) for (w,) in out] == windows


def test_ns2_agents_acks_carry_no_window(tmp_path):
    """ns-2's agents advertise no window: their ACKs' field is 65,535, as before."""
    (tmp_path / "s.toml").write_text(
        RWND_SCENARIO.replace('flavour = "linux"', 'flavour = "ns2"').replace(
            'duration = "3s"', 'duration = "1s"'
        )
    )
    qoslab.run(qoslab.load_scenario(tmp_path / "s.toml"), seed=1, out=tmp_path / "run")
    acks = _tcp_records(tmp_path / "run" / "bn.ba.pcap")
    assert acks and {w for *_, w, _ in acks} == {65535}
