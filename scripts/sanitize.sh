#!/usr/bin/env bash
# CI's clang builds of the CPU-only configuration, and every test that runs without a GPU on them:
#   scripts/sanitize.sh address   clang's thread-safety analysis as errors (-Werror=thread-safety),
#                                 AddressSanitizer and UndefinedBehaviorSanitizer (build-asan/),
#                                 and the request parser's fuzzer, whose seeds run as a test
#                                 (scripts/fuzz.sh fuzzes with it)
#   scripts/sanitize.sh thread    ThreadSanitizer (build-tsan/), over every test but the CPU
#                                 sorter's single-threaded exhaustive cases (below)
# A sanitizer finding fails the test that hit it, and so this script. Extra arguments go to ctest
# (e.g. -R BatchQueue).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:?usage: scripts/sanitize.sh address|thread [ctest args...]}
shift
./scripts/install-deps.sh
supp=$PWD/tests/support
case $mode in
  address)
    build=${SORTD_ASAN_BUILD_DIR:-build-asan}
    flags=(-DSORTD_THREAD_SAFETY=ON "-DSORTD_SANITIZE=address,undefined" -DSORTD_FUZZ=ON)
    # Leaks are checked too; gRPC's and protobuf's process-lifetime singletons are not leaks.
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
    export LSAN_OPTIONS=suppressions=$supp/lsan.supp:print_suppressions=0
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    ;;
  thread)
    build=${SORTD_TSAN_BUILD_DIR:-build-tsan}
    flags=(-DSORTD_SANITIZE=thread)
    export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$supp/tsan.supp
    ;;
  *)
    echo "sanitize.sh: '$mode' is not address or thread" >&2
    exit 2
    ;;
esac
CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DSORTD_CUDA=OFF -DSORTD_BUILD_BENCH=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo "${flags[@]}"
cmake --build "$build" --parallel "$(nproc)"
# ThreadSanitizer runs over the concurrent code: not over the CPU sorter's exhaustive
# single-threaded cases (every shape at small and in-cache sizes, and all of them again with
# Highway held to AVX2), which hold no thread and which AddressSanitizer and the README's test
# command run whole. Their threaded cases (Large/, and Threading/ and ParallelCutover/, which run
# on one thread and on four) still run here. In both builds the CPU sorter's tests take its
# parallel, partitioned and carrying paths on 16 times fewer keys than the README's test command
# does, its cut-overs scaled down alike (testing::kCpuSortSizeShift).
exclude=()
if [[ $mode == thread ]]; then exclude=(-E '^(avx2\.|Small/|InCacheRadix/)'); fi
ctest --test-dir "$build" --output-on-failure --parallel "$(nproc)" "${exclude[@]}" "$@"
