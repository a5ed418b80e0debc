"""The signal's truth on the model's own text (issue 57 item 2): ``sympy.steps``' -1 and +1 against a reference.

    python scripts/multistep_truth.py corpus      # the model's lines of each level's training draws, labelled
    python scripts/multistep_truth.py hand        # a sample of the lines the reference cannot label, to label by hand
    python scripts/multistep_truth.py precision [--params '{"step_split": "lines"}']   # last: the checker's verdicts

The reference (:func:`label_line`) is written here, independently of ``botgrpo_sympy``: a line of the form
``expr = expr (= expr ...)``, or ``words = expr = expr ...`` (after stripping a list marker, ``$``, thousands commas, a final period and unit words
after the last number) is parsed by :mod:`ast` on a whitelisted grammar (numbers, ``+ - * /``, unary minus,
brackets; ``x``, ``×``, ``÷`` and ``−`` read as operators) and evaluated with :class:`fractions.Fraction` (never
``eval``): ``+1`` when every side has one value (a decimal may be that value rounded or cut to its own digits),
``-1`` when one differs. Within prose the same holds for each arithmetic run with an ``=`` ("Elena has 17 + 7 =
24 marbles."): a line is -1 when one run is false, +1 when all are true, else unlabelled (``None``, with the
reason: no run, or a run it cannot read). A sample of the unlabelled lines that may hold a claim (a digit and ``=``
or an operator) is labelled by hand in benchmarks/results/multistep_lines_hand.json, and the count of the rest is
reported. Answer lines ("The answer is N") are reported apart, against the problem's own answer (is the stated
answer right), since ``sympy.steps`` judges them against the text above them.

Corpus: every non-empty line of the draws in benchmarks/results/multistep_samples/ named by ``--draws`` (one file
per level, TRAINING problems only) -> benchmarks/results/multistep_lines.jsonl. Precision: each draw through
``sympy.steps`` (the plugin's defaults plus ``--params``; ``Sample.truncated`` from the draw; the row's prompt), a
line's verdict -1 when a span starting in it is -1, else +1 when one is +1, else 0; against the labels, per level:
the precision of -1 (false lines among those scored -1) and of +1 (true lines among those scored +1), with counts
-> benchmarks/results/multistep_steps_precision.json, with the plugin's last commit.
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import random
import re
import subprocess
from fractions import Fraction
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks/results"
LINES = RESULTS / "multistep_lines.jsonl"
HAND = RESULTS / "multistep_lines_hand.json"
PRECISION = RESULTS / "multistep_steps_precision.json"
DRAWS = (
    "multi23=m23-small-train32x8,multi45=m45-addsub-matched-train16x8,multi45=m45-addsub-matched-train32x8"
)

_MARKER = re.compile(r"^\s*(?:[-*•]\s+|\(?\d+[.)]\s+(?=\S*\d))")  # "- ", "* ", "1. " (a number must follow)
_UNITS = re.compile(r"^(?P<claim>.*=\s*[-−]?\$?\d[\d,]*(?:\.\d+)?)\s*(?:[A-Za-z][A-Za-z ]*)?$")
_OPERATORS = {"×": "*", "÷": "/", "−": "-", "·": "*"}
_TIMES_X = re.compile(r"(?<=[\d)])\s*[xX]\s*(?=[\d(])")
_DECIMAL = re.compile(r"^\s*-?\d+\.(\d+)\s*$")
_RUN = re.compile(r"[\d\s.()+\-*/=]+")
_ALLOWED_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}


class Unreadable(ValueError):
    """A side that is not whitelisted arithmetic."""


def _value(node: ast.AST) -> Fraction:
    if isinstance(node, ast.Expression):
        return _value(node.body)
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return Fraction(str(node.value))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        inner = _value(node.operand)
        return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.BinOp) and type(node.op) in _ALLOWED_OPS:
        left, right = _value(node.left), _value(node.right)
        if isinstance(node.op, ast.Add):
            return left + right
        if isinstance(node.op, ast.Sub):
            return left - right
        if isinstance(node.op, ast.Mult):
            return left * right
        if right == 0:
            raise Unreadable("division by zero")
        return left / right
    raise Unreadable(type(node).__name__)


def side_value(text: str) -> Fraction:
    """The exact value of one side of a claim: whitelisted arithmetic only (:class:`Unreadable` otherwise)."""
    text = text.strip()
    if not text or len(text) > 200 or not re.fullmatch(r"[\d\s.+\-*/()]+", text):
        raise Unreadable(f"not arithmetic: {text[:40]!r}")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as error:
        raise Unreadable("syntax") from error
    return _value(tree)


def normalise(line: str) -> tuple[str, list[str]]:
    """A line with list marker, ``$``, thousands commas, final period and trailing unit words removed; and what was
    removed (reasons)."""
    notes = []
    text = line.strip()
    stripped = _MARKER.sub("", text)
    if stripped != text:
        notes.append("list marker")
    text = stripped.replace("$", "")
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)
    for old, new in _OPERATORS.items():
        text = text.replace(old, new)
    text = _TIMES_X.sub(" * ", text)
    text = text.rstrip(" .;:,!")
    match = _UNITS.match(text)
    if match and match.group("claim") != text:
        notes.append("unit words")
        text = match.group("claim")
    return text, notes


def _balanced(side: str) -> str:
    """A side without the bracket its run cut off: "(2 * 8 " -> "2 * 8", " 16)" -> "16"."""
    side = side.strip()
    while side.startswith("(") and side.count("(") > side.count(")"):
        side = side[1:].strip()
    while side.endswith(")") and side.count(")") > side.count("("):
        side = side[:-1].strip()
    return side


def judge(sides: list[str]) -> int:
    """+1 when every side has the last side's value (a decimal last side may be it rounded or cut to its own
    digits), else -1; :class:`Unreadable` when a side is not whitelisted arithmetic."""
    values = [side_value(_balanced(x)) for x in sides]
    claimed = values[-1]
    decimal = _DECIMAL.match(sides[-1])
    for value in values[:-1]:
        if value == claimed:
            continue
        if decimal:  # the value rounded or cut to the claimed decimal's own digits
            scale = 10 ** len(decimal.group(1))
            if abs(claimed) * scale in (
                math.floor(abs(value) * scale),
                math.floor(abs(value) * scale + Fraction(1, 2)),
            ) and (value < 0) == (claimed < 0):
                continue
        return -1
    return 1


def claim_runs(text: str) -> list[str]:
    """The arithmetic runs holding an '=' in a normalised line: maximal stretches of digits, spaces, ``.``,
    brackets, ``+ - * /`` and ``=`` within one sentence ("Elena has 17 + 7 = 24 marbles." -> "17 + 7 = 24")."""
    runs = []
    for sentence in re.split(r"\.(?=\s|$)", text):
        for match in _RUN.finditer(sentence):
            # "Total = 3 * 4 = 12": the name's '=' is no claim
            run = match.group().strip(" .").removeprefix("=").strip()
            if "=" in run and re.search(r"\d", run):
                if re.match(r"[+*/]", run) or (run.startswith("-") and sentence[: match.start()].strip()):
                    run = (
                        "?" + run
                    )  # a run cut by words ("23 stickers + 1 = 24"): its first operand is not read
                runs.append(run)
    return runs


def label_line(line: str) -> tuple[int | None, str]:
    """The reference's verdict on one line: -1 when an arithmetic run in it is false, +1 when it has runs and
    all are true, None when it has none or one it cannot read (why)."""
    text, notes = normalise(line)
    runs = claim_runs(text)
    if not runs:
        return None, "no claim"
    verdicts = []
    for run in runs:
        try:
            verdicts.append(judge(run.split("=")))
        except Unreadable as error:
            verdicts.append(None)
            notes.append(f"unreadable run {run!r} ({error})")
    if -1 in verdicts:
        return -1, ", ".join(["false", *notes])
    if None in verdicts:
        return None, ", ".join(notes)
    if text.strip() != runs[0] or len(runs) > 1:
        notes.append("in prose" if len(runs) == 1 else f"{len(runs)} runs")
    return 1, ", ".join(["true", *notes])


_ANSWER_LINE = re.compile(r"(?i)the (?:final )?answer is:?\s*\$?(-?\d[\d,]*(?:\.\d+)?)")


def answer_right(line: str, answer: str) -> int | None:
    """For an answer line ("The answer is N"): +1 when N is the problem's answer, -1 when not; None otherwise."""
    match = _ANSWER_LINE.search(line)
    if not match:
        return None
    return 1 if Fraction(match.group(1).replace(",", "")) == Fraction(answer) else -1


def may_claim(line: str) -> bool:
    """Whether an unlabelled line may hold an arithmetic claim (a digit and '=' or an operator between digits)."""
    return bool(re.search(r"\d", line)) and bool(re.search(r"=|\d\s*[-+*/x×÷]\s*\d| is \d", line))


def corpus(draws: str) -> list[dict[str, Any]]:
    """Every non-empty line of each level's training draws, with the reference's label."""
    out = []
    for level, name in (part.split("=") for part in draws.split(",")):
        path = RESULTS / "multistep_samples" / f"{name}.jsonl"
        for draw in map(json.loads, path.read_text().splitlines()):
            lines = draw["completion"].split("\n")
            last = max((k for k, text in enumerate(lines) if text.strip()), default=-1)
            for k, text in enumerate(lines):
                if not text.strip():
                    continue
                label, why = label_line(text)
                out.append(
                    {
                        "level": level,
                        "draws": name,
                        "id": draw["id"],
                        "sample": draw["sample"],
                        "line": k,
                        "text": text,
                        "cut_last_line": not draw["finished"] and k == last,
                        "reference": label,
                        "why": why,
                        "answer_line": answer_right(text, draw["answer"]),
                    }
                )
    return out


def hand_sample(lines: list[dict[str, Any]], per_level: int, seed: int) -> list[dict[str, Any]]:
    """A random sample of the lines the reference cannot label that may hold a claim, per level."""
    rng = random.Random(seed)
    picked = []
    for level in sorted({r["level"] for r in lines}):
        pool = [
            r
            for r in lines
            if r["level"] == level
            and r["reference"] is None
            and r["answer_line"] is None
            and may_claim(r["text"])
        ]
        picked += rng.sample(pool, min(per_level, len(pool)))
    return [
        {k: r[k] for k in ("level", "draws", "id", "sample", "line", "text")} | {"hand": None, "note": ""}
        for r in picked
    ]


def line_verdicts(completion: str, spans: list[Any]) -> dict[int, int]:
    """Line index -> -1 if a span starting in it is -1, else +1 if one is +1, else 0."""
    per_line: dict[int, set[float]] = {}
    for span in spans:
        per_line.setdefault(completion.count("\n", 0, span.start), set()).add(span.value)
    return {
        k: -1 if any(v < 0 for v in vs) else 1 if any(v > 0 for v in vs) else 0 for k, vs in per_line.items()
    }


def precision_table(rows: list[dict[str, Any]], key: str) -> dict[str, Any]:
    """Precision of -1 and +1 of ``checker`` against ``key`` (+1/-1/None) over ``rows``, with counts."""
    table: dict[str, Any] = {}
    for verdict, name in ((-1, "minus"), (1, "plus")):
        scored = [r for r in rows if r["checker"] == verdict]
        known = [r for r in scored if r[key] in (-1, 1)]
        agree = sum(r[key] == verdict for r in known)
        table[name] = {
            "scored": len(scored),
            "labelled": len(known),
            "agree": agree,
            "precision": agree / len(known) if known else None,
            "unlabelled": sum(r[key] is None for r in scored),
            "no_claim": sum(r[key] == 0 for r in scored),  # hand-labelled: no arithmetic claim in the line
        }
    return table


def _script(name: str) -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, ROOT / f"scripts/{name}.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def precision(params: dict[str, Any], draws: str) -> dict[str, Any]:
    from botgrpo_core.rewards.samples import prompt_text
    from botgrpo_core.signals import Sample, SampleError
    from botgrpo_core.signals.manager import get_plugin_manager

    start = _script("multistep_start")
    lines = [json.loads(x) for x in LINES.read_text().splitlines()]
    hand = {(h["draws"], h["id"], h["sample"], h["line"]): h["hand"] for h in json.loads(HAND.read_text())}
    signal = get_plugin_manager().get_signal("sympy.steps")
    steps = signal.spec.make_scorer(signal.spec.params_model(**{"workers": 1, **params}))
    verdicts: dict[tuple[str, str, int], dict[int, int]] = {}
    try:
        for _level, name in (part.split("=") for part in draws.split(",")):
            # the rows and prompts the draws were made from (scripts/multistep_start.py's variant and count), the
            # prompt read as the trainer reads it
            variant, shape = name.rsplit("-train", 1)
            made, _ = start.training_rows(variant, int(shape.split("x")[0]))
            rows = {r["id"]: r for r in made}
            drawn = [
                json.loads(x)
                for x in (RESULTS / "multistep_samples" / f"{name}.jsonl").read_text().splitlines()
            ]
            mismatched = [d["id"] for d in drawn if rows[d["id"]]["answer"] != d["answer"]]
            if mismatched:
                raise SystemExit(f"{name}: draws of other problems than {variant}'s: {mismatched[:5]}")
            samples = [
                Sample(
                    prompt=prompt_text(rows[d["id"]]["prompt"]),
                    completion=d["completion"],
                    row=rows[d["id"]],
                    truncated=not d["finished"],
                )
                for d in drawn
            ]
            for d, spans in zip(drawn, steps.score(samples), strict=True):
                found = {} if isinstance(spans, SampleError) else line_verdicts(d["completion"], list(spans))
                verdicts[(name, d["id"], d["sample"])] = found
    finally:
        getattr(steps, "close", lambda: None)()
    seen: dict[tuple[str, str, int], set[str]] = {}
    for (
        r
    ) in lines:  # a line said again word for word in its completion (sympy.steps' repeated_steps reads these)
        key, said = (
            (r["draws"], r["id"], r["sample"]),
            re.sub(r"\s+", " ", r["text"].strip().lower()).rstrip("."),
        )
        before = seen.setdefault(key, set())
        r["repeat"] = len(said) >= 6 and said in before
        before.add(said)
    for r in lines:
        r["checker"] = verdicts[(r["draws"], r["id"], r["sample"])].get(r["line"], 0)
        r["hand"] = hand.get((r["draws"], r["id"], r["sample"], r["line"]))
        r["truth"] = r["reference"] if r["reference"] is not None else r["hand"]
    commit = subprocess.run(
        ["git", "log", "-1", "--format=%h %cI %s", "--", "plugins/botgrpo-sympy"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    result: dict[str, Any] = {"sympy_steps_params": params, "plugin_commit": commit, "levels": {}}
    for level in sorted({r["level"] for r in lines}):
        everything = [r for r in lines if r["level"] == level]
        mine = [r for r in everything if r["answer_line"] is None]  # step lines
        answers = [r for r in everything if r["answer_line"] is not None]
        result["levels"][level] = {
            "lines": len(everything),
            "answer_lines": len(answers),
            "step_lines": len(mine),
            "reference_labelled": sum(r["reference"] is not None for r in mine),
            "reference_unlabelled": sum(r["reference"] is None for r in mine),
            "unlabelled_that_may_claim": sum(r["reference"] is None and may_claim(r["text"]) for r in mine),
            "hand_labelled": sum(r["hand"] is not None for r in mine),
            "checker_scored_step_lines": {str(v): sum(r["checker"] == v for r in mine) for v in (-1, 0, 1)},
            "checker_scored_answer_lines": {
                str(v): sum(r["checker"] == v for r in answers) for v in (-1, 0, 1)
            },
            "step_lines_by_reference": precision_table(mine, "reference"),
            "step_lines_by_reference_and_hand": precision_table(mine, "truth"),
            "repeated_step_lines": sum(r["repeat"] for r in mine),
            "first_saying_by_reference_and_hand": precision_table(
                [r for r in mine if not r["repeat"]], "truth"
            ),
            "repeats_by_reference_and_hand": precision_table([r for r in mine if r["repeat"]], "truth"),
            "hand_sample": precision_table([r for r in mine if r["hand"] is not None], "hand"),
            "answer_lines_by_problem_answer": precision_table(answers, "answer_line"),
            "disagreements": [
                {k: r[k] for k in ("id", "sample", "line", "text", "checker", "truth", "repeat", "why")}
                for r in mine
                if r["checker"] in (-1, 1) and r["truth"] in (-1, 1) and r["checker"] != r["truth"]
            ][:60],
        }
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("corpus", "hand", "precision"))
    parser.add_argument("--draws", default=DRAWS, help="level=draws-file-stem, comma-separated")
    parser.add_argument("--per-level", type=int, default=60, help="hand sample size per level")
    parser.add_argument("--params", default="{}", help="sympy.steps params (JSON) over its defaults")
    parser.add_argument("--out", type=Path, default=PRECISION)
    args = parser.parse_args()
    if args.command == "corpus":
        rows = corpus(args.draws)
        LINES.write_text("".join(json.dumps(r) + "\n" for r in rows))
        for level in sorted({r["level"] for r in rows}):
            mine = [r for r in rows if r["level"] == level]
            labelled = [r for r in mine if r["reference"] is not None]
            print(
                f"{level}: {len(mine)} lines, {len(labelled)} labelled ({sum(r['reference'] == -1 for r in labelled)} false)"
            )
    elif args.command == "hand":
        done = (
            json.loads(HAND.read_text()) if HAND.exists() else []
        )  # levels sampled before keep their labels
        rows = [json.loads(x) for x in LINES.read_text().splitlines()]
        rows = [r for r in rows if r["level"] not in {h["level"] for h in done}]
        HAND.write_text(json.dumps(done + hand_sample(rows, args.per_level, 57), indent=1) + "\n")
        print(f"wrote {HAND}: set each 'hand' to 1, -1 or 0 (no arithmetic claim)")
    else:
        result = precision(json.loads(args.params), args.draws)
        args.out.write_text(json.dumps(result, indent=2) + "\n")
        for level, table in result["levels"].items():
            print(level, json.dumps(table["step_lines_by_reference_and_hand"]))
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
