"""botgrpo-sympy: safe math step checking (``sympy.steps``) and answer checking (``sympy.answer``).

Model text is never evaluated: plain math is parsed with ``ast`` under a node whitelist, LaTeX with
latex2sympy2_extended's ANTLR grammar (its eval-reaching number paths replaced), and all checking
runs in worker processes with a hard per-completion timeout and a memory limit.
"""

__version__ = "0.1.0"
