#!/usr/bin/env python3
"""Issue 48's check of exported pictures: two builds' `export --crf 0`
(lossless x264) of one session, against each other and against the input.

Where the new build drew nothing (its picture equals the input's, luma
and chroma, more than 2 px from anything it changed) the old build's
picture should be the same; on the drawn areas (what the new build
changed, grown by 2 px) the PSNR between the two builds' pictures is
printed, luma and chroma apart.

usage: benches/crf0_check.py OLD_BIN NEW_BIN SESSION.toml [FRAMES]
Needs ffmpeg and numpy (the project's venv: scripts/python-venv.sh).
"""

import os
import subprocess
import sys
import tempfile

import numpy as np


def run(*cmd):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def frames(path, w, h, limit):
    """The first `limit` pictures of a video as (Y, U, V) arrays."""
    raw = subprocess.run(
        ["ffmpeg", "-loglevel", "error", "-i", path, "-frames:v", str(limit),
         "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"],
        check=True, stdout=subprocess.PIPE).stdout
    size = w * h * 3 // 2
    out = []
    for k in range(len(raw) // size):
        f = np.frombuffer(raw, np.uint8, size, k * size)
        y = f[: w * h].reshape(h, w)
        u = f[w * h: w * h + w * h // 4].reshape(h // 2, w // 2)
        v = f[w * h + w * h // 4:].reshape(h // 2, w // 2)
        out.append((y, u, v))
    return out


def grow(m, r):
    """`m` grown by `r` pixels (a square)."""
    g = m.copy()
    for dy in range(-r, r + 1):
        for dx in range(-r, r + 1):
            g |= np.roll(np.roll(m, dy, 0), dx, 1)
    return g


def psnr(a, b):
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return float("inf") if mse == 0 else 10 * np.log10(255.0**2 / mse)


def main():
    old_bin, new_bin, session = sys.argv[1:4]
    limit = int(sys.argv[4]) if len(sys.argv) > 4 else 100
    with tempfile.TemporaryDirectory() as work:
        outs = {}
        for tag, b in (("old", old_bin), ("new", new_bin)):
            outs[tag] = os.path.join(work, tag + ".mkv")
            run(b, "export", session, "-o", outs[tag], "--crf", "0", "--to", str(limit / 25.0 + 1))
        probe = subprocess.run(
            ["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
             "stream=width,height", "-of", "csv=p=0", outs["new"]],
            check=True, stdout=subprocess.PIPE, text=True).stdout.strip()
        w, h = (int(x) for x in probe.split(","))
        video = None
        for line in open(session):
            if line.strip().startswith("video"):
                video = line.split("=", 1)[1].strip().strip('"')
        video = os.path.join(os.path.dirname(os.path.abspath(session)), video)
        src, old, new = (frames(p, w, h, limit) for p in (video, outs["old"], outs["new"]))
        n = min(len(src), len(old), len(new))
        same_outside = total_outside = 0
        old_moved = 0
        drawn_px = 0
        sq = {"y": [0.0, 0], "uv": [0.0, 0]}
        for k in range(n):
            (sy, su, sv), (oy, ou, ov), (ny, nu, nv) = src[k], old[k], new[k]
            changed = ny != sy
            block = (nu != su) | (nv != sv)
            changed |= np.kron(block, np.ones((2, 2), bool))[:h, :w]
            drawn = grow(changed, 2)
            outside = ~drawn
            total_outside += int(outside.sum())
            same_outside += int(((ny == oy) & outside).sum())
            old_moved += int(((oy != sy) & outside).sum())
            drawn_px += int(drawn.sum())
            d = (ny.astype(np.float64) - oy) ** 2
            sq["y"][0] += float(d[drawn].sum())
            sq["y"][1] += int(drawn.sum())
            bdrawn = drawn[::2, ::2] | drawn[1::2, 1::2] | drawn[::2, 1::2] | drawn[1::2, ::2]
            for a, b in ((nu, ou), (nv, ov)):
                d = (a.astype(np.float64) - b) ** 2
                sq["uv"][0] += float(d[bdrawn].sum())
                sq["uv"][1] += int(bdrawn.sum())

        def p(s):
            mse = s[0] / max(s[1], 1)
            return float("inf") if mse == 0 else 10 * np.log10(255.0**2 / mse)

        print(f"frames compared: {n} ({w}x{h})")
        print(f"drawn area (new build's changes grown by 2 px): {100 * drawn_px / (n * w * h):.2f} % of the pixels")
        print(f"elsewhere: new == old on {100 * same_outside / max(total_outside, 1):.4f} % of the luma samples; "
              f"old != input on {100 * old_moved / max(total_outside, 1):.4f} %")
        print(f"drawn area: PSNR new vs old, luma {p(sq['y']):.2f} dB, chroma {p(sq['uv']):.2f} dB")


if __name__ == "__main__":
    main()
