"""sortd.Client: sorts numpy arrays on a sortd server, over the fastest transport it can use."""
from __future__ import annotations

import collections
import threading
from typing import Any, Iterable, Iterator, Optional, Union

import grpc
import numpy as np

from sortd import _core
from sortd._api import check_overwritable, indices_of, prepare, write_back
from sortd._channel import TLS, channel_args, is_local
from sortd._core import Result
from sortd._errors import SortdError
from sortd._shm import Region
from sortd._types import Arrays, Options, check_arrays, check_transport, make_options
from sortd._wire import decode_answer, decode_fields
from sortd.v1 import sortd_pb2 as pb
from sortd.v1 import sortd_pb2_grpc as pb_grpc

# Registration failures after which shared memory is not tried again in transport="auto": the
# server has no --shared_memory, or cannot see this process's files (another host or directory).
_SHM_UNUSABLE = (grpc.StatusCode.UNIMPLEMENTED, grpc.StatusCode.NOT_FOUND,
                 grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.PERMISSION_DENIED,
                 grpc.StatusCode.FAILED_PRECONDITION)
_UNREGISTER_TIMEOUT = 5.0  # a dead server must not hang close()


class Client:
    """A connection to one sortd server.

    Args:
        target: sortd's address: ``host:port``, ``unix:/path/to/socket``, ``dns:///host:port``.
        tls: None for plaintext, or :class:`sortd.TLS` for TLS and mutual TLS.
        timeout: deadline of each call in seconds (None: no deadline; a server that goes away
            still ends the call, with UNAVAILABLE).
        transport: ``"auto"`` (default), ``"shm"``, ``"stream"`` or ``"bytes"``; see
            :attr:`last_transport`. ``"auto"`` uses shared memory when the target is a Unix
            socket or loopback address and sortd runs with ``--shared_memory`` (tried once,
            on the first sort); otherwise bytes in the request, or SortStream for arrays past the
            server's ``--max_request_bytes``.
        shm_dir: sortd's ``--shared_memory_dir``, where this client creates its regions.
        max_request_bytes: the server's ``--max_request_bytes`` when it is not sortd's default
            (1 GiB). Not needed for correctness: a larger request that the server refuses is sent
            again over SortStream, and the limit it names is remembered.
        stream_chunk_bytes: bytes of keys and values (and indices, in answers) per SortStream
            message, both ways.

    A Client may be shared by threads. Its shared-memory sorts use one region per client (grown
    as needed), one sort at a time; use one client per thread to run them in parallel.
    """

    def __init__(self, target: str, *, tls: Optional[TLS] = None,
                 timeout: Optional[float] = None, transport: str = "auto",
                 shm_dir: str = "/dev/shm", max_request_bytes: Optional[int] = None,
                 stream_chunk_bytes: int = _core.STREAM_CHUNK_BYTES) -> None:
        if not isinstance(target, str) or not target:
            raise ValueError(f"target: {target!r}; give host:port or unix:PATH")
        self.target = target
        self.transport = check_transport(transport)
        self.timeout = timeout
        self.shm_dir = shm_dir
        self.max_request_bytes = max_request_bytes or _core.DEFAULT_MAX_REQUEST_BYTES
        self.stream_chunk_bytes = max(1, stream_chunk_bytes)
        #: The transport of the last array sort: "shm", "stream" or "bytes".
        self.last_transport: Optional[str] = None
        #: Where sortd ran the last array sort, as its answer says: "cpu", "cuda:0", ...
        self.last_device: Optional[str] = None
        #: Why transport="auto" does not use shared memory (None while it may).
        self.shm_unavailable: Optional[str] = (
            None if is_local(target) else "the target is not a Unix socket or loopback address")
        credentials, options = channel_args(tls)
        self._channel = (grpc.secure_channel(target, credentials, options) if credentials
                         else grpc.insecure_channel(target, options))
        self._sort_keys = self._channel.unary_unary(_core.SORT_KEYS)
        self._sort_stream = self._channel.stream_stream(_core.SORT_STREAM)
        self._sort_session = self._channel.stream_stream(_core.SORT_SESSION)
        self._health = self._channel.unary_unary(_core.HEALTH_CHECK)
        self._shm_stub = pb_grpc.SharedMemoryStub(self._channel)
        self._shm_lock = threading.Lock()
        self._scratch: Optional[Region] = None
        self._user_regions: list[Region] = []
        self._closed = False

    # ---- life cycle ----
    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Unregisters and removes this client's regions and closes the channel. Arrays that view
        a region (``copy=False`` results, :meth:`empty`) stay valid."""
        if self._closed:
            return
        self._closed = True
        with self._shm_lock:
            for region in [r for r in [self._scratch] if r] + self._user_regions:
                self._drop(region)
            self._scratch = None
            self._user_regions.clear()
        self._channel.close()

    def wait_for_server(self, timeout: float = 30.0) -> None:
        """Waits until the server reports SERVING (gRPC health), connecting as soon as it listens;
        SortdError (e.g. DEADLINE_EXCEEDED) when it does not within `timeout` seconds."""
        try:
            raw = self._health(b"", timeout=timeout, wait_for_ready=True)
        except grpc.RpcError as e:
            raise SortdError.from_rpc_error(e) from None
        if not _core.health_serving(raw):
            raise SortdError(grpc.StatusCode.UNAVAILABLE, "the server is not SERVING")

    # ---- the sorts ----
    def sort(self, a: Any, *, axis: int = -1, descending: bool = False, stable: bool = False,
             algorithm: str = "auto", copy: bool = True, overwrite_input: bool = False,
             transport: Optional[str] = None) -> np.ndarray:
        """A sorted copy of the 1-d array `a`, like ``np.sort(a)``.

        `a` may be any array-like of uint32, int32, float32, uint64, int64 or float64; strided,
        big-endian and read-only arrays are converted first. The result is little-endian.
        Floats follow sortd's total order: -NaN < -Inf < ... < -0.0 < +0.0 < ... < +Inf < +NaN.
        ``descending=True`` is the exact reverse; ``stable=True`` keeps equal keys in input order
        (in both directions). `algorithm` is a hint: "auto", "radix", "bitonic",
        "odd_even_merge", "odd_even_transposition", "library" or "cpu".

        ``copy=False`` lets the result be a view instead of an array of its own: read-only over
        gRPC's answer bytes, or writable over this client's shared-memory region, valid until its
        next shared-memory sort. ``overwrite_input=True`` writes the result into `a` and returns
        `a`; for an array from :meth:`empty`, sortd sorts it where it lies, with no copy at all.
        """
        arrays, opts = prepare(a, None, axis, descending, stable, algorithm, False, transport)
        if overwrite_input:
            check_overwritable(a)
        result = self._sort(arrays, opts, copy and not overwrite_input, overwrite_input, transport)
        return write_back(a, result.keys) if overwrite_input else result.keys

    def argsort(self, a: Any, *, axis: int = -1, descending: bool = False, stable: bool = False,
                algorithm: str = "auto", transport: Optional[str] = None) -> np.ndarray:
        """The permutation that sorts `a`, as ``np.argsort(a)``: ``a[argsort(a)]`` is sorted.

        Indices are ``np.intp`` as numpy's (the server sends uint32: one conversion here). Keys,
        order and options as :meth:`sort`; ties are in input order only with ``stable=True``.
        """
        arrays, opts = prepare(a, None, axis, descending, stable, algorithm, True, transport)
        return indices_of(self._sort(arrays, opts, False, False, transport))

    def sort_pairs(self, keys: Any, values: Any, *, axis: int = -1, descending: bool = False,
                   stable: bool = False, algorithm: str = "auto", copy: bool = True,
                   overwrite_input: bool = False,
                   transport: Optional[str] = None) -> tuple[np.ndarray, np.ndarray]:
        """`keys` sorted as by :meth:`sort`, and `values` permuted with them.

        `values` is a 1-d array of the same length with 4- or 8-byte elements of any dtype
        (moved as opaque records, in their own byte order). Returns ``(keys, values)``.
        `copy` and `overwrite_input` as for :meth:`sort`, applying to both arrays.
        """
        arrays, opts = prepare(keys, values, axis, descending, stable, algorithm, False, transport)
        if overwrite_input:
            check_overwritable(keys, values)
        result = self._sort(arrays, opts, copy and not overwrite_input, overwrite_input, transport)
        assert result.values is not None
        if overwrite_input:
            return write_back(keys, result.keys), write_back(values, result.values)
        return result.keys, result.values

    def sort_many(self, arrays: Iterable[Any], *, descending: bool = False,
                  stable: bool = False, algorithm: str = "auto",
                  return_exceptions: bool = False) -> list[Union[np.ndarray, SortdError]]:
        """Sorts many arrays over one SortSession call, answers in order; for many small arrays,
        where a call of its own per array would cost more than the sort.

        `arrays`: a sequence of 1-d arrays (the rows of a 2-d array too), all checked before the
        call; or an iterator, whose arrays are checked and sent as they are taken from it. Each
        request is run by itself: one that fails (say, past the server's limits) does not stop the
        others. Returns the sorted arrays in order. With ``return_exceptions=False`` (default)
        the first failed request's SortdError (its ``index`` says which) is raised once every
        answer is in; with True, its place in the list holds the SortdError instead.
        Over bytes: shared memory and SortStream are for single large arrays.
        """
        opts = make_options(descending, stable, algorithm, False)
        pending: collections.deque = collections.deque()
        local_error: list[BaseException] = []

        def requests() -> Iterator[bytes]:
            try:
                for item in items:
                    checked = item if isinstance(item, Arrays) else check_arrays(item)
                    pending.append(checked)
                    yield _core.bytes_request(checked, opts)
            except Exception as e:  # gRPC would hide it behind CANCELLED
                local_error.append(e)
                raise

        items: Iterable[Any] = arrays
        if not isinstance(arrays, Iterator):
            items = [check_arrays(a) for a in arrays]
        results: list[Union[np.ndarray, SortdError]] = []
        call = self._sort_session(requests(), timeout=self.timeout)
        try:
            for index, raw in enumerate(call):
                answer = decode_answer(raw)
                checked = pending.popleft()
                error = _core.answer_error(answer, index)
                results.append(error if error else
                               _core.result_from_answer(answer, checked, opts, True).keys)
        except grpc.RpcError as e:
            if local_error:
                raise local_error[0] from None
            raise SortdError.from_rpc_error(e) from None
        if local_error:
            raise local_error[0]
        if not return_exceptions:
            for r in results:
                if isinstance(r, SortdError):
                    raise r
        return results

    def empty(self, n: int, dtype: Any) -> np.ndarray:
        """A new 1-d array of `n` elements inside a shared-memory region of its own, registered
        with sortd: fill it in place, then sort it with ``overwrite_input=True`` (no copy at all)
        or pass it as input (no copy of the input). Needs a server on this host with
        ``--shared_memory``. The region is removed once no array views it any more."""
        dt = np.dtype(dtype)
        if dt.hasobject or dt.itemsize not in (4, 8):
            raise TypeError(f"dtype {dt}: give a 4- or 8-byte key or value dtype")
        if n < 0:
            raise ValueError(f"n: {n}; give a length of at least 0")
        with self._shm_lock:
            self._sweep()
            region = Region(self.shm_dir, max(1, n * dt.itemsize))
            try:
                self._register(region)
            except BaseException:
                region.release()
                raise
            self._user_regions.append(region)
            return region.view(0, n, dt)

    # ---- transports ----
    def _sort(self, arrays: Arrays, opts: Options, copy: bool, in_place: bool,
              transport: Optional[str]) -> Result:
        result = self._sort_on(arrays, opts, copy, in_place, transport)
        self.last_device = result.device
        return result

    def _sort_on(self, arrays: Arrays, opts: Options, copy: bool, in_place: bool,
                 transport: Optional[str]) -> Result:
        chosen = transport or self.transport
        if chosen in ("auto", "shm") and arrays.n > 0:
            result = self._sort_shm(arrays, opts, copy, in_place, required=chosen == "shm")
            if result is not None:
                return result
        payload = arrays.keys.nbytes + (0 if arrays.values is None else arrays.values.nbytes)
        if chosen == "stream" or (chosen in ("auto", "shm") and payload > self.max_request_bytes):
            return self._sort_via_stream(arrays, opts)
        try:
            self.last_transport = "bytes"
            return self._sort_bytes(arrays, opts, copy)
        except SortdError as e:
            limit = _core.learned_limit(e)
            if chosen == "bytes" or limit is None:
                raise
            self.max_request_bytes = min(self.max_request_bytes, limit)
            return self._sort_via_stream(arrays, opts)

    def _sort_bytes(self, arrays: Arrays, opts: Options, copy: bool) -> Result:
        try:
            raw = self._sort_keys(_core.bytes_request(arrays, opts), timeout=self.timeout)
        except grpc.RpcError as e:
            raise SortdError.from_rpc_error(e) from None
        return _core.result_from_answer(decode_answer(raw), arrays, opts, copy)

    def _sort_via_stream(self, arrays: Arrays, opts: Options) -> Result:
        self.last_transport = "stream"
        try:
            return self._stream(arrays, opts)
        except SortdError as e:
            limit = _core.answer_chunk_limit(e, self.max_request_bytes)
            if limit is None:
                raise
            self.max_request_bytes = limit  # a server with a smaller limit than it was told
            return self._stream(arrays, opts)

    def _stream(self, arrays: Arrays, opts: Options) -> Result:
        chunk = min(self.stream_chunk_bytes, self.max_request_bytes)
        assembler = _core.StreamAssembler(arrays, opts)
        call = self._sort_stream(_core.stream_requests(arrays, opts, chunk), timeout=self.timeout)
        try:
            for raw in call:
                assembler.add(decode_answer(raw))
        except grpc.RpcError as e:
            raise SortdError.from_rpc_error(e) from None
        except BaseException:
            call.cancel()
            raise
        return assembler.result()

    def _sort_shm(self, arrays: Arrays, opts: Options, copy: bool, in_place: bool,
                  required: bool) -> Optional[Result]:
        if not required and self.shm_unavailable:
            return None
        with self._shm_lock:
            self._sweep()
            located = {"keys": _core.locate(arrays.keys, self._user_regions),
                       "values": None if arrays.values is None
                       else _core.locate(arrays.values, self._user_regions)}
            in_place = in_place and located["keys"] is not None and (
                arrays.values is None or located["values"] is not None)
            need = _core.scratch_bytes(arrays, opts, located, in_place)
            try:
                scratch = self._scratch_of(need)
            except (SortdError, OSError) as e:
                if required:
                    raise
                if not isinstance(e, SortdError) or e.code in _SHM_UNUSABLE:
                    self.shm_unavailable = f"shared memory refused: {e}"
                return None
            plan = _core.plan_shm(arrays, opts, scratch, located, in_place)
            self.last_transport = "shm"
            try:
                fields = decode_fields(self._sort_keys(plan.request, timeout=self.timeout))
            except grpc.RpcError as e:
                self._retire_scratch()
                raise SortdError.from_rpc_error(e) from None
            except BaseException:
                self._retire_scratch()
                raise
            error = _core.fields_error(fields)
            if error:
                self._retire_scratch()
                raise error
            return _core.result_from_shm(plan, arrays, copy, fields.device)

    def _retire_scratch(self) -> None:
        """After a failed call sortd may still be sorting into the scratch region (a call whose
        deadline passed here runs on there): the next sort gets a region of its own."""
        if self._scratch is not None:
            old, self._scratch = self._scratch, None
            self._drop(old)

    # ---- regions ----
    def _scratch_of(self, need: int) -> Region:
        if self._scratch is not None and self._scratch.size >= need:
            return self._scratch
        old = self._scratch
        size = max(need, _core.MIN_REGION_BYTES, 2 * old.size if old else 0)
        region = Region(self.shm_dir, (size + 4095) // 4096 * 4096)
        try:
            self._register(region)
        except BaseException:
            region.release()
            raise
        self._scratch = region
        if old is not None:
            self._drop(old)
        return region

    def _register(self, region: Region) -> None:
        try:
            self._shm_stub.RegisterRegion(
                pb.RegisterRegionRequest(name=region.name, byte_size=region.size),
                timeout=self.timeout)
        except grpc.RpcError as e:
            raise SortdError.from_rpc_error(e) from None
        region.registered = True

    def _drop(self, region: Region) -> None:
        if region.registered:
            region.registered = False
            try:
                self._shm_stub.UnregisterRegion(pb.UnregisterRegionRequest(name=region.name),
                                                timeout=_UNREGISTER_TIMEOUT)
            except grpc.RpcError:
                pass  # the server is gone or restarted: nothing to unregister
        region.release()

    def _sweep(self) -> None:
        """Drops the regions of empty() arrays that nothing views any more."""
        live = []
        for region in self._user_regions:
            if region.release_if_unused():
                self._drop(region)
            else:
                live.append(region)
        self._user_regions = live
