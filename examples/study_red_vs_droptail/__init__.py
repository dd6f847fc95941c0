"""An example study outside qoslab: does RED keep the bottleneck queue shorter than drop-tail
without giving up utilisation? Importing the package registers the experiment
(``red-vs-droptail``) and its claims; name it in ``QOSLAB_PLUGINS`` (with this folder's parent on
``PYTHONPATH``) and ``qoslab reproduce red-vs-droptail`` runs it. See
docs/write-your-own-study.md."""

from study_red_vs_droptail import study as study

__all__ = ["study"]
