#!/usr/bin/env bash
# Writes the fuzzer's seed corpus, tests/server/sort_request_corpus/: a few SortRequests of every
# shape (key types, values, indices, regions, empty) and some of the wire format's odd corners,
# each behind the slicing byte tests/server/sort_request_fuzz.cc reads first. protoc encodes the
# requests from text format, so the seeds stay small and readable here. Rerun after changing it.
set -euo pipefail
cd "$(dirname "$0")"
out=sort_request_corpus
rm -rf "$out"
mkdir -p "$out"

# seed NAME SLICING TEXT [RAW]: TEXT encoded as a SortRequest, then RAW's printf escapes appended.
seed() {
  {
    printf '%b' "\\x$1"
    protoc -I ../../proto --encode=sortd.v1.SortRequest sortd/v1/sortd.proto <<<"$3"
    printf '%b' "${4:-}"
  } >"$out/$2"
}

seed 00 empty ''
seed 00 uint32 'key_type: KEY_TYPE_UINT32 keys: "\003\0\0\0\001\0\0\0\002\0\0\0"'
seed 03 uint32_sliced 'key_type: KEY_TYPE_UINT32 keys: "\003\0\0\0\001\0\0\0\002\0\0\0"'
seed 00 int32_descending_stable \
  'key_type: KEY_TYPE_INT32 keys: "\377\377\377\377\001\0\0\0\001\0\0\0" order: SORT_ORDER_DESCENDING
   stable: true algorithm: ALGORITHM_BITONIC'
seed 00 float32_values_indices \
  'key_type: KEY_TYPE_FLOAT32 keys: "\0\0\300\177\0\0\200\377\0\0\0\200\0\0\0\0"
   values: "aaaabbbbccccdddd" value_width: 4 return_indices: true algorithm: ALGORITHM_RADIX'
seed 01 uint64_values8_one_byte_slices \
  'key_type: KEY_TYPE_UINT64 keys: "\002\0\0\0\0\0\0\0\001\0\0\0\0\0\0\0"
   values: "aaaaaaaabbbbbbbb" value_width: 8 algorithm: ALGORITHM_ODD_EVEN_MERGE'
seed 00 int64_single 'key_type: KEY_TYPE_INT64 keys: "\001\0\0\0\0\0\0\200" return_indices: true'
seed 00 float64_transposition \
  'key_type: KEY_TYPE_FLOAT64 keys: "\0\0\0\0\0\0\360?\0\0\0\0\0\0\360\277"
   algorithm: ALGORITHM_ODD_EVEN_TRANSPOSITION'
seed 00 regions \
  'key_type: KEY_TYPE_UINT32 value_width: 4 return_indices: true
   keys_region { region: "keys" offset: 0 byte_size: 64 }
   values_region { region: "vals" offset: 64 byte_size: 64 }
   out_keys_region { region: "keys" offset: 0 byte_size: 64 }
   out_values_region { region: "out" byte_size: 64 }
   out_indices_region { region: "out" offset: 64 byte_size: 64 }'
# Unknown fields of every wire type (varint, fixed64, bytes, fixed32, a group holding a field).
seed 00 unknown_fields 'key_type: KEY_TYPE_UINT32 keys: "\001\0\0\0"' \
  '\xa0\x06\x96\x01\xa9\x06\x01\x02\x03\x04\x05\x06\x07\x08\xb2\x06\x03xyz\xbd\x06\x01\x02\x03\x04\xc3\x06\x08\x01\xc4\x06'
# Tags and lengths in padded, longer forms than needed (valid protobuf), keys given twice.
seed 02 padded_tags 'value_width: 4' \
  '\x88\x80\x80\x80\x00\x01\x92\x80\x80\x80\x00\x84\x80\x80\x80\x00abcd\x12\x04\x01\x02\x03\x04'
