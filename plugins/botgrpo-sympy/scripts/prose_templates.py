"""Templated solutions for the prose corpus: grade-school word problems and competition-style LaTeX.

Each template draws numbers and one of several phrasings, and returns ``(prompt, lines)``; every
number in a line is computed here with exact arithmetic, so a clean solution is correct by
construction (and the independent reference in ``prose_reference.py`` re-checks each calculator
claim). The phrasings copy how people write such solutions: prose around calculator claims, units
and currency glued to numbers, percents, thousands separators, mixed numbers, unicode signs.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from fractions import Fraction

Template = Callable[[random.Random], tuple[str, list[str]]]

NAMES = ["Ava", "Ben", "Chloe", "Dev", "Elena", "Farid", "Grace", "Hugo", "Iris", "Jamal", "Kira", "Luis"]
ITEMS = [
    ("apples", "bags"),
    ("pencils", "boxes"),
    ("cookies", "trays"),
    ("marbles", "jars"),
    ("eggs", "cartons"),
]


def _money(v: Fraction | int) -> str:
    v = Fraction(v)
    return str(v.numerator) if v.denominator == 1 else f"{float(v):.2f}"


def _thousands(n: int, sep: str) -> str:
    return f"{n:,}".replace(",", sep)


def _answer(rng: random.Random, value: str) -> str:
    return rng.choice([f"#### {value}", f"The answer is {value}.", f"#### {value}", f"Answer: {value}"])


def shopping(rng: random.Random) -> tuple[str, list[str]]:
    name, n, price, paid = rng.choice(NAMES), rng.randint(2, 9), rng.randint(3, 60), 0
    total = n * price
    paid = (total // 50 + 1) * 50
    star = rng.choice(["*", "x", "×", " * "])
    lines = [
        rng.choice(
            [
                f"{name} spends {n}{star}${price} = ${total} on the shirts.",
                f"The shirts cost {n} {star.strip()} ${price} = ${total}.",
                f"{n} shirts at ${price} each cost {n}*{price} = ${total}.",
            ]
        ),
        rng.choice(
            [
                f"Her change is ${paid} - ${total} = ${paid - total}.",
                f"So she gets {paid}-{total} = {paid - total} dollars back.",
            ]
        ),
        _answer(rng, str(paid - total)),
    ]
    return (
        f"{name} buys {n} shirts at ${price} each and pays with ${paid}. How much change does she get?",
        lines,
    )


def half_hours(rng: random.Random) -> tuple[str, list[str]]:
    name, hours = rng.choice(NAMES), rng.randint(4, 40) * 2
    frac = rng.choice([(".5", Fraction(1, 2)), (".25", Fraction(1, 4)), (".75", Fraction(3, 4))])
    value = hours * frac[1]
    rate = rng.randint(8, 25)
    lines = [
        rng.choice(
            [
                f"{name} spends {hours}*{frac[0]} = {_money(value)} hours on homework.",
                f"That is {hours} x {frac[0]} = {_money(value)} hours.",
            ]
        ),
        f"At ${rate} an hour that is {_money(value)} * {rate} = ${_money(value * rate)}.",
        _answer(rng, _money(value * rate)),
    ]
    prompt = f"{name} works {hours} hours and spends {frac[1]} of that time tutoring at ${rate} an hour. What does tutoring pay?"
    return prompt, lines


def discount(rng: random.Random) -> tuple[str, list[str]]:
    price, pct = rng.randint(2, 30) * 20, rng.choice([10, 15, 20, 25, 30, 40, 50])
    off = Fraction(price * pct, 100)
    lines = [
        rng.choice(
            [
                f"The discount is {pct}% * {price} = ${_money(off)}.",
                f"The discount is {price} * {pct}% = ${_money(off)}.",
                f"{pct}% of ${price} is ${_money(off)}.",
                f"The discount is {pct}/100 * {price} = {_money(off)} dollars.",
                f"The discount is .{pct:02d} * {price} = {_money(off)} dollars.",
            ]
        ),
        rng.choice(
            [
                f"The sale price is {price} - {_money(off)} = ${_money(price - off)}.",
                f"She pays ${price} - ${_money(off)} = ${_money(price - off)}.",
            ]
        ),
        _answer(rng, _money(price - off)),
    ]
    return f"A coat costs ${price} and is {pct}% off. What is the sale price?", lines


def population(rng: random.Random) -> tuple[str, list[str]]:
    start, left, came = (
        rng.randint(5, 90) * 1000 + rng.randint(0, 9) * 100,
        rng.randint(11, 49) * 100,
        rng.randint(2, 30) * 50,
    )
    sep = rng.choice([",", " ", "\u00a0", "\u202f", ","])
    t = lambda n: _thousands(n, sep)  # noqa: E731
    minus = rng.choice(["-", "−", "–", "-"])
    lines = [
        f"After the move there were {t(start)} {minus} {t(left)} = {t(start - left)} people.",
        rng.choice(
            [
                f"Then {t(start - left)} + {t(came)} = {t(start - left + came)} people live in the town.",
                f"With the newcomers, {t(start - left)} + {t(came)} = {t(start - left + came)}.",
            ]
        ),
        _answer(rng, str(start - left + came)),
    ]
    return (
        f"A town had {t(start)} people; {t(left)} moved away and {t(came)} moved in. How many live there now?",
        lines,
    )


def profit(rng: random.Random) -> tuple[str, list[str]]:
    revenue, cost = rng.randint(50, 400) * 1000, rng.randint(10, 45) * 1000
    word = rng.choice(["a profit of", "a total of", "earnings of", "a gain of"])
    lines = [
        f"The company made {word} {revenue}-{cost} = {revenue - cost} dollars.",
        rng.choice(
            [
                f"Split among 4 partners, each gets {revenue - cost}/4 = {_money(Fraction(revenue - cost, 4))} dollars.",
                f"Each of the 4 partners gets {revenue - cost} / 4 = ${_money(Fraction(revenue - cost, 4))}.",
            ]
        ),
        _answer(rng, _money(Fraction(revenue - cost, 4))),
    ]
    return (
        f"A company earned ${revenue} and spent ${cost}. The profit is split among 4 partners. What does each get?",
        lines,
    )


def recipe(rng: random.Random) -> tuple[str, list[str]]:
    whole, num, den = rng.randint(1, 4), 1, rng.choice([2, 4])
    batches = rng.choice([2, 4, 6, 8])
    amount = (whole + Fraction(num, den)) * batches
    lines = [
        rng.choice(
            [
                f"For {batches} batches she needs {whole} {num}/{den} * {batches} = {_money(amount)} cups of flour.",
                f"{batches} batches use {batches} * {whole} {num}/{den} = {_money(amount)} cups.",
            ]
        ),
        _answer(rng, _money(amount)),
    ]
    return (
        f"A recipe uses {whole} {num}/{den} cups of flour per batch. How much for {batches} batches?",
        lines,
    )


def units(rng: random.Random) -> tuple[str, list[str]]:
    per, n = rng.randint(2, 60), rng.randint(2, 9)
    unit = rng.choice(["g", "kg", "L", "ml", "m", "km", "cm"])
    total = per * n
    lines = [
        rng.choice(
            [
                f"The whole bag holds {total}{unit}, so each portion is {total}{unit}/{n} = {per}{unit}.",
                f"Each portion is {total}{unit} / {n} = {per}{unit}.",
                f"{n} portions of {per}{unit} make {n}*{per} = {total}{unit}.",
            ]
        ),
        _answer(rng, str(per)),
    ]
    return f"{total} {unit} of rice is split into {n} equal portions. How much is one portion?", lines


def rates(rng: random.Random) -> tuple[str, list[str]]:
    speed, hours = (
        rng.randint(30, 90),
        rng.choice([Fraction(3, 2), Fraction(5, 2), Fraction(2), Fraction(7, 2)]),
    )
    dist = speed * hours
    shown = _money(hours)
    lines = [
        rng.choice(
            [
                f"In {shown} hours the car goes {speed} * {shown} = {_money(dist)} miles.",
                f"Distance = {speed} × {shown} = {_money(dist)} miles.",
            ]
        ),
        rng.choice(
            [
                f"The round trip is 2 * {_money(dist)} = {_money(2 * dist)} miles.",
                f"Going back too, that is {_money(dist)} + {_money(dist)} = {_money(2 * dist)} miles.",
            ]
        ),
        _answer(rng, _money(2 * dist)),
    ]
    return (
        f"A car drives at {speed} mph for {shown} hours and then drives back. How far does it go in all?",
        lines,
    )


def temperature(rng: random.Random) -> tuple[str, list[str]]:
    start, drop = rng.randint(1, 12), rng.randint(13, 25)
    minus = rng.choice(["−", "-", "–"])
    lines = [
        rng.choice(
            [
                f"It dropped by {drop} degrees, so {start} {minus} {drop} = {minus}{drop - start} degrees.",
                f"The temperature is now {start} {minus} {drop} = {minus}{drop - start}°.",
            ]
        ),
        _answer(rng, f"-{drop - start}"),
    ]
    return f"It was {start} degrees and the temperature fell by {drop} degrees. What is it now?", lines


def groups(rng: random.Random) -> tuple[str, list[str]]:
    name, (item, box) = rng.choice(NAMES), rng.choice(ITEMS)
    n, per, away = rng.randint(3, 12), rng.randint(6, 24), rng.randint(2, 20)
    total = n * per
    lines = [
        rng.choice(
            [
                f"{name} has {n} * {per} = {total} {item}.",
                f"There are {n} {box} with {per} each, so {n}*{per} = {total} {item}.",
                f"{n} {box} × {per} {item} = {total} {item}.",
            ]
        ),
        rng.choice(
            [
                f"After giving away {away}, {total} - {away} = {total - away} are left.",
                f"{name} keeps {total}-{away} = {total - away} {item}.",
            ]
        ),
        rng.choice(
            [
                f"Half of them is {total - away}/2 = {_money(Fraction(total - away, 2))}.",
                f"{name} is happy with the {item}.",
            ]
        ),
        _answer(rng, str(total - away)),
    ]
    return f"{name} has {n} {box} of {per} {item} and gives away {away}. How many are left?", lines


def wages(rng: random.Random) -> tuple[str, list[str]]:
    rate, hours, over = rng.randint(12, 30), rng.choice([35, 38, 40]), rng.randint(2, 9)
    base = rate * hours
    orate = Fraction(rate * 3, 2)
    lines = [
        f"Regular pay is {hours} * ${rate} = ${base}.",
        rng.choice(
            [
                f"Overtime pays {rate} * 1.5 = ${_money(orate)} an hour.",
                f"Time and a half is {rate} x 1.5 = {_money(orate)} dollars per hour.",
            ]
        ),
        f"Overtime pay is {over} * {_money(orate)} = ${_money(over * orate)}.",
        rng.choice(
            [
                f"In total {base} + {_money(over * orate)} = ${_money(base + over * orate)}.",
                f"So the week pays ${base} + ${_money(over * orate)} = ${_money(base + over * orate)}.",
            ]
        ),
        _answer(rng, _money(base + over * orate)),
    ]
    return (
        f"A worker earns ${rate} an hour, {hours} hours a week, plus {over} hours of overtime at time and a half. Weekly pay?",
        lines,
    )


def percent_of_total(rng: random.Random) -> tuple[str, list[str]]:
    total, part = rng.randint(2, 20) * 25, 0
    pct = rng.choice([4, 8, 12, 16, 20, 24, 36, 40, 44, 60, 64, 80])
    part = total * pct // 100
    lines = [
        rng.choice(
            [
                f"The share is {part}/{total} * 100 = {pct}%.",
                f"As a percent, {part}/{total} × 100 = {pct}%.",
                f"{part} ÷ {total} = {_money(Fraction(pct, 100))}, which is {pct}%.",
            ]
        ),
        _answer(rng, str(pct)),
    ]
    return f"{part} of {total} students walk to school. What percent walk?", lines


def ages(rng: random.Random) -> tuple[str, list[str]]:
    name, son, k, later = rng.choice(NAMES), rng.randint(4, 15), rng.randint(2, 4), rng.randint(2, 10)
    lines = [
        rng.choice(
            [
                f"{name}'s father is {k} * {son} = {k * son} years old.",
                f"The father is {k}*{son} = {k * son}.",
            ]
        ),
        f"In {later} years he will be {k * son} + {later} = {k * son + later}.",
        rng.choice([f"His son will be {son}+{later} = {son + later} then.", "That is the age asked for."]),
        _answer(rng, str(k * son + later)),
    ]
    return (
        f"{name}'s father is {k} times as old as {name}, who is {son}. How old will the father be in {later} years?",
        lines,
    )


GSM_TEMPLATES: list[Template] = [
    shopping,
    half_hours,
    discount,
    population,
    profit,
    recipe,
    units,
    rates,
    temperature,
    groups,
    wages,
    percent_of_total,
    ages,
]
