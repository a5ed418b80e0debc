"""Write the labelled evaluation data of botgrpo-sympy (deterministic; committed under data/).

- ``data/steps_labelled.jsonl``: completions split into steps (one per line), each step labelled
  +1 (its claim is true), -1 (it contains a false claim) or 0 (no checkable claim: prose, a
  premise, a definition). Generated families compute their labels with Python's exact ``Fraction``
  arithmetic (independent of the checker); the hand-written families (decoys, LaTeX, mixed prose,
  branches, limits of the checker) carry labels written by hand.
- ``data/answer_pairs.jsonl``: ``(gold, pred, label)`` answer pairs, label 1 when mathematically
  equal. Pairs are built from one value written several ways (equal) or from a perturbed value
  (not equal), plus hand-written structured answers (tuples, sets, intervals, equations).

Run: ``python plugins/botgrpo-sympy/scripts/make_data.py`` (rewrites both files).
"""

from __future__ import annotations

import json
import random
from fractions import Fraction
from pathlib import Path

from answer_pairs_data import answer_pairs
from steps_handwritten import handwritten
from steps_heldout import heldout, heldout2

DATA = Path(__file__).resolve().parent.parent / "data"


# --- labelled steps ----------------------------------------------------------------------------------------
def demo_chains(rng: random.Random, n: int) -> list[dict]:
    """The demo task's format: ``Q: 17+5-8=`` then one step per line and ``A: <value>``."""
    records = []
    for k in range(n):
        ops = [rng.randint(1, 20)] + [
            rng.choice("+-") + str(rng.randint(1, 9)) for _ in range(rng.randint(1, 3))
        ]
        prompt = "Q: " + "".join(str(o) for o in ops) + "="
        steps = []
        running = ops[0]
        wrong_rate = 0.35
        for op in ops[1:]:
            sign, b = op[0], int(op[1:])
            true = running + b if sign == "+" else running - b
            written = true
            if rng.random() < wrong_rate:
                written = true + rng.choice([1, -1, 2, -2, 10, -10])
            steps.append({"text": f"{running}{sign}{b}={written}", "label": 1 if written == true else -1})
            running = written  # errors are carried forward, like the demo's noisy demonstrations
        answer = running if rng.random() > 0.15 else running + rng.choice([1, -1])
        steps.append({"text": f"A: {answer}", "label": 1 if answer == running else -1})
        records.append({"id": f"demo-{k:03d}", "category": "demo_chain", "prompt": prompt, "steps": steps})
    return records


def _fmt(q: Fraction) -> str:
    return str(q.numerator) if q.denominator == 1 else f"{q.numerator}/{q.denominator}"


def arithmetic(rng: random.Random, n: int) -> list[dict]:
    """Multi-operation arithmetic with x, /, parentheses, fractions, powers and Unicode operators."""
    records = []
    for k in range(n):
        steps = []
        for _ in range(3):
            kind = rng.choice(["mul", "div", "paren", "frac", "pow", "unicode", "neg", "decimal"])
            a, b, c = rng.randint(2, 40), rng.randint(2, 12), rng.randint(1, 30)
            if kind == "mul":
                text, value = f"{a} * {b} + {c}", Fraction(a * b + c)
            elif kind == "div":
                text, value = f"{a * b} / {b} - {c}", Fraction(a - c)
            elif kind == "paren":
                text, value = f"{a}({b} + {c})", Fraction(a * (b + c))
            elif kind == "frac":
                text, value = f"{a}/{b} + {c}/{b + 1}", Fraction(a, b) + Fraction(c, b + 1)
            elif kind == "pow":
                text, value = f"{b}^{3} - {c}", Fraction(b**3 - c)
            elif kind == "unicode":
                text, value = f"{a} × {b} ÷ {b}", Fraction(a)
            elif kind == "neg":
                text, value = f"−{a} + {c}", Fraction(c - a)
            else:
                text, value = f"{a}.5 + {c}.25", Fraction(2 * a + 1, 2) + Fraction(4 * c + 1, 4)
            written = value
            if rng.random() < 0.4:
                written = value + rng.choice([1, -1, 2, 10, Fraction(1, 2)])
            steps.append({"text": f"{text} = {_fmt(written)}", "label": 1 if written == value else -1})
        records.append({"id": f"arith-{k:03d}", "category": "arithmetic", "prompt": "", "steps": steps})
    return records


def identities(rng: random.Random, n: int) -> list[dict]:
    """Expansions and factorings, some with a wrong coefficient."""
    records = []
    for k in range(n):
        a, b = rng.randint(1, 9), rng.randint(1, 9)
        x = rng.choice("xyt")
        cases = [
            (f"({x} + {a})^2", [1, 2 * a, a * a]),
            (f"({x} + {a})({x} + {b})", [1, a + b, a * b]),
            (f"({x} - {a})({x} + {a})", [1, 0, -a * a]),
        ]
        steps = []
        for lhs, coeffs in cases:
            written = list(coeffs)
            wrong = rng.random() < 0.4
            if wrong:
                i = rng.choice([1, 2] if coeffs[1] else [2])
                written[i] += rng.choice([1, -1, a])
            terms = [f"{x}^2"]
            if written[1]:
                terms.append(f"{written[1]}{x}")
            if written[2]:
                terms.append(str(written[2]))
            rhs = " + ".join(terms).replace("+ -", "- ")
            steps.append({"text": f"{lhs} = {rhs}", "label": -1 if written != coeffs else 1})
        records.append({"id": f"ident-{k:03d}", "category": "identity", "prompt": "", "steps": steps})
    return records


def linear_equations(rng: random.Random, n: int) -> list[dict]:
    """Solve ax + b = c step by step; one step may be wrong (later steps follow from it)."""
    records = []
    for k in range(n):
        a, x0, b = rng.randint(2, 9), rng.randint(-9, 12), rng.randint(1, 20)
        c = a * x0 + b
        wrong_at = rng.choice([None, None, 1, 2])
        rhs1 = c - b if wrong_at != 1 else c - b + rng.choice([1, -1, 2])
        s1 = {"text": f"{a}x = {rhs1}", "label": 1 if rhs1 == c - b else -1}
        sol = Fraction(rhs1, a)
        written = sol if wrong_at != 2 else sol + rng.choice([1, -1])
        s2 = {"text": f"x = {_fmt(written)}", "label": 1 if written == sol else -1}
        check_value = a * written + b
        s3 = {"text": f"Check: {a}({_fmt(written)}) + {b} = {_fmt(check_value)}", "label": 1}
        prompt = f"Solve {a}x + {b} = {c}."
        steps = [{"text": f"Subtract {b} from both sides.", "label": 0}, s1, s2, s3]
        records.append(
            {"id": f"lin-{k:03d}", "category": "linear_equation", "prompt": prompt, "steps": steps}
        )
    return records


def carried_values(rng: random.Random, n: int) -> list[dict]:
    """Values found in one step used in later ones (x = 4, then 3x + 1 = 13)."""
    records = []
    for k in range(n):
        x0, m, q = rng.randint(2, 9), rng.randint(2, 6), rng.randint(1, 9)
        y_true = m * x0 + q
        y_written = y_true if rng.random() < 0.6 else y_true + rng.choice([1, -1, m])
        sq = y_written * y_written
        sq_written = sq if rng.random() < 0.7 else sq + rng.choice([1, 10])
        steps = [
            {"text": f"Let x = {x0}.", "label": 0},
            {"text": f"Then y = {m}x + {q} = {y_written}", "label": 1 if y_written == y_true else -1},
            {"text": f"So y^2 = {sq_written}", "label": 1 if sq_written == sq else -1},
        ]
        records.append({"id": f"carry-{k:03d}", "category": "carried_values", "prompt": "", "steps": steps})
    return records


def latex_steps(rng: random.Random, n: int) -> list[dict]:
    """Fractions and radicals written in LaTeX inside $...$."""
    records = []
    for k in range(n):
        a, b, c, d = rng.randint(1, 9), rng.randint(2, 9), rng.randint(1, 9), rng.randint(2, 9)
        s = Fraction(a, b) + Fraction(c, d)
        written = s if rng.random() < 0.6 else s + Fraction(1, b * d)
        r = rng.choice([2, 3, 5, 6, 7])
        m = rng.randint(2, 5)
        rad_ok = rng.random() < 0.6
        m_written = m if rad_ok else m + 1
        steps = [
            {
                "text": f"We get $\\frac{{{a}}}{{{b}}} + \\frac{{{c}}}{{{d}}} = \\frac{{{written.numerator}}}{{{written.denominator}}}$.",
                "label": 1 if written == s else -1,
            },
            {"text": f"$\\sqrt{{{m * m * r}}} = {m_written}\\sqrt{{{r}}}$", "label": 1 if rad_ok else -1},
        ]
        records.append({"id": f"latex-{k:03d}", "category": "latex", "prompt": "", "steps": steps})
    return records


def main() -> None:
    rng = random.Random(20240611)
    records = (
        demo_chains(rng, 45)
        + arithmetic(rng, 25)
        + identities(rng, 20)
        + linear_equations(rng, 18)
        + carried_values(rng, 14)
        + latex_steps(rng, 16)
        + handwritten()
        + heldout()
        + heldout2()
    )
    DATA.mkdir(exist_ok=True)
    with (DATA / "steps_labelled.jsonl").open("w") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    pairs = answer_pairs(rng)
    with (DATA / "answer_pairs.jsonl").open("w") as f:
        for p in pairs:
            f.write(json.dumps(p, ensure_ascii=False) + "\n")
    n_steps = sum(len(r["steps"]) for r in records)
    print(f"{len(records)} completions, {n_steps} labelled steps; {len(pairs)} answer pairs")


if __name__ == "__main__":
    main()
