"""Two builds of the core compared over several code layouts, not one.

A build places every function somewhere in the binary, and where they land moves a run's time:
two builds that differed only in the linux sender's RACK code ran the ns2 flavour, which never
executes it, 4 % apart (docs/performance.md, round 22). A comparison of one build against one
build measures that as much as the change. This tool links each checkout's
`examples/run` several times with its functions in a different order (lld's
`--shuffle-sections`, one seed per layout; Debian's `lld` package), runs every binary on each
scenario file in alternating rounds, keeps each binary's fastest run by CPU time, and gives the
median and range over the layouts:

    python3 tools/layout_ab.py --checkout head=. --checkout new=../wt-new \\
        --point bbr-cubic-1bdp --layouts 8 --rounds 8

`--point NAME` runs a validation-grid point as `qoslab bench --workload linux-flavour` does
(the linux flavour with delayed ACKs against the ns2 flavour as the papers run it; 300 s, seed 1)
and adds the per-hop ratio the bench's guard judges; `--scenario FILE` adds any scenario file.
Binaries go to `build/layouts/`. The measurements are CPU times: run it on an idle machine.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "build" / "layouts"


def build(name: str, checkout: Path, seed: int) -> Path:
    """`examples/run` of `checkout`, its functions in the order of shuffle `seed`."""
    target = OUT / f"target-{name}"
    link = ["-C", "link-arg=-fuse-ld=lld", "-C", f"link-arg=-Wl,--shuffle-sections=.text*={seed}"]
    cmd = ["cargo", "rustc", "-q", "--release", "-p", "qoslab-core", "--example", "run", "--", *link]
    subprocess.run(cmd, cwd=checkout, check=True, env={**os.environ, "CARGO_TARGET_DIR": str(target)})
    dst = OUT / f"{name}-{seed}"
    shutil.copy2(target / "release" / "examples" / "run", dst)
    return dst


def point_files(point: str) -> tuple[Path, Path]:
    """The linux and ns2 arms of validation-grid point `point` as `qoslab bench --workload
    linux-flavour` runs them (:func:`qoslab.bench.linux.arm_scenario`), run 300 s, as TOML
    files (needs qoslab)."""
    from qoslab.bench import linux as bench_linux
    from qoslab.emulation import validation as vl
    from qoslab.toml_writer import dumps

    if point not in {g.name for g in vl.GRID}:
        raise SystemExit(
            f"--point {point}: not a validation-grid point ({', '.join(g.name for g in vl.GRID)})"
        )
    files = []
    for arm in ("linux", "ns2"):
        sc = bench_linux.arm_scenario(point, arm).with_overrides(
            ['duration="300s"', 'measurement.end="300s"'], via="--point"
        )
        f = OUT / f"{point}-{arm}.toml"
        f.write_text(dumps(sc.table()))
        files.append(f)
    return files[0], files[1]


def measure(
    binaries: list[Path], files: list[Path], rounds: int
) -> tuple[dict[tuple[str, str], float], dict[tuple[str, str], int]]:
    """Each (binary, file)'s fastest CPU time over `rounds` alternating rounds, and its
    packet-hops."""
    best: dict[tuple[str, str], float] = {}
    hops: dict[tuple[str, str], int] = {}
    for r in range(rounds):
        order = [(b, f) for b in binaries for f in files]
        for b, f in order if r % 2 == 0 else order[::-1]:
            p = subprocess.Popen([str(b), str(f), "1"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            out = p.stdout.read().decode() if p.stdout else ""
            _, status, ru = os.wait4(p.pid, 0)
            code = os.waitstatus_to_exitcode(status)
            m = re.search(r"hops (\d+)", out)
            if code != 0 or m is None:
                raise SystemExit(f"{b} {f}: exit code {code}, no packet-hop count in its output")
            key = (str(b), str(f))
            hops[key] = int(m.group(1))
            t = ru.ru_utime + ru.ru_stime
            best[key] = min(best.get(key, t), t)
    return best, hops


def summary(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def compare(
    names: list[str],
    seeds: list[int],
    files: list[Path],
    best: dict[tuple[str, str], float],
    hops: dict[tuple[str, str], int],
    pairs: list[tuple[Path, Path]],
) -> dict[str, Any]:
    """Per checkout: each file's fastest time over the layouts, and each pair's per-hop ratio."""
    out: dict[str, Any] = {}
    for n in names:
        bins = [str(OUT / f"{n}-{s}") for s in seeds]
        row: dict[str, Any] = {"files": {}, "pairs": {}}
        for f in files:
            row["files"][f.name] = summary([best[(b, str(f))] * 1e3 for b in bins])
        for a, b in pairs:
            ratios = [
                (best[(x, str(a))] / hops[(x, str(a))]) / (best[(x, str(b))] / hops[(x, str(b))])
                for x in bins
            ]
            row["pairs"][f"{a.name} / {b.name}"] = {**summary(ratios), "layouts": ratios}
        out[n] = row
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--checkout",
        action="append",
        required=True,
        metavar="NAME=DIR",
        help="a checkout to build (several: compared)",
    )
    ap.add_argument(
        "--point", action="append", default=[], help="a validation-grid point (both arms, and their ratio)"
    )
    ap.add_argument("--scenario", action="append", default=[], type=Path, help="a scenario file")
    ap.add_argument("--layouts", type=int, default=8, help="layouts (shuffle seeds) per checkout")
    ap.add_argument("--rounds", type=int, default=8, help="alternating rounds of every binary on every file")
    ap.add_argument("--json", type=Path, help="write the figures here")
    a = ap.parse_args(argv)
    if shutil.which("ld.lld") is None:
        raise SystemExit("ld.lld not found: install Debian's lld package")
    if a.layouts < 1 or a.rounds < 1:
        raise SystemExit("--layouts and --rounds: at least 1")
    OUT.mkdir(parents=True, exist_ok=True)
    checkouts = []
    for spec in a.checkout:
        name, sep, d = spec.partition("=")
        if not sep or not re.fullmatch(r"[A-Za-z0-9_.-]+", name) or not (Path(d) / "Cargo.toml").is_file():
            raise SystemExit(f"--checkout {spec}: give NAME=DIR, DIR a checkout of qoslab")
        checkouts.append((name, Path(d).resolve()))
    files, pairs = list(a.scenario), []
    for point in a.point:
        linux, ns2 = point_files(point)
        files += [linux, ns2]
        pairs.append((linux, ns2))
    if not files:
        raise SystemExit("nothing to run: give --point or --scenario")
    seeds = list(range(1, a.layouts + 1))
    binaries = []
    for name, d in checkouts:
        for s in seeds:
            print(f"building {name}, layout {s}/{a.layouts} …", file=sys.stderr)
            binaries.append(build(name, d, s))
    best, hops = measure(binaries, files, a.rounds)
    res = compare([n for n, _ in checkouts], seeds, files, best, hops, pairs)
    for n, row in res.items():
        for f, v in row["files"].items():
            print(f"{n:>10} {f}: {v['median']:.1f} ms (layouts {v['min']:.1f}–{v['max']:.1f})")
        for p, v in row["pairs"].items():
            print(f"{n:>10} per hop {p}: {v['median']:.3f} (layouts {v['min']:.3f}–{v['max']:.3f})")
    if a.json:
        a.json.write_text(
            json.dumps({"layouts": a.layouts, "rounds": a.rounds, "results": res}, indent=1) + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
