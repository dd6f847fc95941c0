"""One kernel run of a validation grid point, its first sender's start captured on the wire:
every ACK the sender receives in the first seconds, with the segments it acknowledges, the
receiver's advertised window and the RTT sample the sender's CUBIC takes from it (the newest
segment it acknowledges, as ``tcp_clean_rtx_queue``'s ``ca_rtt_us``). Evidence for
docs/validation/linux.md (one flow alone); root, the emulation tools, ``dumpcap`` and ``tshark``.

    sudo .venv/bin/python tools/kernel_capture.py --point cubic-alone-1bdp --seed 1 \\
        --out docs/validation/linux/capture-cubic-alone-1bdp.json
    sudo .venv/bin/python tools/kernel_capture.py --point cubic5-1bdp --seed 2 --seconds 7 \\
        --out docs/validation/linux/ack-clock-cubic5-1bdp.json

The second form is the testbed's timing noise measured on the kernel's ACK clock
(`qoslab.emulation.validation.ack_clock_noise`, docs/validation/linux.md, "Timing").

The capture runs on the first sender's veth (``l0a`` in its namespace), from before the flow
starts for ``--seconds`` of the flow; the run is the grid's own (`qoslab.emulation.validation`).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from qoslab import emulation as emulate  # noqa: E402
from qoslab.emulation import validation as vl  # noqa: E402

#: The capture's length in real seconds from when it starts (the flow starts within the first
#: seconds of a run, after the namespaces and daemons are set up).
CAPTURE_S = 8


def _namespaces() -> set[str]:
    return set(subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split())


def _capture(before: set[str], pcap: Path, done: threading.Event) -> None:
    """Waits for this run's first sender namespace and its veth, then captures on it."""
    while not done.is_set():
        mine = [n for n in _namespaces() - before if re.search(r"-h0$", n)]
        if mine:
            up = subprocess.run(["ip", "-n", mine[0], "link", "show", "l0a"], capture_output=True, text=True)
            if up.returncode == 0 and "UP" in up.stdout:
                cmd = [
                    "dumpcap",
                    "-q",
                    "-P",
                    "-i",
                    "l0a",
                    "-a",
                    f"duration:{CAPTURE_S}",
                    "-s",
                    "96",
                    "-w",
                    str(pcap),
                ]
                subprocess.run(["ip", "netns", "exec", mine[0], *cmd], capture_output=True)
                return
        time.sleep(0.005)


def _fields(pcap: Path, flt: str, *names: str) -> list[list[str]]:
    out = subprocess.run(
        ["tshark", "-r", str(pcap), "-Y", flt, "-T", "fields", *(x for n in names for x in ("-e", n))],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [row.split("\t") for row in out.splitlines() if row.strip()]


def summarize(pcap: Path, seconds: float) -> dict[str, Any]:
    """The ACKs of the capture's data connection over its first ``seconds``."""
    syn = _fields(pcap, "tcp.flags.syn==1 && tcp.flags.ack==0", "tcp.srcport", "tcp.options.mss_val")
    if not syn:
        raise SystemExit("error: the capture holds no connection start (the flow started before it?)")
    port, mss = syn[0][0], int(syn[0][1])
    data = _fields(pcap, f"tcp.srcport=={port} && tcp.len>0", "frame.time_epoch", "tcp.seq_raw", "tcp.len")
    acks = _fields(
        pcap, f"tcp.dstport=={port} && tcp.len==0", "frame.time_epoch", "tcp.ack_raw", "tcp.window_size"
    )
    t0, base = float(data[0][0]), int(data[0][1])
    sent: dict[int, list[float]] = {}
    for t, seq, n in data:
        sent.setdefault((int(seq) - base + int(n)) // mss, []).append(float(t) - t0)
    # SND.NXT (in segments) after each transmission, in time order
    nxt_at: list[tuple[float, int]] = []
    for t, seq, n in data:
        end = (int(seq) - base + int(n)) // mss
        nxt_at.append((float(t) - t0, max(end, nxt_at[-1][1] if nxt_at else 0)))
    rows, prev = [], 0
    for t, ack, win in acks:
        at, acked = float(t) - t0, (int(ack) - base) // mss
        if at < 0 or at > seconds or acked <= prev:
            continue
        tx = sent.get(acked, [])
        snd_nxt = max((n for ts, n in nxt_at if ts <= at), default=0)
        rows.append(
            {
                "t_ms": round(at * 1e3, 3),
                "acked": acked,
                "snd_nxt": snd_nxt,
                "newly_acked": acked - prev,
                "window_segments": int(win) // mss,
                # the newest acknowledged segment's RTT, when it was sent once (Karn)
                "rtt_ms": round((at - tx[0]) * 1e3, 3) if len(tx) == 1 else None,
            }
        )
        prev = acked
    return {"mss": mss, "seconds": seconds, "acks": rows}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="tools/kernel_capture.py", description=__doc__.split("\n")[0])
    ap.add_argument("--point", default="cubic-alone-1bdp", help="grid point (default %(default)s)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=0.4, help="of the flow summarised (default %(default)s)")
    ap.add_argument("--out", required=True, help="the summary (JSON)")
    a = ap.parse_args(argv)
    points = {p.name: p for p in vl.GRID}
    if a.point not in points:
        print(f"error: --point: no grid point {a.point!r}", file=sys.stderr)
        return 2
    missing = [t for t in ("dumpcap", "tshark") if shutil.which(t) is None]
    ok, why = emulate.availability()
    if missing or not ok:
        print(f"error: needs {', '.join(missing) or why}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        pcap = Path(tmp) / "start.pcap"
        done = threading.Event()
        watcher = threading.Thread(target=_capture, args=(_namespaces(), pcap, done), daemon=True)
        watcher.start()
        started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        res = emulate.run(vl.scenario(points[a.point]), a.seed)
        done.set()
        watcher.join(timeout=CAPTURE_S + 5)
        if not pcap.exists():
            print("error: nothing was captured", file=sys.stderr)
            return 1
        doc = {
            "point": a.point,
            "seed": a.seed,
            "kernel": res.host_settings.get("kernel"),
            "started_utc": started,
            "flow": {
                k: v for k, v in res.flows.iloc[0].items() if k.startswith(("kernel_total", "kernel_hystart"))
            },
            **summarize(pcap, a.seconds),
        }
    Path(a.out).write_text(json.dumps(doc, indent=1, default=float) + "\n")
    print(f"wrote {a.out}: {len(doc['acks'])} ACKs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
