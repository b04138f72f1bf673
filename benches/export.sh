#!/usr/bin/env bash
# Whole-process export benchmark (docs/PERFORMANCE.md, "Export").
#
# For 1280×720 and 1920×1080 H.264 inputs with an AAC track it times, in
# the same run and alternating:
#   ffmpeg   ffmpeg -i IN -c:v libx264 -preset veryfast -crf 20 -c:a copy OUT
#   underlay underlay export SESSION -o OUT (mask on, ~100 primitives/frame,
#            veryfast, CRF 20), with its peak memory (/usr/bin/time -v)
#   python   a thesis-style pipeline: OpenCV decode, the reference mask,
#            OpenCV drawing, OpenCV encode (benches/thesis_pipeline.py)
# and prints frames per second (median and best of RUNS) and the ratios.
#
# usage: benches/export.sh [SECONDS] [RUNS] [MASK]
#   SECONDS  length of the test inputs (default 10)
#   RUNS     runs of each command (default 3)
#   MASK     session mask method (default adaptive)
# Input pictures come from testdata/pitch-drone-topdown.mp4 (a real pitch
# seen from above) when /work/shared is there, else from ffmpeg's testsrc2.
# Needs ffmpeg; the Python pipeline needs python3 with opencv and numpy
# (pip install opencv-python-headless numpy) and the reference mask.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-10}
RUNS=${2:-3}
MASK=${3:-adaptive}
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/underlay/target}"
cargo build --release --quiet
BIN="$CARGO_TARGET_DIR/release/underlay"
SRC="${SRC:-/work/shared/testdata/pitch-drone-topdown.mp4}"
REFERENCE_DIR="${REFERENCE_DIR:-/work/shared/reference}"
export REFERENCE_DIR
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

have_python=0
if python3 -c 'import cv2, numpy' 2>/dev/null && [ -f "$REFERENCE_DIR/thesis_mask.py" ]; then
  have_python=1
else
  echo "note: python3 with cv2+numpy or $REFERENCE_DIR/thesis_mask.py missing: no Python pipeline" >&2
fi

# Seconds of wall time of a command (its output discarded).
wall() {
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >/dev/null 2>"$WORK/stderr" || { cat "$WORK/stderr" >&2; return 1; }
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc -l
}

# "median best" of the numbers on stdin.
stats() {
  sort -g | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.2f %.2f\n", m, a[1]}'
}

echo "# export benchmark: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), ${SECS} s inputs, ${RUNS} runs"
for size in 1280x720 1920x1080; do
  w=${size%x*}
  h=${size#*x}
  in="$WORK/in-$size.mp4"
  if [ -f "$SRC" ]; then
    picture=(-stream_loop -1 -i "$SRC")
  else
    picture=(-f lavfi -i "testsrc2=s=${size}:r=60")
  fi
  ffmpeg -hide_banner -loglevel error -y "${picture[@]}" -f lavfi -i "sine=frequency=440:sample_rate=48000" \
    -t "$SECS" -map 0:v -map 1:a -vf "scale=$w:$h" -c:v libx264 -preset veryfast -crf 18 -pix_fmt yuv420p \
    -c:a aac -b:a 128k "$in"
  read -r _ _ fps frames < <(python3 benches/thesis_pipeline.py gen "$in" "$WORK")
  cat >"$WORK/session.toml" <<EOF
video = "in-$size.mp4"
log = "scene.txt"
offset = 0.0
calibration = { file = "calib.toml" }

[mask]
method = "$MASK"
EOF
  : >"$WORK/ffmpeg.t"
  : >"$WORK/underlay.t"
  : >"$WORK/python.t"
  for _ in $(seq "$RUNS"); do
    wall ffmpeg -hide_banner -loglevel error -y -i "$in" -c:v libx264 -preset veryfast -crf 20 -c:a copy \
      "$WORK/ff.mp4" >>"$WORK/ffmpeg.t"
    wall "$BIN" export "$WORK/session.toml" -o "$WORK/ul.mp4" --crf 20 --preset veryfast >>"$WORK/underlay.t"
    if [ "$have_python" = 1 ]; then
      wall python3 benches/thesis_pipeline.py run "$in" "$WORK/py.mp4" >>"$WORK/python.t"
    fi
  done
  /usr/bin/time -v "$BIN" export "$WORK/session.toml" -o "$WORK/ul.mp4" --crf 20 --preset veryfast \
    2>"$WORK/mem" >/dev/null
  rss=$(awk -F: '/Maximum resident/ {gsub(/ /, "", $2); print $2}' "$WORK/mem")
  out_frames=$(ffprobe -v error -select_streams v -count_packets -show_entries stream=nb_read_packets \
    -of csv=p=0 "$WORK/ul.mp4")
  read -r ff_med ff_best < <(stats <"$WORK/ffmpeg.t")
  read -r ul_med ul_best < <(stats <"$WORK/underlay.t")
  echo
  echo "## $size, $frames frames at $fps fps (underlay wrote $out_frames)"
  printf "%-9s %8s %8s   (fps: median, best)\n" command median best
  fps_of() { echo "$frames / $1" | bc -l; }
  printf "%-9s %8.1f %8.1f\n" ffmpeg "$(fps_of "$ff_med")" "$(fps_of "$ff_best")"
  printf "%-9s %8.1f %8.1f   peak memory %d MB\n" underlay "$(fps_of "$ul_med")" "$(fps_of "$ul_best")" \
    $((rss / 1024))
  printf "underlay / ffmpeg: %.2f (median), %.2f (best)\n" "$(echo "$ff_med / $ul_med" | bc -l)" \
    "$(echo "$ff_best / $ul_best" | bc -l)"
  if [ "$have_python" = 1 ]; then
    read -r py_med py_best < <(stats <"$WORK/python.t")
    printf "%-9s %8.1f %8.1f\n" python "$(fps_of "$py_med")" "$(fps_of "$py_best")"
    printf "underlay / python: %.2f (median), %.2f (best)\n" "$(echo "$py_med / $ul_med" | bc -l)" \
      "$(echo "$py_best / $ul_best" | bc -l)"
  fi
done
