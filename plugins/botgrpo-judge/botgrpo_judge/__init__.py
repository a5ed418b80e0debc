"""botgrpo-judge: generative LLM judges as token-level reward signals for botgrpo.

``judge.steps`` (local) gives each reasoning step of a completion the judge's score on that step's
characters; ``judge.outcome`` (global) scores the whole solution. Backends: ``transformers``
(in-process), ``vllm`` (offline engine, GPU), ``openai`` (any OpenAI-compatible server).
"""

__version__ = "0.1.0"
