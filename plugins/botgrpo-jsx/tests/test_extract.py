"""Code extraction from completions."""

from __future__ import annotations

from botgrpo_jsx.extract import extract_code, fenced_blocks


def test_fenced_block_offsets_map_back() -> None:
    completion = "Voilà:\n```tsx\nconst A = () => <p/>;\n```\nbye"
    view = extract_code(completion)
    assert view is not None and view.lang == "tsx" and view.fenced
    assert completion[view.start : view.start + len(view.code)] == view.code == "const A = () => <p/>;\n"
    assert completion[view.to_completion(6)] == "A"


def test_bare_completion_and_unclosed_fence() -> None:
    assert extract_code("const a = 1;").code == "const a = 1;"
    view = extract_code("text\n```jsx\nconst a = <div>")
    assert view is not None and view.code == "const a = <div>" and view.lang == "jsx"


def test_block_choice_and_language_filter() -> None:
    completion = "```bash\nnpm i\n```\n```jsx\nshort\n```\n```js\nmuch longer code\n```\n"
    assert [b.lang for b in fenced_blocks(completion)] == ["bash", "jsx", "js"]
    assert extract_code(completion).code == "much longer code\n"
    assert extract_code(completion, block="first").code == "short\n"
    assert extract_code("```css\n.a {}\n```") is None


def test_code_before_a_lone_closing_fence_is_the_code() -> None:
    # SmolLM2 often leaves out the opening fence: code, a bare ```, then prose (react-18/1, react-26/2 ...).
    code = "import { useState } from 'react';\n\nconst A = () => <p>{1}</p>;\nexport default A;\n"
    completion = code + "```\n\nThis component uses the `useState` hook. We then render a paragraph.\n"
    view = extract_code(completion)
    assert view is not None and view.start == 0 and view.code == code
    # a longer example block after the prose does not win over the code it explains only if shorter
    example = completion + "\nUsage:\n```jsx\n<A />\n```\n"
    assert extract_code(example).code == code
    assert [b.code for b in fenced_blocks(example)] == [code, "<A />\n"]
    # prose first: the bare fence opens the block, as before
    prose = "Here it is:\n```\nconst a = 1;\n```\nDone."
    assert extract_code(prose).code == "const a = 1;\n"
    # code first but a labelled fence: that fence opens a block (the code before it stays outside)
    labelled = "const x = 1;\n```jsx\nconst y = <div/>;\nconst z = 2;\n```\n"
    assert extract_code(labelled).code == "const y = <div/>;\nconst z = 2;\n"
