"""The held-out hand-labelled batches of ``data/steps_labelled.jsonl`` (written after the checker, never
used to tune it). Used by ``make_data.py``.
"""

from __future__ import annotations


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
