"""Write underlay visualization logs from Python.

A log is timed frames of shapes (circles, lines, rectangles, polygons,
text, markers, arcs and sectors on the floor; lines, circles, text,
markers, spheres, cylinders and boxes above it; floor shapes in the
picture's pixels), each tagged with an entity and a level of detail.
underlay draws them onto the video of the run, recorded
(``underlay view``/``export``) or live (``underlay live --log udp://…``).

>>> import underlay_log as ul
>>> with ul.create("run.ulog") as log:                       # doctest: +SKIP
...     log.declare_entity("robots/blue/3", ["robots/blue"])
...     log.instant(1_700_000_000.25).circle((2271, -1136), 90, color="blue", entity="robots/blue/3")
...     log.instant(1_700_000_000.25).line((2271, -1136), (1412, -568), entity="plan", level=2)

Live: ``ul.Writer.udp("127.0.0.1", 9870)`` or ``ul.Writer.tcp(…)``, then the
same calls. The bytes are those of underlay's own Rust writer for the same
calls (docs/FORMAT.md); nothing but the standard library is needed
(``zstandard`` for compressed files).
"""

from ._wire import MAX_DATAGRAM, MAX_ENTITY_ID, MAX_RECORD_LEN
from .writer import (
    DEFAULT_ENTITY,
    NAMED_COLORS,
    Color,
    Header,
    LogError,
    Point2,
    Point3,
    Writer,
    color,
    create,
)

__version__ = "0.1.0"

__all__ = [
    "Color",
    "DEFAULT_ENTITY",
    "Header",
    "LogError",
    "MAX_DATAGRAM",
    "MAX_ENTITY_ID",
    "MAX_RECORD_LEN",
    "NAMED_COLORS",
    "Point2",
    "Point3",
    "Writer",
    "color",
    "create",
]
