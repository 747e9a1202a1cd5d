"""sortd.aio.Client: :class:`sortd.Client`'s calls on grpc.aio, for asyncio programs.

Same arguments, transports, results and errors; every call is a coroutine::

    async with sortd.aio.Client("localhost:50051") as client:
        keys = await client.sort(a)
"""
from __future__ import annotations

import asyncio
import collections
import collections.abc
from typing import Any, AsyncIterator, Iterable, Optional, Union

import grpc
import grpc.aio
import numpy as np

from sortd import _core
from sortd._api import check_overwritable, indices_of, prepare, write_back
from sortd._channel import TLS, channel_args, is_local
from sortd._core import Result
from sortd._errors import SortdError
from sortd._shm import Region
from sortd._types import Arrays, Options, check_arrays, check_transport, make_options
from sortd._wire import decode_answer, decode_fields
from sortd.client import _SHM_UNUSABLE, _UNREGISTER_TIMEOUT
from sortd.v1 import sortd_pb2 as pb
from sortd.v1 import sortd_pb2_grpc as pb_grpc

__all__ = ["Client"]


class Client:
    """asyncio twin of :class:`sortd.Client` (see there for every argument). Use it inside the
    event loop that runs its calls; ``async with`` closes it."""

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
        self.last_transport: Optional[str] = None
        self.last_device: Optional[str] = None
        self.shm_unavailable: Optional[str] = (
            None if is_local(target) else "the target is not a Unix socket or loopback address")
        credentials, options = channel_args(tls)
        self._channel = (grpc.aio.secure_channel(target, credentials, options) if credentials
                         else grpc.aio.insecure_channel(target, options))
        self._sort_keys = self._channel.unary_unary(_core.SORT_KEYS)
        self._sort_stream = self._channel.stream_stream(_core.SORT_STREAM)
        self._sort_session = self._channel.stream_stream(_core.SORT_SESSION)
        self._health = self._channel.unary_unary(_core.HEALTH_CHECK)
        self._shm_stub = pb_grpc.SharedMemoryStub(self._channel)
        self._shm_lock = asyncio.Lock()
        self._scratch: Optional[Region] = None
        self._user_regions: list[Region] = []
        self._closed = False

    async def __aenter__(self) -> "Client":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    async def close(self) -> None:
        """As :meth:`sortd.Client.close`."""
        if self._closed:
            return
        self._closed = True
        async with self._shm_lock:
            for region in [r for r in [self._scratch] if r] + self._user_regions:
                await self._drop(region)
            self._scratch = None
            self._user_regions.clear()
        await self._channel.close()

    async def wait_for_server(self, timeout: float = 30.0) -> None:
        """As :meth:`sortd.Client.wait_for_server`."""
        try:
            raw = await self._health(b"", timeout=timeout, wait_for_ready=True)
        except grpc.RpcError as e:
            raise SortdError.from_rpc_error(e) from None
        if not _core.health_serving(raw):
            raise SortdError(grpc.StatusCode.UNAVAILABLE, "the server is not SERVING")

    async def sort(self, a: Any, *, axis: int = -1, descending: bool = False,
                   stable: bool = False, algorithm: str = "auto", copy: bool = True,
                   overwrite_input: bool = False,
                   transport: Optional[str] = None) -> np.ndarray:
        """As :meth:`sortd.Client.sort`."""
        arrays, opts = prepare(a, None, axis, descending, stable, algorithm, False, transport)
        if overwrite_input:
            check_overwritable(a)
        result = await self._sort(arrays, opts, copy and not overwrite_input, overwrite_input,
                                  transport)
        return write_back(a, result.keys) if overwrite_input else result.keys

    async def argsort(self, a: Any, *, axis: int = -1, descending: bool = False,
                      stable: bool = False, algorithm: str = "auto",
                      transport: Optional[str] = None) -> np.ndarray:
        """As :meth:`sortd.Client.argsort`: ``np.intp`` indices."""
        arrays, opts = prepare(a, None, axis, descending, stable, algorithm, True, transport)
        return indices_of(await self._sort(arrays, opts, False, False, transport))

    async def sort_pairs(self, keys: Any, values: Any, *, axis: int = -1,
                         descending: bool = False, stable: bool = False, algorithm: str = "auto",
                         copy: bool = True, overwrite_input: bool = False,
                         transport: Optional[str] = None) -> tuple[np.ndarray, np.ndarray]:
        """As :meth:`sortd.Client.sort_pairs`."""
        arrays, opts = prepare(keys, values, axis, descending, stable, algorithm, False, transport)
        if overwrite_input:
            check_overwritable(keys, values)
        result = await self._sort(arrays, opts, copy and not overwrite_input, overwrite_input,
                                  transport)
        assert result.values is not None
        if overwrite_input:
            return write_back(keys, result.keys), write_back(values, result.values)
        return result.keys, result.values

    async def sort_many(self, arrays: Iterable[Any], *, descending: bool = False,
                        stable: bool = False, algorithm: str = "auto",
                        return_exceptions: bool = False) -> list[Union[np.ndarray, SortdError]]:
        """As :meth:`sortd.Client.sort_many` (a sequence, or a sync iterator taken lazily)."""
        opts = make_options(descending, stable, algorithm, False)
        pending: collections.deque = collections.deque()
        local_error: list[BaseException] = []
        items: Iterable[Any] = arrays
        if not isinstance(arrays, collections.abc.Iterator):
            items = [check_arrays(a) for a in arrays]

        async def requests() -> AsyncIterator[bytes]:
            try:
                for item in items:
                    checked = item if isinstance(item, Arrays) else check_arrays(item)
                    pending.append(checked)
                    yield _core.bytes_request(checked, opts)
            except Exception as e:  # gRPC would hide it behind CANCELLED
                local_error.append(e)
                raise

        results: list[Union[np.ndarray, SortdError]] = []
        call = self._sort_session(requests(), timeout=self.timeout)
        try:
            index = 0
            async for raw in call:
                answer = decode_answer(raw)
                checked = pending.popleft()
                error = _core.answer_error(answer, index)
                results.append(error if error else
                               _core.result_from_answer(answer, checked, opts, True).keys)
                index += 1
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

    async def empty(self, n: int, dtype: Any) -> np.ndarray:
        """As :meth:`sortd.Client.empty`."""
        dt = np.dtype(dtype)
        if dt.hasobject or dt.itemsize not in (4, 8):
            raise TypeError(f"dtype {dt}: give a 4- or 8-byte key or value dtype")
        if n < 0:
            raise ValueError(f"n: {n}; give a length of at least 0")
        async with self._shm_lock:
            await self._sweep()
            region = Region(self.shm_dir, max(1, n * dt.itemsize))
            try:
                await self._register(region)
            except BaseException:
                region.release()
                raise
            self._user_regions.append(region)
            return region.view(0, n, dt)

    # ---- transports (as sortd.Client's) ----
    async def _sort(self, arrays: Arrays, opts: Options, copy: bool, in_place: bool,
                    transport: Optional[str]) -> Result:
        result = await self._sort_on(arrays, opts, copy, in_place, transport)
        self.last_device = result.device
        return result

    async def _sort_on(self, arrays: Arrays, opts: Options, copy: bool, in_place: bool,
                       transport: Optional[str]) -> Result:
        chosen = transport or self.transport
        if chosen in ("auto", "shm") and arrays.n > 0:
            result = await self._sort_shm(arrays, opts, copy, in_place, chosen == "shm")
            if result is not None:
                return result
        payload = arrays.keys.nbytes + (0 if arrays.values is None else arrays.values.nbytes)
        if chosen == "stream" or (chosen in ("auto", "shm") and payload > self.max_request_bytes):
            return await self._sort_via_stream(arrays, opts)
        try:
            self.last_transport = "bytes"
            raw = await self._unary(_core.bytes_request(arrays, opts))
            return _core.result_from_answer(decode_answer(raw), arrays, opts, copy)
        except SortdError as e:
            limit = _core.learned_limit(e)
            if chosen == "bytes" or limit is None:
                raise
            self.max_request_bytes = min(self.max_request_bytes, limit)
            return await self._sort_via_stream(arrays, opts)

    async def _unary(self, request: bytes) -> bytes:
        try:
            return await self._sort_keys(request, timeout=self.timeout)
        except grpc.RpcError as e:
            raise SortdError.from_rpc_error(e) from None

    async def _sort_via_stream(self, arrays: Arrays, opts: Options) -> Result:
        self.last_transport = "stream"
        try:
            return await self._stream(arrays, opts)
        except SortdError as e:
            limit = _core.answer_chunk_limit(e, self.max_request_bytes)
            if limit is None:
                raise
            self.max_request_bytes = limit  # a server with a smaller limit than it was told
            return await self._stream(arrays, opts)

    async def _stream(self, arrays: Arrays, opts: Options) -> Result:
        chunk = min(self.stream_chunk_bytes, self.max_request_bytes)
        assembler = _core.StreamAssembler(arrays, opts)
        call = self._sort_stream(_core.stream_requests(arrays, opts, chunk), timeout=self.timeout)
        try:
            async for raw in call:
                assembler.add(decode_answer(raw))
        except grpc.RpcError as e:
            raise SortdError.from_rpc_error(e) from None
        except BaseException:
            call.cancel()
            raise
        return assembler.result()

    async def _sort_shm(self, arrays: Arrays, opts: Options, copy: bool, in_place: bool,
                        required: bool) -> Optional[Result]:
        if not required and self.shm_unavailable:
            return None
        async with self._shm_lock:
            await self._sweep()
            located = {"keys": _core.locate(arrays.keys, self._user_regions),
                       "values": None if arrays.values is None
                       else _core.locate(arrays.values, self._user_regions)}
            in_place = in_place and located["keys"] is not None and (
                arrays.values is None or located["values"] is not None)
            need = _core.scratch_bytes(arrays, opts, located, in_place)
            try:
                scratch = await self._scratch_of(need)
            except (SortdError, OSError) as e:
                if required:
                    raise
                if not isinstance(e, SortdError) or e.code in _SHM_UNUSABLE:
                    self.shm_unavailable = f"shared memory refused: {e}"
                return None
            plan = _core.plan_shm(arrays, opts, scratch, located, in_place)
            self.last_transport = "shm"
            try:
                fields = decode_fields(await self._unary(plan.request))
                error = _core.fields_error(fields)
            except BaseException:
                await self._retire_scratch()
                raise
            if error:
                await self._retire_scratch()
                raise error
            return _core.result_from_shm(plan, arrays, copy, fields.device)

    async def _retire_scratch(self) -> None:
        """After a failed call sortd may still be sorting into the scratch region (a call whose
        deadline passed here runs on there): the next sort gets a region of its own."""
        if self._scratch is not None:
            old, self._scratch = self._scratch, None
            await self._drop(old)

    async def _scratch_of(self, need: int) -> Region:
        if self._scratch is not None and self._scratch.size >= need:
            return self._scratch
        old = self._scratch
        size = max(need, _core.MIN_REGION_BYTES, 2 * old.size if old else 0)
        region = Region(self.shm_dir, (size + 4095) // 4096 * 4096)
        try:
            await self._register(region)
        except BaseException:
            region.release()
            raise
        self._scratch = region
        if old is not None:
            await self._drop(old)
        return region

    async def _register(self, region: Region) -> None:
        try:
            await self._shm_stub.RegisterRegion(
                pb.RegisterRegionRequest(name=region.name, byte_size=region.size),
                timeout=self.timeout)
        except grpc.RpcError as e:
            raise SortdError.from_rpc_error(e) from None
        region.registered = True

    async def _drop(self, region: Region) -> None:
        if region.registered:
            region.registered = False
            try:
                await self._shm_stub.UnregisterRegion(
                    pb.UnregisterRegionRequest(name=region.name), timeout=_UNREGISTER_TIMEOUT)
            except grpc.RpcError:
                pass  # the server is gone or restarted: nothing to unregister
        region.release()

    async def _sweep(self) -> None:
        live = []
        for region in self._user_regions:
            if region.release_if_unused():
                await self._drop(region)
            else:
                live.append(region)
        self._user_regions = live
