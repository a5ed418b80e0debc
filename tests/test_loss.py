"""policy_loss: aggregation formulas, (B,) vs (B, T) advantages, gradients vs a hand-written surrogate."""

from __future__ import annotations

import math
from itertools import product

import pytest
import torch

from botgrpo_core.config.presets import PRESETS
from botgrpo_core.loss import policy_loss

torch.set_num_threads(1)

AGGREGATIONS = ["sequence", "token", "constant"]
RATIO_LEVELS = ["token", "sequence"]


def make_batch(seed: int = 0, batch: int = 5, tokens: int = 7) -> dict[str, torch.Tensor]:
    """Ragged batch with ratios spread well beyond the clip range; -inf log-probs on padding."""
    g = torch.Generator().manual_seed(seed)
    lengths = torch.tensor([tokens, 3, 1, 0, 5])[:batch]
    mask = torch.arange(tokens)[None, :] < lengths[:, None]
    old = -torch.rand(batch, tokens, generator=g) * 3
    logp = old + torch.randn(batch, tokens, generator=g) * 0.4
    ref = old + torch.randn(batch, tokens, generator=g) * 0.3
    for t in (old, logp, ref):
        t[~mask] = float("-inf")  # what a padded log-softmax gather can hold
    adv_tok = torch.randn(batch, tokens, generator=g)
    adv_seq = torch.randn(batch, generator=g)
    return {"logp": logp, "old": old, "ref": ref, "mask": mask, "adv_tok": adv_tok, "adv_seq": adv_seq}


# ---- plain-loop float64 reference of the whole loss ---------------------------------------------------


def loss_ref(
    logp: torch.Tensor,
    old: torch.Tensor,
    adv: torch.Tensor,
    mask: torch.Tensor,
    *,
    ref: torch.Tensor | None = None,
    eps_low: float = 0.2,
    eps_high: float = 0.2,
    kl_coef: float = 0.0,
    ratio_level: str = "token",
    aggregation: str = "sequence",
    max_len: int | None = None,
) -> float:
    batch, tokens = logp.shape
    per_row: list[list[float]] = []
    for i in range(batch):
        valid = [t for t in range(tokens) if mask[i, t]]
        seq_ratio = math.exp(sum(float(logp[i, t] - old[i, t]) for t in valid) / max(len(valid), 1))
        row = []
        for t in valid:
            ratio = math.exp(float(logp[i, t] - old[i, t])) if ratio_level == "token" else seq_ratio
            a = float(adv[i, t]) if adv.dim() == 2 else float(adv[i])
            clipped = min(max(ratio, 1 - eps_low), 1 + eps_high)
            value = -min(ratio * a, clipped * a)  # PPO: pessimistic bound
            if kl_coef:
                d = float(ref[i, t] - logp[i, t])  # type: ignore[index]
                value += kl_coef * (math.exp(d) - d - 1)
            row.append(value)
        per_row.append(row)
    if aggregation == "sequence":
        return sum(sum(r) / max(len(r), 1) for r in per_row) / batch
    total = sum(sum(r) for r in per_row)
    if aggregation == "token":
        return total / max(sum(len(r) for r in per_row), 1)
    return total / (batch * (max_len or tokens))


@pytest.mark.parametrize(("aggregation", "ratio_level"), list(product(AGGREGATIONS, RATIO_LEVELS)))
@pytest.mark.parametrize("adv_key", ["adv_tok", "adv_seq"])
@pytest.mark.parametrize("kl_coef", [0.0, 0.1])
def test_each_aggregation_matches_its_formula(
    aggregation: str, ratio_level: str, adv_key: str, kl_coef: float
) -> None:
    b = make_batch(1)
    kw = {
        "eps_low": 0.2,
        "eps_high": 0.28,
        "kl_coef": kl_coef,
        "ratio_level": ratio_level,
        "aggregation": aggregation,
    }
    if aggregation == "constant":
        kw["max_len"] = 12
    loss, _ = policy_loss(b["logp"], b["old"], b[adv_key], b["mask"], ref_logp=b["ref"], **kw)
    expected = loss_ref(b["logp"], b["old"], b[adv_key], b["mask"], ref=b["ref"], **kw)
    assert loss.item() == pytest.approx(expected, rel=1e-5, abs=1e-6)


def test_constant_defaults_to_padded_width() -> None:
    b = make_batch(2)
    loss, _ = policy_loss(b["logp"], b["old"], b["adv_seq"], b["mask"], aggregation="constant")
    assert loss.item() == pytest.approx(
        loss_ref(b["logp"], b["old"], b["adv_seq"], b["mask"], aggregation="constant")
    )


# ---- (B, T) constant per row == (B,) -----------------------------------------------------------------


@pytest.mark.parametrize(("aggregation", "ratio_level"), list(product(AGGREGATIONS, RATIO_LEVELS)))
def test_row_constant_token_advantages_equal_sequence_advantages(aggregation: str, ratio_level: str) -> None:
    b = make_batch(3)
    per_row = b["adv_seq"]
    per_token = per_row[:, None].expand_as(b["logp"]).clone()
    kw = {"ratio_level": ratio_level, "aggregation": aggregation, "kl_coef": 0.05, "ref_logp": b["ref"]}
    logp1 = b["logp"].clone().requires_grad_(True)
    logp2 = b["logp"].clone().requires_grad_(True)
    loss1, m1 = policy_loss(logp1, b["old"], per_row, b["mask"], **kw)
    loss2, m2 = policy_loss(logp2, b["old"], per_token, b["mask"], **kw)
    loss1.backward()
    loss2.backward()
    assert loss1.item() == pytest.approx(loss2.item(), abs=1e-7)
    assert torch.allclose(logp1.grad, logp2.grad, atol=1e-7)
    for key in m1:
        assert m1[key].item() == pytest.approx(m2[key].item(), abs=1e-7), key


def test_sequence_ratio_equals_token_ratio_when_log_ratio_is_constant_per_row() -> None:
    b = make_batch(4)
    shift = torch.tensor([0.5, -0.4, 0.1, 0.0, 0.25])[:, None]  # one log-ratio per rollout
    logp = torch.where(b["mask"], b["old"] + shift, b["old"])
    tok, mt = policy_loss(logp, b["old"], b["adv_tok"], b["mask"], ratio_level="token")
    seq, ms = policy_loss(logp, b["old"], b["adv_tok"], b["mask"], ratio_level="sequence")
    assert tok.item() == pytest.approx(seq.item(), abs=1e-6)
    assert mt["ratio_mean"].item() == pytest.approx(ms["ratio_mean"].item(), abs=1e-6)


def test_gspo_gradient_equals_grpo_gradient_on_policy() -> None:
    """One update per rollout batch (old = logp): every ratio is 1, so with outcome (per-row) advantages and the
    sequence mean, d/dlogp of GSPO's s_i = exp(mean_t log r) is GRPO's mean_t d/dlogp of r_t: the same step.
    Zheng et al. 2025 (GSPO, arXiv:2507.18071), its gradient analysis; the real-model bench's GSPO run repeats GRPO's rollouts."""
    b = make_batch(6)
    old = b["logp"].detach()
    grads = []
    for preset in (PRESETS["grpo"], PRESETS["gspo"]):  # each with its own ratio level and clip range
        logp = old.clone().requires_grad_(True)
        loss, _ = policy_loss(
            logp,
            old,
            b["adv_seq"],
            b["mask"],
            ratio_level=preset.ratio_level,
            eps_low=preset.eps_low,
            eps_high=preset.eps_high,
        )
        loss.backward()
        grads.append(logp.grad[b["mask"]])
    assert grads[0].abs().sum() > 0
    assert torch.allclose(grads[0], grads[1], atol=1e-7)


def test_gspo_ratio_is_exp_of_mean_log_ratio() -> None:
    b = make_batch(5)
    _, metrics = policy_loss(b["logp"], b["old"], b["adv_seq"], b["mask"], ratio_level="sequence")
    num, den = 0.0, 0
    for i in range(5):
        valid = b["mask"][i]
        if valid.any():
            s = math.exp(float((b["logp"][i][valid] - b["old"][i][valid]).mean()))
            num += s * int(valid.sum())
            den += int(valid.sum())
    assert metrics["ratio_mean"].item() == pytest.approx(num / den, rel=1e-6)


# ---- gradient vs a hand-written surrogate ---------------------------------------------------------------


def hand_gradient(
    b: dict[str, torch.Tensor],
    adv: torch.Tensor,
    *,
    eps_low: float,
    eps_high: float,
    kl_coef: float,
    ratio_level: str,
    aggregation: str,
    max_len: int | None = None,
) -> torch.Tensor:
    """d loss / d logp written out: the unclipped branch passes -A * dratio, the clipped one nothing."""
    logp, old, mask = b["logp"].double(), b["old"].double(), b["mask"]
    batch, tokens = logp.shape
    grad = torch.zeros(batch, tokens, dtype=torch.float64)
    lengths = mask.sum(1)
    n_tokens = int(lengths.sum())
    for i in range(batch):
        valid = [t for t in range(tokens) if mask[i, t]]
        if not valid:
            continue
        seq_log = sum(float(logp[i, t] - old[i, t]) for t in valid) / len(valid)
        for t in valid:
            # weight of token (i, t)'s loss term in the aggregate
            w = {
                "sequence": 1.0 / (len(valid) * batch),
                "token": 1.0 / n_tokens,
                "constant": 1.0 / (batch * (max_len or tokens)),
            }[aggregation]
            a = float(adv[i, t]) if adv.dim() == 2 else float(adv[i])
            if ratio_level == "token":
                ratio = math.exp(float(logp[i, t] - old[i, t]))
                clipped_out = (a > 0 and ratio > 1 + eps_high) or (a < 0 and ratio < 1 - eps_low)
                if not clipped_out:
                    grad[i, t] += w * -a * ratio  # d(-A r)/dlogp = -A r
            else:
                ratio = math.exp(seq_log)
                clipped_out = (a > 0 and ratio > 1 + eps_high) or (a < 0 and ratio < 1 - eps_low)
                if not clipped_out:
                    for u in valid:  # d s_i / d logp[i, u] = s_i / L_i
                        grad[i, u] += w * -a * ratio / len(valid)
            if kl_coef:
                d = float(b["ref"][i, t] - logp[i, t])
                grad[i, t] += w * kl_coef * (1.0 - math.exp(d))  # d k3 / d logp
    return grad


@pytest.mark.parametrize(("aggregation", "ratio_level"), list(product(AGGREGATIONS, RATIO_LEVELS)))
@pytest.mark.parametrize("adv_key", ["adv_tok", "adv_seq"])
def test_gradient_matches_hand_written_surrogate(aggregation: str, ratio_level: str, adv_key: str) -> None:
    b = make_batch(6)
    kw = {
        "eps_low": 0.2,
        "eps_high": 0.28,
        "kl_coef": 0.07,
        "ratio_level": ratio_level,
        "aggregation": aggregation,
    }
    if aggregation == "constant":
        kw["max_len"] = 10
    logp = b["logp"].clone().requires_grad_(True)
    loss, _ = policy_loss(logp, b["old"], b[adv_key], b["mask"], ref_logp=b["ref"], **kw)
    loss.backward()
    expected = hand_gradient(b, b[adv_key], **kw)
    assert torch.isfinite(logp.grad).all()
    assert torch.allclose(logp.grad.double(), expected, atol=1e-6)
    assert (logp.grad[~b["mask"]] == 0).all()


def test_some_tokens_are_clipped_in_the_gradient_test() -> None:
    """Guard for the test above: the batch really exercises both clipped branches."""
    b = make_batch(6)
    ratio = torch.exp(b["logp"] - b["old"])[b["mask"]]
    assert (ratio > 1.28).any() and (ratio < 0.8).any()


# ---- metrics -----------------------------------------------------------------------------------------


def test_metrics_match_hand_counts() -> None:
    b = make_batch(7)
    _, metrics = policy_loss(
        b["logp"], b["old"], b["adv_tok"], b["mask"], ref_logp=b["ref"], eps_low=0.2, eps_high=0.28
    )
    low = high = count = 0
    ratios, approx, kls = [], [], []
    for i, t in zip(*torch.nonzero(b["mask"], as_tuple=True), strict=True):
        lr = float(b["logp"][i, t] - b["old"][i, t])
        r, a = math.exp(lr), float(b["adv_tok"][i, t])
        low += r < 0.8 and a < 0
        high += r > 1.28 and a > 0
        count += 1
        ratios.append(r)
        approx.append(r - 1 - lr)
        d = float(b["ref"][i, t] - b["logp"][i, t])
        kls.append(math.exp(d) - d - 1)
    assert metrics["clip_frac_low"].item() == pytest.approx(low / count)
    assert metrics["clip_frac_high"].item() == pytest.approx(high / count)
    assert metrics["clip_frac"].item() == pytest.approx((low + high) / count)
    assert metrics["ratio_mean"].item() == pytest.approx(sum(ratios) / count, rel=1e-6)
    assert metrics["approx_kl"].item() == pytest.approx(sum(approx) / count, rel=1e-5)
    assert metrics["kl"].item() == pytest.approx(sum(kls) / count, rel=1e-5)
    assert all(v.dim() == 0 and not v.requires_grad for v in metrics.values())
    _, no_ref = policy_loss(b["logp"], b["old"], b["adv_tok"], b["mask"])
    assert "kl" not in no_ref


def test_on_policy_loss_is_minus_mean_advantage() -> None:
    """At ratio 1 (first step on fresh samples) the loss is -mean(A) and nothing is clipped."""
    b = make_batch(8)
    loss, metrics = policy_loss(b["old"], b["old"], b["adv_tok"], b["mask"], aggregation="token")
    assert loss.item() == pytest.approx(-b["adv_tok"][b["mask"]].mean().item(), rel=1e-6)
    assert metrics["clip_frac"].item() == 0.0 and metrics["approx_kl"].item() == 0.0


def test_all_padding_gives_zero_loss_and_finite_gradient() -> None:
    b = make_batch(9)
    mask = torch.zeros_like(b["mask"])
    logp = b["logp"].clone().requires_grad_(True)
    loss, metrics = policy_loss(logp, b["old"], b["adv_tok"], mask, ref_logp=b["ref"], kl_coef=0.1)
    loss.backward()
    assert loss.item() == 0.0 and torch.equal(logp.grad, torch.zeros_like(logp.grad))
    assert all(torch.isfinite(v) for v in metrics.values())


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"aggregation": "mean"}, "aggregation='mean' is not one of sequence, token, constant"),
        ({"ratio_level": "seq"}, "ratio_level='seq'"),
        ({"eps_low": 1.0}, r"policy_loss: eps_low=1.0 must lie in \[0, 1\)"),
        ({"eps_high": -0.1}, "eps_high=-0.1 must be >= 0"),
        ({"kl_coef": 0.1}, "kl_coef > 0 needs ref_logp"),
        ({"kl_coef": -1.0}, "kl_coef=-1.0 must be >= 0"),
        ({"max_len": 3, "aggregation": "constant"}, "max_len=3 is shorter than the batch's T=7"),
    ],
)
def test_bad_settings_are_explained(kwargs: dict, message: str) -> None:
    b = make_batch(0)
    with pytest.raises(ValueError, match=message):
        policy_loss(b["logp"], b["old"], b["adv_seq"], b["mask"], **kwargs)


def test_bad_shapes_are_explained() -> None:
    b = make_batch(0)
    with pytest.raises(ValueError, match=r"advantages must be \(B,\) = \(5,\) or \(B, T\) = \(5, 7\)"):
        policy_loss(b["logp"], b["old"], b["adv_seq"][:3], b["mask"])
    with pytest.raises(ValueError, match=r"old_logp shape \(5, 6\) != logp shape \(5, 7\)"):
        policy_loss(b["logp"], b["old"][:, :6], b["adv_seq"], b["mask"])
