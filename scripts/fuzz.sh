#!/usr/bin/env bash
# Fuzzes SortKeys' request parser for a bounded time (tests/server/sort_request_fuzz.cc: the parser
# against protobuf's own, then validation and the response). A clang build with libFuzzer, ASan and
# UBSan, in build-fuzz/ (or $SORTD_FUZZ_BUILD_DIR: CI gives it build-asan/, which
# scripts/sanitize.sh address configures for the fuzzer too, so nothing is built twice). The run
# starts from a copy of the seed corpus, tests/server/sort_request_corpus, so what it finds stays out
# of the tree. A crash, a sanitizer report or a disagreement with protobuf fails the script; the
# input that caused it is kept in <build>/fuzz-artifacts/ (replay: <build>/tests/sort_request_fuzz
# FILE). Usage: scripts/fuzz.sh [seconds, default 60] [more libFuzzer flags...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
build=${SORTD_FUZZ_BUILD_DIR:-build-fuzz}
./scripts/install-deps.sh
CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DSORTD_CUDA=OFF -DSORTD_BUILD_BENCH=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSORTD_FUZZ=ON "-DSORTD_SANITIZE=address,undefined"
cmake --build "$build" --parallel "$(nproc)" --target sort_request_fuzz

corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
cp tests/server/sort_request_corpus/* "$corpus/"
artifacts=$PWD/$build/fuzz-artifacts
mkdir -p "$artifacts"
supp=$PWD/tests/support
# As scripts/sanitize.sh address: leaks checked, protobuf's and gRPC's singletons aside.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export LSAN_OPTIONS=suppressions=$supp/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
echo "fuzz: $seconds s from $(find "$corpus" -type f | wc -l) seeds"
"$build/tests/sort_request_fuzz" -max_total_time="$seconds" -max_len=4096 -print_final_stats=1 \
  -artifact_prefix="$artifacts/" "$@" "$corpus"
echo "fuzz: no finding; the corpus grew to $(find "$corpus" -type f | wc -l) inputs"
