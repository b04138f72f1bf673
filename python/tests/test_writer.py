"""Tests of underlay_log on its own (that its bytes are the Rust writer's
is tests/it/sdk.rs's job, through drive.py)."""

import math
import socket
import struct
from pathlib import Path

import pytest

import underlay_log as ul
from underlay_log._words import number, quoted


def records(data: bytes):
    """(field, body) of each record after the prefix."""
    pos, out = 10, []
    while pos < len(data):
        n = shift = 0
        while True:
            b = data[pos]
            pos += 1
            n |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                break
        out.append((data[pos] >> 3, data[pos : pos + n]))
        pos += n
    return out


def test_a_file_has_the_prefix_header_entities_and_frames(tmp_path: Path) -> None:
    path = tmp_path / "run.ulog"
    with ul.create(path, ul.Header("py")) as w:
        w.declare_entity("robots/blue/3", ["robots/blue", "attack"])
        w.persistent(-math.inf, math.inf).line((0, 0), (1, 0), color="red", entity="obstacle")
        w.instant(2.0).circle((1, 2), 3, color="green", entity="robots/blue/3", level=2)
        w.instant(2.0).text((0, 0), "hi", 12, fill=0x000000FF)
        assert w.counts() == (1, 3)
    data = path.read_bytes()
    assert data[:10] == b"UNDERLAY\x01\x00"
    kinds = [k for k, _ in records(data)]
    assert kinds == [1, 2, 2, 2, 2, 2, 3, 2, 3]


def test_versions_follow_the_options(tmp_path: Path) -> None:
    for opts, version in [({}, 1), ({"heights": True}, 2), ({"picture": True}, 3)]:
        p = tmp_path / ("v%d.ulog" % version)
        ul.create(p, **opts).finish()
        assert p.read_bytes()[8] == version


def test_refusals_are_raised_by_flush_and_finish_and_the_rest_is_written(tmp_path: Path) -> None:
    p = tmp_path / "bad.ulog"
    w = ul.create(p)
    w.circle((0, 0), 1)
    with pytest.raises(ul.LogError, match="before any frame was started"):
        w.flush()
    w.instant(1.0).circle((0, 0), -1)
    w.instant(1.0).circle((math.nan, 0), 1)
    w.instant(1.0).sphere((0, 0, 1), 1)
    w.instant(1.0).circle((0, 0), 1, entity="")
    w.instant(1.0).circle((0, 0), 1, thickness=1e300)
    w.instant(1.0).circle((0, 0), 1)
    with pytest.raises(ul.LogError) as e:
        w.flush()
    assert str(e.value) == "%s: a circle was not written: radius -1 is negative" % p
    w.declare_entity("a", ["b"]).declare_entity("b", ["a"])
    w.instant(math.nan).circle((0, 0), 1)
    with pytest.raises(ul.LogError, match='parent "a" of "b" would make a cycle'):
        w.finish()
    assert [k for k, _ in records(p.read_bytes())].count(3) == 1


def test_what_python_types_cannot_hold_is_refused_at_the_call(tmp_path: Path) -> None:
    w = ul.create(tmp_path / "t.ulog")
    w.instant(1.0)
    with pytest.raises(ValueError):
        w.circle((0, 0), 1, level=1 << 31)
    with pytest.raises(ValueError):
        w.circle((0, 0), 1, color="no such colour")
    with pytest.raises(ValueError):
        w.point((0, 0), "star")
    w.text((0, 0), "\ud800", 12)
    with pytest.raises(ul.LogError, match="its text is not valid UTF-8"):
        w.finish()


def test_colours() -> None:
    assert ul.color("blue") == 0x0040FFFF
    assert ul.color("#102030") == 0x102030FF
    assert ul.color("#10203040") == 0x10203040
    assert ul.color("0xff") == 0x0000FFFF
    assert ul.color(0x11223344) == 0x11223344


def test_words_are_rusts() -> None:
    assert number(1e300) == "1" + "0" * 300
    assert number(-0.0) == "-0"
    assert number(struct.unpack("<f", struct.pack("<f", 0.1))[0]) == "0.10000000149011612"
    assert number(1e-7) == "0.0000001"
    assert quoted('a"\n\x1bé') == '"a\\"\\n\\u{1b}é"'


def test_udp_sends_a_whole_log_per_frame() -> None:
    rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    rx.bind(("127.0.0.1", 0))
    rx.settimeout(5)
    w = ul.Writer.udp("127.0.0.1", rx.getsockname()[1])
    w.declare_entity("robots/blue/3", ["robots/blue"])
    w.instant(1.0).circle((0, 0), 90, entity="robots/blue/3")
    w.instant(2.0).line((0, 0), (1, 1), entity="plan")
    w.finish()
    first = rx.recv(65536)
    assert first[:10] == b"UNDERLAY\x01\x00"
    assert [k for k, _ in records(first)] == [1, 2, 2, 3]
    assert first.index(b"robots/blue") < first.index(b"robots/blue/3")
    assert [k for k, _ in records(rx.recv(65536))] == [1, 2, 3]
    big = ul.Writer.udp("127.0.0.1", rx.getsockname()[1])
    big.instant(1.0).polyline([(1.5, 2.5)] * 5000)
    big.end_frame()
    with pytest.raises(ul.LogError, match="does not fit one UDP datagram"):
        big.flush()
    rx.close()


def test_tcp_streams_the_file_format() -> None:
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    w = ul.Writer.tcp("127.0.0.1", srv.getsockname()[1])
    conn, _ = srv.accept()
    w.instant(1.0).circle((0, 0), 1, entity="a")
    w.instant(2.0).circle((0, 0), 1, entity="b")
    w.finish()
    data = b""
    while True:
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
    assert data[:10] == b"UNDERLAY\x01\x00"
    assert [k for k, _ in records(data)] == [1, 2, 3, 2, 3]
    conn.close()
    srv.close()


def test_compressed_files(tmp_path: Path) -> None:
    zstandard = pytest.importorskip("zstandard")
    p = tmp_path / "z.ulog"
    with ul.create(p, zstd_level=3, flush_each_frame=True) as w:
        for i in range(10):
            w.instant(float(i)).circle((i, 0), 1)
    data = p.read_bytes()
    assert data[:10] == b"UNDERLAY\x01\x01"
    plain = zstandard.ZstdDecompressor().decompressobj().decompress(data[10:])
    assert [k for k, _ in records(b"\0" * 10 + plain)].count(3) == 10
