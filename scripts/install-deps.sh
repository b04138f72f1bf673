#!/usr/bin/env bash
# Installs what underlay needs to build and test on Debian/Ubuntu, and only
# what is missing: system packages through apt (with sudo when not root) and
# a Rust toolchain through rustup when cargo is absent. Safe to run again.
set -euo pipefail

packages=(
  clang libclang-dev pkg-config libopencv-dev
  libavcodec-dev libavformat-dev libavutil-dev libswscale-dev
  libavfilter-dev libavdevice-dev libswresample-dev
  ffmpeg xvfb x11-apps imagemagick python3 python3-venv
  g++ cmake libclang-rt-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing system packages: ${missing[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "install-deps: system packages already present"
fi

if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
  export PATH="$HOME/.cargo/bin:$PATH"
fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "install-deps: installing the Rust toolchain with rustup (https://rustup.rs)"
  command -v curl >/dev/null || { echo "install-deps: curl is needed to fetch rustup" >&2; exit 1; }
  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal -c clippy,rustfmt
else
  echo "install-deps: Rust toolchain present ($(cargo --version))"
fi
