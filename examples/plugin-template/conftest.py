"""Let ``pytest`` find the package when it is not installed (e.g. run from the botgrpo repository).

Installed with ``pip install -e .`` the package is importable anyway and this changes nothing.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

if importlib.util.find_spec("botgrpo_template") is None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
