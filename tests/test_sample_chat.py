"""``sample_completions`` (the bench's evaluation sampler) takes TRL's conversational prompts (issue 36, chat data)."""

from __future__ import annotations

from botgrpo_core.engine.tiny import build_tiny_model, char_tokenizer
from botgrpo_core.engine.warm_start import _chat_text, sample_completions

TEMPLATE = "{% for m in messages %}{{ m['role'][0] }}:{{ m['content'] }}\n{% endfor %}{% if add_generation_prompt %}a:{% endif %}"


def test_a_chat_prompt_samples_as_its_rendered_text_does() -> None:
    tokenizer = char_tokenizer()
    tokenizer.chat_template = TEMPLATE
    tokenizer.padding_side = "left"
    model = build_tiny_model(tokenizer, seed=0)
    chat = [{"role": "user", "content": "2+3="}]
    rendered = "u:2+3=\na:"  # the template by hand: an independent rendering
    assert _chat_text(chat, tokenizer) == rendered
    kwargs = {"max_new_tokens": 6, "seed": 7, "num_samples": 3}
    from_chat = sample_completions(model, tokenizer, [chat, "1+1="], **kwargs)
    from_text = sample_completions(model, tokenizer, [rendered, "1+1="], **kwargs)
    assert from_chat == from_text
    assert len(from_chat) == 6
