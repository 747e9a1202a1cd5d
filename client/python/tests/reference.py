"""An independent reference of sortd's order, from numpy's stable argsort: floats mapped to the
integers whose order is IEEE 754 totalOrder (-NaN < -Inf < ... < -0.0 < +0.0 < ... < +NaN)."""
from __future__ import annotations

import numpy as np

KEY_DTYPES = [np.uint32, np.int32, np.float32, np.uint64, np.int64, np.float64]


def order_keys(a: np.ndarray) -> np.ndarray:
    if a.dtype.kind != "f":
        return a
    signed = np.dtype(f"<i{a.dtype.itemsize}")
    bits = a.view(signed)
    magnitude = np.iinfo(signed).max
    # Negative floats: their magnitude bits, flipped, order them from -NaN up to -0.0.
    return bits ^ ((bits >> (8 * a.dtype.itemsize - 1)) & magnitude)


def argsort(a: np.ndarray, descending: bool) -> np.ndarray:
    keys = order_keys(a)
    # ~ reverses the order of signed and unsigned integers alike, without overflow.
    return np.argsort(~keys if descending else keys, kind="stable")


def bits(a: np.ndarray) -> np.ndarray:
    """Compare floats by their bits: NaN == NaN, -0.0 != 0.0."""
    return a.view(f"<u{a.dtype.itemsize}") if a.dtype.kind == "f" else a


def keys(dtype, n: int, seed: int) -> np.ndarray:
    """Random keys with many ties and, for floats, every kind of special value."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "f":
        a = rng.standard_normal(n).astype(dt) * 1000
        specials = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0], dtype=dt)
        # NaNs with other payloads, both signs.
        u = np.dtype(f"<u{dt.itemsize}")
        payload = np.array([1, 12345], dtype=u) | np.array(np.inf, dtype=dt).view(u)
        specials = np.concatenate([specials, payload.view(dt), (-payload.view(dt))])
        pick = rng.random(n) < 0.3
        a[pick] = rng.choice(specials, pick.sum())
        return a
    info = np.iinfo(dt)
    a = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
    if n:  # ties: a third of the keys from a pool of a few values, extremes included
        pool = np.array([info.min, info.max, 0, 1, 7], dtype=dt)
        pick = rng.random(n) < 0.33
        a[pick] = rng.choice(pool, pick.sum())
    return a
