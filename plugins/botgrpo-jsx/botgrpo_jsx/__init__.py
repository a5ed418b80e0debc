"""botgrpo-jsx: React/JSX reward signals for botgrpo.

- ``jsx.compiles`` (global): 1.0 if the completion's code compiles (esbuild in a persistent Node
  worker; optional TypeScript strict mode), else 0.0.
- ``jsx.syntax`` (local): a negative value on each syntax error's span (tree-sitter TSX grammar).
- ``jsx.rules`` (local): React rule violations as spans (keys, hooks, undefined components, tags,
  ``class=``, exports).

Importing this package is cheap; parsers load on first use. Node packages: ``python -m botgrpo_jsx.setup``.
"""

__version__ = "0.1.0"
