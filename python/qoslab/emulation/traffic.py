"""Built-in traffic for emulation mode: bulk TCP and UDP CBR / Poisson / ON-OFF sources and
their sinks, run inside the run's network namespaces (`ip netns exec NS python traffic.py
...`). Standard library only, so that it starts fast and needs nothing installed.

Every process is bounded in time: sources stop at ``--stop``, sinks at ``--until`` (absolute
CLOCK_MONOTONIC seconds, the same clock in every namespace). Sinks write per-bin received
bytes/packets as JSON; sources write what they sent.
"""

from __future__ import annotations

import argparse
import json
import random
import select
import socket
import struct
import time
from typing import Any

#: Width of the throughput bins (s).
BIN_S = 0.1
#: A UDP source's send later than this after its scheduled time counts as late (s).
SLIP_S = 0.001
#: How many late sends a UDP source records one by one.
MAX_SLIPS = 100_000


def _sleep_until(t: float) -> None:
    while True:
        d = t - time.monotonic()
        if d <= 0:
            return
        time.sleep(min(d, 0.05))


class Bins:
    """Bytes and packets per BIN_S bin, counted from ``epoch``."""

    def __init__(self, epoch: float, until: float) -> None:
        self.epoch = epoch
        self.bytes = [0] * (int((until - epoch) / BIN_S) + 2)
        self.pkts = [0] * len(self.bytes)

    def add(self, now: float, nbytes: int) -> None:
        i = min(max(int((now - self.epoch) / BIN_S), 0), len(self.bytes) - 1)
        self.bytes[i] += nbytes
        self.pkts[i] += 1


def _ready(a: argparse.Namespace) -> None:
    """Tells the run the sink is listening, then (with ``--epoch-file``) waits for the run to
    fix the traffic's time zero, which it does once every sink listens."""
    with open(a.out + ".ready", "w") as f:
        f.write("ready\n")
    if not a.epoch_file:
        return
    deadline = time.monotonic() + a.epoch_wait
    while True:
        try:
            with open(a.epoch_file) as f:
                t = json.load(f)
            a.epoch, a.until = float(t["epoch"]), float(t["until"])
            return
        except (FileNotFoundError, json.JSONDecodeError, KeyError):
            if time.monotonic() > deadline:
                raise SystemExit(f"no time zero in {a.epoch_file} after {a.epoch_wait:g} s") from None
            time.sleep(0.01)


def tcp_sink(a: argparse.Namespace) -> dict[str, Any]:
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, a.mss)
    if a.window_bytes > 0:
        # ns-2's advertised-window cap (`window_`): the accepted sockets inherit the clamp
        ls.setsockopt(socket.IPPROTO_TCP, socket.TCP_WINDOW_CLAMP, a.window_bytes)
    ls.bind((a.bind, a.port))
    ls.listen(8)
    _ready(a)
    ls.setblocking(False)
    bins = Bins(a.epoch, a.until)
    conns: list[socket.socket] = []
    total = 0
    buf = bytearray(1 << 20)
    while True:
        now = time.monotonic()
        if now >= a.until:
            break
        r, _, _ = select.select([ls, *conns], [], [], min(0.05, a.until - now))
        for s in r:
            if s is ls:
                c, _ = ls.accept()
                c.setblocking(False)
                conns.append(c)
                continue
            # drain the socket: a receiver that lags would shrink its advertised window
            n = 0
            closed = False
            while True:
                try:
                    k = s.recv_into(buf)
                except BlockingIOError:
                    break
                except ConnectionResetError:
                    closed = True
                    break
                if k == 0:
                    closed = True
                    break
                n += k
            if n:
                total += n
                bins.add(time.monotonic(), n)
            if closed:
                conns.remove(s)
                s.close()
    return {"bytes": total, "bin_s": BIN_S, "bin_bytes": bins.bytes}


#: The host's TCP counters (/proc/net/netstat, this namespace's) that a source reports the
#: change of over its run: retransmission timeouts, losses recovered by duplicate ACKs with
#: and without SACK, reordering detected, tail loss probes, timeouts undone as spurious, and
#: CUBIC's HyStart leaving slow start by its ACK-train or its delay test (each with the sum of
#: the windows it left at: tcp_cubic.c's LINUX_MIB_TCPHYSTART*).
TCPEXT_COUNTERS = (
    "TCPTimeouts",
    "TCPRenoRecovery",
    "TCPSackRecovery",
    "TCPRenoReorder",
    "TCPSACKReorder",
    "TCPTSReorder",
    "TCPLossProbes",
    "TCPSpuriousRTOs",
    "TCPHystartTrainDetect",
    "TCPHystartTrainCwnd",
    "TCPHystartDelayDetect",
    "TCPHystartDelayCwnd",
)


def tcpext() -> dict[str, int]:
    """This network namespace's TcpExt counters named in TCPEXT_COUNTERS (those it has)."""
    try:
        with open("/proc/net/netstat") as f:
            lines = [ln.split() for ln in f if ln.startswith("TcpExt:")]
    except OSError:
        return {}
    if len(lines) < 2:
        return {}
    row = dict(zip(lines[0][1:], lines[1][1:], strict=False))
    return {k: int(row[k]) for k in TCPEXT_COUNTERS if k in row}


def tcp_info(s: socket.socket) -> dict[str, int]:
    """The connection's state from the kernel (``struct tcp_info``, linux/tcp.h): its
    retransmission timeout now and its backoff, its reordering estimate (segments; raised
    when duplicate ACKs turn out to be reordering, which without SACK delays every later
    fast retransmit), the segments retransmitted in all, congestion window and threshold."""
    try:
        b = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 232)
    except OSError:
        return {}
    if len(b) < 104:
        return {}
    backoff = b[4]  # offsets: linux/tcp.h, unchanged since Linux 2.6
    (rto_us,) = struct.unpack_from("I", b, 8)
    rtt_us, _rttvar, snd_ssthresh, snd_cwnd, _advmss, reordering = struct.unpack_from("6I", b, 68)
    (total_retrans,) = struct.unpack_from("I", b, 100)
    return {
        "backoff": backoff,
        "rto_us": rto_us,
        "rtt_us": rtt_us,
        "snd_ssthresh": snd_ssthresh,
        "snd_cwnd": snd_cwnd,
        "reordering": reordering,
        "total_retrans": total_retrans,
    }


def tcp_source(a: argparse.Namespace) -> dict[str, Any]:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, a.mss)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, a.cc.encode())
    s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, a.tos)
    s.bind((a.bind, 0))
    _sleep_until(a.start)
    late = time.monotonic() - a.start
    sent = 0
    err = ""
    before = tcpext()
    info: dict[str, int] = {}
    try:
        s.settimeout(max(a.stop - time.monotonic(), 0.1))
        s.connect((a.dst, a.port))
        late = max(late, 0.0)
        buf = b"\0" * (1 << 16)
        s.setblocking(False)
        while True:
            now = time.monotonic()
            if now >= a.stop:
                break
            _, w, _ = select.select([], [s], [], min(0.05, a.stop - now))
            if w:
                try:
                    sent += s.send(buf)
                except BlockingIOError:
                    pass
        info = tcp_info(s)
    except OSError as e:
        err = str(e)
    finally:
        s.close()
    after = tcpext()
    return {
        "bytes": sent,
        "error": err,
        "start_late_s": late,
        "tcp_info": info,
        # the whole namespace's: shared by the flows that start on this host
        "host_tcpext": {k: after[k] - before[k] for k in after if k in before},
    }


def udp_sink(a: argparse.Namespace) -> dict[str, Any]:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
    s.bind((a.bind, a.port))
    s.setblocking(False)
    _ready(a)
    bins = Bins(a.epoch, a.until)
    total = pkts = 0
    while True:
        now = time.monotonic()
        if now >= a.until:
            break
        r, _, _ = select.select([s], [], [], min(0.05, a.until - now))
        while r:
            try:
                data = s.recv(1 << 16)
            except BlockingIOError:
                break
            # Wire size: the IP (20) and UDP (8) headers count, as in the simulator.
            total += len(data) + 28
            pkts += 1
            bins.add(time.monotonic(), len(data) + 28)
    return {"bytes": total, "packets": pkts, "bin_s": BIN_S, "bin_bytes": bins.bytes}


def udp_source(a: argparse.Namespace) -> dict[str, Any]:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, a.tos)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 22)
    s.bind((a.bind, 0))
    payload = b"\0" * max(a.size - 28, 0)
    gap = a.size * 8 / a.rate
    rng = random.Random(a.seed)
    _sleep_until(a.start)
    late = time.monotonic() - a.start
    # The schedule is kept in whole nanoseconds after --start, as the simulator keeps its
    # clock: adding a float gap to a float clock 1,250 times can land the send due at --stop
    # a few ulps before it, and one packet more goes out than the simulator sends.
    span_ns = round((a.stop - a.start) * 1e9)
    gap_ns = max(round(gap * 1e9), 1)
    off_ns = 0
    on_until_ns = round(rng.expovariate(1 / a.on) * 1e9) if a.kind == "onoff" else None
    sent = 0
    # Schedule slip: a source descheduled by a busy host sends late, then catches up in a
    # burst, which a meter sees as a different arrival process (tokens lost while the bucket
    # is full). Sends later than SLIP_S are recorded so that the run can say so and a check
    # can replay the arrivals the meter actually saw.
    slip_max, late_sends = 0.0, 0
    slips: list[list[float]] = []
    while off_ns < span_ns:
        t = a.start + off_ns / 1e9
        _sleep_until(t)
        slip = time.monotonic() - t
        slip_max = max(slip_max, slip)
        if slip > SLIP_S:
            late_sends += 1
            if len(slips) < MAX_SLIPS:
                slips.append([off_ns / 1e9, round(slip, 6)])
        try:
            s.sendto(payload, (a.dst, a.port))
            sent += 1
        except OSError:
            pass
        if a.kind == "poisson":
            off_ns += round(rng.expovariate(1 / gap) * 1e9)
        else:
            off_ns += gap_ns
        if on_until_ns is not None and off_ns >= on_until_ns:
            off_ns = on_until_ns + round(rng.expovariate(1 / a.off) * 1e9)
            on_until_ns = off_ns + round(rng.expovariate(1 / a.on) * 1e9)
    return {
        "packets": sent,
        "bytes": sent * a.size,
        "start_late_s": late,
        "slip_max_s": slip_max,
        "late_sends": late_sends,
        # [scheduled send time after --start, how late it was sent] (s), the first MAX_SLIPS
        "late_send_slips": slips,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("mode", choices=["tcp-sink", "tcp-source", "udp-sink", "udp-source"])
    p.add_argument("--bind", required=True)
    p.add_argument("--dst", default="")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--epoch", type=float, default=0.0, help="time zero of the run (monotonic s)")
    p.add_argument("--start", type=float, default=0.0)
    p.add_argument("--stop", type=float, default=0.0)
    p.add_argument("--until", type=float, default=0.0)
    p.add_argument("--epoch-file", default="", help="sinks: read --epoch and --until from this JSON file")
    p.add_argument("--epoch-wait", type=float, default=120.0, help="sinks: how long to wait for it (s)")
    p.add_argument("--mss", type=int, default=1460)
    p.add_argument("--cc", default="reno")
    p.add_argument("--window-bytes", type=int, default=0, help="TCP receive window clamp")
    p.add_argument("--tos", type=int, default=0)
    p.add_argument("--kind", default="cbr", choices=["cbr", "poisson", "onoff"])
    p.add_argument("--rate", type=float, default=1e6)
    p.add_argument("--size", type=int, default=1000)
    p.add_argument("--on", type=float, default=1.0)
    p.add_argument("--off", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    fn = {"tcp-sink": tcp_sink, "tcp-source": tcp_source, "udp-sink": udp_sink, "udp-source": udp_source}
    res = fn[a.mode](a)
    with open(a.out, "w") as f:
        json.dump(res, f)


if __name__ == "__main__":
    main()
