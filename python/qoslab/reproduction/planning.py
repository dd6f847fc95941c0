"""Planning an experiment's runs: its sweeps in the reproduction's flavour and senders, the
runs they hold, and all experiments' runs computed in one sweep (``reproduce all``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from qoslab.reproduction.base import Experiment, Options, Sweep
from qoslab.runs.executors import Executor
from qoslab.runs.sweep import RunSpec, SweepReport, plan, run_sweep, seed_list
from qoslab.schema import tcp_variants
from qoslab.store import Store

if TYPE_CHECKING:
    from qoslab.scenario import Scenario


def flavoured(scenario: Scenario, flavour: str) -> Scenario:
    """``scenario`` in ``flavour`` (only "ns2" exists besides each mechanism's own)."""
    from qoslab.ns2.flavour import ns2_flavoured

    assert flavour == "ns2", flavour
    return ns2_flavoured(scenario)[0]


def as_run(scenario: Scenario, options: Options) -> Scenario:
    """``scenario`` as the reproduction runs it: in its flavour, with its TCP senders and timing."""
    if options.flavour is not None:
        scenario = flavoured(scenario, options.flavour)
    if options.sender is not None:
        scenario = scenario.with_tcp_variant(options.sender)
    if options.tcp_flavour is not None:
        scenario = scenario.with_overrides([f'tcp.flavour="{options.tcp_flavour}"'], via="--tcp-flavour")
    if options.timing is not None:
        scenario = scenario.with_overrides([f'timing.jitter="{options.timing}"'], via="--timing")
    return scenario


def out_name(experiment: str, options: Options) -> str:
    """The directory of a reproduction's outputs: ``NAME``, ``NAME-ns2``, ``NAME-cubic``,
    ``NAME-tcp-linux``, ``NAME-cubic-tcp-linux-timing-testbed``, …"""
    tcp = f"tcp-{options.tcp_flavour}" if options.tcp_flavour else None
    timing = f"timing-{options.timing}" if options.timing else None
    parts = (options.flavour, options.sender, tcp, timing, options.warmup)
    return "-".join([experiment, *(x for x in parts if x)])


def timing_of(sweeps: Iterable[Sweep]) -> str:
    """The timing noise the sweeps' scenarios run with (:attr:`qoslab.Scenario.timing`:
    ``exact``, ``testbed``, ...), or each one they use, by name, where they differ."""
    used = sorted({sc.timing for sw in sweeps for _, sc in sw.points})
    return ", ".join(used) or "exact"


def validate(exp: Experiment, sweeps: Sequence[Sweep]) -> None:
    """Refuses repeated sweep names and references to sweeps ``exp`` does not plan."""
    names = [s.name for s in sweeps]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise ValueError(f"experiment {exp.name}: repeated sweep names {sorted(dup)}")
    for ref in exp.references:
        if ref.sweep not in names:
            raise ValueError(f"experiment {exp.name}: reference {ref.id} names unknown sweep {ref.sweep!r}")


def check_sender(exp: Experiment, sender: str | None) -> None:
    """Refuses a ``--sender`` the core lacks, or any for an experiment that compares senders."""
    if sender is None:
        return

    if exp.own_senders:
        raise ValueError(f"experiment {exp.name} compares TCP senders itself: it takes no --sender")
    choices = tcp_variants()
    if sender not in choices:
        raise ValueError(f"unknown sender {sender!r}: expected one of {', '.join(choices)}")


def planned(
    exp: Experiment,
    *,
    seeds: int | None = None,
    quick: bool = False,
    flavour: str | None = None,
    sender: str | None = None,
    tcp_flavour: str | None = None,
    timing: str | None = None,
    sweep_seeds: Mapping[str, int] | None = None,
    point_seeds: Mapping[str, Mapping[int, int]] | None = None,
) -> tuple[Options, list[Sweep], list[RunSpec]]:
    """The options, sweeps and runs :func:`qoslab.reproduction.runner.reproduce` plans for
    ``exp`` (the same arguments). ``sweep_seeds``: sweeps planned at another number of seeds
    than the experiment's (each such sweep as the experiment plans it at that many: a sweep that
    takes twice the experiment's seeds, or its first seed only, keeps its rule); the sequential
    mode stops a sweep that way once every claim resting on it is decided. ``point_seeds``: the
    same for single points, by sweep and the point's index among the sweep's points (a point
    named here takes the seeds its sweep would have at that many; the sweep's other points keep
    the sweep's): the sequential mode stops a point that way once every claim resting on it is
    decided, while the sweep's other points grow. Without either, the plan is the fixed mode's,
    run for run and in the same order."""
    if flavour not in (None, "ns2"):
        raise ValueError(f"unknown flavour {flavour!r} (expected ns2, or none for the experiment's own)")
    check_sender(exp, sender)
    n = seeds if seeds is not None else (exp.quick_seeds if quick else exp.seeds)
    if tcp_flavour not in (None, "ns2", "linux"):
        raise ValueError(f"unknown TCP flavour {tcp_flavour!r} (expected ns2 or linux)")
    tcp_flavour = None if tcp_flavour == "ns2" else tcp_flavour
    opts = Options(
        quick=quick,
        seeds=seed_list(n),
        flavour=flavour,
        sender=sender,
        tcp_flavour=tcp_flavour,
        timing=timing,
    )
    sweeps = exp.plan(opts)
    validate(exp, sweeps)
    at = _Replans(exp, opts, sweeps)
    if sweep_seeds:
        sweeps = _reseeded(exp, sweeps, sweep_seeds, at)
    own = _point_seeds(exp, sweeps, point_seeds or {}, at)
    if any(x is not None for x in (flavour, sender, tcp_flavour, timing)):
        sweeps = [replace(sw, points=[(p, as_run(sc, opts)) for p, sc in sw.points]) for sw in sweeps]
    specs: list[RunSpec] = []
    for sw in sweeps:
        if sw.name not in own:
            specs += plan(sw.points, sw.seeds, f"{exp.name}/{sw.name}", sw.metrics)
            continue
        for i, point in enumerate(sw.points):
            specs += plan([point], own[sw.name].get(i, sw.seeds), f"{exp.name}/{sw.name}", sw.metrics)
    return opts, list(sweeps), specs


class _Replans:
    """The experiment's sweeps as it plans them at another number of seeds, each number planned
    once: where a reseeded sweep or point takes its seeds from (the sweep's own rule)."""

    def __init__(self, exp: Experiment, opts: Options, sweeps: Sequence[Sweep]) -> None:
        self.exp, self.opts = exp, opts
        self._at: dict[int, dict[str, Sweep]] = {len(opts.seeds): {s.name: s for s in sweeps}}

    def seeds(self, sw: Sweep, n: int) -> list[int]:
        """The seeds of sweep ``sw`` planned at ``n`` seeds; refuses a sweep whose points differ
        at ``n`` (only its seeds may)."""
        if n not in self._at:
            self._at[n] = {s.name: s for s in self.exp.plan(replace(self.opts, seeds=seed_list(n)))}
        other = self._at[n][sw.name]
        if [p for p, _ in other.points] != [p for p, _ in sw.points]:
            raise ValueError(f"experiment {self.exp.name}: sweep {sw.name!r} has other points at {n} seeds")
        return list(other.seeds)


def _reseeded(
    exp: Experiment, sweeps: list[Sweep], sweep_seeds: Mapping[str, int], at: _Replans
) -> list[Sweep]:
    """``sweeps`` with each sweep named in ``sweep_seeds`` taken from the experiment's plan at
    that many seeds (its points must be the same: only its seeds may differ)."""
    names = {s.name for s in sweeps}
    unknown = sorted(set(sweep_seeds) - names)
    if unknown:
        raise ValueError(f"experiment {exp.name}: no sweep {', '.join(map(repr, unknown))} to reseed")
    return [
        sw
        if sweep_seeds.get(sw.name) in (None, len(at.opts.seeds))
        else replace(sw, seeds=at.seeds(sw, sweep_seeds[sw.name]))
        for sw in sweeps
    ]


def _point_seeds(
    exp: Experiment, sweeps: list[Sweep], point_seeds: Mapping[str, Mapping[int, int]], at: _Replans
) -> dict[str, dict[int, list[int]]]:
    """The seeds of each point named in ``point_seeds`` (by sweep and index), from the sweep
    planned at that many seeds; refuses an unknown sweep or an index outside its points."""
    by_name = {s.name: s for s in sweeps}
    unknown = sorted(set(point_seeds) - set(by_name))
    if unknown:
        raise ValueError(f"experiment {exp.name}: no sweep {', '.join(map(repr, unknown))} to reseed")
    out: dict[str, dict[int, list[int]]] = {}
    for name, points in point_seeds.items():
        sw = by_name[name]
        bad = sorted(i for i in points if not 0 <= i < len(sw.points))
        if bad:
            raise ValueError(
                f"experiment {exp.name}: sweep {name!r} has {len(sw.points)} points, "
                f"no point {bad[0]} to reseed"
            )
        out[name] = {i: at.seeds(sw, n) for i, n in points.items()}
    return out


def compute_all(
    exps: Sequence[Experiment],
    *,
    store: Store,
    executor: Executor,
    progress: bool = True,
    **kw: Any,
) -> SweepReport:
    """Computes the planned runs of every experiment of ``exps`` in one sweep, so that the
    longest runs of all of them go first (:mod:`qoslab.runs.schedule`) and no experiment's last runs
    leave a core idle while the next experiment waits; each ``reproduce`` after it then
    finds its runs stored (the runs the analyses make themselves are not among them). ``kw``:
    ``seeds``, ``quick``, ``flavour``, ``sender`` as for ``reproduce``."""
    specs: list[RunSpec] = []
    for exp in exps:
        specs += planned(exp, **kw)[2]
    return run_sweep(specs, store, executor, progress=progress, label="all experiments")
