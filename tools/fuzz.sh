#!/usr/bin/env bash
# Usage: tools/fuzz.sh [SECONDS]   (default 60)
#
# Fuzzes the .kg parser with libFuzzer, ASan and UBSan. Configures build-fuzz/
# with clang and the sanitizers on the whole tree, builds only
# kiln_parser_fuzz, seeds a corpus from examples/*.kg and tests/data/kg/*.kg
# and runs for SECONDS. Exits non-zero on a crash or oracle failure; the
# failing input is left in build-fuzz/artifacts/.
set -euo pipefail

seconds=${1:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build-fuzz
flags="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all"

CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja \
  -DKILN_FUZZ=ON -DKILN_BUILD_TESTS=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_C_FLAGS=$flags" "-DCMAKE_CXX_FLAGS=$flags" \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g" >/dev/null
ninja -C "$build" -j2 kiln_parser_fuzz

corpus=$build/corpus
mkdir -p "$corpus" "$build/artifacts"
shopt -s nullglob
for f in "$root"/examples/*.kg "$root"/tests/data/kg/*.kg; do
  cp "$f" "$corpus/"
done

"$build/tests/fuzz/kiln_parser_fuzz" "$corpus" \
  -dict="$root/tests/fuzz/kg.dict" \
  -max_total_time="$seconds" -max_len=4096 -timeout=10 \
  -artifact_prefix="$build/artifacts/" -print_final_stats=1
