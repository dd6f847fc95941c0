"""tools/layout_ab.py: two builds compared over several code layouts (the summary over layouts,
the per-hop ratio of a pair, and its refusals). Building and running the binaries is what the
tool's own call does; here its arithmetic and its checks of the command line."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import layout_ab  # noqa: E402


def test_each_checkout_is_summarised_over_its_layouts_and_a_pair_per_hop() -> None:
    out = layout_ab.OUT
    linux, ns2 = Path("p-linux.toml"), Path("p-ns2.toml")
    # two layouts each: the linux arm 80 and 84 ms over 800 hops, the ns2 arm 70 and 68 ms over 1000
    best = {
        (str(out / "a-1"), str(linux)): 0.080,
        (str(out / "a-1"), str(ns2)): 0.070,
        (str(out / "a-2"), str(linux)): 0.084,
        (str(out / "a-2"), str(ns2)): 0.068,
    }
    hops = {
        (b, f): n
        for b in (str(out / "a-1"), str(out / "a-2"))
        for f, n in ((str(linux), 800), (str(ns2), 1000))
    }
    res = layout_ab.compare(["a"], [1, 2], [linux, ns2], best, hops, [(linux, ns2)])
    files = res["a"]["files"]
    assert files["p-linux.toml"] == {"median": pytest.approx(82.0), "min": 80.0, "max": 84.0}
    pair = res["a"]["pairs"]["p-linux.toml / p-ns2.toml"]
    # per hop: (0.080/800) / (0.070/1000) = 1.4286 and (0.084/800) / (0.068/1000) = 1.5441
    assert pair["layouts"] == pytest.approx([1.428571, 1.544118], rel=1e-5)
    assert pair["median"] == pytest.approx((1.428571 + 1.544118) / 2, rel=1e-5)


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--checkout", "nodir", "--scenario", "x.toml"], "give NAME=DIR"),
        (["--checkout", "a=/nonexistent", "--scenario", "x.toml"], "give NAME=DIR"),
        (["--checkout", f"a b={ROOT}", "--scenario", "x.toml"], "give NAME=DIR"),
        (["--checkout", f"a={ROOT}"], "nothing to run"),
        (["--checkout", f"a={ROOT}", "--scenario", "x.toml", "--layouts", "0"], "at least 1"),
    ],
)
def test_a_bad_command_line_is_one_line(args: list[str], said: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(layout_ab.shutil, "which", lambda name: "/usr/bin/ld.lld")
    monkeypatch.setattr(layout_ab, "build", lambda *a: pytest.fail("built despite a bad command line"))
    with pytest.raises(SystemExit, match=said):
        layout_ab.main(args)


def test_without_lld_it_says_which_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(layout_ab.shutil, "which", lambda name: None)
    with pytest.raises(SystemExit, match="install Debian's lld"):
        layout_ab.main(["--checkout", f"a={ROOT}", "--scenario", "x.toml"])
