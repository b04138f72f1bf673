#!/usr/bin/env python3
"""Helpers for benches/export.sh.

  thesis_pipeline.py gen VIDEO OUTDIR      write a log (text notation, about
                                           100 primitives per video frame),
                                           a calibration and sessions for VIDEO
  thesis_pipeline.py sparse VIDEO OUTDIR   write a sparse log (text notation,
                                           thesis-era style: 22 team circles
                                           and a ball per video frame, the
                                           field outline once as a persistent
                                           frame: 28 primitives shown) and the
                                           same calibration; needs ffprobe only
  thesis_pipeline.py run VIDEO OUT.mp4     annotate VIDEO the way the thesis's
                                           tools did: OpenCV decode, the
                                           reference mask (one morphology
                                           iteration at a time), OpenCV
                                           drawing, OpenCV encode

The scene is the same in both: a top-down pitch, 22 robots with velocity
lines, a ball, a planned path, targets and passes, moving with time.
"""
import math
import os
import sys

FIELD_X, FIELD_Y = 6000.0, 4500.0  # half-sizes of the world area (an SSL field), mm
COLORS = {  # text-notation name -> BGR
    "blue": (255, 0, 0), "yellow": (0, 255, 255), "white": (255, 255, 255),
    "orange": (0, 165, 255), "red": (0, 0, 255), "cyan": (255, 255, 0),
}


def homography(w, h):
    """World mm -> pixels: the world area fills 80 % of the picture width."""
    s = 0.8 * w / (2 * FIELD_X)
    return [[s, 0.0, w / 2], [0.0, -s, h / 2], [0.0, 0.0, 1.0]]


def primitives(t):
    """The ~100 primitives shown at log time t (seconds)."""
    out = []
    robots = []
    for i in range(22):
        a = 0.3 * t + i * 2 * math.pi / 22
        rr = 0.9 * FIELD_Y * (0.2 + 0.8 * ((i * 7) % 11) / 11)
        x, y = rr * math.cos(a) * 1.3, rr * math.sin(a)
        robots.append((x, y))
        team = "blue" if i < 11 else "yellow"
        out.append(("circle", (x, y), 90.0, team, f"robots/{team}/{i % 11}", 0))
        vx, vy = -math.sin(a) * 400, math.cos(a) * 400
        out.append(("line", (x, y), (x + vx, y + vy), "white", f"robots/{team}/{i % 11}/velocity", 1))
    bx, by = 0.7 * FIELD_X * math.cos(0.7 * t), 0.7 * FIELD_Y * math.sin(1.1 * t)
    out.append(("circle", (bx, by), 43.0, "orange", "ball", 0))
    prev = robots[0]
    for k in range(1, 25):
        u = k / 24
        p = (prev[0] + (bx - robots[0][0]) / 24 + 200 * math.sin(3 * u + t),
             prev[1] + (by - robots[0][1]) / 24)
        out.append(("line", prev, p, "cyan", "plan/path", 1))
        prev = p
    for k in range(10):
        a = t + k * 0.628
        target = (0.8 * FIELD_X * math.cos(a), 0.8 * FIELD_Y * math.sin(2 * a))
        out.append(("circle", target, 150.0, "red", "plan/targets", 2))
    for k in range(21):
        out.append(("line", robots[k], robots[(k + 3) % 22], "white", "plan/passes", 2))
    return out


def sparse_primitives(t):
    """The thesis-era-style shapes at log time t: team circles and a ball."""
    out = []
    for i in range(22):
        a = 0.3 * t + i * 2 * math.pi / 22
        rr = 0.9 * FIELD_Y * (0.2 + 0.8 * ((i * 7) % 11) / 11)
        team = "blue" if i < 11 else "yellow"
        out.append(("circle", (rr * math.cos(a) * 1.3, rr * math.sin(a)), 90.0, team,
                    f"robots/{team}/{i % 11}", 0))
    bx, by = 0.7 * FIELD_X * math.cos(0.7 * t), 0.7 * FIELD_Y * math.sin(1.1 * t)
    out.append(("circle", (bx, by), 43.0, "orange", "ball", 0))
    return out


# The field outline (a persistent frame): boundary, halfway line, centre
# circle and both defense areas of a 12 x 9 m SSL field.
SPARSE_FIELD = [
    "{ { rectangle; (0, 0); (12000, 9000) }; white; {field; 0} }",
    "{ { line; (0, -4500); (0, 4500) }; white; {field; 0} }",
    "{ { circle; (0, 0); 500 }; white; {field; 0} }",
    "{ { rectangle; (-5400, 0); (1200, 2400) }; white; {field; 0} }",
    "{ { rectangle; (5400, 0); (1200, 2400) }; white; {field; 0} }",
]


def fmt(v):
    return f"{v:.1f}"


def write_frames(f, n, fps, shapes):
    """Frames 0..n of the log, one per video frame, in text notation."""
    for k in range(n + 1):
        t = k / fps
        f.write(f"{{ {t:.6f}; {{\n")
        for p in shapes(t):
            if p[0] == "circle":
                g = f"{{ circle; ({fmt(p[1][0])}, {fmt(p[1][1])}); {fmt(p[2])} }}"
            else:
                g = f"{{ line; ({fmt(p[1][0])}, {fmt(p[1][1])}); ({fmt(p[2][0])}, {fmt(p[2][1])}) }}"
            rest = p[3:]
            f.write(f"  {{ {g}; {rest[0]}; {{{rest[1]}; {rest[2]}}} }}\n")
        f.write("} }\n")


def write_calib(outdir, w, h):
    H = homography(w, h)
    rows = ", ".join("[" + ", ".join(repr(v) for v in r) + "]" for r in H)
    with open(os.path.join(outdir, "calib.toml"), "w") as f:
        f.write(f"homography = [{rows}]\n")


def sparse(video, outdir):
    import subprocess
    probe = subprocess.run(
        ["ffprobe", "-v", "error", "-select_streams", "v", "-count_packets",
         "-show_entries", "stream=width,height,r_frame_rate,nb_read_packets", "-of", "default=nw=1", video],
        check=True, capture_output=True, text=True).stdout
    info = dict(line.split("=", 1) for line in probe.split())
    w, h, n = int(info["width"]), int(info["height"]), int(info["nb_read_packets"])
    num, den = info["r_frame_rate"].split("/")
    fps = float(num) / float(den)
    with open(os.path.join(outdir, "sparse.txt"), "w") as f:
        f.write("{\n{ {-inf; inf}; {\n")
        for line in SPARSE_FIELD:
            f.write(f"  {line}\n")
        f.write("} }\n")
        write_frames(f, n, fps, sparse_primitives)
        f.write("}\n")
    write_calib(outdir, w, h)
    print(f"{w} {h} {fps} {n}")


def gen(video, outdir):
    import cv2
    cap = cv2.VideoCapture(video)
    w, h = int(cap.get(cv2.CAP_PROP_FRAME_WIDTH)), int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT))
    fps = cap.get(cv2.CAP_PROP_FPS)
    n = int(cap.get(cv2.CAP_PROP_FRAME_COUNT))
    cap.release()
    with open(os.path.join(outdir, "scene.txt"), "w") as f:
        f.write("{\n")
        write_frames(f, n, fps, primitives)
        f.write("}\n")
    write_calib(outdir, w, h)
    print(f"{w} {h} {fps} {n}")


def run(video, out_path, ref_dir):
    import cv2
    import numpy as np
    sys.path.insert(0, ref_dir)
    from thesis_mask import compute_mask

    cap = cv2.VideoCapture(video)
    w, h = int(cap.get(cv2.CAP_PROP_FRAME_WIDTH)), int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT))
    fps = cap.get(cv2.CAP_PROP_FPS)
    out = cv2.VideoWriter(out_path, cv2.VideoWriter_fourcc(*"mp4v"), fps, (w, h))
    H = np.array(homography(w, h))
    k = 0
    while True:
        ok, frame = cap.read()
        if not ok:
            break
        floor = compute_mask(frame)
        overlay = frame.copy()
        for p in primitives(k / fps):
            if p[0] == "circle":
                (cx, cy), r = p[1], p[2]
                ring = np.array([[[cx + r * math.cos(a), cy + r * math.sin(a)]]
                                 for a in np.linspace(0, 2 * math.pi, 32, endpoint=False)])
                pts = cv2.perspectiveTransform(ring, H).astype(np.int32)
                cv2.polylines(overlay, [pts], True, COLORS[p[3]], 2, cv2.LINE_AA)
            else:
                seg = cv2.perspectiveTransform(np.array([[p[1]], [p[2]]], dtype=float), H)
                a, b = seg[0, 0], seg[1, 0]
                cv2.line(overlay, (int(a[0]), int(a[1])), (int(b[0]), int(b[1])), COLORS[p[3]], 2, cv2.LINE_AA)
        frame[floor] = overlay[floor]
        out.write(frame)
        k += 1
    out.release()
    print(k)


if __name__ == "__main__":
    if sys.argv[1] == "gen":
        gen(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "sparse":
        sparse(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3], os.environ.get("REFERENCE_DIR", "/work/shared/reference"))
    else:
        sys.exit(__doc__)
