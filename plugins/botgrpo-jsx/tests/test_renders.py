"""jsx.renders / jsx.render_errors: real React in the sandbox, hostile components, crash placement."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from botgrpo_core.signals import Sample
from botgrpo_jsx import nodeenv
from botgrpo_jsx.params import RendersParams
from botgrpo_jsx.plugin import make_render_errors, make_renders

DATA = Path(__file__).parent / "data"
sys.path.insert(0, str(DATA))
from render_cases import CASES, expected_line  # noqa: E402

OK = "```jsx\nexport default function App() {\n  return <p className='ok'>fine</p>;\n}\n```"
TIMEOUT_S = 3.0


@pytest.fixture(scope="module")
def scorers(sandbox_ready: None):
    params = RendersParams(timeout_s=TIMEOUT_S, memory_mb=768, parallel=2)
    renders, errors = make_renders(params), make_render_errors(params)
    yield renders, errors
    renders.close()
    errors.close()


def _fenced(code: str) -> str:
    return f"```jsx\n{code}\n```"


def test_renders_and_maps_the_throw_to_its_source_line(scorers) -> None:
    renders, errors = scorers
    bad = "```tsx\nconst label: string = 'é🎉';\nexport default function App({ user }: { user: any }) {\n  const n = user.profile.name.first;\n  return <p>{label}{n}</p>;\n}\n```"
    samples = [Sample("", OK), Sample("", bad, row={"props": {}}), Sample("", "no code here")]
    assert renders.score(samples) == [1.0, 0.0, 0.0]
    ok_spans, (span,), none = errors.score(samples)
    assert ok_spans == [] and none == []
    assert (
        bad[span.start : span.end] == "const n = user.profile.name.first;"
    )  # the .tsx line, not the bundle's
    assert "Cannot read properties of undefined" in span.meta["error"] and span.value == -1.0


def test_missing_key_warning_is_a_local_span(scorers) -> None:
    renders, errors = scorers
    code = _fenced("export default function L({ xs }) {\n  return <ul>{xs.map((x) => <li>{x}</li>)}</ul>;\n}")
    sample = Sample("", code, row={"props": {"xs": [1, 2]}})
    assert renders.score([sample]) == [1.0]  # a warning is not a failure
    (span,) = errors.score([sample])[0]
    assert code[span.start : span.end] == "<li>" and span.value == -0.5 and "key" in span.meta["warning"]


def test_dom_nesting_warning_is_placed_on_the_nested_element(scorers) -> None:
    renders, errors = scorers
    code = _fenced(
        "export default function A() {\n  return (\n    <p>\n      <div>block</div>\n    </p>\n  );\n}"
    )
    sample = Sample("", code, row={"props": {}})
    assert renders.score([sample]) == [1.0]  # react-dom's client warns; it still renders
    (span,) = errors.score([sample])[0]
    assert (
        code[span.start : span.end] == "<div>block</div>"
        and "cannot be a descendant of <p>" in span.meta["warning"]
    )


def test_props_are_synthesised_from_usage() -> None:
    from botgrpo_jsx.props import FUNCTION, STUB, synthesise
    from botgrpo_jsx.treesitter import parse

    code = (
        "export function Card({ items, onPick, user, title, count = 0, ...rest }) {\n"
        "  return <div onClick={onPick}>{title}{user.name}{items.map((i) => i)}{props2.x}</div>;\n}\n"
        "export const Other = (props) => <p>{props.label}{props.rows.length}</p>;\n"
    )
    props = synthesise(parse(code, 5.0))
    assert props == {
        "items": [],
        "onPick": FUNCTION,
        "user": STUB,
        "title": "text",
        "label": "text",
        "rows": [],
    }


def test_props_fit_element_types_and_children_given_to_clone_element() -> None:
    from botgrpo_jsx.props import ELEMENT, STUB, synthesise
    from botgrpo_jsx.treesitter import parse

    code = (
        "export default function Layout({ Component, Icon, pageProps, children, footer }) {\n"
        "  return <main><Icon size={2} /><Component {...pageProps} />\n"
        "    {Children.map(children, (c) => cloneElement(c, { pageProps }))}{footer}</main>;\n}\n"
    )
    props = synthesise(parse(code, 5.0))
    assert props["Component"] == STUB and props["Icon"] == STUB
    assert props["children"] == ELEMENT and props["footer"] == "text"
    assert synthesise(parse("export const P = ({ children }) => <p>{children}</p>;\n", 5.0)) == {
        "children": "text"
    }


def test_renders_as_a_browser_does(sandbox_ready: None) -> None:
    """A browser page: a DOM before the module runs, a root for entry files, permissive stubs for
    imports a bundler would resolve, no Node built-ins or globals (tests/data/render_browser_cases.py).
    A deadline of its own: 21 fresh render processes must not time out on a loaded machine."""
    from render_browser_cases import BROWSER_FAILS, BROWSER_RENDERS

    renders = make_renders(RendersParams(timeout_s=15.0, memory_mb=768, parallel=2))
    cases = BROWSER_RENDERS + BROWSER_FAILS
    samples = [Sample("", _fenced(code)) for _, code in cases]
    verdicts = dict(zip((kind for kind, _ in cases), renders.score(samples), strict=True))
    assert {kind: verdicts[kind] for kind, _ in BROWSER_RENDERS} == {kind: 1.0 for kind, _ in BROWSER_RENDERS}
    assert {kind: verdicts[kind] for kind, _ in BROWSER_FAILS} == {kind: 0.0 for kind, _ in BROWSER_FAILS}
    details = renders.renderer.render(samples[len(BROWSER_RENDERS) :])
    builtin = [d["reply"]["error"]["message"] for d in details[:4]]
    assert all("Node.js built-in module, not available in the browser" in m for m in builtin), builtin
    renders.close()


def test_crashing_components_are_detected_and_placed(scorers) -> None:
    """A quick subset of tests/data/render_cases.py (all 47: scripts/evaluate_renders.py)."""
    renders, errors = scorers
    picked = [c for c in CASES if c[0] in _QUICK]
    samples = [Sample("", _fenced(code), row={"props": {}}) for _, code in picked]
    assert renders.score(samples) == [0.0] * len(picked)
    for (kind, code), spans, sample in zip(picked, errors.score(samples), samples, strict=True):
        line = expected_line(code)
        assert spans and sample.completion.count("\n", 0, spans[0].start) == line, (kind, spans)


_QUICK = {
    "effect_throws",
    "hook_made_conditional_at_run_time",
    "undefined_variable",
    "map_on_undefined_prop",
    "set_state_in_render",
    "hook_at_module_level",
    "class_called_as_function",
    "ref_current_in_render",
    "context_value_missing",
    "deep_recursion",
}


def test_corpus_components_render(scorers) -> None:
    """A sample of the real corpus renders (all 60: scripts/evaluate_renders.py)."""
    renders, _ = scorers
    files = sorted((DATA / "components").iterdir())[::6]
    samples = [Sample("", f"```{'tsx' if f.suffix == '.tsx' else 'jsx'}\n{f.read_text()}```") for f in files]
    verdicts = renders.score(samples)
    # a module of helpers: nothing to render (the entry points mount into the page's root and render)
    no_component = {"blueprintjs-core__src_components_slider_handleProps.tsx"}
    assert [
        f.name for f, v in zip(files, verdicts, strict=True) if v != 1.0 and f.name not in no_component
    ] == []
    assert any("main.tsx" in f.name or "index.jsx" in f.name for f in files)


def test_a_lookup_keyed_by_a_stubbed_import_renders_but_a_real_missing_type_fails(scorers) -> None:
    """`table[useThing().kind]` finds nothing only because `lib` is stubbed (DocVersionBanner's pattern):
    that element renders as a stub. The same lookup with a real key, or a stub turned into text by an
    earlier element, still fails on the missing type."""
    renders, errors = scorers
    table = "const T = { a: () => <b>a</b> };\n"
    stubbed = table + (
        "import { useThing } from 'lib';\nexport default function C() {\n  const X = T[useThing().kind];\n"
        "  return <div><X /></div>;\n}"
    )
    real_key = table + "export default function C() {\n  const X = T['zzz'];\n  return <div><X /></div>;\n}"
    earlier = table + (
        "import { useThing } from 'lib';\nexport default function C() {\n  const s = `${useThing()}`;\n"
        "  return <div><p>{s}</p><Y /></div>;\n}\nconst Y = T['zzz'];"
    )
    samples = [Sample("", _fenced(c), row={"props": {}}) for c in (stubbed, real_key, earlier)]
    assert renders.score(samples) == [1.0, 0.0, 0.0]
    _, (miss,), (late,) = errors.score(samples)
    assert samples[1].completion[miss.start : miss.end].strip() == "return <div><X /></div>;"
    assert "<Y />" in samples[2].completion[late.start : late.end]


def test_a_stubbed_navigator_re_rendered_after_a_state_update_renders(scorers) -> None:
    """Issue 40 item 10: React's development build reports a re-render with changed props to the
    Performance timeline, with a detail the runtime clones; a react-native navigator from a stubbed
    import put a stub there and failed with 'function Stub() {} could not be cloned'. A detail of
    the sample's own that cannot be cloned still fails, as in a browser."""
    renders, errors = scorers
    navigator = (
        "import React, { useEffect, useState } from 'react';\n"
        "import { createStackNavigator } from '@react-navigation/stack';\n"
        "import { StyleSheet, Text, View } from 'react-native';\n\n"
        "const Stack = createStackNavigator();\n"
        "const styles = StyleSheet.create({ header: { backgroundColor: '#123' } });\n\n"
        "function Feed() {\n  return <View><Text>Feed</Text></View>;\n}\n\n"
        "export default function App() {\n  const [signedIn, setSignedIn] = useState(false);\n"
        "  useEffect(() => { setSignedIn(true); }, []);\n  return (\n"
        "    <Stack.Navigator>\n"
        "      <Stack.Screen name='Feed' component={Feed}\n"
        "        options={{ title: signedIn ? 'Your feed' : 'Welcome', headerStyle: styles.header }} />\n"
        "    </Stack.Navigator>\n  );\n}"
    )
    own_detail = (
        "export default function App() {\n  performance.measure('m', { detail: { f() {} } });\n"
        "  return <p>x</p>;\n}"
    )
    samples = [Sample("", _fenced(c), row={"props": {}}) for c in (navigator, own_detail)]
    assert renders.score(samples) == [1.0, 0.0]
    nav_spans, (own,) = errors.score(samples)
    assert nav_spans == []
    assert "could not be cloned" in own.meta["error"]
    assert "performance.measure" in samples[1].completion[own.start : own.end]


# --- the hostile battery -------------------------------------------------------------------------
class Listener:
    """A TCP listener on 127.0.0.1 that records every connection it accepts."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self._stop = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self._stop = True
        self.thread.join()
        self.sock.close()


def _hostile(canary: Path, secret: str, port: int, outside: Path) -> dict[str, str]:
    """name -> component code; each renders what it obtained, so a leak shows in the reply."""
    # Node's real `process` (the sample's own scope has only a browser bundle's `process.env`)
    fs = "globalThis.process.getBuiltinModule('fs')"
    cp = "globalThis.process.getBuiltinModule('child_process')"
    body = {
        "read_canary": f"out = {fs}.readFileSync({json.dumps(str(canary))}, 'utf8');",
        "read_canary_import": f"out = require('fs').readFileSync({json.dumps(str(canary))}, 'utf8');",
        "write_file": f"{fs}.writeFileSync({json.dumps(str(outside / 'written'))}, 'x'); out = 'wrote';",
        "append_canary": f"{fs}.appendFileSync({json.dumps(str(canary))}, 'tampered'); out = 'wrote';",
        "child_process": f"out = String({cp}.execSync('cat {canary}; touch {outside / 'spawned'}'));",
        "spawn_sync": f"out = String({cp}.spawnSync('/bin/sh', ['-c', 'touch {outside / 'sh'}']).status);",
        "worker": "new (globalThis.process.getBuiltinModule('worker_threads').Worker)('1', { eval: true }); out = 'w';",
        "addon": "globalThis.process.dlopen({ exports: {} }, '/usr/lib/x86_64-linux-gnu/libc.so.6'); out = 'dl';",
        "vm_escape": "out = this.constructor.constructor('return process')().pid;",
        "function_eval": "out = new Function('return 1 + 1')();",
        "eval": "out = eval('2 + 2');",
        "vm_module": "out = globalThis.process.getBuiltinModule('vm').runInNewContext('this.constructor.constructor(\"return process\")().pid');",
        "env_secrets": "out = JSON.stringify(globalThis.process.env);",
        "pid_namespace": "out = 'pid=' + globalThis.process.pid + ' ppid=' + globalThis.process.ppid;",
        "kill_parent": "globalThis.process.kill(globalThis.process.ppid, 'SIGKILL'); out = 'sent';",
        "fetch_loopback": f"fetch('http://127.0.0.1:{port}/'); out = 'fetching';",
        "socket_loopback": f"globalThis.process.getBuiltinModule('net').connect({port}, '127.0.0.1'); out = 'connecting';",
        "exit_early": "globalThis.process.exit(0);",
        "fake_result": "globalThis.process.stdout.write('0123 ' + JSON.stringify({ ok: true }) + '\\n'); throw new Error('x');",
        "huge_output": "for (;;) globalThis.process.stdout.write('x'.repeat(1 << 16));",
        "pollute_prototype": "Object.prototype.polluted = 'yes'; out = 'polluted';",
        "infinite_loop": "for (;;) {}",
        "deep_recursion": "const f = (n) => f(n + 1) + 1; out = f(0);",
        "memory_bomb": "const a = []; for (;;) a.push(new Array(1e6).fill(1));",
        "array_buffer_bomb": "out = new ArrayBuffer(16 * 1024 * 1024 * 1024).byteLength;",
        "string_bomb": "let s = 'x'; for (;;) s += s;",
    }
    return {
        name: f"```jsx\nexport default function App() {{\n  let out = '';\n  {code}\n  return <p>{{String(out)}}</p>;\n}}\n```"
        for name, code in body.items()
    }


def test_hostile_components_escape_nothing_and_return_in_time(scorers, tmp_path: Path) -> None:
    renders, _ = scorers
    canary = tmp_path / "canary.txt"
    secret = "canary-7f3a9c"
    canary.write_text(secret)
    outside = tmp_path / "outside"
    outside.mkdir()
    listener = Listener()
    try:
        hostile = _hostile(canary, secret, listener.port, outside)
        names = list(hostile)
        samples = [Sample("", hostile[n]) for n in names]
        t = time.monotonic()
        verdicts = renders.score(samples)
        elapsed = time.monotonic() - t
        details = renders.renderer.render(samples)  # cached: the replies of the same renders
        time.sleep(0.3)  # a connection in flight would have arrived by now
    finally:
        listener.close()
    replies = {n: d.get("reply") for n, d in zip(names, details, strict=True)}
    text = {n: json.dumps(r, default=str) for n, r in replies.items()}
    assert all(secret not in t for t in text.values())  # nothing read the canary
    assert canary.read_text() == secret and list(outside.iterdir()) == []  # nothing written or spawned
    assert listener.connections == 0  # no connection reached the loopback listener
    assert "pid=1 ppid=0" in text["pid_namespace"]  # its own pid namespace: nothing else to signal
    assert replies["kill_parent"]["html"] == "<p>sent</p>"  # and it outlived its own kill(0)
    assert set(json.loads(replies["env_secrets"]["html"][3:-4].replace("&quot;", '"'))) <= {
        "BOTGRPO_JSX_NODE_MODULES",
        "NODE_ENV",
        "PATH",
    }
    # every sample came back within its deadline: the batch runs 2 at a time
    assert elapsed < TIMEOUT_S * len(names) / 2 + 10
    # these render (what they reach is a stub or an inert socket); every other one fails
    harmless = {"pid_namespace", "env_secrets", "pollute_prototype", "fetch_loopback", "socket_loopback"}
    harmless |= {"kill_parent"}  # its signal reaches only its own session, where pid 1 ignores SIGKILL
    must_fail = set(names) - harmless - {"read_canary_import"}
    assert [n for n in must_fail if verdicts[names.index(n)] != 0.0] == []
    # and rendering still works, with no pollution carried over from an earlier sample
    after = Sample("", _fenced("export default () => <p>{String(({}).polluted)}</p>;"))
    assert renders.score([after]) == [1.0]
    assert renders.renderer.render([after])[0]["reply"]["html"] == "<p>undefined</p>"


def test_the_boundary_refuses_to_start_without_its_isolation(tmp_path: Path) -> None:
    """No fallback that runs untrusted code unisolated: a boundary that cannot start is an error."""
    from botgrpo_jsx.sandbox import SandboxUnavailable, check_boundary

    with pytest.raises(SandboxUnavailable, match="namespaces are needed|could not start"):
        check_boundary(str(tmp_path / "no-such-node"))


def test_the_network_namespace_has_no_route_to_the_host(sandbox_ready: None) -> None:
    """The boundary itself (the sandbox's own prefix), with a process that waits for its connection."""
    from botgrpo_jsx.sandbox import _boundary

    node = nodeenv.find_node()
    assert node is not None
    listener = Listener()
    try:
        script = (
            f"const s = require('net').connect({listener.port}, '127.0.0.1');"
            "s.on('connect', () => { console.log('connected'); process.exit(0); });"
            "s.on('error', (e) => { console.log(e.code); process.exit(0); });"
        )
        out = subprocess.run(
            [*_boundary(node.node), "-e", script], capture_output=True, text=True, timeout=30
        )
    finally:
        listener.close()
    assert (
        out.stdout.strip() in ("ENETUNREACH", "ECONNREFUSED", "EADDRNOTAVAIL") and listener.connections == 0
    )


def test_a_signal_to_its_process_group_reaches_nothing_outside(sandbox_ready: None) -> None:
    """``kill(0)`` (``process.ppid`` is 0 in the pid namespace) signals the caller's process group.

    Without its own session that group holds the ``unshare`` wrapper outside the namespace: the
    wrapper died, its death signal killed Node, and whether the reply got out first was a race.
    """
    from botgrpo_jsx.sandbox import _boundary

    node = nodeenv.find_node()
    assert node is not None
    script = (
        "process.kill(0, 'SIGKILL'); process.kill(process.ppid, 'SIGKILL');"
        "setTimeout(() => { console.log('alive'); process.exit(0); }, 300);"
    )
    wrapped = subprocess.Popen(
        [*_boundary(node.node), "-e", script], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    out, _ = wrapped.communicate(timeout=30)
    # the wrapper exited with Node's own status, after Node outlived both signals
    assert (wrapped.returncode, out.strip()) == (0, "alive")
