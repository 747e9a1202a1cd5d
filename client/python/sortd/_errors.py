"""The one exception type of sortd calls."""
from __future__ import annotations

from typing import Optional

import grpc

_CODES_BY_NUMBER = {code.value[0]: code for code in grpc.StatusCode}


class SortdError(Exception):
    """A sort or region call that sortd (or gRPC on its way) ended with a status other than OK.

    ``code`` is the :class:`grpc.StatusCode`; ``details`` is the server's message, unchanged.
    For a request of :meth:`sortd.Client.sort_many`, ``index`` is its position in the batch.
    Client-side validation errors are never a SortdError: they are TypeError or ValueError,
    raised before any call.
    """

    def __init__(self, code: grpc.StatusCode, details: str, index: Optional[int] = None) -> None:
        self.code = code
        self.details = details
        self.index = index
        where = "" if index is None else f"request {index}: "
        super().__init__(f"{where}{code.name}: {details}")

    def __reduce__(self) -> tuple:
        # Exception's own pickling would call __init__ with the message alone; Dask ships a
        # failed task's exception (and its causes) back to the client by pickle.
        return (type(self), (self.code, self.details, self.index))

    @classmethod
    def from_rpc_error(cls, error: grpc.RpcError) -> "SortdError":
        # grpc.RpcError raised by a call is also a grpc.Call with code() and details().
        return cls(error.code(), error.details() or "")  # type: ignore[attr-defined]

    @classmethod
    def from_number(cls, code: int, details: str, index: Optional[int] = None) -> "SortdError":
        return cls(_CODES_BY_NUMBER.get(code, grpc.StatusCode.UNKNOWN), details, index)
