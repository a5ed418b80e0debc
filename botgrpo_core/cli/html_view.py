"""The self-contained HTML heatmap of ``botgrpo score --html`` (inline CSS and JS, no external assets).

Completions are model output, i.e. untrusted: every text is escaped (control and format characters shown as
escapes, as in the terminal), and the data is embedded as JSON that cannot close its ``<script>`` element.
"""

from __future__ import annotations

import html
import json
import math
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from botgrpo_core.cli.score import ScoreReport
from botgrpo_core.cli.records import (
    _display_pieces,
    _fmt,
    _meta_text,
    is_image,
    safe_text,
    sample_records,
    summary,
)

_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")

# --- colours -------------------------------------------------------------------------------------------------------
#: the default ("rank") scale: light to dark blue for positive values, light to dark red for negative ones, each
#: value placed by its rank among the view's distinct values of its sign, so that two different values never
#: share a colour (a 0.85 token stands apart from a 1.0 one, which a linear -max..+max scale paints alike)
POSITIVE_STOPS = ((198, 219, 239), (107, 174, 214), (33, 113, 181), (8, 48, 107))
NEGATIVE_STOPS = ((252, 187, 161), (251, 106, 74), (203, 24, 29), (103, 0, 13))
ZERO_RGB = (247, 247, 247)
#: values are told apart at this many decimals (float noise of one value is not two values)
LEVEL_DIGITS = 6


def _blend(stops: tuple[tuple[int, int, int], ...], x: float) -> tuple[int, int, int]:
    """The colour at ``x`` in [0, 1] on the piecewise-linear path through ``stops``."""
    pos = min(max(x, 0.0), 1.0) * (len(stops) - 1)
    k = min(int(pos), len(stops) - 2)
    frac = pos - k
    return tuple(round(a + frac * (b - a)) for a, b in zip(stops[k], stops[k + 1]))  # type: ignore[return-value]


def value_levels(values: Iterable[float | None]) -> dict[str, list[Any]]:
    """``{"values": [...], "colours": ["#rrggbb", ...]}``: the distinct finite ``values`` (at
    :data:`LEVEL_DIGITS` decimals), ascending, and the rank-scale colour of each. 0 is white; the k-th
    smallest of n positive values gets ``POSITIVE_STOPS`` at k / n, negative ones likewise by magnitude."""
    distinct = sorted({round(v, LEVEL_DIGITS) + 0.0 for v in values if v is not None and math.isfinite(v)})
    positive = [v for v in distinct if v > 0]
    negative = [v for v in reversed(distinct) if v < 0]  # by magnitude, smallest first
    rank = {v: (k + 1) / len(positive) for k, v in enumerate(positive)}
    rank.update({v: -(k + 1) / len(negative) for k, v in enumerate(negative)})
    colours = []
    for v in distinct:
        x = rank.get(v, 0.0)
        rgb = _blend(POSITIVE_STOPS, x) if x > 0 else _blend(NEGATIVE_STOPS, -x) if x < 0 else ZERO_RGB
        colours.append("#{:02x}{:02x}{:02x}".format(*rgb))
    return {"values": distinct, "colours": colours}


def _view_values(records: list[dict[str, Any]], view: str) -> list[float | None]:
    """Every token's value in ``view`` (what the page's ``values()`` reads)."""
    if view in ("reward", "advantage"):
        key = "token_rewards" if view == "reward" else "advantages"
        return [v for r in records for v in r[key]]
    return [v for r in records for v in r["signals"][view]["token_values"]]


# --- HTML ----------------------------------------------------------------------------------------------------------
_CSS = """
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222;background:#fff}
h1{font-size:1.2em;margin:0 0 .3em} .muted{color:#666;font-size:.9em}
.controls{position:sticky;top:0;background:#fff;padding:.5em 0;border-bottom:1px solid #ddd;z-index:1}
.controls label{margin-right:1em;cursor:pointer}
.legend{display:inline-flex;align-items:center;gap:.4em;margin-left:1em;font-size:.9em}
.bar{display:inline-block;width:12em;height:.9em;border:1px solid #aaa;
 background:linear-gradient(90deg,rgb(178,24,43),rgb(247,247,247),rgb(33,102,172))}
.bar.rank{background:linear-gradient(90deg,rgb(103,0,13),rgb(252,187,161),rgb(247,247,247),rgb(198,219,239),rgb(8,48,107))}
.sample{border:1px solid #ddd;border-radius:6px;margin:1em 0;padding:.6em .8em}
.sample.dropped{border-style:dashed;opacity:.85}
.head{font-size:.9em;margin-bottom:.4em} .head b{font-size:1.05em}
.toks{font-family:ui-monospace,monospace;white-space:pre-wrap;line-height:1.7;word-break:break-all}
.tok{border-radius:2px;padding:1px 0;cursor:default}
.pen{box-shadow:inset 0 -3px 0 #cb181d}
.tok.special,.tok.shared{font-style:italic;opacity:.8}
.tok:hover{outline:2px solid #000}
table{border-collapse:collapse;font-size:.85em;margin-top:.4em} td,th{padding:1px 6px;text-align:left}
.err{color:#b2182b} details{margin-top:.3em;font-size:.9em}
.shots{display:flex;flex-wrap:wrap;gap:.6em;margin:.3em 0} .shots img{max-width:32em;border:1px solid #ccc}
figure{margin:0} figcaption{font-size:.8em;color:#666}
#tip{position:fixed;display:none;background:#222;color:#eee;padding:6px 8px;border-radius:4px;
 font:12px ui-monospace,monospace;white-space:pre;pointer-events:none;z-index:2;max-width:40em}
"""

_JS = """
const D = JSON.parse(document.getElementById('botgrpo-data').textContent);
const NEG=[178,24,43], MID=[247,247,247], POS=[33,102,172], DROP=[150,150,150];
function color(v, s){ if(v===null||v===undefined) return DROP;
  const x=Math.max(-1,Math.min(1,v/s)), e=x>0?POS:NEG;
  return MID.map((m,k)=>Math.round(m+Math.abs(x)*(e[k]-m))); }
function hex(h){ return [1,3,5].map(i=>parseInt(h.slice(i,i+2),16)); }
function ranked(v, view){ if(v===null||v===undefined) return DROP;
  const L=D.levels[view], xs=L.values; let lo=0, hi=xs.length-1;
  while(lo<hi){ const mid=(lo+hi)>>1; if(xs[mid]<v) lo=mid+1; else hi=mid; }
  if(lo>0 && Math.abs(xs[lo-1]-v)<Math.abs(xs[lo]-v)) lo--;
  return hex(L.colours[lo]); }
function values(rec, view){ if(view==='reward') return rec.token_rewards;
  if(view==='advantage') return rec.advantages; return rec.signals[view].token_values; }
function scale(view){ let m=0; for(const r of D.samples){ for(const v of values(r,view)){
  if(v!==null && Math.abs(v)>m) m=Math.abs(v);} } return m>0?m:1; }
function safe(s){ return s.replace(/[\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u2069\\ufeff]/g,
  c=>'\\\\u'+c.charCodeAt(0).toString(16).padStart(4,'0')); }
function fmt(v){ return v===null?'nan':(Math.abs(v)<1e-4&&v!==0?v.toExponential(2):(+v.toFixed(4)).toString()); }
let VIEW='reward', SCALE='rank';
function paint(view){ const s=scale(view), L=D.levels[view], rank=SCALE==='rank';
  const n=L.values.length, lo=n?L.values[0]:0, hi=n?L.values[n-1]:0;
  document.getElementById('lo').textContent=rank?fmt(lo):'-'+fmt(s);
  document.getElementById('hi').textContent=rank?fmt(hi)+' ('+n+' distinct values, colour by rank; 0 white)':'+'+fmt(s);
  document.getElementById('bar').className=rank?'bar rank':'bar';
  for(const el of document.querySelectorAll('.tok')){ const rec=D.samples[+el.dataset.s];
    const v=values(rec,view)[+el.dataset.t], c=rank?ranked(v, view):color(v, s);
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
  tip.textContent=safe(lines.join('\\n')); tip.style.display='block'; });
document.addEventListener('mousemove', ev=>{ tip.style.left=(ev.clientX+14)+'px'; tip.style.top=(ev.clientY+14)+'px'; });
for(const r of document.querySelectorAll('input[name=view]')) r.addEventListener('change', ()=>{VIEW=r.value; paint(VIEW);});
for(const r of document.querySelectorAll('input[name=scale]')) r.addEventListener('change', ()=>{SCALE=r.value; paint(VIEW);});
paint(VIEW);
"""


def _text(text: str) -> str:
    """Model text for an HTML text node: control and format characters (NUL, ESC, bidi overrides such as
    U+202E) shown as escapes, as the terminal view shows them, then HTML-escaped."""
    return html.escape(safe_text(text))


def _script_json(data: Any) -> str:
    """JSON safe inside ``<script>``: ``<``, ``>`` and ``&`` escaped so model text cannot close the element."""
    text = json.dumps(data, ensure_ascii=False, allow_nan=False, default=str)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def penalised_tokens(record: dict[str, Any]) -> set[int]:
    """The tokens some local signal scores below 0: underlined red in every view, so a penalty inside a
    successful rollout shows (in the token-reward view a -1 there is alpha * 1 - beta, a light blue)."""
    return {
        t
        for sig in record["signals"].values()
        if sig["kind"] == "local" and not sig["error"]
        for t, v in enumerate(sig["token_values"])
        if v is not None and v < 0
    }


def _html_sample(record: dict[str, Any], position: int) -> str:
    """One row's block; ``position`` is its place in the page's data (``D.samples``)."""
    esc = html.escape
    globals_, images = [], []
    for name, sig in record["signals"].items():
        if sig["error"]:
            globals_.append(
                f'<span class="err">{esc(name)}: error ({esc(sig["error"]["reason"])}): '
                f"{_text(sig['error']['message'])}</span>"
            )
        elif sig["kind"] == "global":
            meta = ", ".join(
                f"{esc(k)}={_text(_meta_text(v))}" for k, v in sig["meta"].items() if not is_image(v)
            )
            globals_.append(
                f"{esc(name)} = {sig['value']:g} (x{sig['weight']:g}){f' ({meta})' if meta else ''}"
            )
            images += [_img(f"{name}: {k}", v) for k, v in sig["meta"].items() if is_image(v)]
    dropped = ' <span class="err">dropped (on_error: nan)</span>' if not record["valid"] else ""
    if record.get("truncated"):
        dropped += ' <span class="err">truncated (cut by the length cap)</span>'
    if "shown_tokens" in record:
        dropped += f' <span class="err">showing the first {record["shown_tokens"]} of {record["n_tokens"]} tokens</span>'
    head = (
        f'<div class="head"><b>#{record["index"]}</b> group {record["group"]} · outcome {_fmt(record["outcome"])} · '
        f"{len(record['tokens'])} tokens{dropped}<br>prompt: <code>{_text(record['prompt'])}</code>"
        f"<br>{' · '.join(globals_)}</div>"
    )
    toks = []
    penalised = penalised_tokens(record)
    for t, (text, kind) in enumerate(_display_pieces(record)):
        cls = "tok" if kind == "text" else f"tok {kind}"
        cls += " pen" if t in penalised else ""
        shown = _text(text if kind != "special" else f"⟨{text}⟩")
        shown = shown.replace("\n", "↵\n")
        toks.append(f'<span class="{cls}" data-s="{position}" data-t="{t}">{shown}</span>')
    rows = []
    for name, sig in record["signals"].items():
        for span in sig.get("spans", []):
            meta = ", ".join(f"{k}={_meta_text(v)}" for k, v in span["meta"].items())
            rows.append(
                f"<tr><td>{esc(name)}</td><td>[{span['start']},{span['end']})</td><td><code>{_text(span['text'])}"
                f"</code></td><td>{span['value']:+g}</td><td>{_text(meta)}</td></tr>"
            )
    spans = (
        f"<details><summary>{len(rows)} spans</summary><table><tr><th>signal</th><th>chars</th><th>text</th>"
        f"<th>value</th><th>meta</th></tr>{''.join(rows)}</table></details>"
        if rows
        else ""
    )
    images += [_img(f"{n}: {k}", v) for n, sig in record["signals"].items() for sp in sig.get("spans", [])
               for k, v in sp["meta"].items() if is_image(v)]  # fmt: skip
    shots = f'<div class="shots">{"".join(images)}</div>' if images else ""
    cls = "sample" if record["valid"] else "sample dropped"
    return f'<div class="{cls}">{head}{shots}<div class="toks">{"".join(toks)}</div>{spans}</div>'


def _img(caption: str, image: dict[str, Any]) -> str:
    """A PNG meta value (see ``records._meta_value``) as an ``<img>`` with a ``data:`` URI; the base64 text is
    checked to be only base64 characters, so it cannot leave its attribute."""
    data = image["png_base64"]
    if not isinstance(data, str) or not _BASE64.fullmatch(data):
        return ""
    cap = html.escape(safe_text(caption))
    return (
        f'<figure><img src="data:image/png;base64,{data}" alt="{cap}" title="{cap}">'
        f"<figcaption>{cap} ({int(image['bytes'])} bytes)</figcaption></figure>"
    )


#: tokens of one row the page shows (a longer row shows its first ones, with a note; ``--json`` has all)
MAX_HTML_TOKENS = 4000
#: the page's size budget: rows past it are left out, with a note on the page and on stderr
MAX_HTML_BYTES = 16 << 20


def render_html(report: ScoreReport) -> str:
    """One self-contained HTML page of ``report`` (see :class:`HtmlPage`)."""
    page = HtmlPage()
    page.add(report)
    return page.render(summary(report))


class HtmlPage:
    """One self-contained HTML page (inline CSS and JS, no external assets): a token heatmap with a
    reward / advantage / per-signal toggle; hovering a token shows its signals, reward and advantage.

    Rows are added chunk by chunk; the page stays bounded: a row shows at most ``max_tokens`` tokens and
    the page at most about ``max_bytes`` (rows past it are counted, not shown). :attr:`notes` says what was
    left out."""

    def __init__(self, max_tokens: int = MAX_HTML_TOKENS, max_bytes: int = MAX_HTML_BYTES) -> None:
        self.max_tokens, self.max_bytes = max_tokens, max_bytes
        self.records: list[dict[str, Any]] = []
        self.size = 0
        self.cut_rows: list[int] = []  # rows shown in part
        self.left_out = 0  # rows not shown (page full)

    def add(self, report: ScoreReport) -> None:
        """Add a chunk's rows while the page has room."""
        if self.left_out:
            self.left_out += len(report.samples)
            return
        records = sample_records(report, max_tokens=self.max_tokens)
        for k, record in enumerate(records):
            size = len(_html_sample(record, len(self.records))) + len(_script_json(record))
            if self.records and self.size + size > self.max_bytes:
                self.left_out = len(records) - k
                return
            if "shown_tokens" in record:
                self.cut_rows.append(record["index"])
            self.records.append(record)
            self.size += size

    @property
    def notes(self) -> list[str]:
        """What the page does not show, and where to find it."""
        notes = []
        if self.cut_rows:
            rows = ", ".join(str(i) for i in self.cut_rows[:10]) + (" ..." if len(self.cut_rows) > 10 else "")
            notes.append(
                f"--html: {len(self.cut_rows)} row(s) longer than {self.max_tokens} tokens show their first "
                f"{self.max_tokens} (rows {rows}); --json has every token"
            )
        if self.left_out:
            notes.append(
                f"--html: the page reached its {self.max_bytes >> 20} MB budget; {self.left_out} later row(s) "
                "are not on it (--json has them; score a smaller --input for a page of those rows)"
            )
        return notes

    def render(self, info: dict[str, Any]) -> str:
        """The page: ``info`` (the summary of every row) on top, then the rows the page holds."""
        esc = html.escape
        records = self.records
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
        levels = {v: value_levels(_view_values(records, v)) for v, _ in views}
        data = {"summary": info, "samples": records, "levels": levels}
        scales = (
            '<label><input type="radio" name="scale" value="rank" checked> by rank</label>'
            '<label><input type="radio" name="scale" value="linear"> linear</label>'
        )
        notes = "".join(f'<div class="err">{esc(n)}</div>' for n in self.notes)
        return (
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>botgrpo score</title><style>{_CSS}</style></head><body>"
            f"<h1>botgrpo score</h1><div class='muted'>{info['rows']} rows in {info['groups']} groups · tokenizer "
            f"{esc(info['tokenizer'])} · preset {esc(info['preset'])}, estimator {esc(info['estimator'])} · "
            f"alpha {info['alpha']:g}, beta {info['beta']:g}</div>{notes}"
            f"<table><tr><th>signal</th><th>kind</th><th>weight</th><th>mean</th><th>errors</th><th>reasons</th></tr>"
            f"{stats}</table>"
            f'<div class="controls">colour by: {radios} scale: {scales}<span class="legend"><span id="lo"></span>'
            '<span class="bar" id="bar"></span><span id="hi"></span></span> <span class="pen">underlined</span>: '
            "a local signal's penalty, in every view</div>"
            f"{''.join(_html_sample(r, k) for k, r in enumerate(records))}"
            '<div id="tip"></div>'
            f'<script type="application/json" id="botgrpo-data">{_script_json(data)}</script>'
            f"<script>{_JS}</script></body></html>\n"
        )
