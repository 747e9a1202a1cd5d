"""The argument handling of the public calls, shared by sortd.Client and sortd.aio.Client."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from sortd._core import Result
from sortd._types import Arrays, Options, check_arrays, check_transport, make_options


def prepare(keys: Any, values: Any, axis: int, descending: bool, stable: bool, algorithm: str,
            return_indices: bool, transport: Optional[str]) -> tuple[Arrays, Options]:
    if transport is not None:
        check_transport(transport)
    return (check_arrays(keys, values, axis),
            make_options(descending, stable, algorithm, return_indices))


def check_overwritable(*arrays: Any) -> None:
    for a in arrays:
        if not isinstance(a, np.ndarray) or not a.flags.writeable:
            raise ValueError("overwrite_input=True needs writable numpy arrays; "
                             f"got {type(a).__name__}"
                             + ("" if not isinstance(a, np.ndarray) else " (read-only)"))


def indices_of(result: Result) -> np.ndarray:
    assert result.indices is not None
    # numpy's argsort returns intp; the wire carries uint32 (sortd sorts < 2^32 keys per call).
    return result.indices.astype(np.intp)


def write_back(target: np.ndarray, got: np.ndarray) -> np.ndarray:
    # `got` is `target` itself when sortd sorted it where it lies.
    if got is not target and not np.shares_memory(target, got):
        target[...] = got
    return target
