"""botgrpo-bench: the convergence benchmark of botgrpo, as a plugin.

It adds ``botgrpo bench BENCH.yaml`` (a grid of presets x seeds x tasks from one cached warm start,
:mod:`botgrpo_bench.bench`), its report (:mod:`botgrpo_bench.report`, ``python -m botgrpo_bench.report``
for the docs page) and the ``react`` task (:mod:`botgrpo_bench.react`), through the core's
``botgrpo_register_commands`` and ``botgrpo_register_tasks`` hooks (:mod:`botgrpo_bench.plugin`).
"""

__version__ = "0.1.0"
