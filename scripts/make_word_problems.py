"""Grade-school word problems written for botgrpo (not drawn from any data set): one- to three-step arithmetic
stories from templates, with exact integer answers, deterministic for a seed.

    python scripts/make_word_problems.py     # writes word_problems_{train,heldout}.jsonl in botgrpo_bench/data/
    python scripts/make_word_problems.py --level easy --per-template 40   # easy_problems_{train,heldout}.jsonl

Each row: ``id``, ``prompt`` (TRL's conversational format: one user message), ``answer`` (the number as text),
``steps`` (how many operations the story needs), ``template``, ``split`` (``heldout`` for every fifth problem of
each template, by position, else ``train``). The stories are original to this project (Apache-2.0); the GSM8K
train split's *style* (short stories, whole numbers, "How many ...?") is the model, none of its text is used.
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Callable
from pathlib import Path

from botgrpo_bench.word_problems import PROMPTS  # the shipped instruction's one home

OUT = Path(__file__).resolve().parents[1] / "benchmarks/botgrpo_bench/botgrpo_bench/data"

NAMES = ["Ava", "Ben", "Carla", "Dev", "Elena", "Farid", "Grace", "Hugo", "Iris", "Jamal", "Kira", "Leo"]
PRONOUN = {n: ("she" if n in {"Ava", "Carla", "Elena", "Grace", "Iris", "Kira"} else "he") for n in NAMES}

Story = tuple[str, int, int]  # (text, answer, steps)


def _packs(r: random.Random, n: str) -> Story:
    a, b = r.randint(2, 6), r.randint(3, 12)
    c = r.randint(1, a * b - 1)
    p = PRONOUN[n]
    return (
        f"{n} buys {a} packs of stickers with {b} stickers in each pack. {p.capitalize()} gives {c} stickers "
        f"to a friend. How many stickers does {p} have left?",
        a * b - c,
        2,
    )


def _bakery(r: random.Random, n: str) -> Story:
    a, b = r.randint(2, 5), r.randint(6, 12)
    c = r.randint(1, a * b - 1)
    return (
        f"A bakery bakes {a} trays of muffins with {b} muffins on each tray. It sells {c} muffins in the "
        "morning. How many muffins are left?",
        a * b - c,
        2,
    )


def _wage(r: random.Random, n: str) -> Story:
    a, b, c = r.randint(8, 20), r.randint(2, 8), r.randint(2, 5)
    return (
        f"{n} earns ${a} per hour. {PRONOUN[n].capitalize()} works {b} hours a day for {c} days. How many "
        f"dollars does {PRONOUN[n]} earn in total?",
        a * b * c,
        2,
    )


def _marbles(r: random.Random, n: str) -> Story:
    a, b, c = r.randint(5, 40), r.randint(2, 6), r.randint(3, 10)
    return (
        f"{n} has {a} marbles. {PRONOUN[n].capitalize()} buys {b} bags with {c} marbles in each bag. How many "
        f"marbles does {PRONOUN[n]} have now?",
        a + b * c,
        2,
    )


def _boxes(r: random.Random, n: str) -> Story:
    c = r.choice([5, 6, 8, 10, 12])
    b = r.randint(2, 4)
    a = r.randint(2, 9) * c  # a multiple of the box size: a whole number of boxes
    return (
        f"A class has {a} students. Each student needs {b} pencils. Pencils come in boxes of {c}. How many "
        "boxes of pencils does the class need?",
        a * b // c,
        2,
    )


def _pages(r: random.Random, n: str) -> Story:
    a = r.randint(10, 40)
    b = 3 * a + r.randint(10, 80)
    return (
        f"{n} reads {a} pages of a book on Monday and twice as many pages on Tuesday. The book has {b} pages. "
        f"How many pages are left to read?",
        b - 3 * a,
        3,
    )


def _legs(r: random.Random, n: str) -> Story:
    a, b = r.randint(2, 15), r.randint(2, 20)
    return (
        f"A farmer has {a} cows and {b} chickens. How many legs do the animals have in total?",
        4 * a + 2 * b,
        3,
    )


def _change(r: random.Random, n: str) -> Story:
    a, b, c = r.randint(2, 4), r.randint(5, 15), r.randint(3, 12)
    d = r.choice([50, 100]) if a * b + c < 50 else 100
    return (
        f"{n} buys {a} shirts for ${b} each and a hat for ${c}. {PRONOUN[n].capitalize()} pays with a ${d} bill. "
        "How much change does " + PRONOUN[n] + " get, in dollars?",
        d - (a * b + c),
        3,
    )


def _tank(r: random.Random, n: str) -> Story:
    b, c = r.randint(3, 9), r.randint(4, 12)
    a = b * c + r.randint(5, 60)
    return (
        f"A tank holds {a} liters of water. A hose fills it at {b} liters per minute for {c} minutes. How many "
        "more liters are needed to fill the tank?",
        a - b * c,
        2,
    )


def _share(r: random.Random, n: str) -> Story:
    a = r.randint(2, 6)
    per = r.randint(4, 12)
    c = r.randint(1, per - 1)
    return (
        f"{a} friends share {a * per} cookies equally. Each friend eats {c} cookies. How many cookies does each "
        "friend have left?",
        per - c,
        2,
    )


def _train(r: random.Random, n: str) -> Story:
    a, b, c = r.randint(40, 90), r.randint(2, 5), r.randint(10, 60)
    return (
        f"A train travels at {a} km per hour for {b} hours and then travels {c} more km. How many km does it "
        "travel in total?",
        a * b + c,
        2,
    )


def _savings(r: random.Random, n: str) -> Story:
    a, b = r.randint(5, 25), r.randint(3, 10)
    c = r.randint(1, a * b - 1)
    return (
        f"{n} saves ${a} each week. After {b} weeks {PRONOUN[n]} spends ${c} on a game. How many dollars does "
        f"{PRONOUN[n]} have left?",
        a * b - c,
        2,
    )


def _apples(r: random.Random, n: str) -> Story:
    a, b = r.randint(10, 60), r.randint(2, 30)
    return (
        f"{n} picks {a} apples and then picks {b} more. How many apples does {PRONOUN[n]} have?",
        a + b,
        1,
    )


def _rows(r: random.Random, n: str) -> Story:
    a, b = r.randint(3, 12), r.randint(3, 12)
    return (
        f"A garden has {a} rows of plants with {b} plants in each row. How many plants are in the garden?",
        a * b,
        1,
    )


TEMPLATES: dict[str, Callable[[random.Random, str], Story]] = {
    f.__name__.lstrip("_"): f
    for f in (
        _packs,
        _bakery,
        _wage,
        _marbles,
        _boxes,
        _pages,
        _legs,
        _change,
        _tank,
        _share,
        _train,
        _savings,
        _apples,
        _rows,
    )
}


# The easy set (``--level easy``): one operation on numbers up to 20, for a model that solves the set above
# about 2% of the time (SmolLM2-135M-Instruct: benchmarks/results/math_start.json).
def _more(r: random.Random, n: str) -> Story:
    a, b = r.randint(2, 20), r.randint(2, 20)
    return (f"{n} has {a} pencils and gets {b} more. How many pencils does {PRONOUN[n]} have now?", a + b, 1)


def _eaten(r: random.Random, n: str) -> Story:
    a = r.randint(6, 20)
    b = r.randint(1, a - 1)
    return (f"{n} has {a} cookies and eats {b} of them. How many cookies are left?", a - b, 1)


def _bags(r: random.Random, n: str) -> Story:
    a, b = r.randint(2, 9), r.randint(2, 9)
    return (
        f"{n} has {a} bags with {b} oranges in each bag. How many oranges does {PRONOUN[n]} have?",
        a * b,
        1,
    )


def _split(r: random.Random, n: str) -> Story:
    b, q = r.randint(2, 6), r.randint(2, 8)
    return (
        f"{n} shares {b * q} stickers equally among {b} friends. How many stickers does each friend get?",
        q,
        1,
    )


def _coins(r: random.Random, n: str) -> Story:
    a, b = r.randint(5, 20), r.randint(5, 20)
    return (
        f"{n} saves {a} dollars on Monday and {b} dollars on Tuesday. How many dollars did {PRONOUN[n]} save?",
        a + b,
        1,
    )


def _birds(r: random.Random, n: str) -> Story:
    a = r.randint(8, 20)
    b = r.randint(1, a - 1)
    return (
        f"There are {a} birds on a tree. {b} birds fly away. How many birds are still on the tree?",
        a - b,
        1,
    )


def _wheels(r: random.Random, n: str) -> Story:
    name, wheels = r.choice([("bicycle", 2), ("tricycle", 3), ("car", 4)])
    a = r.randint(2, 15)
    return (f"A {name} has {wheels} wheels. How many wheels do {a} {name}s have?", wheels * a, 1)


def _pages_read(r: random.Random, n: str) -> Story:
    a, b = r.randint(2, 10), r.randint(2, 5)
    return (f"{n} reads {a} pages every day for {b} days. How many pages does {PRONOUN[n]} read?", a * b, 1)


EASY_TEMPLATES: dict[str, Callable[[random.Random, str], Story]] = {
    f.__name__.lstrip("_"): f for f in (_more, _eaten, _bags, _split, _coins, _birds, _wheels, _pages_read)
}
LEVELS = {"grade": (TEMPLATES, "word_problems"), "easy": (EASY_TEMPLATES, "easy_problems")}


def make(
    per_template: int = 25,
    seed: int = 0,
    templates: dict[str, Callable[[random.Random, str], Story]] = TEMPLATES,
) -> list[dict[str, object]]:
    """``per_template`` problems from each template, the story's numbers drawn with ``seed``."""
    rng = random.Random(seed)
    rows: list[dict[str, object]] = []
    for name, template in templates.items():
        seen: set[str] = set()
        k = 0
        while k < per_template:
            text, answer, steps = template(rng, rng.choice(NAMES))
            if text in seen or answer <= 0:
                continue
            seen.add(text)
            rows.append(
                {
                    "id": f"{name}-{k}",
                    "prompt": [{"role": "user", "content": PROMPTS["shipped"].format(story=text)}],
                    "answer": str(answer),
                    "steps": steps,
                    "template": name,
                    "split": "heldout" if k % 5 == 4 else "train",
                }
            )
            k += 1
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-template", type=int, default=25)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--level", choices=sorted(LEVELS), default="grade", help="grade (the default set) or easy"
    )
    parser.add_argument("--output", type=Path, default=OUT, help="folder for <set>_<split>.jsonl")
    args = parser.parse_args()
    templates, stem = LEVELS[args.level]
    rows = make(args.per_template, args.seed, templates)
    args.output.mkdir(parents=True, exist_ok=True)
    for split in ("train", "heldout"):
        part = [r for r in rows if r["split"] == split]
        path = args.output / f"{stem}_{split}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in part))
        print(f"{len(part)} problems -> {path}")


if __name__ == "__main__":
    main()
