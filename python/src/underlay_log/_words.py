"""The words of refusals: numbers and names written as underlay's Rust
writer writes them, so a refusal reads the same from every language.

Rust prints a double (``{}``) as its shortest round-trip digits in plain
decimal notation (``1e300`` as 1 and 300 zeros, ``-0.0`` as ``-0``, NaN as
``NaN``); Python's ``repr`` gives the same digits with an exponent, which
:func:`number` spells out. Names are quoted as Rust's ``{:?}`` quotes them
for ASCII (``\\n``, ``\\"``, ``\\u{1b}``); other characters are kept as
they are (Rust also escapes a few unprintable ones beyond ASCII).
"""

import math

__all__ = ["number", "quoted"]


def number(x: float) -> str:
    """``x`` as Rust's ``Display`` for ``f64`` writes it."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    text = repr(float(x))
    sign = ""
    if text.startswith("-"):
        sign, text = "-", text[1:]
    mantissa, _, exp = text.partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = whole + frac
    point = len(whole) + (int(exp) if exp else 0)
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    digits = stripped.rstrip("0")
    if not digits:
        return sign + "0"
    if point <= 0:
        return sign + "0." + "0" * -point + digits
    if point >= len(digits):
        return sign + digits + "0" * (point - len(digits))
    return sign + digits[:point] + "." + digits[point:]


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\0": "\\0"}


def quoted(s: str) -> str:
    """``s`` in double quotes, escaped as Rust's ``{:?}`` escapes ASCII."""
    out = ['"']
    for ch in s:
        esc = _ESCAPES.get(ch)
        if esc is not None:
            out.append(esc)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append("\\u{%x}" % ord(ch))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)
