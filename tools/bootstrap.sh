#!/usr/bin/env bash
# Sets Kiln up on a fresh Debian 12 machine (with the CUDA toolkit at
# /usr/local/cuda), builds it, then runs the flagship demo or the test suite.
#
#   bash tools/bootstrap.sh demo    # install, build, run the flagship demo
#   bash tools/bootstrap.sh test    # install, build, run every test
#
# Environment: BUILD_DIR (default build), FUZZ_SECONDS (default 60; 0 skips
# the libFuzzer run in `test`).
set -euo pipefail

mode=${1:-}
if [[ $mode != demo && $mode != test ]]; then
  echo "usage: bash tools/bootstrap.sh demo|test" >&2
  exit 2
fi
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=${BUILD_DIR:-build}

# --- Debian packages ---------------------------------------------------------
packages=(cmake ninja-build g++ llvm-14-dev libfmt-dev nlohmann-json3-dev
          libgtest-dev zlib1g-dev libncurses-dev clang-14 libclang-rt-14-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
if ((${#missing[@]})); then
  echo "== installing: ${missing[*]}"
  sudo=""
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || {
      echo "error: missing packages ${missing[*]}; run as root or install sudo" >&2
      exit 1
    }
    sudo=sudo
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi

if [[ ! -f /usr/local/cuda/include/nvrtc.h ]]; then
  echo "error: the CUDA toolkit (13.x) is not at /usr/local/cuda; Kiln needs" \
       "its headers and NVRTC (no GPU needed). Install it from NVIDIA's" \
       "Debian repository, or set CUDAToolkit_ROOT." >&2
  exit 1
fi

# --- Build ---------------------------------------------------------------------
echo "== configuring and building in $build"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCUDAToolkit_ROOT=/usr/local/cuda >/dev/null
cmake --build "$build" -j "$(nproc)"

if [[ $mode == demo ]]; then
  echo "== running the flagship demo"
  exec "$build/examples/kiln_demo"
fi

echo "== running the tests"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
fuzz=${FUZZ_SECONDS:-60}
if ((fuzz > 0)); then
  echo "== fuzzing the parser and the tensor-file readers, ${fuzz}s each (libFuzzer)"
  bash tools/fuzz.sh "$fuzz"
fi
