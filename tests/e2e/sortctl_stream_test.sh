#!/usr/bin/env bash
# `sortctl --transport=stream` as a user runs it: a sortd whose --max_request_bytes (1 MiB) is far
# below the array, which SortStream still sorts (files streamed in and out chunk by chunk, chunk
# sizes that do not divide the array), while one SortKeys request of the same file is refused.
# Usage: sortctl_stream_test.sh SORTD SORTCTL
set -euo pipefail
sortd=$1
sortctl=$2
# shellcheck source=e2e_lib.sh
. "$(dirname "$0")/e2e_lib.sh"

start_sortd --max_request_bytes=1048576 --cpu_threads=2
target=127.0.0.1:$port

# 8 MiB of random u64 keys (few distinct, so stability shows) with 8-byte values.
python3 -c "
import os, struct, random
n = 1 << 20
seed = int.from_bytes(os.urandom(8), 'little')
print('keys seed', seed)
rng = random.Random(seed)
keys = [rng.randrange(1 << 12) << 52 | rng.randrange(4) for _ in range(n)]
open('$work/keys.bin', 'wb').write(struct.pack('<%dQ' % n, *keys))
open('$work/values.bin', 'wb').write(struct.pack('<%dQ' % n, *[i * 3 + 1 for i in range(n)]))"

# verify_stream DESC: the outputs of the last sort against Python's stable sort of the inputs.
verify_stream() {
  python3 -c "
import struct, sys
n = 1 << 20
desc = '$1' == 'desc'
k = struct.unpack('<%dQ' % n, open('$work/keys.bin', 'rb').read())
v = struct.unpack('<%dQ' % n, open('$work/values.bin', 'rb').read())
order = sorted(range(n), key=lambda i: -k[i] if desc else k[i])  # sorted() is stable
got_k = struct.unpack('<%dQ' % n, open('$work/sorted.bin', 'rb').read())
got_v = struct.unpack('<%dQ' % n, open('$work/sorted_values.bin', 'rb').read())
got_i = struct.unpack('<%dI' % n, open('$work/sorted_indices.bin', 'rb').read())
assert list(got_i) == order, 'indices differ from a stable sort'
assert list(got_k) == [k[i] for i in order], 'keys differ'
assert list(got_v) == [v[i] for i in order], 'values do not follow their keys'"
}

stream_sort() {  # stream_sort FLAGS...: the 8 MiB file through --transport=stream
  "$sortctl" sort --target="$target" --transport=stream --format=binary --key_type=u64 \
    --input="$work/keys.bin" --values="$work/values.bin" --value_type=u64 \
    --values_out="$work/sorted_values.bin" --indices --indices_out="$work/sorted_indices.bin" \
    --stable "$@" >"$work/sorted.bin"
}
check "stream: 8 MiB of u64 keys + values past a 1 MiB --max_request_bytes" \
  stream_sort --chunk_bytes=1000000
check "stream: keys, values and indices match a stable reference sort" verify_stream asc
check "stream: descending, 333333-byte chunks (whole keys), 49999-key answers" \
  stream_sort --chunk_bytes=333333 --response_chunk_keys=49999 --order=desc
check "stream: descending matches the reference" verify_stream desc

# stdin redirected from the file works; the key count comes from its size.
"$sortctl" sort --target="$target" --transport=stream --format=binary --key_type=u64 \
  <"$work/keys.bin" >"$work/sorted_stdin.bin"
check "stream: keys from redirected stdin" python3 -c "
import struct
n = 1 << 20
k = struct.unpack('<%dQ' % n, open('$work/keys.bin', 'rb').read())
s = struct.unpack('<%dQ' % n, open('$work/sorted_stdin.bin', 'rb').read())
assert list(s) == sorted(k)"

expect_error() {  # expect_error PATTERN COMMAND...
  local pattern=$1
  shift
  local err
  if err=$("$@" 2>&1 >/dev/null); then echo "  expected failure"; return 1; fi
  [[ $err == *$pattern* ]] || { echo "  stderr was: $err"; return 1; }
}
# SortKeys of the same file: sortd names --max_request_bytes for a request that reaches it; one
# past gRPC's receive limit above it (--max_request_bytes + 4 MiB), like this 8 MiB one, is refused
# by gRPC before sortd sees it, and sortctl says which flags help.
bytes_refused() {  # bytes_refused FILE PATTERN
  local err
  if err=$("$sortctl" sort --target="$target" --format=binary --key_type=u64 --input="$1" \
    2>&1 >/dev/null); then echo "  expected failure"; return 1; fi
  [[ $err == *RESOURCE_EXHAUSTED*$2* ]] || { echo "  stderr was: $err"; return 1; }
}
check "bytes: the 8 MiB file is RESOURCE_EXHAUSTED, naming --max_request_bytes and the stream" \
  bytes_refused "$work/keys.bin" "--max_request_bytes + 4 MiB: --transport=stream"
head -c 2097152 "$work/keys.bin" >"$work/keys_2mib.bin"
check "bytes: 2 MiB of it is RESOURCE_EXHAUSTED in sortd's words, naming --max_request_bytes" \
  bytes_refused "$work/keys_2mib.bin" "bytes per request (--max_request_bytes)"
check "stream: a pipe has no size to take the key count from" expect_error "not a regular file" \
  bash -c "cat '$work/keys.bin' | '$sortctl' sort --target=$target --transport=stream \
    --format=binary --key_type=u64"
check "stream: text is parsed whole, then sent in chunks" bash -c "
  [[ \$(printf '5 3 9 1 7' | '$sortctl' sort --target=$target --transport=stream --chunk_bytes=8 \
        --response_chunk_keys=2 | tr '\n' ' ') == '1 3 5 7 9 ' ]]"

# The load tester: every request through SortStream, verified, over chunk sizes that do not
# divide the array (3 MiB of u32 keys + 8-byte values per request, past the 1 MiB limit).
bench=("$sortctl" bench --target="$target" --transport=stream --warmup=0s --seed=11 --json
  --progress=false)
"${bench[@]}" --sizes=fixed:786433 --value_width=8 --indices --stable --chunk_bytes=300001 \
  --requests=6 --concurrency=2 >"$work/bench.json"
check "bench: streamed requests past --max_request_bytes, all verified" json_check \
  "$work/bench.json" "r['transport'] == 'stream' and r['requests_ok'] == 6 and r['errors'] == 0
   and r['passed'] and r['chunk_bytes'] == 300001"
"${bench[@]}" --sizes=uniform:0-5000 --key_type=f32 --chunk_bytes=28 --response_chunk_keys=13 \
  --requests=100 --concurrency=8 --channels=2 >"$work/bench_small.json"
check "bench: small arrays in 7-key chunks, 13-key answers, all verified" json_check \
  "$work/bench_small.json" "r['transport'] == 'stream' and r['requests_ok'] == 100 and
   r['errors'] == 0 and r['passed']"

echo "$passed passed, $failed failed"
((failed == 0))
