"""sortd for Python: numpy arrays sorted by a sortd server, with no copies on the same host.

    import sortd
    with sortd.Client("localhost:50051") as client:
        client.sort(np.array([3, 1, 2], dtype=np.uint32))        # array([1, 2, 3], dtype=uint32)

See :class:`sortd.Client` (and :mod:`sortd.aio` for asyncio) and docs/python.md.
"""
from sortd._channel import TLS
from sortd._errors import SortdError
from sortd.client import Client

__all__ = ["Client", "SortdError", "TLS", "KEY_DTYPES"]

#: The key dtypes sortd sorts natively.
KEY_DTYPES = ("uint32", "int32", "float32", "uint64", "int64", "float64")
