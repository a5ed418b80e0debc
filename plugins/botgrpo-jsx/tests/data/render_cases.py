"""Components that compile but crash when rendered: one per failure kind, the crash line marked.

Each entry: (kind, code). The line holding ``// CRASH`` is where the error is thrown (the expected
span of ``jsx.render_errors``); ``None`` when the failure has no line (a timeout, memory, the
renderer's own check). Rendered with ``props: {}`` from the row unless the code says otherwise.
Written for this plugin's tests (Apache-2.0).
"""

from __future__ import annotations

H = "import React, { useState, useEffect, useRef, useMemo, useContext } from 'react';\n"


def _fn(body: str, ret: str = "<p>ok</p>") -> str:
    return H + "export default function App() {\n" + body + f"\n  return {ret};\n}}\n"


CASES: list[tuple[str, str]] = [
    ("undefined_variable", _fn("  const value = missingThing + 1; // CRASH")),
    ("undefined_function", _fn("  const value = computeTotal(3); // CRASH")),
    (
        "map_on_undefined_prop",
        H
        + "export default function List({ items }) {\n  return <ul>{items.map((x) => <li key={x}>{x}</li>)}</ul>; // CRASH\n}\n",
    ),
    ("null_member", _fn("  const user = null;\n  const name = user.name; // CRASH")),
    ("undefined_member_chain", _fn("  const config = {};\n  const port = config.server.port; // CRASH")),
    ("array_out_of_range_member", _fn("  const rows = [{ id: 1 }];\n  const id = rows[3].id; // CRASH")),
    ("object_as_child", _fn("  const item = { a: 1 };", "<div>{item}</div> // CRASH")),
    ("promise_as_child", _fn("  const data = Promise.resolve(1);", "<div>{data}</div> // CRASH")),
    ("set_state_in_render", _fn("  const [n, setN] = useState(0);\n  setN(n + 1); // CRASH")),
    ("component_renders_itself", H + "export default function App() {\n  return <App />; // CRASH\n}\n"),
    ("explicit_throw", _fn("  throw new Error('not implemented'); // CRASH")),
    ("json_parse", _fn("  const cfg = JSON.parse('{bad json'); // CRASH")),
    (
        "hook_at_module_level",
        H
        + "const [shared] = useState(0); // CRASH\nexport default function App() {\n  return <p>{shared}</p>;\n}\n",
    ),
    (
        "invalid_element_type",
        H + "const UI = {};\nexport default function App() {\n  return <UI.Button />; // CRASH\n}\n",
    ),
    (
        "class_without_render",
        H
        + "export default class App extends React.Component {\n  renderr() {\n    return <p>typo</p>;\n  }\n}\n",
    ),
    (
        "class_called_as_function",
        H
        + "class Helper {}\nexport default function App() {\n  const h = Helper(); // CRASH\n  return <p>x</p>;\n}\n",
    ),
    ("new_on_arrow", _fn("  const make = () => ({});\n  const m = new make(); // CRASH")),
    ("destructure_undefined", _fn("  const settings = undefined;\n  const { theme } = settings; // CRASH")),
    ("iterate_number", _fn("  let total = 0;\n  for (const x of 5) total += x; // CRASH")),
    ("spread_null", _fn("  const extra = null;\n  const all = [1, ...extra]; // CRASH")),
    ("bigint_mix", _fn("  const big = 10n;\n  const sum = big + 1; // CRASH")),
    ("invalid_array_length", _fn("  const slots = new Array(-1); // CRASH")),
    ("to_fixed_range", _fn("  const price = (1.5).toFixed(500); // CRASH")),
    ("repeat_negative", _fn("  const pad = '-'.repeat(-2); // CRASH")),
    ("method_on_number", _fn("  const count = 5;\n  const doubled = count.map((x) => x * 2); // CRASH")),
    ("invalid_date", _fn("  const when = new Date('not a date').toISOString(); // CRASH")),
    ("symbol_to_string", _fn("  const id = Symbol('id');\n  const label = `item-${id}`; // CRASH")),
    (
        "define_on_frozen",
        _fn(
            "  const frozen = Object.freeze({});\n  Object.defineProperty(frozen, 'x', { value: 1 }); // CRASH"
        ),
    ),
    (
        "circular_json",
        _fn("  const node = {};\n  node.self = node;\n  const text = JSON.stringify(node); // CRASH"),
    ),
    ("bad_uri", _fn("  const path = decodeURIComponent('%'); // CRASH")),
    ("bad_regexp", _fn("  const re = new RegExp('['); // CRASH")),
    ("clone_function", _fn("  const copy = structuredClone(() => 1); // CRASH")),
    ("map_not_iterable", _fn("  const lookup = new Map(5); // CRASH")),
    (
        "revoked_proxy",
        _fn(
            "  const { proxy, revoke } = Proxy.revocable({}, {});\n  revoke();\n  const v = proxy.x; // CRASH"
        ),
    ),
    (
        "missing_method",
        H
        + "export default class App extends React.Component {\n  render() {\n    return <p>{this.format()}</p>; // CRASH\n  }\n}\n",
    ),
    ("ref_current_in_render", _fn("  const input = useRef(null);\n  input.current.focus(); // CRASH")),
    ("children_only", _fn("", "React.Children.only(null) // CRASH")),
    ("clone_null_element", _fn("  const el = React.cloneElement(null); // CRASH")),
    ("throwing_memo", _fn("  const v = useMemo(() => { throw new Error('bad'); }, []); // CRASH")),
    (
        "context_value_missing",
        H
        + "const Theme = React.createContext(undefined);\nexport default function App() {\n  const theme = useContext(Theme);\n  return <p>{theme.color}</p>; // CRASH\n}\n",
    ),
    (
        "wrong_this_in_class",
        H
        + "export default class App extends React.Component {\n  label() {\n    return this.props.name.toUpperCase(); // CRASH\n  }\n  render() {\n    return <p>{this.label()}</p>;\n  }\n}\n",
    ),
    ("deep_recursion", _fn("  const depth = (n) => depth(n + 1) + 1; // CRASH\n  depth(0);")),
    ("infinite_loop", _fn("  while (true) {}")),
    ("memory_bomb", _fn("  const chunks = [];\n  for (;;) chunks.push(new Array(1e6).fill(7));")),
    ("array_buffer_bomb", _fn("  const big = new ArrayBuffer(8 * 1024 * 1024 * 1024); // CRASH")),
    ("suspend_forever", _fn("  React.use(new Promise(() => {})); // CRASH")),
    ("exports_no_component", H + "export const answer = 42;\n"),
    # seen by the client render only (effects run, a second render checks the hooks' order)
    ("effect_throws", _fn("  useEffect(() => {\n    throw new Error('effect failed'); // CRASH\n  }, []);")),
    (
        "update_loop_in_effect",
        _fn("  const [n, setN] = useState(0);\n  useEffect(() => {\n    setN(n + 1); // CRASH\n  });"),
    ),
    (
        "hook_made_conditional_at_run_time",
        _fn(
            "  const [ready, setReady] = useState(false);\n  useEffect(() => setReady(true), []);\n  if (ready) {\n    useMemo(() => 1, []); // CRASH\n  }"
        ),
    ),
]


def expected_line(code: str) -> int | None:
    """1-based line of the ``// CRASH`` marker, or ``None``."""
    for number, line in enumerate(code.splitlines(), 1):
        if "// CRASH" in line:
            return number
    return None
