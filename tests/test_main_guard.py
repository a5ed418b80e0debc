"""A training script without ``if __name__ == "__main__":`` (issue 36, finding 1): signal workers are started with
forkserver, which re-imports the script; the pool now refuses at once, naming the script and the fix, instead of
waiting a minute for workers that never start. With the guard the same script runs."""

from __future__ import annotations

import ast
import subprocess
import sys
import time
from pathlib import Path

import pytest

from botgrpo_core.rewards.main_guard import _has_guard

BODY = """
import math
from botgrpo_core.rewards.pool import WorkerPool
pool = WorkerPool(math.sqrt, workers=1, timeout_s=5)
try:
    print("RESULT", pool.map([4.0, 9.0]))
finally:
    pool.close()
"""


def run(tmp_path: Path, text: str) -> tuple[subprocess.CompletedProcess[str], float]:
    script = tmp_path / "train_script.py"
    script.write_text(text)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    return done, time.perf_counter() - start


def test_an_unguarded_script_fails_at_once_with_the_fix(tmp_path: Path) -> None:
    done, seconds = run(tmp_path, BODY)
    assert done.returncode != 0
    assert (
        "train_script.py: it has no main guard" in done.stderr and 'if __name__ == "__main__":' in done.stderr
    )
    assert "did not start within" not in done.stderr
    assert seconds < 30  # was: 60 s of waiting, then a message naming the initializer


def test_the_guarded_script_runs(tmp_path: Path) -> None:
    guarded = "def main():\n" + "".join(f"    {line}\n" for line in BODY.strip().splitlines())
    guarded += 'if __name__ == "__main__":\n    main()\n'
    done, _ = run(tmp_path, guarded)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "RESULT [2.0, 3.0]" in done.stdout


@pytest.mark.parametrize(
    ("source", "guarded"),
    [
        ('if __name__ == "__main__":\n    main()\n', True),
        ("if '__main__' == __name__:\n    main()\n", True),
        ("main()\n", False),
        ('def f():\n    if __name__ == "__main__":\n        pass\n', False),  # not at top level
        ('if __name__ == "other":\n    main()\n', False),
    ],
)
def test_the_guard_is_read_from_the_syntax_tree(source: str, guarded: bool) -> None:
    assert _has_guard(ast.parse(source)) is guarded
