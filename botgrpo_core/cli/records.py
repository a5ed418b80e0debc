"""What ``botgrpo score`` shows, as data: one JSON-ready record per sample, the batch summary, ``--json``.

The terminal view (:mod:`botgrpo_core.cli.terminal_view`) and the HTML page (:mod:`botgrpo_core.cli.html_view`)
start from :func:`sample_records`, so they show exactly what ``--json`` prints; the colour map and the
display pieces they share live here too.
"""

from __future__ import annotations

import base64
import json
import math
import unicodedata
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from botgrpo_core.signals import SampleError, Span, TokenValues

if TYPE_CHECKING:
    from botgrpo_core.cli.score import ScoreReport

#: Diverging colour map ends (ColorBrewer RdBu, readable for red-green colour blindness).
NEGATIVE_RGB = (178, 24, 43)
NEUTRAL_RGB = (247, 247, 247)
POSITIVE_RGB = (33, 102, 172)
DROPPED_RGB = (150, 150, 150)
MAX_SPANS_SHOWN = 20
#: Largest PNG a record carries (a ``bytes`` meta value, e.g. jsx.visual's screenshot); larger ones become a note.
MAX_IMAGE_BYTES = 1 << 20
_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


# --- records -------------------------------------------------------------------------------------------------------
def _num(value: float) -> float | None:
    """A float for JSON: NaN and infinities become ``None`` (JSON has no NaN)."""
    value = float(value)
    return value if math.isfinite(value) else None


def _error(result: Any) -> dict[str, str] | None:
    return {"message": str(result), "reason": result.reason} if isinstance(result, SampleError) else None


def _meta_value(value: Any) -> Any:
    """A meta value for a record: a PNG (``bytes``, at most ``MAX_IMAGE_BYTES``) becomes
    ``{"png_base64": ..., "bytes": n}``, which ``--html`` shows as an image; other bytes become a note."""
    if not isinstance(value, (bytes, bytearray, memoryview)):
        return value
    data = bytes(value)
    if not data.startswith(_PNG_MAGIC):
        return f"<{len(data)} bytes, not a PNG>"
    if len(data) > MAX_IMAGE_BYTES:
        return f"<PNG of {len(data)} bytes, over the {MAX_IMAGE_BYTES} byte limit>"
    return {"png_base64": base64.b64encode(data).decode("ascii"), "bytes": len(data)}


def _meta_record(meta: Any) -> dict[str, Any]:
    return {str(k): _meta_value(v) for k, v in meta.items()} if meta else {}


def is_image(value: Any) -> bool:
    """Whether a record's meta value is an image made by :func:`_meta_value`."""
    return (
        isinstance(value, dict)
        and set(value) == {"png_base64", "bytes"}
        and isinstance(value["png_base64"], str)
        and type(value["bytes"]) is int
    )


def _span_record(span: Span, completion: str) -> dict[str, Any]:
    return {
        "start": span.start,
        "end": span.end,
        "text": completion[span.start : span.end],
        "value": span.value,
        "meta": _meta_record(span.meta),
    }


def sample_records(report: ScoreReport, max_tokens: int | None = None) -> list[dict[str, Any]]:
    """Per sample: tokens with character offsets, each signal's values, token rewards and advantages.

    Lists run over the sample's completion tokens only (no padding). A rollout dropped by an
    ``on_error: nan`` policy has ``valid: false`` and ``null`` token rewards; ``truncated: true`` marks a
    completion the length cap cut (the row said so). With ``max_tokens`` a longer completion keeps its first
    ``max_tokens`` tokens, the text and spans up to them (``shown_tokens`` < ``n_tokens``; ``--html``).
    """
    out = report.output
    signal_values = {name: o.values for name, o in out.signals.items()}
    indices = report.row_indices or list(range(len(report.samples)))
    records = []
    for i, sample in enumerate(report.samples):
        total = len(sample.offsets)
        n = total if max_tokens is None else min(total, max_tokens)
        shown_chars = len(sample.completion) if n == total else (sample.offsets[n - 1][1] if n else 0)
        completion = sample.completion[:shown_chars]
        tokens = [
            {
                "t": t,
                "id": int(sample.token_ids[t]) if t < len(sample.token_ids) else None,
                "piece": report.token_labels[i][t] if t < len(report.token_labels[i]) else "",
                "start": int(start),
                "end": int(end),
                "text": sample.completion[start:end],
            }
            for t, (start, end) in enumerate(sample.offsets[:n])
        ]
        signals: dict[str, Any] = {}
        for name, o in out.signals.items():
            result = o.results[i]
            entry: dict[str, Any] = {"kind": o.kind, "weight": o.weight, "error": _error(result)}
            if o.kind == "global":
                entry["value"] = None if o.failed[i] else float(result)
                entry["meta"] = _meta_record(o.meta[i] if o.meta else None)
            else:
                entry["token_values"] = [_num(v) for v in signal_values[name][i, :n].tolist()]
                spans = [s for s in result if s.start < shown_chars] if isinstance(result, list) else []
                entry["spans"] = [_span_record(s, sample.completion) for s in spans]
                entry["per_token"] = isinstance(result, TokenValues)
            signals[name] = entry
        record = {
            "index": indices[i],
            "group": report.group_ids[i],
            "prompt": sample.prompt,
            "completion": completion,
            "truncated": bool(sample.truncated),
            "valid": bool(out.valid[i]),
            "outcome": _num(out.outcome[i]),
            "tokens": tokens,
            "signals": signals,
            "token_rewards": [_num(v) for v in out.token_rewards[i, :n].tolist()],
            "advantages": [_num(v) for v in report.advantages[i, :n].tolist()],
        }
        if n < total:
            record["shown_tokens"], record["n_tokens"] = n, total
        records.append(record)
    return records


def summary(report: ScoreReport) -> dict[str, Any]:
    """Run-level facts and per-signal statistics (mean, error fractions by reason, cache hits)."""
    rewards = report.config.rewards
    batch = max(len(report.samples), 1)
    signals = {}
    for name, o in report.output.signals.items():
        signals[name] = {
            "kind": o.kind,
            "weight": o.weight,
            "mean": _num(report.output.metrics.get(f"signals/{name}/mean", float("nan"))),
            "error_frac": sum(o.failed) / batch,
            "errors": dict(o.reasons),
            "cache_hits": o.cache_hits,
        }
    return {
        "rows": len(report.samples),
        "groups": len(set(report.group_ids)),
        "tokenizer": report.tokenizer_name,
        "preset": report.config.algorithm.preset,
        "estimator": report.estimator,
        "alpha": rewards.alpha,
        "beta": rewards.beta,
        "valid_frac": report.output.metrics.get("reward/valid_frac"),
        "truncated": sum(bool(s.truncated) for s in report.samples),  # rows the length cap cut
        "signals": signals,
        "notes": list(report.notes),
    }


class SummaryTotals:
    """:func:`summary` over many chunks of rows (``botgrpo score`` streams its input): counts add up, each
    signal's mean is weighted by the samples it did not fail on."""

    MAX_NOTES = 50

    def __init__(self) -> None:
        self.info: dict[str, Any] | None = None
        self._sums: dict[str, tuple[float, float]] = {}  # signal: (sum of means x n ok, n ok)
        self._valid = 0.0
        self._notes = 0

    def add(self, report: ScoreReport) -> None:
        part = summary(report)
        rows = part["rows"]
        if self.info is None:
            self.info = {**part, "rows": 0, "groups": 0, "notes": [], "truncated": 0}
            self.info["signals"] = {
                n: {**s, "errors": {}, "cache_hits": 0} for n, s in part["signals"].items()
            }
        info = self.info
        for name, s in part["signals"].items():
            total = info["signals"][name]
            failed = s["error_frac"] * rows
            total["error_frac"] = (total["error_frac"] * info["rows"] + failed) / max(info["rows"] + rows, 1)
            for reason, count in s["errors"].items():
                total["errors"][reason] = total["errors"].get(reason, 0) + count
            total["cache_hits"] += s["cache_hits"]
            weighted, ok = self._sums.get(name, (0.0, 0.0))
            if s["mean"] is not None and rows - failed > 0:
                weighted, ok = weighted + s["mean"] * (rows - failed), ok + rows - failed
            self._sums[name] = (weighted, ok)
            total["mean"] = _num(weighted / ok) if ok else None
        self._valid += (part["valid_frac"] if part["valid_frac"] is not None else 1.0) * rows
        info["rows"] += rows
        info["groups"] += part["groups"]
        info["valid_frac"] = self._valid / max(info["rows"], 1)
        info["truncated"] += part["truncated"]
        self._notes += len(part["notes"])
        room = self.MAX_NOTES - len(info["notes"])
        info["notes"] += part["notes"][: max(room, 0)]

    def result(self) -> dict[str, Any]:
        """The summary of every chunk added (the last note counts the ones left out)."""
        assert self.info is not None, "no chunk added"
        info = dict(self.info)
        if self._notes > len(info["notes"]):
            info["notes"] = [*info["notes"], f"... and {self._notes - len(info['notes'])} more notes"]
        return info


def dump_json(value: Any) -> str:
    """Strict JSON (no NaN) of a record or summary; ``default=str`` shows span meta JSON cannot hold."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False, default=str)


def render_json(report: ScoreReport) -> str:
    """``{"samples": [...], "summary": {...}}`` as strict JSON (no NaN), one sample per line (the summary
    last: ``botgrpo score`` streams the samples chunk by chunk and sums the summary up at the end)."""
    return json_samples(report, first=True) + json_end(summary(report))


def json_samples(report: ScoreReport, *, first: bool) -> str:
    """The samples of one chunk for ``--json`` (with the document's opening when ``first``)."""
    lines = ",\n".join(dump_json(r) for r in sample_records(report))
    return ('{"samples": [\n' if first else ",\n") + lines


def json_end(info: dict[str, Any]) -> str:
    """The close of ``--json``'s document: the summary."""
    return '\n],\n"summary": ' + dump_json(info) + "}"


# --- shared display helpers ----------------------------------------------------------------------------------------
def _scale(rows: Sequence[Sequence[float | None]]) -> float:
    """Largest absolute finite value (1 when all are zero): the colour scale is symmetric around 0."""
    peak = max((abs(v) for row in rows for v in row if v is not None), default=0.0)
    return peak if peak > 0 else 1.0


def color_for(value: float | None, scale: float) -> tuple[int, int, int]:
    """Diverging colour: negative towards red, positive towards blue, 0 near white, ``None`` grey."""
    if value is None:
        return DROPPED_RGB
    x = max(-1.0, min(1.0, value / scale))
    end = POSITIVE_RGB if x > 0 else NEGATIVE_RGB
    return tuple(round(n + abs(x) * (e - n)) for n, e in zip(NEUTRAL_RGB, end))  # type: ignore[return-value]


def _dark(rgb: tuple[int, int, int]) -> bool:
    return 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2] < 140


def _display_pieces(record: dict[str, Any]) -> list[tuple[str, str]]:
    """Per token ``(text, kind)`` for display: each character once (byte-level tokens may share one),
    ``kind`` is ``text``, ``special`` (empty range: shows the tokenizer piece) or ``shared``."""
    pieces = []
    shown_until = 0
    completion = record["completion"]
    for tok in record["tokens"]:
        start, end = max(tok["start"], shown_until), tok["end"]
        if tok["start"] == tok["end"]:
            pieces.append((tok["piece"] or "∅", "special"))
        elif start >= end:
            pieces.append(("·", "shared"))
        else:
            pieces.append((completion[start:end], "text"))
        shown_until = max(shown_until, end)
    return pieces


def _meta_text(value: Any) -> str:
    """A span meta value as text: strings as they are, anything else as JSON (as ``--json`` shows it)."""
    if is_image(value):
        return f"<PNG, {value['bytes']} bytes>"
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _fmt(value: float | None) -> str:
    return "nan" if value is None else f"{value:+.3g}"


# --- terminal --------------------------------------------------------------------------------------------------
def safe_text(text: str) -> str:
    """Model text made safe for a terminal: control/format characters shown as escapes (keeps ``\\n``)."""
    out = []
    for ch in text:
        if ch == "\n":
            out.append(ch)
        elif ch == "\t":
            out.append("⇥")
        elif unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co"):
            out.append(ch.encode("unicode_escape").decode("ascii"))
        else:
            out.append(ch)
    return "".join(out)
