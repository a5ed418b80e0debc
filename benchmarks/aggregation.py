"""Benchmark: BoT advantage aggregation against the memory-bandwidth floor.

For 512 rollouts x 4096 tokens and 64 x 32768 (ragged lengths, groups of 8) it times
``compute_advantages("bot", ...)`` and prints, each as a ratio, median over interleaved repeats:

- ``bot / floor``: the floor is ONE fused elementwise pass ``(r - c) * m`` over the same tensors (read
  r and m once, write once), compiled by ``torch.compile`` into a single kernel when a C++ compiler is
  available; target ratio <= 3.
- ``bot / eager``: the same expression in eager PyTorch, ``(r - c) * m`` as written (two kernels and a
  bool->float promotion), for readers who compare against plain PyTorch.
- ``bot / grpo``: against the outcome-only ``grpo`` estimator on the same inputs.

It also checks, by intercepting every aten op (``TorchDispatchMode``), that ``bot`` creates no
``(B, T)`` float64 tensor and that the number of ops does not depend on B or T (no Python loop over
rows or tokens), and reports how many ``(B, T)`` tensors it materialises.

Usage::

    python benchmarks/aggregation.py [--repeats 21] [--no-compile]

Single-threaded (``torch.set_num_threads(1)``); other processes on the machine add noise, hence the
interleaving and medians.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from botgrpo_core.advantages import compute_advantages

SHAPES = ((512, 4096), (64, 32768))
GROUP_SIZE = 8
TARGET = 3.0


def make_inputs(batch: int, tokens: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Token rewards alpha*R + beta*S with ragged lengths, a bool mask and a per-row constant."""
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(tokens // 4, tokens + 1, (batch,), generator=g)
    mask = torch.arange(tokens)[None, :] < lengths[:, None]  # (B, T) bool, right padding
    outcome = torch.randint(0, 2, (batch, 1), generator=g).float()  # R in {0, 1}
    local = torch.rand(batch, tokens, generator=g) * 2 - 1  # S in [-1, 1]
    rewards = 1.0 * outcome + 0.25 * local  # (B, T) float32
    c = torch.randn(batch, 1, generator=g)
    return rewards, mask, c


def _eager_floor(r: torch.Tensor, c: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
    return (r - c) * m


def _compiled_floor() -> Callable[..., torch.Tensor] | None:
    try:
        fn = torch.compile(_eager_floor, dynamic=False)
        probe = make_inputs(4, 16)
        fn(probe[0], probe[2], probe[1])
        return fn
    except Exception as err:  # no C++ toolchain, unsupported platform...
        print(
            f"# torch.compile unavailable ({type(err).__name__}); floor falls back to eager", file=sys.stderr
        )
        return None


def interleaved_medians(fns: dict[str, Callable[[], object]], repeats: int) -> dict[str, float]:
    """Median seconds per function, measured round-robin so load spikes hit every candidate alike."""
    for fn in fns.values():  # warm-up (allocator, compile caches)
        fn()
        fn()
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in times.items()}


class _OpAudit(TorchDispatchMode):
    """Counts aten ops and records every output tensor as large as (B, T)."""

    def __init__(self, full: int) -> None:
        super().__init__()
        self.full = full
        self.ops = 0
        self.big: list[tuple[str, torch.dtype]] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        kwargs = kwargs or {}
        seen = {
            a.untyped_storage().data_ptr()
            for a in (*args, *kwargs.values())
            if isinstance(a, torch.Tensor) and a.device.type != "meta"
        }
        out = func(*args, **kwargs)
        self.ops += 1
        for t in out if isinstance(out, (tuple, list)) else (out,):
            # a fresh (B, T) buffer: big, and not a view / in-place result of an input
            if (
                isinstance(t, torch.Tensor)
                and t.numel() >= self.full
                and t.untyped_storage().data_ptr() not in seen
            ):
                self.big.append((str(func), t.dtype))
        return out


def audit(batch: int, tokens: int) -> _OpAudit:
    r, m, _ = make_inputs(batch, tokens)
    with _OpAudit(batch * tokens) as mode:
        compute_advantages("bot", r, m, group_size=GROUP_SIZE)
    return mode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--no-compile", action="store_true", help="use the eager expression as the floor")
    args = parser.parse_args()
    torch.set_num_threads(1)

    small, large = audit(64, 256), audit(128, 1024)
    if small.ops != large.ops:
        print(
            f"FAIL: op count depends on the shape ({small.ops} vs {large.ops}): a Python loop over rows/tokens"
        )
        return 1
    f64 = [op for op, dt in large.big if dt == torch.float64]
    if f64:
        print(f"FAIL: (B, T) float64 temporaries: {f64}")
        return 1
    full_tensors = ", ".join(f"{op.split('.')[1]}:{str(dt).removeprefix('torch.')}" for op, dt in large.big)
    print(f"ops per call: {large.ops} (same at 64x256 and 128x1024); (B, T) float64 tensors: 0")
    print(f"(B, T) tensors materialised per call: {len(large.big)} [{full_tensors}]")

    compiled = None if args.no_compile else _compiled_floor()
    floor_name = "compiled" if compiled is not None else "eager"
    print(f"threads: {torch.get_num_threads()}, repeats: {args.repeats}, group size: {GROUP_SIZE}")
    print(
        f"{'shape':>12} {'floor ms':>9} {'eager ms':>9} {'grpo ms':>8} {'bot ms':>8} "
        f"{'bot/floor':>9} {'bot/eager':>9} {'bot/grpo':>8}"
    )
    worst = 0.0
    for batch, tokens in SHAPES:
        r, m, c = make_inputs(batch, tokens)
        fns: dict[str, Callable[[], object]] = {
            "eager": lambda r=r, c=c, m=m: _eager_floor(r, c, m),
            "grpo": lambda r=r, m=m: compute_advantages("grpo", r, m, group_size=GROUP_SIZE),
            "bot": lambda r=r, m=m: compute_advantages("bot", r, m, group_size=GROUP_SIZE),
        }
        if compiled is not None:
            fns["floor"] = lambda r=r, c=c, m=m: compiled(r, c, m)
        med = interleaved_medians(fns, args.repeats)
        floor = med.get("floor", med["eager"])
        ratio = med["bot"] / floor
        worst = max(worst, ratio)
        print(
            f"{batch:>5}x{tokens:<6} {floor * 1e3:9.2f} {med['eager'] * 1e3:9.2f} {med['grpo'] * 1e3:8.2f} "
            f"{med['bot'] * 1e3:8.2f} {ratio:9.2f} {med['bot'] / med['eager']:9.2f} "
            f"{med['bot'] / med['grpo']:8.2f}"
        )
    verdict = "meets" if worst <= TARGET else "MISSES"
    print(f"worst bot/floor ({floor_name} floor): {worst:.2f} -> {verdict} the target <= {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
