"""What the sync and asyncio clients share: requests built from arrays, answers turned into
arrays, the shared-memory layout and the choice of transport. Everything here is free of I/O
except region files; the clients make the calls."""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Iterator, Optional

import grpc
import numpy as np

from sortd._copy import copied, copy_into
from sortd._errors import SortdError
from sortd._shm import Region, align_up
from sortd._types import Arrays, Options
from sortd._wire import (REQUEST_KEYS, REQUEST_KEYS_REGION, REQUEST_OUT_INDICES_REGION,
                         REQUEST_OUT_KEYS_REGION, REQUEST_OUT_VALUES_REGION, REQUEST_VALUES,
                         REQUEST_VALUES_REGION, Answer, join_fields, region_range)
from sortd.v1 import sortd_pb2 as pb

INDEX_DTYPE = np.dtype("<u4")  # what the server sends
DEFAULT_MAX_REQUEST_BYTES = 1 << 30  # sortd's default --max_request_bytes
STREAM_CHUNK_BYTES = 1 << 20  # per request message; well under any sensible --max_request_bytes
MIN_REGION_BYTES = 1 << 20


def _method(service: str, method: str) -> str:
    return f"/{pb.DESCRIPTOR.services_by_name[service].full_name}/{method}"


SORT_KEYS = _method("SortService", "SortKeys")
SORT_STREAM = _method("SortService", "SortStream")
SORT_SESSION = _method("SortService", "SortSession")
HEALTH_CHECK = "/grpc.health.v1.Health/Check"


def health_serving(raw: bytes) -> bool:
    # HealthCheckResponse { ServingStatus status = 1; } with SERVING = 1: b"\x08\x01".
    return raw == b"\x08\x01"


@dataclass
class Result:
    keys: np.ndarray
    values: Optional[np.ndarray]
    indices: Optional[np.ndarray]  # as the server sent them: uint32
    device: str = ""  # where the sort ran, as the answer says: "cpu", "cuda:0", ...


def _data_loss(message: str) -> SortdError:
    return SortdError(grpc.StatusCode.DATA_LOSS, message)


def request_head(arrays: Arrays, opts: Options) -> bytes:
    """SortRequest's small fields, serialized: the same for every sort of these dtypes and
    options, so protobuf builds them once, not on every call."""
    return _request_head(arrays.key_type, arrays.value_width, opts.descending, opts.stable,
                         opts.algorithm, opts.return_indices)


@functools.lru_cache(maxsize=256)
def _request_head(key_type: int, value_width: int, descending: bool, stable: bool,
                  algorithm: str, return_indices: bool) -> bytes:
    opts = Options(descending, stable, algorithm, return_indices)
    return pb.SortRequest(key_type=key_type, value_width=value_width,
                          **opts.header_fields()).SerializeToString()


def bytes_request(arrays: Arrays, opts: Options) -> bytes:
    return join_fields(request_head(arrays, opts),
                       [(REQUEST_KEYS, arrays.keys), (REQUEST_VALUES, arrays.values)])


def _take(answer: Answer, name: str, dtype: np.dtype, n: int) -> np.ndarray:
    offset, length = answer.spans.get(name, (0, 0))
    if length != n * dtype.itemsize:
        raise _data_loss(f"answer: {length} bytes of {name}, expected {n * dtype.itemsize}")
    return answer.array(name, dtype)


def answer_error(answer: Answer, index: Optional[int] = None) -> Optional[SortdError]:
    return fields_error(answer.fields, index)


def fields_error(fields: pb.SortResponse, index: Optional[int] = None) -> Optional[SortdError]:
    if fields.HasField("error"):
        return SortdError.from_number(fields.error.code, fields.error.message, index)
    return None


def result_from_answer(answer: Answer, arrays: Arrays, opts: Options, copy: bool) -> Result:
    """Views over the answer's bytes (read-only), or copies of them with `copy`."""
    n = arrays.n
    keys = _take(answer, "keys", arrays.keys.dtype, n)
    values = None if arrays.values is None else _take(answer, "values", arrays.values.dtype, n)
    indices = _take(answer, "indices", INDEX_DTYPE, n) if opts.return_indices else None
    if copy:
        keys = copied(keys)
        values = None if values is None else copied(values)
    return Result(keys, values, indices, answer.fields.device)


# ---- SortStream ----

def stream_requests(arrays: Arrays, opts: Options, chunk_bytes: int) -> Iterator[bytes]:
    """The header, then the arrays in chunks of whole keys, each sent from the arrays' memory.
    The header asks for answer messages of about `chunk_bytes` too."""
    header = pb.SortStreamHeader(key_type=arrays.key_type, value_width=arrays.value_width,
                                 key_count=arrays.n,
                                 response_chunk_keys=answer_chunk_keys(arrays, opts, chunk_bytes),
                                 **opts.header_fields())
    head = pb.SortStreamRequest(header=header).SerializeToString()
    per_key = arrays.keys.dtype.itemsize + arrays.value_width
    step = max(1, chunk_bytes // per_key)
    if arrays.n == 0:
        yield head
        return
    for start in range(0, arrays.n, step):
        stop = start + step
        values = None if arrays.values is None else arrays.values[start:stop]
        yield join_fields(head if start == 0 else b"",
                          [(REQUEST_KEYS, arrays.keys[start:stop]), (REQUEST_VALUES, values)])


def answer_chunk_keys(arrays: Arrays, opts: Options, chunk_bytes: int) -> int:
    """Keys per SortStream answer message: as many as fit in `chunk_bytes` with their values and
    indices. Not the server's default (about 4 MiB): grpcio (1.51) receives a message by growing a
    bytearray slice by slice and copying it into bytes, in memory new to the process for messages
    that large, and its page faults made a 1M-key u32 stream take 2 to 3 times sortctl's."""
    per_key = (arrays.keys.dtype.itemsize + arrays.value_width
               + (INDEX_DTYPE.itemsize if opts.return_indices else 0))
    return max(1, chunk_bytes // per_key)


class StreamAssembler:
    """Puts a SortStream's answer messages together into whole arrays."""

    def __init__(self, arrays: Arrays, opts: Options) -> None:
        n = arrays.n
        self._out: dict[str, np.ndarray] = {"keys": np.empty(n, arrays.keys.dtype)}
        if arrays.values is not None:
            self._out["values"] = np.empty(n, arrays.values.dtype)
        if opts.return_indices:
            self._out["indices"] = np.empty(n, INDEX_DTYPE)
        self._at = dict.fromkeys(self._out, 0)
        self._device = ""

    def add(self, answer: Answer) -> None:
        self._device = answer.fields.device or self._device  # the last message carries it
        for name, (offset, length) in answer.spans.items():
            out = self._out.get(name)
            if out is None:
                raise _data_loss(f"SortStream answer: {name} that were not asked for")
            piece = answer.array(name, out.dtype)
            at = self._at[name]
            if length % out.dtype.itemsize or at + piece.shape[0] > out.shape[0]:
                raise _data_loss(f"SortStream answer: {at * out.dtype.itemsize + length} bytes "
                                 f"of {name}, expected {out.nbytes}")
            out[at:at + piece.shape[0]] = piece
            self._at[name] = at + piece.shape[0]

    def result(self) -> Result:
        for name, out in self._out.items():
            if self._at[name] != out.shape[0]:
                raise _data_loss(f"SortStream answer: {self._at[name]} {name}, expected "
                                 f"{out.shape[0]}")
        return Result(self._out["keys"], self._out.get("values"), self._out.get("indices"),
                      self._device)


# When a bytes request was too large for the server, the limit it named: the next try streams.
_LIMIT_PATTERNS = (
    re.compile(r"limit of (\d+) bytes per request \(--max_request_bytes\)"),
    re.compile(r"Received message larger than max \(\d+ vs\. (\d+)\)"),
)
_PROTOBUF_LIMIT = "limit of one protobuf message"
GRPC_FRAMING_ROOM = 4 << 20  # sortd's gRPC limit is --max_request_bytes plus this


def learned_limit(error: SortdError) -> Optional[int]:
    """The request-size limit a RESOURCE_EXHAUSTED names, or None when it is about something else
    (then streaming would not help)."""
    if error.code != grpc.StatusCode.RESOURCE_EXHAUSTED:
        return None
    for i, pattern in enumerate(_LIMIT_PATTERNS):
        m = pattern.search(error.details)
        if m:
            limit = int(m.group(1))
            return max(1, limit - GRPC_FRAMING_ROOM) if i == 1 else limit
    if _PROTOBUF_LIMIT in error.details:
        return DEFAULT_MAX_REQUEST_BYTES
    return None


# A SortStream header that asks for answer messages past the server's --max_request_bytes is
# refused with the limit named; the stream is sent again with messages that fit.
_ANSWER_CHUNK_LIMIT = re.compile(
    r"header\.response_chunk_keys: .* --max_request_bytes \((\d+)\) per message")


def answer_chunk_limit(error: SortdError, current: int) -> Optional[int]:
    """The server's --max_request_bytes when `error` refused a stream's answer chunk size and
    names a limit below `current` (the client's), so that a stream in chunks of it would fit;
    None otherwise."""
    if error.code != grpc.StatusCode.INVALID_ARGUMENT:
        return None
    m = _ANSWER_CHUNK_LIMIT.search(error.details)
    return int(m.group(1)) if m and int(m.group(1)) < current else None


# ---- shared memory ----

@dataclass
class ShmPlan:
    """Where one sort's arrays lie: inputs in a caller's region (Client.empty) or copied into the
    scratch region, outputs in the scratch region unless sorted where they lie."""

    request: bytes
    outputs: dict[str, tuple[Region, int]]  # name -> (region, offset)
    in_place: bool


def locate(arr: np.ndarray, regions: list[Region]) -> Optional[tuple[Region, int]]:
    for region in regions:
        offset = region.holds(arr)
        if offset is not None:
            return region, offset
    return None


def scratch_bytes(arrays: Arrays, opts: Options, located: dict[str, Optional[tuple[Region, int]]],
                  in_place: bool) -> int:
    need = 0
    for name, arr in (("keys", arrays.keys), ("values", arrays.values)):
        if arr is None:
            continue
        if located[name] is None:
            need += align_up(arr.nbytes)  # the input copied in
        if not in_place:
            need += align_up(arr.nbytes)  # its output
    if opts.return_indices:
        need += align_up(arrays.n * INDEX_DTYPE.itemsize)
    return max(need, 1)


def plan_shm(arrays: Arrays, opts: Options, scratch: Region,
             located: dict[str, Optional[tuple[Region, int]]], in_place: bool) -> ShmPlan:
    """Copies the inputs that are not in a region yet into `scratch` and lays the outputs out
    after them (`scratch` must hold scratch_bytes())."""
    at = 0
    in_ranges: list[bytes] = []
    out_ranges: list[bytes] = []
    outputs: dict[str, tuple[Region, int]] = {}
    inputs = [("keys", arrays.keys, REQUEST_KEYS_REGION, REQUEST_OUT_KEYS_REGION)]
    if arrays.values is not None:
        inputs.append(("values", arrays.values, REQUEST_VALUES_REGION, REQUEST_OUT_VALUES_REGION))
    for name, arr, in_field, out_field in inputs:
        where = located[name]
        if where is None:
            copy_into(scratch.view(at, arr.shape[0], arr.dtype), arr)
            where = (scratch, at)
            at += align_up(arr.nbytes)
        in_ranges.append(region_range(in_field, where[0].name, where[1], arr.nbytes))
        if not in_place:
            where = (scratch, at)
            at += align_up(arr.nbytes)
        out_ranges.append(region_range(out_field, where[0].name, where[1], arr.nbytes))
        outputs[name] = where
    if opts.return_indices:
        nbytes = arrays.n * INDEX_DTYPE.itemsize
        out_ranges.append(region_range(REQUEST_OUT_INDICES_REGION, scratch.name, at, nbytes))
        outputs["indices"] = (scratch, at)
    # In field order, as protobuf writes them: the inputs (9, 10) before the outputs (11 to 13).
    return ShmPlan(b"".join([request_head(arrays, opts), *in_ranges, *out_ranges]), outputs,
                   in_place)


def result_from_shm(plan: ShmPlan, arrays: Arrays, copy: bool, device: str) -> Result:
    """The outputs as arrays over their regions (writable views, valid until the client's next
    shared-memory sort overwrites them), or copies of them with `copy`. Arrays sorted where they
    lie are their inputs, never copied."""
    copy = copy and not plan.in_place

    def out(name: str, dtype: np.dtype) -> np.ndarray:
        region, offset = plan.outputs[name]
        view = region.view(offset, arrays.n, dtype)
        return copied(view) if copy else view

    if plan.in_place:
        # The inputs' own bytes in their region hold the result: no new view over them.
        keys, values = arrays.keys, arrays.values
    else:
        keys = out("keys", arrays.keys.dtype)
        values = None if arrays.values is None else out("values", arrays.values.dtype)
    indices = out("indices", INDEX_DTYPE) if "indices" in plan.outputs else None
    return Result(keys, values, indices, device)
