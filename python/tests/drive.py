"""Runs a writer script through the Python writer: the Python third of
"one script, three writers, one file" (tests/it/sdk.rs drives underlay's
Rust writer and cpp/tests/drive.cpp the C++ header through the same
script, and requires the same bytes and the same words).

    python drive.py SCRIPT        (files are written in the current folder)

A script has one command a line, tokens separated by one space: a double
is ``f`` and its 16 hex digits of bits, a 32-bit float ``g`` and 8, a
string ``s`` and the hex of its UTF-8 bytes, an integer in decimal, an
absent value ``-``. ``flush`` and ``finish`` print ``flush ok`` or
``flush error: MESSAGE`` (a refusal's words), one line each; the grammar
is in tests/it/sdk.rs.
"""

import struct
import sys
import time
from typing import Any, Dict, List, Optional, Tuple

import underlay_log as ul


def f(tok: str) -> float:
    return float(struct.unpack("<d", int(tok[1:], 16).to_bytes(8, "little"))[0])


def g(tok: str) -> float:
    return float(struct.unpack("<f", int(tok[1:], 16).to_bytes(4, "little"))[0])


def s(tok: str) -> str:
    # surrogatepass: a script may hold what is not UTF-8, to be refused.
    if tok.startswith("r"):  # r<count>.<hex>: the bytes repeated
        count, _, h = tok[1:].partition(".")
        return (bytes.fromhex(h) * int(count)).decode("utf-8", "surrogatepass")
    return bytes.fromhex(tok[1:]).decode("utf-8", "surrogatepass")


def opt_int(tok: str) -> Optional[int]:
    return None if tok == "-" else int(tok)


def header(toks: List[str]) -> ul.Header:
    name, relative, unit, threshold, level = toks[:5]
    bounds = None
    if toks[5] != "-":
        bounds = ((f(toks[5]), f(toks[6])), (f(toks[7]), f(toks[8])))
    return ul.Header(
        s(name),
        relative_time=relative == "1",
        world_unit=s(unit),
        instant_threshold=None if threshold == "-" else f(threshold),
        default_max_level=opt_int(level),
        world_bounds=bounds,
    )


def points(toks: List[str], dim: int) -> Tuple[List[Tuple[float, ...]], List[str]]:
    n = int(toks[0])
    flat = [f(t) for t in toks[1 : 1 + dim * n]]
    return [tuple(flat[i : i + dim]) for i in range(0, dim * n, dim)], toks[1 + dim * n :]


def primitive(w: ul.Writer, toks: List[str]) -> None:
    color, fill, thick, world, entity, level, picture, kind = toks[:8]
    a = toks[8:]
    style: Dict[str, Any] = {
        "color": opt_int(color),
        "fill": opt_int(fill),
        "thickness": g(thick),
        "world": world == "1",
        "entity": None if entity == "-" else s(entity),
        "level": int(level),
    }
    flat = dict(style, picture=picture == "1")
    if kind == "circle":
        w.circle((f(a[0]), f(a[1])), f(a[2]), **flat)
    elif kind == "line":
        w.line((f(a[0]), f(a[1])), (f(a[2]), f(a[3])), **flat)
    elif kind == "rect":
        w.rectangle((f(a[0]), f(a[1])), (f(a[2]), f(a[3])), f(a[4]), **flat)
    elif kind in ("polygon", "polyline"):
        vs, _ = points(a, 2)
        (w.polygon if kind == "polygon" else w.polyline)(vs, **flat)
    elif kind == "text":
        w.text((f(a[0]), f(a[1])), s(a[2]), f(a[3]), **flat)
    elif kind == "point":
        w.point((f(a[0]), f(a[1])), "dot" if a[2] == "1" else "cross", f(a[3]), **flat)
    elif kind == "sector":
        w.sector((f(a[0]), f(a[1])), f(a[2]), f(a[3]), f(a[4]), f(a[5]), **flat)
    elif kind == "arc":
        w.arc((f(a[0]), f(a[1])), f(a[2]), f(a[3]), f(a[4]), **flat)
    elif kind == "line3":
        w.line3((f(a[0]), f(a[1]), f(a[2])), (f(a[3]), f(a[4]), f(a[5])), **style)
    elif kind in ("polyline3", "polygon3"):
        ps, _ = points(a, 3)
        (w.polyline3 if kind == "polyline3" else w.polygon3)(ps, **style)
    elif kind == "circle3":
        normal = None if a[4] == "-" else (f(a[4]), f(a[5]), f(a[6]))
        w.circle3((f(a[0]), f(a[1]), f(a[2])), f(a[3]), normal, **style)
    elif kind == "text3":
        w.text3((f(a[0]), f(a[1]), f(a[2])), s(a[3]), f(a[4]), **style)
    elif kind == "point3":
        w.point3((f(a[0]), f(a[1]), f(a[2])), "dot" if a[3] == "1" else "cross", f(a[4]), **style)
    elif kind == "sphere":
        w.sphere((f(a[0]), f(a[1]), f(a[2])), f(a[3]), **style)
    elif kind == "cylinder":
        w.cylinder((f(a[0]), f(a[1]), f(a[2])), f(a[3]), f(a[4]), **style)
    elif kind == "box3":
        w.box3((f(a[0]), f(a[1]), f(a[2])), (f(a[3]), f(a[4]), f(a[5])), f(a[6]), **style)
    else:
        raise ValueError("unknown shape %r" % kind)


def run(path: str) -> None:
    w: Optional[ul.Writer] = None
    out = sys.stdout
    with open(path, encoding="ascii") as lines:
        for line in lines:
            toks = line.rstrip("\n").split(" ")
            cmd = toks[0]
            if cmd in ("open", "udp", "tcp"):
                heights, picture = toks[2] == "1", toks[3] == "1"
                h = header(toks[4:])
                if cmd == "open":
                    w = ul.create(toks[1], h, heights=heights, picture=picture)
                elif cmd == "udp":
                    w = ul.Writer.udp("127.0.0.1", int(toks[1]), h, heights=heights, picture=picture)
                else:
                    w = ul.Writer.tcp("127.0.0.1", int(toks[1]), h, heights=heights, picture=picture)
                continue
            assert w is not None, line
            if cmd == "prim":
                primitive(w, toks[1:])
            elif cmd == "instant":
                w.instant(f(toks[1]))
            elif cmd == "persistent":
                w.persistent(f(toks[1]), f(toks[2]))
            elif cmd == "end":
                w.end_frame()
            elif cmd == "entity":
                w.declare_entity(s(toks[1]), [s(t) for t in toks[2:]])
            elif cmd == "default":
                w.default_entity(s(toks[1]))
            elif cmd == "pause":
                time.sleep(int(toks[1]) / 1e6)
            elif cmd in ("flush", "finish"):
                try:
                    w.flush() if cmd == "flush" else w.finish()
                    out.write(cmd + " ok\n")
                except ul.LogError as e:
                    out.write("%s error: %s\n" % (cmd, e))
            else:
                raise ValueError("unknown command %r" % cmd)
    out.flush()


if __name__ == "__main__":
    run(sys.argv[1])
