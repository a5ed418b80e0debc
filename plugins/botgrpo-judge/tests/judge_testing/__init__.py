"""Test infrastructure of botgrpo-judge, kept out of the installed package.

- :mod:`judge_testing.tiny_judge`: a tiny judge model built in code (no downloads), for tests and scripts;
- :mod:`judge_testing.server` (its batcher in :mod:`judge_testing.batcher`): an OpenAI-compatible server
  for a local transformers model, with fault injection (stall, 500, 429, malformed JSON, no logprobs,
  dropped connection);
- :mod:`judge_testing.hostile`: a model-free loopback server that misbehaves at the transport level
  (accepts and never answers, oversized bodies, raw answers such as NaN logprobs or deep JSON).

The tests import it because pytest puts ``plugins/botgrpo-judge/tests`` on ``sys.path`` (rootdir-relative
``prepend`` import mode, no ``__init__.py`` in ``tests``); the scripts add that folder themselves. The name is
unique in the repository, so the root suite (``testpaths`` include ``plugins``) imports it without clashes.
These modules may import anything (the core's engine included); ``botgrpo_judge`` never imports them.
"""
