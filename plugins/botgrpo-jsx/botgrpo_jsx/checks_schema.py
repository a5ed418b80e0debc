"""The typed schema of ``jsx.checks``' behaviour checks: what a row's ``checks`` field holds.

A :class:`CheckSuite` is the row's field: ``checks`` (a list of :class:`Check`), optional ``props`` to
render the component with, and optional ``fetch``: the JSON every ``fetch()`` of the page resolves to (a
200 response), for pages that load data. Each check starts on a fresh mount of the component, runs its
``do`` steps (:class:`Step`) as a user would and then tests every ``expect`` (:class:`Expect`); it passes
when each expectation holds (``js/checks.js`` runs them in the render sandbox).

Elements are found by a :class:`Selector`: a ``role`` (an element of that kind: ``button`` is a
``<button>``, an ``<input type=button|submit|reset>`` or ``role="button"``; the list is :data:`ROLES`), a
``tag``, a ``style`` (a regex on the ``style`` attribute), ``attrs`` (attribute -> regex), a ``label`` (a regular expression, case-insensitive, searched in what the element is called: its
``aria-label``, ``title``, ``placeholder``, ``alt``, ``name``, ``id``, ``value``, the text of its
``<label>``, and for anything but a field its own text) and a ``text`` (searched in its visible text; a
field's text is its value). Hidden elements (the ``hidden`` attribute, ``display: none``, ``visibility:
hidden``, a closed ``<details>``) are not found. Text is matched against what a user sees: the visible text
with a space at every element's edge, fields' values and selects' chosen options included.
"""

from __future__ import annotations

import re
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

Role = Literal[
    "button",
    "textbox",
    "spinbutton",
    "field",
    "checkbox",
    "radio",
    "slider",
    "combobox",
    "option",
    "link",
    "heading",
    "list",
    "listitem",
    "img",
    "table",
    "row",
    "cell",
    "columnheader",
    "form",
    "dialog",
    "progressbar",
    "media",
    "canvas",
]
#: The roles a selector may name (``js/checks.js`` ``ROLES`` says which elements each one finds).
ROLES: tuple[str, ...] = get_args(Role)
_TAG = re.compile(r"^(\*|[a-zA-Z][a-zA-Z0-9-]*)$")
_ATTR = re.compile(r"^[a-zA-Z][a-zA-Z0-9-]*$")
#: At most this many steps and expectations per check, and checks per suite.
MAX_STEPS = 40
MAX_CHECKS = 40
#: A ``wait`` advances the fake clock by at most this many milliseconds.
MAX_WAIT_MS = 600_000


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _regex(value: str | None) -> str | None:
    if value is not None:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"{value!r} is not a regular expression ({exc})") from exc
    return value


class Selector(_Strict):
    """Which elements: all of ``role``, ``tag``, ``label``, ``text`` that are given must hold."""

    role: Role | None = None
    tag: str | None = Field(None, description="an HTML tag name (input, li, h2, ...; * any element)")
    label: str | None = Field(None, description="regex (case-insensitive) on what the element is called")
    text: str | None = Field(None, description="regex (case-insensitive) on the element's visible text")
    style: str | None = Field(None, description="regex (case-insensitive) on the element's style attribute")
    attrs: dict[str, str] | None = Field(
        None, description="attribute name -> regex (case-insensitive) its value must match (it must be set)"
    )
    nth: int = Field(0, ge=0, description="for a step: which of the matching elements (0 = the first)")

    @field_validator("label", "text", "style")
    @classmethod
    def _is_regex(cls, value: str | None) -> str | None:
        return _regex(value)

    @field_validator("attrs")
    @classmethod
    def _attrs(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        for name, source in (value or {}).items():
            if not _ATTR.match(name):
                raise ValueError(f"attribute name {name!r} is not one")
            _regex(source)
        return value

    @field_validator("tag")
    @classmethod
    def _is_tag(cls, value: str | None) -> str | None:
        if value is not None and not _TAG.match(value):
            raise ValueError(f"tag {value!r} is not an HTML tag name")
        return value


_STEP_KINDS = (
    "click",
    "type",
    "change",
    "submit",
    "key",
    "hover",
    "leave",
    "event",
    "wait",
    "resize",
    "scroll",
    "remount",
)


class Step(_Strict):
    """One user action; exactly one of the action keys.

    - ``click``: mouse down, up and click on the element (a checkbox or radio toggles first, a submit
      button then submits its form, a disabled control gets nothing); ``double`` clicks twice and sends
      ``dblclick``; ``shift``/``ctrl`` hold those keys;
    - ``type``: focus the field, then each character of ``value`` as keydown, input (the value set as a
      user's typing sets it) and keyup; then change. The field's text is replaced by ``value``;
    - ``change``: a select picks the option whose value or text matches ``value`` (a regex, whole;
      ``$next``: the option after the chosen one); a
      checkbox or radio is set to ``value`` (true/false) by a click; another field (range, number, date)
      gets ``value`` with input and change events;
    - ``submit``: the form (``submit: {}`` = the first form) is submitted by its submit button if it has
      one, else by a submit event; ``submit: {}`` on a page without a ``<form>`` clicks the first button
      called like a submit button (submit, send, save, sign up, register, post, ...: ``js/checks.js``);
    - ``key``: keydown (and keypress for a character) and keyup of ``key`` (``Enter``, ``Escape``,
      ``ArrowDown``, ``a``, ``" "``) on ``target`` (else the focused element, else the page); Enter in a
      text field submits its form, as in a browser;
    - ``hover`` / ``leave``: the mouse moves over / out of the element (React's enter and leave events);
    - ``event``: any DOM event by name (``dragover``, ``contextmenu``, ``wheel``) on ``target``, else on the
      document's body, outside the page's root (it bubbles to the document and the window); a drag or
      drop event carries one file, ``photo.png`` of 1234 bytes, in its ``dataTransfer``;
    - ``wait``: the fake clock advances ``wait`` ms, firing the page's timers due in order;
    - ``resize``: the window becomes ``WxH`` (``"800x600"``; it starts at 1024x768) and gets a resize event;
    - ``scroll``: the page (3000 px tall in a 768 px window) is scrolled to ``scroll`` px: ``scrollY``,
      ``scrollTop`` and a scroll event on the window and the document;
    - ``remount: true``: the page reloads (a fresh mount; ``localStorage`` and the clock are kept).
    """

    click: Selector | None = None
    type: Selector | None = None
    change: Selector | None = None
    submit: Selector | None = None
    key: str | None = Field(None, min_length=1, max_length=20)
    hover: Selector | None = None
    leave: Selector | None = None
    event: str | None = Field(None, pattern=r"^[a-z]{1,30}$")
    wait: int | None = Field(None, ge=0, le=MAX_WAIT_MS)
    resize: str | None = Field(None, pattern=r"^[1-9][0-9]{1,4}x[1-9][0-9]{1,4}$")
    scroll: int | None = Field(None, ge=0, le=100_000)
    remount: bool | None = None
    value: str | bool | int | float | None = None
    target: Selector | None = Field(None, description="key and event steps: the element (see the kinds)")
    shift: bool = False
    ctrl: bool = False
    double: bool = False
    optional: bool = Field(False, description="skip this step when its element is not on the page")

    @model_validator(mode="after")
    def _one_action(self) -> Step:
        given = [k for k in _STEP_KINDS if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(
                f"a step has exactly one of {', '.join(_STEP_KINDS)}; this one has {given or 'none'}"
            )
        if self.type is not None and not isinstance(self.value, str | int | float):
            raise ValueError("a type step needs the text to type as value")
        if self.change is not None and self.value is None:
            raise ValueError("a change step needs a value")
        return self


_EXPECT_KINDS = (
    "exists",
    "absent",
    "text",
    "no_text",
    "shown",
    "not_shown",
    "number",
    "no_number",
    "count",
    "appears",
    "disappears",
    "text_changes",
    "content_changes",
    "text_same",
    "html_changes",
    "html_same",
    "title",
    "called",
    "not_called",
    "any",
)


_COMPARING = (
    "count",
    "appears",
    "disappears",
    "text_changes",
    "content_changes",
    "text_same",
    "html_changes",
    "html_same",
)


class Expect(_Strict):
    """One expectation; exactly one of the kind keys.

    - ``exists``: at least ``min`` (default 1) and at most ``max`` matching elements;
    - ``absent``: no matching element;
    - ``text`` / ``no_text``: a regex (case-insensitive) is / is not found in the page's text;
    - ``shown`` / ``not_shown``: the same on the page's text without the fields' values (what the page
      writes, not what was typed);
    - ``number`` / ``no_number``: a number (within ``tol``) is / is not among the page's numbers (``1,234``
      and ``-3.5`` read as numbers);
    - ``count`` with ``change``: the number of matching elements changed by exactly ``change`` since
      before the check's steps;
    - ``appears`` / ``disappears``: none matched before the steps and some match after / the reverse;
    - ``text_changes`` / ``text_same``: the page's text differs from / equals its text before the steps;
    - ``content_changes``: the text of the elements a selector finds (in order) differs from before (a
      list's order);
    - ``html_changes`` / ``html_same``: the page's HTML (elements, attributes, text) differs from before the steps (a
      selection shown only by a style or class);
    - ``title``: a regex on ``document.title``;
    - ``called`` / ``not_called``: the prop given as a spy (``{"$botgrpo": "spy", "name": NAME}`` in the
      suite's props) was / was not called during the check; with ``args``, some call's arguments (as JSON)
      match that regex;
    - ``any``: at least one of these expectations holds (they may not compare with before the steps:
      ``count``, ``appears``, ``disappears``, ``text_changes``, ``text_same``, ``html_changes``).
    """

    exists: Selector | None = None
    absent: Selector | None = None
    text: str | None = None
    no_text: str | None = None
    shown: str | None = None
    not_shown: str | None = None
    number: float | None = None
    no_number: float | None = None
    count: Selector | None = None
    appears: Selector | None = None
    disappears: Selector | None = None
    text_changes: bool | None = None
    content_changes: Selector | None = None
    text_same: bool | None = None
    html_changes: bool | None = None
    html_same: bool | None = None
    title: str | None = None
    called: str | None = None
    not_called: str | None = None
    args: str | None = None
    any: tuple[Expect, ...] | None = Field(None, min_length=2, max_length=8)
    min: int | None = Field(None, ge=0)
    max: int | None = Field(None, ge=0)
    change: int | None = None
    tol: float | None = Field(None, ge=0)

    @field_validator("text", "no_text", "shown", "not_shown", "title", "args")
    @classmethod
    def _is_regex(cls, value: str | None) -> str | None:
        return _regex(value)

    @model_validator(mode="after")
    def _one_kind(self) -> Expect:
        given = [k for k in _EXPECT_KINDS if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(
                f"an expectation has exactly one of {', '.join(_EXPECT_KINDS)}; this one has {given or 'none'}"
            )
        if (self.count is None) != (self.change is None):
            raise ValueError("count and change go together (count: a selector, change: the expected delta)")
        if (self.min is not None or self.max is not None) and self.exists is None:
            raise ValueError("min and max belong to exists")
        for sub in self.any or ():
            if any(getattr(sub, k) is not None for k in _COMPARING):
                raise ValueError(
                    f"an `any` holds no {'/'.join(_COMPARING)} expectation (they compare with before)"
                )
        if self.args is not None and self.called is None:
            raise ValueError("args belongs to called")
        if False in (self.text_changes, self.text_same, self.html_changes, self.html_same):
            raise ValueError("text_changes, text_same, html_changes and html_same take true only")
        return self


class Check(_Strict):
    """A named check: ``do`` these steps on a fresh mount, then every ``expect`` must hold."""

    name: str = Field(..., min_length=1, max_length=80)
    props: dict[str, Any] | None = Field(None, description="this check's props (else the suite's)")
    do: tuple[Step, ...] = Field((), max_length=MAX_STEPS)
    expect: tuple[Expect, ...] = Field(..., min_length=1, max_length=MAX_STEPS)


class CheckSuite(_Strict):
    """A row's ``checks`` field: the checks of one request, the props and the server's answer to use."""

    checks: tuple[Check, ...] = Field(..., min_length=1, max_length=MAX_CHECKS)
    props: dict[str, Any] | None = Field(
        None,
        description="props to render with (else the row's or synthesised); markers: "
        '{"$botgrpo": "element", "text": T} a <span>T</span>, {"$botgrpo": "spy", "name": N} a function '
        'recording its calls, {"$botgrpo": "throws", "text": T} an element that throws T, '
        '{"$botgrpo": "function"} a no-op, {"$botgrpo": "stub"} a stub',
    )
    fetch: Any = Field(None, description="JSON that every fetch() of the page resolves to (a 200 response)")

    @model_validator(mode="after")
    def _unique_names(self) -> CheckSuite:
        names = [c.name for c in self.checks]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"check names repeat: {twice}")
        return self


def parse_suite(value: Any) -> CheckSuite:
    """A :class:`CheckSuite` from a row's field: a suite object, or a bare list of checks."""
    if isinstance(value, CheckSuite):
        return value
    if isinstance(value, list | tuple):
        value = {"checks": list(value)}
    return CheckSuite.model_validate(value)


def to_request(suite: CheckSuite) -> list[dict[str, Any]]:
    """The checks as the harness reads them (unset keys left out)."""
    return [
        c.model_dump(exclude_none=True, exclude_defaults=True, mode="json") | {"name": c.name}
        for c in suite.checks
    ]
