"""SortRequest / SortResponse bytes without protobuf's copies of the arrays.

Through protobuf the keys would be copied into the message and again into its serialized form,
and each answer's arrays into the message and again into numpy. Here a request is its small
fields (serialized by protobuf) followed by the array fields joined straight from the arrays'
memory: one copy, then gRPC's own into its buffers. An answer's arrays are read as numpy views
over the bytes gRPC handed over; only the small fields go through protobuf. The bytes on the wire
are plain SortRequest / SortStreamRequest / SortResponse messages.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Optional

import numpy as np
from google.protobuf.message import DecodeError

from sortd.v1 import sortd_pb2 as pb

_LENGTH_DELIMITED = 2
# Field numbers shared by SortRequest and SortStreamRequest (keys 2, values 3) and SortResponse
# (keys 1, values 2, indices 3).
REQUEST_KEYS, REQUEST_VALUES = 2, 3
ANSWER_ARRAYS = {1: "keys", 2: "values", 3: "indices"}
# SortRequest's RegionRange fields (shared memory).
REQUEST_KEYS_REGION, REQUEST_VALUES_REGION = 9, 10
REQUEST_OUT_KEYS_REGION, REQUEST_OUT_VALUES_REGION, REQUEST_OUT_INDICES_REGION = 11, 12, 13
# RegionRange { string region = 1; uint64 offset = 2; uint64 byte_size = 3; }: tags of 2 and 3.
_RANGE_OFFSET_TAG, _RANGE_SIZE_TAG = b"\x10", b"\x18"


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field_header(field: int, size: int) -> bytes:
    return _varint(field << 3 | _LENGTH_DELIMITED) + _varint(size)


def join_fields(head: bytes, arrays: list[tuple[int, Optional[np.ndarray]]]) -> bytes:
    """`head` (serialized small fields) then each non-empty array as a bytes field."""
    parts: list = [head]
    for field, arr in arrays:
        if arr is not None and arr.nbytes:
            parts.append(_field_header(field, arr.nbytes))
            parts.append(memoryview(arr).cast("B"))
    return b"".join(parts)


@functools.lru_cache(maxsize=256)
def region_range(field: int, region: str, offset: int, nbytes: int) -> bytes:
    """A RegionRange field, byte for byte as protobuf serializes it (zeros left out). Built here
    because a shared-memory sort's whole request is a few such fields: through protobuf messages
    they cost more than the rest of the call's Python. Cached: a client that sorts arrays of one
    size names the same ranges of the same regions in every request."""
    name = region.encode()
    body = _field_header(1, len(name)) + name
    if offset:
        body += _RANGE_OFFSET_TAG + _varint(offset)
    if nbytes:
        body += _RANGE_SIZE_TAG + _varint(nbytes)
    return _field_header(field, len(body)) + body


def _read_varint(buf: memoryview, at: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if at >= len(buf):
            raise ValueError("truncated varint")
        byte = buf[at]
        at += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, at
        shift += 7


@dataclass
class Answer:
    """One SortResponse: its array fields as byte ranges of `raw`, its other fields parsed."""

    raw: bytes
    spans: dict[str, tuple[int, int]]  # "keys" / "values" / "indices" -> (offset, length)
    fields: pb.SortResponse

    def array(self, name: str, dtype: np.dtype) -> np.ndarray:
        """A read-only view of one array field over the answer's bytes (empty when absent)."""
        offset, length = self.spans.get(name, (0, 0))
        return np.frombuffer(self.raw, dtype=dtype, count=length // dtype.itemsize, offset=offset)


def decode_answer(raw: bytes) -> Answer:
    """Splits a serialized SortResponse; raises ValueError when it is not one."""
    buf = memoryview(raw)
    spans: dict[str, tuple[int, int]] = {}
    rest: list = []
    at = 0
    while at < len(buf):
        start = at
        tag, at = _read_varint(buf, at)
        field, wire_type = tag >> 3, tag & 7
        if wire_type == 0:
            _, at = _read_varint(buf, at)
        elif wire_type == 1:
            at += 8
        elif wire_type == 5:
            at += 4
        elif wire_type == _LENGTH_DELIMITED:
            length, at = _read_varint(buf, at)
            if field in ANSWER_ARRAYS:
                spans[ANSWER_ARRAYS[field]] = (at, length)
                at += length
                continue
            at += length
        else:
            raise ValueError(f"SortResponse: wire type {wire_type} at byte {start}")
        if at > len(buf):
            raise ValueError(f"SortResponse: field {field} ends past the message")
        rest.append(buf[start:at])
    return Answer(raw, spans, pb.SortResponse.FromString(b"".join(rest)))


def decode_fields(raw: bytes) -> pb.SortResponse:
    """A SortResponse that carries no arrays (a shared-memory sort's answer), parsed by protobuf
    in one call: no walk over its fields here, as decode_answer needs for array fields. Raises
    ValueError, as decode_answer does, when `raw` is not one."""
    try:
        return pb.SortResponse.FromString(raw)
    except DecodeError as e:
        raise ValueError(f"SortResponse: {e}") from None


def identity(raw: bytes) -> bytes:
    return raw
