"""What the emulation tests share (test_emulate*.py): the availability mark, the namespace
checks, the ``judge`` and ``clean`` fixtures, and the summaries their messages print. The
emulation tests are split over files so that pytest-xdist (``--dist loadfile``) can run the
ones that need not run alone beside other work."""

from __future__ import annotations

import itertools
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from qoslab import emulation as emu
from qoslab.runs.simulate import run as simulate
from qoslab.scenario import Scenario, load_scenario

HERE = Path(__file__).resolve().parent
SCEN = HERE / "emu_scenarios"
QOSLAB = str(Path(sys.executable).parent / "qoslab")

_OK, _WHY = emu.availability()
needs_emulation = pytest.mark.skipif(not _OK, reason=f"emulation unavailable: {_WHY}")
if not _OK:
    print(f"test_emulate: emulation tests skipped: {_WHY}", file=sys.stderr)


def _ours() -> set[str]:
    return {n for n in emu.list_namespaces() if n.startswith(emu.PREFIX)}


def _assert_nothing_left(prefix: str) -> None:
    assert not [n for n in emu.list_namespaces() if n.startswith(prefix)], "namespaces left"
    assert not list(Path(tempfile.gettempdir()).glob(f"{prefix}-*")), "work directory left"
    assert not (emu.STATE_DIR / f"{prefix}.json").exists(), "state file left"
    # veths live only inside the run's namespaces; none may surface in the root namespace
    links = subprocess.run(
        ["ip", "-o", "link", "show", "type", "veth"], capture_output=True, text=True
    ).stdout
    assert not re.search(r": l\d+[ab]@", links), links
    rules = subprocess.run(["iptables-save"], capture_output=True, text=True).stdout
    assert "NFQUEUE" not in rules and "QLAB_DSCP" not in rules, rules


def _runs_seen(shares: list[np.ndarray], emus: list[emu.EmuResult]) -> str:
    """Each emulated run's shares, its senders' kernel counters and its daemons' worst release
    lateness, for a comparison's print and failure messages: a share out of bounds can then be
    told from a disturbed run or from a kernel whose recovery broke down (docs/emulation.md)."""
    kernel = [
        e.flows[["kernel_total_retrans", "kernel_reordering", "kernel_host_timeouts"]].to_numpy().tolist()
        for e in emus
    ]
    late = [float(e.lateness()["max_us"].max()) for e in emus]
    return (
        f"runs {[x.round(3).tolist() for x in shares]}; per run and flow the kernel's "
        f"[retransmitted segments, reordering estimate, host timeouts] {kernel}; "
        f"max release lateness {late} us"
    )


def _mean_wait_s(links: pd.DataFrame) -> float:
    b = links[(links["link_name"] == "bottleneck") & (links["direction"] == "ab")].iloc[0]
    return float(b["window_wait_ns"]) / float(b["window_admitted"]) / 1e9


def _core_greens(times: list[float], trace: Path) -> int:
    """Green packets of cbr-marker.toml's token bucket, the core's meter that the daemon runs,
    on its flow's 1000-byte packets sent at ``times`` (s after the flow's start): the flow
    replayed from a trace written to ``trace``."""
    table = load_scenario(SCEN / "cbr-marker.toml").table()
    flow = table["flow"][0]
    del flow["rate"], flow["packet_size"]
    flow.update(type="trace", trace=str(trace))
    trace.write_text("".join(f"{t:.9f},1000\n" for t in times))
    # the trace is written beside the test, outside any scenario folder: allowed, as
    # --allow-path would (a scenario reads only its own folder's files otherwise)
    sc = Scenario.from_table(table, allow_paths=[trace.parent])
    return int(simulate(sc, 1).conditioners.loc[0, "green_packets"])


def _replayed_greens(src: dict[str, Any], n: int, tmp: Path) -> tuple[int, int, str]:
    """The green packets of cbr-marker.toml's token bucket on its source's n packets (1000
    bytes at 2 Mbit/s) sent on schedule, and sent when the source's report says (its sends
    over 1 ms late moved), and a line saying how late the source was."""
    gap = 1000 * 8 / 2e6
    scheduled = [i * gap for i in range(n)]
    actual = list(scheduled)
    assert len(src["late_send_slips"]) == src["late_sends"]
    for at, slip in src["late_send_slips"]:
        actual[int(round(at / gap))] = at + slip
    # A send under 1 ms late is not recorded, but it still followed the one before it, which
    # may have been late by more than the gap: sends are sequential.
    actual = list(itertools.accumulate(actual, max))
    on_time = _core_greens(scheduled, tmp / "on-time.csv")
    replayed = _core_greens(actual, tmp / "actual.csv")
    late = (
        f"{src['late_sends']} late sends, worst {src['slip_max_s'] * 1e3:.1f} ms, "
        f"{on_time - replayed} green lost to them"
    )
    return on_time, replayed, late
