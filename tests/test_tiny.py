"""Tiny models and tokenizers built in code (offline)."""

from __future__ import annotations

import torch

from botgrpo_core.config.sections import TinyModelSpec
from botgrpo_core.engine.tiny import (
    ARITHMETIC_CHARS,
    build_tiny_model,
    byte_level_bpe_tokenizer,
    char_tokenizer,
    count_parameters,
    save_pretrained,
)
from botgrpo_core.rewards.offsets import decode_with_offsets


def test_char_tokenizer_one_token_per_character():
    tok = char_tokenizer()
    text = "Q: 17+5-8=\n17+5=22\n22-8=14\nA: 14"
    enc = tok(text, add_special_tokens=False, return_offsets_mapping=True)
    assert len(enc["input_ids"]) == len(text)
    assert enc["offset_mapping"] == [(i, i + 1) for i in range(len(text))]
    assert tok.decode(enc["input_ids"]) == text  # no spaces inserted between tokens
    assert len(tok) == len(ARITHMETIC_CHARS) + 3  # + pad, eos, unk
    assert len({tok.pad_token_id, tok.eos_token_id, tok.unk_token_id}) == 3
    assert tok("x", add_special_tokens=False)["input_ids"] == [tok.unk_token_id]
    ids = tok("A: 7", add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
    assert tok.decode(ids, skip_special_tokens=True) == "A: 7"


def test_byte_level_bpe_round_trip_and_split_characters():
    tok = byte_level_bpe_tokenizer()
    text = "Schöne Grüße: 東京 🙂 x^2 + 1 = <div/>"
    ids = tok(text, add_special_tokens=False)["input_ids"]
    assert tok.decode(ids) == text
    pieces = tok.convert_ids_to_tokens(ids)
    # multi-byte characters are split across byte-level tokens (what span alignment must survive)
    decoded_pieces = [tok.convert_tokens_to_string([p]) for p in pieces]
    assert any("\ufffd" in p for p in decoded_pieces)
    decoded, offsets = decode_with_offsets(tok, ids)
    assert decoded == text and len(offsets) == len(ids)
    assert offsets[0][0] == 0 and offsets[-1][1] == len(text)
    assert 256 < len(tok) <= 400


def test_tiny_model_size_and_determinism(tmp_path):
    tok = char_tokenizer()
    model = build_tiny_model(tok, seed=0)
    assert 140_000 <= count_parameters(model) <= 180_000  # the size the arithmetic task is learned at
    again = build_tiny_model(tok, seed=0)
    other = build_tiny_model(tok, seed=1)
    state, state2, state3 = model.state_dict(), again.state_dict(), other.state_dict()
    assert all(torch.equal(state[k], state2[k]) for k in state)
    assert any(not torch.equal(state[k], state3[k]) for k in state)
    ids = tok(["Q: 1+2=\n"], return_tensors="pt", add_special_tokens=False)["input_ids"]
    logits = model(input_ids=ids).logits
    assert logits.shape == (1, ids.shape[1], len(tok))

    from transformers import AutoModelForCausalLM, AutoTokenizer

    save_pretrained(model, tok, tmp_path)
    loaded = AutoModelForCausalLM.from_pretrained(tmp_path)
    loaded_tok = AutoTokenizer.from_pretrained(tmp_path)
    assert (
        loaded_tok("12+3=15", add_special_tokens=False)["input_ids"]
        == tok("12+3=15", add_special_tokens=False)["input_ids"]
    )
    torch.testing.assert_close(loaded(input_ids=ids).logits, logits)


def test_tiny_spec_checks_heads():
    import pytest

    with pytest.raises(ValueError, match="num_heads"):
        build_tiny_model(char_tokenizer(), TinyModelSpec(hidden_size=30, num_heads=4))


def test_load_tokenizer_returns_the_built_tokenizer(tmp_path):
    from botgrpo_core.engine.tiny import load_tokenizer

    tok = char_tokenizer()
    save_pretrained(build_tiny_model(tok), tok, tmp_path)
    text = "Q: 4+5+1=\n4+5=9\n9+1=10\nA: 10"
    assert load_tokenizer(tmp_path)(text, add_special_tokens=False)["input_ids"] == tok(text)["input_ids"]
