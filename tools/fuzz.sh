#!/usr/bin/env bash
# Usage: tools/fuzz.sh [SECONDS] [TARGET...]   (default 60; parser tensorfile)
#
# Fuzzes with libFuzzer, ASan and UBSan: `parser` (the .kg parser and
# printer) and `tensorfile` (the .npy and .safetensors readers), each for
# SECONDS. Configures build-fuzz/ with clang and the sanitizers on the whole
# tree, builds only the fuzz targets, seeds each corpus from the repo's own
# files and runs. Exits non-zero on a crash or oracle failure; the failing
# input is left in build-fuzz/artifacts/.
set -euo pipefail

seconds=${1:-60}
shift || true
targets=("$@")
((${#targets[@]})) || targets=(parser tensorfile)
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build-fuzz
flags="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all"

CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja \
  -DKILN_FUZZ=ON -DKILN_BUILD_TESTS=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_C_FLAGS=$flags" "-DCMAKE_CXX_FLAGS=$flags" \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g" >/dev/null
ninja -C "$build" -j2 $(printf 'kiln_%s_fuzz ' "${targets[@]}")

shopt -s nullglob
mkdir -p "$build/artifacts"
for target in "${targets[@]}"; do
  corpus=$build/corpus-$target
  mkdir -p "$corpus"
  case $target in
  parser)
    cp "$root"/examples/*.kg "$root"/tests/data/kg/*.kg "$corpus/"
    dict=$root/tests/fuzz/kg.dict maxlen=4096 ;;
  tensorfile)
    # The first byte selects the format: 0 .npy, 1 .safetensors.
    for f in "$root"/examples/data/*.npy; do
      { printf '\x00'; cat "$f"; } >"$corpus/$(basename "$f")"
    done
    for f in "$root"/tests/data/golden/*.safetensors; do
      (($(stat -c %s "$f") <= 16384)) || continue
      { printf '\x01'; cat "$f"; } >"$corpus/$(basename "$f")"
    done
    dict=$root/tests/fuzz/tensorfile.dict maxlen=20000 ;;
  *)
    echo "unknown fuzz target '$target' (parser, tensorfile)" >&2
    exit 2 ;;
  esac
  echo "== fuzzing $target for ${seconds}s"
  "$build/tests/fuzz/kiln_${target}_fuzz" "$corpus" -dict="$dict" \
    -max_total_time="$seconds" -max_len="$maxlen" -timeout=10 \
    -artifact_prefix="$build/artifacts/$target-" -print_final_stats=1
done
