#!/usr/bin/env python3
"""End-to-end latency of `underlay live`, measured with frames that carry
their own time, for docs/PERFORMANCE.md.

A camera made here: each 640×360 frame carries the milliseconds since the
run's start as a bar code of 32 black or white 16×16 blocks, written to
`ffmpeg` (x264 `zerolatency`, MPEG-TS over UDP) at the moment it is made.
A receiver (`ffmpeg` decoding to raw gray frames, read here) reads each
bar code back and takes the difference with its own clock. Two runs:
the camera straight to the receiver (the path's own latency: encoder,
network, decoder), then through `underlay live` (decoding, drawing a
frame of drawings sent over UDP, encoding again). What underlay adds is
the difference of the two. A third run puts FFmpeg itself in underlay's
place (decoding and encoding again with the same x264 settings): the
floor for anything that draws on the picture.

    ~/.cache/underlay/pyenv/bin/python scripts/live-latency.py [--seconds 30] [--fps 30]
"""

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
W, H, BITS, BLOCK = 640, 360, 32, 16


def free_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def camera(port, fps, seconds, t0, stop):
    enc = subprocess.Popen(["ffmpeg", "-v", "error", "-f", "rawvideo", "-pix_fmt", "gray", "-s", f"{W}x{H}",
                            "-r", str(fps), "-i", "-", "-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency",
                            "-g", str(fps), "-pix_fmt", "yuv420p", "-f", "mpegts", f"udp://127.0.0.1:{port}?pkt_size=1316"],
                           stdin=subprocess.PIPE)
    frame = np.full((H, W), 96, np.uint8)
    n = 0
    try:
        while not stop.is_set() and time.time() - t0 < seconds:
            due = t0 + n / fps
            time.sleep(max(0.0, due - time.time()))
            ms = int((time.time() - t0) * 1000)
            for b in range(BITS):
                frame[0:BLOCK, b * BLOCK:(b + 1) * BLOCK] = 255 if (ms >> b) & 1 else 0
            enc.stdin.write(frame.tobytes())
            enc.stdin.flush()
            n += 1
    except BrokenPipeError:
        pass
    finally:
        try:
            enc.stdin.close()
        except BrokenPipeError:
            pass
        enc.wait()


def receive(port, t0, seconds):
    dec = subprocess.Popen(["ffmpeg", "-v", "fatal", "-fflags", "nobuffer", "-flags", "low_delay", "-probesize", "100000",
                            "-analyzeduration", "0", "-i", f"udp://127.0.0.1:{port}?timeout=5000000",
                            "-f", "rawvideo", "-pix_fmt", "gray", "-"], stdout=subprocess.PIPE)
    lat = []
    size = W * H
    while True:
        buf = dec.stdout.read(size)
        if len(buf) < size:
            break
        now = (time.time() - t0) * 1000
        f = np.frombuffer(buf, np.uint8).reshape(H, W)
        ms = 0
        for b in range(BITS):
            if f[BLOCK // 2, b * BLOCK + BLOCK // 2] > 128:
                ms |= 1 << b
        if 0 <= ms <= seconds * 1000 + 5000:
            lat.append(now - ms)
    dec.wait()
    return lat


def sender(pb, port, stop):
    """A frame of drawings 30 times a second, away from the bar code."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)

    def record(**kind):
        data = pb.Record(**kind).SerializeToString()
        n, out = len(data), bytearray()
        while True:
            byte, n = n & 0x7F, n >> 7
            out.append(byte | (0x80 if n else 0))
            if not n:
                return bytes(out) + data

    head = b"UNDERLAY" + bytes([1, 0]) + record(header=pb.Header(format_version=1)) + record(
        entity=pb.Entity(id=0, name="robot"))
    while not stop.is_set():
        frame = pb.Frame(instant=time.time())
        for i in range(20):
            c = frame.primitives.add(entity=0, color=0xFF4000FF, fill=0xFF400080)
            c.circle.center.x, c.circle.center.y, c.circle.radius = 40 + 28 * i, 200, 12
        sock.sendto(head + record(frame=frame), ("127.0.0.1", port))
        time.sleep(1 / 30)


def run(args, through, pb, work, relay=False):
    cam, out, logs = free_port(), free_port(), free_port()
    stop = threading.Event()
    live = None
    if relay:
        # The same decode and re-encode by FFmpeg alone: the floor for any relay.
        live = subprocess.Popen(["ffmpeg", "-v", "error", "-fflags", "nobuffer", "-flags", "low_delay",
                                 "-probesize", "500000", "-analyzeduration", "500000",
                                 "-i", f"udp://127.0.0.1:{cam}?timeout=5000000", "-c:v", "libx264", "-preset", "veryfast",
                                 "-tune", "zerolatency", "-g", str(args.fps), "-f", "mpegts", "-flush_packets", "1",
                                 "-muxdelay", "0", f"udp://127.0.0.1:{out}?pkt_size=1316"],
                                stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        through = True
    result = {}
    t0 = time.time() + 1.0
    rx = threading.Thread(target=lambda: result.setdefault("lat", receive(out if through else cam, t0, args.seconds)))
    rx.start()
    if through and not relay:
        calib = os.path.join(work, "calib.toml")
        with open(calib, "w") as f:
            f.write(f"homography = [\n [1.0, 0.0, 0.0],\n [0.0, 1.0, 0.0],\n [0.0, 0.0, 1.0],\n]\nimage_size = [{W}, {H}]\n")
        live = subprocess.Popen([args.underlay, "live", f"udp://127.0.0.1:{cam}", "--log", f"udp://127.0.0.1:{logs}",
                                 "--calib", calib, "--duration", str(args.seconds), "--wait", "30",
                                 "--out", f"udp://127.0.0.1:{out}?pkt_size=1316", "--no-view"],
                                stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        threading.Thread(target=sender, args=(pb, logs, stop), daemon=True).start()
    time.sleep(max(0.0, t0 - time.time()))
    camera(cam, args.fps, args.seconds + (3 if through else 0), t0, stop)
    err = ""
    if live is not None:
        if relay:
            time.sleep(1)
            live.terminate()
        err = live.stderr.read()
        live.wait()
    stop.set()
    rx.join()
    return result.get("lat", []), err


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(round((len(v) - 1) * q)))] if v else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--fps", type=int, default=30)
    ap.add_argument("--underlay", default=os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "release", "underlay"))
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="live-latency-")
    subprocess.run([sys.executable, "-m", "grpc_tools.protoc", "-I", os.path.join(ROOT, "proto"),
                    f"--python_out={work}", os.path.join(ROOT, "crates", "underlay-log", "proto", "underlay.proto")], check=True)
    sys.path.insert(0, work)
    import underlay_pb2 as pb  # noqa: E402

    base, _ = run(args, False, pb, work)
    relayed, _ = run(args, True, pb, work, relay=True)
    through, err = run(args, True, pb, work)
    print(err.strip())
    for name, v in [("camera → receiver", base), ("camera → ffmpeg (decode, x264 veryfast zerolatency) → receiver", relayed),
                    ("camera → underlay live → receiver", through)]:
        print(f"{name}: {len(v)} frames, latency p50 {pct(v, 0.5):.1f} ms, p95 {pct(v, 0.95):.1f} ms")
    print(f"added by an FFmpeg relay: p50 {pct(relayed, 0.5) - pct(base, 0.5):.1f} ms, "
          f"p95 {pct(relayed, 0.95) - pct(base, 0.95):.1f} ms")
    print(f"added by underlay: p50 {pct(through, 0.5) - pct(base, 0.5):.1f} ms, "
          f"p95 {pct(through, 0.95) - pct(base, 0.95):.1f} ms (one frame: {1000 / args.fps:.1f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
