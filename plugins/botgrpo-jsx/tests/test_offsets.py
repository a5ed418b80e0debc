"""Offset conversions against an independent reference: Python's own encoders on prefixes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from botgrpo_jsx.offsets import TextIndex, sanitize

TEXT = "a\u00e9\u4e2d\U0001f600b\n\u00fc\U0001f389c"  # 1-, 2-, 3-, 4-byte characters and a newline


def test_char_of_byte_matches_utf8_prefixes() -> None:
    index = TextIndex(TEXT)
    for i in range(len(TEXT) + 1):
        assert index.char_of_byte(len(TEXT[:i].encode("utf-8"))) == i
        assert index.byte_of_char(i) == len(TEXT[:i].encode("utf-8"))


def test_char_of_utf16_matches_utf16_prefixes() -> None:
    index = TextIndex(TEXT)
    for i in range(len(TEXT) + 1):
        assert index.char_of_utf16(len(TEXT[:i].encode("utf-16-le")) // 2) == i


def test_positions_inside_a_character_map_to_its_start() -> None:
    index = TextIndex(TEXT)
    emoji = TEXT.index("\U0001f600")
    start = len(TEXT[:emoji].encode())
    assert [index.char_of_byte(start + k) for k in range(4)] == [emoji] * 4
    assert index.char_of_utf16(len(TEXT[:emoji].encode("utf-16-le")) // 2 + 1) == emoji


def test_line_and_byte_column() -> None:
    index = TextIndex(TEXT)
    second = TEXT.index("\n") + 1
    assert index.char_of_line_byte_col(2, 0) == second
    assert index.char_of_line_byte_col(2, 2) == second + 1  # after the 2-byte u-umlaut
    assert index.char_of_line_byte_col(2, 6) == second + 2  # after the 4-byte emoji


def test_sanitize_keeps_length_and_makes_text_encodable() -> None:
    bad = "x\ud800y\udfffz"
    clean = sanitize(bad)
    assert len(clean) == len(bad) and clean == "x\ufffdy\ufffdz"
    clean.encode("utf-8")


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=40))
def test_round_trip_on_random_text(text: str) -> None:
    text = sanitize(text)
    index = TextIndex(text)
    for i in range(len(text) + 1):
        assert index.char_of_byte(index.byte_of_char(i)) == i
        assert index.char_of_utf16(len(text[:i].encode("utf-16-le", "surrogatepass")) // 2) == i
