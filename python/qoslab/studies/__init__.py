"""The studies shipped with qoslab, one package per paper (or per study of our own): its plan
and analysis (``study``), the paper's numbers (``paper``), its topology, its figures and, for
the studies with verdicts, its claims declared once as objects (``claims``). The reproduction
machinery they use is :mod:`qoslab.reproduction`."""
