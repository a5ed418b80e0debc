"""jsx.checks: behaviour checks against the live DOM in the render sandbox, one test per interaction kind.

Every page of a test is scored in one batch (one sandboxed process per page, two at a time), so the file
costs a few seconds.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from pydantic import ValidationError

from botgrpo_core.signals import Sample, SampleError, Value
from botgrpo_jsx.checks_schema import CheckSuite, parse_suite
from botgrpo_jsx.params import ChecksParams
from botgrpo_jsx.plugin import make_checks


@pytest.fixture(scope="module")
def scorer(sandbox_ready: None):
    s = make_checks(ChecksParams(timeout_s=6.0, check_timeout_s=1.0, memory_mb=768, parallel=2))
    yield s
    s.close()


def _page(body: str, imports: str = "useState") -> str:
    return f"```jsx\nimport {{ {imports} }} from 'react';\n{body}\n```"


def _score(scorer, pairs: list[tuple[str, dict]]) -> list[Value]:
    out = scorer.score([Sample("", code, row={"checks": suite}) for code, suite in pairs])
    assert all(isinstance(v, Value) for v in out), out
    return out


def _failed(value: Value) -> str:
    return str((value.meta or {}).get("failed", ""))


COUNTER = _page(
    "export default function Counter() {\n  const [n, setN] = useState(0);\n"
    "  return <div><p>Count: {n}</p><button onClick={() => setN(n + 1)}>+</button>"
    "<button onClick={() => setN(n - 1)}>-</button><button onClick={() => setN(0)}>Reset</button></div>;\n}"
)
COUNTER_CHECKS = {
    "checks": [
        {"name": "buttons", "expect": [{"exists": {"role": "button"}, "min": 3}]},
        {
            "name": "increase",
            "do": [{"click": {"role": "button", "label": r"^\+$|inc"}}],
            "expect": [{"number": 1}],
        },
        {
            "name": "reset",
            "do": [
                {"click": {"role": "button", "label": r"^\+$|inc"}},
                {"click": {"role": "button", "label": r"^\+$|inc"}},
                {"click": {"role": "button", "label": "reset"}},
            ],
            "expect": [{"number": 0}, {"no_number": 2}],
        },
    ]
}


def test_click_a_counter_and_its_inert_twin(scorer) -> None:
    inert = COUNTER.replace("setN(n + 1)", "setN(n)")
    correct, twin, empty, broken = _score(
        scorer,
        [
            (COUNTER, COUNTER_CHECKS),
            (inert, COUNTER_CHECKS),
            (_page("export default () => null;"), COUNTER_CHECKS),
            (COUNTER.replace("</div>;", "</div"), COUNTER_CHECKS),
        ],
    )
    assert correct.value == 1.0 and correct.meta["passed"] == "3/3"
    assert twin.value == pytest.approx(2 / 3)  # buttons are there and reset shows 0, but + does nothing
    assert "increase: no number 1 on the page" in _failed(twin)
    assert empty.value == 0.0 and "no button on the page" in _failed(empty)
    assert broken.value == 0.0 and broken.meta["status"] == "does not compile"


def test_type_into_fields_and_a_textarea(scorer) -> None:
    converter = _page(
        "export default function C() {\n  const [c, setC] = useState('');\n  const [note, setNote] = useState('');\n"
        "  const f = c === '' ? '' : (Number(c) * 9) / 5 + 32;\n"
        "  return <div><label htmlFor='c'>Celsius</label><input id='c' value={c} onChange={(e) => setC(e.target.value)} />"
        "<p>{f === '' ? 'Type a temperature' : `${f} °F`}</p>"
        "<textarea value={note} onChange={(e) => setNote(e.target.value)} /><small>{140 - note.length} left</small></div>;\n}"
    )
    checks = {
        "checks": [
            {
                "name": "fahrenheit",
                "do": [{"type": {"role": "textbox", "label": "celsius"}, "value": "100"}],
                "expect": [{"number": 212}],
            },
            {
                "name": "every keystroke",
                "do": [{"type": {"tag": "textarea"}, "value": "hello"}],
                "expect": [{"text": r"\b135 left"}],
            },
            {
                "name": "text changes",
                "do": [{"type": {"role": "textbox", "label": "celsius"}, "value": "0"}],
                "expect": [{"text_changes": True}, {"number": 32}],
            },
        ]
    }
    (v,) = _score(scorer, [(converter, checks)])
    assert v.value == 1.0, _failed(v)


def test_change_a_select_a_checkbox_and_a_range(scorer) -> None:
    page = _page(
        "export default function P() {\n  const [size, setSize] = useState('S');\n  const [cheese, setCheese] = useState(false);\n"
        "  const [v, setV] = useState(50);\n  const price = { S: 8, M: 10, L: 12 }[size] + (cheese ? 1.5 : 0);\n"
        "  return <form><select value={size} onChange={(e) => setSize(e.target.value)}><option value='S'>Small</option>"
        "<option value='M'>Medium</option><option value='L'>Large</option></select>"
        "<label><input type='checkbox' checked={cheese} onChange={(e) => setCheese(e.target.checked)} /> Cheese</label>"
        "<input type='range' min='0' max='100' value={v} onChange={(e) => setV(Number(e.target.value))} />"
        "<p>Price: ${price.toFixed(2)}</p><p>Volume {v}</p></form>;\n}"
    )
    checks = {
        "checks": [
            {
                "name": "select by text",
                "do": [{"change": {"role": "combobox"}, "value": "large"}],
                "expect": [{"text": r"\$12\.00"}],
            },
            {
                "name": "checkbox",
                "do": [{"change": {"role": "checkbox", "label": "cheese"}, "value": True}],
                "expect": [{"number": 9.5}],
            },
            {
                "name": "checkbox by click twice",
                "do": [{"click": {"role": "checkbox"}}, {"click": {"role": "checkbox"}}],
                "expect": [{"number": 8}],
            },
            {
                "name": "range",
                "do": [{"change": {"role": "slider"}, "value": 80}],
                "expect": [{"text": "Volume 80"}],
            },
            {
                "name": "no such option",
                "do": [{"change": {"role": "combobox"}, "value": "huge"}],
                "expect": [{"number": 8}],
            },
        ]
    }
    (v,) = _score(scorer, [(page, checks)])
    assert v.meta["passed"] == "4/5", _failed(v)
    assert "no option /huge/ in the select" in _failed(v) and '"S", "M", "L"' in _failed(v)


def test_submit_a_form_by_its_button_and_a_disabled_button_does_nothing(scorer) -> None:
    form = _page(
        "export default function F() {\n  const [email, setEmail] = useState('');\n  const [sent, setSent] = useState(null);\n"
        "  const [error, setError] = useState('');\n"
        "  const submit = (e) => { e.preventDefault(); if (!email.includes('@')) { setError('Enter a valid email'); return; } setSent(email); setEmail(''); };\n"
        "  if (sent) return <p>Thanks, {sent}!</p>;\n"
        "  return <form onSubmit={submit}><input type='email' placeholder='Email' value={email} onChange={(e) => setEmail(e.target.value)} />"
        "<button type='submit' disabled={email === ''}>Sign up</button>{error && <p role='alert'>{error}</p>}</form>;\n}"
    )
    checks = {
        "checks": [
            {
                "name": "submitted",
                "do": [{"type": {"role": "textbox"}, "value": "a@b.c"}, {"submit": {}}],
                "expect": [{"text": "thanks, a@b.c"}, {"disappears": {"role": "form"}}],
            },
            {
                "name": "invalid",
                "do": [
                    {"type": {"role": "textbox"}, "value": "abc"},
                    {"click": {"role": "button", "label": "sign up"}},
                ],
                "expect": [{"appears": {"text": "valid email"}}],
            },
            {
                "name": "disabled when empty",
                "do": [{"click": {"role": "button"}}],
                "expect": [{"absent": {"text": "valid email"}}, {"exists": {"role": "form"}}],
            },
            {
                "name": "enter submits",
                "do": [
                    {"type": {"role": "textbox"}, "value": "x@y.z"},
                    {"key": "Enter", "target": {"role": "textbox"}},
                ],
                "expect": [{"text": "thanks"}],
            },
        ]
    }
    (v,) = _score(scorer, [(form, checks)])
    assert v.value == 1.0, _failed(v)


def test_keys_hover_events_and_the_fake_clock(scorer) -> None:
    page = _page(
        "export default function K() {\n  const [last, setLast] = useState('none');\n  const [open, setOpen] = useState(true);\n"
        "  const [tip, setTip] = useState(false);\n  const [secs, setSecs] = useState(3);\n  const [drags, setDrags] = useState(0);\n"
        "  useEffect(() => { const f = (e) => { setLast(e.key); if (e.key === 'Escape') setOpen(false); };\n"
        "    window.addEventListener('keydown', f); return () => window.removeEventListener('keydown', f); }, []);\n"
        "  useEffect(() => { if (secs === 0) return; const id = setTimeout(() => setSecs(secs - 1), 1000); return () => clearTimeout(id); }, [secs]);\n"
        "  return <div><p>Last key: {last}</p>{open && <div role='dialog'>Panel</div>}"
        "<span onMouseEnter={() => setTip(true)} onMouseLeave={() => setTip(false)}>hover me</span>{tip && <em>tip text</em>}"
        '<p>{secs > 0 ? `${secs} s left` : "Time\'s up"}</p><p>{new Date().getFullYear()}</p>'
        "<div onDragOver={() => setDrags(drags + 1)}>dragged {drags} times</div></div>;\n}",
        imports="useEffect, useState",
    )
    checks = {
        "checks": [
            {"name": "key anywhere", "do": [{"key": "q"}], "expect": [{"text": "last key: q"}]},
            {
                "name": "escape closes",
                "do": [{"key": "Escape"}],
                "expect": [{"disappears": {"role": "dialog"}}],
            },
            {
                "name": "hover",
                "do": [{"hover": {"text": "^hover me$"}}],
                "expect": [{"appears": {"tag": "em"}}],
            },
            {
                "name": "leave",
                "do": [{"hover": {"text": "^hover me$"}}, {"leave": {"text": "^hover me$"}}],
                "expect": [{"absent": {"tag": "em"}}],
            },
            {"name": "countdown", "do": [{"wait": 2000}], "expect": [{"text": "1 s left"}]},
            {"name": "time's up", "do": [{"wait": 10000}], "expect": [{"text": "time's up"}]},
            {"name": "fixed date", "expect": [{"number": 2026}]},
            {
                "name": "dragover",
                "do": [
                    {"event": "dragover", "target": {"text": "^dragged"}},
                    {"event": "dragover", "target": {"text": "^dragged"}},
                ],
                "expect": [{"text": "dragged 2 times"}],
            },
        ]
    }
    (v,) = _score(scorer, [(page, checks)])
    assert v.value == 1.0, _failed(v)
    assert v.meta["checks_ms"] < 5000  # twelve seconds of page time, and more, in much less wall time


def test_fetch_answers_with_the_suites_json(scorer) -> None:
    page = _page(
        "export default function Posts() {\n  const [posts, setPosts] = useState(null);\n"
        "  useEffect(() => { fetch('/api/posts').then((r) => r.json()).then(setPosts); }, []);\n"
        "  if (!posts) return <p>Loading...</p>;\n  return <ul>{posts.map((p) => <li key={p.id}>{p.title}</li>)}</ul>;\n}",
        imports="useEffect, useState",
    )
    suite = {
        "fetch": [{"id": 1, "title": "First post"}, {"id": 2, "title": "Second post"}],
        "checks": [
            {
                "name": "posts",
                "expect": [{"exists": {"role": "listitem"}, "min": 2, "max": 2}, {"text": "second post"}],
            }
        ],
    }
    no_server = {"checks": suite["checks"]}
    with_server, without = _score(scorer, [(page, suite), (page, no_server)])
    assert with_server.value == 1.0, _failed(with_server)
    assert without.value == 0.0  # the sandbox has no network: the page stays on Loading...


def test_every_check_is_bounded_and_the_checks_before_a_hang_keep_their_result(sandbox_ready: None) -> None:
    page = _page(
        "export default function H() {\n  const [n, setN] = useState(0);\n"
        "  return <div><p>n={n}</p><button onClick={() => setN(n + 1)}>ok</button>"
        "<button onClick={() => { for (;;) {} }}>spin</button>"
        "<button onClick={() => setInterval(() => setN((x) => x + 1), 0)}>flood</button></div>;\n}"
    )
    first = {"name": "ok", "do": [{"click": {"role": "button", "label": "ok"}}], "expect": [{"text": "n=1"}]}
    spin = {
        "checks": [
            first,
            {
                "name": "spin",
                "do": [{"click": {"role": "button", "label": "spin"}}],
                "expect": [{"text": "n=0"}],
            },
            first | {"name": "after"},
        ]
    }
    flood = {
        "checks": [
            {
                "name": "flood",
                "do": [{"click": {"role": "button", "label": "flood"}}, {"wait": 100000}],
                "expect": [{"text": "n="}],
            }
        ]
    }
    scorer = make_checks(ChecksParams(timeout_s=2.5, check_timeout_s=1.0, memory_mb=768, parallel=2))
    t = time.monotonic()
    try:
        spun, flooded = _score(scorer, [(page, spin), (page, flood)])
    finally:
        scorer.close()
    # the page's deadline (timeout_s), not forever (slack for a loaded machine)
    assert time.monotonic() - t < 2.5 + 8.0
    assert spun.meta["passed"] == "1/3" and spun.value == pytest.approx(1 / 3)
    assert "spin: not run" in _failed(spun) and "took over" in spun.meta["status"]
    # a 0 ms interval over 100 s of page time: timers fire at most 2000 times a wait, and the check ends
    # by itself or at its own limit (check_timeout_s), the page's process still answering
    assert flooded.meta["status"] == "rendered" and flooded.meta["checks_ms"] < 3000


def test_interactions_escape_nothing_and_cannot_forge_a_pass(scorer, tmp_path: Path) -> None:
    canary = tmp_path / "canary.txt"
    canary.write_text("canary-58")
    outside = tmp_path / "outside"
    outside.mkdir()
    fs = "globalThis.process.getBuiltinModule('fs')"
    handlers = {
        "read": f"setOut({fs}.readFileSync({json.dumps(str(canary))}, 'utf8'))",
        "write": f"{fs}.writeFileSync({json.dumps(str(outside / 'w'))}, 'x'); setOut('wrote')",
        "spawn": f"globalThis.process.getBuiltinModule('child_process').execSync('touch {outside / 's'}'); setOut('spawned')",
        "forge": "globalThis.process.stdout.write('0 ' + JSON.stringify({ check: 0, ok: true }) + '\\n'); throw new Error('x')",
        "patch_dom": "Element.prototype.querySelectorAll = function () { const b = document.createElement('button'); b.textContent = 'win'; return [b]; }",
    }
    pages = []
    for name, handler in handlers.items():
        code = _page(
            "export default function E() {\n  const [out, setOut] = useState('start');\n"
            f"  return <div><button onClick={{() => {{ {handler}; }}}}>go</button><p>{{out}}</p></div>;\n}}"
        )
        shown = {"text": "canary-58|wrote|spawned"}
        if name == "patch_dom":  # the patched query would find a button named "win"
            shown = {"exists": {"role": "button", "label": "win"}}
        suite = {"checks": [{"name": name, "do": [{"click": {"role": "button"}}], "expect": [shown]}]}
        pages.append((code, suite))
    values = _score(scorer, pages)
    assert [v.value for v in values] == [0.0] * len(pages), [v.meta for v in values]
    assert all("the page threw" in _failed(v) for v in values[:4]), [_failed(v) for v in values]
    assert canary.read_text() == "canary-58" and list(outside.iterdir()) == []


def test_the_schema_names_the_fix_and_bad_rows_are_errors(scorer) -> None:
    with pytest.raises(ValidationError, match="exactly one of click"):
        parse_suite(
            [{"name": "x", "do": [{"click": {"role": "button"}, "wait": 5}], "expect": [{"text": "a"}]}]
        )
    with pytest.raises(ValidationError, match="count and change go together"):
        parse_suite([{"name": "x", "expect": [{"count": {"tag": "li"}}]}])
    with pytest.raises(ValidationError, match="not a regular expression"):
        parse_suite([{"name": "x", "expect": [{"text": "(unclosed"}]}])
    with pytest.raises(ValidationError, match="check names repeat"):
        parse_suite([{"name": "x", "expect": [{"text": "a"}]}] * 2)
    assert isinstance(parse_suite({"checks": [{"name": "x", "expect": [{"number": 1}]}]}), CheckSuite)
    no_field, bad = scorer.score(
        [
            Sample("", COUNTER, row={}),
            Sample("", COUNTER, row={"checks": [{"name": "x", "expect": [{"exists": {"role": "buton"}}]}]}),
        ]
    )
    assert isinstance(no_field, SampleError) and "no 'checks' field" in str(no_field)
    assert isinstance(bad, SampleError) and "0.expect.0.exists.role" in str(bad)


def test_all_or_none(sandbox_ready: None) -> None:
    s = make_checks(ChecksParams(all_or_none=True, memory_mb=768))
    try:
        inert = COUNTER.replace("setN(n + 1)", "setN(n)")
        full, part = s.score([Sample("", c, row={"checks": COUNTER_CHECKS}) for c in (COUNTER, inert)])
    finally:
        s.close()
    assert (full.value, part.value) == (1.0, 0.0) and part.meta["passed"] == "2/3"


def test_a_spy_prop_records_its_calls(scorer) -> None:
    page = _page(
        "export default function SearchBar({ onSearch }) {\n  const [q, setQ] = useState('');\n"
        "  return <div><input value={q} onChange={(e) => setQ(e.target.value)} />"
        "<button onClick={() => onSearch(q.trim())}>Search</button></div>;\n}"
    )
    suite = {
        "props": {"onSearch": {"$botgrpo": "spy", "name": "onSearch"}},
        "checks": [
            {
                "name": "trimmed",
                "do": [{"type": {"role": "textbox"}, "value": "  cats "}, {"click": {"role": "button"}}],
                "expect": [{"called": "onSearch", "args": r'^\["cats"\]$'}],
            },
            {
                "name": "not before a click",
                "do": [{"type": {"role": "textbox"}, "value": "x"}],
                "expect": [{"not_called": "onSearch"}],
            },
            {
                "name": "wrong args",
                "do": [{"click": {"role": "button"}}],
                "expect": [{"called": "onSearch", "args": "cats"}],
            },
        ],
    }
    (v,) = _score(scorer, [(page, suite)])
    assert v.meta["passed"] == "2/3" and 'wrong args: the onSearch prop was called with [""]' in _failed(v)
