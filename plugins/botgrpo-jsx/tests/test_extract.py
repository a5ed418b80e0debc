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
