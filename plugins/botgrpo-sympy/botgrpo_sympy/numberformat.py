"""How numbers and operator signs are written in real solutions: the one home of those rules.

Every parser of the plugin reads math through :func:`normalize` (plain text, LaTeX, final answers),
and the claim finder in ``segments`` scans numbers with :data:`SCAN_NUMBER`, so a format is read the
same way everywhere:

- unicode signs: ``−`` (minus), ``–`` ``‒`` (dashes used as minus), ``×`` ``·`` ``⋅`` ``∗``, ``÷``;
- thousands: ``12,500`` (outside brackets, where a comma separates arguments), ``2 000``, ``1 200``
  with a no-break or thin space, LaTeX ``1{,}000``;
- currency glued to a number: ``$40``, ``\\$40``, ``€5``, ``£5`` (the sign is dropped);
- leading-dot decimals: ``.5`` is ``0.5``;
- mixed numbers: ``3 1/2`` is ``(3+1/2)`` (a proper fraction after a whole number and one space);
  a fraction after ``÷``, or written tight after a spaced ``/``, is the divisor (``2 1/2 ÷ 1/4`` and
  ``1 1/2 / 1/2`` are ``2 1/2 / (1/4)`` and ``1 1/2 / (1/2)``);
- percents: ``25%`` and ``25\\%`` are ``(25/100)``; :func:`percent_label` gives the other reading of a
  bare ``24%`` (``... * 100 = 24%``, where the sign is a label);
- numerals in a base: ``724_{10}``, ``2053_7`` (base 2 to 16) are their decimal value;
- degrees: ``30^\\circ``, ``30^{\\circ}``, ``30°`` are dropped (angle sums) or become ``30*pi/180``
  inside trigonometry (:func:`degrees`);
- digits of other scripts (Arabic-Indic ``٧``, full-width ``７``) are ASCII digits, and zero-width characters
  inside a number are dropped (:func:`ascii_digits`, :func:`visible`; issue 60 item 11).
"""

from __future__ import annotations

import re
from fractions import Fraction

#: Unicode signs and their ASCII meaning (minus, dashes used as minus, times, division).
SIGNS = str.maketrans(
    {
        "−": "-",
        "–": "-",
        "‒": "-",
        "﹣": "-",
        "－": "-",
        "×": "*",
        "✕": "*",
        "·": "*",
        "⋅": "*",
        "∗": "*",
        "÷": "/",
        "∕": "/",
    }
)
#: Digits of other scripts, read as ASCII digits one for one (Arabic-Indic, Extended Arabic-Indic, full-width), and
#: the Arabic decimal and thousands separators and the full-width period (issue 60 item 11).
_OTHER_DIGITS = str.maketrans(
    {
        **{chr(0x0660 + k): str(k) for k in range(10)},
        **{chr(0x06F0 + k): str(k) for k in range(10)},
        **{chr(0xFF10 + k): str(k) for k in range(10)},
        "\u066b": ".",
        "\u066c": ",",
        "\uff0e": ".",
    }
)
#: Characters that show nothing (zero-width space, non-joiner, joiner, word joiner, byte order mark).
ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff"
_ZERO_WIDTH = re.compile(f"[{ZERO_WIDTH}]")


def ascii_digits(text: str) -> str:
    """``text`` with the digits of other scripts as ASCII digits (the same length: offsets stay valid)."""
    return text if text.isascii() else text.translate(_OTHER_DIGITS)


def visible(text: str) -> tuple[str, list[int] | None]:
    """``text`` without zero-width characters (``1\u200b000`` is ``1000``), and where each kept character was
    (None when there was none to drop: the text is unchanged)."""
    if text.isascii() or not _ZERO_WIDTH.search(text):
        return text, None
    where = [i for i, c in enumerate(text) if c not in ZERO_WIDTH]
    return "".join(text[i] for i in where), where


def readable(text: str) -> str:
    """:func:`ascii_digits` and :func:`visible` together, where offsets do not matter (prompts, answers)."""
    return visible(ascii_digits(text))[0]


#: Spaces that group thousands (no-break, narrow no-break, thin, figure space).
GROUP_SPACES = "\u00a0\u202f\u2009\u2007"
_GROUP_SPACE = f"[{GROUP_SPACES}]"

#: One number as written in prose, for scanning text (currency, thousands with special spaces,
#: leading-dot decimals, percent). Ordinary thousands (``1,000``, ``1 000``) are joined by the scanner.
SCAN_NUMBER = rf"(?:[$€£]\s?)?(?:\d+(?:{_GROUP_SPACE}\d{{3}})*(?:\.\d+)?|\.\d+)(?:\s?\\?%)?"

#: "2 1/2 ÷ 1/4": the fraction after a division sign is the divisor (not "÷ 1, then / 4").
_DIVIDE_BY_FRACTION = re.compile(r"÷\s*(\d+\s*/\s*\d+|\d+ \d+/\d+)(?![\d/])")
#: "1 1/2 / 1/2": a fraction written tight after a spaced slash is the divisor, as after "÷" (the spaces group it).
_SPACED_SLASH_FRACTION = re.compile(r"(?<=[\d)])[ \t]+/[ \t]+(\d+/\d+|\d+ \d+/\d+)(?![\d/.])")
_CURRENCY = re.compile(r"\\?[$€£]\s?(?=\.?\d)")
_SPACE_GROUPS = re.compile(rf"(?<![\d.,])\d{{1,3}}(?:(?:{_GROUP_SPACE}| )\d{{3}})+(?![\d/.]|,\d| \d+/)")
_LATEX_COMMA = re.compile(r"(?<=\d)\{,\}(?=\d{3})")
_COMMA_GROUP = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
#: A whole number written with comma groups: ``-1,234,567.5`` (sign, groups, decimals).
COMMA_NUMBER = re.compile(r"^\s*(-?)(\d{1,3}(?:,\d{3})+)(\.\d+)?\s*$")


def comma_group_at(text: str, pos: int) -> bool:
    """Does a thousands comma sit at ``text[pos]`` (``1,000``, not ``1,2`` or ``1,0000``)?"""
    return bool(_COMMA_GROUP.match(text, pos)) and text[pos - 1 : pos].isdigit()


_MIXED = re.compile(r"(?<![\d./])(\d+) (\d+)/(\d+)(?![\d/.])")
_LEADING_DOT = re.compile(r"(?<![\d.])\.(?=\d)")
#: ``25%`` (not ``40/100%500``: a percent sign between numbers has no one reading, so it stays and is not parsed)
_PERCENT = re.compile(r"(\d+(?:\.\d+)?)\s?\\?%(?!\s?\.?\d)")
#: ``724_{10}``, ``2053_7``: a numeral in a base (2 to 16, digits then upper-case letters), see :func:`_in_base`.
_BASE_NUMERAL = re.compile(r"(?<![\w.\\])(\d[0-9A-F]*)_(?:\{\s*(\d{1,2})\s*\}|(\d))(?![\w}])")
_BARE_PERCENT = re.compile(r"^\s*(-?\d[\d,]*(?:\.\d+)?)\s?\\?%\s*$")
DEGREE = re.compile(r"\^\s*\{\s*\\circ\s*\}|\^\s*\\circ|°|\\degree")
_DEGREE_NUMBER = re.compile(rf"(\d+(?:\.\d+)?)\s*(?:{DEGREE.pattern})")
#: A percent sign or degree mark ending a final answer ("50%", "30^\\circ"): it never changes the value.
TRAILING_UNIT = re.compile(rf"(?:\\?%|{DEGREE.pattern})\s*$")
TRIG = re.compile(r"\\?(?:sin|cos|tan|cot|sec|csc)\b")


def _join_space_groups(m: re.Match[str]) -> str:
    return re.sub(rf"{_GROUP_SPACE}| ", "", m.group())


def _strip_comma_groups(text: str) -> str:
    """``1,000`` -> ``1000`` outside brackets (inside, a comma separates arguments: ``gcd(12,345)``)."""
    if "," not in text:
        return text
    out, depth = [], 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(0, depth - 1)
        if ch == "," and depth == 0 and _COMMA_GROUP.match(text, i):
            continue
        out.append(ch)
    return "".join(out)


def _mixed(m: re.Match[str]) -> str:
    whole, num, den = m.groups()
    if int(den) == 0 or int(num) >= int(den):
        return m.group()  # "2 10/5" is not a mixed number: leave it (two numbers side by side)
    return f"({whole}+{num}/{den})"


#: A percent sign right before a number (``40/100%500``): "percent of", or a typo; neither parser may guess.
_PERCENT_BEFORE_NUMBER = re.compile(r"\\?%\s?\.?\d")


def percent_between_numbers(text: str) -> bool:
    """``40/100%500``: a percent sign followed by a number, which no parser reads (not checkable)."""
    return "%" in text and bool(_PERCENT_BEFORE_NUMBER.search(text))


def base_numeral_left(text: str) -> bool:
    """A numeral with a base subscript :func:`normalize` could not read (``2058_7``): no parser may drop the base."""
    return "_" in text and bool(_BASE_NUMERAL.search(text))


def _in_base(m: re.Match[str]) -> str:
    """``2053_7`` -> ``724``; a numeral with a digit outside its base (``2058_7``) stays as written (not parsed)."""
    digits, base = m.group(1), int(m.group(2) or m.group(3))
    if not 2 <= base <= 16 or len(digits) > 40 or any(int(d, 16) >= base for d in digits):
        return m.group()
    return str(int(digits, base))


#: A decimal that does not end: "0.555...", "5.1666…", "0.142857142857\\ldots".
_NON_TERMINATING = re.compile(r"(?<![\d.])(\d*)\.(\d+)\s?(?:\.\.\.+|…|\\[lc]?dots\b)")


def repeating_decimal(whole: str, digits: str) -> Fraction | None:
    """The value of ``whole.digits...`` when its digits end in a repeating block (one digit three times, or a block
    of 2 to 6 digits twice: ``0.555``, ``0.1666``, ``0.142857142857``), else None (``3.14159...`` has no value)."""
    for size in range(1, 7):
        times = 3 if size == 1 else 2
        block = digits[len(digits) - size :]
        if len(digits) >= size * times and digits.endswith(block * times):
            head = digits[: len(digits) - size * times]
            while head.endswith(block):  # "0.5555": all of it repeats
                head = head[: len(head) - size]
            whole_part = Fraction(int(whole or "0"))
            repeat = Fraction(int(head + block) - int(head or "0"), 10 ** len(head) * (10**size - 1))
            return whole_part + repeat
    return None


def _non_terminating(m: re.Match[str]) -> str:
    value = repeating_decimal(m.group(1), m.group(2))
    if value is None:
        return m.group()  # a decimal that does not end and does not repeat: no parser reads it (0)
    return f"({value.numerator}/{value.denominator})"


def normalize(text: str) -> str:
    """The number formats and signs of ``text`` rewritten in the parsers' ASCII forms."""
    if "." in text or "…" in text or "dots" in text:
        text = _NON_TERMINATING.sub(_non_terminating, text)  # "0.555..." is 5/9 (issue 61)
    if "_" in text:
        text = _BASE_NUMERAL.sub(_in_base, text)
    text = _DIVIDE_BY_FRACTION.sub(r"/(\1)", text)
    if "/" in text:
        text = _SPACED_SLASH_FRACTION.sub(r" / (\1)", text)
    text = text.translate(SIGNS)
    text = _CURRENCY.sub("", text)
    text = _LATEX_COMMA.sub("", text)
    text = _SPACE_GROUPS.sub(_join_space_groups, text)
    text = _strip_comma_groups(text)
    text = _MIXED.sub(_mixed, text)
    text = _LEADING_DOT.sub("0.", text)
    text = _PERCENT.sub(r"(\1/100)", text)
    for space in GROUP_SPACES:
        text = text.replace(space, " ")
    return text


_WRITTEN_NUMBER = re.compile(
    rf"(?<![\w.])-?(?:\d{{1,3}}(?:(?:,|{_GROUP_SPACE}| )\d{{3}})+(?![\d/])|\d+)(?:\.\d+)?|(?<![\w.])\.\d+"
)


def numbers_in(text: str, limit: int = 2000) -> set[Fraction]:
    """Every number written in ``text`` (prose included), read with the formats above."""
    out: set[Fraction] = set()
    for m in _WRITTEN_NUMBER.finditer(text.translate(SIGNS)):
        digits = _strip_comma_groups(_SPACE_GROUPS.sub(_join_space_groups, m.group()))
        digits = _LEADING_DOT.sub("0.", digits.replace("-.", "-0."))
        if len(digits) <= 40:
            out.add(Fraction(digits))
            out.add(abs(Fraction(digits)))
        if len(out) >= limit:
            break
    return out


_FRACTION = re.compile(
    r"\\[dt]?frac\s*\{\s*(-?\d{1,12})\s*\}\s*\{\s*(\d{1,12})\s*\}|(?<![\d.])(-?\d{1,12})\s*/\s*(\d{1,12})(?![\d.])"
)


_NUMBER_KEY = re.compile(r"\d[\d,]*(?:\.\d+)?|\.\d+")


def number_key(value: Fraction) -> str | None:
    """The :func:`number_keys` form of a value (its decimal when it ends within 8 places), else None."""
    value = abs(value)
    if value.numerator.bit_length() > 256 or value.denominator.bit_length() > 256:
        return None  # no number written in a text has 78 digits: nothing to match
    if value.denominator == 1:
        return str(value.numerator)
    scaled = value * 10**8
    if scaled.denominator != 1:
        return None
    whole, frac = divmod(scaled.numerator, 10**8)
    return f"{whole}.{frac:08d}".rstrip("0")


def number_keys(text: str, limit: int = 2000) -> set[str]:
    """The numbers written in ``text`` as canonical strings (``12,500`` -> ``12500``, ``2.50`` -> ``2.5``, ``.5`` ->
    ``0.5``; signs dropped), for set membership without building fractions: cheap enough for every claim."""
    out: set[str] = set()
    for m in _NUMBER_KEY.finditer(text, 0, min(len(text), 20 * limit)):
        digits = m.group().replace(",", "")
        if "." in digits:
            whole, _, frac = digits.partition(".")
            frac = frac.rstrip("0")
            digits = f"{int(whole or '0')}.{frac}" if frac else str(int(whole or "0"))
        else:
            digits = digits.lstrip("0") or "0"
        out.add(digits)
    return out


def fractions_in(text: str, limit: int = 500) -> set[Fraction]:
    """The values of the fractions written in ``text``: ``\\frac{5}{12}``, ``\\dfrac{5}{12}``, ``5/12``."""
    out: set[Fraction] = set()
    for m in _FRACTION.finditer(text):
        p, q = (m.group(1), m.group(2)) if m.group(1) is not None else (m.group(3), m.group(4))
        if int(q):
            out.add(Fraction(int(p), int(q)))
        if len(out) >= limit:
            break
    return out


def rounds_to(exact: Fraction, shown: Fraction) -> bool:
    """Is ``shown`` a decimal (2 to 6 places) that ``exact`` rounds or truncates to (``0.4167`` for 5/12)?"""
    for places in range(2, 7):
        scale = 10**places
        if (shown * scale).denominator == 1 and shown in (
            Fraction(round(exact * scale), scale),
            Fraction(int(exact * scale), scale),
        ):
            return exact != shown
    return False


def percent_label(text: str) -> str | None:
    """``24%`` read with the sign as a label (``24``), for a bare percent; else None."""
    m = _BARE_PERCENT.match(text)
    return m.group(1) if m else None


def degrees_outside_trig(text: str) -> bool:
    """A degree mark with no trigonometric function in ``text`` (``100^\\circ``): :func:`degrees` drops it."""
    return bool(DEGREE.search(text)) and not TRIG.search(text)


def written_in_base(text: str) -> bool:
    """A numeral with a base subscript other than 10 (``40_9``, ``1011_{2}``)."""
    return "_" in text and any((m.group(2) or m.group(3)) != "10" for m in _BASE_NUMERAL.finditer(text))


def degrees(text: str, *, latex: bool) -> str:
    """Degree marks dropped, or, inside trigonometry, turned into the factor ``pi/180``."""
    if not DEGREE.search(text):
        return text
    if not TRIG.search(text):
        return DEGREE.sub("", text)
    form = "\\left({}\\cdot\\frac{{\\pi}}{{180}}\\right)" if latex else "({}*pi/180)"
    text = _DEGREE_NUMBER.sub(lambda m: form.format(m.group(1)), text)
    # a degree mark on anything but a number ("\sin x^\circ") stays: no parser reads it (value 0)
    return DEGREE.sub("°", text)


_UNITS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
)
_UNITS += "seventeen eighteen nineteen"
_ONES = {w: k for k, w in enumerate(_UNITS.split())}
_TENS = {
    w: 10 * k
    for k, w in enumerate(
        ["_", "_", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
    )
    if k >= 2
}
_NUMBER_WORD = re.compile(r"(?i)^\s*(-|minus\s+|negative\s+)?([a-z]+)(?:[\s-]+([a-z]+))?\s*$")


def number_word(text: str) -> str | None:
    """A whole answer written as a number word below 100 (``seven``, ``twenty-one``, ``minus three``) in digits;
    else None."""
    m = _NUMBER_WORD.match(text)
    if m is None:
        return None
    first, second = m.group(2).lower(), (m.group(3) or "").lower()
    if second:
        if first not in _TENS or second not in _ONES or not 0 < _ONES[second] < 10:
            return None
        value = _TENS[first] + _ONES[second]
    elif first in _ONES or first in _TENS:
        value = _ONES.get(first, _TENS.get(first, 0))
    else:
        return None
    return f"-{value}" if m.group(1) else str(value)
