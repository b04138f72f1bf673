"""The native format's bytes, written by hand (no protobuf package, no
``protoc``): the messages of ``proto/underlay.proto`` encoded field by
field, in field order, leaving out proto3 defaults, exactly as underlay's
Rust writer does (``src/log/native/encode.rs``), so that the same calls
give the same bytes. A double is left out only when it is +0.0 (a -0.0
is written, as the protobuf specification says).

Hand-written because the schema is small and stable, because a robot's
computer should need nothing but this package, and because generated code
(or the ``protobuf`` package) would not promise byte-for-byte the output of
the other writers: field order and default omission are the encoder's
choice.
"""

import struct
from typing import Iterable, List, Optional, Sequence, Tuple

MAGIC = b"UNDERLAY"
FLOOR_VERSION = 1
RAISED_VERSION = 2
PICTURE_VERSION = 3
#: Entity ids stay below this (a reader ignores larger ones).
MAX_ENTITY_ID = 1 << 20
#: The longest record a reader takes.
MAX_RECORD_LEN = 64 << 20
#: The largest payload of a UDP datagram (over IPv4).
MAX_DATAGRAM = 65_507

_D = struct.Struct("<d")
_I = struct.Struct("<I")
ZERO8 = b"\0" * 8
pack_d = _D.pack
pack_i = _I.pack


def prefix(version: int, compressed: bool) -> bytes:
    return MAGIC + bytes((version, 1 if compressed else 0))


def varint(n: int) -> bytes:
    if n < 0x80:
        return bytes((n,))
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def zigzag32(n: int) -> int:
    return ((n << 1) ^ (n >> 31)) & 0xFFFFFFFF


def dfield(key: bytes, v: float) -> bytes:
    """A double field, left out when +0.0."""
    b = pack_d(v)
    return b"" if b == ZERO8 else key + b


def vec2(x: float, y: float) -> bytes:
    """A ``Vec2`` message's body."""
    bx = pack_d(x)
    by = pack_d(y)
    if bx == ZERO8:
        return b"" if by == ZERO8 else b"\x11" + by
    return b"\x09" + bx if by == ZERO8 else b"\x09" + bx + b"\x11" + by


def vec2_field(key: bytes, x: float, y: float) -> bytes:
    body = vec2(x, y)
    return key + bytes((len(body),)) + body


def vec3(p: Sequence[float]) -> bytes:
    return dfield(b"\x09", p[0]) + dfield(b"\x11", p[1]) + dfield(b"\x19", p[2])


def vec3_field(key: bytes, p: Sequence[float]) -> bytes:
    body = vec3(p)
    return key + bytes((len(body),)) + body


def len_field(key: bytes, body: bytes) -> bytes:
    n = len(body)
    return key + (bytes((n,)) if n < 0x80 else varint(n)) + body


def string_field(key: bytes, s: bytes) -> bytes:
    return len_field(key, s) if s else b""


def header_record(
    version: int,
    name: bytes,
    relative: bool,
    world_unit: bytes,
    threshold: Optional[float],
    max_level: Optional[int],
    bounds: Optional[Tuple[Tuple[float, float], Tuple[float, float]]],
) -> bytes:
    body = b"\x08" + varint(version) + string_field(b"\x12", name)
    if relative:
        body += b"\x18\x01"
    body += len_field(b"\x22", world_unit)
    if threshold is not None or max_level is not None or bounds is not None:
        hints = b""
        if threshold is not None:
            hints += b"\x09" + pack_d(threshold)
        if max_level is not None:
            hints += b"\x10" + varint(zigzag32(max_level))
        if bounds is not None:
            (x0, y0), (x1, y1) = bounds
            hints += len_field(b"\x1a", vec2_field(b"\x0a", x0, y0) + vec2_field(b"\x12", x1, y1))
        body += len_field(b"\x2a", hints)
    return record(b"\x0a", body)


def entity_record(id: int, name: bytes, parents: Iterable[int]) -> bytes:
    body = (b"\x08" + varint(id) if id else b"") + string_field(b"\x12", name)
    packed = b"".join(varint(p) for p in parents)
    if packed:
        body += len_field(b"\x1a", packed)
    return record(b"\x12", body)


def record(key: bytes, body: bytes) -> bytes:
    """A delimited ``Record`` holding ``body`` as the field ``key``."""
    inner = len_field(key, body)
    return varint(len(inner)) + inner


def instant_time(t: float) -> bytes:
    return b"\x09" + pack_d(t)


def persistent_time(start: float, end: float) -> bytes:
    return len_field(b"\x12", dfield(b"\x09", start) + dfield(b"\x11", end))


def frame_record(time: bytes, primitives: List[bytes], length: int) -> bytes:
    """A delimited frame record; ``length`` is the primitives' total length."""
    frame_len = len(time) + length
    head = b"\x1a" + varint(frame_len)
    return varint(len(head) + frame_len) + head + time + b"".join(primitives)


def frame_record_len(time: bytes, length: int) -> int:
    """The frame record's length without its length prefix."""
    frame_len = len(time) + length
    return 1 + len(varint(frame_len)) + frame_len
