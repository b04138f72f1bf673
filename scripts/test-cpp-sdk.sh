#!/usr/bin/env bash
# Tests the C++ header cpp/include/underlay/log.hpp: its tests with g++ and
# clang++ at -Wall -Wextra -Werror under AddressSanitizer and
# UndefinedBehaviorSanitizer; the CMake package installed into a temporary
# prefix and found by a consumer project's find_package(underlay_log),
# whose example writes a log that `underlay log info` reads. (That the
# bytes are the Rust writer's is tests/it/sdk.rs's job, which also builds
# the header at -O1, where g++ warns of more.) A missing
# compiler or cmake skips with a message, or fails under
# UNDERLAY_REQUIRE_TOOLS=1.
set -euo pipefail
cd "$(dirname "$0")/.."

skip() {
  if [ "${UNDERLAY_REQUIRE_TOOLS:-}" = "1" ]; then
    echo "C++ writer: FAILED: $* (UNDERLAY_REQUIRE_TOOLS=1)" >&2
    exit 1
  fi
  echo "C++ writer: SKIPPED: $*"
  exit 0
}
for tool in g++ clang++ cmake; do
  command -v "$tool" >/dev/null 2>&1 || skip "no $tool (scripts/install-deps.sh installs it)"
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
flags=(-std=c++17 -Wall -Wextra -Werror -g -O0 -fsanitize=address,undefined -fno-sanitize-recover=all -Icpp/include)
for cxx in g++ clang++; do
  "$cxx" "${flags[@]}" cpp/tests/test.cpp -o "$work/test-$cxx"
  "$cxx" "${flags[@]}" cpp/examples/robot.cpp -o "$work/robot-$cxx"
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 "$work/test-$cxx" "$work"
  ASAN_OPTIONS=detect_leaks=1 "$work/robot-$cxx" "$work/robot-$cxx.ulog" >/dev/null
  echo "C++ writer: $cxx tests passed under ASan and UBSan"
done

# Install the package, then build the example as another project would.
cmake -S cpp -B "$work/build" -DUNDERLAY_LOG_EXAMPLES=OFF -DCMAKE_INSTALL_PREFIX="$work/prefix" >/dev/null
cmake --install "$work/build" >/dev/null
mkdir -p "$work/consumer"
cp cpp/examples/robot.cpp "$work/consumer/"
cat > "$work/consumer/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.14)
project(robot CXX)
find_package(underlay_log 0.1 REQUIRED)
add_executable(robot robot.cpp)
target_link_libraries(robot PRIVATE underlay::log)
CMAKE
cmake -S "$work/consumer" -B "$work/consumer/build" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/consumer/build" >/dev/null
"$work/consumer/build/robot" "$work/consumer.ulog"
cargo run --quiet -- log info "$work/consumer.ulog" > "$work/info.txt"
grep -qF "frames:      50 (50 instantaneous, 0 persistent)" "$work/info.txt" \
  && grep -qF "primitives:  150 (circle 50, line 50, text 50)" "$work/info.txt" \
  && grep -qF "warnings:    none" "$work/info.txt" \
  || { cat "$work/info.txt"; echo "C++ writer: the installed package's example wrote an unexpected log" >&2; exit 1; }
echo "C++ writer: find_package(underlay_log) from an installed prefix builds the example; its log reads back"
echo "C++ writer: 3 passed, 0 failed"
