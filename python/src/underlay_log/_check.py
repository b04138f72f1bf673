"""Why a shape cannot be drawn: the rules (and the words) of underlay's
readers (``src/log/validate.rs``), which every writer applies before
writing, so that what a writer writes is what a reader draws.

Each function returns ``None`` for a drawable shape, else the reason.
"""

import math
from typing import Optional, Sequence

from ._words import number

isfinite = math.isfinite


def point(name: str, x: float, y: float) -> Optional[str]:
    if isfinite(x) and isfinite(y):
        return None
    return "%s (%s, %s) is not finite" % (name, number(x), number(y))


def size(name: str, s: float) -> Optional[str]:
    if not isfinite(s):
        return "%s %s is not finite" % (name, number(s))
    if s < 0.0:
        return "%s %s is negative" % (name, number(s))
    return None


def thickness(t: float) -> Optional[str]:
    if not isfinite(t):
        return "thickness %s is not finite" % number(t)
    if t < 0.0:
        return "thickness %s is negative" % number(t)
    return None


def circle(c: Sequence[float], r: float) -> Optional[str]:
    return point("center", c[0], c[1]) or size("radius", r)


def line(a: Sequence[float], b: Sequence[float]) -> Optional[str]:
    return point("start", a[0], a[1]) or point("end", b[0], b[1])


def rectangle(c: Sequence[float], s: Sequence[float], orientation: float) -> Optional[str]:
    why = point("center", c[0], c[1]) or size("length", s[0]) or size("width", s[1])
    if why is None and not isfinite(orientation):
        why = "orientation %s is not finite" % number(orientation)
    return why


def polygon(vertices: Sequence[Sequence[float]]) -> Optional[str]:
    if not vertices:
        return "polygon has no vertices"
    for i, v in enumerate(vertices):
        why = point("vertex %d" % i, v[0], v[1])
        if why is not None:
            return why
    return None


def text(anchor: Sequence[float], s: float) -> Optional[str]:
    return point("anchor", anchor[0], anchor[1]) or size("text size", s)


def marker(position: Sequence[float], s: float) -> Optional[str]:
    return point("position", position[0], position[1]) or size("marker size", s)


def sector(c: Sequence[float], inner: float, outer: float, start: float, sweep: float) -> Optional[str]:
    why = point("center", c[0], c[1]) or size("inner radius", inner) or size("outer radius", outer)
    if why is not None:
        return why
    if inner > outer:
        return "inner radius %s exceeds outer radius %s" % (number(inner), number(outer))
    if not isfinite(start):
        return "start angle %s is not finite" % number(start)
    if not isfinite(sweep):
        return "sweep %s is not finite" % number(sweep)
    return None


NOT_FINITE = "a coordinate or size is not finite"
NEGATIVE = "a size is negative"
TOO_FEW_POINTS = "a path needs at least two points"
NO_NORMAL = "a circle's normal has length 0"


def raised(kind: str, numbers: Sequence[float], non_negative: Sequence[bool]) -> Optional[str]:
    """A shape above the floor: its numbers in the reader's order, each
    with whether it must be ≥ 0."""
    for v, nn in zip(numbers, non_negative):
        if not isfinite(v):
            return "raised %s: %s" % (kind, NOT_FINITE)
        if nn and v < 0.0:
            return "raised %s: %s" % (kind, NEGATIVE)
    return None
