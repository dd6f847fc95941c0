"""Seeds and sweep sizes are checked before anything is planned: one line naming the option and
the limit, never a traceback or gigabytes of planned runs."""

import resource
import subprocess

import pytest

from conftest import QOSLAB, SCENARIOS, one_line_error
from qoslab.runs.simulate import MAX_SEED
from qoslab.runs.sweep import MAX_RUNS, MAX_SEEDS, seed_list

S1 = str(SCENARIOS / "fdd-red-s1.toml")


def _sweep(tmp_path, *args: str) -> subprocess.CompletedProcess[str]:
    def capped() -> None:  # a plan of millions of runs would pass this before any check
        resource.setrlimit(resource.RLIMIT_AS, (1_500_000_000, 1_500_000_000))

    return subprocess.run(
        [QOSLAB, "sweep", S1, *args, "--store", str(tmp_path / "store")],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=capped,
    )


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["--seeds", "30000000"],
            "--seeds: the number of seeds a grid point must be at least 1 and at most 100,000, got 30000000",
        ),
        (
            ["--seeds", "0"],
            "--seeds: the number of seeds a grid point must be at least 1 and at most 100,000, got 0",
        ),
        (["--first-seed", str(10**23)], f"--first-seed: a seed is 0 to 2^63 - 1 ({MAX_SEED}), got {10**23}"),
        (["--first-seed", "-1"], "--first-seed: a seed is 0 to 2^63 - 1"),
        (["--first-seed", str(MAX_SEED), "--seeds", "2"], "the last seed would pass 2^63 - 1"),
        (
            ["--grid", "duration=" + ",".join(f"{100 + k}s" for k in range(11)), "--seeds", "100000"],
            "11 grid points times 100,000 seeds is 1,100,000 runs, above the 1,000,000",
        ),
    ],
)
def test_seed_and_sweep_limits_are_one_line_before_planning(tmp_path, args, expected):
    """`--seeds 30000000` planned 8.6 GB of runs before any ran; `--first-seed 10^23` ended in
    a traceback (SQLite's integer overflow): now one line each, under a 1.5 GB `ulimit -v`,
    and nothing stored."""
    line = one_line_error(_sweep(tmp_path, *args))
    assert expected in line, line


@pytest.mark.parametrize("seed", [str(2**64), str(MAX_SEED + 1), "-1"])
def test_run_refuses_a_seed_out_of_range_in_one_line(seed):
    """`qoslab run --seed 2^64` ended in a traceback (the core's u64), `--seed -1` too."""
    p = subprocess.run([QOSLAB, "run", S1, "--seed", seed], capture_output=True, text=True, timeout=60)
    assert f"--seed: a seed is 0 to 2^63 - 1 ({MAX_SEED}), got {seed}" in one_line_error(p)


def test_the_limits_are_the_declared_ones_and_the_largest_seed_runs():
    import qoslab

    assert seed_list(MAX_SEEDS, MAX_SEED - MAX_SEEDS + 1)[-1] == MAX_SEED
    assert qoslab.run(S1, seed=MAX_SEED).seed == MAX_SEED
    assert MAX_RUNS == 1_000_000 and MAX_SEEDS == 100_000
    help_text = subprocess.run([QOSLAB, "sweep", "--help"], capture_output=True, text=True).stdout
    assert "100,000" in help_text and "1,000,000" in help_text and "2^63" in help_text
