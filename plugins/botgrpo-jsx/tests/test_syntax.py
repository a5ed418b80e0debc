"""jsx.syntax spans: where errors are put, in completion characters."""

from __future__ import annotations

from botgrpo_core.signals import Sample
from botgrpo_jsx.params import SyntaxParams
from botgrpo_jsx.plugin import make_syntax

INLINE = SyntaxParams(workers=0)


def spans(completion: str, params: SyntaxParams = INLINE) -> list:
    (result,) = make_syntax(params).score([Sample("", completion)])
    assert isinstance(result, list)
    return result


def test_valid_code_has_no_span() -> None:
    assert spans("```tsx\nexport const A = ({x}: {x?: number}) => <>{x ?? 0}</>;\n```") == []


def test_a_missing_brace_is_blamed_where_the_indentation_puts_it() -> None:
    code = "function App() {\n  if (a) {\n    return 1;\n\n  return 2;\n}\n"
    (span,) = spans(code)
    # tree-sitter reports the end of input (and blamed the function's `{`); the `}` that is missing
    # closes the `if`: between `return 1;` and the dedented `return 2;`, where the repair parses.
    assert code[span.start : span.end] == ";\n\n  return" and span.meta["repair"] == "}"
    assert span.meta["at"] == code.index("return 2") and span.value == -1.0
    # a missing opener: the `{` after `if (a)` (the `}` at the `if`'s indentation closes nothing)
    code = "function App() {\n  if (a)\n    return 1;\n  }\n  return 2;\n}\n"
    (span,) = spans(code)
    assert span.meta["repair"] == "{" and span.meta["at"] == code.index("if (a)") + len("if (a)")
    # a missing `)` before a block: closes on its own line, before the `{`
    code = "function App() {\n  if (check(a) {\n    return 1;\n  }\n}\n"
    (span,) = spans(code)
    assert span.meta["repair"] == ")" and code[span.start : span.end] == ") {"


def test_a_lost_bracket_on_a_later_line_is_placed_by_the_text_of_its_line() -> None:
    # the `{` of a JSX attribute: error recovery swallows `} /> : f(x)` into JSX text, so both `{`
    # and `(` counts are off by one; the `{` repair after `icon=` is the one that parses
    code = "export function A(props) {\n  const icon = props.on ? <I title={props.t} icon=props.icon} /> : f(x);\n  return icon;\n}\n"
    (span,) = spans(code)
    assert span.meta["repair"] == "{" and span.meta["at"] == code.index("icon=props") + len("icon=")
    # the `{` of a named import after a default one, on a line past the first (its places are text offsets)
    code = "import x from 'x';\nimport React, type ReactNode} from 'react';\nexport const A = (): ReactNode => null;\n"
    (span,) = spans(code)
    assert span.meta["repair"] == "{" and span.meta["at"] == code.index("type ReactNode")


def test_a_lost_paren_that_merged_two_names_is_placed_between_them() -> None:
    # `useDocById(item.docId)` without its `(`: one word, whose halves are names the code uses
    code = "import {useDocById} from 'x';\nexport function C({item}) {\n  const doc = useDocByIditem.docId);\n  return doc;\n}\n"
    (span,) = spans(code)
    assert span.meta["repair"] == "(" and span.meta["at"] == code.index("useDocByIditem") + len("useDocById")
    assert code[span.start : span.end].startswith("useDocByIditem")


def test_missing_token_is_widened_to_its_neighbours() -> None:
    code = "const x = [1, 2].map(i => <li>{i}</li>;\nexport default x;\n"
    (span,) = spans(code)
    assert span.end > span.start
    assert code[span.start : span.end] == ">;"  # the tokens either side of the missing `)`
    assert span.start == code.index("</li>") + 4


def test_offsets_after_non_ascii_text() -> None:
    prefix = "Hier ist der Code für 🎉:\n```jsx\nconst ü = '日本';\n"
    completion = prefix + "const b = (;\n```"
    (span,) = spans(completion)
    assert "(" in completion[span.start : span.end] or ";" in completion[span.start : span.end]
    assert span.start >= len(prefix)


def test_valid_prefix_reward() -> None:
    code = "const a = 1;\nconst b = 2;\nconst c = (;\n"
    result = spans(code, SyntaxParams(workers=0, valid_prefix_value=0.1))
    positive = [code[s.start : s.end] for s in result if s.value > 0]
    assert positive == ["const a = 1;", "const b = 2;"]
    assert all(s.value == -1.0 for s in result if s.value < 0)


def test_esprima_backend_reports_str_index() -> None:
    code = "const é = 1;\nconst b = (;"
    (span,) = spans(code, SyntaxParams(workers=0, parser="esprima"))
    assert code[span.start] == ";" and span.meta["parser"] == "esprima"
    # esprima (ES2017) rejects optional chaining: the documented limitation, not a crash.
    (span,) = spans("const a = b?.c;", SyntaxParams(workers=0, parser="esprima"))
    assert span.value == -1.0
