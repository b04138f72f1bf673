#!/usr/bin/env python3
"""Cuts a piece out of an SSL game log (SSL_LOG_FILE v1, plain or gzip'ed):
the records received between FROM and TO seconds after the first record,
with their original times, optionally followed by an index record.

    scripts/ssl-fixture.py IN FROM TO OUT [--index]

OUT is gzip'ed when it ends in .gz (with a zero mtime, so the bytes
repeat). The fixtures in tests/data/ssl/ were made with this script from
../shared/testdata/ssl/match-grsim-87s.log.gz (see the README there).
"""
import gzip
import struct
import sys


def records(data):
    if data[:12] != b"SSL_LOG_FILE" or struct.unpack(">i", data[12:16])[0] != 1:
        sys.exit("not an SSL_LOG_FILE version 1")
    off = 16
    while off + 16 <= len(data):
        ts, kind, size = struct.unpack(">qii", data[off:off + 16])
        if size < 0 or off + 16 + size > len(data):
            break
        yield ts, kind, data[off + 16:off + 16 + size]
        off += 16 + size


def main():
    args = [a for a in sys.argv[1:] if a != "--index"]
    if len(args) != 4:
        sys.exit(__doc__)
    src, lo, hi, dst = args[0], float(args[1]), float(args[2]), args[3]
    raw = open(src, "rb").read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    recs = [r for r in records(raw) if r[1] != 6]
    t0 = recs[0][0]
    keep = [r for r in recs if lo <= (r[0] - t0) / 1e9 < hi]
    out = bytearray(b"SSL_LOG_FILE" + struct.pack(">i", 1))
    offsets = []
    for ts, kind, payload in keep:
        offsets.append(len(out))
        out += struct.pack(">qii", ts, kind, len(payload)) + payload
    if "--index" in sys.argv:
        payload = b"".join(struct.pack(">q", o) for o in offsets)
        payload += struct.pack(">q", len(payload) + 8 + 7 + 16) + b"INDEXED"
        out += struct.pack(">qii", 0, 6, len(payload)) + payload
    if dst.endswith(".gz"):
        with open(dst, "wb") as f:
            with gzip.GzipFile(fileobj=f, mode="wb", mtime=0, filename="") as z:
                z.write(out)
    else:
        open(dst, "wb").write(out)
    print(f"{dst}: {len(keep)} records, {len(out)} bytes")


main()
