"""``python -m qoslab.bench``: ``--worker NAME SCALE`` runs one core call of a workload in this
process (:func:`qoslab.bench.workloads.worker`); ``--loop NAME SCALE`` the same call for
callgrind's count of the event loop (:func:`qoslab.bench.cache.event_loop_counts`); anything
else runs a whole bench call."""

import sys

if len(sys.argv) >= 3 and sys.argv[1] in ("--worker", "--loop"):
    if sys.argv[1] == "--worker":
        # A study's process has pandas loaded, and the memory budget's allowance for the
        # interpreter (qoslab.budget.INTERPRETER_BYTES) counts it: the worker whose peak the
        # budget's checks compare with its estimate loads it too. Under callgrind, which counts
        # the event loop alone, it is left out: its import there took about 20 s a count.
        import pandas  # noqa: F401

    from qoslab.bench.workloads import worker

    worker(sys.argv[2], float(sys.argv[3]) if len(sys.argv) > 3 else 1.0)
else:
    from qoslab.bench.runner import main

    main()
