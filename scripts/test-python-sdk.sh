#!/usr/bin/env bash
# Tests the Python writer, python/ (underlay_log): `pip install ./python`
# into a fresh venv (from the package registry alone: its build backend,
# flit_core, and nothing else), a first log written with the installed
# package and read back by `underlay log info`; then its pytest tests and
# `mypy --strict` in the cached venv of scripts/python-venv.sh. (That its
# bytes are the Rust writer's is tests/it/sdk.rs's job.) Without python3,
# its venv module or the registry it skips with a message, or fails under
# UNDERLAY_REQUIRE_TOOLS=1.
set -euo pipefail
cd "$(dirname "$0")/.."

skip() {
  if [ "${UNDERLAY_REQUIRE_TOOLS:-}" = "1" ]; then
    echo "Python writer: FAILED: $* (UNDERLAY_REQUIRE_TOOLS=1)" >&2
    exit 1
  fi
  echo "Python writer: SKIPPED: $*"
  exit 0
}
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/venv" >/dev/null 2>&1 || skip "cannot create a venv (install python3-venv)"
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check ./python \
  || skip "pip install ./python failed (no network for its build backend?)"
cat > "$work/first.py" <<'PY'
import sys, time
import underlay_log as ul

with ul.create(sys.argv[1], ul.Header("first drawing")) as log:
    log.declare_entity("robots/blue/3", ["robots/blue"])
    for k in range(10):
        t = time.time()
        log.instant(t).circle((100.0 * k, 0), 90, color="blue", fill="#0040ff80", entity="robots/blue/3")
        log.instant(t).line((100.0 * k, 0), (3000, 1000), entity="plan", level=1)
PY
(cd "$work" && "$work/venv/bin/python" first.py "$work/first.ulog")
cargo run --quiet -- log info "$work/first.ulog" > "$work/info.txt"
grep -qF "frames:      10 (10 instantaneous, 0 persistent)" "$work/info.txt" \
  && grep -qF "primitives:  20 (circle 10, line 10)" "$work/info.txt" \
  && grep -qF "warnings:    none" "$work/info.txt" \
  || { cat "$work/info.txt"; echo "Python writer: the installed package wrote an unexpected log" >&2; exit 1; }
echo "Python writer: pip install ./python in a fresh venv; its log reads back"

scripts/python-venv.sh >/dev/null
venv="$HOME/.cache/underlay/pyenv"
"$venv/bin/python" -c "import pytest, mypy" >/dev/null 2>&1 || skip "no pytest and mypy in $venv (see scripts/python-venv.sh)"
PYTHONPATH=python/src "$venv/bin/python" -m pytest -q -p no:cacheprovider python/tests
(cd python && "$venv/bin/python" -m mypy --strict --cache-dir "$HOME/.cache/underlay/mypy" src/underlay_log tests/drive.py)
echo "Python writer: 3 passed, 0 failed"
