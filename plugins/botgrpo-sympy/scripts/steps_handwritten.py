"""Hand-labelled step families of ``data/steps_labelled.jsonl``: decoys, LaTeX, mixed prose, branches and the
checker's limits (labels written by hand). Used by ``make_data.py``.
"""

from __future__ import annotations


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
