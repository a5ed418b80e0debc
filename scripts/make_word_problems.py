"""Grade-school word problems written for botgrpo (not drawn from any data set): one- to three-step arithmetic
stories from templates, with exact integer answers, deterministic for a seed.

    python scripts/make_word_problems.py     # writes word_problems_{train,heldout}.jsonl in botgrpo_bench/data/
    python scripts/make_word_problems.py --level easy --per-template 40   # easy_problems_{train,heldout}.jsonl
    python scripts/make_word_problems.py --level multi23    # multi23_problems_*: 2-3 operations, 5 families x 130

Each row: ``id``, ``prompt`` (TRL's conversational format: one user message), ``answer`` (the number as text),
``steps`` (how many operations the story needs), ``template``, ``split`` (``heldout`` for every fifth problem of
each template, by position, else ``train``); the multi-step sets' rows also hold ``solution`` (the reference solution,
one ``a op b = c`` line per operation). The stories are original to this project (Apache-2.0); the GSM8K
train split's *style* (short stories, whole numbers, "How many ...?") is the model, none of its text is used.
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

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


# ---- multi-step sets (issue 57): families of templates, each a story of a chosen number of operations ---------
# A family is a story shape whose events are drawn per problem (which events, how many, which relation), so one
# family makes many distinct stories of 2 to 5 operations; each returns the story, its answer, its number of
# operations and a reference solution (one ``a op b = c`` line per operation, as the one-shot example writes them).
# :class:`Numbers` sets the size of the numbers and whether multiplication and division appear.
ITEMS = [
    "marbles",
    "stickers",
    "cards",
    "pencils",
    "apples",
    "stamps",
    "beads",
    "coins",
    "buttons",
    "toy cars",
]
FRIENDS = ["Max", "Nora", "Omar", "Pia", "Quinn", "Rosa", "Sam", "Tara"]
OBJECT = {"she": "her", "he": "him"}

Solved = tuple[str, int, int, list[str]]  # (story, answer, operations, reference solution lines)


class Numbers(NamedTuple):
    """How large a story's numbers are: counts a story starts from up to ``top``, amounts added, taken or paid up
    to ``step``, factors and divisors up to ``factor``; ``mul``: multiplication and division appear."""

    top: int = 20
    step: int = 9
    factor: int = 5
    mul: bool = True


class _Work:
    """The reference solution as it is written: one line per operation."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def __call__(self, a: int, op: str, b: int) -> int:
        value = {"+": a + b, "-": a - b, "*": a * b, "/": a // b}[op]
        assert op != "/" or a % b == 0
        self.lines.append(f"{a} {op} {b} = {value}")
        return value


def _cap(name: str) -> str:
    return name[0].upper() + name[1:]


def _inventory(r: random.Random, n: str, ops: int, num: Numbers) -> Solved:
    """A count changed by events in turn (finds, is given, gives away, loses); with ``mul`` also bags of k."""
    items, friend, p = r.choice(ITEMS), r.choice(FRIENDS), PRONOUN[n]
    work = _Work()
    count = r.randint(num.step + 1, max(num.top, num.step + 1))
    text, left, bags = [f"{n} has {count} {items}."], ops, False
    while left:
        if num.mul and left >= 2 and not bags and r.random() < 0.5:
            g, k = r.randint(2, num.factor), r.randint(2, num.factor)
            text.append(f"{_cap(p)} buys {g} bags with {k} {items} in each bag.")
            count = work(count, "+", work(g, "*", k))
            left, bags = left - 2, True
        elif count > 3 and r.random() < 0.5:
            k = r.randint(2, min(num.step, count - 1))
            text.append(
                r.choice([f"{_cap(p)} gives {k} {items} to {friend}.", f"{_cap(p)} loses {k} {items}."])
            )
            count = work(count, "-", k)
            left -= 1
        else:
            k = r.randint(2, num.step)
            text.append(
                r.choice([f"{_cap(p)} finds {k} more {items}.", f"{friend} gives {OBJECT[p]} {k} {items}."])
            )
            count = work(count, "+", k)
            left -= 1
    text.append(f"How many {items} does {p} have now?")
    return " ".join(text), count, ops, work.lines


GOODS = [("notebook", "notebooks"), ("pen", "pens"), ("book", "books"), ("ball", "balls"), ("cup", "cups")]
SINGLES = ["a ruler", "a bag", "a hat", "a scarf", "a lamp", "a map"]


def _shop(r: random.Random, n: str, ops: int, num: Numbers) -> Solved:
    """A bill: with ``mul`` some goods bought q at a price each; single things at a price; then change or not."""
    p = PRONOUN[n]
    shapes = [  # (goods bought by the piece, single things, change): operations = goods + (parts - 1) + change
        (g, s, c)
        for g in ((0, 1, 2) if num.mul else (0,))
        for s in range(0, 7)
        for c in (0, 1)
        if g + s >= 1 and g + (g + s - 1) + c == ops and (num.mul or s >= 2)
    ]
    g, s, c = r.choice(shapes)
    work = _Work()
    parts, costs = [], []
    for _one, many in r.sample(GOODS, g):
        q, price = r.randint(2, num.factor), r.randint(2, num.step)
        parts.append(f"{q} {many} for ${price} each")
        costs.append(work(q, "*", price))
    for thing in r.sample(SINGLES, s):
        price = r.randint(2, num.step)
        parts.append(f"{thing} for ${price}")
        costs.append(price)
    total = costs[0]
    for cost in costs[1:]:
        total = work(total, "+", cost)
    bought = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    text = f"{n} buys {bought}."
    if not c:
        return f"{text} How many dollars does {p} spend?", total, ops, work.lines
    bill = next(b for b in (10, 20, 50, 100) if b > total)
    change = work(bill, "-", total)
    return (
        f"{text} {_cap(p)} pays with a ${bill} bill. How many dollars of change does {p} get?",
        change,
        ops,
        work.lines,
    )


def _relations(r: random.Random, n: str, ops: int, num: Numbers) -> Solved:
    """A chain of people, each with some more, fewer or (``mul``) twice as many as the one before; the question
    asks for the last one's count or the last few together: operations = relations + (people asked - 1)."""
    shapes = [(m, q) for m in range(1, 5) for q in range(1, m + 2) if m + q - 1 == ops and q <= 3]
    m, q = r.choice(shapes)
    items = r.choice(ITEMS)
    people = [n, *r.sample([f for f in FRIENDS], m)]
    work = _Work()
    counts = [r.randint(3, max(num.top, 4))]
    text = [f"{n} has {counts[0]} {items}."]
    for k in range(1, m + 1):
        before, who = counts[-1], people[k]
        kinds = ["more", "fewer"] + (["twice"] if num.mul and before <= num.top else [])
        kind = r.choice([x for x in kinds if x != "fewer" or before > 2])
        if kind == "more":
            d = r.randint(2, num.step)
            text.append(f"{who} has {d} more {items} than {people[k - 1]}.")
            counts.append(work(before, "+", d))
        elif kind == "fewer":
            d = r.randint(1, min(num.step, before - 1))
            text.append(f"{who} has {d} fewer {items} than {people[k - 1]}.")
            counts.append(work(before, "-", d))
        else:
            text.append(f"{who} has twice as many {items} as {people[k - 1]}.")
            counts.append(work(before, "*", 2))
    asked = people[-q:]
    total = counts[-q]
    for value in counts[-q + 1 :] if q > 1 else []:
        total = work(total, "+", value)
    if q == 1:
        text.append(f"How many {items} does {asked[0]} have?")
    else:
        names = ", ".join(asked[:-1]) + " and " + asked[-1]
        text.append(f"How many {items} do {names} have together?")
    return " ".join(text), total, ops, work.lines


def _groups(r: random.Random, n: str, ops: int, num: Numbers) -> Solved:
    """Boxes of k things, some taken or added, the rest shared equally: box product, events, one division."""
    things, holder = r.choice(
        [("crayons", "box"), ("cookies", "tray"), ("eggs", "carton"), ("books", "shelf")]
    )
    holders = "shelves" if holder == "shelf" else holder + ("es" if holder == "box" else "s")
    while True:
        work = _Work()
        a, b = r.randint(2, num.factor + 1), r.randint(2, num.step + 1)
        text = [f"{n} has {a} {holders} of {things} with {b} {things} in each {holder}."]
        count = work(a, "*", b)
        for _ in range(ops - 2):
            if r.random() < 0.5 and count > 4:
                k = r.randint(2, min(num.step, count - 2))
                text.append(
                    r.choice([f"{_cap(PRONOUN[n])} gives away {k} {things}.", f"{k} {things} are broken."])
                )
                count = work(count, "-", k)
            else:
                k = r.randint(2, num.step)
                text.append(f"{_cap(PRONOUN[n])} gets {k} more {things}.")
                count = work(count, "+", k)
        ways = [d for d in range(2, num.factor + 1) if count % d == 0 and count // d >= 2]
        if ways:
            break
    d = r.choice(ways)
    share = work(count, "/", d)
    text.append(
        f"{_cap(PRONOUN[n])} shares them equally among {d} friends. How many {things} does each friend get?"
    )
    return " ".join(text), share, ops, work.lines


PLANS = [  # (unit, what one does with a, what is left of a goal)
    ("pages", "reads {a} pages", "The book has {t} pages. How many pages are left to read?"),
    ("km", "rides {a} km", "The trip is {t} km long. How many km are left to ride?"),
    ("dollars", "saves ${a}", "{P} wants a bike that costs ${t}. How many more dollars does {p} need?"),
]
WEEK = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def _days(r: random.Random, n: str, ops: int, num: Numbers) -> Solved:
    """Progress over days: with ``mul`` a daily amount for some days (and a second one after it), amounts on single
    days, and what is left of a goal; operations = rates + (parts - 1) + left."""
    unit, act, rest = r.choice(PLANS)
    p = PRONOUN[n]
    shapes = [
        (k, e, g)
        for k in ((1, 2) if num.mul else (0,))
        for e in range(0, 6)
        for g in (0, 1)
        if k + e >= 2 - num.mul and k + (k + e - 1) + g == ops
    ]
    k, e, g = r.choice(shapes)
    work = _Work()
    text, parts = [], []
    if k:
        a, b = r.randint(2, num.step), r.randint(2, num.factor)
        first = f"{n} {act.format(a=a)} every day for {b} days"
        parts.append(work(a, "*", b))
        if k == 2:
            a, b = r.randint(2, num.step), r.randint(2, num.factor)
            first += f", then {act.format(a=a)} every day for {b} days"
            parts.append(work(a, "*", b))
        text.append(first + ".")
    for day in WEEK[-e:] if k and e else WEEK[:e]:
        a = r.randint(2, num.step)
        text.append(f"On {day}, {n if not text else p} {act.format(a=a)}.")
        parts.append(a)
    total = parts[0]
    for part in parts[1:]:
        total = work(total, "+", part)
    if g:
        t = total + r.randint(1, num.top)
        text.append(rest.format(t=t, P=_cap(p), p=p))
        return " ".join(text), work(t, "-", total), ops, work.lines
    text.append(f"How many {unit} does {p} {act.split()[0].removesuffix('s')} in total?")
    return " ".join(text), total, ops, work.lines


FAMILIES = {f.__name__.lstrip("_"): f for f in (_inventory, _shop, _relations, _groups, _days)}
MUL_ONLY = {"groups"}  # families that need multiplication and division


def multi_templates(
    ops: tuple[int, ...], numbers: Numbers, families: tuple[str, ...] | None = None
) -> dict[str, Callable[[random.Random, str], Solved]]:
    """One template per family: each problem's number of operations drawn from ``ops``."""
    names = families or tuple(f for f in FAMILIES if numbers.mul or f not in MUL_ONLY)

    def bind(family: Callable[..., Solved]) -> Callable[[random.Random, str], Solved]:
        return lambda r, n: family(r, n, r.choice(ops), numbers)

    return {name: bind(FAMILIES[name]) for name in names}


#: the multi-step sets' numbers and operation counts, chosen on training problems (scripts/multistep_start.py,
#: benchmarks/results/multistep_levels.json; issue 57). multi23: m23-small, the closest to the 3-20% band (2.7%).
#: multi45: of the variants of four or five operations none reached the band either (m45-addsub-matched 2.3% on
#: 16 x 8, m45-addsub 1.2% on 32 x 8); the closest, m45-addsub-matched, whose worked example is a story of the
#: row's own family with the row's own number of operations (:func:`matched_example`, each row's ``example``)
MULTI = {"multi23": ((2, 3), Numbers()), "multi45": ((4, 5), Numbers(12, 6, 4, mul=False))}
#: the sets whose rows carry their own worked example (``example``)
MATCHED = {"multi45"}
LEVELS = {
    "grade": (TEMPLATES, "word_problems"),
    "easy": (EASY_TEMPLATES, "easy_problems"),
    **{name: (multi_templates(ops, numbers), f"{name}_problems") for name, (ops, numbers) in MULTI.items()},
}
#: problems per template when --per-template is not given: 130 per family gives >= 128 held out
#: (multi45 has four families: 160 each gives 128 held out)
PER_TEMPLATE = {"grade": 25, "easy": 40, "multi23": 130, "multi45": 160}


def make(
    per_template: int = 25,
    seed: int = 0,
    templates: dict[str, Callable[[random.Random, str], Story | Solved]] = TEMPLATES,
) -> list[dict[str, object]]:
    """``per_template`` problems from each template, the story's numbers drawn with ``seed``."""
    rng = random.Random(seed)
    rows: list[dict[str, object]] = []
    for name, template in templates.items():
        seen: set[str] = set()
        k = 0
        while k < per_template:
            text, answer, steps, *solution = template(rng, rng.choice(NAMES))
            if text in seen or answer <= 0:
                continue
            seen.add(text)
            row: dict[str, object] = {
                "id": f"{name}-{k}",
                "prompt": [{"role": "user", "content": PROMPTS["shipped"].format(story=text)}],
                "answer": str(answer),
                "steps": steps,
                "template": name,
                "split": "heldout" if k % 5 == 4 else "train",
            }
            if solution:  # the multi-step families' reference solution, one line per operation
                row["solution"] = "\n".join([*solution[0], f"The answer is {answer}."])
            rows.append(row)
            k += 1
    return rows


def matched_example(family: str, ops: int, numbers: Numbers) -> str:
    """The worked example of a story of ``family`` with ``ops`` operations (a fixed story per family and count:
    its own seed), as a one-shot prompt shows it: ``Problem: ...``, ``Solution:``, one line per operation, the
    answer line."""
    example, answer, _, lines = FAMILIES[family](random.Random(f"{family}-{ops}"), "Kira", ops, numbers)
    worked = "\n".join([*lines, f"The answer is {answer}."])
    return f"Problem: {example}\nSolution:\n{worked}"


def level_rows(level: str, per_template: int | None = None, seed: int = 0) -> list[dict[str, object]]:
    """A level's rows as shipped: :func:`make`, and for a :data:`MATCHED` set each row's worked example."""
    templates, _ = LEVELS[level]
    rows = make(per_template or PER_TEMPLATE[level], seed, templates)
    if level in MATCHED:
        numbers = MULTI[level][1]
        for row in rows:
            row["example"] = matched_example(str(row["template"]), int(row["steps"]), numbers)  # type: ignore[call-overload]
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-template", type=int, default=None, help="default: PER_TEMPLATE of the level")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--level",
        choices=sorted(LEVELS),
        default="grade",
        help="grade (the default set), easy, multi23, multi45",
    )
    parser.add_argument("--output", type=Path, default=OUT, help="folder for <set>_<split>.jsonl")
    args = parser.parse_args()
    _, stem = LEVELS[args.level]
    rows = level_rows(args.level, args.per_template, args.seed)
    args.output.mkdir(parents=True, exist_ok=True)
    for split in ("train", "heldout"):
        part = [r for r in rows if r["split"] == split]
        path = args.output / f"{stem}_{split}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in part))
        print(f"{len(part)} problems -> {path}")


if __name__ == "__main__":
    main()
