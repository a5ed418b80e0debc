"""Issue 26, finding 8: clear errors, naming the key and the fix, where there were raw tracebacks or wrong ones.

Real run files through ``botgrpo validate`` and ``botgrpo train`` (the CLI's ``main``), the real YAML reader,
the real mixture and estimators. (The full disk during a save: tests/adversarial/test_full_disk.py.)
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import torch

from botgrpo_core.cli.main import main
from botgrpo_core.config.errors import MAX_LISTED
from botgrpo_core.config.yaml_text import MAX_NODES, MAX_VALUES, YAMLTextError, parse_yaml

RUN = {
    "model": {"name_or_path": "tiny", "tiny": {"hidden_size": 32, "num_layers": 1, "num_heads": 2}},
    "data": {"source": "task", "task": "arithmetic", "train_size": 16, "eval_size": 2},
    "rewards": {"alpha": 1.0, "beta": 0.25, "signals": [{"name": "core.exact_answer"}]},
    "training": {"steps": 1, "prompts_per_step": 2, "group_size": 2, "max_new_tokens": 4},
    "engine": {"device": "cpu"},
}


def _write(tmp_path: Path, run: dict, name: str = "run.yaml") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(run), encoding="utf-8")  # JSON is YAML
    return path


def _with_output_dir(tmp_path: Path, output_dir: str) -> Path:
    return _write(tmp_path, {**RUN, "training": {**RUN["training"], "output_dir": output_dir}})


@pytest.mark.parametrize(
    ("output_dir", "message"),
    [
        ("x" * 300 + "/run", r"folder name 'x{24}'\.\.\. is 300 bytes long, over the 255 bytes"),
        ("runs/a\0b", r"NUL character \(\\0\) at position 6"),
        ("/" + "/".join(["y" * 200] * 21), r"the path is \d+ bytes long, over the 4095"),
    ],
    ids=["name-over-255-bytes", "nul", "path-over-4095-bytes"],
)
def test_an_output_dir_the_os_refuses_is_a_config_error(tmp_path, capsys, monkeypatch, output_dir, message):
    """Was: `OSError [Errno 36] File name too long` (validate and train), or a NUL passing validate and
    `ValueError: embedded null byte` in train."""
    import re

    monkeypatch.chdir(tmp_path)
    path = _with_output_dir(tmp_path, output_dir)
    for command in ("validate", "train"):
        assert main([command, str(path)]) == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err and "training.output_dir" in err, err
        assert re.search(message, err), err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.yaml"]  # train made nothing


def _cpu(fn):
    start = time.process_time()
    result = fn()
    return result, time.process_time() - start


def test_plain_values_are_not_an_alias_bomb_and_aliases_still_are():
    """Was: 100,001 values written out refused as "an alias bomb?". Now aliases are charged for the values
    they add; written-out values have their own, larger bound (and the file size bounds them too)."""
    plain = "x: [" + ", ".join(["1"] * (3 * MAX_NODES // 2)) + "]\n"
    assert len(parse_yaml(plain)["x"]) == 3 * MAX_NODES // 2
    # aliases that add just under the limit beside many plain values: fine
    block = "[" + ", ".join(["1"] * 1000) + "]"
    under = f"a: &a {block}\nb: [{', '.join(['*a'] * (MAX_NODES // 1001 - 1))}]\n" + plain
    assert len(parse_yaml(under)["b"]) == MAX_NODES // 1001 - 1
    over = f"a: &a {block}\nb: [{', '.join(['*a'] * (MAX_NODES // 1000 + 1))}]\n"
    with pytest.raises(
        YAMLTextError, match=rf"^b: aliases .* over the limit of {MAX_NODES:,} values added by aliases"
    ):
        parse_yaml(over)
    too_many = "x: [" + "1," * MAX_VALUES + "1]\n"
    with pytest.raises(YAMLTextError, match=rf"line 1: the YAML holds over {MAX_VALUES:,} values"):
        parse_yaml(too_many)


def test_a_run_file_with_150k_values_validates(tmp_path, capsys):
    """Through validate (a trl_args field takes any value): no "alias bomb" for values written out."""
    run = {**RUN, "engine": {**RUN["engine"], "trl_args": {"model_init_kwargs": list(range(150_000))}}}
    assert main(["validate", str(_write(tmp_path, run))]) == 0, capsys.readouterr().err[:2000]
    assert "OK" in capsys.readouterr().out


def test_50k_keys_validate_in_bounded_time_and_lines(tmp_path, capsys):
    """Was 12-15 s (pure-Python YAML, and a nearest-key search and a line for each of 50,000 unknown keys).
    Now libyaml parses, and one message lists MAX_LISTED errors and counts the rest."""
    run = {**RUN, "data": {**RUN["data"], "task_params": {f"k{i}": i for i in range(50_000)}}}
    path = _write(tmp_path, run)
    rc, cpu = _cpu(lambda: main(["validate", str(path)]))
    err = capsys.readouterr().err
    assert rc == 2 and "data.task_params" in err and "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) <= MAX_LISTED + 3, len(lines)
    assert lines[-1].strip() == f"- ... and {50_000 - MAX_LISTED:,} more errors; fix these first"
    assert cpu < 6.0, f"{cpu:.1f} s of CPU (was 8-15 s on the 2-core box; ~1.8 s now)"


# ------------------------------------------------------------------------------------------------
# Rewards near float32's limit
# ------------------------------------------------------------------------------------------------
def _mixture_output(value: float, weight: float):
    """A real mixture (core.regex: ``value`` on every run of digits) over four arithmetic completions."""
    from botgrpo_core.config.loading import parse_config
    from botgrpo_core.engine.setup import build_mixture
    from botgrpo_core.engine.tiny import ARITHMETIC_CHARS, char_tokenizer
    from botgrpo_core.rewards.samples import decode_samples

    run = {
        **RUN,
        "rewards": {
            "alpha": 1.0,
            "beta": 1.0,
            "signals": [
                {"name": "core.regex", "params": {"pattern": r"\d+", "value": value}, "weight": weight}
            ],
        },
    }
    mixture = build_mixture(parse_config(run))
    tokenizer = char_tokenizer(ARITHMETIC_CHARS)
    texts = ["1+1=2\nA: 2", "x", "3+4=7", "A: 5"]
    ids = [tokenizer(t, add_special_tokens=False)["input_ids"] for t in texts]
    try:
        return mixture.score_batch(decode_samples(tokenizer, ["p"] * 4, ids, [{}] * 4))
    finally:
        mixture.close()


@pytest.mark.parametrize("estimator", ["bot", "grpo", "token_pool"])
def test_finite_rewards_near_float32s_limit_train(estimator):
    """Was: 3e38 (finite in float32) rejected as "non-finite" (the row sums overflowed float32). Advantages
    do not change with the rewards' scale: 3e38 gives those of 1."""
    from botgrpo_core.estimators.compute import compute_advantages

    big, one = _mixture_output(3e38, 1.0), _mixture_output(1.0, 1.0)
    assert torch.isfinite(big.token_rewards[big.mask]).all() and big.token_rewards.max() > 2.9e38
    got = compute_advantages(estimator, big.token_rewards, big.mask, group_size=4)
    want = compute_advantages(estimator, one.token_rewards, one.mask, group_size=4)
    assert want.abs().max() > 0.5
    torch.testing.assert_close(got, want, rtol=1e-3, atol=1e-3)  # float32's own accuracy at 3e38


def test_rewards_that_overflow_float32_say_so_and_how_to_rescale():
    """3e38 x weight 2 is past float32's 3.4e38: the message says the rewards overflowed float32 and how to
    rescale, not only "non-finite"."""
    from botgrpo_core.estimators.compute import compute_advantages

    out = _mixture_output(3e38, 2.0)
    with pytest.raises(
        ValueError, match=r"overflow float32 .*3\.4e\+38.*rescale them, e\.g\. a smaller signal weight"
    ):
        compute_advantages("bot", out.token_rewards, out.mask, group_size=4)
