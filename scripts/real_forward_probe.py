"""Is SmolLM2's forward and backward bit-reproducible on this host? (issue 37's determinism check)

    python scripts/real_forward_probe.py --threads 2    # run it twice, or with --threads 1, and compare the lines

One forward and backward of the real model (the float32 folder ``botgrpo train`` uses) on a fixed batch of random
token ids: prints a hash of the logits, the mean next-token log-likelihood and the gradient norm (float64). Equal
lines from separate processes mean the CPU kernels are deterministic here; a re-run of a bench seed that drifts on
another host (``scripts/real_determinism.py``) then drifts because of the host, not the process.
"""

from __future__ import annotations

import argparse
import hashlib


def probe(
    threads: int, batch: int = 8, length: int = 200, model: str = "smollm2-135m-instruct"
) -> dict[str, object]:
    """One fixed-batch forward and backward; returns ``logits_sha256`` (16 hex digits), ``loglik``, ``grad_norm``."""
    import torch
    from transformers import AutoModelForCausalLM

    from botgrpo_core.engine.named_models import materialize

    torch.set_num_threads(threads)
    net = AutoModelForCausalLM.from_pretrained(materialize(model), dtype=torch.float32)
    ids = torch.randint(0, net.config.vocab_size, (batch, length), generator=torch.Generator().manual_seed(1))
    logits = net(input_ids=ids).logits  # (B, T, V)
    loglik = logits.log_softmax(-1)[:, :-1].gather(-1, ids[:, 1:, None]).mean()  # next-token log-likelihood
    loglik.backward()
    grad_norm = torch.sqrt(sum((p.grad.double() ** 2).sum() for p in net.parameters() if p.grad is not None))
    return {
        "threads": torch.get_num_threads(),
        "logits_sha256": hashlib.sha256(logits.detach().numpy().tobytes()).hexdigest()[:16],
        "loglik": loglik.item(),
        "grad_norm": float(grad_norm),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    from botgrpo_bench.machine import machine_note

    print(machine_note())
    print(" ".join(f"{k} {v!r}" for k, v in probe(args.threads).items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
