"""Build ``tests/data/prose_corpus.jsonl``: labelled prose solutions and their deliberately wrong twins.

Sources (see ``tests/data/SOURCES.md``): the hand-written blocks of ``gsm_style_hand.txt`` and
``competition_style_hand.txt``, plus templated solutions from ``prose_templates.py``. Every line gets a
label: ``correct`` (a line with a claim or a final answer, in a clean solution), ``none`` (prose
without a claim) or ``wrong``. Every numeric calculator claim of a clean line is re-checked by the
independent reference in ``prose_reference.py`` (a wrong hand label stops the build).

Twins: for each clean solution with a numeric calculator claim, one ``step`` twin has one such claim's
result changed (only that line is wrong, the rest is unchanged), and every third solution gets an
``answer`` twin whose final answer is a number that appears nowhere in the solution.

Run: ``python plugins/botgrpo-sympy/scripts/make_prose_corpus.py`` (deterministic; rewrites the file).
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

from prose_reference import calc_claims
from prose_templates import GSM_TEMPLATES
from prose_templates_competition import COMPETITION_TEMPLATES

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
OUT = DATA / "prose_corpus.jsonl"
GSM_GENERATED, COMPETITION_GENERATED = 160, 80
ANSWER_LINE = re.compile(r"^\s*(?:####|the answer is|answer:|final answer|\$?\\boxed)", re.IGNORECASE)
_RELATION = re.compile(r"=|<|>|\\le|\\ge|\\neq|≤|≥")


def _label(text: str) -> str:
    return "correct" if _RELATION.search(text) or ANSWER_LINE.match(text) or "\\boxed" in text else "none"


def read_hand(path: Path, style: str, split: str = "dev", **extra: object) -> list[dict]:
    """Blocks ``# id`` / ``Q: ...`` / lines (with optional ``[none]`` / ``[wrong]`` / ``[correct]`` overrides).

    A line may end with ``[twin: TEXT]``: a corrupted copy of the line written by hand. Each such marker
    gives one ``hand_twin`` record (that line replaced by TEXT and labelled ``wrong``), right after its clean
    record. ``[stated false]`` marks a correct line that states a false claim on purpose and says so ("gives
    $4 = 6$, a contradiction"): the reference check skips it. The style of a block is ``style``, or ``gsm8k`` for a block whose id has ``-g`` (``c27-g033``).
    """
    text = path.read_text(encoding="utf-8").replace("{nbsp}", "\u00a0").replace("{nnbsp}", "\u202f")
    records = []
    for block in re.split(r"\n(?=# [a-z0-9]+-[hg]\d+\n)", text):
        head, *body = block.strip().splitlines()
        if not re.fullmatch(r"# [a-z0-9]+-[hg]\d+", head):
            continue  # the file's preamble
        prompt = body[0].removeprefix("Q: ")
        lines, twins = [], []
        for raw in body[1:]:
            twin = re.search(r"\s*\[twin: (.+)\]$", raw)
            if twin is not None:
                twins.append((len(lines), twin.group(1)))
                raw = raw[: twin.start()]
            stated_false = raw.endswith(" [stated false]")  # "gives 4 = 6, a contradiction": false on purpose
            raw = raw.removesuffix(" [stated false]")
            m = re.search(r"\s*\[(none|wrong|correct)\]$", raw)
            line = raw[: m.start()] if m else raw
            lines.append({"text": line, "label": m.group(1) if m else _label(line)})
            if stated_false:
                lines[-1]["stated_false"] = True
        block_style = "gsm8k" if "-g" in head else style
        clean = _record(head[2:], block_style, "hand", prompt, lines, split=split, **extra)
        records.append(clean)
        for k, (index, corrupted) in enumerate(twins):
            twin_lines = [dict(line) for line in lines]
            twin_lines[index] = {"text": corrupted, "label": "wrong"}
            records.append(
                {
                    **clean,
                    "id": f"{clean['id']}-twin{k}",
                    "kind": "hand_twin",
                    "twin_of": clean["id"],
                    "lines": twin_lines,
                }
            )
    return records


def _record(
    rid: str, style: str, source: str, prompt: str, lines: list[dict], split: str = "dev", **extra: object
) -> dict:
    return {
        "id": rid,
        "style": style,
        "source": source,
        "kind": "clean",
        "twin_of": None,
        "prompt": prompt,
        "lines": lines,
        "split": split,
        **extra,
    }


def generated(style: str, templates: list, count: int, rng: random.Random) -> list[dict]:
    out = []
    for k in range(count):
        template = templates[k % len(templates)]
        prompt, texts = template(rng)
        lines = [{"text": t, "label": _label(t)} for t in texts]
        out.append(_record(f"{style[:4]}-g{k:03d}", style, f"template:{template.__name__}", prompt, lines))
    return out


def verify(record: dict) -> None:
    """Every numeric claim of a clean solution holds by the independent reference."""
    for line in record["lines"]:
        if line.get("stated_false"):
            continue  # a correct line that states a false claim on purpose (and says so)
        for claim in calc_claims(line["text"]):
            if line["label"] == "correct" and not claim.true:
                raise SystemExit(
                    f"{record['id']}: claim {claim.left} = {claim.right} is false: {line['text']!r}"
                )


def _wrong_value(text: str, rng: random.Random) -> str:
    """A different number written the same way (same decimals, separators, sign, ``$`` and ``%``)."""
    m = re.search(r"(\d[\d,.\u00a0\u202f ]*\d|\d)", text)
    digits = m.group(1)
    sep = next((c for c in ",\u00a0\u202f " if c in digits), None)
    plain = digits.replace(",", "").replace("\u00a0", "").replace("\u202f", "").replace(" ", "")
    decimals = len(plain.split(".")[1]) if "." in plain else 0
    value = float(plain)
    delta = rng.choice([1, 2, 3, 5, 10, -1, -2]) * (10**-decimals if decimals and rng.random() < 0.5 else 1)
    new = value + delta if value + delta > 0 else value + abs(delta)
    shown = f"{new:.{decimals}f}"
    if sep is not None and "." not in shown:
        shown = f"{int(new):,}".replace(",", sep)
    return text[: m.start(1)] + shown + text[m.end(1) :]


def step_twin(record: dict, rng: random.Random) -> dict | None:
    candidates = [
        (i, c)
        for i, line in enumerate(record["lines"])
        if line["label"] == "correct" and not ANSWER_LINE.match(line["text"])
        for c in calc_claims(line["text"])
        if c.true
    ]
    if not candidates:
        return None
    index, claim = rng.choice(candidates)
    text = record["lines"][index]["text"]
    a, b = claim.right_span
    new_text = text[:a] + _wrong_value(text[a:b], rng) + text[b:]
    after = [c for c in calc_claims(new_text) if c.right_span[0] == a]
    if not after or after[0].true:
        return None
    lines = [dict(line) for line in record["lines"]]
    lines[index] = {"text": new_text, "label": "wrong"}
    return {
        **record,
        "id": record["id"] + "-step",
        "kind": "step_twin",
        "twin_of": record["id"],
        "lines": lines,
    }


def answer_twin(record: dict, rng: random.Random) -> dict | None:
    index = next(
        (
            i
            for i in range(len(record["lines"]) - 1, -1, -1)
            if ANSWER_LINE.match(record["lines"][i]["text"]) or "\\boxed" in record["lines"][i]["text"]
        ),
        None,
    )
    if index is None:
        return None
    text = record["lines"][index]["text"]
    m = re.search(r"-?\d+(?:\.\d+)?", text)
    if m is None:
        return None
    above = " ".join([record["prompt"]] + [line["text"] for line in record["lines"][:index]])
    present = {n.replace(",", "") for n in re.findall(r"\d[\d,]*(?:\.\d+)?", above)}
    value = int(float(m.group()))
    while True:
        value += rng.choice([1, 2, 3, 7, 11])
        if str(abs(value)) not in present:
            break
    lines = [dict(line) for line in record["lines"]]
    lines[index] = {"text": text[: m.start()] + str(value) + text[m.end() :], "label": "wrong"}
    return {
        **record,
        "id": record["id"] + "-answer",
        "kind": "answer_twin",
        "twin_of": record["id"],
        "lines": lines,
    }


def main() -> None:
    rng = random.Random(20261201)
    clean = read_hand(DATA / "gsm_style_hand.txt", "gsm8k")
    clean += read_hand(DATA / "competition_style_hand.txt", "competition")
    clean += generated("gsm8k", GSM_TEMPLATES, GSM_GENERATED, rng)
    clean += generated("competition", COMPETITION_TEMPLATES, COMPETITION_GENERATED, rng)
    clean += read_hand(DATA / "gsm_style_heldout.txt", "gsm8k", "heldout")
    clean += read_hand(DATA / "competition_style_heldout.txt", "competition", "heldout")
    # Issue 27 (appended last, so the twins of the records above stay as they were): clean solutions and
    # their hand-written twins; the generated twins below are made for the clean ones only.
    clean += read_hand(DATA / "competition_issue27.txt", "competition", set="issue27")
    # its held-out part, written after the fixes (measured once; appended last for the same reason)
    clean += read_hand(DATA / "competition_issue27_heldout.txt", "competition", "heldout", set="issue27")
    # Issue 40 (appended after issue 27's, for the same reason): its shapes and prose with nouns between numbers
    clean += read_hand(DATA / "competition_issue40.txt", "competition", set="issue40")
    # its held-out part, written after the fixes of issues 40 and 36 (measured once; appended last, as above)
    clean += read_hand(DATA / "competition_issue40_heldout.txt", "competition", "heldout", set="issue40")
    # its second held-out part, written after the fixes that followed the first's measurement (appended last)
    clean += read_hand(DATA / "competition_issue40_heldout2.txt", "competition", "heldout2", set="issue40")
    # Issue 61: the families of false flags and misses on held-out competition solutions, written here with false
    # twins (appended last, as above)
    clean += read_hand(DATA / "competition_issue61.txt", "competition", set="issue61")
    records = []
    for k, record in enumerate(clean):
        if record["kind"] == "hand_twin":
            records.append(record)
            continue
        verify(record)
        records.append(record)
        twin = step_twin(record, rng)
        if twin is not None:
            records.append(twin)
        if k % 3 == 0:
            twin = answer_twin(record, rng)
            if twin is not None:
                records.append(twin)
    with OUT.open("w", encoding="utf-8") as f:
        for record in records:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
    kinds = {}
    for r in records:
        kinds[(r["style"], r["kind"])] = kinds.get((r["style"], r["kind"]), 0) + 1
    print(f"wrote {len(records)} solutions to {OUT}: {kinds}")


if __name__ == "__main__":
    main()
