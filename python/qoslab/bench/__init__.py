"""``qoslab bench``: qoslab against ns-2 and ns-3 on fixed workloads, in one invocation.

The rooms: :mod:`qoslab.bench.workloads` (the workloads and the worker process that runs one
core call), :mod:`qoslab.bench.runner` (one call: the measurements, the alternating rounds,
the tables, ``main``), :mod:`qoslab.bench.references` (ns-2's and ns-3's inputs and commands),
:mod:`qoslab.bench.cache` (the callgrind counts and the cache model), :mod:`qoslab.bench.hops`
(the cost per packet-hop, paired in time), :mod:`qoslab.bench.guards` (the figures held as
guards), :mod:`qoslab.bench.steady` (the backbone workloads: 10,000 and 50,000 flows through a
drop-tail router, their warm-up found in their series, figures after it) and
:mod:`qoslab.bench.linux` (the linux flavour against the ns2 flavour).
``python -m qoslab.bench --worker NAME SCALE`` is the worker (:mod:`qoslab.bench.__main__`).

For each workload it measures, side by side:

- **core**: qoslab's simulation call (in a fresh worker process, so that peak resident memory
  is its own; also at half the duration, to show memory stays flat over simulated time), and
  each reference simulator's run time without its setup (the same input with a near-zero
  duration gives the setup; core = whole − setup, medians);
- **whole process**: ``qoslab run FILE --out DIR`` (tables written) against ``ns FILE.tcl``
  and the compiled ns-3 program (:mod:`qoslab.ns3`) on its JSON input, each the median of
  ``repeat`` runs, alternating between them;
- **start-up**: ``qoslab run`` of the same scenario with a near-zero duration;
- **memory**: the core's own accounting (allocated capacity, so high-water marks; the links'
  lines give back what they no longer hold once a simulated second) of its
  state at half and at the full duration (flat: nothing grows with simulated time but the
  time series the scenario asks for, shown apart), bytes per flow (links, flow and endpoint
  state of the setup-only run, over the flows) and per packet in flight (an arena slot and
  a line entry); and the worker's peak resident memory, which includes Python and the
  scenario's parse;
- **per hop**: events per packet-hop; the core's time per hop, over the whole call and net
  of the set-up (the setup-only run's time and hops taken off), and each against the
  200-flow workload's (:data:`HOP_COST_BASE`) when the call measures it: the issue's scaling
  aim, "cost per hop within 2× of the 200-flow cost", read off one call, and the same
  paired in time (``pairs`` rounds of one core run of each workload, alternating; the
  medians above are taken tens of seconds apart, minutes when a reference runs between
  them, and on a shared machine the 10,000-flow
  hop's cost moves by a third within minutes: :func:`paired_hop_costs`); and, with
  ``--instructions``, instructions and cache misses per hop in the event loop alone, from
  callgrind on a shortened run (:func:`callgrind_command`; hardware counters are not used:
  most virtual machines do not expose them), simulating the caches Linux's sysfs describes
  (:func:`cache_geometry`; valgrind's own detection reads CPUID, which a virtual machine may
  fill with a cache that does not exist).

A reference simulator that is missing, whose export refuses the workload (ns-2 has no CUBIC
or FQ-CoDel), that a workload notes as too slow for it, or that fails, is "n/a" there with the
reason (one line); everything else still runs. The linux flavour against the ns2 flavour is
:mod:`qoslab.bench.linux`'s. ``--json FILE`` writes every figure of the tables, to be tracked
across commits. Speed is measured here, never asserted in tests.
"""
