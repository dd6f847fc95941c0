"""Running scenarios: one run (:mod:`~qoslab.runs.simulate`: ``qoslab.run`` and ``Result``), a
run as a task a worker executes (:mod:`~qoslab.runs.tasks`), sweeps and their coordinator
(:mod:`~qoslab.runs.sweep`), where tasks run (:mod:`~qoslab.runs.executors`), their order
(:mod:`~qoslab.runs.schedule`), run directories (:mod:`~qoslab.runs.rundir`) and the
``qoslab run`` command's body (:mod:`~qoslab.runs.run_command`); a run's budget is checked by
:mod:`qoslab.budget`, a level below (the scenario reader estimates it too).

The room is ``runs``, not ``run``: ``qoslab.run`` is the public function (served by
``qoslab/__init__.py``), and a subpackage of that name would replace it as the package's
attribute the first time it is imported. This file imports nothing, so that importing one
module of the room loads no other.
"""
