"""An emulation run's results: the daemons' and the traffic's reports assembled into tables
shaped like the simulator's, and the side-by-side comparison with a simulated run."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from qoslab.report.csvsafe import write_csv
from qoslab.runs.simulate import jain_index
from qoslab.scenario import Scenario


@dataclass
class EmuResult:
    """An emulation run's tables, shaped like the simulator's :class:`qoslab.runs.simulate.Result`."""

    scenario: Scenario
    seed: int
    flows: pd.DataFrame
    links: pd.DataFrame
    conditioners: pd.DataFrame
    dscp_counts: pd.DataFrame
    daemons: list[dict[str, Any]]
    wall_time_s: float
    prefix: str
    #: Per-flow throughput at the receiver per second of the run (bytes on the wire).
    series_flow: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: Per flow (by name), its source's report (traffic.py). UDP: the worst slip behind
    #: its schedule and the sends over 1 ms late as ``[scheduled time after the flow's start,
    #: slip]`` (s). TCP: the kernel's ``tcp_info`` at the end and its host's TcpExt counters'
    #: change over the run.
    sources: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: What a sending host's kernel was set to, read back from it before the traffic started
    #: (:func:`qoslab.emulation.host.read_host_settings`): kernel release, TCP sysctls, the
    #: veth's offloads, qdiscs and routes.
    host_settings: dict[str, Any] = field(default_factory=dict)

    def late_sources(self) -> pd.DataFrame:
        """UDP flows whose source sent a packet more than 1 ms after its scheduled time."""
        f = self.flows
        if "late_sends" not in f:
            return f.iloc[0:0]
        return f.loc[f["late_sends"] > 0, ["name", "send_slip_max_s", "late_sends"]]

    @property
    def fairness_index(self) -> float:
        return jain_index(self.flows["throughput_bps"].to_numpy())

    def lateness(self) -> pd.DataFrame:
        return pd.DataFrame([{"node": d["node"], **d["lateness"]} for d in self.daemons])

    def summary(self) -> dict[str, Any]:
        return {
            "mode": "emulation",
            "scenario": self.scenario.name,
            "scenario_source": self.scenario.source,
            "seed": self.seed,
            "duration_s": self.scenario.resolved["duration_ns"] / 1e9,
            "measurement_window_s": [
                self.scenario.resolved["measurement"]["start_ns"] / 1e9,
                self.scenario.resolved["measurement"]["end_ns"] / 1e9,
            ],
            "fairness_index": self.fairness_index,
            "aggregate_throughput_bps": float(self.flows["throughput_bps"].sum()),
            "flows": self.flows.to_dict(orient="records"),
            "lateness": self.lateness().to_dict(orient="records"),
            "wall_time_s": self.wall_time_s,
            "run_prefix": self.prefix,
            "host_settings": self.host_settings,
        }

    def write(self, out: str | Path) -> Path:
        d = Path(out)
        d.mkdir(parents=True, exist_ok=True)
        for name in ("flows", "links", "conditioners", "dscp_counts", "series_flow"):
            write_csv(getattr(self, name), d / f"{name}.csv")
        (d / "summary.json").write_text(json.dumps(self.summary(), indent=2, default=float) + "\n")
        (d / "daemons.json").write_text(json.dumps(self.daemons, indent=2) + "\n")
        (d / "sources.json").write_text(json.dumps(self.sources) + "\n")
        (d / "scenario.toml").write_text(self.scenario.text)
        return d


#: The flows' columns of CUBIC's HyStart counters (``kernel_hystart_KEY``) and the TcpExt
#: counters they read (``TCPHystartNAME``, reported by each source's namespace).
HYSTART_COUNTERS = {
    "train": "TrainDetect",
    "train_cwnd": "TrainCwnd",
    "delay": "DelayDetect",
    "delay_cwnd": "DelayCwnd",
}


def _int_or_nan(x: Any) -> float:
    return float("nan") if x is None else float(int(x))


def _summed_bins(per_daemon: list[dict[str, Any]], key: str) -> np.ndarray:
    """One flow's per-bin counts ``key`` summed over the daemons that report it (each daemon's
    bins start at the run's epoch; a shorter list is padded with zeros)."""
    out = np.zeros(max((len(x.get(key, [])) for x in per_daemon), default=0))
    for x in per_daemon:
        out[: len(x.get(key, []))] += x.get(key, [])
    return out


def assemble(
    sc: Scenario,
    seed: int,
    reports: list[dict[str, Any]],
    traffic: dict[tuple[str, int], dict[str, Any]],
    dscp_rows: list[dict[str, Any]],
    wall: float,
    prefix: str,
) -> EmuResult:
    r = sc.resolved
    m = r["measurement"]
    w0, w1 = m["start_ns"] / 1e9, m["end_ns"] / 1e9
    frows = []
    sources: dict[str, dict[str, Any]] = {}
    series: list[dict[str, Any]] = []
    for fi, f in enumerate(r["flows"]):
        sink = traffic.get(("sink", fi), {})
        src = traffic.get(("source", fi), {})
        bins = np.asarray(sink.get("bin_bytes", []), dtype=float)
        bs = sink.get("bin_s", 0.1)
        i0, i1 = int(round(w0 / bs)), int(round(w1 / bs))
        win = float(bins[i0:i1].sum()) if len(bins) else 0.0
        if f["kind"] == "tcp":
            # payload → bytes on the wire (40-byte TCP/IP header per segment), as ns-2 counts
            mss = f["packet_size_bytes"] - 40
            wire = win * f["packet_size_bytes"] / mss
        else:
            wire = win
        scale = f["packet_size_bytes"] / (f["packet_size_bytes"] - 40) if f["kind"] == "tcp" else 1.0
        per_s = int(round(1.0 / bs))
        per_flow = [d["flows"][fi] for d in reports]
        # the daemons' drops of the flow's data packets, in their 0.1 s bins (the sink's)
        drops = _summed_bins(per_flow, "dropped_bin_packets")
        for k in range(0, len(bins) - per_s + 1, per_s):
            series.append(
                {
                    "time_s": (k + per_s) * bs,
                    "flow": fi,
                    "flow_name": f["name"],
                    "throughput_bps": float(bins[k : k + per_s].sum()) * scale * 8,
                    "dropped_packets": int(drops[k : k + per_s].sum()),
                }
            )
        dl = _summed_bins(per_flow, "delivered_bin_bytes")
        j0, j1 = int(round(w0 / 0.1)), int(round(w1 / 0.1))
        frows.append(
            {
                "name": f["name"],
                "src": f["src"],
                "dst": f["dst"],
                "kind": f["kind"],
                # as the simulator: bytes on the wire of data packets reaching the receiver's node
                "throughput_bps": float(dl[j0:j1].sum()) * 8 / (w1 - w0),
                # what the receiving application read (TCP: in order; payload scaled to the wire)
                "app_throughput_bps": wire * 8 / (w1 - w0),
                "goodput_bps": win * 8 / (w1 - w0),
                "received_bytes": int(sink.get("bytes", 0)),
                "sent_bytes": int(src.get("bytes", 0)),
                "green_packets": max((x["colored_green"] for x in per_flow), default=0),
                "yellow_packets": max((x["colored_yellow"] for x in per_flow), default=0),
                "red_packets": max((x["colored_red"] for x in per_flow), default=0),
                "early_drops": sum(x["drops_early"] for x in per_flow),
                "forced_drops": sum(x["drops_forced"] for x in per_flow),
                "overflow_drops": sum(x["drops_overflow"] for x in per_flow),
                "policed_drops": sum(x["drops_policed"] for x in per_flow),
                "dropped_packets": sum(
                    x["drops_early"] + x["drops_forced"] + x["drops_overflow"] + x["drops_policed"]
                    for x in per_flow
                ),
                "source_error": src.get("error", ""),
                "start_late_s": float(src.get("start_late_s", float("nan"))),
                # UDP sources: how late the worst send was, and how many were over 1 ms late
                "send_slip_max_s": float(src.get("slip_max_s", float("nan"))),
                "late_sends": int(src.get("late_sends", 0)),
                # TCP sources: the kernel's view of the connection when it closed (tcp_info), and
                # the retransmission timeouts of its host over the run (shared by the host's flows)
                "kernel_total_retrans": _int_or_nan(src.get("tcp_info", {}).get("total_retrans")),
                "kernel_reordering": _int_or_nan(src.get("tcp_info", {}).get("reordering")),
                "kernel_host_timeouts": _int_or_nan(src.get("host_tcpext", {}).get("TCPTimeouts")),
                # CUBIC's exits from slow start on the host, by test, and the windows they left at
                **{
                    f"kernel_hystart_{k}": _int_or_nan(src.get("host_tcpext", {}).get(f"TCPHystart{c}"))
                    for k, c in HYSTART_COUNTERS.items()
                },
            }
        )
        sources[f["name"]] = src
    lrows = [row for d in reports for row in d["links"]]
    links = (
        pd.DataFrame(lrows).sort_values("direction_index").reset_index(drop=True) if lrows else pd.DataFrame()
    )
    dur = r["duration_ns"] / 1e9
    if len(links):
        bw = [r["links"][i]["bandwidth_bps"] for i in links["link"]]
        links["utilization"] = links["departed_bytes"] * 8 / (np.asarray(bw) * dur)
    crow = [c for d in reports for c in d["conditioners"]]
    conds = (
        pd.DataFrame(crow).sort_values("conditioner").reset_index(drop=True)
        if crow
        else pd.DataFrame(columns=["conditioner", "name", "green_packets", "yellow_packets", "red_packets"])
    )
    if len(conds):
        conds.insert(2, "link", [r["conditioners"][i]["link"] for i in conds["conditioner"]])
        conds.insert(3, "meter", [r["conditioners"][i]["meter"]["type"] for i in conds["conditioner"]])
    return EmuResult(
        scenario=sc,
        seed=seed,
        flows=pd.DataFrame(frows),
        links=links,
        conditioners=conds,
        dscp_counts=pd.DataFrame(dscp_rows, columns=["flow", "flow_name", "dscp", "packets", "bytes"]),
        daemons=reports,
        wall_time_s=wall,
        prefix=prefix,
        series_flow=pd.DataFrame(series),
        sources=sources,
    )


def compare_table(sim: Any, emu: EmuResult) -> list[list[str]]:
    """Rows (quantity, simulated, emulated) for ``--compare``."""
    rows: list[list[str]] = []
    for (_, s), (_, e) in zip(sim.flows.iterrows(), emu.flows.iterrows(), strict=True):
        rows.append(
            [
                f"{s['name']} throughput (kbit/s)",
                f"{s['throughput_bps'] / 1e3:.1f}",
                f"{e['throughput_bps'] / 1e3:.1f}",
            ]
        )
    rows.append(["Jain index", f"{sim.fairness_index:.3f}", f"{emu.fairness_index:.3f}"])
    rows.append(
        [
            "aggregate (kbit/s)",
            f"{sim.flows['throughput_bps'].sum() / 1e3:.1f}",
            f"{emu.flows['throughput_bps'].sum() / 1e3:.1f}",
        ]
    )
    for c in ("green", "yellow", "red"):
        rows.append(
            [
                f"marked {c} (packets)",
                str(int(sim.flows[f"{c}_packets"].sum())),
                str(int(emu.flows[f"{c}_packets"].sum())),
            ]
        )
    bn = sim.scenario.resolved["measurement"]["bottleneck"]
    sl = sim.links[sim.links["link_name"] == bn]
    el = emu.links[emu.links["link_name"] == bn] if len(emu.links) else emu.links
    for k, name in enumerate(("green/AFx1", "yellow/AFx2", "red/AFx3+BE")):
        rows.append(
            [
                f"{bn} drops {name}",
                str(int(sl[f"drops_prec{k}"].sum())),
                str(int(el[f"drops_prec{k}"].sum()) if len(el) else "-"),
            ]
        )
    for kind in ("early", "forced", "overflow"):
        rows.append(
            [
                f"{bn} {kind} drops",
                str(int(sl[f"{kind}_drops"].sum())),
                str(int(el[f"{kind}_drops"].sum()) if len(el) else "-"),
            ]
        )
    return rows
