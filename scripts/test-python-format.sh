#!/usr/bin/env bash
# Runs the Python example of docs/FORMAT.md (the block between the
# python-example markers) with the official protobuf package, then checks
# that `underlay log info` reads the log it wrote. Python packages come from
# the cached venv of scripts/python-venv.sh; when it cannot have them (no
# python3-venv, no network) the check is skipped with a message, or fails
# under UNDERLAY_REQUIRE_TOOLS=1.
set -euo pipefail
cd "$(dirname "$0")/.."

venv="$HOME/.cache/underlay/pyenv"
skip() {
  if [ "${UNDERLAY_REQUIRE_TOOLS:-}" = "1" ]; then
    echo "python format example: FAILED: $* (UNDERLAY_REQUIRE_TOOLS=1)" >&2
    exit 1
  fi
  echo "python format example: SKIPPED: $*"
  exit 0
}

scripts/python-venv.sh
"$venv/bin/python" -c "import google.protobuf, grpc_tools" >/dev/null 2>&1 \
  || skip "no Python with protobuf and grpcio-tools (see scripts/python-venv.sh)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$venv/bin/python" -m grpc_tools.protoc -I crates/underlay-log/proto --python_out="$work" crates/underlay-log/proto/underlay.proto
awk '/<!-- python-example:start -->/ { on = 1; next } /<!-- python-example:end -->/ { on = 0 } on' docs/FORMAT.md \
  | sed '/^```/d' > "$work/example.py"
[ -s "$work/example.py" ] || { echo "python format example: no example found in docs/FORMAT.md" >&2; exit 1; }

(cd "$work" && "$venv/bin/python" example.py "$work/python.ulog") | tee "$work/python.txt"
cargo run --quiet -- log info "$work/python.ulog" | tee "$work/info.txt"

fail=0
expect() {
  if ! grep -qF -- "$2" "$work/$1"; then
    echo "python format example: expected '$2' in $1" >&2
    fail=1
  fi
}
expect python.txt "11 frames, 9 entities"
expect info.txt "frames:      11 (10 instantaneous, 1 persistent)"
expect info.txt "primitives:  53 (circle 10, line 2, picture rectangle 10, polygon 10, raised polyline 1, sphere 10, text 10)"
expect info.txt "name:        python example"
expect info.txt "warnings:    none"
# The Rust reader and the text notation agree with what Python wrote.
cargo run --quiet -- log select "$work/python.ulog" --at 1700000000.1 --entity plan > "$work/select.txt"
expect select.txt '{ { polyline; (300, 0); (1000, 400); (2000, 0) }; white; {plan/path; 1}; thickness 20 world }'
# Heights: the chip's arc is above the floor; the box is in the
# picture's pixels (format version 3).
cargo run --quiet -- log select "$work/python.ulog" --at 1700000000.1 --entity detections > "$work/boxes.txt"
expect boxes.txt '{ { rectangle; (670, 360); (40, 40); 0 }; #00ff00; {detections; 3}; picture }'
expect select.txt '{ { polyline; (1000, 0, 0); (1250, 0, 350); (1500, 0, 600); (1750, 0, 750); (2000, 0, 800); (2250, 0, 750); (2500, 0, 600); (2750, 0, 350); (3000, 0, 0) }; white; {plan/chip; 1} }'
head -c 9 "$work/python.ulog" | tail -c 1 | od -An -tu1 | grep -q '^ *3$' \
  || { echo "python format example: expected format version 3 in the prefix" >&2; fail=1; }

if [ "$fail" -ne 0 ]; then
  echo "python format example: 0 passed, 1 failed"
  exit 1
fi
echo "python format example: 1 passed, 0 failed"
