"""Signal truth on a real model's React pages (issue 36 item 5, React part).

    python scripts/smollm2_truth.py label    # esbuild's own verdict per page -> data/smollm2_react_labels.jsonl
    python scripts/smollm2_truth.py score    # jsx.compiles and jsx.syntax against those labels

``label`` runs the pinned esbuild (the binary ``python -m botgrpo_jsx.setup`` installs, not the plugin's
Node worker) on the code of each page of ``data/smollm2_react_pages.jsonl`` as a command line would:
``esbuild input.jsx --jsx=automatic`` (``input.tsx`` for a TypeScript fence). A page compiles when
that exits 0; its first error is esbuild's first ``file:line:column``, as a 1-based line of the
*completion*. JavaScript is judged as JavaScript: esbuild's TSX loader lets an import and a ``const`` of
the same name pass (TypeScript might merge them; a JavaScript engine rejects the file), so a ``jsx``
fence that only TSX accepts fails (3 pages here, all such redeclarations; no page has TypeScript syntax
in a JavaScript fence). both loaders' verdicts are kept.

The code is found by this script's own reading of the Markdown (:func:`page_code`, written apart from
``botgrpo_jsx.extract`` so that an extraction bug of the plugin cannot hide in its own labels): fence
lines pair in order (a closer is a bare fence of the same character, at least as long); an unclosed
fence runs to the end; of the blocks labelled ``jsx``/``tsx``/``js``/``javascript``/``ts``/
``typescript``/``react``/``mjs`` or unlabelled, the longest (stripped) is the code. A completion that
starts with code (its first non-blank line starts with ``import``, ``export``, ``const``, ``let``,
``var``, ``function`` or ``class``) and whose first fence is bare has the model's code before that fence:
the fence closes it (the model left out the opening fence). A completion without a fence is all code.
A fence whose info string is not one of those languages (```` ```const x = 1; ````, code written on the
fence line) holds no code: ``no_code``, which fails. Each label keeps the code's start offset and a hash.

``score`` reads the committed labels (nothing is relabelled) and reports: the pages where ``jsx.compiles``
(default params) and esbuild agree; among the pages esbuild rejects, those whose most negative
``jsx.syntax`` span (the first of the most negative, as a policy's blame would land) touches the line
of esbuild's first error, split by whether the model was cut off by the token cap; and a second
figure that also counts a span on a line esbuild's own note on that error names (``note_lines``: "The
opening "div" tag is here" for an end of file before a closing tag, where the error's own line is the
file's last). ``--json`` writes the figures.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from botgrpo_core.signals import Sample
from botgrpo_jsx import nodeenv
from botgrpo_jsx.extract import extract_code
from botgrpo_jsx.params import CompilesParams, SyntaxParams
from botgrpo_jsx.plugin import make_compiles, make_syntax

DATA = Path(__file__).resolve().parent.parent / "data"
PAGES = DATA / "smollm2_react_pages.jsonl"
LABELS = DATA / "smollm2_react_labels.jsonl"
_WHERE = re.compile(r"^\s+input\.(?:tsx|jsx):(\d+):(\d+):", re.MULTILINE)
_MESSAGE = re.compile(r"\[ERROR\] (.+)")
_FENCE_LINE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_LANGS = ("jsx", "tsx", "js", "javascript", "ts", "typescript", "react", "mjs", "")
_TS = ("tsx", "ts", "typescript")
_CODE_START = re.compile(r"\s*(import|export|const|let|var|function|class)\b")


def page_code(completion: str) -> tuple[str, int, str] | None:
    """(code, its start in ``completion``, fence language) as the module docstring reads a page;
    ``None`` when its fences hold no code block."""
    lines = completion.split("\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    fences = [
        (i, m.group(1), m.group(2).strip())
        for i, line in enumerate(lines)
        if (m := _FENCE_LINE.fullmatch(line))
    ]
    if not fences:
        return completion, 0, ""
    blocks: list[tuple[int, int, str]] = []  # (first line, end line exclusive, lang)
    k = 0
    if fences[0][0] > 0 and fences[0][2] == "" and _CODE_START.match(completion):
        blocks.append((0, fences[0][0], ""))
        k = 1
    while k < len(fences):
        i, mark, info = fences[k]
        closer = next(
            (
                j
                for j in range(k + 1, len(fences))
                if fences[j][2] == "" and fences[j][1][0] == mark[0] and len(fences[j][1]) >= len(mark)
            ),
            None,
        )
        lang = info.split()[0].lower() if info.split() else ""
        blocks.append((i + 1, len(lines) if closer is None else fences[closer][0], lang))
        if closer is None:
            break
        k = closer + 1
    wanted = [b for b in blocks if b[2] in _LANGS]
    if not wanted:
        return None
    first, end, lang = max(wanted, key=lambda b: len("\n".join(lines[b[0] : b[1]]).strip()))
    if first >= len(lines):
        return "", len(completion), lang
    return "\n".join(lines[first:end]), starts[first], lang


def _esbuild() -> Path:
    """The pinned esbuild's native binary (its npm shim needs Node; the binary is the same program)."""
    modules = nodeenv.node_modules()
    binary = None
    if modules is not None:
        native = sorted(modules.glob("@esbuild/*/bin/esbuild"))
        binary = native[0] if native else modules / "esbuild" / "bin" / "esbuild"
    if binary is None or not binary.is_file():
        sys.exit(f"smollm2_truth: no pinned esbuild; {nodeenv.SETUP_HINT}")
    return binary


def run_esbuild(binary: Path, code: str, loader: str) -> tuple[bool, dict[str, Any] | None]:
    """(exit 0, first error {line, column, message} in ``code``'s 1-based lines) of one esbuild run."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"input.{loader}"
        path.write_text(code, encoding="utf-8")
        proc = subprocess.run(
            [
                str(binary),
                path.name,
                "--jsx=automatic",
                "--log-level=error",
                "--color=false",
                "--log-limit=0",
            ],
            cwd=tmp,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    if proc.returncode == 0:
        return True, None
    where, message = _WHERE.search(proc.stderr), _MESSAGE.search(proc.stderr)
    if where is None:
        return False, {"line": None, "column": None, "message": proc.stderr.strip()[:300]}
    text = message.group(1).strip() if message else ""
    # the first error's block, up to the next error: its other locations are esbuild's notes on it
    # ("The opening "div" tag is here:" for an end of file before a closing tag)
    block = proc.stderr[where.end() :].split("[ERROR]", 1)[0]
    notes = [int(m.group(1)) for m in _WHERE.finditer(block)]
    return False, {
        "line": int(where.group(1)),
        "column": int(where.group(2)),
        "message": text[:300],
        "note_lines": notes,
    }


def label(pages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """esbuild's verdict and first error per page (see the module docstring)."""
    binary = _esbuild()
    version = subprocess.run(
        [str(binary), "--version"], capture_output=True, text=True, check=True
    ).stdout.strip()
    out = []
    for page in pages:
        completion = page["completion"]
        found = page_code(completion)
        row: dict[str, Any] = {
            "id": page["id"],
            "sample": page["sample"],
            "truncated": bool(page.get("truncated")),
            "esbuild": version,
        }
        if found is None:
            out.append({**row, "verdict": "no_code", "compiles": False, "first_error": None})
            continue
        code, start, lang = found
        typescript = lang in _TS
        ok_tsx, err_tsx = run_esbuild(binary, code, "tsx")
        ok_jsx, err_jsx = run_esbuild(binary, code, "jsx")
        first = err_tsx if typescript else err_jsx
        if first is not None and first["line"] is not None:
            # the code's 1-based line -> the completion's 1-based line (the code starts a line)
            shift = completion.count("\n", 0, start)
            first = {
                **first,
                "line": first["line"] + shift,
                "note_lines": [n + shift for n in first["note_lines"]],
            }
        compiles = ok_tsx if typescript else ok_jsx
        out.append(
            {
                **row,
                "verdict": "compiles" if compiles else "fails",
                "compiles": compiles,
                "loader": "tsx" if typescript else "jsx",
                "tsx_ok": ok_tsx,
                "jsx_ok": ok_jsx,
                "code_start": start,
                "code_sha1": hashlib.sha1(code.encode("utf-8")).hexdigest(),
                "first_error": None if compiles else first,
            }
        )
    return out


def _line_range(text: str, line: int) -> tuple[int, int]:
    """``str`` range of 1-based ``line`` of ``text`` (without its newline)."""
    start = 0
    for _ in range(line - 1):
        start = text.index("\n", start) + 1
    end = text.find("\n", start)
    return start, len(text) if end < 0 else end


def _name(lab: dict[str, Any]) -> str:
    return f"{lab['id']}/{lab['sample']}"


def score(pages: list[dict[str, Any]], labels: list[dict[str, Any]]) -> dict[str, Any]:
    """The figures of the module docstring, from committed ``labels``."""
    by_id = {(p["id"], p["sample"]): p for p in pages}
    if [(lab["id"], lab["sample"]) for lab in labels] != list(by_id) or len(by_id) != len(pages):
        sys.exit(f"smollm2_truth: {LABELS.name} does not list the pages of {PAGES.name}; run `label` again")
    extraction_differs = []
    for lab in labels:
        completion = by_id[lab["id"], lab["sample"]]["completion"]
        found = page_code(completion)
        sha = None if found is None else hashlib.sha1(found[0].encode("utf-8")).hexdigest()
        if lab.get("code_sha1", sha) != sha:
            sys.exit(
                f"smollm2_truth: page {lab['id']}/{lab['sample']}: its code is not the labelled code; run `label` again"
            )
        view = extract_code(completion)
        # the same code at the same place (the plugin's block keeps the newline before its closing fence)
        ours = None if found is None else (found[0].rstrip(), found[1])
        if (None if view is None else (view.code.rstrip(), view.start)) != ours:
            extraction_differs.append(_name(lab))
    pages_in_order = [by_id[lab["id"], lab["sample"]] for lab in labels]
    samples = [
        Sample(p["request"], p["completion"], truncated=bool(p.get("truncated"))) for p in pages_in_order
    ]
    compiles = make_compiles(CompilesParams())
    try:
        verdicts = compiles.score(samples)
    finally:
        compiles.close()
    agree = [i for i, lab in enumerate(labels) if (verdicts[i] == 1.0) == lab["compiles"]]
    failing = [i for i, lab in enumerate(labels) if lab["verdict"] == "fails" and lab["first_error"]["line"]]
    spans = make_syntax(SyntaxParams(workers=0)).score([samples[i] for i in failing])
    on_line: dict[str, list[str]] = {"cut": [], "whole": []}
    on_note: list[str] = []  # missed the error's line, on a line esbuild's note on that error names
    missed: list[dict[str, Any]] = []
    totals = {"cut": 0, "whole": 0}
    for i, found in zip(failing, spans, strict=True):
        lab, text = labels[i], samples[i].completion
        kind = "cut" if lab["truncated"] else "whole"
        totals[kind] += 1
        lo, hi = _line_range(text, lab["first_error"]["line"])
        worst = min(found, key=lambda s: (s.value, s.start)) if isinstance(found, list) and found else None
        # the span covers a character of the line (its newline included)
        if worst is not None and worst.start <= hi and worst.end > lo:
            on_line[kind].append(_name(lab))
        else:
            if worst is not None and any(
                worst.start <= b and worst.end > a
                for a, b in (_line_range(text, n) for n in lab["first_error"].get("note_lines", []))
            ):
                on_note.append(_name(lab))
            where = None if worst is None else text.count("\n", 0, worst.start) + 1
            missed.append(
                {
                    "page": _name(lab),
                    "kind": kind,
                    "error_line": lab["first_error"]["line"],
                    "span_line": where,
                    "message": lab["first_error"]["message"],
                }
            )
    n_fail = len(failing)
    return {
        "pages": len(labels),
        "esbuild_compiles": sum(lab["compiles"] for lab in labels),
        "no_code": sum(lab["verdict"] == "no_code" for lab in labels),
        "plugin_extraction_differs": extraction_differs,
        "jsx_compiles_agrees": len(agree),
        "disagree": [_name(labels[i]) for i in range(len(labels)) if i not in set(agree)],
        "failing_with_a_line": n_fail,
        "syntax_on_first_error_line": len(on_line["cut"]) + len(on_line["whole"]),
        "share": round((len(on_line["cut"]) + len(on_line["whole"])) / n_fail, 4) if n_fail else None,
        "by_kind": {k: f"{len(on_line[k])}/{totals[k]}" for k in totals},
        # the error's line, or a line esbuild's own note on that error names ("The opening "div" tag is here")
        "syntax_on_first_error_or_its_note": len(on_line["cut"]) + len(on_line["whole"]) + len(on_note),
        "on_a_note_line": on_note,
        "missed": missed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("label", "score"))
    parser.add_argument("--json", type=Path, help="write the figures here (score)")
    args = parser.parse_args()
    pages = [json.loads(line) for line in PAGES.read_text(encoding="utf-8").splitlines() if line.strip()]
    if args.command == "label":
        rows = label(pages)
        LABELS.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        print(f"{LABELS}: {len(rows)} pages, {sum(r['compiles'] for r in rows)} compile (esbuild)")
        return
    labels = [json.loads(line) for line in LABELS.read_text(encoding="utf-8").splitlines() if line.strip()]
    figures = score(pages, labels)
    print(json.dumps(figures, indent=1))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
