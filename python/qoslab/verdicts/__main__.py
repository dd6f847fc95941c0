import sys

from qoslab.verdicts.tool import main

raise SystemExit(main(sys.argv[1:]))
