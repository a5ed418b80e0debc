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


def handwritten() -> list[dict]:
    """Decoys, prose, branches, systems and known limits, labelled by hand."""
    H = []

    def rec(cat: str, prompt: str, *steps: tuple[str, int]) -> None:
        H.append(
            {
                "id": f"hand-{len(H):03d}",
                "category": cat,
                "prompt": prompt,
                "steps": [{"text": t, "label": lab} for t, lab in steps],
            }
        )

    # Decoy formatting: numbers and symbols that are not claims, or claims wrapped in prose/markup.
    rec(
        "decoy",
        "",
        ("Step 1: we add the first two numbers.", 0),
        ("Step 2: 12 + 30 = 42", 1),
        ("Step 3: 42 / 2 = 20", -1),
        ("The meeting was on 2024-03-15.", 0),
    )
    rec(
        "decoy",
        "",
        ("The ratio is 3:4, and page 12 shows it.", 0),
        ("**Result:** 7 + 8 = 15", 1),
        ("Total = 3 apples + 4 apples", 0),
        ("- 9 - 4 = 5", 1),
    )
    rec(
        "decoy",
        "",
        ("2 + 2 = 5 is a famous wrong claim.", 0),
        ("In 1984, 3 of 5 people agreed.", 0),
        ("The code `x = 3` sets x.", 0),
        ("1,000 + 2,500 = 3,500", 1),
    )
    rec(
        "decoy",
        "",
        ("Prices: $5 and $7.", 0),
        ("So 5 + 7 = 12 dollars.", 1),
        ("That is 12 = 12.", 1),
        ("Hence 100 - 1 = 98.", -1),
    )
    rec(
        "decoy",
        "",
        ("We know that 2 < 3 and 10 > 1.", 1),
        ("But 7 < 2 is false.", 0),
        ("Note: 3 ≠ 4", 1),
        ("And 5 ≥ 6", -1),
    )
    rec(
        "decoy",
        "",
        ("Compute 6 × 7 = 42", 1),
        ("then 42 ÷ 6 = 8", -1),
        ("and −3 − 4 = −7", 1),
        ("and 2³ = 8", 1),
    )
    rec(
        "decoy",
        "",
        ("Version 2.0 of the method:", 0),
        ("0.5 + 0.25 = 0.75", 1),
        ("1/3 ≈ 0.333", 1),
        ("pi ≈ 3.14", 1),
        ("sqrt(2) ≈ 1.5", -1),
    )
    rec(
        "decoy",
        "",
        ("Let me think about this carefully.", 0),
        ("First, 15% of 80 is 12.", 0),
        ("Thus 80 - 12 = 68.", 1),
        ("**Answer:** 68", 1),
    )
    rec(
        "decoy",
        "",
        ("The list is 1, 2, 3, 4.", 0),
        ("Their sum: 1 + 2 + 3 + 4 = 10", 1),
        ("Their product: 1 * 2 * 3 * 4 = 24", 1),
        ("Mean: 10/4 = 2.5", 1),
    )
    rec("decoy", "", ("(a) 3 + 4 = 7", 1), ("(b) 3 * 4 = 7", -1), ("(c) 12 - 4 = 8", 1), ("[d] 9 / 3 = 3", 1))
    rec(
        "decoy", "", ("We have 5! = 120", 1), ("and 4! = 24", 1), ("so 5!/4! = 6", -1), ("gcd(12, 18) = 6", 1)
    )
    rec(
        "decoy",
        "",
        ("Therefore 7 * 8 = 56.", 1),
        ("Double-check: 56 / 8 = 7.", 1),
        ("Time: 3:45 pm.", 0),
        ("Score 21-14.", 0),
    )
    rec("decoy", "", ("1/3 = 0.33", 1), ("2/3 = 0.67", 1), ("2/3 = 0.666", 1), ("1/4 = 0.4", -1))
    rec("decoy", "", ("e.g. 10 = 10", 1), ("i.e. 2^10 = 1024", 1), ("2^10 = 1000", -1), ("and so on...", 0))
    # Equations: solving, branches, systems.
    rec(
        "quadratic",
        "Solve x^2 - 5x + 6 = 0.",
        ("Factor: (x - 2)(x - 3) = 0", 1),
        ("So x = 2 or x = 3.", 1),
        ("Check: 2^2 - 5(2) + 6 = 0", 1),
    )
    rec("quadratic", "Solve x^2 - 5x + 6 = 0.", ("Factor: (x - 1)(x - 6) = 0", -1), ("So x = 1 or x = 6.", 1))
    rec("quadratic", "Solve x^2 = 49.", ("x = 7 or x = -7", 1), ("The positive root is 7.", 0))
    rec(
        "quadratic",
        "Solve x^2 + 2x - 8 = 0.",
        ("(x + 4)(x - 2) = 0", 1),
        ("x = -4 or x = 2", 1),
        ("x = 4", -1),
    )
    rec(
        "system",
        "If x + y = 10 and x - y = 2, find x and y.",
        ("Adding the equations: 2x = 12", 1),
        ("so x = 6", 1),
        ("and y = 10 - 6 = 4", 1),
    )
    rec(
        "system",
        "If x + y = 10 and x - y = 2, find x and y.",
        ("Adding the equations: 2x = 14", -1),
        ("so x = 7", 1),
        ("and y = 3", 1),
    )
    rec("system", "If 2a + b = 7 and a - b = 2, find a.", ("Adding: 3a = 9", 1), ("a = 3", 1), ("b = 1", 1))
    rec("equation", "", ("3x + 2 = 11 => 3x = 9", 1), ("=> x = 3", 1))
    rec("equation", "", ("5x - 4 = 16", 0), ("5x = 20", 1), ("x = 4", 1), ("x = 5", -1))
    rec("equation", "", ("2(x + 3) = 14", 0), ("2x + 6 = 14", 1), ("2x = 8", 1), ("x = 5", -1))
    rec("equation", "", ("x/4 + 1 = 3", 0), ("x/4 = 2", 1), ("x = 8", 1))
    rec("equation", "", ("7 - x = 2", 0), ("x = 5", 1), ("x = -5", -1))
    rec("equation", "Find n if 4n - 7 = 21.", ("4n = 28", 1), ("n = 7", 1), ("4(7) - 7 = 21", 1))
    rec("equation", "Find n if 4n - 7 = 21.", ("4n = 14", -1), ("n = 3.5", 1))
    # Identities and algebra with LaTeX.
    rec(
        "latex",
        "",
        ("$(a+b)^2 = a^2 + 2ab + b^2$", 1),
        ("$(a-b)^2 = a^2 - b^2$", -1),
        ("$\\frac{x^2 - 1}{x - 1} = x + 1$", 1),
    )
    rec(
        "latex",
        "",
        ("$\\sqrt{50} = 5\\sqrt{2}$", 1),
        ("$\\frac{3}{4} \\cdot \\frac{2}{3} = \\frac{1}{2}$", 1),
        ("$2^{5} = 32$", 1),
        ("$\\frac{10}{4} = 2.5$", 1),
        ("$\\frac{7}{3} = 2$", -1),
    )
    rec(
        "latex",
        "",
        ("\\[ 3 \\times 5 = 15 \\]", 1),
        ("\\( 9 - 12 = -3 \\)", 1),
        ("$$ 100 \\div 4 = 20 $$", -1),
    )
    rec("latex", "", ("$\\sin^2 x + \\cos^2 x = 1$", 1), ("$\\log_2 8 = 3$", 1), ("$\\log_2 16 = 5$", -1))
    rec(
        "latex",
        "",
        ("We use $|{-5}| = 5$.", 1),
        ("$\\frac{1}{2} + \\frac{1}{2} = 1$", 1),
        ("Then $\\frac{2}{6} = \\frac{1}{3}$ after reducing.", 1),
    )
    # Chains and continuations.
    rec("chain", "", ("(x + 1)^2 - 1 = x^2 + 2x + 1 - 1 = x^2 + 2x", 1), ("= x(x + 2)", 1), ("= x^2 + 2", -1))
    rec("chain", "", ("2 * 3 + 4 = 6 + 4 = 10", 1), ("10 * 10 = 100 = 10^3", -1))
    rec("chain", "", ("(2 + 3)(4) = 5(4) = 20", 1), ("20 / 5 = 4 = 2^2", 1))
    # Carried values inside prose.
    rec(
        "carried_values",
        "A rectangle has length 8 and width 5.",
        ("Let l = 8 and w = 5.", 0),
        ("Area = l w = 40", 1),
        ("l * w = 40", 1),
        ("Perimeter: 2(l + w) = 26", 1),
        ("2(l + w) = 30", -1),
    )
    rec(
        "carried_values",
        "",
        ("Let a = 3.", 0),
        ("Then b = a + 4 = 7.", 1),
        ("a * b = 21", 1),
        ("b - a = 5", -1),
    )
    # Things the checker cannot check (true claims in forms it does not understand).
    rec(
        "uncheckable",
        "",
        ("The derivative of x^2 is 2x.", 1),
        ("The integral of 2x is x^2 + C.", 1),
        ("The sequence is arithmetic with difference 3.", 0),
    )
    rec(
        "uncheckable",
        "",
        ("There are 10 choose 3 = 120 ways.", 1),
        ("By AM-GM the minimum is 4.", 0),
        ("xy = 12 and x + y = 7", 0),
    )
    rec("uncheckable", "", ("sin(pi/6) = 1/2", 1), ("cos(0) = 1", 1), ("tan(pi/4) = 2", -1))
    return H


def heldout() -> list[dict]:
    """Realistic worked solutions (GSM8K- and MATH-like), written and labelled by hand *after* the
    checker was developed on the families above and never used to tune it: the honest estimate."""
    H = []

    def rec(prompt: str, *steps: tuple[str, int]) -> None:
        H.append(
            {
                "id": f"heldout-{len(H):03d}",
                "category": "heldout",
                "prompt": prompt,
                "steps": [{"text": t, "label": lab} for t, lab in steps],
            }
        )

    rec(
        "Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May. "
        "How many clips did Natalia sell altogether in April and May?",
        ("In May, Natalia sold 48 / 2 = 24 clips.", 1),
        ("Altogether she sold 48 + 24 = 72 clips.", 1),
        ("#### 72", 0),
    )
    rec(
        "Weng earns $12 an hour for babysitting. Yesterday, she did 50 minutes of babysitting. How much did she earn?",
        ("Weng earns 12/60 = $0.2 per minute.", 1),
        ("Working 50 minutes, she earned 0.2 x 50 = $10.", 1),
    )
    rec(
        "What is the value of $\\sqrt{36 \\times \\sqrt{16}}$?",
        ("$\\sqrt{16} = 4$", 1),
        ("$36 \\times 4 = 144$", 1),
        ("$\\sqrt{144} = 12$", 1),
        ("The answer is $\\boxed{12}$.", 1),
    )
    rec(
        "Find the sum of all solutions to $x^2 - 7x + 10 = 0$.",
        ("We factor: $x^2 - 7x + 10 = (x - 2)(x - 5)$.", 1),
        ("So the solutions are $x = 2$ and $x = 5$.", 1),
        ("Their sum is $2 + 5 = 7$.", 1),
        ("By Vieta, the sum is $-(-7)/1 = 7$.", 1),
    )
    rec("If $f(x) = 3x + 2$, what is $f(4)$?", ("$f(4) = 3(4) + 2$", 1), ("$= 12 + 2$", 1), ("$= 14$", 1))
    rec(
        "Simplify $\\frac{x^2 - 9}{x + 3}$.",
        ("$x^2 - 9 = (x-3)(x+3)$", 1),
        ("$\\frac{(x-3)(x+3)}{x+3} = x - 3$", 1),
        ("So the answer is $x + 3$.", -1),
    )
    rec(
        "A store sells pencils at 3 for $1. How much do 27 pencils cost?",
        ("27 / 3 = 9 groups", 1),
        ("9 * 1 = 9 dollars", 1),
        ("So 27 pencils cost $8.", -1),
    )
    rec("", ("20% of 150 is 30.", 1), ("150 - 30 = 120", 1), ("120 * 0.1 = 12", 1), ("120 - 12 = 118", -1))
    rec("", ("2^5 * 2^3 = 2^8 = 256", 1), ("3^4 = 81", 1), ("(2^3)^2 = 2^5", -1), ("5^0 = 1", 1))
    rec("", ("1/2 + 1/3 = 5/6", 1), ("3/4 - 1/8 = 5/8", 1), ("2/3 * 3/4 = 1/2", 1), ("5/6 ÷ 5/12 = 3", -1))
    rec(
        "",
        ("2 + 3 * 4 = 14", 1),
        ("(2 + 3) * 4 = 20", 1),
        ("2 + 3 * 4 = 20", -1),
        ("10 - 2 - 3 = 5", 1),
        ("2^3^2 = 64", -1),
    )
    rec(
        "Solve for x: (2x + 1)/3 = 5.",
        ("Multiply both sides by 3: 2x + 1 = 15", 1),
        ("2x = 14", 1),
        ("x = 7", 1),
        ("Check: (2*7 + 1)/3 = 15/3 = 5", 1),
    )
    rec("Solve 4(x - 2) = 2x + 6.", ("4x - 8 = 2x + 6", 1), ("2x = 14", 1), ("x = 6", -1))
    rec("Solve 3x - 5 > 7.", ("3x > 12", 1), ("x > 4", 1))
    rec(
        "The sum of two numbers is 30 and their difference is 6. Find the numbers.",
        ("Let the numbers be a and b, with a + b = 30 and a - b = 6.", 0),
        ("Adding: 2a = 36", 1),
        ("a = 18", 1),
        ("b = 30 - 18 = 12", 1),
    )
    rec(
        "Find the least common multiple of 12 and 15.",
        ("Step 1: Identify the numbers 12 and 15.", 0),
        ("Step 2: LCM(12, 15) = 60", 1),
        ("Step 3: 60 / 12 = 5 and 60 / 15 = 4", 1),
        ("Final Answer: The final answer is 60. I hope it is correct.", 1),
    )
    rec("", ("3 * $2.50 = $7.50", 1), ("$7.50 + $2.50 = $10.00", 1), ("The total is $10.", 0))
    rec("", ("1,200 * 12 = 14,400 per year", 1), ("14,400 / 4 = 3,600", 1), ("3,600 + 400 = 4,100", -1))
    rec(
        "",
        ("\\[ \\frac{3}{5} + \\frac{1}{10} = \\frac{7}{10} \\]", 1),
        ("\\[ \\frac{7}{10} \\times 20 = 14 \\]", 1),
        ("\\[ 14 - 6 = 9 \\]", -1),
    )
    rec(
        "",
        ("$\\sqrt{72} = 6\\sqrt{2}$", 1),
        ("$\\sqrt{2} \\cdot \\sqrt{8} = 4$", 1),
        ("$\\sqrt{9} + \\sqrt{16} = \\sqrt{25}$", -1),
        ("$(\\sqrt{3})^2 = 3$", 1),
    )
    rec(
        "Solve x^2 - 4x + 1 = 0.",
        ("By the quadratic formula, x = (4 ± sqrt(12))/2", 1),
        ("x = 2 + sqrt(3) or x = 2 - sqrt(3)", 1),
        ("x = 2 + sqrt(5)", -1),
    )
    rec("", ("log(1) = 0", 1), ("$\\log_{10} 1000 = 3$", 1), ("$\\ln(e) = 1$", 1))
    rec("", ("sin(pi/2) = 1", 1), ("$\\cos(\\pi) = -1$", 1), ("$\\sin(\\pi/6) = \\frac{\\sqrt{3}}{2}$", -1))
    rec("", ("17 mod 5 = 2", 1), ("floor(7/2) = 3", 1), ("⌊7/2⌋ = 3", 1))
    rec("", ("So 6 * 7 = 42 and 42 + 8 = 48.", -1), ("Then 48 / 6 = 8 and 8 * 8 = 64.", 1))
    rec("", ("Let's compute: 25 * 4 = 100, then 100 - 37 = 63.", 1), ("12 + 8 = 20 → 20 / 4 = 5", 1))
    rec(
        "",
        ("The probability is 3/8 = 0.375.", 1),
        ("The probability is 3/8 = 0.38.", 1),
        ("The probability is 3/8 = 0.4.", 1),
    )
    rec(
        "",
        ("Average = (80 + 90 + 100)/3 = 90", 1),
        ("Speed = 120 km / 2 h = 60 km/h", 1),
        ("Area = 1/2 * 6 * 8 = 24", 1),
        ("Area = 1/2 * 6 * 8 = 48", -1),
    )
    rec("", ("Volume = 4/3 * pi * 3^3 = 36pi", 1), ("Circumference = 2 * pi * 5 ≈ 31.4", 1))
    return H


def heldout2() -> list[dict]:
    """A second hand-written batch, written after every fix made on the first one and then only
    measured (never used to change the checker)."""
    H = []

    def rec(prompt: str, *steps: tuple[str, int]) -> None:
        H.append(
            {
                "id": f"heldout2-{len(H):03d}",
                "category": "heldout2",
                "prompt": prompt,
                "steps": [{"text": t, "label": lab} for t, lab in steps],
            }
        )

    apples = "Tom has 5 boxes with 12 apples each. He gives away 17 apples. How many are left?"
    rec(
        apples,
        ("Tom has 5 × 12 = 60 apples.", 1),
        ("After giving away 17, he has 60 − 17 = 43 apples.", 1),
        ("The answer is 43.", 1),
    )
    rec(
        apples,
        ("Tom has 5 × 12 = 50 apples.", -1),
        ("After giving away 17, he has 50 − 17 = 33 apples.", 1),
        ("The answer is 33.", 1),
    )
    rec(
        "A train travels 60 miles per hour for 2.5 hours. How far does it go?",
        ("Distance = speed × time", 0),
        ("= 60 × 2.5", 0),
        ("= 150 miles", 1),
    )
    rec(
        "Compute $\\dbinom{8}{3}$.",
        ("$\\dbinom{8}{3} = \\frac{8!}{3!5!}$", 1),
        ("$= \\frac{8 \\cdot 7 \\cdot 6}{3 \\cdot 2 \\cdot 1}$", 1),
        ("$= 56$", 1),
    )
    rec(
        "What is the remainder when 2^10 is divided by 7?",
        ("2^10 = 1024", 1),
        ("1024 = 7 × 146 + 2", 1),
        ("So the remainder is 2.", 1),
    )
    rec("Find x if 5x + 3 = 2x + 18.", ("5x - 2x = 18 - 3", 1), ("3x = 15", 1), ("x = 5", 1))
    rec("Find x if 5x + 3 = 2x + 18.", ("5x + 2x = 18 - 3", -1), ("7x = 15", 1), ("x = 15/7", 1))
    rec(
        "",
        ("$(2x + 3)^2 = 4x^2 + 12x + 9$", 1),
        ("$(x - 4)(x + 2) = x^2 - 2x - 8$", 1),
        ("$(x + 5)^2 = x^2 + 25$", -1),
        ("$x^3 - 8 = (x - 2)(x^2 + 2x + 4)$", 1),
    )
    rec("Q: 9+8-3+5=", ("9+8=17", 1), ("17-3=15", -1), ("15+5=20", 1), ("A: 20", 1))
    rec(
        "",
        ("Chapter 3: Ratios", 0),
        ("The answer choices are (A) 12 (B) 15 (C) 18.", 0),
        ("Using formula (2), we get 12.", 0),
        ("There were 3 boys and 4 girls, 7 children in total.", 0),
        ("If x = 2, then x^2 = 4.", 1),
        ("2 + 2 = 4 and 3 + 3 = 7.", -1),
    )
    rec("", ("0.1 + 0.2 = 0.3", 1), ("0.75 = 3/4", 1), ("1.5 × 4 = 6.5", -1), ("7/8 ≈ 0.88", 1))
    rec(
        "",
        ("The area of the circle is $\\pi r^2 = 9\\pi$ with $r = 3$.", 1),
        ("The hypotenuse is $\\sqrt{3^2 + 4^2} = 5$.", 1),
        ("$\\sqrt{5^2 + 12^2} = 14$", -1),
    )
    rec("", ("$x^2 \\cdot x^3 = x^5$", 1), ("$\\frac{x^6}{x^2} = x^3$", -1), ("$(x^2)^3 = x^6$", 1))
    rec("", ("25% of 80 = 20", 1), ("0.25 × 80 = 20", 1))
    rec(
        "Find the number of positive divisors of 360.",
        ("$360 = 2^3 \\cdot 3^2 \\cdot 5$", 1),
        ("The number of divisors is $(3+1)(2+1)(1+1) = 24$.", 1),
        ("$\\boxed{24}$", 1),
    )
    rec("", ("The sum 1 + 2 + ... + 100 = 5050", 1), ("$\\frac{100 \\cdot 101}{2} = 5050$", 1))
    rec("", ("(-3)^2 = 9", 1), ("-3^2 = 9", -1), ("|-7| = 7", 1))
    return H


# --- answer pairs ------------------------------------------------------------------------------------------
def answer_pairs(rng: random.Random) -> list[dict]:
    pairs: list[dict] = []

    def add(cat: str, gold: str, pred: str, label: int) -> None:
        pairs.append(
            {"id": f"ans-{len(pairs):04d}", "category": cat, "gold": gold, "pred": pred, "label": label}
        )

    # Integers: equal spellings and near misses.
    for _ in range(75):
        v = rng.choice([rng.randint(0, 999), rng.randint(1000, 99999), -rng.randint(1, 99)])
        forms = [str(v), f"{v}.0", f"x = {v}", f"{v:,}" if abs(v) >= 1000 else f"{{{v}}}", f"\\text{{{v}}}"]
        add("integer", str(v), rng.choice(forms), 1)
        add("integer", str(v), str(v + rng.choice([1, -1, 10, 100])), 0)
    # Fractions: LaTeX vs plain vs decimal vs unreduced.
    for _ in range(60):
        p, q = rng.randint(1, 40), rng.choice([2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 25])
        fr = Fraction(p, q)
        if fr.denominator == 1:
            continue
        gold = f"\\frac{{{fr.numerator}}}{{{fr.denominator}}}"
        forms = [
            f"{fr.numerator}/{fr.denominator}",
            f"\\dfrac{{{fr.numerator}}}{{{fr.denominator}}}",
            f"\\frac{{{2 * fr.numerator}}}{{{2 * fr.denominator}}}",
            f"{fr.numerator}/{fr.denominator}",
        ]
        if fr.denominator in (2, 4, 5, 8, 16, 25):
            forms.append(str(fr.numerator / fr.denominator))
        add("fraction", gold, rng.choice(forms), 1)
        wrong = fr + Fraction(1, fr.denominator)
        add("fraction", gold, f"\\frac{{{wrong.numerator}}}{{{wrong.denominator}}}", 0)
    # Radicals and pi.
    for _ in range(40):
        m, r = rng.randint(2, 6), rng.choice([2, 3, 5, 6, 7, 10])
        gold = f"{m}\\sqrt{{{r}}}"
        # An unbraced \sqrt takes one token: "\sqrt 10" is sqrt(1)*0, so that form only for one digit.
        forms = [
            f"\\sqrt{{{m * m * r}}}",
            f"{m}*sqrt({r})",
            f"sqrt({m * m * r})",
            f"{m} \\sqrt {r}" if r < 10 else f"{m} \\sqrt{{ {r} }}",
        ]
        add("radical", gold, rng.choice(forms), 1)
        add("radical", gold, rng.choice([f"{m + 1}\\sqrt{{{r}}}", f"\\sqrt{{{m * r}}}", f"{m * r}"]), 0)
    for _ in range(25):
        k, d = rng.randint(1, 7), rng.choice([2, 3, 4, 6])
        gold = f"\\frac{{{k}\\pi}}{{{d}}}"
        add("pi", gold, rng.choice([f"{k}\\pi/{d}", f"{k}*pi/{d}", f"\\frac{{{k}}}{{{d}}}\\pi"]), 1)
        add("pi", gold, rng.choice([f"{k + 1}\\pi/{d}", f"\\frac{{{k}}}{{{d}}}"]), 0)
    # Expressions with variables.
    for _ in range(40):
        a, b = rng.randint(1, 9), rng.randint(1, 9)
        gold = f"(x + {a})(x + {b})"
        add(
            "expression",
            gold,
            rng.choice([f"x^2 + {a + b}x + {a * b}", f"(x+{b})(x+{a})", f"x^{{2}} + {a + b}x + {a * b}"]),
            1,
        )
        add(
            "expression",
            gold,
            rng.choice([f"x^2 + {a + b}x + {a * b + 1}", f"x^2 + {a * b}", f"(x - {a})(x + {b})"]),
            0,
        )
    # Structured answers, hand-written.
    structured = [
        ("tuple", "(1, 2)", "(1,2)", 1),
        ("tuple", "(1, 2)", "(2, 1)", 0),
        ("tuple", "(3, -4)", "\\left(3, -4\\right)", 1),
        ("tuple", "(1, 2, 3)", "(1, 2)", 0),
        ("tuple", "(\\frac{1}{2}, 3)", "(0.5, 3)", 1),
        ("tuple", "(2, 5)", "(2, 6)", 0),
        ("set", "\\{1, 2, 3\\}", "\\{3, 2, 1\\}", 1),
        ("set", "\\{1, 2\\}", "1, 2", 1),
        ("set", "\\{1, 2\\}", "\\{1, 3\\}", 0),
        ("set", "1, 2", "2, 1", 1),
        ("set", "-2, 3", "3, -2", 1),
        ("set", "-2, 3", "2, 3", 0),
        ("set", "\\{\\sqrt{2}, -\\sqrt{2}\\}", "\\pm\\sqrt{2}", 1),
        ("interval", "[0, 1)", "[0,1)", 1),
        ("interval", "[0, 1)", "[0, 1]", 0),
        ("interval", "(-\\infty, 3]", "(-\\infty,3]", 1),
        ("interval", "(2, \\infty)", "x > 2", 1),
        ("interval", "(2, \\infty)", "x \\geq 2", 0),
        ("interval", "(-\\infty, 2] \\cup (3, \\infty)", "(-\\infty,2]\\cup(3,\\infty)", 1),
        ("interval", "(-\\infty, 2] \\cup (3, \\infty)", "(3, \\infty) \\cup (-\\infty, 2]", 1),
        ("interval", "[1, 5]", "[1, 4]", 0),
        ("interval", "(0, \\frac{1}{2})", "(0, 0.5)", 1),
        ("equation", "y = 2x + 1", "y = 1 + 2x", 1),
        ("equation", "3", "x = 3", 1),
        ("equation", "3", "y = 3", 1),
        ("equation", "y = 2x + 1", "y = 2x - 1", 0),
        ("equation", "5", "x=5", 1),
        ("equation", "-1", "x = 1", 0),
        ("text", "\\text{(B)}", "\\text{(B)}", 1),
        ("percent", "50\\%", "50", 1),
        ("degree", "30^\\circ", "30", 1),
        ("decimal", "0.125", "\\frac{1}{8}", 1),
        ("decimal", "3.14", "\\pi", 0),
        ("decimal", "1.5", "3/2", 1),
        ("decimal", "0.333", "\\frac{1}{3}", 0),
        ("decimal", "2.50", "2.5", 1),
        ("large", "1000000", "10^6", 1),
        ("large", "1000000", "10^{6}", 1),
        ("large", "2^{10}", "1024", 1),
        ("large", "2^{10}", "1000", 0),
        ("large", "10!", "3628800", 1),
        ("complex", "1 + i", "i + 1", 1),
        ("complex", "2i", "2 i", 1),
        ("root", "\\sqrt[3]{27}", "3", 1),
        ("root", "\\sqrt{2}/2", "\\frac{1}{\\sqrt{2}}", 1),
        ("root", "\\frac{\\sqrt{3}}{2}", "\\frac{\\sqrt 3}{2}", 1),
        ("root", "\\sqrt{3}/2", "\\sqrt{2}/2", 0),
        ("log", "\\log_2 8", "3", 1),
        ("log", "\\ln(e^2)", "2", 1),
        ("trig", "\\sin(\\pi/6)", "\\frac{1}{2}", 1),
        ("trig", "\\cos(0)", "0", 0),
        ("negative", "-\\frac{3}{4}", "\\frac{-3}{4}", 1),
        ("negative", "-\\frac{3}{4}", "\\frac{3}{-4}", 1),
        ("negative", "-5", "5", 0),
        ("negative", "-(2)", "-2", 1),
        ("mixed", "2\\frac{1}{2}", "5/2", 1),
        ("mixed", "2\\frac{1}{2}", "1", 0),
        ("matrix", "\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}", "\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}", 1),
    ]
    for cat, gold, pred, label in structured:
        add(cat, gold, pred, label)
    # Written after the checker was built and measured only (category "heldout"): the honest estimate.
    heldout = [
        ("\\frac{\\sqrt{3}}{3}", "\\frac{1}{\\sqrt{3}}", 1),
        ("\\frac{\\sqrt{3}}{3}", "\\sqrt{3}", 0),
        ("6\\sqrt{3}", "\\sqrt{108}", 1),
        ("-\\frac{1}{2}", "-0.5", 1),
        ("\\frac{5}{12}", "5/12", 1),
        ("\\frac{5}{12}", "0.4167", 0),
        ("2^{12}", "4096", 1),
        ("3^5", "243", 1),
        ("3^5", "245", 0),
        ("\\left(\\frac{1}{2}, -3\\right)", "(0.5,-3)", 1),
        ("(1, -1)", "(-1, 1)", 0),
        ("\\{-3, 3\\}", "-3, 3", 1),
        ("\\{-3, 3\\}", "3", 0),
        ("[2, 5]", "[2,5]", 1),
        ("(-\\infty, 0)", "x < 0", 1),
        ("(-\\infty, 0)", "x \\le 0", 0),
        ("x^2 - 4", "(x-2)(x+2)", 1),
        ("x^2 - 4", "(x-2)^2", 0),
        ("\\frac{x+1}{x-1}", "\\frac{1+x}{x-1}", 1),
        ("2x + 3", "3 + 2x", 1),
        ("\\pi", "3.14159", 0),
        ("2\\pi", "\\pi \\cdot 2", 1),
        ("12", "12.00", 1),
        ("12", "\\text{12 cm}", 1),
        ("1000", "1{,}000", 1),
        ("0", "-0", 1),
        ("\\sqrt{2}+1", "1+\\sqrt{2}", 1),
        ("\\frac{1}{\\sqrt{2}-1}", "\\sqrt{2}+1", 1),
        ("e^2", "e^{2}", 1),
        ("\\ln 2", "\\log 2", 1),
        ("\\dfrac{7}{2}", "3\\frac{1}{2}", 1),
        ("100", "10^2", 1),
        ("5", "\\boxed{5}", 1),
        ("-2", "−2", 1),
        ("\\frac{3}{8}", "0.375", 1),
        ("y = -x + 4", "y=4-x", 1),
        ("\\infty", "\\infty", 1),
        ("(0, 1]", "(0, 1)", 0),
        ("7", "seven", 1),
    ]
    for gold, pred, label in heldout:
        add("heldout", gold, pred, label)
    return pairs


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
