"""``python -m qoslab.bench``: ``--worker NAME SCALE`` runs one core call of a workload in this
process (:func:`qoslab.bench.workloads.worker`); anything else runs a whole bench call."""

import sys

if len(sys.argv) >= 3 and sys.argv[1] == "--worker":
    from qoslab.bench.workloads import worker

    worker(sys.argv[2], float(sys.argv[3]) if len(sys.argv) > 3 else 1.0)
else:
    from qoslab.bench.runner import main

    main()
