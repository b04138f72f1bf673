#!/usr/bin/env bash
# Makes the viewer's 3K benchmark input (docs/PERFORMANCE.md, "The viewer
# on the planes"): a fixed stadium-like camera at 3072×1728, 25 fps, HEVC
# with a 10 s group of pictures, calibrated, with a log drawn on its pitch.
#
# The picture is a real frame: the elevated training-pitch camera of the
# shared material's testdata/fields (1920×1080), seen through a barrel lens
# and enlarged to 3072×1728 by the evaluation's own warp (eval::STRONG_LENS,
# `cargo bench --bench real_cameras -- --out`), which also fits the truth
# to the frame's hand-clicked line labels moved through the same lens: the
# calibration fits the picture (the labels 4.7 px RMS from their lines,
# the paint 3.2 px from the truth's, as the bench prints them). On it,
# 22 players and a ball move over the pitch (overlays whose places follow
# time), and temporal noise stands for a camera sensor's, so every frame
# codes differently from the last, as a real camera's does.
#
# The camera stays where it is: one calibration fits every frame, as the
# calibrated floor mask and the drawings need (the issue's stadium camera
# is a fixed one too). The log (text notation) holds the pitch's lines
# (a persistent frame: they land on the paint when the calibration is
# right) and, per frame, 22 player circles with velocity lines and a ball.
#
# usage: benches/stadium-video.sh OUTDIR [SECONDS] [GOP_SECONDS] [RATE]
#   OUTDIR       gets video.mp4, log.txt, truth.toml, session.toml and
#                frame.png (the still picture); never commit them
#   SECONDS      length (default 60)
#   GOP_SECONDS  keyframe interval (default 10)
#   RATE         video bit rate (default 12M, what 4K network cameras
#                record HEVC at; the decoder's work grows with it)
# Needs ffmpeg with libx265, python3, and the shared material's
# testdata/fields beside the project (or UNDERLAY_FIELDS=DIR naming it, as
# from a worktree elsewhere). Encoding 60 s takes a few minutes on two cores.
# Then, for instance:
#   xvfb-run -s "-screen 0 1600x1000x24" underlay view OUTDIR/session.toml \
#     --size 1440x900 --bench-play 5
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: benches/stadium-video.sh OUTDIR [SECONDS] [GOP_SECONDS]}
SECS=${2:-60}
GOP=${3:-10}
RATE=${4:-12M}
FPS=25
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

if [ ! -f "$OUT/frame.png" ] || [ ! -f "$OUT/truth.toml" ]; then
  # The real frame through the lens, and its truth.
  rm -rf "$OUT/eval"
  cargo bench --bench real_cameras -- --out "$OUT/eval" --only "k = 0.3" --draws 0 >/dev/null
  shopt -s nullglob
  pics=("$OUT"/eval/*"k = 0_3 lens at 3072"*"1728.png")
  truths=("$OUT"/eval/*"k = 0_3 lens at 3072"*"_truth.toml")
  if [ ${#pics[@]} -ne 1 ] || [ ${#truths[@]} -ne 1 ]; then
    echo "stadium-video: the real_cameras bench wrote no lens frame (is testdata/fields there? set UNDERLAY_FIELDS)" >&2
    exit 1
  fi
  cp "${pics[0]}" "$OUT/frame.png"
  cp "${truths[0]}" "$OUT/truth.toml"
  rm -rf "$OUT/eval"
fi

# The players' overlays (a filter graph) and the log.
python3 - "$OUT" "$SECS" "$FPS" <<'EOF'
import math, os, sys
sys.path.insert(0, "benches")
from thesis_pipeline import write_frames

out, secs, fps = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
W, H = 3072, 1728

# Players in the picture: two teams and a referee, each on a loop of its
# own over the pitch's part of the picture (a body, a head, a shadow).
players = []
for i in range(23):
    team = "0xd03a2a" if i < 11 else ("0x2a4ad0" if i < 22 else "0xe8d020")
    bx = W * (0.14 + 0.72 * ((i * 37) % 23) / 22)
    by = H * (0.36 + 0.52 * ((i * 11) % 23) / 22)
    ax, ay = 60 + 9 * (i % 7), 40 + 7 * (i % 5)
    px, py = 7 + (i % 6), 5 + (i % 4)
    players.append((team, bx, by, ax, ay, px, py, i * 0.7))
g = []
inputs = []
for i, (c, bx, by, ax, ay, px, py, ph) in enumerate(players):
    inputs.append(f"color=c={c}:s=30x72:r={fps}:d={secs},format=rgba,"
                  "geq=r='r(X,Y)':g='g(X,Y)':b='b(X,Y)':"
                  "a='255*lte(pow((X-15)/15,2)+pow((Y-44)/28,2),1)+255*lte(pow((X-15)/8,2)+pow((Y-9)/9,2),1)'"
                  f"[p{i}]")
    inputs.append(f"color=c=black@0.45:s=44x14:r={fps}:d={secs},format=rgba,"
                  "geq=r=0:g=0:b=0:a='115*lte(pow((X-22)/22,2)+pow((Y-7)/7,2),1)'"
                  f"[s{i}]")
chain = "[0:v]format=yuv420p[b0]"
g = inputs + [chain]
n = 0
for i, (c, bx, by, ax, ay, px, py, ph) in enumerate(players):
    x = f"{bx:.0f}+{ax}*sin(2*PI*t/{px}+{ph:.2f})"
    y = f"{by:.0f}+{ay}*cos(2*PI*t/{py}+{ph:.2f})"
    g.append(f"[b{n}][s{i}]overlay=x='{x}-7':y='{y}+64':format=yuv420[b{n+1}]")
    n += 1
    g.append(f"[b{n}][p{i}]overlay=x='{x}':y='{y}':format=yuv420[b{n+1}]")
    n += 1
# The ball, and a camera sensor's noise.
g.append(f"color=c=white:s=14x14:r={fps}:d={secs},format=rgba,"
         "geq=r=255:g=255:b=255:a='255*lte(pow((X-7)/7,2)+pow((Y-7)/7,2),1)'[ball]")
g.append(f"[b{n}][ball]overlay=x='{W/2:.0f}+900*sin(2*PI*t/9)':y='{H*0.62:.0f}+300*sin(2*PI*t/5)':"
         f"format=yuv420,noise=alls=3:allf=t+u,format=yuv420p[v]")
with open(os.path.join(out, "players.filter"), "w") as f:
    f.write(";\n".join(g))

# The log, in the pitch's world (mm, origin at the centre mark).
def shapes(t):
    s = []
    for i in range(22):
        a = 0.21 * t + i * 2 * math.pi / 22
        r = 0.55 + 0.4 * ((i * 7) % 11) / 11
        x, y = 42000 * r * math.cos(a) + 6000, 27000 * r * math.sin(1.3 * a)
        team = "red" if i < 11 else "blue"
        s.append(("circle", (x, y), 1200.0, team, f"players/{team}/{i % 11}", 0))
        vx, vy = -42000 * r * 0.21 * math.sin(a), 27000 * r * 0.27 * math.cos(1.3 * a)
        s.append(("line", (x, y), (x + vx, y + vy), "white", f"players/{team}/{i % 11}/velocity", 1))
    s.append(("circle", (30000 * math.sin(0.4 * t), 20000 * math.sin(0.7 * t)), 600.0, "orange", "ball", 0))
    return s

lines = [
    "{ { rectangle; (0, 0); (105000, 68000) }; white; {pitch; 0} }",
    "{ { line; (0, -34000); (0, 34000) }; white; {pitch; 0} }",
    "{ { circle; (0, 0); 9150 }; white; {pitch; 0} }",
    "{ { rectangle; (-44250, 0); (16500, 40320) }; white; {pitch; 0} }",
    "{ { rectangle; (44250, 0); (16500, 40320) }; white; {pitch; 0} }",
]
with open(os.path.join(out, "log.txt"), "w") as f:
    f.write("{\n{ {-inf; inf}; {\n")
    for l in lines:
        f.write(f"  {l}\n")
    f.write("} }\n")
    write_frames(f, int(secs * fps), fps, shapes)
    f.write("}\n")
with open(os.path.join(out, "session.toml"), "w") as f:
    f.write('video = "video.mp4"\nlog = "log.txt"\noffset = 0.0\ncalibration = { file = "truth.toml" }\n')
EOF

# The video: x265's defaults but a fixed group of pictures (a keyframe
# every GOP seconds, none at scene cuts: there are none) and a camera's
# steady bit rate; open GOPs and B-frames as x265 makes them.
ffmpeg -hide_banner -loglevel error -y -loop 1 -framerate "$FPS" -t "$SECS" -i "$OUT/frame.png" \
  -filter_complex_script "$OUT/players.filter" -map "[v]" -t "$SECS" \
  -c:v libx265 -preset veryfast -b:v "$RATE" \
  -x265-params "keyint=$((GOP * FPS)):min-keyint=$((GOP * FPS)):scenecut=0:log-level=error" \
  -colorspace bt709 -color_primaries bt709 -color_trc bt709 -color_range tv \
  -tag:v hvc1 -movflags +faststart "$OUT/video.tmp.mp4"
mv "$OUT/video.tmp.mp4" "$OUT/video.mp4"
rm -f "$OUT/players.filter"
ffprobe -v error -select_streams v:0 -show_entries stream=codec_name,width,height,r_frame_rate,bit_rate,nb_frames \
  -of default=nw=1 "$OUT/video.mp4"
echo "keyframes: $(ffprobe -v error -select_streams v:0 -skip_frame nokey -show_entries frame=pts_time \
  -of csv=p=0 "$OUT/video.mp4" | tr '\n' ' ')"
echo "wrote $OUT/session.toml"
