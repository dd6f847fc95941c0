"""Planning an experiment's runs: its sweeps in the reproduction's flavour and senders, the
runs they hold, and all experiments' runs computed in one sweep (``reproduce all``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from qoslab.experiments.base import Experiment, Options, Sweep
from qoslab.runs.executors import Executor
from qoslab.runs.sweep import RunSpec, SweepReport, plan, run_sweep, seed_list
from qoslab.store import Store

if TYPE_CHECKING:
    from qoslab.scenario import Scenario


def flavoured(scenario: Scenario, flavour: str) -> Scenario:
    """``scenario`` in ``flavour`` (only "ns2" exists besides each mechanism's own)."""
    from qoslab.ns2.flavour import ns2_flavoured

    assert flavour == "ns2", flavour
    return ns2_flavoured(scenario)[0]


def as_run(scenario: Scenario, options: Options) -> Scenario:
    """``scenario`` as the reproduction runs it: in its flavour, with its TCP senders."""
    if options.flavour is not None:
        scenario = flavoured(scenario, options.flavour)
    if options.sender is not None:
        scenario = scenario.with_tcp_variant(options.sender)
    if options.tcp_flavour is not None:
        scenario = scenario.with_overrides([f'tcp.flavour="{options.tcp_flavour}"'], via="--tcp-flavour")
    return scenario


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
    from qoslab.schema import tcp_variants

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
    sweep_seeds: Mapping[str, int] | None = None,
) -> tuple[Options, list[Sweep], list[RunSpec]]:
    """The options, sweeps and runs :func:`qoslab.experiments.runner.reproduce` plans for
    ``exp`` (the same arguments). ``sweep_seeds``: sweeps planned at another number of seeds
    than the experiment's (each such sweep as the experiment plans it at that many: a sweep that
    takes twice the experiment's seeds, or its first seed only, keeps its rule); the sequential
    mode stops a sweep that way once every claim resting on it is decided."""
    if flavour not in (None, "ns2"):
        raise ValueError(f"unknown flavour {flavour!r} (expected ns2, or none for the experiment's own)")
    check_sender(exp, sender)
    n = seeds if seeds is not None else (exp.quick_seeds if quick else exp.seeds)
    if tcp_flavour not in (None, "ns2", "linux"):
        raise ValueError(f"unknown TCP flavour {tcp_flavour!r} (expected ns2 or linux)")
    tcp_flavour = None if tcp_flavour == "ns2" else tcp_flavour
    opts = Options(quick=quick, seeds=seed_list(n), flavour=flavour, sender=sender, tcp_flavour=tcp_flavour)
    sweeps = exp.plan(opts)
    validate(exp, sweeps)
    if sweep_seeds:
        sweeps = _reseeded(exp, opts, sweeps, sweep_seeds)
    if flavour is not None or sender is not None or tcp_flavour is not None:
        sweeps = [replace(sw, points=[(p, as_run(sc, opts)) for p, sc in sw.points]) for sw in sweeps]
    specs: list[RunSpec] = []
    for sw in sweeps:
        specs += plan(sw.points, sw.seeds, f"{exp.name}/{sw.name}", sw.metrics)
    return opts, list(sweeps), specs


def _reseeded(
    exp: Experiment, opts: Options, sweeps: list[Sweep], sweep_seeds: Mapping[str, int]
) -> list[Sweep]:
    """``sweeps`` with each sweep named in ``sweep_seeds`` taken from the experiment's plan at
    that many seeds (its points must be the same: only its seeds may differ)."""
    names = {s.name for s in sweeps}
    unknown = sorted(set(sweep_seeds) - names)
    if unknown:
        raise ValueError(f"experiment {exp.name}: no sweep {', '.join(map(repr, unknown))} to reseed")
    at: dict[int, dict[str, Sweep]] = {}
    out: list[Sweep] = []
    for sw in sweeps:
        n = sweep_seeds.get(sw.name)
        if n is None or n == len(opts.seeds):
            out.append(sw)
            continue
        if n not in at:
            at[n] = {s.name: s for s in exp.plan(replace(opts, seeds=seed_list(n)))}
        other = at[n][sw.name]
        if [p for p, _ in other.points] != [p for p, _ in sw.points]:
            raise ValueError(f"experiment {exp.name}: sweep {sw.name!r} has other points at {n} seeds")
        out.append(replace(sw, seeds=list(other.seeds)))
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
