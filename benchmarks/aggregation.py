"""Benchmark: BoT advantage aggregation against the memory-bandwidth floor.

For 512 rollouts x 4096 tokens and 64 x 32768 (ragged lengths, groups of 8) it times
``compute_advantages("bot", ...)`` and prints, each as a ratio, median over interleaved repeats:

- ``bot / floor``: the floor is ONE fused elementwise pass over the same tensors (read r and m once, write
  one float32 ``(B, T)``): ``(r - c) * m`` compiled into a single kernel by ``torch.compile`` (when a C++
  compiler is available) or eager ``torch.where(m, r, c)`` (one kernel, the same memory traffic),
  whichever is faster in this run; target ratio <= 3.
- ``bot / eager``: the same expression in eager PyTorch, ``(r - c) * m`` as written (two kernels and a
  bool->float promotion), for readers who compare against plain PyTorch.
- ``bot / grpo``: against the outcome-only ``grpo`` estimator on the same inputs.

It also checks that the number of aten ops per call does not depend on B or T (``TorchDispatchMode``:
no Python loop over rows or tokens) and, with the profiler's memory records (inner allocations
included), that no ``(B, T)`` buffer of 8 bytes a token (float64) is allocated; it lists the ``(B, T)``
buffers that are.

Usage::

    python benchmarks/aggregation.py [--repeats 31] [--no-compile]

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
from torch.profiler import ProfilerActivity, profile
from torch.utils._python_dispatch import TorchDispatchMode

from botgrpo_core.estimators.compute import compute_advantages

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


class _OpCount(TorchDispatchMode):
    """Counts the aten ops a call dispatches (a Python loop over rows/tokens would scale them)."""

    def __init__(self) -> None:
        super().__init__()
        self.ops = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        self.ops += 1
        return func(*args, **(kwargs or {}))


def op_count(batch: int, tokens: int) -> int:
    r, m, _ = make_inputs(batch, tokens)
    with _OpCount() as mode:
        compute_advantages("bot", r, m, group_size=GROUP_SIZE)
    return mode.ops


def big_allocations(batch: int, tokens: int) -> list[tuple[str, int]]:
    """Every allocation of at least B*T bytes during one call, as (op, bytes), inner ones included
    (e.g. the int32 copy ``mask.sum(dtype=int32)`` makes inside its kernel), from the profiler."""
    r, m, _ = make_inputs(batch, tokens)
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        compute_advantages("bot", r, m, group_size=GROUP_SIZE)
    return [
        (e.name, e.self_cpu_memory_usage) for e in prof.events() if e.self_cpu_memory_usage >= batch * tokens
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=31)
    parser.add_argument("--no-compile", action="store_true", help="skip the torch.compile floor candidate")
    args = parser.parse_args()
    torch.set_num_threads(1)

    small, large = op_count(64, 256), op_count(128, 1024)
    if small != large:
        print(f"FAIL: op count depends on the shape ({small} vs {large}): a Python loop over rows/tokens")
        return 1
    batch, tokens = 128, 1024
    allocs = big_allocations(batch, tokens)
    wide = [(op, n) for op, n in allocs if n >= 8 * batch * tokens]  # float64/int64 (B, T) or bigger
    if wide:
        print(f"FAIL: (B, T) temporaries of 8 bytes a token: {wide}")
        return 1
    listed = ", ".join(f"{op.removeprefix('aten::')}:{n // (batch * tokens)}B/token" for op, n in allocs)
    print(f"ops per call: {large} (same at 64x256 and 128x1024)")
    print(f"(B, T) buffers allocated per call: {len(allocs)} [{listed}]; none of 8 bytes a token")

    compiled = None if args.no_compile else _compiled_floor()
    print(f"threads: {torch.get_num_threads()}, repeats: {args.repeats}, group size: {GROUP_SIZE}")
    print("ms: medians; compiled = (r - c) * m as one torch.compile kernel, select = where(m, r, c),")
    print("eager = (r - c) * m in eager PyTorch; floor = min(compiled, select)")
    print(
        f"{'shape':>12} {'compiled':>8} {'select':>7} {'eager':>7} {'grpo':>7} {'bot':>7} "
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
            fns["compiled"] = lambda r=r, c=c, m=m: compiled(r, c, m)
        fns["select"] = lambda r=r, c=c, m=m: torch.where(m, r, c)
        med = interleaved_medians(fns, args.repeats)
        # the floor: the fastest single kernel that reads r and m once and writes one float32 (B, T)
        floor = min(med.get("compiled", float("inf")), med["select"])
        ratio = med["bot"] / floor
        worst = max(worst, ratio)
        ms = {k: v * 1e3 for k, v in med.items()}
        print(
            f"{batch:>5}x{tokens:<6} {ms.get('compiled', float('nan')):8.2f} {ms['select']:7.2f} "
            f"{ms['eager']:7.2f} {ms['grpo']:7.2f} {ms['bot']:7.2f} {ratio:9.2f} "
            f"{med['bot'] / med['eager']:9.2f} {med['bot'] / med['grpo']:8.2f}"
        )
    verdict = "meets" if worst <= TARGET else "MISSES"
    print(f"worst bot/floor: {worst:.2f} -> {verdict} the target <= {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
