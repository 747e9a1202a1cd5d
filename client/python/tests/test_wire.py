"""The requests and answers the client builds and reads by hand are the bytes protobuf makes."""
from __future__ import annotations

import numpy as np
import pytest

from sortd import _core
from sortd._shm import Region, align_up
from sortd._types import check_arrays, make_options
from sortd._wire import decode_fields, region_range
from sortd.v1 import sortd_pb2 as pb


@pytest.mark.parametrize("offset, nbytes", [(0, 4), (64, 4000), (1 << 40, (1 << 33) + 8), (5, 0)])
def test_region_range_is_protobufs(offset, nbytes):
    name = "sortd-py-123-4-abcdef01"
    for field, attr in ((9, "keys_region"), (13, "out_indices_region")):
        expected = pb.SortRequest(**{attr: pb.RegionRange(region=name, offset=offset,
                                                          byte_size=nbytes)})
        assert region_range(field, name, offset, nbytes) == expected.SerializeToString()


def _expected(arrays, opts, ranges: dict) -> bytes:
    return pb.SortRequest(key_type=arrays.key_type, value_width=arrays.value_width,
                          **opts.header_fields(),
                          **{k: pb.RegionRange(region=r.name, offset=o, byte_size=b)
                             for k, (r, o, b) in ranges.items()}).SerializeToString()


@pytest.mark.parametrize("descending, stable, algorithm, indices",
                         [(False, False, "auto", False), (True, True, "radix", True)])
@pytest.mark.parametrize("with_values", [False, True])
def test_shm_request_is_protobufs(tmp_path, descending, stable, algorithm, indices, with_values):
    n = 1000
    kb, vb = align_up(8 * n), align_up(4 * n)  # 8000 and 4032: the scratch layout's steps
    opts = make_options(descending, stable, algorithm, indices)
    lent = Region(str(tmp_path), 1 << 16)
    scratch = Region(str(tmp_path), 1 << 16)
    try:
        keys = lent.view(128, n, np.dtype("<f8"))
        values = lent.view(128 + 8 * n, n, np.dtype("<u4")) if with_values else None
        arrays = check_arrays(keys, values)
        # Inputs in `lent`, sorted where they lie.
        located = {"keys": (lent, 128), "values": (lent, 128 + 8 * n) if with_values else None}
        plan = _core.plan_shm(arrays, opts, scratch, located, in_place=not indices)
        ranges = {"keys_region": (lent, 128, 8 * n)}
        if with_values:
            ranges["values_region"] = (lent, 128 + 8 * n, 4 * n)
        if indices:  # not in place: outputs in the scratch region
            ranges["out_keys_region"] = (scratch, 0, 8 * n)
            at = kb
            if with_values:
                ranges["out_values_region"] = (scratch, at, 4 * n)
                at += vb
            ranges["out_indices_region"] = (scratch, at, 4 * n)
        else:
            ranges["out_keys_region"] = ranges["keys_region"]
            if with_values:
                ranges["out_values_region"] = ranges["values_region"]
        assert plan.request == _expected(arrays, opts, ranges)
        # Inputs copied into the scratch region, outputs after them.
        located = {"keys": None, "values": None}
        plan = _core.plan_shm(arrays, opts, scratch, located, in_place=False)
        ranges = {"keys_region": (scratch, 0, 8 * n), "out_keys_region": (scratch, kb, 8 * n)}
        if with_values:
            ranges["values_region"] = (scratch, 2 * kb, 4 * n)  # after the keys' input and output
            ranges["out_values_region"] = (scratch, 2 * kb + vb, 4 * n)
        if indices:
            ranges["out_indices_region"] = (scratch, 2 * kb + (2 * vb if with_values else 0), 4 * n)
        assert plan.request == _expected(arrays, opts, ranges)
    finally:
        lent.release()
        scratch.release()


def test_bytes_request_is_protobufs():
    arrays = check_arrays(np.arange(3, dtype=np.int64), np.arange(3, dtype=np.float32))
    opts = make_options(True, False, "bitonic", True)
    expected = pb.SortRequest(key_type=arrays.key_type, value_width=4, **opts.header_fields(),
                              keys=arrays.keys.tobytes(), values=arrays.values.tobytes())
    # The arrays follow the small fields, out of field order: equal once parsed.
    assert pb.SortRequest.FromString(_core.bytes_request(arrays, opts)) == expected


def test_decode_fields_reads_an_error():
    raw = pb.SortResponse(error=pb.RequestError(code=8, message="too large")).SerializeToString()
    error = _core.fields_error(decode_fields(raw), 3)
    assert error is not None and error.code.name == "RESOURCE_EXHAUSTED" and error.index == 3
    assert _core.fields_error(decode_fields(pb.SortResponse(device="cpu").SerializeToString())) \
        is None


def test_decode_fields_refuses_what_is_no_sortresponse():
    # A truncated answer (its device string cut short) and a wire type protobuf never writes.
    whole = pb.SortResponse(device="cuda:0").SerializeToString()
    for raw in (whole[:-2], b"\x0f"):
        with pytest.raises(ValueError, match="SortResponse"):
            decode_fields(raw)
