"""Where the React view level's local credit falls: span statistics of a policy's sampled pages.

For a tiny React model (a warm start, or a run's ``final_model``), sample one page per held-out view spec
(the bench's evaluation rows and sampling) and score them with a local signal (default
``bench.react_sections``). For failing and succeeding pages separately it reports the share of completion
tokens (characters: the tiny models' tokens are characters) under negative, positive and no spans, how many
negative spans a failing page carries, the verdicts behind them, and the outcome (``bench.react_spec``)::

    python scripts/react_span_stats.py runs/bench/cache/warm-react-302ec1dc8a66 --sections 6 --n 200
    python scripts/react_span_stats.py runs/bench/regimes-react/runs/react-long/bot-grpo/seed0/final_model
    python scripts/react_span_stats.py runs/bench/regimes-react2/runs/react-long/bot-grpo/seed0/final_model \
        --param blame=words --temperature 0.7

It prints one JSON object (``--out`` also writes it).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import yaml


def span_stats(
    task: Any,
    rows: list[dict[str, Any]],
    completions: list[str],
    signal: str,
    params: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The statistics of ``signal``'s spans (with ``params``, e.g. ``{"blame": "words"}``) on
    ``completions`` (module doc), split by ``task.success``."""
    from botgrpo_core.signals import Sample, SampleError
    from botgrpo_core.signals.manager import get_plugin_manager

    manager = get_plugin_manager()
    spec = manager.get_signal(signal).spec
    scorer = spec.make_scorer(spec.params_model.model_validate({**(params or {}), "workers": 0}))
    samples = [
        Sample(prompt=r["prompt"], completion=c, row=r) for r, c in zip(rows, completions, strict=True)
    ]
    results = scorer.score(samples)
    out: dict[str, Any] = {"signal": signal, "params": params or {}, "pages": len(samples)}
    groups: dict[str, list[dict[str, Any]]] = {"failing": [], "succeeding": []}
    verdicts: Counter[str] = Counter()
    errors, negative_chars, wrong_chars = 0, 0, 0
    for row, completion, result in zip(rows, completions, results, strict=True):
        if isinstance(result, SampleError):
            errors += 1
            continue
        n = max(len(completion), 1)
        neg = sum(s.end - s.start for s in result if s.value < 0)
        pos = sum(s.end - s.start for s in result if s.value > 0)
        ok = task.success(row, completion)
        groups["succeeding" if ok else "failing"].append(
            {"neg": neg / n, "pos": pos / n, "neg_spans": sum(s.value < 0 for s in result), "chars": n}
        )
        if not ok:
            verdicts.update(
                str((s.meta or {}).get("verdict", "?")).split(";")[0] for s in result if s.value < 0
            )
            for s in result:
                if s.value < 0 and (s.meta or {}).get("unit") == "jsx child":
                    negative_chars += s.end - s.start
                    wrong_chars += _differing_chars(completion[s.start : s.end].strip(), row)
    for name, pages in groups.items():
        out[name] = {
            "pages": len(pages),
            "mean_chars": _mean(p["chars"] for p in pages),
            "share_negative": _mean(p["neg"] for p in pages),
            "share_positive": _mean(p["pos"] for p in pages),
            "share_none": _mean(1 - p["neg"] - p["pos"] for p in pages),
            "negative_spans_per_page": _mean(p["neg_spans"] for p in pages),
            "with_a_negative_span": _mean(p["neg_spans"] > 0 for p in pages),
        }
    out["sample_errors"] = errors
    # of the characters under -1 on section lines, the share that differ from the closest correct line
    # (difflib): what a line-wide span blames that is actually wrong
    out["negative_section_chars"] = negative_chars
    out["share_of_those_that_differ_from_a_correct_line"] = (
        round(wrong_chars / negative_chars, 4) if negative_chars else None
    )
    out["negative_verdicts_on_failing_pages"] = dict(verdicts.most_common(12))
    if hasattr(scorer, "close"):
        scorer.close()
    return out


def _differing_chars(line: str, row: dict[str, Any]) -> int:
    """Characters of ``line`` outside the matching blocks with the most similar correct section line of
    the row's spec."""
    import difflib

    from botgrpo_bench.react_spec import section_line
    from botgrpo_bench.react_verdict import view_spec_of

    best = 0
    for section in view_spec_of(row).sections:
        matcher = difflib.SequenceMatcher(None, line, section_line(section), autojunk=False)
        best = max(best, sum(b.size for b in matcher.get_matching_blocks()))
    return len(line) - best


def _mean(values: Any) -> float | None:
    values = list(values)
    return round(statistics.fmean(values), 4) if values else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", type=Path, help="a tiny React model folder (warm start or final_model)")
    parser.add_argument("--sections", type=int, default=6, help="sections per view page (the level)")
    parser.add_argument("--error-rate", type=float, default=0.3, help="the level's task_params.error_rate")
    parser.add_argument("--n", type=int, default=200, help="held-out specs, one sampled page each")
    parser.add_argument("--signal", default="bench.react_sections", help="the local signal to score with")
    parser.add_argument("--param", action="append", default=[], metavar="KEY=VALUE", help="a signal param")
    parser.add_argument("--temperature", type=float, default=1.0, help="sampling temperature (the level's)")
    parser.add_argument("--seed", type=int, default=99, help="sampling seed")
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    args = parser.parse_args(argv)

    import torch
    from transformers import AutoModelForCausalLM

    from botgrpo_bench.react import ReactParams, ReactTask
    from botgrpo_core.engine.tiny import load_tokenizer
    from botgrpo_core.engine.warm_start import sample_completions

    torch.set_num_threads(1)
    task = ReactTask(
        ReactParams(grammar="spec", sections=(args.sections, args.sections), error_rate=args.error_rate)
    )
    rows = task.eval_rows(args.n)
    model = AutoModelForCausalLM.from_pretrained(args.model)
    tokenizer = load_tokenizer(args.model)
    tokenizer.padding_side = "left"
    completions = sample_completions(
        model,
        tokenizer,
        [r["prompt"] for r in rows],
        max_new_tokens=task.max_completion_chars + 5,
        seed=args.seed,
        temperature=args.temperature,
    )
    params = {}
    for item in args.param:
        key, sep, value = item.partition("=")
        if not sep:
            parser.error(f"--param {item!r}: expected KEY=VALUE, e.g. --param blame=words")
        params[key] = yaml.safe_load(value)
    stats = {
        "model": str(args.model),
        "sections": args.sections,
        "temperature": args.temperature,
        **span_stats(task, rows, completions, args.signal, params),
    }
    text = json.dumps(stats, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
