"""A tiny judge model built in code (tests, benchmark, GPU check): no downloads, seconds on one core.

Test infrastructure: it uses the core's tiny-model builder (the engine), which the shipped plugin never imports.

A byte-level BPE tokenizer trained on judge-style text (so `` yes``/`` no``/`` Yes``/`` No`` are single
tokens) and a small Qwen2 from :mod:`botgrpo_core.engine.tiny`, saved to a folder that ``from_pretrained`` (and
vLLM) load. :func:`teach_answer` fine-tunes it for a few seconds to answer every prompt with one fixed text,
which gives ``generate`` mode a judge whose verdict is known.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: A chat template for the tiny tokenizer (``/chat/completions`` and ``chat: true``).
CHAT_TEMPLATE = (
    "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant:{% endif %}"
)

_CORPUS = (
    "Question: what is 17+5-8?\nSolution:\n17+5=22\n22-8=14\nA: 14\n",
    "Is the step above correct? Answer: yes\nIs the step above correct? Answer: no\n",
    "Is the solution's final answer correct? Answer: Yes. Reference answer: 14. Answer: No.\n",
    "Step 1: correct\nStep 2: incorrect\nStep 3: correct\nVerdict: yes or no, true or false.\n",
    'The step is wrong. {"verdict": "correct"} \\boxed{1} Score: 0.5 user: assistant:\n',
    "Let x = 3. Then 2x + 1 = 7, so x^2 = 9. Therefore the answer is 9.\n",
)


def build_tiny_judge(
    path: str | Path,
    *,
    hidden_size: int = 32,
    num_layers: int = 2,
    num_heads: int = 4,
    vocab_size: int = 400,
    max_positions: int = 2048,
    logit_scale: float = 6.0,
    seed: int = 0,
) -> Path:
    """Build and save a tiny judge; returns ``path``.

    :param logit_scale: multiplies the (tied) embedding matrix so the next-token distributions are
        peaked rather than near-uniform, which makes probability comparisons in tests meaningful.
    """
    import torch

    from botgrpo_core.config.sections import TinyModelSpec
    from botgrpo_core.engine.tiny import build_tiny_model, byte_level_bpe_tokenizer, save_pretrained

    tokenizer = byte_level_bpe_tokenizer(list(_CORPUS) * 8, vocab_size=vocab_size)
    tokenizer.chat_template = CHAT_TEMPLATE
    spec = TinyModelSpec(
        hidden_size=hidden_size, num_layers=num_layers, num_heads=num_heads, max_positions=max_positions
    )
    model = build_tiny_model(tokenizer, spec, seed=seed)
    with torch.no_grad():
        model.get_input_embeddings().weight.mul_(logit_scale)
    return save_pretrained(model, tokenizer, path)


def arithmetic_examples(count: int, *, seed: int = 0) -> list[tuple[str, str]]:
    """Judge prompts about little sums (default ``judge.steps`` templates) answered `` yes``/`` no``.

    The last step is wrong (off by 1 or 2) half of the time; the answer says whether it is right.
    """
    import random

    from botgrpo_judge import templates

    rng = random.Random(seed)
    examples = []
    for _ in range(count):
        a, b, c = rng.randint(1, 20), rng.randint(1, 9), rng.randint(1, 9)
        first, second = a + b, a + b - c
        wrong = rng.random() < 0.5
        shown = second + rng.choice((-2, -1, 1, 2)) if wrong else second
        steps = [f"{a}+{b}={first}", f"{first}-{c}={shown}"][: rng.randint(1, 2)]
        correct = not (wrong and len(steps) == 2)
        question = f"what is {a}+{b}-{c}?"
        prompt = templates.render(templates.STEP_PROMPT, question=question) + "\n".join(steps)
        examples.append((prompt + templates.STEP_VERDICT, " yes" if correct else " no"))
    return examples


def teach(
    path: str | Path,
    examples: Sequence[tuple[str, str]],
    *,
    steps: int = 150,
    lr: float = 3e-3,
    seed: int = 0,
) -> Any:
    """Fine-tune the saved model at ``path`` on ``(prompt, answer)`` pairs (loss on the answer); saves it.

    An answer that ends a generation should end with the tokenizer's EOS text; :func:`teach_answer` adds it.
    :returns: the model's greedy answer to the first prompt after training (to check the lesson took).
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    rows = [
        (tokenizer.encode(p, add_special_tokens=False), tokenizer.encode(a, add_special_tokens=False))
        for p, a in examples
    ]
    width = max(len(p) + len(a) for p, a in rows)
    ids = torch.full((len(rows), width), tokenizer.pad_token_id, dtype=torch.long)
    labels = torch.full((len(rows), width), -100, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for b, (prompt, answer) in enumerate(rows):
        seq = prompt + answer
        ids[b, : len(seq)] = torch.tensor(seq)
        labels[b, len(prompt) : len(seq)] = torch.tensor(answer)
        mask[b, : len(seq)] = 1
    torch.manual_seed(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    model.train()
    for _ in range(steps):
        loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()
    model.save_pretrained(path)
    with torch.no_grad():
        prompt = torch.tensor([rows[0][0]])
        out = model.generate(
            prompt, max_new_tokens=len(rows[0][1]) + 4, do_sample=False, pad_token_id=tokenizer.pad_token_id
        )
    return tokenizer.decode(out[0, len(rows[0][0]) :], skip_special_tokens=True)


def teach_answer(path: str | Path, prompts: Sequence[str], answer: str, *, steps: int = 150) -> Any:
    """Fine-tune the model at ``path`` to answer each of ``prompts`` with ``answer`` then EOS."""
    from transformers import AutoTokenizer

    eos = AutoTokenizer.from_pretrained(path).eos_token
    return teach(path, [(p, answer + eos) for p in prompts], steps=steps)
