"""jsx.rules: each rule fires on its violation and stays quiet on the fixed code."""

from __future__ import annotations

import pytest

from botgrpo_core.signals import Sample
from botgrpo_jsx.params import RulesParams
from botgrpo_jsx.plugin import make_rules

INLINE = RulesParams(workers=0)


def violations(code: str, prompt: str = "", params: RulesParams = INLINE, row: dict | None = None) -> list:
    (result,) = make_rules(params).score([Sample(prompt, code, row=row or {})])
    assert isinstance(result, list)
    return [
        (s.meta["rule"] if "rule" in s.meta else s.meta["items"][0]["rule"], code[s.start : s.end])
        for s in result
    ]


@pytest.mark.parametrize(
    ("bad", "good", "rule", "text"),
    [
        (
            "const L = ({xs}) => <ul>{xs.map(x => <li>{x}</li>)}</ul>;",
            "const L = ({xs}) => <ul>{xs.map(x => <li key={x}>{x}</li>)}</ul>;",
            "missing_key",
            "<li>",
        ),
        (
            "function A() { if (x) { const [a] = useState(0); } return null; }",
            "function A() { const [a] = useState(0); return null; }",
            "hooks",
            "useState(0)",
        ),
        (
            "function A() { for (const x of y) { useEffect(() => {}); } return null; }",
            "function A() { useEffect(() => {}); return null; }",
            "hooks",
            "useEffect(() => {})",
        ),
        (
            "function A({ x }) { if (!x) return null; const [a] = useState(0); return <p>{a}</p>; }",
            "function A({ x }) { const [a] = useState(0); if (!x) return null; return <p>{a}</p>; }",
            "hooks",
            "useState(0)",
        ),
        (
            "function A({ x }) { if (x) { try { return null; } finally {} } useEffect(() => {}); return 1; }",
            "function A({ x }) { const f = () => { return 1; }; useEffect(() => {}); return f(); }",
            "hooks",
            "useEffect(() => {})",
        ),
        (
            "function helper() { return useContext(C); }",
            "function useHelper() { return useContext(C); }",
            "hooks",
            "useContext(C)",
        ),
        (
            "import { Card } from './card';\nconst A = () => <Crad />;",
            "import { Card } from './card';\nconst A = () => <Card />;",
            "undefined_component",
            "Crad",
        ),
        (
            'const A = () => <div class="x" />;',
            'const A = () => <div className="x" />;',
            "class_attribute",
            "class",
        ),
    ],
)
def test_rule_fires_and_clears(bad: str, good: str, rule: str, text: str) -> None:
    assert (rule, text) in violations(bad)
    assert violations(good) == []


def test_class_on_a_component_is_flagged_unless_the_file_reads_a_class_prop() -> None:
    """Issue 40 item 10: `class=` on a capitalised or dotted element was never reported."""
    card = (
        "function Card({ className, children }) {\n  return <div className={className}>{children}</div>;\n}\n"
    )
    local = card + 'export default function App() {\n  return <Card class="promo">Sale</Card>;\n}\n'
    assert violations(local) == [("class_attribute", "class")]
    imported = (
        "import { Button } from '@acme/ui';\nimport { createStackNavigator } from '@react-navigation/stack';\n"
        "const Stack = createStackNavigator();\n"
        'export const Nav = () => (\n  <Stack.Navigator class="nav">\n'
        "    <Button class='primary' onClick={() => {}}>Go</Button>\n  </Stack.Navigator>\n);\n"
    )
    assert violations(imported) == [("class_attribute", "class"), ("class_attribute", "class")]
    (span,) = make_rules(INLINE).score([Sample("", local)])[0]
    assert "<Card>" in span.meta["message"] and "className" in span.meta["message"]
    # a component written to take a `class` prop (each way of reading a reserved word's prop)
    for reads in (
        "function Tag({ class: cls }) {\n  return <b className={cls} />;\n}\n",
        "function Tag(props) {\n  return <b className={props.class} />;\n}\n",
        "function Tag(props) {\n  return <b className={props['class']} />;\n}\n",
        "type P = { class?: string };\nfunction Tag(p: P) {\n  return <b />;\n}\n",
    ):
        assert violations(reads + 'const A = () => <Tag class="x" />;\n') == []
    # `for=` on a component is a design system's prop (reactstrap's Label), on a DOM element it is not
    label = 'import { Label } from \'reactstrap\';\nconst A = () => <><Label for="e">E</Label><label for="e" /></>;\n'
    (span,) = make_rules(INLINE).score([Sample("", label)])[0]
    assert span.meta["rule"] == "class_attribute" and span.start == label.index("<label for") + len("<label ")


def test_unclosed_tag_blames_the_orphan_not_its_ancestors() -> None:
    found = violations("function A() {\n  return (<div>\n    <p>hi\n  </div>);\n}\n")
    assert found == [("unclosed_tag", "<p>")]  # </div> closes <div>; <p> is the one never closed
    # same-name nesting: the indentation says which <div> lost its closing tag
    code = "const A = () => (\n  <div>\n    <div>\n      x\n  </div>\n);\n"
    ((found,),) = make_rules(INLINE).score([Sample("", code)])
    assert code[found.start : found.end] == "<div>" and found.start == code.rindex("<div>")
    assert ("unclosed_tag", "</b>") in violations("const A = () => <div><p>x</p></b></div>;")


def test_rules_stay_silent_where_the_code_does_not_parse() -> None:
    valid = (
        "import { Card } from './card';\n"
        "function A({ xs }) {\n  const [a, setA] = useState(0);\n"
        "  if (a) {\n    setA(1);\n  }\n  useEffect(() => {}, []);\n"
        "  return <Card>{xs.map((x) => <p key={x}>{x}</p>)}</Card>;\n}\n"
    )
    assert violations(valid) == []
    # a deleted `}` makes everything after it part of the if: the parser's guess, not a hook rule
    broken = valid.replace("    setA(1);\n  }\n", "    setA(1);\n")
    assert violations(broken) == []
    # a deleted `{` of the import loses the declaration of Card: no undefined-component span
    assert violations(valid.replace("{ Card }", " Card }")) == []


def test_declared_in_any_way_is_not_undefined() -> None:
    code = (
        "import * as UI from 'ui';\nimport Def, { X as Y } from 'x';\n"
        "function A({ icon: Icon, as: Comp = 'div' }) {\n"
        "  return <UI.Box><Icon/><Comp/><Y/><Def/><my-el/><svg:rect/></UI.Box>;\n}\n"
        "class B extends React.Component { render() { return <A/>; } }\n"
        "const M = React.memo(function Inner() { const [a] = useState(1); return <B/>; });\n"
    )
    assert [v for v in violations(code) if v[0] != "undefined_component" or v[1] == "React"] == []
    assert violations(code) == []


def test_export_requirement_from_prompt_and_row() -> None:
    code = "function App() { return <div/>; }"
    assert violations(code, "Write a React component.") == []
    assert violations(code, "Write and export a default component App.") == [("missing_export", "App")]
    assert violations(code + "\nexport default App;", "Export App as default.") == []
    assert violations(code, "", row={"require_export": True}) == [("missing_export", "App")]
    assert violations("export function App() { return <div/>; }", "export it") == []


def test_weights_switch_rules_off_and_set_values() -> None:
    from botgrpo_jsx.params import RuleWeights

    params = RulesParams(workers=0, weights=RuleWeights(class_attribute=0.0, missing_key=2.5))
    code = "const L = ({xs}) => <ul class='a'>{xs.map(x => <li>{x}</li>)}</ul>;"
    (result,) = make_rules(params).score([Sample("", code)])
    assert [(code[s.start : s.end], s.value) for s in result] == [("<li>", -2.5)]


def test_a_closing_tag_of_another_name_blames_the_tag_it_closes_only() -> None:
    # tree-sitter parses `<p>x</div>` (it does not compare names): its pair is the one to blame; the
    # name stack would also call the page's last `</div>` a stray
    code = "const A = ({show, x}) => <div>\n  {show ? <p>{x}</div> : null}\n</div>;\n"
    assert violations(code) == [("unclosed_tag", "<p>")]


def test_an_unclosed_tag_gets_the_same_span_from_rules_and_syntax() -> None:
    from botgrpo_jsx.params import SyntaxParams
    from botgrpo_jsx.plugin import make_syntax

    # a repair (delete `<h2>`) parses: the rules keep only the tag that jsx.syntax blames too
    code = (
        "export function P({a, b, show}) {\n  return <div>\n"
        '    <div className="x"><h2>{a}<p>{b}</p></div>\n    {show ? <p>{a}</p> : null}\n  </div>;\n}\n'
    )
    (rules,) = make_rules(INLINE).score([Sample("", code)])
    (syntax,) = make_syntax(SyntaxParams(workers=0)).score([Sample("", code)])
    assert [(s.start, s.end) for s in rules] == [(s.start, s.end) for s in syntax[:1]] == [(72, 76)]
    assert code[72:76] == "<h2>"
    # jsx.syntax also blames where the `<h2>` had to close (issue 40): after its `{a}`
    assert len(syntax) == 2 and syntax[1].meta["at"] == code.index("{a}<p>") + len("{a}")


def test_the_walks_shortcut_for_plain_nodes_finds_what_enter_would(monkeypatch) -> None:
    """The walk copies a parent's context to nodes _enter would do nothing with; with the shortcut off
    (every node through _enter) the facts are the same, on every corpus component and mutants of it."""
    import random
    from pathlib import Path

    from jsx_testing.mutations import KINDS, mutate

    from botgrpo_jsx import walk as walk_module
    from botgrpo_jsx.treesitter import parse

    def facts(parsed):  # type: ignore[no-untyped-def]
        f = walk_module._walk(parsed)
        node = lambda n: (n.start_byte, n.end_byte, n.type)  # noqa: E731
        fn = lambda F: None if F is None else (F.name, F.default_export, F.method, F.returns)  # noqa: E731
        return (
            [(node(c.node), node(c.callee), fn(c.function), c.problem, c.broken) for c in f.calls],
            [(node(e), broken) for e, broken in f.elements],
            [(node(t.node), t.closing, t.name, t.indent, t.element) for t in f.tags],
            [node(e) for e in f.exports],
            [node(e) for e in f.cjs_exports],
            sorted(f.declared),
            f.visits,
            f.skipped,
        )

    rng = random.Random(0)
    codes = [p.read_text() for p in sorted((Path(__file__).parent / "data" / "components").iterdir())]
    codes += [m.code for code in codes for kind in KINDS for m in mutate(code, kind, rng, 1)]
    parses = [parse(code, 5.0) for code in codes]
    assert any(p.root.has_error for p in parses) and any(not p.root.has_error for p in parses)
    shortcut = [facts(p) for p in parses]
    opaque, _, names = walk_module._kind_sets("tsx")
    monkeypatch.setattr(walk_module, "_kind_sets", lambda grammar: (opaque, frozenset(), names))
    assert [facts(p) for p in parses] == shortcut
