"""``python -m qoslab.cli``: the command line (:func:`qoslab.cli.main`)."""

from qoslab.cli import main

main()
