"""The HTML heatmap's colours (``botgrpo score --html``): the default view tells every distinct token value
apart, so a 1.8 token next to a 2.0 token (the ratio of the issue's 0.85 and 1.0) differs at a glance,
where the linear -max..+max scale painted them nearly alike.

The page's own script runs in Node (when installed) against the real page, with a minimal stand-in for the
DOM, and the test reads the colours it paints; :func:`value_levels` is checked on its own as well.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from test_cli_score import ROWS, _score_json, _write  # the sibling test module (tests/ is on sys.path)

from botgrpo_core.cli.html_view import NEGATIVE_STOPS, POSITIVE_STOPS, ZERO_RGB, value_levels


def _rgb(colour: str) -> tuple[int, ...]:
    if colour.startswith("#"):
        return tuple(int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return tuple(int(x) for x in re.findall(r"\d+", colour))


def _distance(a: tuple[int, ...], b: tuple[int, ...]) -> float:
    return math.dist(a, b)


def _luminance(rgb: tuple[int, ...]) -> float:
    return 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2]


def test_value_levels_give_every_distinct_value_its_own_colour() -> None:
    values = [2.0, 1.8, 1.8 + 1e-12, 0.0, -0.2, -1.0, None, float("nan"), 0.5]
    levels = value_levels(values)
    assert levels["values"] == [-1.0, -0.2, 0.0, 0.5, 1.8, 2.0]  # float noise is one value; None/NaN none
    colours = [_rgb(c) for c in levels["colours"]]
    assert len(set(colours)) == len(colours)
    assert colours[2] == ZERO_RGB
    assert colours[-1] == POSITIVE_STOPS[-1] and colours[0] == NEGATIVE_STOPS[-1]  # the extremes: darkest
    # larger magnitude, darker colour, on both sides of 0
    assert _luminance(colours[3]) > _luminance(colours[4]) > _luminance(colours[5])
    assert _luminance(colours[1]) > _luminance(colours[0])
    assert _distance(colours[4], colours[5]) > 60  # 1.8 and 2.0: far apart
    # blue for positive, red for negative
    assert all(c[2] > c[0] for c in colours[3:]) and all(c[0] > c[2] for c in colours[:2])


def test_value_levels_scale_to_many_values() -> None:
    values = [i / 1000 - 2.5 for i in range(5001)]
    levels = value_levels(values)
    assert len(levels["values"]) == 5001 and len(levels["colours"]) == 5001


_RUNNER = r"""
const fs = require('fs');
const html = fs.readFileSync(process.argv[2], 'utf8');
const data = html.match(/<script type="application\/json" id="botgrpo-data">([\s\S]*?)<\/script>/)[1];
const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)];
const code = scripts[scripts.length - 1][1];
const toks = [...html.matchAll(/<span class="tok[^"]*" data-s="(\d+)" data-t="(\d+)">/g)]
  .map(m => ({dataset: {s: m[1], t: m[2]}, style: {}}));
const els = {'botgrpo-data': {textContent: data}, lo: {}, hi: {}, bar: {}, tip: {style: {}}};
globalThis.document = {getElementById: id => els[id], querySelectorAll: sel => sel === '.tok' ? toks : [],
  addEventListener: () => {}};
const paintWith = new Function(code + "\nreturn (scale) => { SCALE = scale; paint(VIEW); };")();
const out = {};
for (const scale of ['rank', 'linear']) {
  paintWith(scale);
  out[scale] = Object.fromEntries(toks.map(t => [t.dataset.s + ':' + t.dataset.t, t.style.background]));
  out[scale + '_legend'] = els.hi.textContent;
}
console.log(JSON.stringify(out));
"""


@pytest.mark.skipif(
    shutil.which("node") is None, reason="Node.js is not installed (the page's script runs in it)"
)
def test_the_pages_default_view_tells_a_near_value_apart(tmp_path: Path, capsys, plugin_manager) -> None:
    run_file, data = _write(tmp_path, ROWS[:2])
    page = tmp_path / "view.html"
    result = _score_json(
        capsys, str(run_file), "--input", str(data), "--tokenizer", "tiny", "--html", str(page)
    )
    runner = tmp_path / "paint.js"
    runner.write_text(_RUNNER, encoding="utf-8")
    done = subprocess.run(["node", str(runner), str(page)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    painted = json.loads(done.stdout)

    rewards = {f"{s['index']}:{t}": v for s in result["samples"] for t, v in enumerate(s["token_rewards"])}
    # row 0: a verified step line (tokens 0-7) and a penalised one (tokens 8-14) of a right rollout
    first = result["samples"][0]["token_rewards"]
    high, near = first[0], first[8]
    assert high != near and abs(high - near) / abs(high) <= 0.2, (high, near)  # two close rewards
    rank_gap = _distance(_rgb(painted["rank"]["0:0"]), _rgb(painted["rank"]["0:8"]))
    linear_gap = _distance(_rgb(painted["linear"]["0:0"]), _rgb(painted["linear"]["0:8"]))
    print(f"rewards {high} and {near}: rank colours {rank_gap:.0f} apart, linear {linear_gap:.0f}")
    assert rank_gap > 60 and rank_gap > 2 * linear_gap, (rank_gap, linear_gap)
    # every pair of distinct values gets distinct colours in the default view, equal values equal colours
    by_value: dict[float, set[str]] = {}
    for key, value in rewards.items():
        if value is not None:
            by_value.setdefault(round(value, 6), set()).add(painted["rank"][key])
    assert all(len(c) == 1 for c in by_value.values())
    assert len({next(iter(c)) for c in by_value.values()}) == len(by_value)
    assert "distinct values, colour by rank" in painted["rank_legend"]
