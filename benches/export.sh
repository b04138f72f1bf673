#!/usr/bin/env bash
# Whole-process export benchmark (docs/PERFORMANCE.md, "Export").
#
# For three kinds of input, each at 1280×720 and 1920×1080 (H.264):
#   sparse   the drone video below with a sparse, thesis-era-style log
#            (benches/thesis_pipeline.py sparse): 22 team circles and a
#            ball per frame, the field outline as one persistent frame
#            (28 primitives shown): drawings cover a few percent of the
#            picture
#   drone    a real pitch filmed from above (testdata/pitch-drone-topdown.mp4,
#            scaled; ffmpeg's testsrc2 without ../shared) with an AAC track,
#            and a generated scene of ~100 moving circles and lines per frame
#            (benches/thesis_pipeline.py gen): a very clean, low-detail
#            picture that x264 encodes cheaply, so drawings weigh the most
#   demo     `underlay demo` footage (a tilted camera with sensor noise) and
#            the log the demo's robots write (~100 primitives per frame)
# it times, in the same run and alternating:
#   ffmpeg   ffmpeg -i IN -c:v libx264 -preset veryfast -crf 20 -c:a copy OUT
#   underlay underlay export SESSION -o OUT (mask on, ~100 primitives/frame,
#            veryfast, CRF 20), with its peak memory (/usr/bin/time -v)
#   python   a thesis-style pipeline: OpenCV decode, the reference mask,
#            OpenCV drawing, OpenCV encode (benches/thesis_pipeline.py;
#            drone inputs only: it draws the generated scene)
#   reencode the ffmpeg command on underlay's annotated output: what decoding
#            and x264 alone cost on annotated pictures (x264 works harder
#            on drawings than on the plain video)
#   decode   ffmpeg decoding the input and the annotated output alone, for
#            the floor: decoding the input plus x264 on the annotated
#            pictures (reencode minus decoding them), what any pipeline
#            drawing these pictures spends with its own work free
# and prints frames per second (median and best of RUNS), the ratios, and
# per frame the floor's CPU and underlay's own CPU (underlay's minus the
# floor's, per run: masking, drawing, conversions, its threads).
#
# usage: benches/export.sh [SECONDS] [RUNS] [MASK] [INPUTS]
#   SECONDS  length of the test inputs (default 10)
#   RUNS     runs of each command (default 3)
#   MASK     session mask method (default adaptive)
#   INPUTS   "sparse drone demo" (default), or some of them
# Input pictures come from testdata/pitch-drone-topdown.mp4 (a real pitch
# seen from above) when /work/shared is there, else from ffmpeg's testsrc2.
# BIN=PATH measures that underlay binary instead of building this tree.
# Needs ffmpeg; the Python pipeline needs python3 with opencv and numpy
# (pip install opencv-python-headless numpy) and the reference mask.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-10}
RUNS=${2:-3}
MASK=${3:-adaptive}
INPUTS=${4:-sparse drone demo}
if [ -z "${BIN:-}" ]; then
  export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/underlay/target}"
  cargo build --release --quiet
  BIN="$CARGO_TARGET_DIR/release/underlay"
fi
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

# "wall-seconds cpu-seconds" of a command (its output discarded).
timed() {
  /usr/bin/time -f "%e %U %S" -o "$WORK/time" "$@" >/dev/null 2>"$WORK/stderr" \
    || { cat "$WORK/stderr" >&2; return 1; }
  awk '{printf "%s %.2f\n", $1, $2 + $3}' "$WORK/time"
}

# "median best" of column $1 of stdin.
stats() {
  awk -v c="$1" '{print $c}' | sort -g \
    | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.2f %.2f\n", m, a[1]}'
}

echo "# export benchmark: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), ${SECS} s inputs, ${RUNS} runs"
for kind in $INPUTS; do
for size in 1280x720 1920x1080; do
  w=${size%x*}
  h=${size#*x}
  python=0
  if [ "$kind" = demo ]; then
    "$BIN" demo --out "$WORK/demo-$size" --no-view --width "$w" --height "$h" --duration "$SECS" >/dev/null 2>&1
    in="$WORK/demo-$size/video.mp4"
    session="$WORK/demo-$size/session.toml"
    frames=$(ffprobe -v error -select_streams v -count_packets -show_entries stream=nb_read_packets \
      -of csv=p=0 "$in")
    fps=$(ffprobe -v error -select_streams v -show_entries stream=r_frame_rate -of csv=p=0 "$in" | bc -l)
  else
    in="$WORK/in-$size.mp4"
    if [ -f "$SRC" ]; then
      picture=(-stream_loop -1 -i "$SRC")
    else
      picture=(-f lavfi -i "testsrc2=s=${size}:r=60")
    fi
    ffmpeg -hide_banner -loglevel error -y "${picture[@]}" -f lavfi -i "sine=frequency=440:sample_rate=48000" \
      -t "$SECS" -map 0:v -map 1:a -vf "scale=$w:$h" -c:v libx264 -preset veryfast -crf 18 -pix_fmt yuv420p \
      -c:a aac -b:a 128k "$in"
    if [ "$kind" = sparse ]; then
      read -r _ _ fps frames < <(python3 benches/thesis_pipeline.py sparse "$in" "$WORK")
      log=sparse.txt
    else
      read -r _ _ fps frames < <(python3 benches/thesis_pipeline.py gen "$in" "$WORK")
      log=scene.txt
      python=$have_python
    fi
    session="$WORK/session.toml"
    cat >"$session" <<EOF
video = "in-$size.mp4"
log = "$log"
offset = 0.0
calibration = { file = "calib.toml" }

[mask]
method = "$MASK"
EOF
  fi
  : >"$WORK/ffmpeg.t"
  : >"$WORK/underlay.t"
  : >"$WORK/python.t"
  : >"$WORK/reencode.t"
  : >"$WORK/decode_in.t"
  : >"$WORK/decode_ann.t"
  for _ in $(seq "$RUNS"); do
    timed ffmpeg -hide_banner -loglevel error -y -i "$in" -c:v libx264 -preset veryfast -crf 20 -c:a copy \
      "$WORK/ff.mp4" >>"$WORK/ffmpeg.t"
    timed "$BIN" export "$session" -o "$WORK/ul.mp4" --crf 20 --preset veryfast >>"$WORK/underlay.t"
    timed ffmpeg -hide_banner -loglevel error -y -i "$WORK/ul.mp4" -c:v libx264 -preset veryfast -crf 20 \
      -c:a copy "$WORK/re.mp4" >>"$WORK/reencode.t"
    timed ffmpeg -hide_banner -loglevel error -i "$in" -map 0:v -f null - >>"$WORK/decode_in.t"
    timed ffmpeg -hide_banner -loglevel error -i "$WORK/ul.mp4" -map 0:v -f null - >>"$WORK/decode_ann.t"
    if [ "$python" = 1 ]; then
      timed python3 benches/thesis_pipeline.py run "$in" "$WORK/py.mp4" >>"$WORK/python.t"
    fi
  done
  /usr/bin/time -v "$BIN" export "$session" -o "$WORK/ul.mp4" --crf 20 --preset veryfast \
    2>"$WORK/mem" >/dev/null
  rss=$(awk -F: '/Maximum resident/ {gsub(/ /, "", $2); print $2}' "$WORK/mem")
  out_frames=$(ffprobe -v error -select_streams v -count_packets -show_entries stream=nb_read_packets \
    -of csv=p=0 "$WORK/ul.mp4")
  echo
  printf "## %s %s, %s frames at %.0f fps (underlay wrote %s; peak memory %s MB)\n" \
    "$kind" "$size" "$frames" "$fps" "$out_frames" "$((rss / 1024))"
  printf "%-9s %12s %12s %14s\n" command "fps median" "fps best" "CPU ms/frame"
  fps_of() { echo "$frames / $1" | bc -l; }
  for cmd in ffmpeg underlay reencode python; do
    [ -s "$WORK/$cmd.t" ] || continue
    read -r med best < <(stats 1 <"$WORK/$cmd.t")
    read -r cpu _ < <(stats 2 <"$WORK/$cmd.t")
    eval "${cmd}_wall=$med ${cmd}_best=$best ${cmd}_cpu=$cpu"
    printf "%-9s %12.1f %12.1f %14.1f\n" "$cmd" "$(fps_of "$med")" "$(fps_of "$best")" \
      "$(echo "1000 * $cpu / $frames" | bc -l)"
  done
  printf "underlay vs ffmpeg: throughput %.2f× (median), %.2f× (best); CPU per frame %.2f×\n" \
    "$(echo "$ffmpeg_wall / $underlay_wall" | bc -l)" "$(echo "$ffmpeg_best / $underlay_best" | bc -l)" \
    "$(echo "$underlay_cpu / $ffmpeg_cpu" | bc -l)"
  # The floor, per run: decoding the input plus x264 on the annotated
  # pictures (re-encoding them minus decoding them alone), which any
  # pipeline drawing these pictures spends with its own work free.
  paste "$WORK/decode_in.t" "$WORK/decode_ann.t" "$WORK/ffmpeg.t" "$WORK/reencode.t" "$WORK/underlay.t" \
    | awk -v n="$frames" '{floor = $2 + $8 - $4
        printf "%.4f %.4f %.4f %.4f\n", ($8 - $4) / ($6 - $2), $6 / floor, 1000 * floor / n, 1000 * ($10 - floor) / n}' \
      >"$WORK/floor.t"
  read -r x264_ratio _ < <(stats 1 <"$WORK/floor.t")
  read -r floor_ratio _ < <(stats 2 <"$WORK/floor.t")
  read -r floor_ms _ < <(stats 3 <"$WORK/floor.t")
  read -r own_ms _ < <(stats 4 <"$WORK/floor.t")
  printf "floor (medians of per-run ratios): x264 on annotated / plain pictures %.2f×; ffmpeg CPU / floor CPU %.2f×\n" \
    "$x264_ratio" "$floor_ratio"
  printf "CPU per frame (medians of runs): floor (decoding + x264 on the annotated pictures) %.2f ms; underlay's own %.2f ms\n" \
    "$floor_ms" "$own_ms"
  if [ -s "$WORK/python.t" ]; then
    printf "underlay vs python: throughput %.2f× (median), %.2f× (best)\n" \
      "$(echo "$python_wall / $underlay_wall" | bc -l)" "$(echo "$python_best / $underlay_best" | bc -l)"
  fi
done
done
