"""jsx.compiles through the persistent esbuild worker, strict TypeScript mode, and the fallback."""

from __future__ import annotations

import pytest

from botgrpo_core.signals import Sample, SampleError
from botgrpo_jsx import nodeenv
from botgrpo_jsx.params import CompilesParams
from botgrpo_jsx.plugin import make_compiles

GOOD = "```tsx\nexport const A = ({x}: {x?: number}) => <>{x?.toFixed(1) ?? 'none'}</>;\n```"
BAD = "```jsx\nexport const A = () => <div><p></div>;\n```"


def test_esbuild_verdicts(need_node: None) -> None:
    scorer = make_compiles(CompilesParams())
    samples = [Sample("", t) for t in (GOOD, BAD, "```css\n.a{}\n```", "")]
    assert scorer.score(samples) == [1.0, 0.0, 0.0, 0.0]
    assert scorer.metrics()["jsx.compiles/fallback"] == 0.0


def test_a_redeclared_name_in_javascript_does_not_compile(need_node: None) -> None:
    """esbuild's TSX loader lets a redeclared import pass (TypeScript might merge it); JavaScript, and
    esbuild's JSX loader, reject it (SmolLM2 pages: `import Clock ...; const Clock = ...`)."""
    scorer = make_compiles(CompilesParams())
    twice = "import { useEffect, useEffect } from 'react';\nexport const A = () => <p/>;\n"
    shadow = "import Clock from 'react-clock';\nconst Clock = () => <p/>;\nexport default Clock;\n"
    fine = "import Clock from 'react-clock';\nconst App = () => <Clock/>;\nexport default App;\n"
    cast = "const n = <T,>(x: T) => x;\nexport const A = () => <p>{n(1)}</p>;\n"  # TypeScript in a js fence
    samples = [
        Sample("", f"```{lang}\n{code}```")
        for lang, code in (
            ("jsx", twice),
            ("jsx", shadow),
            ("", shadow),
            ("jsx", fine),
            ("js", cast),
            ("tsx", shadow),
        )
    ]
    # a TypeScript fence keeps esbuild's TypeScript verdict; TypeScript syntax in a js fence still compiles
    assert scorer.score(samples) == [0.0, 0.0, 0.0, 1.0, 1.0, 1.0]
    scorer.close()


def test_prefetched_batches_compile_on_a_thread_and_give_the_same_verdicts(need_node: None) -> None:
    """The mixture's prefetch: esbuild works while other signals score; score() collects that batch,
    scores any other batch itself, and the counters count each scored batch once."""
    scorer = make_compiles(CompilesParams())
    batch = [Sample("", t) for t in (GOOD, BAD, "```css\n.a{}\n```", GOOD.replace("A", "B"))]
    scorer.prefetch(batch)
    assert scorer.score(batch) == [1.0, 0.0, 0.0, 1.0]
    other = [Sample("", BAD), Sample("", GOOD)]
    scorer.prefetch(batch)  # not the batch score() then gets: dropped, and `other` compiled anew
    assert scorer.score(other) == [0.0, 1.0]
    metrics = scorer.metrics()
    assert (metrics["jsx.compiles/compiled"], metrics["jsx.compiles/failed"]) == (3.0, 3.0)
    scorer.prefetch(other)
    scorer.close()  # waits for the thread before it stops the Node worker
    assert scorer.score(other) == [0.0, 1.0]  # a closed scorer starts a new worker on demand
    scorer.close()


def test_esbuild_error_position_maps_to_completion_chars(need_node: None) -> None:
    completion = "Code für dich 🎉:\n```jsx\nconst ü = '日本'; const b = (;\n```"
    errors = make_compiles(CompilesParams()).diagnose(completion)["errors"]
    assert completion[errors[0]["start"]] == ";"  # esbuild's byte column converted to a str index


def test_strict_mode_typescript_offsets_and_verdicts(need_node: None) -> None:
    modules = nodeenv.node_modules()
    if modules is None or not nodeenv.has_typescript(modules):
        pytest.skip("typescript not installed")
    scorer = make_compiles(CompilesParams(strict=True, strict_checks="types"))
    completion = "```tsx\nconst s = '😀'; const é: number = 'a';\nexport const A = () => <div>{y}</div>;\n```"
    errors = scorer.diagnose(completion)["errors"]
    assert [completion[e["start"] : e["end"]] for e in errors] == ["é", "y"]  # UTF-16 offsets mapped back
    # the default checks names only: the type error goes, the undefined name stays
    names = make_compiles(CompilesParams(strict=True))
    assert [completion[e["start"] : e["end"]] for e in names.diagnose(completion)["errors"]] == ["y"]
    misspelt = (
        "```tsx\nimport { useStat } from 'react';\nexport const B = () => { useStat(0); return null; };\n```"
    )
    assert "useState" in names.diagnose(misspelt)["errors"][0]["message"]  # TS2724: did you mean
    # diagnose gives the check scoring's deadline (strict_timeout_s), not the compile's
    hurried = make_compiles(CompilesParams(strict=True, strict_timeout_s=0.001))
    told = hurried.diagnose(completion)
    assert told["compiles"] is False and "took over 0.001 s" in told["errors"][0]["message"]
    hurried.close()
    typed = "```tsx\nimport { P } from './types';\ninterface Q extends P {}\n"
    typed += "export const C = (q: Q) => <div>{q.title}</div>;\n```"  # P's members live in a file not given
    assert names.score([Sample("", typed), Sample("", misspelt)]) == [1.0, 0.0]
    ok = "```tsx\nimport { useState } from 'react';\nexport function C() { const [n, s] = useState(0);"
    ok += " return <button onClick={() => s(n + 1)}>{n}</button>; }\n```"
    assert scorer.score([Sample("", completion), Sample("", ok)]) == [0.0, 1.0]


def test_node_worker_kills_and_restarts_on_timeout(need_node: None) -> None:
    from botgrpo_jsx.node import NodeWorker

    node = nodeenv.find_node()
    with NodeWorker(node.node, nodeenv.node_modules(), timeout_s=5.0) as worker:
        big = "const a = [" + "1," * 200_000 + "];"
        (slow,) = worker.request([{"op": "compile", "code": big, "loader": "tsx"}], timeout_s=0.001)
        assert isinstance(slow, SampleError) and slow.reason == "timeout"
        assert worker.restarts == 1
        (reply,) = worker.request([{"op": "compile", "code": "<a/>", "loader": "jsx"}])
        assert reply["ok"] is True


def test_fallback_without_installed_packages(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("BOTGRPO_JSX_CACHE", str(tmp_path))  # nothing installed there
    scorer = make_compiles(CompilesParams(workers=0))
    assert scorer.backend == "tree-sitter" and "botgrpo_jsx.setup" in scorer.fallback_reason
    assert scorer.score([Sample("", GOOD), Sample("", BAD)]) == [1.0, 0.0]
    assert scorer.metrics()["jsx.compiles/fallback"] == 1.0
    with pytest.raises(RuntimeError, match="botgrpo_jsx.setup"):
        make_compiles(CompilesParams(backend="esbuild"))


def test_setup_is_idempotent(need_node: None) -> None:
    from botgrpo_jsx.setup import install

    assert install(quiet=True) == 0  # already installed: returns without running npm
