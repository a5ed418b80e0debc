"""Renderers for ``botgrpo score``: JSON records, a coloured terminal view and a self-contained HTML heatmap.

All three start from :func:`sample_records` (one JSON-ready dict per sample), so the terminal and the
HTML page show exactly what ``--json`` prints. Completions are model output, i.e. untrusted: the
terminal view escapes control and format characters (no ANSI or bidi injection) and the HTML page
escapes every text and embeds its data as JSON that cannot close its ``<script>`` element.
"""

from __future__ import annotations

import html
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


# --- records -------------------------------------------------------------------------------------------------------
def _num(value: float) -> float | None:
    """A float for JSON: NaN and infinities become ``None`` (JSON has no NaN)."""
    value = float(value)
    return value if math.isfinite(value) else None


def _error(result: Any) -> dict[str, str] | None:
    return {"message": str(result), "reason": result.reason} if isinstance(result, SampleError) else None


def _span_record(span: Span, completion: str) -> dict[str, Any]:
    return {
        "start": span.start,
        "end": span.end,
        "text": completion[span.start : span.end],
        "value": span.value,
        "meta": dict(span.meta) if span.meta else {},
    }


def sample_records(report: ScoreReport) -> list[dict[str, Any]]:
    """Per sample: tokens with character offsets, each signal's values, token rewards and advantages.

    Lists run over the sample's completion tokens only (no padding). A rollout dropped by an
    ``on_error: nan`` policy has ``valid: false`` and ``null`` token rewards.
    """
    out = report.output
    rewards, advantages = out.token_rewards.tolist(), report.advantages.tolist()
    signal_values = {name: o.values.tolist() for name, o in out.signals.items()}
    records = []
    for i, sample in enumerate(report.samples):
        n = len(sample.offsets)
        tokens = [
            {
                "t": t,
                "id": int(sample.token_ids[t]) if t < len(sample.token_ids) else None,
                "piece": report.token_labels[i][t] if t < len(report.token_labels[i]) else "",
                "start": int(start),
                "end": int(end),
                "text": sample.completion[start:end],
            }
            for t, (start, end) in enumerate(sample.offsets)
        ]
        signals: dict[str, Any] = {}
        for name, o in out.signals.items():
            result = o.results[i]
            entry: dict[str, Any] = {"kind": o.kind, "weight": o.weight, "error": _error(result)}
            if o.kind == "global":
                entry["value"] = None if o.failed[i] else float(result)
            else:
                entry["token_values"] = [_num(v) for v in signal_values[name][i][:n]]
                spans = result if isinstance(result, list) else []
                entry["spans"] = [_span_record(s, sample.completion) for s in spans]
                entry["per_token"] = isinstance(result, TokenValues)
            signals[name] = entry
        records.append(
            {
                "index": i,
                "group": report.group_ids[i],
                "prompt": sample.prompt,
                "completion": sample.completion,
                "valid": bool(out.valid[i]),
                "outcome": _num(out.outcome[i]),
                "tokens": tokens,
                "signals": signals,
                "token_rewards": [_num(v) for v in rewards[i][:n]],
                "advantages": [_num(v) for v in advantages[i][:n]],
            }
        )
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
        "signals": signals,
        "notes": list(report.notes),
    }


def render_json(report: ScoreReport) -> str:
    """``{"summary": {...}, "samples": [...]}`` as strict JSON (no NaN), one sample per line."""

    def dump(value: Any) -> str:
        # default=str: span meta may hold values JSON cannot, show them as text
        return json.dumps(value, ensure_ascii=False, allow_nan=False, default=str)

    samples = ",\n".join(dump(r) for r in sample_records(report))
    return '{"summary": ' + dump(summary(report)) + ',\n"samples": [\n' + samples + "\n]}"


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
            lines.append(f"    {name} {weight}: {sig['value']:g}")
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
    records = sample_records(report)
    info = summary(report)
    reward_scale = _scale([r["token_rewards"] for r in records])
    adv_scale = _scale([r["advantages"] for r in records])
    bold, reset = (BOLD, RESET) if color else ("", "")
    lines = [
        f"{bold}botgrpo score{reset}: {info['rows']} rows in {info['groups']} group(s); tokenizer {info['tokenizer']}; "
        f"preset {info['preset']}, estimator {info['estimator']}; alpha {info['alpha']:g}, beta {info['beta']:g}",
        _legend("reward    ", reward_scale, color),
        _legend("advantage ", adv_scale, color),
    ]
    for record in records:
        pieces = _display_pieces(record)
        prompt = safe_text(record["prompt"]).replace("\n", "↵")
        if len(prompt) > 60:
            prompt = prompt[:57] + "..."
        status = "" if record["valid"] else "  DROPPED (on_error: nan)"
        lines += [
            "",
            f"{bold}#{record['index']}{reset}  group {record['group']}  outcome {_fmt(record['outcome'])}  "
            f"tokens {len(record['tokens'])}  prompt {prompt!r}{status}",
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
    lines += ["", f"{bold}signals{reset} (over {info['rows']} rows)"]
    lines.append(f"  {'name':<24} {'kind':<7} {'weight':>7} {'mean':>9} {'errors':>7}  reasons / cache hits")
    for name, s in info["signals"].items():
        reasons = ", ".join(f"{k}: {v}" for k, v in sorted(s["errors"].items())) or "-"
        lines.append(
            f"  {name:<24} {s['kind']:<7} {s['weight']:>7g} {_fmt(s['mean']):>9} {s['error_frac']:>7.0%}  "
            f"{reasons} / {s['cache_hits']}"
        )
    return "\n".join(lines)


# --- HTML ----------------------------------------------------------------------------------------------------------
_CSS = """
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222;background:#fff}
h1{font-size:1.2em;margin:0 0 .3em} .muted{color:#666;font-size:.9em}
.controls{position:sticky;top:0;background:#fff;padding:.5em 0;border-bottom:1px solid #ddd;z-index:1}
.controls label{margin-right:1em;cursor:pointer}
.legend{display:inline-flex;align-items:center;gap:.4em;margin-left:1em;font-size:.9em}
.bar{display:inline-block;width:12em;height:.9em;border:1px solid #aaa;
 background:linear-gradient(90deg,rgb(178,24,43),rgb(247,247,247),rgb(33,102,172))}
.sample{border:1px solid #ddd;border-radius:6px;margin:1em 0;padding:.6em .8em}
.sample.dropped{border-style:dashed;opacity:.85}
.head{font-size:.9em;margin-bottom:.4em} .head b{font-size:1.05em}
.toks{font-family:ui-monospace,monospace;white-space:pre-wrap;line-height:1.7;word-break:break-all}
.tok{border-radius:2px;padding:1px 0;cursor:default}
.tok.special,.tok.shared{font-style:italic;opacity:.8}
.tok:hover{outline:2px solid #000}
table{border-collapse:collapse;font-size:.85em;margin-top:.4em} td,th{padding:1px 6px;text-align:left}
.err{color:#b2182b} details{margin-top:.3em;font-size:.9em}
#tip{position:fixed;display:none;background:#222;color:#eee;padding:6px 8px;border-radius:4px;
 font:12px ui-monospace,monospace;white-space:pre;pointer-events:none;z-index:2;max-width:40em}
"""

_JS = """
const D = JSON.parse(document.getElementById('botgrpo-data').textContent);
const NEG=[178,24,43], MID=[247,247,247], POS=[33,102,172], DROP=[150,150,150];
function color(v, s){ if(v===null||v===undefined) return DROP;
  const x=Math.max(-1,Math.min(1,v/s)), e=x>0?POS:NEG;
  return MID.map((m,k)=>Math.round(m+Math.abs(x)*(e[k]-m))); }
function values(rec, view){ if(view==='reward') return rec.token_rewards;
  if(view==='advantage') return rec.advantages; return rec.signals[view].token_values; }
function scale(view){ let m=0; for(const r of D.samples){ for(const v of values(r,view)){
  if(v!==null && Math.abs(v)>m) m=Math.abs(v);} } return m>0?m:1; }
function fmt(v){ return v===null?'nan':(Math.abs(v)<1e-4&&v!==0?v.toExponential(2):(+v.toFixed(4)).toString()); }
function paint(view){ const s=scale(view);
  document.getElementById('lo').textContent='-'+fmt(s); document.getElementById('hi').textContent='+'+fmt(s);
  for(const el of document.querySelectorAll('.tok')){ const rec=D.samples[+el.dataset.s];
    const c=color(values(rec,view)[+el.dataset.t], s);
    el.style.background='rgb('+c.join(',')+')';
    el.style.color=(0.299*c[0]+0.587*c[1]+0.114*c[2]<140)?'#fff':'#000'; } }
const tip=document.getElementById('tip');
document.addEventListener('mouseover', ev=>{ const el=ev.target.closest('.tok'); if(!el){tip.style.display='none';return;}
  const rec=D.samples[+el.dataset.s], t=+el.dataset.t, tok=rec.tokens[t];
  const lines=['token '+t+'  id '+tok.id+'  chars ['+tok.start+','+tok.end+')  '+JSON.stringify(tok.text),
    'piece '+JSON.stringify(tok.piece), 'reward     '+fmt(rec.token_rewards[t]), 'advantage  '+fmt(rec.advantages[t])];
  for(const [name,sig] of Object.entries(rec.signals)){
    if(sig.error){ lines.push(name+': error ('+sig.error.reason+')'); continue; }
    if(sig.kind==='global') lines.push(name+' (global, x'+sig.weight+'): '+fmt(sig.value));
    else { let line=name+' (local, x'+sig.weight+'): '+fmt(sig.token_values[t]);
      for(const sp of sig.spans){ if(sp.start<Math.max(tok.end,tok.start+1) && tok.start<Math.max(sp.end,sp.start+1)){
        const m=Object.entries(sp.meta).map(([k,v])=>k+'='+(typeof v==='string'?v:JSON.stringify(v))).join(' ');
        line+='\\n    span ['+sp.start+','+sp.end+') '+fmt(sp.value)+(m?'  '+m:''); } }
      lines.push(line); } }
  tip.textContent=lines.join('\\n'); tip.style.display='block'; });
document.addEventListener('mousemove', ev=>{ tip.style.left=(ev.clientX+14)+'px'; tip.style.top=(ev.clientY+14)+'px'; });
for(const r of document.querySelectorAll('input[name=view]')) r.addEventListener('change', ()=>paint(r.value));
paint('reward');
"""


def _script_json(data: Any) -> str:
    """JSON safe inside ``<script>``: ``<``, ``>`` and ``&`` escaped so model text cannot close the element."""
    text = json.dumps(data, ensure_ascii=False, allow_nan=False, default=str)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _html_sample(record: dict[str, Any]) -> str:
    esc = html.escape
    globals_ = []
    for name, sig in record["signals"].items():
        if sig["error"]:
            globals_.append(
                f'<span class="err">{esc(name)}: error ({esc(sig["error"]["reason"])}): '
                f"{esc(sig['error']['message'])}</span>"
            )
        elif sig["kind"] == "global":
            globals_.append(f"{esc(name)} = {sig['value']:g} (x{sig['weight']:g})")
    dropped = ' <span class="err">dropped (on_error: nan)</span>' if not record["valid"] else ""
    head = (
        f'<div class="head"><b>#{record["index"]}</b> group {record["group"]} · outcome {_fmt(record["outcome"])} · '
        f"{len(record['tokens'])} tokens{dropped}<br>prompt: <code>{esc(record['prompt'])}</code>"
        f"<br>{' · '.join(globals_)}</div>"
    )
    toks = []
    for t, (text, kind) in enumerate(_display_pieces(record)):
        cls = "tok" if kind == "text" else f"tok {kind}"
        shown = esc(text if kind != "special" else f"⟨{text}⟩")
        shown = shown.replace("\n", "↵\n")
        toks.append(f'<span class="{cls}" data-s="{record["index"]}" data-t="{t}">{shown}</span>')
    rows = []
    for name, sig in record["signals"].items():
        for span in sig.get("spans", []):
            meta = ", ".join(f"{k}={_meta_text(v)}" for k, v in span["meta"].items())
            rows.append(
                f"<tr><td>{esc(name)}</td><td>[{span['start']},{span['end']})</td><td><code>{esc(span['text'])}"
                f"</code></td><td>{span['value']:+g}</td><td>{esc(meta)}</td></tr>"
            )
    spans = (
        f"<details><summary>{len(rows)} spans</summary><table><tr><th>signal</th><th>chars</th><th>text</th>"
        f"<th>value</th><th>meta</th></tr>{''.join(rows)}</table></details>"
        if rows
        else ""
    )
    cls = "sample" if record["valid"] else "sample dropped"
    return f'<div class="{cls}">{head}<div class="toks">{"".join(toks)}</div>{spans}</div>'


def render_html(report: ScoreReport) -> str:
    """One self-contained HTML page (inline CSS and JS, no external assets): a token heatmap with a
    reward / advantage / per-signal toggle; hovering a token shows its signals, reward and advantage."""
    esc = html.escape
    records = sample_records(report)
    info = summary(report)
    local = [n for n, s in info["signals"].items() if s["kind"] == "local"]
    views = [("reward", "token reward"), ("advantage", "advantage")] + [(n, n) for n in local]
    radios = "".join(
        f'<label><input type="radio" name="view" value="{esc(v)}"{" checked" if k == 0 else ""}> {esc(label)}</label>'
        for k, (v, label) in enumerate(views)
    )
    stats = "".join(
        f"<tr><td>{esc(n)}</td><td>{s['kind']}</td><td>{s['weight']:g}</td><td>{_fmt(s['mean'])}</td>"
        f"<td>{s['error_frac']:.0%}</td><td>{esc(', '.join(f'{k}: {v}' for k, v in s['errors'].items()) or '-')}</td></tr>"
        for n, s in info["signals"].items()
    )
    data = {"summary": info, "samples": records}
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>botgrpo score</title><style>{_CSS}</style></head><body>"
        f"<h1>botgrpo score</h1><div class='muted'>{info['rows']} rows in {info['groups']} groups · tokenizer "
        f"{esc(info['tokenizer'])} · preset {esc(info['preset'])}, estimator {esc(info['estimator'])} · "
        f"alpha {info['alpha']:g}, beta {info['beta']:g}</div>"
        f"<table><tr><th>signal</th><th>kind</th><th>weight</th><th>mean</th><th>errors</th><th>reasons</th></tr>"
        f"{stats}</table>"
        f'<div class="controls">colour by: {radios}<span class="legend"><span id="lo"></span>'
        '<span class="bar"></span><span id="hi"></span></span></div>'
        f"{''.join(_html_sample(r) for r in records)}"
        '<div id="tip"></div>'
        f'<script type="application/json" id="botgrpo-data">{_script_json(data)}</script>'
        f"<script>{_JS}</script></body></html>\n"
    )
