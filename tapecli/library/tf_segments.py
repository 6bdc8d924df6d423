"""tf.math's segment reductions beyond the sums: mean, sqrt_n, max and min, sorted (segment_*) and unsorted
(unsorted_segment_*), as compositions of unsorted_segment_sum, gather and where. Their gradients are
TensorFlow's: a mean's is the upstream gradient over the segment's count, a max's or min's is shared equally
among the elements that reach the extreme (_UnsortedSegmentMinOrMaxGrad)."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import TdfValueError
from tapecli.library.core import to_int
from tapecli.interpreter.registry import builtin
from tapecli.runtime.values import Tensor


def _counts(ids: np.ndarray, num: int, x: Tensor) -> Tensor:
    """How many rows each segment has, shaped to divide a segment result."""
    counts = np.bincount(ids.reshape(-1), minlength=num)[:num].astype(x.dtype)
    return Tensor(counts.reshape((num,) + (1,) * (x.ndim - ids.ndim)))


def _reduce(kind, data, segment_ids, num_segments, empty):
    x = ops.to_tensor(data)
    x = ops.materialize(x) if x.weak else x
    ids = ops.int_indices(segment_ids, f"segment_{kind}")
    if num_segments is None:
        if ids.ndim != 1 or (ids.size and (np.diff(ids) < 0).any()):
            raise TdfValueError(f"segment_{kind}: segment_ids must be a sorted 1-D tensor")
        num = int(ids.max()) + 1 if ids.size else 0
    else:
        num = to_int(num_segments, "num_segments")
    total = ops.unsorted_segment_sum(x, Tensor(ids), num)
    if kind in ("mean", "sqrt_n"):
        n = np.maximum(_counts(ids, num, x).value, 1)
        return ops.div(total, Tensor(n if kind == "mean" else np.sqrt(n).astype(x.dtype)))
    pick = np.maximum if kind == "max" else np.minimum
    extreme = np.full((num,) + x.shape[ids.ndim:], _lowest(kind, x), dtype=x.dtype)
    pick.at(extreme, ids, x.value)
    if x.dtype.kind != "f":                                   # integers: no gradient to share
        extreme[_counts(ids, num, x).value.reshape(-1) == 0] = empty
        return Tensor(extreme)
    selected = ops.equal(x, ops.gather(Tensor(extreme), Tensor(ids.astype(np.int64))))
    hits = ops.unsorted_segment_sum(ops.cast(selected, x.dtype), Tensor(ids), num)
    picked = ops.unsorted_segment_sum(ops.where(selected, x, ops.zeros_like(x)), Tensor(ids), num)
    nothing = ops.equal(hits, 0)
    value = ops.div(picked, ops.where(nothing, ops.ones_like(hits), hits))
    return ops.where(nothing, ops.add(ops.zeros_like(value), Tensor(np.array(empty, dtype=x.dtype))), value)


def _lowest(kind, data):
    """The dtype's lowest value (an empty segment's max), or its highest (an empty min's)."""
    dtype = ops.to_tensor(data).dtype
    info = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype)
    return info.min if kind == "max" else info.max


@builtin()
def segment_mean(data, segment_ids, name=None):
    return _reduce("mean", data, segment_ids, None, 0)


@builtin()
def segment_max(data, segment_ids, name=None):
    return _reduce("max", data, segment_ids, None, 0)


@builtin()
def segment_min(data, segment_ids, name=None):
    return _reduce("min", data, segment_ids, None, 0)


@builtin()
def unsorted_segment_mean(data, segment_ids, num_segments, name=None):
    return _reduce("mean", data, segment_ids, num_segments, 0)


@builtin()
def unsorted_segment_sqrt_n(data, segment_ids, num_segments, name=None):
    return _reduce("sqrt_n", data, segment_ids, num_segments, 0)


@builtin()
def unsorted_segment_max(data, segment_ids, num_segments, name=None):
    """Empty segments hold the dtype's lowest value, as TensorFlow's."""
    return _reduce("max", data, segment_ids, num_segments, _lowest("max", data))


@builtin()
def unsorted_segment_min(data, segment_ids, num_segments, name=None):
    return _reduce("min", data, segment_ids, num_segments, _lowest("min", data))
