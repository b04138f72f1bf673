#!/usr/bin/env bash
# Makes (once) the cached Python venv the tests use, $HOME/.cache/underlay/pyenv,
# and installs into it what is missing: protobuf and grpcio-tools (the
# format example of docs/FORMAT.md), opencv-python-headless and numpy (the
# thesis's reference mask), rcsssmj (the RoboCup 3D league's server, run by
# the sim3d tests), mcap, mcap-ros2-support and rosbags (the ROS 2
# recordings of scripts/ros-demo-bag.py), pytest, mypy and zstandard (the
# tests of the Python writer, python/). Prints what it installs; installs nothing when
# run again. When the venv cannot be made or PyPI cannot be reached it says
# so and exits 0, unless UNDERLAY_REQUIRE_TOOLS=1, where that is a failure.
set -euo pipefail

venv="$HOME/.cache/underlay/pyenv"
fail() {
  if [ "${UNDERLAY_REQUIRE_TOOLS:-}" = "1" ]; then
    echo "python-venv: $* (UNDERLAY_REQUIRE_TOOLS=1)" >&2
    exit 1
  fi
  echo "python-venv: $*; the tests that need it will skip"
  exit 0
}

command -v python3 >/dev/null 2>&1 || fail "python3 is not installed"
if [ ! -x "$venv/bin/python" ]; then
  echo "python-venv: creating $venv"
  mkdir -p "$(dirname "$venv")"
  python3 -m venv "$venv" >/dev/null 2>&1 || { rm -rf "$venv"; fail "cannot create a Python venv (install python3-venv)"; }
fi

# module to import → package to install
declare -A wanted=(
  [google.protobuf]=protobuf
  [grpc_tools]=grpcio-tools
  [cv2]=opencv-python-headless
  [numpy]=numpy
  [rcsssmj]=rcsssmj
  [mcap]=mcap
  [mcap_ros2]=mcap-ros2-support
  [rosbags]=rosbags
  [pytest]=pytest
  [mypy]=mypy
  [zstandard]=zstandard
)
missing=()
for module in "${!wanted[@]}"; do
  "$venv/bin/python" -c "import $module" >/dev/null 2>&1 || missing+=("${wanted[$module]}")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "python-venv: installing ${missing[*]} into $venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${missing[@]}" \
    || fail "cannot install ${missing[*]} (no network?)"
else
  echo "python-venv: packages already present in $venv"
fi
