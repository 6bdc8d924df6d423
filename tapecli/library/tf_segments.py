"""tf.math's segment reductions beyond the sums: mean, sqrt_n, max, min and prod, sorted (segment_*) and unsorted
(unsorted_segment_*), as compositions of unsorted_segment_sum, gather and where (prod: its op). Their gradients are
TensorFlow's: a mean's is the upstream gradient over the segment's count, a max's or min's is shared equally
among the elements that reach the extreme (_UnsortedSegmentMinOrMaxGrad), a prod's the op's rule."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import KernelValueError, ShapeError, TdfTypeError, TdfValueError
from tapecli.interpreter.conversions import truth
from tapecli.library.core import sparse_dims, to_dtype, to_int
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
        op = f"[Op:Segment{kind.capitalize()}]"        # (TensorFlow's InvalidArgumentError: a ShapeError)
        if ids.ndim != 1:
            raise ShapeError(f"segment_ids should be a vector. {op}")
        if ids.size and (np.diff(ids) < 0).any():
            raise ShapeError(f"segment ids are not increasing {op}")
        num = int(ids.max()) + 1 if ids.size else 0
    else:
        num = to_int(num_segments, "num_segments")
    if kind == "prod":
        return ops.unsorted_segment_prod(x, ids, num)
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
def segment_prod(data, segment_ids, name=None):
    """Empty segments (ids skipped) hold 1, as TensorFlow's."""
    return _reduce("prod", data, segment_ids, None, 1)


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
def unsorted_segment_prod(data, segment_ids, num_segments, name=None):
    return _reduce("prod", data, segment_ids, num_segments, 1)


@builtin()
def unsorted_segment_max(data, segment_ids, num_segments, name=None):
    """Empty segments hold the dtype's lowest value, as TensorFlow's."""
    return _reduce("max", data, segment_ids, num_segments, _lowest("max", data))


@builtin()
def unsorted_segment_min(data, segment_ids, num_segments, name=None):
    return _reduce("min", data, segment_ids, num_segments, _lowest("min", data))


@builtin()
def bincount(arr, weights=None, minlength=None, maxlength=None, dtype=None, name=None, axis=None,
             binary_output=False):
    """Counts (or summed weights) of each non-negative integer value of ``arr`` (a tensor, ragged or sparse
    tensor; floats truncated to int32): of all of it (axis None or 0), or of each row (axis -1: a matrix's, a
    ragged tensor's, a 2-D sparse tensor's). Its length is the largest value plus one, at least ``minlength``,
    at most ``maxlength``; its dtype the weights' (summed in order, in their dtype) or ``dtype`` (int32)."""
    if weights is not None and truth(binary_output):
        raise TdfValueError("Arguments `binary_output` and `weights` are mutually exclusive. Please specify only one.")
    axis = 0 if axis is None else to_int(axis, "axis")
    if axis not in (0, -1):
        raise TdfValueError(f"Unsupported value for argument axis={axis}. Only 0 and -1 are currently supported.")
    values, rows, nrows, w = _counted(arr, weights)
    if (values < 0).any():
        raise KernelValueError("Input arr must be non-negative!")
    size = int(values.max()) + 1 if values.size else 0
    if minlength is not None:
        size = max(size, to_int(minlength, "minlength"))
    if maxlength is not None:
        size = min(size, to_int(maxlength, "maxlength"))
    size = max(size, 0)
    out_dtype = w.dtype if w is not None else np.dtype(np.int32) if dtype is None else to_dtype(dtype)
    per_row = axis == -1 and rows is not None
    out = np.zeros((nrows, size) if per_row else (size,), dtype=out_dtype)
    keep = values < size
    at = (rows[keep], values[keep]) if per_row else values[keep]
    np.add.at(out, at, 1 if w is None else w[keep])         # (in order, in the output's dtype: TensorFlow's sums)
    return Tensor(np.minimum(out, 1) if truth(binary_output) else out)


def _counted(arr, weights):
    """``arr``'s values to count (flat, int64), each one's row (None for a vector), the rows, and the weights'
    values beside them (None without weights)."""
    if getattr(arr, "is_ragged", False):
        if weights is not None and not getattr(weights, "is_ragged", False):
            raise TdfTypeError("tf.math.bincount: the weights of a ragged tensor are a ragged tensor of its rows")
        values, rows, nrows = arr.flat_values, arr.coordinates()[:, 0], arr.nrows
        w = None if weights is None else weights.flat_values
    elif sparse_dims(arr) is not None:
        if weights is not None and sparse_dims(weights) is None:
            raise TdfTypeError("tf.math.bincount: the weights of a sparse tensor are a sparse tensor of its entries")
        dims = arr.dims
        values, nrows = arr.values, dims[0]
        rows = arr.index_array[:, 0] if len(dims) == 2 else None
        w = None if weights is None else weights.values
    else:
        values = ops.to_tensor(arr)
        if values.ndim > 2:
            raise KernelValueError(f"Shape must be at most rank 2 but is rank {values.ndim}")
        nrows = values.shape[0] if values.ndim == 2 else 1
        rows = np.repeat(np.arange(nrows), values.shape[1]) if values.ndim == 2 else None
        w = weights if weights is None else ops.reshape(ops.to_tensor(weights), (-1,))
    counted = np.asarray(values.value)
    counted = counted.astype(np.int32) if counted.dtype.kind == "f" else ops.int_indices(values, "bincount")
    if w is not None:
        w = ops.materialize(w) if w.weak else w       # no gradient: TensorFlow has none for DenseBincount
        w = np.asarray(w.value).reshape(-1)
    return np.asarray(counted, dtype=np.int64).reshape(-1), rows, nrows, w


@builtin()
def invert_permutation(x, name=None):
    p = ops.to_tensor(x)
    p = ops.materialize(p) if p.weak else p
    v = np.asarray(p.value)
    if v.ndim != 1 or sorted(v.tolist()) != list(range(v.size)):
        raise TdfValueError("tf.math.invert_permutation: x must be a permutation of 0..n-1")
    out = np.empty_like(v)
    out[v] = np.arange(v.size, dtype=v.dtype)
    return Tensor(out)


@builtin()
def is_non_decreasing(x, name=None):
    v = np.asarray(ops.to_tensor(x).value).reshape(-1)
    return Tensor(np.array(bool(np.all(v[1:] >= v[:-1]))))


@builtin()
def is_strictly_increasing(x, name=None):
    v = np.asarray(ops.to_tensor(x).value).reshape(-1)
    return Tensor(np.array(bool(np.all(v[1:] > v[:-1]))))


@builtin()
def polyval(coeffs, x, name=None):
    """coeffs[0] * x ** (n - 1) + ... + coeffs[n - 1], by Horner's rule (TensorFlow's order of operations).
    ``coeffs`` is a Python list: of tensors, or of numbers (a list literal)."""
    if isinstance(coeffs, Tensor) and coeffs.weak and coeffs.ndim == 1:
        coeffs = [Tensor(v, weak=True) for v in coeffs.value]
    if not isinstance(coeffs, list):
        raise TdfValueError("tf.math.polyval: coeffs must be a list of tensors")
    if not coeffs:
        return ops.zeros_like(x)
    value = ops.to_tensor(coeffs[0])
    for c in coeffs[1:]:
        value = ops.add(c, ops.mul(value, x))
    return value



polyval.literals = "coeffs is a Python list, its numbers literals"     # (interpreter/registry.py: call_builtin)
