"""Data shared by the botgrpo-judge tests (a uniquely named module: the repo runs every suite at once)."""

from __future__ import annotations

from botgrpo_core.signals import Sample

#: Single-token verdict words of the tiny judge's tokenizer.
YES, NO = [" yes", "yes"], [" no", "no"]

#: Rollouts with one step per line; sample 3 shares its first step with sample 0.
SAMPLES = [
    Sample("what is 17+5-8?", "17+5=22\n22-8=14\nA: 14"),
    Sample("what is 2+2?", "2+2=4\nA: 4"),
    Sample("what is 3*3+1-1?", "3*3=9\n9+1=10\n10-1=9\nThe answer is 9."),
    Sample("what is 17+5-8?", "17+5=22\n22-8=15\nA: 15"),
]

#: What the taught judge (fixture ``taught_judge_dir``) answers to every prompt.
TAUGHT_ANSWER = "Step 1: correct\nStep 2: incorrect"
