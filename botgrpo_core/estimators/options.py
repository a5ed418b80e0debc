"""Option checks shared by the built-in estimators (choices, positivity, non-finite rewards)."""

from __future__ import annotations

from typing import Any

from torch import Tensor

_STD_CHOICES = ("bessel", "population")
_NAN_CHOICES = ("raise", "mask")
_SCOPE_CHOICES = ("group", "batch")


def _choice(estimator: str, option: str, value: Any, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(
            f"estimator {estimator!r}: option {option}={value!r} is not one of {', '.join(choices)}"
        )


def _positive(estimator: str, option: str, value: Any, *, allow_zero: bool = False) -> None:
    ok = (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and (value >= 0 if allow_zero else value > 0)
    )
    if not ok:
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"estimator {estimator!r}: option {option} must be a number {bound}, got {value!r}")


# --------------------------------------------------------------------------------------------------
# Moments: the (B, 3) summary a distributed trainer gathers instead of (B, T)
# --------------------------------------------------------------------------------------------------


def _bad_rows_error(what: str, bad: Tensor) -> ValueError:
    rows = bad.nonzero().flatten().tolist()
    shown = ", ".join(map(str, rows[:20])) + (", ..." if len(rows) > 20 else "")
    return ValueError(
        f"{what}: non-finite (NaN/inf) token rewards on valid tokens of rollout(s) {shown} "
        f"({len(rows)} in all). Fix the signal that produced them (check its on_error policy), or pass "
        "nan_policy='mask' to give those rollouts advantage 0 and leave them out of the group statistics. "
        "Finite rewards become inf when they overflow float32 (|r| or a difference of two rewards over "
        f"{_F32_MAX:.1e}, e.g. signal values times rewards.alpha/beta and the weights): rescale them, e.g. a "
        "smaller signal weight, so that |r| stays below ~1e37 (advantages do not change with the scale)."
    )


#: the largest float32 (token rewards are float32 tensors)
_F32_MAX = 3.4028234663852886e38
