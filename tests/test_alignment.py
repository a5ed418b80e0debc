"""Token offsets on real tokenizers trained in code (byte-level BPE, sentencepiece with byte fallback), and
span-to-token alignment."""

from __future__ import annotations

import codecs
import json
import pickle
import random
import time

import pytest
import torch

from botgrpo_core.engine.tiny import byte_level_bpe_tokenizer, char_tokenizer
from botgrpo_core.rewards.alignment import (
    AlignmentError,
    CheckedSpans,
    align_spans,
    offsets_tensor,
    span_table,
)
from botgrpo_core.rewards.offsets import TokenOffsets, _prefix_offsets, decode_with_offsets
from botgrpo_core.signals import Span

TEXTS = [
    "Schöne Grüße: 東京 → ∞ 🙂 ok",
    "Step 1: 12 * 3 = 36. Step 2: 36 + 4 = 40.",
    "字符串中文混合 text 🙂🙂 end",
    "",
    "ü",
]


@pytest.fixture(scope="module")
def bpe():
    return byte_level_bpe_tokenizer()


def _reference_offsets(tokenizer, ids: list[int]) -> list[tuple[int, int]]:
    """Independent reference: byte pieces from the tokenizer's own vocabulary, chars counted by decoding prefixes."""
    # Single-token decode loses partial characters, so rebuild each token's bytes from the byte-level alphabet.
    byte_of = _gpt2_byte_decoder()
    pieces = [bytes(byte_of[c] for c in tokenizer.convert_ids_to_tokens(i)) for i in ids]
    data = b"".join(pieces)
    offsets, position = [], 0
    for piece in pieces:
        start_b, end_b = position, position + len(piece)
        position = end_b
        start = len(data[:start_b].decode("utf-8", errors="ignore"))
        inside = end_b < len(data) and (data[end_b] & 0xC0) == 0x80
        end = len(data[:end_b].decode("utf-8", errors="ignore")) + (1 if inside and end_b > start_b else 0)
        offsets.append((start, max(start, end)))
    return offsets


def _gpt2_byte_decoder() -> dict[str, int]:
    bs = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


@pytest.mark.parametrize("text", TEXTS)
def test_byte_level_offsets_match_reference(bpe, text: str) -> None:
    ids = bpe.encode(text, add_special_tokens=False)
    decoded, offsets = decode_with_offsets(bpe, ids)
    assert decoded == text
    assert len(offsets) == len(ids)
    assert offsets == _reference_offsets(bpe, ids)
    _assert_offsets_never_go_backwards(decoded, offsets)
    if ids:
        assert offsets[-1][1] == len(text) and offsets[0][0] == 0


def test_split_multibyte_character_does_not_shift_later_offsets(bpe) -> None:
    text = "a 東京🙂 b=42"
    ids = bpe.encode(text, add_special_tokens=False)
    decoded, offsets = decode_with_offsets(bpe, ids)
    pieces = bpe.convert_ids_to_tokens(ids)
    # the corpus makes the tokenizer split at least one multi-byte character across tokens
    shared = [t for t in range(1, len(offsets)) if offsets[t][0] < offsets[t - 1][1]]
    assert shared, f"expected a split character in {pieces}"
    # whatever happens inside the emoji, the ASCII tail lands on its exact characters
    tail_start = text.index(" b=42")
    tail = [(s, e) for s, e in offsets if s >= tail_start]
    assert "".join(decoded[s:e] for s, e in tail) == " b=42"


def test_special_tokens_get_empty_ranges(bpe) -> None:
    ids = [*bpe.encode("x = 1", add_special_tokens=False), bpe.eos_token_id]
    decoded, offsets = decode_with_offsets(bpe, ids)
    assert decoded == "x = 1" and offsets[-1] == (5, 5)


def test_char_tokenizer_offsets_are_exact() -> None:
    tok = char_tokenizer()
    ids = tok.encode("17+5=22\nA: 22", add_special_tokens=False)
    text, offsets = decode_with_offsets(tok, ids)
    assert text == "17+5=22\nA: 22" and offsets == [(i, i + 1) for i in range(len(text))]


class _SpacedTokenizer:
    """A tokenizer whose pieces do not concatenate to its decoded text (forces the exact fallback)."""

    all_special_ids: tuple[int, ...] = ()
    words = ("alpha", "beta", "gamma", "é")

    def convert_ids_to_tokens(self, ids):
        return [self.words[i] for i in ids]

    def decode(self, ids, skip_special_tokens=True):
        return " ".join(self.words[i] for i in ids)


def test_fallback_prefix_offsets() -> None:
    text, offsets = decode_with_offsets(_SpacedTokenizer(), [0, 1, 3, 2])
    assert text == "alpha beta é gamma"
    assert [text[s:e].strip() for s, e in offsets] == ["alpha", "beta", "é", "gamma"]


# --- alignment ----------------------------------------------------------------------------------------------
def _reference_align(spans, offsets, lengths, placement):
    """Plain loops: token t gets a span's value when [s_t, e_t) overlaps [a, b) (zero-width: the char at a)."""
    out = [[0.0] * max((len(o) for o in offsets), default=0) for _ in offsets]
    for row, row_spans in enumerate(spans):
        for sp in row_spans:
            a, b = sp.start, sp.end
            if a == b:
                if lengths[row] == 0:
                    continue
                a, b = (a, a + 1) if a < lengths[row] else (a - 1, a)
            hits = [t for t, (s, e) in enumerate(offsets[row]) if s < b and e > a]
            if placement == "last":
                hits = hits[-1:]
            for t in hits:
                out[row][t] += sp.value
    return out


@pytest.mark.parametrize("placement", ["span", "last"])
def test_align_matches_reference_on_random_spans(bpe, placement: str) -> None:
    rng = random.Random(0)
    texts = [t for t in TEXTS if t] + ["plain ascii only here", "ö" * 7]
    offsets, spans = [], []
    for text in texts:
        _, offs = decode_with_offsets(bpe, bpe.encode(text, add_special_tokens=False))
        offsets.append(offs)
        row = []
        for _ in range(6):
            a = rng.randrange(0, len(text) + 1)
            b = rng.randrange(a, len(text) + 1)
            row.append(Span(a, b, rng.choice([-1.0, 0.5, 2.0])))
        spans.append(row)
    lengths = [len(t) for t in texts]
    got = align_spans(spans, offsets_tensor(offsets), lengths, placement=placement)
    want = torch.tensor(_reference_align(spans, offsets, lengths, placement))
    assert torch.allclose(got, want, atol=0)
    # the mixture's checked spans (numbers pre-packed in an array) align identically
    checked = [CheckedSpans(row, span_table(row)) for row in spans]
    assert torch.equal(align_spans(checked, offsets_tensor(offsets), lengths, placement=placement), got)


def test_token_offsets_behave_as_a_sequence_of_int_pairs(bpe) -> None:
    text = "héllo wörld 🙂"
    _, offsets = decode_with_offsets(bpe, bpe.encode(text, add_special_tokens=False))
    assert isinstance(offsets, TokenOffsets)
    pairs = list(offsets)
    assert all(type(a) is int and type(b) is int for a, b in pairs)
    assert offsets == pairs and offsets[0] == pairs[0] and offsets[-1] == pairs[-1]
    assert list(offsets[1:3]) == pairs[1:3] and len(offsets) == len(pairs)
    assert pickle.loads(pickle.dumps(offsets)) == offsets  # samples travel to worker processes
    assert torch.equal(offsets_tensor([offsets], 20), offsets_tensor([pairs], 20))
    assert TokenOffsets([]) == [] and len(TokenOffsets([])) == 0
    with pytest.raises(ValueError, match=r"shape \(N, 2\)"):
        TokenOffsets([(0, 1, 2)])
    with pytest.raises(ValueError, match="read-only"):
        offsets.array[0, 0] = 5  # shared by every holder of the sample


def test_spans_at_and_inside_token_boundaries() -> None:
    # tokens: "ab" [0,2) "cd" [2,4) "e" [4,5)
    offsets = offsets_tensor([[(0, 2), (2, 4), (4, 5)]])
    cases = {
        (0, 2): [1, 0, 0],  # exactly one token
        (1, 3): [1, 1, 0],  # inside two tokens
        (2, 2): [0, 1, 0],  # zero width at a boundary: the character at 2
        (5, 5): [0, 0, 1],  # zero width at the end: the last character
        (0, 5): [1, 1, 1],
    }
    for (a, b), want in cases.items():
        got = align_spans([[Span(a, b, 1.0)]], offsets, [5])
        assert got[0].tolist() == want, (a, b)
    both = align_spans([[Span(0, 3, 1.0), Span(1, 5, 0.5)]], offsets, [5])
    assert both[0].tolist() == [1.5, 1.5, 0.5]  # overlapping spans add up
    last = align_spans([[Span(0, 3, 1.0)]], offsets, [5], placement="last")
    assert last[0].tolist() == [0, 1, 0]


def test_padding_and_empty_rows() -> None:
    offsets = offsets_tensor([[(0, 1)], [], [(0, 1), (1, 2)]])
    got = align_spans([[Span(0, 1, 1.0)], [], [Span(1, 2, -1.0)]], offsets, [1, 0, 2])
    assert got.tolist() == [[1, 0], [0, 0], [0, -1]]


@pytest.mark.parametrize("span", [Span(0, 9, 1.0), Span(3, 2, 1.0), Span(-1, 1, 1.0)])
def test_bad_spans_are_clear_errors(span: Span) -> None:
    with pytest.raises(
        AlignmentError, match=r"sample 0: span .* (ends past the completion \(length 5\)|is not a range)"
    ):
        align_spans([[span]], offsets_tensor([[(0, 5)]]), [5])


def test_non_integer_span_offsets_are_clear_errors() -> None:
    with pytest.raises(AlignmentError, match=r"sample 0: span \(0, 2.5\) has non-integer offsets"):
        align_spans([[Span(0, 2.5, 1.0)]], offsets_tensor([[(0, 5)]]), [5])  # type: ignore[arg-type]


def _assert_offsets_never_go_backwards(text: str, offsets: list[tuple[int, int]]) -> None:
    """Ranges inside ``text`` whose starts and ends never decrease (neighbours may share a character)."""
    previous = (0, 0)
    for t, (start, end) in enumerate(offsets):
        assert 0 <= start <= end <= len(text), (t, start, end)
        assert start >= previous[0] and end >= previous[1], (t, previous, (start, end))
        previous = (start, end)


# --- ill-formed bytes: a completion cut mid-character --------------------------------------------------------
def _utf8_units(data: bytes) -> list[tuple[int, int]]:
    """Independent reference: the byte range of each character of ``data.decode('utf-8', 'replace')``.

    Plain loop: at each byte, the longest strict decode of 1-4 bytes that yields one character is a valid
    character; otherwise the longest prefix an incremental decoder still accepts (a maximal subpart,
    at least one byte) becomes one U+FFFD.
    """
    units, i = [], 0
    while i < len(data):
        size = 0
        for n in range(4, 0, -1):
            try:
                if len(data[i : i + n].decode("utf-8")) == 1:
                    size = n
                    break
            except UnicodeDecodeError:
                pass
        if not size:
            size = 1
            for n in range(2, 4):
                try:
                    codecs.getincrementaldecoder("utf-8")().decode(data[i : i + n], final=False)
                    size = n if i + n <= len(data) else size
                except UnicodeDecodeError:
                    break
        units.append((i, i + size))
        i += size
    return units


def _unit_reference_offsets(tokenizer, ids: list[int]) -> tuple[str, list[tuple[int, int]]]:
    """Token t covers every character whose bytes overlap its bytes (an empty token: an empty range)."""
    byte_of = _gpt2_byte_decoder()
    pieces = [bytes(byte_of[c] for c in tokenizer.convert_ids_to_tokens(i)) for i in ids]
    data = b"".join(pieces)
    units = _utf8_units(data)
    assert "".join("\ufffd" if _bad(data[a:b]) else data[a:b].decode() for a, b in units) == data.decode(
        "utf-8", errors="replace"
    )
    offsets, position = [], 0
    for piece in pieces:
        a, b = position, position + len(piece)
        position = b
        hit = [c for c, (ua, ub) in enumerate(units) if ua < b and ub > a]
        start = hit[0] if hit else sum(1 for ua, _ in units if ua < a)
        offsets.append((start, hit[-1] + 1 if hit else start))
    return data.decode("utf-8", errors="replace"), offsets


def _bad(chunk: bytes) -> bool:
    try:
        chunk.decode("utf-8")
        return False
    except UnicodeDecodeError:
        return True


def _cut_ids(bpe, text: str, drop_every: int) -> list[int]:
    """``text``'s tokens with every ``drop_every``-th one dropped (characters left without their other
    bytes) and the last one dropped (a completion cut at max_new_tokens mid-character)."""
    ids = bpe.encode(text, add_special_tokens=False)
    return [t for k, t in enumerate(ids) if k % drop_every != 3][:-1]


CUT_TEXT = "a 東京🙂 b=42 字符串中文 ü → ∞ "


@pytest.mark.parametrize("drop_every", [5, 7, 10**9])
def test_replacement_characters_get_the_bytes_that_made_them(bpe, drop_every: int) -> None:
    ids = _cut_ids(bpe, CUT_TEXT * 3, drop_every)
    text, offsets = decode_with_offsets(bpe, ids)
    want_text, want = _unit_reference_offsets(bpe, ids)
    assert text == bpe.decode(ids) == want_text and "\ufffd" in text
    assert list(offsets) == want
    _assert_offsets_never_go_backwards(text, list(offsets))
    assert offsets[-1][1] == len(text)


def test_cut_completion_agrees_with_the_slow_prefix_reference(bpe) -> None:
    """Only the last character is cut: the exact prefix decoder's ranges start where ours do and lie inside
    ours (it gives a split character only to the token that completes it; ours, to every token holding
    part of it), and both give the cut character to the last token."""
    ids = bpe.encode(CUT_TEXT, add_special_tokens=False)
    ids = ids[: max(n for n in range(len(ids)) if bpe.decode(ids[:n]).endswith("\ufffd"))]
    text, offsets = decode_with_offsets(bpe, ids)
    assert text.endswith("\ufffd") and text.count("\ufffd") == 1
    slow = _prefix_offsets(bpe, ids, text, True)
    assert [start for start, _ in offsets] == [start for start, _ in slow]
    assert all(end >= slow_end for (_, end), (_, slow_end) in zip(offsets, slow))
    assert sum(end > slow_end for (_, end), (_, slow_end) in zip(offsets, slow)) >= 2  # split characters
    assert offsets[-1] == slow[-1]


class _CountingTokenizer:
    """The byte-level BPE, counting decode calls (the slow path decodes every prefix)."""

    def __init__(self, tokenizer) -> None:
        self.tokenizer, self.decodes = tokenizer, 0

    def __getattr__(self, name):
        return getattr(self.tokenizer, name)

    def decode(self, ids, **kwargs):
        self.decodes += 1
        return self.tokenizer.decode(ids, **kwargs)


def test_long_cut_completion_decodes_in_linear_work(bpe) -> None:
    ids = _cut_ids(bpe, CUT_TEXT * 400, 7)
    assert len(ids) >= 4096
    times = {}
    for n in (1024, 4096):
        counting = _CountingTokenizer(bpe)
        start = time.process_time()  # CPU time: what the work costs, whatever else the machine runs
        text, offsets = decode_with_offsets(counting, ids[:n])
        times[n] = time.process_time() - start
        assert counting.decodes == 1 and text.count("\ufffd") > n // 20 and len(offsets) == n
    assert list(offsets) == _unit_reference_offsets(bpe, ids[:4096])[1]
    # 4x the tokens: linear work is ~4x; the old prefix path was ~16x (2.2 s of CPU at 4,096 tokens)
    assert times[4096] < max(12 * times[1024], 0.05) and times[4096] < 1.0, times


# --- sentencepiece with byte fallback (Llama, Mistral): "▁" for spaces, <0xNN> pieces, a stripped first space ---
@pytest.fixture(scope="module")
def sentencepiece():
    """A Llama-style tokenizer trained in code: BPE with byte fallback, "▁" spaces, the Llama decoder
    (Replace, ByteFallback, Fuse, Strip one leading space)."""
    from tokenizers import Tokenizer, decoders, models, normalizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(byte_fallback=True, unk_token="<unk>"))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    tok.decoder = decoders.Sequence(
        [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(), decoders.Strip(" ", 1, 0)]
    )
    byte_pieces = [f"<0x{b:02X}>" for b in range(256)]
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=["<unk>", "<eos>", *byte_pieces],
        initial_alphabet=list("abcdefghijklmnopqrstuvwxyz▁"),
        limit_alphabet=40,
    )
    tok.train_from_iterator([t for t in TEXTS if t] * 20, trainer)
    spec = json.loads(tok.to_str())  # byte pieces are vocabulary, not special tokens (as in Llama's)
    spec["added_tokens"] = [t for t in spec["added_tokens"] if t["content"] in ("<unk>", "<eos>")]
    return PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer.from_str(json.dumps(spec)), eos_token="<eos>", unk_token="<unk>"
    )


def _sentencepiece_reference(tokenizer, ids: list[int]) -> tuple[str, list[tuple[int, int]]]:
    """Plain loops: the characters ``ByteFallback`` makes of each run of byte pieces (a run that is not
    UTF-8: one U+FFFD per byte), each owned by every token holding one of its bytes; then the first space
    stripped. Token t covers the characters it owns."""
    pieces = tokenizer.convert_ids_to_tokens(ids)
    chars: list[tuple[str, set[int]]] = []  # (character, tokens that hold part of it)
    t = 0
    while t < len(pieces):
        if not (pieces[t].startswith("<0x") and len(pieces[t]) == 6):
            chars += [(c, {t}) for c in pieces[t].replace("▁", " ")]
            t += 1
            continue
        run = []  # (byte, token)
        while t < len(pieces) and pieces[t].startswith("<0x") and len(pieces[t]) == 6:
            run.append((int(pieces[t][3:5], 16), t))
            t += 1
        data = bytes(b for b, _ in run)
        if _bad(data):
            chars += [("\ufffd", {owner}) for _, owner in run]
            continue
        k = 0
        for c in data.decode():
            n = len(c.encode())
            chars.append((c, {owner for _, owner in run[k : k + n]}))
            k += n
    if chars and chars[0][0] == " ":
        chars = chars[1:]
    offsets = []
    for t in range(len(pieces)):
        hit = [i for i, (_, owners) in enumerate(chars) if t in owners]
        start = hit[0] if hit else sum(1 for _, owners in chars if owners and max(owners) < t)
        offsets.append((start, hit[-1] + 1 if hit else start))
    return "".join(c for c, _ in chars), offsets


@pytest.mark.parametrize("drop_every", [10**9, 5, 7])
def test_sentencepiece_offsets_match_reference(sentencepiece, drop_every: int) -> None:
    ids = sentencepiece.encode(CUT_TEXT * 3, add_special_tokens=False)
    ids = [t for k, t in enumerate(ids) if k % drop_every != 3]
    text, offsets = decode_with_offsets(sentencepiece, ids)
    want_text, want = _sentencepiece_reference(sentencepiece, ids)
    assert text == sentencepiece.decode(ids) == want_text
    assert list(offsets) == want
    assert offsets[0] == (0, len(sentencepiece.convert_ids_to_tokens(ids[0]).lstrip("▁")))
    _assert_offsets_never_go_backwards(text, list(offsets))
    if drop_every < 10**9:
        assert "\ufffd" in text


def test_long_sentencepiece_completion_decodes_in_linear_work(sentencepiece) -> None:
    """The leading space the decoder strips used to send every sentencepiece completion to the prefix path."""
    ids = sentencepiece.encode(CUT_TEXT * 600, add_special_tokens=False)
    ids = [t for k, t in enumerate(ids) if k % 7 != 3][:4096]
    counting = _CountingTokenizer(sentencepiece)
    start = time.process_time()  # CPU time, not wall-clock: a loaded machine does not fail it
    text, offsets = decode_with_offsets(counting, ids)
    elapsed = time.process_time() - start
    assert counting.decodes == 1 and len(offsets) == 4096 and "\ufffd" in text and elapsed < 1.0
    # compare a prefix against the reference, cut where no run of byte pieces crosses the cut (a prefix that
    # ends inside a run decodes that run differently, so its offsets are not a prefix of the whole's)
    pieces = sentencepiece.convert_ids_to_tokens(ids)
    byte = [p.startswith("<0x") and len(p) == 6 for p in pieces]
    cut = next(n for n in range(300, len(ids)) if not byte[n - 1] and not byte[n])
    assert list(offsets[:cut]) == _sentencepiece_reference(sentencepiece, ids[:cut])[1]
