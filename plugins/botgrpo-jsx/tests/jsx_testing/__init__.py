"""Test support of botgrpo-jsx, outside the shipped package (the wheel carries only ``botgrpo_jsx``).

- :mod:`jsx_testing.mutations`: mutations of valid React code with known locations, the negatives the
  tests, ``scripts/evaluate.py`` and ``scripts/benchmark.py`` measure the signals on.

The tests import it because pytest puts ``plugins/botgrpo-jsx/tests`` on ``sys.path`` (rootdir-relative
imports, no ``__init__.py`` in ``tests/``); the scripts put that folder on ``sys.path`` themselves.
"""
