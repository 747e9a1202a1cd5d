"""What the client accepts, checked before any call: key and value dtypes, shapes, options."""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from sortd.v1 import sortd_pb2 as pb

# The six key dtypes, little-endian as on the wire.
KEY_TYPES: dict[np.dtype, int] = {
    np.dtype("<u4"): pb.KEY_TYPE_UINT32,
    np.dtype("<i4"): pb.KEY_TYPE_INT32,
    np.dtype("<f4"): pb.KEY_TYPE_FLOAT32,
    np.dtype("<u8"): pb.KEY_TYPE_UINT64,
    np.dtype("<i8"): pb.KEY_TYPE_INT64,
    np.dtype("<f8"): pb.KEY_TYPE_FLOAT64,
}
SUPPORTED_KEYS = "uint32, int32, float32, uint64, int64 or float64"

ALGORITHMS: dict[str, int] = {
    "auto": pb.ALGORITHM_AUTO,
    "radix": pb.ALGORITHM_RADIX,
    "bitonic": pb.ALGORITHM_BITONIC,
    "odd_even_merge": pb.ALGORITHM_ODD_EVEN_MERGE,
    "odd_even_transposition": pb.ALGORITHM_ODD_EVEN_TRANSPOSITION,
    "library": pb.ALGORITHM_LIBRARY,
    "cpu": pb.ALGORITHM_CPU,
}
TRANSPORTS = ("auto", "shm", "stream", "bytes")


@dataclass(frozen=True)
class Options:
    """One sort's options, checked."""

    descending: bool = False
    stable: bool = False
    algorithm: str = "auto"
    return_indices: bool = False

    def header_fields(self) -> dict[str, Any]:
        return dict(
            order=pb.SORT_ORDER_DESCENDING if self.descending else pb.SORT_ORDER_ASCENDING,
            stable=self.stable,
            return_indices=self.return_indices,
            algorithm=ALGORITHMS[self.algorithm],
        )


def _check_flag(name: str, flag: Any) -> None:
    if not isinstance(flag, (bool, np.bool_)):
        raise TypeError(f"{name}: {flag!r}; give True or False")


def make_options(descending: Any, stable: Any, algorithm: Any, return_indices: bool) -> Options:
    _check_flag("descending", descending)
    _check_flag("stable", stable)
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm: {algorithm!r}; use one of {', '.join(ALGORITHMS)}")
    return _options(bool(descending), bool(stable), algorithm, bool(return_indices))


@functools.lru_cache(maxsize=None)  # at most 2 * 2 * 7 * 2 checked combinations
def _options(descending: bool, stable: bool, algorithm: str, return_indices: bool) -> Options:
    # Options are immutable: every sort with the same options shares one.
    return Options(descending, stable, algorithm, return_indices)


@dataclass(frozen=True)
class Arrays:
    """One sort's arrays as they go on the wire: 1-d, C-contiguous; keys little-endian."""

    keys: np.ndarray
    values: Optional[np.ndarray]
    key_type: int

    @property
    def n(self) -> int:
        return int(self.keys.shape[0])

    @property
    def value_width(self) -> int:
        return 0 if self.values is None else self.values.dtype.itemsize


def _one_d(a: Any, what: str, axis: int) -> np.ndarray:
    arr = np.asarray(a)
    if arr.ndim == 0:
        raise ValueError(f"{what}: a 0-d array (a scalar); sortd sorts 1-d arrays")
    if axis not in (-1, arr.ndim - 1):
        raise ValueError(f"{what}: axis={axis}; sortd sorts along the last axis only (axis=-1)")
    if arr.ndim != 1:
        raise ValueError(
            f"{what}: a {arr.ndim}-d array of shape {arr.shape}; sortd sorts 1-d arrays "
            "(sort the rows of a 2-d array with Client.sort_many(a))")
    return arr


def check_keys(a: Any, axis: int = -1, what: str = "keys") -> tuple[np.ndarray, int]:
    """The keys as a contiguous little-endian 1-d array (no copy when they already are one)."""
    if type(a) is np.ndarray and a.ndim == 1 and axis in (-1, 0) and a.flags.c_contiguous:
        # The common case, as the checks below would pass it but without their new view: a plain
        # array already as it goes on the wire (a big-endian dtype is not in KEY_TYPES).
        key_type = KEY_TYPES.get(a.dtype)
        if key_type is not None:
            return a, key_type
    arr = _one_d(a, what, axis)
    if arr.dtype.kind not in "uif" or arr.dtype.itemsize not in (4, 8):
        raise TypeError(f"{what}: dtype {arr.dtype} is not supported; sortd sorts {SUPPORTED_KEYS}")
    le = arr.dtype.newbyteorder("<")
    return np.ascontiguousarray(arr, dtype=le), KEY_TYPES[le]


def check_values(v: Any, n: int, axis: int = -1) -> np.ndarray:
    """Values are opaque 4- or 8-byte records: permuted byte for byte, in whatever byte order."""
    arr = _one_d(v, "values", axis)
    if arr.dtype.hasobject or arr.dtype.itemsize not in (4, 8):
        raise TypeError(
            f"values: dtype {arr.dtype} ({arr.dtype.itemsize} bytes) is not supported; sortd "
            "moves values of 4 or 8 bytes (e.g. int32, float32, uint64, float64)")
    if arr.shape[0] != n:
        raise ValueError(f"values: {arr.shape[0]} values for {n} keys; give one value per key")
    return np.ascontiguousarray(arr)


def check_arrays(keys: Any, values: Any = None, axis: int = -1) -> Arrays:
    k, key_type = check_keys(keys, axis)
    v = None if values is None else check_values(values, k.shape[0], axis)
    return Arrays(k, v, key_type)


def check_transport(transport: str) -> str:
    if transport not in TRANSPORTS:
        raise ValueError(f"transport: {transport!r}; use one of {', '.join(TRANSPORTS)}")
    return transport
