"""Bounded JSON: the same values as ``json.loads`` where that works, bounded work where it does not."""

from __future__ import annotations

import json
import time

import pytest

from botgrpo_judge.bounded_json import JSONTooDeep, json_values_in, loads_bounded

DOCUMENTS = [
    "{}",
    "[]",
    ' {"a": [1, 2.5, -3e-2, true, false, null], "b": {"c": "d"}} ',
    r'{"quote \" in a key": "a ] and a } in a string", "x": ["\\", "\\\"", "\u00e9\ud83d\ude00"]}',
    '[{"step": 1, "verdict": "correct"}, {"step": 2, "verdict": "wrong"}]',
    '{"text": "' + "a\\n" * 1000 + '"}',
]


@pytest.mark.parametrize("document", DOCUMENTS)
def test_documents_decode_as_json_loads_does(document: str) -> None:
    assert loads_bounded(document, 8) == json.loads(document)


def test_depth_limit_is_exact() -> None:
    assert loads_bounded("[" * 64 + "]" * 64, 64) == json.loads("[" * 64 + "]" * 64)
    with pytest.raises(JSONTooDeep, match="deeper than 64"):
        loads_bounded("[" * 65 + "]" * 65, 64)
    with pytest.raises(JSONTooDeep):
        loads_bounded("[" * 200_000, 64)  # json.loads: RecursionError


@pytest.mark.parametrize(
    "text",
    ['{"a": NaN}', '{"a": Infinity}', "[-Infinity]", '{"a": 1', '"just a string"', "[1] [2]", '["open'],
)
def test_not_a_json_document(text: str) -> None:
    with pytest.raises(ValueError):
        loads_bounded(text, 64)


def test_values_in_prose() -> None:
    text = 'Step [1 looks fine, {so} I say {"verdict": "correct"} and ```[true, false]``` {"a": NaN}'
    assert list(json_values_in(text, 8)) == [{"verdict": "correct"}, [True, False]]
    assert list(json_values_in("[" * 9 + "]" * 9 + ' {"ok": 1}', 8)) == [[[[[[[[[]]]]]]]], {"ok": 1}]


@pytest.mark.parametrize("unit", ["[", "{", '{"a":', '["', "[[]"])
def test_pathological_prose_costs_bounded_work(unit: str) -> None:
    text = unit * (500_000 // len(unit))  # json.loads from each bracket: RecursionError or O(n^2)
    start = time.process_time()  # CPU time: O(n^2) would cost minutes of it, a loaded machine does not
    values = list(json_values_in(text, 8))
    assert time.process_time() - start < 2.0
    assert all(v == [] for v in values)  # only the balanced "[]" of "[[]" are values
    assert (unit == "[[]") == bool(values)
