"""The streaming writer: a log written to a file, or sent to ``underlay
live`` over UDP (one whole log per datagram) or TCP (the file format as a
stream), as the robot runs.

It mirrors underlay's Rust ``log::Writer`` call for call and byte for byte:
the same calls give the same file. A frame stays open until another frame
starts (``instant`` with the time of the open frame keeps adding to it),
``end_frame``, ``flush`` or ``finish``; each frame is one record, so a
reader of a file whose writer died mid-frame loads every frame before.

What a reader would drop or refuse is not written (the rest is), and the
first such refusal is raised as :class:`LogError` by the next ``flush`` or
by ``finish``, in the words of the Rust writer (docs/FORMAT.md, *What
writers refuse*). What Rust's types refuse when a program is compiled (a
level beyond 32 bits, a colour that is no colour) raises ``TypeError`` or
``ValueError`` at the call.
"""

import math
import socket
import struct
from typing import (
    IO,
    Any,
    Dict,
    Iterable,
    List,
    Optional,
    Sequence,
    Set,
    Tuple,
    Union,
)

from . import _check as check
from . import _wire as wire
from ._words import quoted

__all__ = [
    "Color",
    "DEFAULT_ENTITY",
    "Header",
    "LogError",
    "NAMED_COLORS",
    "Point2",
    "Point3",
    "Writer",
    "color",
    "create",
]

#: The entity of primitives that name none (see :meth:`Writer.default_entity`).
DEFAULT_ENTITY = "default"

#: A point on the floor (or in the picture): ``(x, y)``.
Point2 = Sequence[float]
#: A point in space: ``(x, y, z)``, z up from the floor.
Point3 = Sequence[float]
#: A colour: ``0xRRGGBBAA`` (alpha 255 is opaque), a name of
#: :data:`NAMED_COLORS`, ``"#rrggbb"``, ``"#rrggbbaa"`` or ``"0xRRGGBB"``.
Color = Union[int, str]

#: Named colours, as underlay's ``Rgba::NAMED``: name → ``0xRRGGBB``.
NAMED_COLORS: Dict[str, int] = {
    "red": 0xFF0000,
    "green": 0x00C000,
    "blue": 0x0040FF,
    "yellow": 0xFFFF00,
    "orange": 0xFF8000,
    "pink": 0xFF60C0,
    "magenta": 0xFF00FF,
    "purple": 0x8000C0,
    "cyan": 0x00FFFF,
    "white": 0xFFFFFF,
    "black": 0x000000,
    "gray": 0x808080,
    "grey": 0x808080,
    "brown": 0x8B4513,
}

_EMPTY_NAME = "an entity's name cannot be empty"
_NOT_UTF8 = "is not valid UTF-8"
_UP = (0.0, 0.0, 1.0)
_F32 = struct.Struct("<f")


class LogError(Exception):
    """A refusal or a failure to write, naming the file (or ``<udp>``,
    ``<tcp>``, ``<stream>``)."""


def color(c: Color) -> int:
    """``c`` as ``0xRRGGBBAA``: an int is taken as it is (``0xRRGGBBAA``);
    a string is a name of :data:`NAMED_COLORS` (any case), ``#rrggbb``,
    ``#rrggbbaa`` or ``0xRRGGBB`` (opaque unless it has an alpha)."""
    if isinstance(c, bool) or not isinstance(c, (int, str)):
        raise TypeError("a colour is an int 0xRRGGBBAA or a string, not %r" % (c,))
    if isinstance(c, int):
        if not 0 <= c <= 0xFFFFFFFF:
            raise ValueError("colour %#x is not a 32-bit 0xRRGGBBAA" % c)
        return c
    s = c
    hexdigits = "0123456789abcdefABCDEF"
    if s.startswith("#") and len(s) in (7, 9) and all(ch in hexdigits for ch in s[1:]):
        v = int(s[1:], 16)
        return (v << 8) | 0xFF if len(s) == 7 else v
    if s[:2] in ("0x", "0X") and 1 <= len(s) - 2 <= 6 and all(ch in hexdigits for ch in s[2:]):
        return (int(s[2:], 16) << 8) | 0xFF
    rgb = NAMED_COLORS.get(s.lower())
    if rgb is None:
        raise ValueError("unknown colour %r (a name of NAMED_COLORS, #rrggbb, #rrggbbaa or 0xRRGGBB)" % s)
    return (rgb << 8) | 0xFF


_rgba = color


def _level(level: int) -> int:
    if isinstance(level, bool) or not isinstance(level, int):
        raise TypeError("a level is an int, not %r" % (level,))
    if not -(1 << 31) <= level < (1 << 31):
        raise ValueError("level %d does not fit 32 bits" % level)
    return level


def _f32(t: float) -> bytes:
    """``t`` as a 32-bit float, rounded as Rust's ``as f32`` (beyond the
    largest float: infinite)."""
    try:
        return _F32.pack(t)
    except OverflowError:
        return _F32.pack(math.inf if t > 0 else -math.inf)


def _utf8(s: str) -> Optional[bytes]:
    """``s`` in UTF-8, or ``None`` when it holds a lone surrogate."""
    if not isinstance(s, str):
        raise TypeError("expected a string, not %r" % (s,))
    try:
        return s.encode("utf-8")
    except UnicodeEncodeError:
        return None


class Header:
    """Facts about the whole log (the first record)."""

    def __init__(
        self,
        name: str = "",
        *,
        relative_time: bool = False,
        world_unit: str = "mm",
        instant_threshold: Optional[float] = None,
        default_max_level: Optional[int] = None,
        world_bounds: Optional[Tuple[Point2, Point2]] = None,
    ) -> None:
        #: A human-readable name of the log or run.
        self.name = name
        #: Times are seconds since the start of the run (else since the Unix epoch).
        self.relative_time = relative_time
        #: The unit of every coordinate and size.
        self.world_unit = world_unit
        #: Instantaneous frames are shown up to this many seconds from the query time.
        self.instant_threshold = instant_threshold
        #: The maximum level of detail to show initially.
        self.default_max_level = default_max_level
        #: The part of the world worth showing: ``((xmin, ymin), (xmax, ymax))``.
        self.world_bounds = world_bounds

    def record(self, version: int) -> bytes:
        name, unit = _utf8(self.name), _utf8(self.world_unit)
        if name is None or unit is None:
            raise ValueError("the header's name and world unit must be valid UTF-8")
        bounds = None
        if self.world_bounds is not None:
            (x0, y0), (x1, y1) = self.world_bounds
            bounds = ((float(x0), float(y0)), (float(x1), float(y1)))
        threshold = None if self.instant_threshold is None else float(self.instant_threshold)
        max_level = None if self.default_max_level is None else _level(self.default_max_level)
        return wire.header_record(version, name, self.relative_time, unit, threshold, max_level, bounds)


class _Sink:
    """Where bytes go: ``write`` all of them, ``flush`` through."""

    def write(self, b: bytes) -> None:
        raise NotImplementedError

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


class _FileSink(_Sink):
    def __init__(self, f: IO[bytes], owned: bool) -> None:
        self.f = f
        self.owned = owned

    def write(self, b: bytes) -> None:
        self.f.write(b)

    def flush(self) -> None:
        self.f.flush()

    def close(self) -> None:
        self.f.flush()
        if self.owned:
            self.f.close()


class _ZstdSink(_Sink):
    def __init__(self, inner: _FileSink, level: int) -> None:
        try:
            import zstandard
        except ImportError as e:  # pragma: no cover - depends on the machine
            raise ImportError(
                "compressed logs need the zstandard package: pip install 'underlay-log[zstd]'"
            ) from e
        self.inner = inner
        self.block = zstandard.FLUSH_BLOCK
        self.z = zstandard.ZstdCompressor(level=level).stream_writer(inner.f, closefd=False)

    def write(self, b: bytes) -> None:
        self.z.write(b)

    def flush(self) -> None:
        self.z.flush(self.block)
        self.inner.flush()

    def close(self) -> None:
        self.z.close()  # type: ignore[no-untyped-call]
        self.inner.close()


class _SocketSink(_Sink):
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    def write(self, b: bytes) -> None:
        self.sock.sendall(b)

    def close(self) -> None:
        self.sock.close()


class _DatagramSink(_Sink):
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    def write(self, b: bytes) -> None:
        self.sock.send(b)

    def close(self) -> None:
        self.sock.close()


class Writer:
    """Writes a native log as a robot runs; see the module's docs.

    Make one with :func:`create` (a file), :meth:`Writer.udp`,
    :meth:`Writer.tcp`, or on any binary file object. ``heights=True``
    makes a format-version-2 log, which can hold shapes above the floor;
    ``picture=True`` a version-3 log, which can hold shapes in the
    picture's pixels too. Every shape method takes the style keywords
    ``color``, ``fill`` (closed shapes), ``thickness`` (pixels of the video;
    0 is the viewer's default), ``world`` (thickness, text and marker sizes
    in world units), ``entity`` (declared on first use) and ``level``.
    """

    def __init__(
        self,
        f: IO[bytes],
        header: Optional[Header] = None,
        *,
        heights: bool = False,
        picture: bool = False,
        zstd_level: Optional[int] = None,
        flush_each_frame: bool = False,
        buffer_size: int = 1 << 16,
        name: str = "<stream>",
        _sink: Optional[_Sink] = None,
        _datagrams: bool = False,
    ) -> None:
        self._name = name
        self._heights = heights
        self._picture = picture
        self._version = (
            wire.PICTURE_VERSION if picture else wire.RAISED_VERSION if heights else wire.FLOOR_VERSION
        )
        if _datagrams:
            zstd_level = None
        self._flush_each_frame = flush_each_frame
        self._buffer_size = buffer_size
        head = (header or Header()).record(self._version)
        sink: _Sink = _sink if _sink is not None else _FileSink(f, owned=False)
        if not _datagrams:
            sink.write(wire.prefix(self._version, zstd_level is not None))
        if zstd_level is not None:
            if not isinstance(sink, _FileSink):
                raise ValueError("compression needs a file")
            sink = _ZstdSink(sink, zstd_level)
        self._sink: Optional[_Sink] = sink
        #: Encoded records waiting to be written.
        self._out = bytearray()
        #: Encoded primitives of the open frame, and their total length.
        self._frame: List[bytes] = []
        self._frame_len = 0
        #: The open frame's time: its encoding and its doubles' bits.
        self._open: Optional[Tuple[bytes, bytes]] = None
        self._ids: Dict[str, int] = {}
        self._names: List[str] = []
        self._parents: List[List[int]] = []
        self._edges: Set[Tuple[int, int]] = set()
        self._default_entity: Optional[int] = None
        self._default_name = DEFAULT_ENTITY
        self._error: Optional[LogError] = None
        self._failed = False
        self._frames = 0
        self._primitives = 0
        self._datagram_header: Optional[bytes] = None
        #: Entities the open frame's primitives name (datagrams only).
        self._used: List[int] = []
        self._used_set: Set[int] = set()
        if _datagrams:
            self._datagram_header = head
        else:
            self._out += head

    # Making writers.

    @classmethod
    def create(cls, path: Any, header: Optional[Header] = None, **options: Any) -> "Writer":
        """Creates (truncates) the file at ``path`` and writes the prefix
        and header; ``options`` as :class:`Writer`'s (``heights``,
        ``picture``, ``zstd_level``, ``flush_each_frame``, ``buffer_size``)."""
        f = open(path, "wb")
        try:
            return cls(f, header, name=str(path), _sink=_FileSink(f, owned=True), **options)
        except BaseException:
            f.close()
            raise

    @classmethod
    def udp(
        cls, host: str, port: int, header: Optional[Header] = None, *, heights: bool = False, picture: bool = False
    ) -> "Writer":
        """Sends each frame as one datagram to ``underlay live --log
        udp://HOST:PORT``: every datagram is a whole log (prefix, header,
        the entities its primitives name with their ancestors, the
        frame). A frame must fit one datagram (65,507 bytes)."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            sock.connect((host, port))
        except OSError as e:
            sock.close()
            raise LogError("<udp>: %s" % e) from e
        return cls(
            _NO_FILE, header, heights=heights, picture=picture, name="<udp>",
            _sink=_DatagramSink(sock), _datagrams=True,
        )

    @classmethod
    def tcp(
        cls, host: str, port: int, header: Optional[Header] = None, *, heights: bool = False, picture: bool = False
    ) -> "Writer":
        """Streams the file format to ``underlay live --log
        tcp://HOST:PORT``, each frame sent as it ends (nothing is lost; a
        slow receiver slows the sender)."""
        try:
            sock = socket.create_connection((host, port))
        except OSError as e:
            raise LogError("<tcp>: %s" % e) from e
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return cls(
            _NO_FILE, header, heights=heights, picture=picture, flush_each_frame=True,
            name="<tcp>", _sink=_SocketSink(sock),
        )

    def __enter__(self) -> "Writer":
        return self

    def __exit__(self, kind: Any, value: Any, tb: Any) -> None:
        if kind is None:
            self.finish()
        elif self._sink is not None:
            # An exception is on its way: write what was logged, raise nothing more.
            try:
                self.finish()
            except (LogError, OSError):
                pass

    # Frames.

    def instant(self, t: float) -> "Writer":
        """Starts an instantaneous frame at ``t`` (seconds on the log's
        clock), ending the open frame, unless the open frame is at ``t``."""
        time = wire.instant_time(t)
        if self._open is None or self._open[0] != time:
            self.end_frame()
            self._open = (time, time)
        return self

    def persistent(self, start: float, end: float) -> "Writer":
        """Starts a persistent frame shown over ``[start, end]`` (either
        may be infinite), unless the open frame has that span."""
        bits = b"P" + wire.pack_d(start) + wire.pack_d(end)
        if self._open is None or self._open[1] != bits:
            self.end_frame()
            self._open = (wire.persistent_time(start, end), bits)
        return self

    def end_frame(self) -> "Writer":
        """Ends the open frame (if any) and queues it as one record (sends
        it, over the network)."""
        if self._open is None:
            return self
        time, bits = self._open
        self._open = None
        problem = _time_problem(bits)
        if problem is None:
            n = wire.frame_record_len(time, self._frame_len)
            if n > wire.MAX_RECORD_LEN:
                problem = "its record of %d bytes is longer than a reader takes (%d bytes)" % (
                    n, wire.MAX_RECORD_LEN,
                )
        if problem is not None:
            self._fail("a frame was not written: " + problem)
            self._frame = []
            self._frame_len = 0
            self._used = []
            self._used_set = set()
            return self
        if self._datagram_header is not None:
            self._send_datagram(time)
            return self
        self._out += wire.frame_record(time, self._frame, self._frame_len)
        self._frame = []
        self._frame_len = 0
        self._frames += 1
        if self._flush_each_frame:
            self._write_out(True)
        elif len(self._out) >= self._buffer_size:
            self._write_out(False)
        return self

    # Entities.

    def declare_entity(self, name: str, parents: Iterable[str] = ()) -> "Writer":
        """Declares ``name`` with parent entities (declared too when new),
        for the entity graph; declaring again adds parents. An edge that
        would make a cycle is not written, nor a declaration with an empty
        name; the next ``flush`` or ``finish`` raises."""
        parents = list(parents)
        if name == "" or "" in parents:
            self._fail("declare_entity: %s; nothing was declared" % _EMPTY_NAME)
            return self
        encoded = [_utf8(p) for p in [name] + parents]
        if any(e is None for e in encoded):
            self._fail("declare_entity: an entity's name %s; nothing was declared" % _NOT_UTF8)
            return self
        parent_ids = [self._intern(p) for p in parents]
        known = name in self._ids
        child = self._intern(name)
        added = False
        for p in parent_ids:
            if (child, p) in self._edges:
                continue
            if self._reaches(p, child):
                self._fail(
                    "declare_entity: parent %s of %s would make a cycle"
                    % (quoted(self._names[p]), quoted(name))
                )
            else:
                self._edges.add((child, p))
                self._parents[child].append(p)
                added = True
        if added or not known:
            self._out += wire.entity_record(child, name.encode("utf-8"), self._parents[child])
        return self

    def default_entity(self, name: str) -> "Writer":
        """Sets the entity of primitives that name none (initially
        :data:`DEFAULT_ENTITY`)."""
        if name != self._default_name:
            self._default_name = name
            self._default_entity = None
        return self

    def _reaches(self, start: int, target: int) -> bool:
        """Whether ``target`` is ``start`` or one of its ancestors."""
        seen = {start}
        stack = [start]
        while stack:
            e = stack.pop()
            if e == target:
                return True
            for p in self._parents[e]:
                if p not in seen:
                    seen.add(p)
                    stack.append(p)
        return False

    def _intern(self, name: str) -> int:
        """The id of ``name`` (valid UTF-8, not empty), declaring it when new."""
        e = self._ids.get(name)
        if e is not None:
            return e
        e = len(self._names)
        self._ids[name] = e
        self._names.append(name)
        self._parents.append([])
        if e >= wire.MAX_ENTITY_ID:
            self._fail("more than %d entities" % wire.MAX_ENTITY_ID)
        self._out += wire.entity_record(e, name.encode("utf-8"), ())
        return e

    def _entity(self, name: Optional[str]) -> Union[int, str]:
        """The id of a primitive's entity, or why it has none."""
        if name is None:
            if self._default_entity is not None:
                return self._default_entity
            if self._default_name == "":
                return _EMPTY_NAME
            if _utf8(self._default_name) is None:
                return "its entity's name %s" % _NOT_UTF8
            self._default_entity = self._intern(self._default_name)
            return self._default_entity
        if name == "":
            return _EMPTY_NAME
        if _utf8(name) is None:
            return "its entity's name %s" % _NOT_UTF8
        return self._intern(name)

    # Committing a primitive.

    def _commit(
        self,
        kind: str,
        key: bytes,
        body: Optional[bytes],
        why: Optional[str],
        color: Optional[Color],
        fill: Optional[Color],
        thickness: float,
        world: bool,
        entity: Optional[str],
        level: int,
        picture: bool = False,
        raised: bool = False,
    ) -> "Writer":
        """Adds one primitive to the open frame: ``body`` is its shape's
        message (``key`` its field), ``why`` why it cannot be drawn."""
        eid = self._default_entity
        if (
            eid is not None
            and eid < 0x80
            and entity is None
            and why is None
            and not level
            and color is None
            and fill is None
            and thickness == 0.0
            and not world
            and not picture
            and not raised
            and body is not None
            and self._open is not None
        ):
            # The common case, quickly: a shape in the default style.
            n = len(body)
            ek = _ENTITY_KEYS[eid]
            pl = len(key) + 1 + n + len(ek) + 5
            if pl < 0x80:
                p = b"".join((b"\x1a", _BYTE[pl], key, _BYTE[n], body, ek, _WHITE))
                self._frame.append(p)
                self._frame_len += pl + 2
                self._primitives += 1
                if self._datagram_header is not None and eid not in self._used_set:
                    self._used_set.add(eid)
                    self._used.append(eid)
                return self
        if color is None and fill is None and thickness == 0.0 and not world and not picture:
            tail = _WHITE
        else:
            tail, thick_why = _style(color, fill, thickness, world, picture)
            why = why or thick_why
        if level:
            _level(level)
        who: Union[int, str]
        if entity is None and eid is not None:
            who = eid
        else:
            who = self._entity(entity)
        if self._open is None:
            self._fail(
                "%s was added before any frame was started (call instant or persistent first)" % _a(kind)
            )
            return self
        if isinstance(who, str):
            self._fail("%s was not written: %s" % (_a(kind), who))
            return self
        eid = who
        if picture and not self._picture:
            self._fail(
                "%s in the picture's pixels was not written: a log of format version %d cannot hold it; "
                "create the writer with picture=True" % (_a(kind), 2 if self._heights else 1)
            )
            return self
        if raised and not (self._heights or self._picture):
            self._fail(
                "%s above the floor was not written: a log without heights (format version 1) cannot "
                "hold it; create the writer with heights=True" % _a(kind)
            )
            return self
        if why is not None or body is None:
            self._fail("%s was not written: %s" % (_a(kind), why or "its text %s" % _NOT_UTF8))
            return self
        n = len(body)
        parts = [key, bytes((n,)) if n < 0x80 else wire.varint(n), body]
        if eid:
            parts.append(_ENTITY_KEYS[eid] if eid < 0x80 else b"\x40" + wire.varint(eid))
        if level:
            parts.append(b"\x48" + wire.varint(wire.zigzag32(level)))
        parts.append(tail)
        p = b"".join(parts)
        n = len(p)
        p = (b"\x1a" + bytes((n,)) if n < 0x80 else b"\x1a" + wire.varint(n)) + p
        self._frame.append(p)
        self._frame_len += len(p)
        self._primitives += 1
        if self._datagram_header is not None and eid not in self._used_set:
            self._used_set.add(eid)
            self._used.append(eid)
        return self

    # Shapes on the floor (and, with picture=True, in the picture's pixels).

    def circle(
        self, center: Point2, radius: float, *, color: Optional[Color] = None, fill: Optional[Color] = None,
        thickness: float = 0.0, world: bool = False, entity: Optional[str] = None, level: int = 0,
        picture: bool = False,
    ) -> "Writer":
        """A circle of ``radius`` around ``center``."""
        x, y = center
        x, y, r = float(x), float(y), float(radius)
        why = None
        if not (isfinite(x) and isfinite(y) and isfinite(r) and r >= 0.0):
            why = check.circle((x, y), r)
        if x and y and r:
            body = _CIRCLE(0x0A, 18, 0x09, x, 0x11, y, 0x11, r)
        else:
            body = wire.vec2_field(b"\x0a", x, y) + wire.dfield(b"\x11", r)
        return self._commit("circle", b"\x0a", body, _in_picture(why, picture), color, fill, thickness,
                            world, entity, level, picture)

    def line(
        self, start: Point2, end: Point2, *, color: Optional[Color] = None, fill: Optional[Color] = None,
        thickness: float = 0.0, world: bool = False, entity: Optional[str] = None, level: int = 0,
        picture: bool = False,
    ) -> "Writer":
        """A line segment."""
        a, b = _p2(start), _p2(end)
        body = wire.vec2_field(b"\x0a", a[0], a[1]) + wire.vec2_field(b"\x12", b[0], b[1])
        return self._commit("line", b"\x12", body, _in_picture(check.line(a, b), picture), color, fill,
                            thickness, world, entity, level, picture)

    def rectangle(
        self, center: Point2, size: Point2, orientation: float = 0.0, *, color: Optional[Color] = None,
        fill: Optional[Color] = None, thickness: float = 0.0, world: bool = False,
        entity: Optional[str] = None, level: int = 0, picture: bool = False,
    ) -> "Writer":
        """A rectangle ``size[0]`` long along ``orientation`` (radians,
        counter-clockwise from x) and ``size[1]`` wide across it."""
        c, s, o = _p2(center), _p2(size), float(orientation)
        body = wire.vec2_field(b"\x0a", c[0], c[1]) + wire.vec2_field(b"\x12", s[0], s[1])
        body += wire.dfield(b"\x19", o)
        return self._commit("rectangle", b"\x1a", body, _in_picture(check.rectangle(c, s, o), picture),
                            color, fill, thickness, world, entity, level, picture)

    def polygon(
        self, vertices: Iterable[Point2], *, color: Optional[Color] = None, fill: Optional[Color] = None,
        thickness: float = 0.0, world: bool = False, entity: Optional[str] = None, level: int = 0,
        picture: bool = False,
    ) -> "Writer":
        """A closed polygon."""
        return self._polygon(vertices, False, color, fill, thickness, world, entity, level, picture)

    def polyline(
        self, vertices: Iterable[Point2], *, color: Optional[Color] = None, fill: Optional[Color] = None,
        thickness: float = 0.0, world: bool = False, entity: Optional[str] = None, level: int = 0,
        picture: bool = False,
    ) -> "Writer":
        """An open polyline."""
        return self._polygon(vertices, True, color, fill, thickness, world, entity, level, picture)

    def _polygon(
        self, vertices: Iterable[Point2], open_: bool, color: Optional[Color], fill: Optional[Color],
        thickness: float, world: bool, entity: Optional[str], level: int, picture: bool,
    ) -> "Writer":
        vs = [_p2(v) for v in vertices]
        body = b"".join([wire.vec2_field(b"\x0a", x, y) for x, y in vs])
        if open_:
            body += b"\x10\x01"
        return self._commit("polygon", b"\x22", body, _in_picture(check.polygon(vs), picture), color, fill,
                            thickness, world, entity, level, picture)

    def text(
        self, anchor: Point2, text: str, size: float, *, color: Optional[Color] = None,
        fill: Optional[Color] = None, thickness: float = 0.0, world: bool = False,
        entity: Optional[str] = None, level: int = 0, picture: bool = False,
    ) -> "Writer":
        """Text anchored at the left end of its baseline, ``size`` pixels
        high (world units with ``world=True``)."""
        a, s = _p2(anchor), float(size)
        t = _utf8(text)
        body = None
        if t is not None:
            body = wire.vec2_field(b"\x0a", a[0], a[1]) + wire.string_field(b"\x12", t) + wire.dfield(b"\x19", s)
        return self._commit("text", b"\x2a", body, _in_picture(check.text(a, s), picture), color, fill,
                            thickness, world, entity, level, picture)

    def point(
        self, position: Point2, kind: str = "cross", size: float = 0.0, *, color: Optional[Color] = None,
        fill: Optional[Color] = None, thickness: float = 0.0, world: bool = False,
        entity: Optional[str] = None, level: int = 0, picture: bool = False,
    ) -> "Writer":
        """A point marker, ``"cross"`` or ``"dot"``; ``size`` 0 is the viewer's default."""
        p, s = _p2(position), float(size)
        body = wire.vec2_field(b"\x0a", p[0], p[1]) + _marker(kind) + wire.dfield(b"\x19", s)
        return self._commit("point", b"\x32", body, _in_picture(check.marker(p, s), picture), color, fill,
                            thickness, world, entity, level, picture)

    def sector(
        self, center: Point2, inner: float, outer: float, start: float, sweep: float, *,
        color: Optional[Color] = None, fill: Optional[Color] = None, thickness: float = 0.0,
        world: bool = False, entity: Optional[str] = None, level: int = 0, picture: bool = False,
    ) -> "Writer":
        """The part of the ring between radii ``inner`` and ``outer`` from
        angle ``start`` through ``start + sweep`` (radians, counter-clockwise
        when ``sweep`` is positive)."""
        c = _p2(center)
        i, o, a, w = float(inner), float(outer), float(start), float(sweep)
        body = wire.vec2_field(b"\x0a", c[0], c[1]) + wire.dfield(b"\x11", i) + wire.dfield(b"\x19", o)
        body += wire.dfield(b"\x21", a) + wire.dfield(b"\x29", w)
        why = _in_picture(check.sector(c, i, o, a, w), picture)
        return self._commit("arc" if i == o else "sector", b"\x3a", body, why, color, fill, thickness,
                            world, entity, level, picture)

    def arc(
        self, center: Point2, radius: float, start: float, sweep: float, *, color: Optional[Color] = None,
        fill: Optional[Color] = None, thickness: float = 0.0, world: bool = False,
        entity: Optional[str] = None, level: int = 0, picture: bool = False,
    ) -> "Writer":
        """A circular arc: a :meth:`sector` with ``inner == outer == radius``."""
        return self.sector(center, radius, radius, start, sweep, color=color, fill=fill, thickness=thickness,
                           world=world, entity=entity, level=level, picture=picture)

    # Shapes above the floor (need heights=True or picture=True).

    def line3(
        self, start: Point3, end: Point3, *, color: Optional[Color] = None, fill: Optional[Color] = None,
        thickness: float = 0.0, world: bool = False, entity: Optional[str] = None, level: int = 0,
    ) -> "Writer":
        """A line segment in space (points ``(x, y, z)``, z up from the floor)."""
        return self._path3([start, end], True, color, fill, thickness, world, entity, level)

    def polyline3(
        self, points: Iterable[Point3], *, color: Optional[Color] = None, fill: Optional[Color] = None,
        thickness: float = 0.0, world: bool = False, entity: Optional[str] = None, level: int = 0,
    ) -> "Writer":
        """An open polyline through points in space."""
        return self._path3(points, True, color, fill, thickness, world, entity, level)

    def polygon3(
        self, points: Iterable[Point3], *, color: Optional[Color] = None, fill: Optional[Color] = None,
        thickness: float = 0.0, world: bool = False, entity: Optional[str] = None, level: int = 0,
    ) -> "Writer":
        """A closed polygon through points in space (it can be filled)."""
        return self._path3(points, False, color, fill, thickness, world, entity, level)

    def _path3(
        self, points: Iterable[Point3], open_: bool, color: Optional[Color], fill: Optional[Color],
        thickness: float, world: bool, entity: Optional[str], level: int,
    ) -> "Writer":
        ps = [_p3(p) for p in points]
        kind = "line" if len(ps) == 2 and open_ else "polyline" if open_ else "polygon"
        body = b"".join([wire.vec3_field(b"\x0a", p) for p in ps]) + (b"\x10\x01" if open_ else b"")
        why = check.raised(kind, [v for p in ps for v in p], [False] * (3 * len(ps)))
        if why is None and len(ps) < 2:
            why = "raised %s: %s" % (kind, check.TOO_FEW_POINTS)
        return self._commit(kind, b"\x72", body, why, color, fill, thickness, world, entity, level, raised=True)

    def circle3(
        self, center: Point3, radius: float, normal: Optional[Point3] = None, *,
        color: Optional[Color] = None, fill: Optional[Color] = None, thickness: float = 0.0,
        world: bool = False, entity: Optional[str] = None, level: int = 0,
    ) -> "Writer":
        """A circle of ``radius`` around ``center`` in the plane through it
        whose normal is ``normal`` (any length but 0); without one,
        horizontal at the centre's height."""
        c, r = _p3(center), float(radius)
        n = _UP if normal is None else _p3(normal)
        body = wire.vec3_field(b"\x0a", c) + wire.dfield(b"\x11", r)
        if struct.pack("<3d", *n) != _UP_BITS:
            body += wire.vec3_field(b"\x1a", n)
        why = check.raised("circle", [*c, r, *n], [False, False, False, True, False, False, False])
        if why is None and all(v == 0.0 for v in n):
            why = "raised circle: " + check.NO_NORMAL
        return self._commit("circle", b"\x7a", body, why, color, fill, thickness, world, entity, level,
                            raised=True)

    def text3(
        self, anchor: Point3, text: str, size: float, *, color: Optional[Color] = None,
        fill: Optional[Color] = None, thickness: float = 0.0, world: bool = False,
        entity: Optional[str] = None, level: int = 0,
    ) -> "Writer":
        """Text anchored at a point in space, sized as :meth:`text`."""
        a, s = _p3(anchor), float(size)
        t = _utf8(text)
        body = None
        if t is not None:
            body = wire.vec3_field(b"\x0a", a) + wire.string_field(b"\x12", t) + wire.dfield(b"\x19", s)
        why = check.raised("text", [*a, s], [False, False, False, True])
        return self._commit("text", b"\x82\x01", body, why, color, fill, thickness, world, entity, level,
                            raised=True)

    def point3(
        self, position: Point3, kind: str = "cross", size: float = 0.0, *, color: Optional[Color] = None,
        fill: Optional[Color] = None, thickness: float = 0.0, world: bool = False,
        entity: Optional[str] = None, level: int = 0,
    ) -> "Writer":
        """A point marker in space, as :meth:`point`."""
        p, s = _p3(position), float(size)
        body = wire.vec3_field(b"\x0a", p) + _marker(kind) + wire.dfield(b"\x19", s)
        why = check.raised("point", [*p, s], [False, False, False, True])
        return self._commit("point", b"\x8a\x01", body, why, color, fill, thickness, world, entity, level,
                            raised=True)

    def sphere(
        self, center: Point3, radius: float, *, color: Optional[Color] = None, fill: Optional[Color] = None,
        thickness: float = 0.0, world: bool = False, entity: Optional[str] = None, level: int = 0,
    ) -> "Writer":
        """A ball of ``radius`` around ``center`` (a ball on the floor has
        its centre at height ``radius``)."""
        c, r = _p3(center), float(radius)
        body = wire.vec3_field(b"\x0a", c) + wire.dfield(b"\x11", r)
        why = check.raised("sphere", [*c, r], [False, False, False, True])
        return self._commit("sphere", b"\x92\x01", body, why, color, fill, thickness, world, entity, level,
                            raised=True)

    def cylinder(
        self, base: Point3, radius: float, height: float, *, color: Optional[Color] = None,
        fill: Optional[Color] = None, thickness: float = 0.0, world: bool = False,
        entity: Optional[str] = None, level: int = 0,
    ) -> "Writer":
        """A vertical cylinder whose bottom face is centred on ``base``."""
        b, r, h = _p3(base), float(radius), float(height)
        body = wire.vec3_field(b"\x0a", b) + wire.dfield(b"\x11", r) + wire.dfield(b"\x19", h)
        why = check.raised("cylinder", [*b, r, h], [False, False, False, True, True])
        return self._commit("cylinder", b"\x9a\x01", body, why, color, fill, thickness, world, entity, level,
                            raised=True)

    def box3(
        self, base: Point3, size: Point3, orientation: float = 0.0, *, color: Optional[Color] = None,
        fill: Optional[Color] = None, thickness: float = 0.0, world: bool = False,
        entity: Optional[str] = None, level: int = 0,
    ) -> "Writer":
        """A box whose bottom face is centred on ``base``: ``size`` is its
        length along ``orientation`` (radians), its width across it and
        its height."""
        b, s, o = _p3(base), _p3(size), float(orientation)
        body = wire.vec3_field(b"\x0a", b) + wire.vec3_field(b"\x12", s) + wire.dfield(b"\x19", o)
        why = check.raised("box", [*b, *s, o], [False, False, False, True, True, True, False])
        return self._commit("box", b"\xa2\x01", body, why, color, fill, thickness, world, entity, level,
                            raised=True)

    # Output.

    def counts(self) -> Tuple[int, int]:
        """Frames and primitives written so far (including the open frame's primitives)."""
        return self._frames, self._primitives

    def _fail(self, message: str) -> None:
        if self._error is None:
            self._error = LogError("%s: %s" % (self._name, message))

    def _send_datagram(self, time: bytes) -> None:
        # Entity records queued by declarations go out with the frames that use them.
        self._out = bytearray()
        assert self._datagram_header is not None
        parts = [wire.prefix(self._version, False), self._datagram_header]
        sent: Set[int] = set()
        stack = [(e, False) for e in reversed(self._used)]
        while stack:
            e, parents_done = stack.pop()
            if e in sent:
                continue
            parents = self._parents[e]
            if not parents_done:
                stack.append((e, True))
                stack.extend((p, False) for p in reversed(parents))
                continue
            sent.add(e)
            parts.append(wire.entity_record(e, self._names[e].encode("utf-8"), parents))
        self._used = []
        self._used_set = set()
        parts.append(wire.frame_record(time, self._frame, self._frame_len))
        self._frame = []
        self._frame_len = 0
        self._frames += 1
        datagram = b"".join(parts)
        if len(datagram) > wire.MAX_DATAGRAM:
            self._fail(
                "a frame of %d bytes does not fit one UDP datagram (%d bytes): it was not sent; "
                "send large frames over tcp://" % (len(datagram), wire.MAX_DATAGRAM)
            )
            return
        if self._sink is None:
            return
        try:
            self._sink.write(datagram)
        except OSError as e:
            # A datagram that cannot be sent (nobody listening yet) costs its own frame.
            if self._error is None:
                self._error = LogError("%s: %s" % (self._name, e))

    def _write_out(self, sync: bool) -> bool:
        if self._failed or self._datagram_header is not None or self._sink is None:
            self._out = bytearray()
            return False
        try:
            if self._out:
                self._sink.write(bytes(self._out))
            if sync:
                self._sink.flush()
        except OSError as e:
            self._out = bytearray()
            self._failed = True
            if self._error is None:
                self._error = LogError("%s: %s" % (self._name, e))
            return False
        self._out = bytearray()
        return True

    def flush(self) -> None:
        """Writes every finished frame through (the open frame stays open)
        and raises the first refusal or error not yet raised."""
        self._write_out(True)
        e, self._error = self._error, None
        if e is not None:
            raise e

    def finish(self) -> None:
        """Ends the open frame, writes everything, finishes compression and
        closes what the writer opened; raises the first refusal or error
        met while writing."""
        self.end_frame()
        self._write_out(False)
        sink, self._sink = self._sink, None
        if sink is None:
            raise LogError("%s: the writer was already finished" % self._name)
        try:
            if self._error is None and not self._failed:
                sink.close()
                return
        except OSError as e:
            raise LogError("%s: %s" % (self._name, e)) from e
        finally:
            if self._error is not None or self._failed:
                try:
                    if isinstance(sink, _ZstdSink):
                        sink.inner.close()
                    else:
                        sink.close()
                except OSError:
                    pass
        error, self._error = self._error, None
        raise error or LogError(
            "%s: writing failed earlier (reported by flush); the log is incomplete" % self._name
        )

    close = finish


_UP_BITS = struct.pack("<3d", *_UP)
_WHITE = b"\x55\xff\xff\xff\xff"
_ENTITY_KEYS = [b""] + [b"\x40" + bytes((i,)) for i in range(1, 0x80)]
_BYTE = [bytes((i,)) for i in range(0x100)]
_CIRCLE = struct.Struct("<BBBdBdBd").pack
isfinite = math.isfinite


def _style(
    color: Optional[Color], fill: Optional[Color], thickness: float, world: bool, picture: bool
) -> Tuple[bytes, Optional[str]]:
    """A primitive's fields from its colour on (10 to 13, 21), and why its
    thickness cannot be drawn."""
    tail = b"\x55" + wire.pack_i(0xFFFFFFFF if color is None else _rgba(color))
    if fill is not None:
        tail += b"\x5d" + wire.pack_i(_rgba(fill))
    tb = _f32(thickness)
    why = None
    if tb != b"\0\0\0\0" and tb != b"\0\0\0\x80":
        tail += b"\x65" + tb
        t = _F32.unpack(tb)[0]
        if not (math.isfinite(t) and t >= 0.0):
            why = check.thickness(t)
    if world:
        tail += b"\x68\x01"
    if picture:
        tail += b"\xa8\x01\x01"
    return tail, why


class _NoFile:
    """The file of a writer whose sink is a socket."""

    def write(self, b: bytes) -> int:
        raise OSError("no file")

    def flush(self) -> None:
        pass


_NO_FILE: Any = _NoFile()


def create(path: Any, header: Optional[Header] = None, **options: Any) -> Writer:
    """A writer of a new file at ``path``: :meth:`Writer.create`."""
    return Writer.create(path, header, **options)


def _p2(p: Point2) -> Tuple[float, float]:
    x, y = p
    return float(x), float(y)


def _p3(p: Point3) -> Tuple[float, float, float]:
    x, y, z = p
    return float(x), float(y), float(z)


def _marker(kind: str) -> bytes:
    if kind == "cross":
        return b""
    if kind == "dot":
        return b"\x10\x01"
    raise ValueError("a marker is 'cross' or 'dot', not %r" % (kind,))


def _a(kind: str) -> str:
    """"a circle", "an arc": the shape as a refusal names it."""
    return ("an " if kind.startswith("a") else "a ") + kind


def _in_picture(why: Optional[str], picture: bool) -> Optional[str]:
    return "in the picture: " + why if why is not None and picture else why


def _time_problem(bits: bytes) -> Optional[str]:
    """Why a frame's time is unusable (the reader's words), from its bits."""
    from ._words import number

    if bits[:1] != b"P":
        (t,) = struct.unpack("<d", bits[1:9])
        return None if math.isfinite(t) else "instantaneous time %s is not finite" % number(t)
    start, end = struct.unpack("<2d", bits[1:])
    if math.isnan(start) or math.isnan(end):
        return "persistent time {%s; %s} is not a number" % (number(start), number(end))
    if end < start:
        return "persistent frame ends (%s) before it starts (%s)" % (number(end), number(start))
    if start == math.inf or end == -math.inf:
        return "persistent frame {%s; %s} covers no time" % (number(start), number(end))
    return None
