"""Reading and showing results: what every report shares (:mod:`~qoslab.report.page`: values,
markdown tables, figures with their provenance footers, the git revision), the shared figure
kinds (:mod:`~qoslab.report.figures`), terminal tables (:mod:`~qoslab.report.textable`), a
store's runs as tables (:mod:`~qoslab.report.results`, :mod:`~qoslab.report.frames`),
confidence intervals (:mod:`~qoslab.report.intervals`), pairwise and fairness figures
(:mod:`~qoslab.report.pairwise`) and how synchronised flows' windows are
(:mod:`~qoslab.report.synchrony`). The experiment pages' figures, which quote the committed
verdicts, are the verdicts' (:mod:`qoslab.verdicts.docfigures`).

This file imports nothing: ``qoslab.run`` imports :mod:`~qoslab.report.pairwise` and must not
bring pandas or matplotlib with it.
"""
