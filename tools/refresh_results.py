"""Brings every committed result that the core simulated to the checkout's core, resuming: what
is already at the checkout's core (and, for a verdict file, of the checkout's experiment code)
is skipped, so an interrupted refresh goes on where it stopped, on this machine or another. A
verdict file is stale by the rule ``python -m qoslab.verdicts check`` applies
(:func:`qoslab.verdicts.currency.stale_reasons`).

    .venv/bin/python tools/refresh_results.py --dry-run   # what is stale, and the commands
    .venv/bin/python tools/refresh_results.py             # refresh it all (hours on 2 cores)
    .venv/bin/python tools/refresh_results.py --only senders   # one group (repeatable)

The groups, cheapest first (``--only`` takes their names):

- ``data``: ``docs/models/tcp-linux-measured.json`` (``tools/tcp_linux_measured.py``), the
  validation grids' simulated sides (``python -m qoslab.emulation.validation --refresh``) and
  modern-aqm's committed runs (``docs/experiments/modern-aqm-data/``: its three reproductions);
- ``studies``: the six studies' verdict files (``docs/verdicts/*.json``), each with its page's
  figures (``docfigures collect``), and the figures of the studies of our own;
- ``senders``, ``senders-exact``, ``senders-full``: the sender grids' verdict files.

A verdict file is rerun by the command it records (``command``) with ``--out results/refresh``,
and the new file copied over it; after every step the README's table, the pages' generated
sections and the todays-tcp figures are regenerated, so the tree can be committed at any point
(``python -m qoslab.verdicts.docfigures check`` passes). Compare with the committed files with
``tools/verdict_diff.py --effects --git HEAD FILE``. Exit 1 when a step fails (its log is named).
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "results" / "refresh"
BIN = Path(sys.executable).parent
AQM_DATA = ROOT / "docs" / "experiments" / "modern-aqm-data"
AQM_PAGE = ROOT / "docs" / "experiments" / "modern-aqm.md"
MEASURED = ROOT / "docs" / "models" / "tcp-linux-measured.json"
MEASURED_PAGE = ROOT / "docs" / "models" / "tcp-linux.md"
#: the studies of our own (no verdict file: their pages' figures are what is committed)
OWN = ("red-baseline", "mixed-traffic")
#: modern-aqm's three reproductions whose runs docs/experiments/modern-aqm-data/ keeps: the
#: files' prefix, the command's flags; the page's figures are the linux flavour's (testbed)
AQM_RUNS = {
    "ns2": [],
    "linux-testbed": ["--tcp-flavour", "linux", "--timing", "testbed"],
    "linux-exact": ["--tcp-flavour", "linux", "--timing", "exact"],
}
GROUPS = ("data", "studies", "senders", "senders-exact", "senders-full")


@dataclass
class Step:
    group: str
    name: str
    why: str  # what is stale
    argv: list[str]  # the command that recomputes it (shown by --dry-run)
    finish: Callable[[], None]  # copies what the command wrote into the tree


def core() -> str:
    from qoslab.verdicts.currency import core_fingerprint

    fp = core_fingerprint(ROOT)
    if fp is None:
        raise SystemExit("refresh_results: not a source checkout (no core fingerprint)")
    return fp


def qoslab(*args: str) -> list[str]:
    return [str(BIN / "qoslab"), *args]


def python(*args: str) -> list[str]:
    return [sys.executable, *args]


def run_dir(command: str) -> Path:
    """The folder under :data:`OUT` whose verdicts.json the recorded ``command`` wrote."""
    found = [p.parent for p in OUT.glob("*/verdicts.json") if json.loads(p.read_text())["command"] == command]
    if len(found) != 1:
        raise RuntimeError(f"{len(found)} folders under {OUT} hold a verdicts.json of {command!r}")
    return found[0]


def verdict_steps(fp: str) -> list[Step]:
    from qoslab.verdicts.currency import read, stale_reasons, verdict_files

    steps = []
    for path in verdict_files(ROOT):
        doc = read(path)
        if not (why := stale_reasons(doc, fp)):
            continue
        words = shlex.split(doc["command"])
        if words[:3] != ["qoslab", "reproduce", doc["experiment"]]:
            raise SystemExit(f"{path.relative_to(ROOT)}: `command` {doc['command']!r} is not a reproduction")
        group = "studies" if path.parent.name == "verdicts" else path.parent.name

        def finish(path: Path = path, command: str = doc["command"], group: str = group) -> None:
            src = run_dir(command)
            path.write_bytes((src / "verdicts.json").read_bytes())
            if group == "studies":
                collect(src, src.name)

        steps.append(
            Step(
                group,
                str(path.relative_to(ROOT)),
                "; ".join(why),
                qoslab(*words[1:], "--out", str(OUT)),
                finish,
            )
        )
    return steps


def collect(run: Path, name: str) -> None:
    check(python("-m", "qoslab.verdicts.docfigures", "collect", str(run.parent), name), "collect")


def figure_version(study: str) -> str:
    return json.loads((ROOT / "docs" / "experiments" / "img" / study / "figures.json").read_text())["version"]


def own_steps(fp: str) -> list[Step]:
    steps = []
    for study in OWN:
        if (v := figure_version(study)) != f"0.1.0+{fp}":
            steps.append(
                Step(
                    "studies",
                    f"{study}'s figures",
                    v,
                    qoslab("reproduce", study, "--out", str(OUT)),
                    lambda s=study: collect(OUT / s, s),
                )
            )
    return steps


def data_steps(fp: str) -> list[Step]:
    from qoslab.emulation import validation as vl

    steps = []
    if (v := json.loads(MEASURED.read_text())["fingerprint"]["core"]) != fp:
        steps.append(
            Step(
                "data",
                str(MEASURED.relative_to(ROOT)),
                f"core {v}",
                python("tools/tcp_linux_measured.py", "--out", str(MEASURED)),
                lambda: stamp(MEASURED_PAGE, r"(Simulated only, at core )[0-9a-f]{12}", fp),
            )
        )
    if stale := vl.stale_results(ROOT, fp):
        steps.append(
            Step(
                "data",
                "the validation grids' simulated sides",
                f"{len(stale)} files",
                python("-m", "qoslab.emulation.validation", "--refresh"),
                lambda: None,
            )
        )
    for prefix, flags in AQM_RUNS.items():
        rows = read_csv(AQM_DATA / f"{prefix}-runs.csv")
        versions = {r["version"] for r in rows}
        if versions != {f"0.1.0+{fp}"}:
            folder = "modern-aqm" + ("-tcp-linux-timing-" + flags[-1] if flags else "")

            def finish(prefix: str = prefix, folder: str = folder) -> None:
                aqm_data(prefix, OUT / folder, fp)
                if prefix == "linux-testbed":
                    collect(OUT / folder, f"modern-aqm={folder}")

            steps.append(
                Step(
                    "data",
                    f"modern-aqm-data/{prefix}-*",
                    ", ".join(sorted(versions)),
                    qoslab("reproduce", "modern-aqm", *flags, "--out", str(OUT)),
                    finish,
                )
            )
    return steps


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def aqm_data(prefix: str, src: Path, fp: str) -> None:
    """Copies a modern-aqm reproduction's runs and per-sender summaries (and, where committed,
    per-sender runs); when only the version changed, names the new core in the page's heading
    for it; else says that the page's tables must be read again."""
    pairs = [(src / "runs.csv", AQM_DATA / f"{prefix}-runs.csv")]
    for s in ("reno", "cubic", "bbr"):
        pairs.append((src / f"{s}-summary.csv", AQM_DATA / f"{prefix}-{s}-summary.csv"))
        if (AQM_DATA / f"{prefix}-{s}-runs.csv").exists():
            pairs.append((src / f"{s}-runs.csv", AQM_DATA / f"{prefix}-{s}-runs.csv"))
    moved = []
    for new, old in pairs:
        if comparable(read_csv(old)) != comparable(read_csv(new)):
            moved.append(old.name)
        old.write_bytes(new.read_bytes())
    if moved:
        page = AQM_PAGE.relative_to(ROOT)
        print(f"  modern-aqm-data: {', '.join(moved)} changed beyond the core's name: read {page} again")
    elif prefix != "linux-exact":
        flavour = "ns2" if prefix == "ns2" else "linux"
        stamp(AQM_PAGE, rf"(## In the {flavour} transport flavour[^\n]*qoslab 0\.1\.0\+)[0-9a-f]{{12}}", fp)


#: a run's columns that say how it ran, not what it gave
HOW = ("version", "wall_time_s", "worker", "attempts")
VERSION = re.compile(r"0\.1\.0\+[0-9a-f]{12}")


def comparable(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    """The rows without the columns of :data:`HOW` and with every version string blanked."""
    return [{k: VERSION.sub("V", v or "") for k, v in r.items() if k not in HOW} for r in rows]


def stamp(page: Path, pattern: str, fp: str) -> None:
    text = page.read_text()
    new, n = re.subn(pattern, lambda m: m.group(1) + fp, text)
    if n != 1:
        raise RuntimeError(f"{page.relative_to(ROOT)}: {n} matches of {pattern!r}")
    page.write_text(new)


def regenerate() -> None:
    check(python("-m", "qoslab.verdicts.docfigures", "todays-tcp"), "todays-tcp")
    check(python("-m", "qoslab.verdicts", "readme"), "readme")


def check(argv: list[str], what: str) -> None:
    log = OUT / "logs" / f"{what}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a") as f:
        if subprocess.run(argv, cwd=ROOT, stdout=f, stderr=subprocess.STDOUT).returncode:
            raise RuntimeError(f"`{shlex.join(argv)}` failed: see {log}")


def plan(only: set[str]) -> list[Step]:
    fp = core()
    steps = data_steps(fp) + own_steps(fp) + verdict_steps(fp)
    order = {g: i for i, g in enumerate(GROUPS)}
    return sorted((s for s in steps if not only or s.group in only), key=lambda s: order[s.group])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dry-run", action="store_true", help="list what is stale and the commands")
    ap.add_argument("--only", action="append", choices=GROUPS, default=[], help="one group (repeatable)")
    a = ap.parse_args()
    steps = plan(set(a.only))
    for i, s in enumerate(steps, 1):
        print(f"[{i}/{len(steps)}] {s.group}: {s.name} (stale: {s.why})", flush=True)
        if a.dry_run:
            print(f"    {shlex.join(s.argv)}")
            continue
        t0 = time.monotonic()
        try:
            check(s.argv, re.sub(r"[^\w.-]+", "_", s.name))
            s.finish()
            regenerate()
        except RuntimeError as e:
            print(f"refresh_results: {s.name}: {e}", file=sys.stderr)
            return 1
        print(f"    done in {time.monotonic() - t0:.0f} s", flush=True)
    if not steps:
        print(f"every committed result is at core {core()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
