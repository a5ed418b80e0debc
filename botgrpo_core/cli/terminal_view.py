"""The coloured terminal view of ``botgrpo score``: completions as token heatmaps, signal lines, a token table.

Completions are model output, i.e. untrusted: control and format characters are shown as escapes (no ANSI
or bidi injection).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from botgrpo_core.cli.score import ScoreReport
from botgrpo_core.cli.records import (
    MAX_SPANS_SHOWN,
    _dark,
    _display_pieces,
    _fmt,
    _meta_text,
    _scale,
    color_for,
    safe_text,
    sample_records,
    summary,
)


def _ansi_bg(rgb: tuple[int, int, int]) -> str:
    fg = "97" if _dark(rgb) else "30"
    return f"\x1b[48;2;{rgb[0]};{rgb[1]};{rgb[2]}m\x1b[{fg}m"


RESET = "\x1b[0m"
DIM = "\x1b[2m"
BOLD = "\x1b[1m"


def _colored_line(
    pieces: list[tuple[str, str]], values: list[float | None], scale: float, indent: str
) -> str:
    parts = [indent]
    for (text, kind), value in zip(pieces, values):
        code = _ansi_bg(color_for(value, scale)) + (DIM if kind != "text" else "")
        shown = safe_text(text if kind == "text" else f"⟨{text}⟩" if kind == "special" else text)
        segments = shown.split("\n")
        for k, segment in enumerate(segments):
            if k > 0:  # a newline token: mark it, end the colour before the line break
                parts.append(f"{code}↵{RESET}\n{indent}")
            if segment:
                parts.append(f"{code}{segment}{RESET}")
    return "".join(parts)


def _legend(label: str, scale: float, color: bool) -> str:
    if not color:
        return f"{label}: -{scale:.3g} .. 0 .. +{scale:.3g}"
    steps = [-1.0, -0.75, -0.5, -0.25, 0.0, 0.25, 0.5, 0.75, 1.0]
    bar = "".join(f"{_ansi_bg(color_for(s * scale, scale))}  {RESET}" for s in steps)
    return f"{label}: -{scale:.3g} {bar} +{scale:.3g}"


def _signal_lines(record: dict[str, Any], color: bool) -> list[str]:
    lines = []
    for name, sig in record["signals"].items():
        weight = f"x{sig['weight']:g}"
        if sig["error"]:
            lines.append(
                f"    {name} {weight}: ERROR ({sig['error']['reason']}) {safe_text(sig['error']['message'])}"
            )
            continue
        if sig["kind"] == "global":
            meta = " ".join(f"{k}={safe_text(_meta_text(v))}" for k, v in sig["meta"].items())
            lines.append(f"    {name} {weight}: {sig['value']:g}  {meta}".rstrip())
            continue
        if sig["per_token"]:
            lines.append(f"    {name} {weight}: per-token values")
            continue
        spans = sig["spans"]
        lines.append(f"    {name} {weight}: {len(spans)} span{'s' if len(spans) != 1 else ''}")
        for span in spans[:MAX_SPANS_SHOWN]:
            meta = " ".join(f"{k}={safe_text(_meta_text(v))}" for k, v in span["meta"].items())
            text = safe_text(span["text"]).replace("\n", "↵")
            if len(text) > 40:
                text = text[:37] + "..."
            lines.append(
                f"      [{span['start']},{span['end']}) {text!r} {span['value']:+g}  {meta}".rstrip()
            )
        if len(spans) > MAX_SPANS_SHOWN:
            lines.append(f"      ... {len(spans) - MAX_SPANS_SHOWN} more")
    return lines


def _token_table(record: dict[str, Any], pieces: list[tuple[str, str]]) -> list[str]:
    """Plain-text rows: runs of neighbouring tokens with identical values share one row."""
    local = [n for n, s in record["signals"].items() if s["kind"] == "local"]
    width = 26
    widths = [max(9, len(n)) for n in local]
    header = f"    {'tokens':>9}  {'text':<{width}} {'reward':>9} {'advantage':>9}"
    header += "".join(f" {n:>{w}}" for n, w in zip(local, widths))
    lines = [header]

    def values(t: int) -> tuple[Any, ...]:
        row = (record["token_rewards"][t], record["advantages"][t])
        return row + tuple(record["signals"][n]["token_values"][t] for n in local)

    t = 0
    while t < len(pieces):
        end = t + 1
        while end < len(pieces) and values(end) == values(t) and pieces[end][1] == pieces[t][1] == "text":
            end += 1
        text = "".join(p for p, _ in pieces[t:end])
        shown = repr(safe_text(text)) if pieces[t][1] == "text" else safe_text(text)  # quoted = text
        if len(shown) > width:
            shown = shown[: width - 1] + "…"
        span = f"{t}" if end == t + 1 else f"{t}-{end - 1}"
        row = f"    {span:>9}  {shown:<{width}} " + " ".join(f"{_fmt(v):>9}" for v in values(t)[:2])
        row += "".join(f" {_fmt(v):>{w}}" for v, w in zip(values(t)[2:], widths))
        lines.append(row)
        t = end
    return lines


def render_terminal(report: ScoreReport, *, color: bool = True) -> str:
    """The terminal view. With ``color``, token backgrounds show reward and advantage (24-bit ANSI);
    without it, a per-token table carries the same numbers."""
    info = summary(report)
    return "\n".join(
        [terminal_header(info, color), terminal_samples(report, color), terminal_footer(info, color)]
    )


def terminal_header(info: dict[str, Any], color: bool) -> str:
    """The first line: rows, groups, tokenizer, preset, estimator, alpha and beta."""
    bold, reset = (BOLD, RESET) if color else ("", "")
    return (
        f"{bold}botgrpo score{reset}: {info['rows']} rows in {info['groups']} group(s); tokenizer {info['tokenizer']}; "
        f"preset {info['preset']}, estimator {info['estimator']}; alpha {info['alpha']:g}, beta {info['beta']:g}"
    )


#: tokens of one row the terminal shows (a longer row shows its first ones and says so; ``--json`` has all)
MAX_TERMINAL_TOKENS = 4000


def terminal_samples(report: ScoreReport, color: bool) -> str:
    """One chunk of rows: the colour legends (scaled to the chunk) and each row's view."""
    records = sample_records(report, max_tokens=MAX_TERMINAL_TOKENS)
    reward_scale = _scale([r["token_rewards"] for r in records])
    adv_scale = _scale([r["advantages"] for r in records])
    bold, reset = (BOLD, RESET) if color else ("", "")
    lines = [_legend("reward    ", reward_scale, color), _legend("advantage ", adv_scale, color)]
    for record in records:
        pieces = _display_pieces(record)
        prompt = safe_text(record["prompt"]).replace("\n", "↵")
        if len(prompt) > 60:
            prompt = prompt[:57] + "..."
        status = "" if record["valid"] else "  DROPPED (on_error: nan)"
        status += "  TRUNCATED (cut by the length cap)" if record["truncated"] else ""
        if "shown_tokens" in record:
            status += f"  (showing the first {record['shown_tokens']} of {record['n_tokens']} tokens; --json has all)"
        lines += [
            "",
            f"{bold}#{record['index']}{reset}  group {record['group']}  outcome {_fmt(record['outcome'])}  "
            f"tokens {record.get('n_tokens', len(record['tokens']))}  prompt {prompt!r}{status}",
        ]
        if color:
            lines.append("  reward:")
            lines.append(_colored_line(pieces, record["token_rewards"], reward_scale, "    "))
            lines.append("  advantage:")
            lines.append(_colored_line(pieces, record["advantages"], adv_scale, "    "))
        else:
            lines += _token_table(record, pieces)
        lines.append("  signals:")
        lines += _signal_lines(record, color)
    return "\n".join(lines)


def terminal_footer(info: dict[str, Any], color: bool) -> str:
    """The per-signal table over every row."""
    bold, reset = (BOLD, RESET) if color else ("", "")
    cut = f"; {info['truncated']} truncated (cut by the length cap)" if info.get("truncated") else ""
    lines = ["", f"{bold}signals{reset} (over {info['rows']} rows{cut})"]
    lines.append(f"  {'name':<24} {'kind':<7} {'weight':>7} {'mean':>9} {'errors':>7}  reasons / cache hits")
    for name, s in info["signals"].items():
        reasons = ", ".join(f"{k}: {v}" for k, v in sorted(s["errors"].items())) or "-"
        lines.append(
            f"  {name:<24} {s['kind']:<7} {s['weight']:>7g} {_fmt(s['mean']):>9} {s['error_frac']:>7.0%}  "
            f"{reasons} / {s['cache_hits']}"
        )
    return "\n".join(lines)
