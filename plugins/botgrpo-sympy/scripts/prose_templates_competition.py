"""Competition-style (MATH train style) templated solutions in LaTeX for the prose corpus: function values,
case analyses, chains, degrees, rebinding, conditions. Same contract as ``prose_templates.py``.
"""

from __future__ import annotations

import random
from fractions import Fraction

from prose_templates import Template, _money


# --- competition style ---------------------------------------------------------------------------------------
def function_value(rng: random.Random) -> tuple[str, list[str]]:
    f, a, b, x = rng.choice("fgh"), rng.randint(2, 9), rng.randint(-9, 9), rng.randint(-5, 9)
    value = a * x + b
    sign = "+" if b >= 0 else "-"
    lines = [
        f"Substituting, ${f}({x}) = {a} \\cdot {'(' + str(x) + ')' if x < 0 else x} {sign} {abs(b)} = {value}$.",
        f"The answer is $\\boxed{{{value}}}$.",
    ]
    return f"Let ${f}(x) = {a}x {sign} {abs(b)}$. Find ${f}({x})$.", lines


def quadratic_cases(rng: random.Random) -> tuple[str, list[str]]:
    r = rng.randint(2, 9)
    c = r * r
    k = rng.randint(1, 5)
    lines = [
        f"From $x^2 = {c}$ we get $x = {r}$ or $x = -{r}$.",
        rng.choice([f"If $x = {r}$, then $x + {k} = {r + k}$.", f"Plug in $x = {r}$: $x + {k} = {r + k}$."]),
        rng.choice(
            [
                f"If $x = -{r}$, then $x + {k} = {k - r}$.",
                f"The other solution is $x = -{r}$, which gives $x + {k} = {k - r}$.",
            ]
        ),
        f"The larger value is $\\boxed{{{r + k}}}$.",
    ]
    return f"If $x^2 = {c}$, what is the largest possible value of $x + {k}$?", lines


def circle_chain(rng: random.Random) -> tuple[str, list[str]]:
    r, k = rng.randint(2, 12), rng.choice([3, 7, 11, 13, 41])
    lines = [
        f"The area gives $\\pi r^2 = {k * r * r}\\pi/{k}$.",
        rng.choice(
            [
                f"So $r^2 = {k * r * r}/{k} = {r * r}$.",
                f"Hence $r^2 = \\frac{{{k * r * r}}}{{{k}}} = {r * r}$.",
            ]
        ),
        f"Therefore $r = {r}$ and the diameter is $2 \\cdot {r} = {2 * r}$.",
        f"$\\boxed{{{2 * r}}}$",
    ]
    return f"A circle has area $\\frac{{{k * r * r}\\pi}}{{{k}}}$. Find its diameter.", lines


def triangle_angles(rng: random.Random) -> tuple[str, list[str]]:
    a, b = rng.randint(20, 80), rng.randint(20, 70)
    c = 180 - a - b
    deg = rng.choice(["^\\circ", "^{\\circ}", "°"])
    lines = [
        f"The angles sum to $180{deg}$.",
        rng.choice(
            [
                f"So the third angle is $180{deg} - {a}{deg} - {b}{deg} = {c}{deg}$.",
                f"Thus $180 - {a} - {b} = {c}$ degrees.",
            ]
        ),
        f"The answer is $\\boxed{{{c}}}$.",
    ]
    return f"Two angles of a triangle measure ${a}{deg}$ and ${b}{deg}$. Find the third angle.", lines


def trig_degrees(rng: random.Random) -> tuple[str, list[str]]:
    deg = rng.choice(["^\\circ", "^{\\circ}"])
    k = rng.randint(2, 9)
    lines = [
        rng.choice(
            [f"We have $\\sin 30{deg} = \\frac{{1}}{{2}}$.", f"Recall $\\cos 60{deg} = \\frac{{1}}{{2}}$."]
        ),
        f"So ${k} \\cdot \\frac{{1}}{{2}} = {_money(Fraction(k, 2))}$.",
        f"$\\boxed{{{_money(Fraction(k, 2))}}}$",
    ]
    return f"Compute ${k} \\sin 30{deg}$.", lines


def linear_equation(rng: random.Random) -> tuple[str, list[str]]:
    a, x, b = rng.randint(2, 9), rng.randint(-6, 12), rng.randint(1, 20)
    c = a * x + b
    lines = [
        f"Subtract {b} from both sides: ${a}x = {c} - {b} = {c - b}$.",
        f"Divide by {a}: $x = {x}$.",
        rng.choice(
            [
                f"Check: ${a} \\cdot {'(' + str(x) + ')' if x < 0 else x} + {b} = {c}$.",
                f"Indeed ${a}({x}) + {b} = {c}$.",
            ]
        ),
        f"$\\boxed{{{x}}}$",
    ]
    return f"Solve ${a}x + {b} = {c}$.", lines


def condition(rng: random.Random) -> tuple[str, list[str]]:
    r = rng.randint(2, 9)
    lines = [
        f"Since $x > {r - 1}$, only the positive root counts.",
        f"From $x^2 = {r * r}$ we get $x = {r}$.",
        f"Check: ${r} > {r - 1}$ holds.",
        f"$\\boxed{{{r}}}$",
    ]
    return f"Find $x$ if $x > {r - 1}$ and $x^2 = {r * r}$.", lines


def rebinding(rng: random.Random) -> tuple[str, list[str]]:
    n1, n2 = rng.randint(2, 6), rng.randint(7, 12)
    lines = [
        f"Let $n = {n1}$. Then $n^2 + 1 = {n1 * n1 + 1}$.",
        rng.choice(
            [
                f"Now let $n = {n2}$: $n^2 + 1 = {n2 * n2 + 1}$.",
                f"For $n = {n2}$ we get $n^2 + 1 = {n2 * n2 + 1}$.",
                f"Plugging in $n = {n2}$, $n^2 + 1 = {n2 * n2 + 1}$.",
            ]
        ),
        f"The difference is ${n2 * n2 + 1} - {n1 * n1 + 1} = {n2 * n2 - n1 * n1}$.",
        f"$\\boxed{{{n2 * n2 - n1 * n1}}}$",
    ]
    return f"Find the difference of $n^2 + 1$ at $n = {n2}$ and at $n = {n1}$.", lines


def powers(rng: random.Random) -> tuple[str, list[str]]:
    a, b = rng.randint(2, 5), rng.randint(2, 6)
    lines = [
        f"We compute ${a}^{{{b}}} = {a**b}$ and ${a}^{{{b + 1}}} = {a ** (b + 1)}$.",
        f"Their sum is ${a**b} + {a ** (b + 1)} = {a**b + a ** (b + 1)}$.",
        f"$\\boxed{{{a**b + a ** (b + 1)}}}$",
    ]
    return f"Compute ${a}^{{{b}}} + {a}^{{{b + 1}}}$.", lines


COMPETITION_TEMPLATES: list[Template] = [
    function_value,
    quadratic_cases,
    circle_chain,
    triangle_angles,
    trig_degrees,
    linear_equation,
    condition,
    rebinding,
    powers,
]
