#!/usr/bin/env python3
"""Sustained run of `underlay live` on loopback, for docs/PERFORMANCE.md.

A live camera (a testsrc2 clip encoded once, then replayed at its own pace
with `ffmpeg -re -stream_loop -1 … -c copy` over UDP MPEG-TS), a robot
sending a busy frame of drawings 60 times a second over UDP (the Python
sender of docs/FORMAT.md's format, ~120 primitives a frame), and
`underlay live` drawing them with the default floor mask and streaming the
result over UDP to an `ffmpeg` receiver that keeps nothing. Every 5 s the
process's resident memory is sampled; at the end underlay's own summary
(frames in, written, dropped; latency and drawing time, p50/p95) and the
memory's first, last and largest samples are printed.

    ~/.cache/underlay/pyenv/bin/python scripts/live-bench.py --size 1920x1080 --fps 30 --seconds 600
    ~/.cache/underlay/pyenv/bin/python scripts/live-bench.py --size 1280x720 --fps 60 --seconds 600

Needs ffmpeg, and a Python with protobuf and grpcio-tools (the venv of
scripts/python-venv.sh). Everything it starts, it stops.
"""

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def varint(n):
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def robot(pb, port, width, height, stop, sent):
    """A busy frame 60 times a second: 12 robots with paths, labels and a
    plan tree, in pixel coordinates (the calibration is the identity)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)

    def record(**kind):
        data = pb.Record(**kind).SerializeToString()
        return varint(len(data)) + data

    prefix = b"UNDERLAY" + bytes([1, 0])
    header = record(header=pb.Header(format_version=1, name="live bench", world_unit="px"))
    names = [f"robots/{i}" for i in range(12)] + ["plan"]
    entities = b"".join(record(entity=pb.Entity(id=i, name=n)) for i, n in enumerate(names))
    k = 0
    while not stop.is_set():
        t = time.time()
        frame = pb.Frame(instant=t)
        for i in range(12):
            cx = width * (0.1 + 0.8 * ((i * 0.37 + k * 0.002) % 1.0))
            cy = height * (0.15 + 0.7 * ((i * 0.61 + k * 0.001) % 1.0))
            r = frame.primitives.add(entity=i, color=0x2080FFFF, fill=0x2080FF60)
            r.circle.center.x, r.circle.center.y, r.circle.radius = cx, cy, height * 0.02
            path = frame.primitives.add(entity=i, level=1, color=0xFFFF00FF, thickness=3)
            path.polygon.open = True
            for j in range(6):
                p = path.polygon.vertices.add()
                p.x, p.y = cx + j * width * 0.02, cy + ((j * 37) % 11 - 5) * height * 0.004
            label = frame.primitives.add(entity=i, level=2, color=0xFFFFFFFF)
            label.text.anchor.x, label.text.anchor.y = cx + 12, cy - 12
            label.text.text, label.text.size = f"robot {i} · {k}", 14
            for j in range(6):
                line = frame.primitives.add(entity=12, level=3, color=0x40FF40C0)
                line.line.start.x, line.line.start.y = cx, cy
                line.line.end.x = cx + (j - 2.5) * width * 0.015
                line.line.end.y = cy + height * 0.05
        sock.sendto(prefix + header + entities + record(frame=frame), ("127.0.0.1", port))
        sent[0] += 1
        k += 1
        time.sleep(max(0.0, 1 / 60 - (time.time() - t)))


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def ssl_replay(path, vision, referee, stop, sent):
    """Sends an SSL game log's vision and referee packets to loopback ports
    at their recorded pace (as ssl-log-player does), from the start again
    at its end."""
    import gzip
    import struct
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    if data[:12] != b"SSL_LOG_FILE":
        raise SystemExit(f"{path}: not an SSL game log")
    records, at = [], 16
    while at + 16 <= len(data):
        ts, kind, size = struct.unpack(">qii", data[at:at + 16])
        payload = data[at + 16:at + 16 + size]
        at += 16 + size
        if kind in (3, 4) and len(payload) == size:
            records.append((ts / 1e9, vision if kind == 4 else referee, payload))
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    while not stop.is_set():
        t0, wall0 = records[0][0], time.time()
        for ts, port, payload in records:
            if stop.is_set():
                return
            due = wall0 + (ts - t0) - time.time()
            if due > 0:
                time.sleep(due)
            sock.sendto(payload, ("127.0.0.1", port))
            sent[0] += 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", default="1920x1080")
    ap.add_argument("--fps", type=int, default=30)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--no-robot", action="store_true", help="send no drawings (the picture's path alone)")
    ap.add_argument("--ssl", metavar="LOG", help="instead of the robot: replay this SSL game log's vision and referee "
                    "packets live (ssl-vision:// and ssl-referee:// sources), the field drawn over the whole picture")
    ap.add_argument("--underlay", default=os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "release", "underlay"))
    args = ap.parse_args()
    width, height = map(int, args.size.split("x"))
    work = tempfile.mkdtemp(prefix="live-bench-")
    proto = os.path.join(ROOT, "crates", "underlay-log", "proto")
    subprocess.run([sys.executable, "-m", "grpc_tools.protoc", "-I", proto,
                    f"--python_out={work}", os.path.join(proto, "underlay.proto")], check=True)
    sys.path.insert(0, work)
    import underlay_pb2 as pb  # noqa: E402

    clip = os.path.join(work, "camera.ts")
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", f"testsrc2=size={width}x{height}:rate={args.fps}",
                    "-t", "20", "-c:v", "libx264", "-preset", "veryfast", "-tune", "zerolatency", "-g", str(args.fps),
                    "-pix_fmt", "yuv420p", "-f", "mpegts", clip], check=True)
    calib = os.path.join(work, "calib.toml")
    with open(calib, "w") as f:
        if args.ssl:
            # The SSL field (mm, 13.4 × 10.4 m with its margins) over the whole picture.
            k = min(width / 13400, height / 10400)
            f.write(f"homography = [\n [{k}, 0.0, {width / 2}],\n [0.0, {-k}, {height / 2}],\n [0.0, 0.0, 1.0],\n]\n"
                    f"image_size = [{width}, {height}]\nworld_unit = \"mm\"\n")
        else:
            f.write(f"homography = [\n [1.0, 0.0, 0.0],\n [0.0, 1.0, 0.0],\n [0.0, 0.0, 1.0],\n]\nimage_size = [{width}, {height}]\n")
    cam, logs, out = free_port(), free_port(), free_port()
    referee = free_port()
    sources = (["--log", f"ssl-vision://127.0.0.1:{logs}", "--log", f"ssl-referee://127.0.0.1:{referee}"] if args.ssl
               else ["--log", f"udp://127.0.0.1:{logs}"])
    procs = []
    stop = threading.Event()
    sent = [0]
    try:
        procs.append(subprocess.Popen(["ffmpeg", "-v", "fatal", "-i", f"udp://127.0.0.1:{out}?timeout=5000000",
                                       "-c", "copy", "-f", "null", "-"], stdin=subprocess.DEVNULL))
        live = subprocess.Popen([args.underlay, "live", f"udp://127.0.0.1:{cam}", *sources,
                                 "--calib", calib, "--duration", str(args.seconds), "--delay", "0.1", "--wait", "30",
                                 "--out", f"udp://127.0.0.1:{out}?pkt_size=1316", "--no-view"],
                                stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        procs.append(live)
        procs.append(subprocess.Popen(["ffmpeg", "-v", "fatal", "-re", "-stream_loop", "-1", "-i", clip, "-c", "copy",
                                       "-f", "mpegts", f"udp://127.0.0.1:{cam}?pkt_size=1316"], stdin=subprocess.DEVNULL))
        if args.ssl:
            sender = threading.Thread(target=ssl_replay, args=(args.ssl, logs, referee, stop, sent), daemon=True)
        else:
            sender = threading.Thread(target=robot, args=(pb, logs, width, height, stop, sent), daemon=True)
        if not args.no_robot:
            sender.start()
        samples = []
        start = time.time()
        while live.poll() is None:
            r = rss_kib(live.pid)
            if r is not None:
                samples.append((time.time() - start, r))
            time.sleep(5)
        err = live.stderr.read()
    finally:
        stop.set()
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait()
    print(err.strip())
    print(f"{'SSL packets' if args.ssl else 'robot frames'} sent: {sent[0]}")
    if samples:
        mib = [r / 1024 for _, r in samples]
        settled = [r / 1024 for t, r in samples if t >= 30] or mib
        print(f"resident memory: first {mib[0]:.0f} MiB, after 30 s {settled[0]:.0f} MiB, "
              f"last {mib[-1]:.0f} MiB, largest {max(mib):.0f} MiB ({len(mib)} samples)")
        print("samples (s: MiB): " + ", ".join(f"{t:.0f}: {r / 1024:.0f}" for t, r in samples))
    return 0 if live.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
