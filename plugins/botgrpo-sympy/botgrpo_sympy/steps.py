"""``sympy.steps``: check every claim of every step of one completion (runs inside a worker).

(Over 450 lines: the checking order below is one sequence over shared per-completion state (values carried,
equations, the deadline); its parts with a job of their own already live beside it: equality.py, cases.py,
premises.py, credit.py, comparisons.py, softdeadline.py.)

Per step, each relation chain ``a = b = c`` is checked link by link:

- no variables: exact arithmetic (``17+5=22``), with ``1/3 = 0.33`` accepted as rounding by option;
- variables, true for all values: an identity (``(x+1)^2 = x^2+2x+1``);
- every variable has a value carried from earlier steps (``x = 3`` before): checked at those values;
- otherwise an equation: verified if it follows from the previous equation (or the prompt's
  equations), refuted if it holds at none of their solutions, else not checkable (a new premise);
  an equation restating one earlier in the same step (a polynomial in one letter, of its degree) is
  refuted when it keeps only some of the roots (``x^2 + x - 6 = 0``, that is ``(x + 3)(x - 3) = 0``).

``y = 2x + 1`` with ``y`` never seen before defines ``y`` (no verdict), and a chain whose first
side is empty continues the previous chain (``= x^2 + 2x + 1`` on the next line). The step's value
is -1 if any claim is refuted, else +1 if any is verified, else 0; its meta lists each claim.

It is the one home of the verdict order above (which check runs first, what a link carries to the next
one), kept in one module so that the order reads in one place; reading the prompt's
premises and a side (``premises``), the demo fast path (``fastpath``), the answer, case and claim-text
jobs live in their own modules (``answer``, ``answerline``, ``cases``, ``claimtext``). A completion the
length cap cut (``truncated``) has its unfinished end read as no claim (``truncated_cut``: its last line, or its
unfinished clause). Which verified claims earn their +1 (repeats, trivial claims, the bound) is ``credit``'s job;
the checker's own deadline, before the pool's kill, is ``softdeadline``'s (issue 56).
"""

from __future__ import annotations

import random
import re
import time
import zlib
from fractions import Fraction
from typing import Any

import mpmath
import sympy

from botgrpo_sympy import claimtext
from botgrpo_sympy.answer import scalar_text
from botgrpo_sympy.answerline import (
    answer_verdict,
    malformed_numeral_verdict,
    several_values,
    several_values_verdict,
)
from botgrpo_sympy.cases import ORDER, forget_angles, start_case
from botgrpo_sympy.claimstate import (
    Side,
    StepState,
    assignment,
    join_alternatives,
    join_branches,
    sentence_spans,
    short,
    show,
    span_of,
    to_expr,
)
from botgrpo_sympy.comparisons import compare, drop_result_unit, looks_like_rewrite, other_readings, rounded
from botgrpo_sympy.credit import INFO, Credit, answer_info, bound_credit
from botgrpo_sympy.equality import (
    Outcome,
    Verdict,
    constant_difference,
    equal,
    free_symbols,
    implied,
    same_degree_polynomials,
)
from botgrpo_sympy.fastpath import fast_arithmetic
from botgrpo_sympy.limits import CHECK_FAILURES, UNREADABLE, DigitOutsideBase
from botgrpo_sympy.mathparse import parse_value
from botgrpo_sympy.numberformat import ascii_digits, readable, visible
from botgrpo_sympy.numeval import Evaluator, Value
from botgrpo_sympy.params import StepsParams
from botgrpo_sympy.premises import parse_side, prompt_premises, prompt_tail
from botgrpo_sympy.segments import (
    ANSWER_HEADER,
    Claim,
    Piece,
    extract_answer,
    find_claims,
    split_steps,
    unfinished_start,
)
from botgrpo_sympy.softdeadline import LATE, CheckTimeout, late_record

#: Failures inside one claim's check (sympy/mpmath internals): that claim scores 0, the rest goes on.
_CLAIM_FAILURES = (*CHECK_FAILURES, sympy.polys.polyerrors.BasePolynomialError, mpmath.libmp.NoConvergence)


#: How repeated_steps compares two steps: case and white space ignored, a trailing "." or ":" too. Its -1, like
#: refute_bare_answer's, is a verdict on the form of the text (meta "form"), not on a claim's truth.
_SAID_AGAIN = re.compile(r"\s+")
#: A step shorter than this (characters, spaces removed) is never a repeat ("}", "= 5", "So").
MIN_REPEATED_STEP = 6


class StepChecker:
    """Checks the steps of one completion; ``check`` returns ``(start, end, value, meta)`` tuples."""

    def __init__(
        self,
        params: StepsParams,
        prompt: str,
        completion: str,
        truncated: bool = False,
        deadline: float | None = None,
    ) -> None:
        self.params = params
        self.deadline = deadline  # monotonic time to stop by: what was found before it stands (softdeadline)
        self.late = False
        # A completion the length cap cut: its unfinished end (the last line, or its last sentence) is no claim.
        self.cut = unfinished_start(completion, params.truncated_cut) if truncated else len(completion)
        self.limits = params.limits
        self.completion = completion
        self.prompt = prompt
        self._step_start = 0
        self._step_index = 0
        self._answer_header = False  # the last step was a bare "# Answer" line
        self._case_step: int | None = None  # the step that opened the latest case or hypothesis
        self._groups: list[
            tuple[int, int, list[dict[str, Any]]]
        ] = []  # the current step's claims and records
        seed = params.seed ^ zlib.crc32(completion.encode("utf-8", "replace"))
        self.rng = random.Random(seed)
        self.state = StepState()
        self.functions = claimtext.function_letters(prompt_tail(prompt, params) + "\n" + completion)
        self.state.premises, self.state.known = prompt_premises(prompt, params, self.functions)
        # repeated and trivial claims earn no +1 (issue 56)
        self.credit = Credit(prompt, params.credit_trivial, self.state.known)

    # -- parsing ----------------------------------------------------------------------------------------------
    def _parse(self, piece: Piece, latex: bool) -> Side:
        return parse_side(piece, latex, self.functions, self.limits)

    def _numeric(self, value: Any) -> Value | None:
        """Value of an expression using the carried values, or None."""
        if isinstance(value, Fraction):
            return value
        if value is None or not free_symbols(value) <= set(self.state.env):
            return None
        try:
            return Evaluator(self.state.env, self.limits)(value)
        except UNREADABLE:
            return None

    # -- claims -----------------------------------------------------------------------------------------------
    def check(self) -> list[tuple[int, int, float, dict[str, Any]]]:
        p = self.params
        out = []
        if self.completion and not self.completion.strip():
            # white space only: no attempt, never out-ranking an honest wrong one (issue 56)
            return [
                (0, len(self.completion), p.blank_value, {"claims": [], "status": "no text (blank_value)"})
            ]
        steps = split_steps(self.completion, p.step_split, p.step_regex)
        said: set[str] = set()  # the steps so far, as repeated_steps compares them
        for i, step in enumerate(steps):
            if i >= p.max_steps:
                # One span for all the rest: max_steps caps the number of spans, not only the work.
                status = f"not checked (max_steps): {len(steps) - i} more steps"
                out.append((step.start, steps[-1].end, 0.0, {"claims": [], "status": status}))
                break
            if self._past_deadline():
                out.append((step.start, steps[-1].end, 0.0, {"claims": [], "status": LATE}))
                break
            key = _SAID_AGAIN.sub("", step.text.lower()).rstrip(".!?,;:")
            if p.repeated_steps == "refute" and len(key) >= MIN_REPEATED_STEP and step.end <= self.cut:
                if key in said:
                    status = "a step said again word for word (repeated_steps: refute)"
                    out.append(
                        (step.start, step.end, -1.0, {"claims": [], "status": status, "form": "repeated"})
                    )
                    continue
                said.add(key)
            try:
                if len(step.text) > p.max_step_chars:
                    out.append(
                        (step.start, step.end, 0.0, {"claims": [], "status": "not checked (max_step_chars)"})
                    )
                elif step.end > self.cut:
                    out += self._check_cut_step(step)
                else:
                    out += self._check_step(step)
            except CheckTimeout:  # outside a claim: this step and the rest are 0, the steps before stand
                self.late = True
                out.append((step.start, steps[-1].end, 0.0, {"claims": [], "status": LATE}))
                break
        return bound_credit(out, p.max_credited_spans)

    def _past_deadline(self) -> bool:
        self.late = self.late or (self.deadline is not None and time.monotonic() > self.deadline)
        return self.late

    def _check_cut_step(self, step: Piece) -> list[tuple[int, int, float, dict[str, Any]]]:
        """A step that reaches into the unfinished last line: its finished lines are checked, the cut line is a 0
        span of its own ("2. 36 + 14 = 5" where the cap cut "50" is no claim)."""
        end = "last line" if self.params.truncated_cut == "line" else "unfinished sentence"
        status = {"claims": [], "status": f"not checked: the {end}, cut by the length cap"}
        cut = max(self.cut, step.start)
        line = Piece(self.completion[cut : step.end], cut, step.end)
        head = self.completion[step.start : cut].rstrip()
        out = self._check_step(Piece(head, step.start, step.start + len(head))) if head.strip() else []
        stripped = line.text.lstrip()
        start = line.start + len(line.text) - len(stripped)
        return [*out, (start, line.end, 0.0, status)] if stripped else out

    def _check_step(self, step: Piece) -> list[tuple[int, int, float, dict[str, Any]]]:
        """The step's span, or one span per sentence with claims when it has claims in several sentences (a
        paragraph gets a verdict per claim, not one for the whole)."""
        self._step_start = step.start
        self._step_index += 1
        self._groups = []
        results = self._fast_arithmetic(step.text)
        if results is None:
            results = self._claims_of(step)
        self.credit.apply(results)
        # several clauses with claims, or a "Step k:" block of lines: its claims' verdicts stay on their lines
        if len(self._groups) > 1 or (self._groups and "\n" in step.text.strip()):
            return sentence_spans(self.completion, step.start, step.end, self._groups)
        return [span_of(step.start, step.end, results)]

    def _fast_arithmetic(self, text: str) -> list[dict[str, Any]] | None:
        """``17+5=22`` / ``A: 14`` in the demo format without the tokenizer (``fastpath``), else None."""
        p = self.params
        answer = p.check_answer_line and p.answer_pattern is None
        found = fast_arithmetic(text, self.state, answer)
        if isinstance(found, tuple):  # "A: 14"
            return [self._answer_result(*found)]
        return found

    def _claims_of(self, step: Piece) -> list[dict[str, Any]]:
        for letter in claimtext.declared_letters(step.text):
            self.state.forget(sympy.Symbol(letter))
            self.credit.learn_letters({letter})
        claims = find_claims(step)[: self.params.max_claims_per_step]
        results: list[dict[str, Any]] = []
        after_header, self._answer_header = self._answer_header, bool(ANSWER_HEADER.match(step.text))
        if not claims:
            answer = extract_answer(step.text, self.params.answer_pattern)
            if answer is None and after_header and self.params.answer_pattern is None:
                answer = step  # "# Answer" on the line above: this whole line is the answer
            if answer is not None and self.params.check_answer_line:
                try:
                    results.append(self._check_answer_line(answer.text))
                except _CLAIM_FAILURES as exc:
                    reason = f"not checked: {type(exc).__name__}"
                    results.append({"claim": short(f"answer {answer.text}"), "verdict": 0, "reason": reason})
        lead_start = step.start
        in_case = False  # the claim before opened a case ("Try $a = 1$, $b = 2$": b = 2 is part of it)
        for claim in claims:
            if self._past_deadline():
                text = short(" ".join(s.text for s in claim.sides))
                self._groups.append((claim.sides[0].start, claim.sides[-1].end, [late_record(text)]))
                results.append(self._groups[-1][2][0])
                continue
            prefix = step.text[: claim.sides[0].start - step.start]
            at_start = not re.sub(r"[\s$]|\\\[|\\\(", "", prefix)
            lead = self.completion[lead_start : claim.sides[0].start]
            lead_start = claim.sides[-1].end
            trail = self.completion[claim.sides[-1].end : step.end].lstrip("$)\\] ")
            named = len(claim.sides) == 2 and len(claim.sides[0].text) == 1 and claim.sides[0].text.isalpha()
            case = claimtext.is_case_lead(lead) or (in_case and named and claimtext.continues_list(lead))
            in_case = case and named
            try:
                # a claim that opens its own $...$ cannot continue the words before it
                # (a "$" before a number outside LaTeX is currency: "12 cookies at $2 = $24" opens no math)
                opens = claim.latex and claimtext.opens_math(lead)
                lost_left = not opens and claimtext.may_have_lost_left_operand(lead, claim.sides[0].text)
                new_case = claimtext.opens_case(lead)
                if claimtext.opens_hypothesis(lead):
                    self._open_case()
                found = self._check_claim(claim, at_start, case or new_case, lost_left, new_case)
                forget_angles(self.state, [side.text for side in claim.sides])
                if claimtext.stated_false(lead, trail):
                    for r in found:
                        if r["verdict"] == -1:  # "gives 2 = sqrt(16) + 5, clearly not true"
                            r["verdict"], r["reason"] = 0, f"stated as false by the text ({r['reason']})"
                results += found
            except _CLAIM_FAILURES as exc:  # a bug or an overflow deep in a library: this claim is 0
                text = short(" ".join(s.text for s in claim.sides))
                found = [{"claim": text, "verdict": 0, "reason": f"not checked: {type(exc).__name__}"}]
                results += found
            except CheckTimeout:
                # the checker's own deadline, inside this claim: it is 0, the claims before stand
                self.late = True
                found = [late_record(short(" ".join(s.text for s in claim.sides)))]
                results += found
            self._groups.append((claim.sides[0].start, claim.sides[-1].end, found))
        if self.state.step_eqs:
            self.state.recent_eqs, self.state.step_eqs = self.state.step_eqs, []
        join_branches(results)
        join_alternatives(results)
        return results

    def _check_answer_line(self, text: str) -> dict[str, Any]:
        """The answer read whole (``\\sqrt{7}``, ``$2\\sqrt{7}$.``), a unit word after it dropped (``31 cents``)."""
        value_text, _unit = scalar_text(text)
        try:
            value = parse_value(value_text, self.limits)
        except DigitOutsideBase:
            return malformed_numeral_verdict(text)
        except UNREADABLE as exc:
            bare = self._bare_answer(text)
            if bare is not None:
                return bare
            several = several_values(value_text, self.limits, self._numeric)
            if several is not None:
                return several_values_verdict(text, several, self.state, self._above())
            return {"claim": short(f"answer {text}"), "verdict": 0, "reason": f"answer not parsed: {exc}"}
        return self._answer_result(text, value)

    def _above(self) -> str:
        """The text an answer line is compared with: just above it, and the question (bounded work)."""
        window = 10 * self.params.max_step_chars
        above = self.completion[max(0, self._step_start - window) : self._step_start]
        return above + "\n" + self.prompt[-4 * self.params.max_step_chars :]

    def _bare_answer(self, text: str) -> dict[str, Any] | None:
        """An answer line with nothing above it in the completion: -1 (``refute_bare_answer``), else None."""
        if not self.params.refute_bare_answer or self.completion[: self._step_start].strip():
            return None
        reason = "an answer with no work above it (params.refute_bare_answer)"
        return {"claim": short(f"answer {text}"), "verdict": -1, "reason": reason, "form": "bare answer"}

    def _answer_result(self, text: str, value: Any) -> dict[str, Any]:
        got = self._numeric(value)
        bare = self._bare_answer(text)
        if bare is not None:
            return {**bare, INFO: answer_info(got)}
        return {**answer_verdict(text, got, self.state, self._above()), INFO: answer_info(got)}

    def _check_claim(
        self,
        claim: Claim,
        at_step_start: bool,
        case: bool = False,
        lost_left: bool = False,
        new_case: bool = False,
    ) -> list[dict[str, Any]]:
        st = self.state
        sides = [self._parse(s, claim.latex) for s in claim.sides]
        sides = drop_result_unit(sides, {str(s) for s in st.known}, self.limits, claim.latex)
        relations = list(claim.relations)
        if case or any(r in ORDER for r in relations):
            started = start_case(st, sides, relations, self._numeric, new_case, self._step_index)
            if started is not None:
                self.credit.learn_claim([s.value for s in sides], [])
                return started
        # "= x^2 + 2x + 1" opening a step continues the previous chain.
        continued = (
            not claim.sides[0].text and at_step_start and relations[0] == "=" and st.last_side is not None
        )
        if continued:
            sides[0] = st.last_side
        # In a chain a = b = c (or a continued one) every link is a rewrite, never an equation to
        # solve, except a first link that names a variable ("b = 30 - 18 = 12").
        rewriting = continued or len(sides) > 2
        defined: sympy.Symbol | None = None
        first = 0
        head = sides[0].value
        if (
            relations[0] == "="
            and isinstance(head, sympy.Symbol)
            and head not in st.known
            and all(s.value is not None and head not in free_symbols(s.value) for s in sides[1:])
            and (len(sides) > 2 or not free_symbols(sides[1].value) - st.known - set(st.env))
        ):
            defined, first = head, 1  # "y = 2x + 1": a definition, no claim
        # "2x + 1 = (x - 1)^2 = x^2 - 2x + 1" (after squaring): the first link of a chain may be an equation, the
        # later links rewrite its right side; it is a rewrite only when it looks like one (same degree).
        head_equation = len(sides) > 2 and not continued
        results = self._check_links(sides, relations, first, rewriting, lost_left, head_equation)
        self._carry(sides, defined, results)
        return results

    def _check_links(
        self,
        sides: list[Side],
        relations: list[str],
        first: int,
        rewriting: bool,
        lost_left: bool,
        head_equation: bool = False,
    ) -> list[dict[str, Any]]:
        """The verdict of each link ``sides[i] relations[i] sides[i+1]`` from ``first`` on (``head_equation``: the
        first link, if it has variables, is read as an equation unless it looks like a rewrite)."""
        results = []
        for i in range(first, len(relations)):
            a, b, rel = sides[i], sides[i + 1], relations[i]
            if not a.text or not b.text:
                continue  # "17+5-8 =" (nothing to compare)
            text = short(f"{a.text} {rel} {b.text}")
            if a.error or b.error:
                outcome = Outcome(Verdict.UNKNOWN, f"not parsed: {a.error or b.error}")
            else:
                try:
                    named = i == 0 and isinstance(a.value, sympy.Symbol)
                    equation = i == 0 and head_equation and bool(free_symbols(a.value, b.value))
                    outcome = self._check_link(a, rel, b, rewriting and not named and not equation)
                except UNREADABLE as exc:
                    outcome = Outcome(Verdict.UNKNOWN, str(exc))
            if i == 0 and lost_left and outcome.verdict is Verdict.FALSE:
                # "the product of 3 and 4 = 12": the words before hold the left operand
                outcome = Outcome(
                    Verdict.UNKNOWN, f"the left side may continue in the words before ({outcome.reason})"
                )
            result = {"claim": text, "verdict": outcome.verdict.value, "reason": outcome.reason}
            if not (a.error or b.error):  # what credit needs to judge it (repeated, trivial)
                identity = outcome.verdict is Verdict.TRUE and outcome.reason == "identity"
                result[INFO] = self.credit.link_info(a, b, rel, identity)
            if outcome.branch:
                result["_branch"] = (outcome.covered, outcome.total)
            named = assignment(a, b) if len(sides) == 2 else None
            if (
                named is not None
            ):  # "x = 2": for alternatives listed in one step (claimstate.join_alternatives)
                result["_assign"] = named
                if outcome.solutions:
                    result["_refuted_at"] = {sol.get(named[0]) for sol in outcome.solutions}
            results.append(result)
        return results

    def _carry(self, sides: list[Side], defined: sympy.Symbol | None, results: list[dict[str, Any]]) -> None:
        """Remember what the claim established: its symbols, values and last result (with ``results``, the
        claim's records, which say whether that result was verified)."""
        st = self.state
        self.credit.learn_claim([s.value for s in sides], results)
        for s in sides:
            if s.value is not None:
                st.known |= free_symbols(s.value)
                numeric = self._numeric(s.value)
                if numeric is not None and len(st.seen) < 1000:
                    st.seen.append(numeric)
        last = sides[-1]
        if last.value is not None:
            st.last_side = last
            value = self._numeric(last.value)
            if value is not None:
                st.last_value, st.last_claims = value, results
                if defined is not None:
                    st.env[defined], st.bound_at[defined] = value, self._step_index

    def _other_readings(self, a: Side, b: Side, outcome: Outcome, rewriting: bool) -> Outcome:
        if outcome.verdict is not Verdict.FALSE:
            return outcome
        values = (self._numeric(a.value), self._numeric(b.value))
        return other_readings(a, b, outcome, rewriting, self.limits, self.params.accept_rounding, values)

    def _check_link(self, a: Side, rel: str, b: Side, rewriting: bool) -> Outcome:
        if rel == "=":
            return self._check_equal(a, b, rewriting)
        return self._check_order(a, rel, b)

    def _rounded(self, a: Side, b: Side, value_a: Value | None, value_b: Value | None) -> bool:
        return self.params.accept_rounding and rounded(a, b, value_a, value_b)

    def _check_order(self, a: Side, rel: str, b: Side) -> Outcome:
        if rel in ORDER and free_symbols(a.value, b.value):
            return Outcome(Verdict.UNKNOWN, "a condition on a variable")
        va, vb = self._numeric(a.value), self._numeric(b.value)
        if va is None or vb is None:
            return Outcome(Verdict.UNKNOWN, "inequality with unknown variables")
        return compare(va, rel, vb, rel == "≈" and self._rounded(a, b, va, vb))

    def _check_equal(self, a: Side, b: Side, rewriting: bool) -> Outcome:
        st, limits, rng = self.state, self.limits, self.rng
        variables = free_symbols(a.value, b.value)
        outcome = equal(a.value, b.value, limits, rng, points=self.params.points)
        if not variables:
            return self._other_readings(a, b, outcome, rewriting)
        if outcome.verdict is Verdict.TRUE:
            return outcome
        # A rewrite restates an expression: both sides have variables. "r^2 = 2009/41" in a chain
        # is an equation (true given earlier ones), not a wrong rewrite.
        # Sides over different variables ("x^2 + y^2 = 3x^2", "7a + 4 = 9b + 4", "b^2 c = 3ab") relate
        # them: a relation that holds given earlier lines or not, never a rewrite to refute as an identity.
        identity_claim = (
            outcome.verdict is Verdict.FALSE
            and bool(free_symbols(a.value))
            and free_symbols(a.value) == free_symbols(b.value)
            and (rewriting or looks_like_rewrite(a.value, b.value))
        )
        g = to_expr(a.value) - to_expr(b.value)
        if variables <= set(st.env):
            carried = {s: st.env[s] for s in variables}
            shown = ", ".join(f"{s}={show(v)}" for s, v in sorted(carried.items(), key=lambda kv: str(kv[0])))
            at_values = equal(a.value, b.value, limits, rng, fixed=carried)
            if at_values.verdict is Verdict.FALSE and self._rounded(
                a, b, self._numeric(a.value), self._numeric(b.value)
            ):
                at_values = Outcome(Verdict.TRUE, "rounded")
            if at_values.verdict is Verdict.FALSE and st.prev_eq is not None:
                # Maybe a fresh derivation that reuses a letter: accept it if it follows from the last equation.
                again = implied([[st.prev_eq]], g, limits, rng)
                if again.verdict is Verdict.TRUE:
                    self._record_equation(a, b, g)
                    return again
            if at_values.verdict is Verdict.FALSE and assignment(a, b) is not None:
                rebound = self._rebind(*assignment(a, b), g)
                if rebound is not None:
                    return rebound
            both = free_symbols(a.value) & free_symbols(b.value)
            if at_values.verdict is Verdict.FALSE and both and assignment(a, b) is None:
                # "x = 6." then "x = 0.42 + 0.3x": an equation to solve with the letter on both sides is a new
                # use of the letter (the next part of a problem), not a claim about its old value
                for symbol in both:
                    st.forget(symbol)
                at_values = Outcome(Verdict.UNKNOWN, "")
            if at_values.verdict is Verdict.FALSE and st.premises and self._other_branch(g):
                return Outcome(Verdict.UNKNOWN, f"another case of the prompt's equation (false with {shown})")
            if at_values.verdict is not Verdict.UNKNOWN:
                return Outcome(at_values.verdict, f"with {shown}: {at_values.reason}")
        systems: list[list[Any]] = []
        env_eqs = [s - to_expr(v) for s, v in st.env.items() if isinstance(v, Fraction)]
        if st.prev_eq is not None:
            systems.append([st.prev_eq])
        if st.premises:
            systems.append(st.premises + env_eqs)
        if st.prev_eq is not None and env_eqs:
            systems.append([st.prev_eq, *env_eqs])
        if len(st.recent_eqs) > 1:  # "a + b = 30 and a - b = 6" then "2a = 36"
            systems.append(list(st.recent_eqs))
        outcome = implied(systems, g, limits, rng) if systems else Outcome(Verdict.UNKNOWN, "a new equation")
        if (
            outcome.branch
            and st.prev_eq is not None
            and st.prev_eq_step == self._step_index
            and same_degree_polynomials(st.prev_eq, g)
        ):  # "x^2 + x - 6 = 0, that is (x + 3)(x - 3) = 0": a restatement in one step with other roots
            return Outcome(Verdict.FALSE, "not the previous equation restated: same degree, other roots")
        if outcome.verdict is Verdict.UNKNOWN and identity_claim is False:
            constant = constant_difference(a.value, b.value, limits, rng)
            if constant is not None:  # "2(x + 3) = 2x + 5": no value of x makes it true
                return Outcome(Verdict.FALSE, f"the sides differ by {show(constant)} for every value")
        if outcome.verdict is Verdict.UNKNOWN and identity_claim:
            derived = not rewriting and any(
                free_symbols(g) & free_symbols(eq) for system in systems for eq in system
            )
            if derived:  # "Squaring both sides, 4(x^2 + 1) = (x + 3)^2" after an equation in x with a root
                # sign: an equation derived from one the checker cannot solve, or a wrong rewrite (issue 61); the
                # lines after it are checked against it
                self._record_equation(a, b, g)
                return Outcome(Verdict.UNKNOWN, "an equation in letters of earlier equations, or a rewrite")
            return Outcome(
                Verdict.FALSE, f"not an identity: the sides differ ({a.text[:40]} vs {b.text[:40]})"
            )
        if not outcome.branch:
            # A branch ("x = 2" of x^2 = 4) is one case among several: the next case ("x = 3" or
            # "x = -2") must still be checked against the equation both came from.
            self._record_equation(a, b, g)
        return outcome

    def _open_case(self) -> None:
        """A case or hypothesis opens in this step ("When $n$ is odd, ..."): the values found under the one before
        (bound since its step, in earlier steps) no longer hold (issue 61: case 1's ``k = 5`` refuted case 2's
        ``2k + 1 = 9``)."""
        st, before = self.state, self._case_step
        if before is not None and before < self._step_index:
            for symbol in [
                s for s, k in st.bound_at.items() if before <= k < self._step_index and s in st.env
            ]:
                st.forget(symbol)
        self._case_step = self._step_index

    def _other_branch(self, g: Any) -> bool:
        """``2x - 1 = -7`` after ``x = 4`` was found from ``|2x - 1| = 7``: an equation whose solutions all solve an
        equation of the prompt is another case of the problem, not a claim about the value found before."""
        symbols = free_symbols(g)
        for premise in self.state.premises:
            shares = symbols & free_symbols(premise) and free_symbols(premise) <= symbols
            if shares and implied([[g]], premise, self.limits, self.rng).verdict is Verdict.TRUE:
                return True
        return False

    def _rebind(self, symbol: sympy.Symbol, value: Fraction, g: Any) -> Outcome | None:
        """``x = 5`` when ``x`` carries another value: refuted only right after the equation that
        gave the old value (``x = 4`` then ``x = 5``); after a case analysis on ``x`` or further on,
        a new binding (a summary of cases, the next part of a problem), not a claim."""
        st = self.state
        if st.bound_at.get(symbol) == self._step_index:
            # "x = -5 or x = 2", "the roots are x = -5 and x = 2", "a = 1, b = 2, c = 3 (or a = 3, ...)": two
            # values in one step are alternatives; later claims hold for one of them, so x carries none.
            old = st.env.pop(symbol)
            st.cased.add(symbol)
            return Outcome(Verdict.UNKNOWN, f"alternatives for {symbol} ({show(old)}, {show(value)})")
        recent = st.prev_eq is not None and self._step_index - st.prev_eq_step <= 1
        related = symbol not in st.cased and recent and symbol in free_symbols(st.prev_eq)
        if related and implied([[st.prev_eq]], g, self.limits, self.rng).verdict is Verdict.FALSE:
            return None  # the caller refutes it at the carried value
        old = st.env[symbol]
        st.env[symbol], st.bound_at[symbol] = value, self._step_index
        return Outcome(Verdict.UNKNOWN, f"a new value for {symbol} (it was {show(old)})")

    def _record_equation(self, a: Side, b: Side, g: Any) -> None:
        """Remember the equation; ``x = 3`` also carries the value 3 for x."""
        st = self.state
        st.prev_eq, st.prev_eq_step = g, self._step_index
        st.step_eqs.append(g)
        for lhs, rhs in ((a, b), (b, a)):
            if isinstance(lhs.value, sympy.Symbol):
                value = self._numeric(rhs.value)
                if value is not None and isinstance(value, Fraction):
                    st.env[lhs.value], st.bound_at[lhs.value] = value, self._step_index
                    return


def check_steps(
    params: StepsParams, prompt: str, completion: str, truncated: bool = False, deadline: float | None = None
) -> list[tuple[int, int, float, dict[str, Any]]]:
    """All step spans of one completion (``truncated``: the length cap cut it, ``Sample.truncated``; ``deadline``: a
    monotonic time past which the rest is 0 and what was found stands, :mod:`botgrpo_sympy.softdeadline`). Digits of
    other scripts are read as ASCII digits and zero-width characters are dropped; the spans' offsets are the
    completion's own."""
    text, where = visible(ascii_digits(completion))
    spans = StepChecker(params, readable(prompt), text, truncated, deadline).check()
    if where is None:
        return spans
    where.append(len(completion))  # the offset after the last kept character
    return [(where[s], where[e - 1] + 1 if e > s else where[s], v, meta) for s, e, v, meta in spans]
