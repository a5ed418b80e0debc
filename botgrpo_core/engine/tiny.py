"""Tiny models and tokenizers built in code: offline demos and tests, no hub access.

Two tokenizers:

- :func:`char_tokenizer`: one token per character of a fixed alphabet (the arithmetic task's
  ``0-9 + - = Q A : space newline``). Decoding concatenates tokens, so token ``t`` covers exactly
  character ``t`` of the completion.
- :func:`byte_level_bpe_tokenizer`: a byte-level BPE trained in code on a small built-in corpus (or
  yours). Its tokens split multi-byte characters, which is what span alignment must survive; other
  modules use it in their tests.

:func:`build_tiny_model` builds a small Llama causal LM from a :class:`TinyModelSpec`; vLLM and
TRL both know the architecture, so the same folder saved with :func:`save_pretrained` serves the
GPU check. (Not Qwen2: transformers 5 loads any qwen2 folder with ``Qwen2Tokenizer``, whatever
tokenizer was saved, which would silently re-tokenize the character vocabulary.) Heavy imports
(transformers, tokenizers) happen inside the functions.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerFast

    from botgrpo_core.config.sections import TinyModelSpec

PAD, EOS, UNK = "<pad>", "<eos>", "<unk>"

#: The arithmetic task's alphabet (see ``botgrpo_core.tasks.arithmetic``).
ARITHMETIC_CHARS = "0123456789+-=QA: \n"

# A small mixed corpus (prose, math, code, non-ASCII) so the byte-level BPE learns a few merges and
# keeps multi-byte characters split across tokens.
_BPE_CORPUS = (
    "Q: 17+5-8=\n17+5=22\n22-8=14\nA: 14\n",
    "The derivative of x^2 is 2*x, so the answer is \\boxed{2x}.",
    "Step 1: 12 * 3 = 36. Step 2: 36 + 4 = 40. Therefore the result is 40.",
    'export default function App() { return <div className="app">Hello</div>; }',
    "const [count, setCount] = useState(0); // état du compteur",
    "Schöne Grüße aus Zürich: naïve café, résumé, 東京, ∑ α·β ≤ γ → ∞ 🙂",
    "def add(a: int, b: int) -> int:\n    return a + b\n",
    "Let n be a positive integer such that n^2 + 1 is divisible by 5. Find n mod 5.",
)


def char_tokenizer(chars: str = ARITHMETIC_CHARS) -> PreTrainedTokenizerFast:
    """A character-level tokenizer over ``chars`` plus ``<pad>``, ``<eos>``, ``<unk>``.

    Built as a BPE model without merges (so every character is one token and offsets are exact) and
    a ``Fuse`` decoder (so decoding does not insert spaces between tokens).
    """
    from tokenizers import Tokenizer, decoders, models
    from transformers import PreTrainedTokenizerFast

    if len(set(chars)) != len(chars):
        raise ValueError("char_tokenizer: the alphabet has repeated characters")
    vocab = {PAD: 0, EOS: 1, UNK: 2}
    for ch in chars:
        vocab[ch] = len(vocab)
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token=UNK))
    tok.decoder = decoders.Fuse()
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token=PAD,
        eos_token=EOS,
        unk_token=UNK,
        clean_up_tokenization_spaces=False,
        padding_side="left",
    )


def byte_level_bpe_tokenizer(
    corpus: Iterable[str] | None = None, vocab_size: int = 400
) -> PreTrainedTokenizerFast:
    """A byte-level BPE tokenizer trained in code (seconds, offline).

    :param corpus: training texts; a small built-in mix of prose, math, code and non-ASCII text by default.
    :param vocab_size: target vocabulary size (256 byte symbols + merges + specials).
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[PAD, EOS],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    texts = list(corpus) if corpus is not None else list(_BPE_CORPUS) * 4
    tok.train_from_iterator(texts, trainer=trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token=PAD,
        eos_token=EOS,
        clean_up_tokenization_spaces=False,
        padding_side="left",
    )


def build_tiny_model(
    tokenizer: PreTrainedTokenizerFast, spec: TinyModelSpec | None = None, *, seed: int = 0
) -> PreTrainedModel:
    """A small Llama causal LM sized for ``tokenizer``, initialised from ``seed``.

    The defaults (3 layers, width 64, 4 heads, MLP width 3x) give about 155K parameters with the
    arithmetic alphabet: the size at which the arithmetic task is learned in minutes on one core.
    """
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from botgrpo_core.config.sections import TinyModelSpec

    spec = spec or TinyModelSpec()
    if spec.hidden_size % spec.num_heads:
        raise ValueError(
            f"model.tiny: hidden_size {spec.hidden_size} is not divisible by num_heads {spec.num_heads}; "
            "pick num_heads dividing hidden_size"
        )
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=spec.hidden_size,
        intermediate_size=spec.intermediate_size or 3 * spec.hidden_size,
        num_hidden_layers=spec.num_layers,
        num_attention_heads=spec.num_heads,
        num_key_value_heads=spec.num_heads,
        max_position_embeddings=spec.max_positions,
        tie_word_embeddings=True,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=tokenizer.eos_token_id,
        use_cache=True,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = LlamaForCausalLM(config)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.bos_token_id = tokenizer.eos_token_id
    return model


def save_pretrained(model: PreTrainedModel, tokenizer: PreTrainedTokenizerFast, path: str | Path) -> Path:
    """Save model and tokenizer to ``path`` so ``from_pretrained(path)`` (TRL's reference model, vLLM) works."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def load_tokenizer(path: str | Path) -> PreTrainedTokenizerFast:
    """Load a tokenizer saved by :func:`save_pretrained` exactly as it was built.

    ``AutoTokenizer`` may substitute the architecture's registered tokenizer class (transformers 5
    does so for every ``qwen2`` folder), which re-tokenizes a character vocabulary; this never does.
    """
    from transformers import PreTrainedTokenizerFast

    return PreTrainedTokenizerFast.from_pretrained(str(path))


def count_parameters(model: PreTrainedModel) -> int:
    """Number of distinct parameters (tied embeddings counted once)."""
    return sum(p.numel() for p in model.parameters())
