"""Where a missing bracket belongs: blame the cause of a syntax error, not where the parser gave up.

A deleted ``}`` is reported by tree-sitter wherever its error recovery stops (often the end of the
file, blaming an innocent outer block). But a single missing bracket leaves a trace that locates
it: that kind's count is unbalanced, and the indentation says where each block ends. So:

1. Count each bracket kind among the tokens (strings, comments, regexes and JSX text are single
   tokens, so their brackets do not count). More openers than closers: a closer is missing.
2. Match that kind only, forwards for a missing closer (backwards for a missing opener). A match is
   consistent when the closer sits on the line where the opener's block ends: the opener's own
   line, or the first later line indented no deeper than the opener's line. The first inconsistent
   match shows the orphan (without one: the innermost bracket left unmatched).
3. The orphan's partner goes where the indentation says (before the first token of the line that
   ends the block, at the end of a line that opens one, ...). That place is the blamed span, and the
   repair (insert the bracket there) is checked by parsing again: a blame whose repair does not
   remove the errors is dropped, and tree-sitter's own spans are used instead.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

import numpy as np

from botgrpo_jsx.token_table import CLOSERS, PAIRS, Tokens
from botgrpo_jsx.treesitter import Parsed

#: Insertion points tried per blame (each costs one parse of the repaired code).
MAX_CANDIDATES = 24


@dataclass(frozen=True)
class Blame:
    """A missing bracket: where it may go (byte offsets, most likely first) and what it is."""

    positions: tuple[int, ...]
    text: str
    message: str


def missing_brackets(parsed: Parsed) -> list[Blame]:
    """The blames for one missing bracket, if the counts show one (see the module docstring).

    One kind off: that kind's blame. Several kinds off: error recovery may have swallowed brackets
    of another kind into one token (``icon=props.icon} /> : f(x)`` becomes JSX text after the lost
    ``{``), so each kind off by exactly one gets a blame, in bracket order; the reparse of each
    repair decides.
    """
    tokens = Tokens(parsed)
    seen = Counter(tokens.kinds)
    counts = {opener: seen[opener] - seen[PAIRS[opener]] for opener in ("{", "(", "[")}
    counts["{"] += seen["${"]
    unbalanced = [k for k in ("{", "(", "[") if counts.get(k, 0) != 0]
    if len(unbalanced) > 1:
        unbalanced = [k for k in unbalanced if abs(counts[k]) == 1]
    found = (_kind_blame(tokens, k, counts[k] > 0) for k in unbalanced)
    return [b for b in found if b is not None]


def _kind_blame(tokens: Tokens, opener: str, forward: bool) -> Blame | None:
    """Where the one missing bracket of kind ``opener`` goes (a closer when ``forward``), most likely first."""
    place = _closer_place if forward else _opener_place
    orphans = _orphans(tokens, opener, forward)
    positions: list[int] = []
    found = None
    for o in orphans:
        blame = place(tokens, o, opener)
        if blame is not None:
            found = found or blame
            positions += blame.positions
        # then anywhere on the orphan's own line (between it and the line's end, or start)
        row = int(tokens.row[o])
        if forward:
            positions += _row_ends(tokens, row, after=o)
        else:
            positions += [int(tokens.starts[k]) for k in range(o, int(tokens.first_tok[row]) - 1, -1)]
    if found is None:
        return None
    # an empty pair (`f()` from `f)`) is rarely what was meant: right next to an orphan goes last,
    # but for an arrow function's empty parameters (`return ) => {`) first
    beside = {int(tokens.ends[o]) if forward else int(tokens.starts[o]) for o in orphans}
    if opener == "(" and not forward:
        beside -= {int(tokens.starts[o]) for o in orphans if _before_arrow(tokens, o)}
    positions = [p for p in positions if p not in beside] + [p for p in positions if p in beside]
    if opener == "(" and forward:
        # `(a, b => {`: an arrow function's parameters lost their `)`, which goes before the `=>`
        positions = [*_arrow_params_ends(tokens, orphans), *positions]
    blame = _blame(positions, found.text, found.message, limit=MAX_CANDIDATES)
    return Blame(_nesting_fits(tokens, opener, forward, blame.positions), blame.text, blame.message)


def _before_arrow(tokens: Tokens, c: int) -> bool:
    """Whether token ``c`` is directly followed by ``=>`` on its line."""
    return c + 1 < len(tokens.kinds) and tokens.kinds[c + 1] == "=>" and tokens.line[c + 1] == tokens.line[c]


def _arrow_params_ends(tokens: Tokens, orphans: list[int]) -> list[int]:
    """For each ``(`` on an orphan's line from the orphan on, the end of the last token before the
    first ``=>`` after it with every bracket between them matched (``(a, b => {``: a lost ``)`` goes
    after ``b``; in ``f((a, b => {`` the orphan is ``f(``'s and the parameters' ``(`` the next one)."""
    out = []
    for o in orphans:
        row_end = int(tokens.last_tok[int(tokens.row[o])])
        for start in range(o, row_end + 1):
            if tokens.kinds[start] != "(":
                continue
            depth = 0
            for k in range(start + 1, row_end + 1):
                kind = tokens.kinds[k]
                if kind in PAIRS:
                    depth += 1
                elif kind in CLOSERS:
                    depth -= 1
                    if depth < 0:
                        break
                elif kind == "=>" and depth == 0:
                    if k - 1 > start:  # something between the `(` and the `=>`: the parameters
                        out.append(int(tokens.ends[k - 1]))
                    break
    return list(dict.fromkeys(out))


def _nesting_fits(tokens: Tokens, opener: str, forward: bool, positions: tuple[int, ...]) -> tuple[int, ...]:
    """The positions where the inserted bracket keeps its kind's nesting depth from going negative.

    A closer inserted at ``p`` must close something (depth >= 1 just before ``p``) and leave every
    later closer something to close (depth >= 1 after each bracket past ``p``, counted without it);
    an opener at ``p`` must leave every later depth >= -1. Any other place leaves a closer that closes
    nothing, so its reparse cannot be clean: those are not parsed (about 1 repair in 5 on broken code).
    """
    if not positions:
        return positions
    ours, steps = tokens.brackets(opener)
    if not ours:
        return positions
    starts = tokens.starts[ours]
    depth = np.cumsum(np.asarray(steps, dtype=np.int64))  # after each bracket of the kind
    after_min = np.minimum.accumulate(depth[::-1])[::-1]  # the least depth from each bracket on
    k = np.searchsorted(starts, np.asarray(positions, dtype=np.int64), side="left")  # brackets before p
    before = np.where(k > 0, depth[np.maximum(k - 1, 0)], 0)
    later = np.where(k < len(depth), after_min[np.minimum(k, len(depth) - 1)], np.iinfo(np.int64).max)
    fits = (before >= 1) & (later >= 1) if forward else later >= -1
    return tuple(p for p, ok in zip(positions, fits.tolist()) if ok)


def token_around(tokens_parsed: Parsed, position: int) -> tuple[int, int]:
    """The byte range to blame for an insertion at ``position``: the tokens either side of it."""
    source = tokens_parsed.source
    lo = len(source[:position].rstrip())
    hi = position + (len(source[position:]) - len(source[position:].lstrip()))
    before = tokens_parsed.root.descendant_for_byte_range(max(lo - 1, 0), lo) if lo > 0 else None
    after = tokens_parsed.root.descendant_for_byte_range(hi, hi + 1) if hi < len(source) else None
    start = (
        before.start_byte if before is not None and before.end_byte - before.start_byte < 200 else position
    )
    end = after.end_byte if after is not None and after.end_byte - after.start_byte < 200 else position
    return min(start, position), max(end, position)


def _orphans(tokens: Tokens, opener: str, forward: bool, limit: int = 3) -> list[int]:
    """Match one bracket kind (forwards: from openers; backwards: from closers); likely orphans.

    First the brackets matched out of place (the indentation says they lost their partner), then
    the ones left unmatched, innermost first.
    """
    stack: list[int] = []
    misplaced: list[int] = []
    sign = 1 if forward else -1
    brackets = list(zip(*tokens.brackets(opener)))  # (token, step): the only tokens that step
    for i, step in brackets if forward else reversed(brackets):
        step *= sign
        if step > 0:
            stack.append(i)
        elif step < 0 and stack:
            j = stack.pop()
            o, c = (j, i) if forward else (i, j)
            if not _in_place(tokens, o, c) and len(misplaced) < limit:
                misplaced.append(j)
    return list(dict.fromkeys(misplaced + stack[::-1][:limit]))


def _in_place(tokens: Tokens, o: int, c: int) -> bool:
    """Whether opener ``o`` and closer ``c`` sit where the indentation says a pair does.

    On one line; or a block: the closer on the line where the indentation comes back. A bracket in
    the middle of a line whose next line is no deeper (``<A {...p />``) pairs on its own line.
    """
    ro, rc = int(tokens.row[o]), int(tokens.row[c])
    if ro == rc:
        return True
    if not tokens.last[o] and tokens.block_end(ro) == ro + 1:
        return False
    if not tokens.first[c] and rc > 0 and tokens.indents[rc - 1] <= tokens.indents[rc]:
        return False
    return tokens.block_end(ro) == rc


def _row_ends(tokens: Tokens, row: int, after: int = -1) -> list[int]:
    """Token boundaries on ``row`` from its end backwards (ends of tokens past ``after``)."""
    first, last = int(tokens.first_tok[row]), int(tokens.last_tok[row])
    return [int(tokens.ends[k]) for k in range(last, max(first, after + 1) - 1, -1)]


def _blame(positions: list[int], text: str, message: str, limit: int = 12) -> Blame:
    unique = list(dict.fromkeys(positions))[:limit]
    return Blame(tuple(unique), text, message)


def _closer_place(tokens: Tokens, o: int, opener: str) -> Blame | None:
    """Where the closer of opener token ``o`` may go, most likely first, by the indentation."""
    closer = PAIRS[tokens.kinds[o]]
    row = int(tokens.row[o])
    end_row = tokens.block_end(row)
    message = f"missing {closer!r} (the {tokens.kinds[o]!r} here is never closed)"
    own_line = _row_ends(tokens, row, after=o)
    if not tokens.last[o] and (end_row is None or end_row == row + 1):
        # an opener inside its line whose next line is no deeper closes on its own line: before
        # a last `{`, `;` or `,` (`if (x {`, `f(a;`), else at the end of the line
        last = int(tokens.last_tok[row])
        ordered = own_line[1:2] + own_line[:1] if tokens.kinds[last] in ("{", ";", ",") else own_line[:2]
        return _blame([*ordered, *own_line[2:]], closer, message)
    if end_row is None:  # the block runs to the end of the input: it closes there
        return _blame([int(tokens.ends[-1]), *own_line], closer, message)
    line_start = int(tokens.starts[tokens.first_tok[end_row]])
    ends = _row_ends(tokens, end_row)
    if tokens.last[o]:
        # a block: its closer starts the line where the indentation comes back
        return _blame([line_start, *reversed(ends)], closer, message)
    late = [*ends[1:2], *ends[:1], *ends[2:], line_start]
    if tokens.kinds[int(tokens.last_tok[row])] == "{":
        # `function A(props: P {`: the block after it is not the bracket's; it closes before the `{`
        return _blame([*own_line[1:2], *late, *own_line[2:]], closer, message)
    # a call spread over lines (`useEffect(() => {` ... `}, [x]`): it closes late on that line
    return _blame(late, closer, message)


_LEX = re.compile(rb"[A-Za-z_$][\w$]*|\d[\w.]*|'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"|\.\.\.|=>|\S")
_NOT_OPERANDS = frozenset({b"import", b"const", b"let", b"var", b"return", b"export", b"new", b"typeof"})
_NOT_STARTS = frozenset({b"in", b"of", b"as", b"instanceof"})
_BRACE_AFTER = frozenset({b"import", b"const", b"let", b"var", b"=", b"=>", b"return", b":", b"export"})


def _lex(source: bytes, start: int, end: int) -> list[tuple[int, bytes]]:
    """(offset, text) of the lexical tokens of ``source[start:end]``, then ``end`` itself.

    Under error recovery tree-sitter's leaves can swallow words (``clsx props`` as one node), so
    the candidate places on one line come from the text.
    """
    found = [(m.start(), m.group()) for m in _LEX.finditer(source, start, end)]  # offsets into source
    return [*found, (end, b"")]


def _word(text: bytes) -> bool:
    return text[:1].isalnum() or text[:1] in (b"_", b"$")


def _opens_here(lexed: list[tuple[int, bytes]], k: int, opener: str) -> bool:
    """Whether a missing ``opener`` before lexed token ``k`` fits the tokens around it: ``f x`` (two
    operands touching) for ``(``; after ``import``/``const``/``=``/... (or an import's ``,``) for ``{``."""
    if k == 0 or k >= len(lexed) - 1:
        return False
    prev, nxt = lexed[k - 1][1], lexed[k][1]
    if opener == "(":
        ends = prev in (b")", b"]") or prev[:1] in (b"'", b'"') or (_word(prev) and prev not in _NOT_OPERANDS)
        starts = (
            nxt[:1] in (b"'", b'"', b"[", b"!", b"`")
            or nxt == b"..."
            or (_word(nxt) and nxt not in _NOT_STARTS)
        )
        return ends and starts
    if opener == "{":
        return prev in _BRACE_AFTER or (prev == b"," and lexed[0][1] == b"import")
    return prev in (b"=", b"(", b",", b"return", b":")


_NAME = re.compile(rb"[A-Za-z_$][\w$]*")


def _word_splits(source: bytes, lexed: list[tuple[int, bytes]]) -> list[int]:
    """Places inside a word where a lost ``(`` merged a callee and its argument (``useDocByIditem``
    from ``useDocById(item``): both halves are names the code uses elsewhere."""
    names: set[bytes] = set()
    out = []
    for start, word in lexed:
        if len(word) < 4 or not _word(word) or word[:1].isdigit():
            continue
        if not names:
            names = set(_NAME.findall(source))
        out += [start + j for j in range(2, len(word) - 1) if word[:j] in names and word[j:] in names]
    return out


def _opener_place(tokens: Tokens, c: int, opener: str) -> Blame | None:
    """Where the opener of closer token ``c`` may go, most likely first, by the indentation."""
    row = int(tokens.row[c])
    message = f"missing {opener!r} (the {tokens.kinds[c]!r} here closes nothing)"
    first = int(tokens.first_tok[row])
    same_line = not tokens.first[c] and (row == 0 or tokens.indents[row - 1] <= tokens.indents[row])
    head = None if same_line else tokens.block_head(row)
    if head is None:
        # on the closer's line (`render element, container)`): where it starts a list or an operand
        # after a callee (`f x` is not JavaScript), else nearest the parser's first error
        hint = tokens.error_at if tokens.error_at is not None else int(tokens.starts[c])
        lexed = _lex(tokens.source, int(tokens.starts[first]), int(tokens.starts[c]))
        source, closer = tokens.source, int(tokens.starts[c])

        def rank(k: int) -> tuple[bool, bool, bool, int]:
            place = lexed[k][0]
            # `{ a }` spacing: a `{` lost from between spaces leaves two (`import  a, b }`)
            mirror = opener == "{" and (source[place - 2 : place] == b"  ") != (
                source[closer - 1 : closer] == b" "
            )
            # `import D, {a}` is where an import's `{` follows a name
            named = opener == "{" and lexed[0][1] == b"import" and lexed[k - 1][1] != b","
            return (not _opens_here(lexed, k, opener), mirror, named, abs(place - hint))

        ranked = sorted(range(len(lexed)), key=rank)
        splits = _word_splits(tokens.source, lexed) if opener == "(" else []
        return _blame([*splits, *(lexed[k][0] for k in ranked)], opener, message)
    ends = _row_ends(tokens, head)
    if tokens.first[c]:
        # a block closed by a line-leading closer: it opens at the end of the head line
        return _blame(ends, opener, message)
    # a call spread over lines: its `(` follows a callee on the head line
    first_head, last_head = int(tokens.first_tok[head]), int(tokens.last_tok[head])
    callees = [
        int(tokens.ends[k])
        for k in range(first_head, last_head)
        if tokens.kinds[k] in ("identifier", "property_identifier", ">") and tokens.kinds[k + 1] == "("
    ]
    return _blame([*callees, *ends], opener, message)
