"""``python -m qoslab.outputs``: print docs/outputs.md, or check it (``--check``)."""

from qoslab.outputs import main

raise SystemExit(main())
