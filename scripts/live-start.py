#!/usr/bin/env python3
"""Where a live output starts and how long it lasts, for docs/PERFORMANCE.md
(issue 50).

`underlay live` is started first, listening; after `--delay` seconds an
`ffmpeg -re` camera sends a 320x240, 25 fps picture that carries its frame
number (16 black-or-white blocks across the top, the test's own pattern of
tests/it/live_start.rs), as H.264 with a keyframe every `--gop` frames and
none between, over UDP (MPEG-TS), SRT (underlay the listener) or RTMP
(underlay the server, `?listen`). underlay writes `--duration` seconds to
an MP4; the script reads back the frame number of its first picture and
the file's duration, and prints one line per run:

    proto gop delay first-frame duration exit

Run it with the binary to measure, e.g. before and after a change:

    python3 scripts/live-start.py --underlay $CARGO_TARGET_DIR/debug/underlay \\
        --proto udp srt --gop 250 25 --delay 1 2.5 5 --duration 10

Needs ffmpeg and ffprobe. Everything it starts, it stops.
"""

import argparse
import os
import signal
import socket
import subprocess
import tempfile
import time

NUMBERED = (
    "nullsrc=s=320x240:r=25,format=gray,"
    "geq=lum='if(lt(Y\\,40)\\,if(mod(floor(N/pow(2\\,floor(X/20)))\\,2)\\,235\\,16)"
    "\\,mod(X+2*Y+3*N\\,200)+28)'"
)


def free_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def urls(proto, port):
    """(what underlay opens, where the camera sends, the camera's muxer)"""
    if proto == "udp":
        return f"udp://127.0.0.1:{port}", f"udp://127.0.0.1:{port}?pkt_size=1316", "mpegts"
    if proto == "srt":
        return (
            f"srt://127.0.0.1:{port}?mode=listener&latency=50000",
            f"srt://127.0.0.1:{port}?mode=caller&latency=50000",
            "mpegts",
        )
    return f"rtmp://127.0.0.1:{port}/live/cam?listen", f"rtmp://127.0.0.1:{port}/live/cam", "flv"


def number(gray):
    n = 0
    for k in range(16):
        block = [gray[y * 320 + x] for y in range(15, 25) for x in range(20 * k + 5, 20 * k + 15)]
        if sum(block) / len(block) > 128:
            n |= 1 << k
    return n


def first_frame(video):
    raw = subprocess.run(
        ["ffmpeg", "-v", "error", "-i", video, "-fps_mode", "passthrough", "-frames:v", "1",
         "-f", "rawvideo", "-pix_fmt", "gray", "-"],
        capture_output=True,
    ).stdout
    return number(raw) if len(raw) >= 320 * 240 else None


def duration(video):
    out = subprocess.run(
        ["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", video],
        capture_output=True, text=True,
    ).stdout.strip()
    try:
        return float(out)
    except ValueError:
        return None


def run(underlay, proto, gop, delay, secs, wait):
    port = free_port()
    listen, send, muxer = urls(proto, port)
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "out.mp4")
        live = subprocess.Popen(
            [underlay, "live", listen, "--no-calibration", "--no-view", "--duration", str(secs),
             "--wait", str(wait), "--out", out],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        time.sleep(delay)
        camera = subprocess.Popen(
            ["ffmpeg", "-v", "fatal", "-re", "-f", "lavfi", "-i", NUMBERED, "-t", str(secs + 15),
             "-pix_fmt", "yuv420p", "-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency",
             "-sc_threshold", "0", "-g", str(gop), "-f", muxer, send],
            stdin=subprocess.DEVNULL,
        )
        try:
            _, err = live.communicate(timeout=secs + wait + 60)
        except subprocess.TimeoutExpired:
            live.send_signal(signal.SIGKILL)
            _, err = live.communicate()
        camera.kill()
        camera.wait()
        first = first_frame(out) if os.path.exists(out) else None
        dur = duration(out) if os.path.exists(out) else None
        last = err.decode(errors="replace").strip().splitlines()[-1:] if live.returncode else []
        return first, dur, live.returncode, last


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--underlay", required=True)
    ap.add_argument("--proto", nargs="+", default=["udp", "srt", "rtmp"])
    ap.add_argument("--gop", nargs="+", type=int, default=[250])
    ap.add_argument("--delay", nargs="+", type=float, default=[1.0])
    ap.add_argument("--duration", type=float, default=10.0)
    ap.add_argument("--wait", type=float, default=30.0)
    a = ap.parse_args()
    print("proto gop delay first-frame duration exit")
    for proto in a.proto:
        for gop in a.gop:
            for delay in a.delay:
                first, dur, code, last = run(a.underlay, proto, gop, delay, a.duration, a.wait)
                d = f"{dur:.3f}" if dur is not None else "-"
                f = first if first is not None else "-"
                print(f"{proto} {gop} {delay} {f} {d} {code} {' '.join(last)}", flush=True)


if __name__ == "__main__":
    main()
