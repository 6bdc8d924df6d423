"""More of TensorFlow's array and math vocabulary, as compositions of recorded ops (their gradients are the
ops'): accumulate_n,
cumulative_logsumexp, lbeta, saturate_cast, reverse_sequence, unique_with_counts, tensor_scatter_nd_max/min,
dynamic_partition/stitch, space_to_batch/batch_to_space, histograms, confusion_matrix, nextafter, as_dtype,
local response normalization, batch_norm_with_global_normalization and TensorFlow's own initializer classes."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import ShapeError, TdfTypeError, TdfValueError
from tapecli.interpreter.conversions import format_value, to_float, to_int, truth
from tapecli.interpreter.registry import builtin
from tapecli.library.core import DTYPE_ENUMS, NamedResult
from tapecli.library.keras import initializers
from tapecli.library.tf_array import unique
from tapecli.runtime.values import DTYPES, DType, Tensor


def _t(x) -> Tensor:
    """A tensor argument (a list of tensors is their stack; a variable is read where tapes see it)."""
    return ops.stack([_t(v) for v in x]) if isinstance(x, list) and x and not all(
        isinstance(v, (int, float)) for v in x) else ops.to_tensor(np.asarray(x) if isinstance(x, list) else x)


def _items(x) -> list:
    """A list argument of tensors (a literal list of lists arrives as one tensor: its rows)."""
    if isinstance(x, (list, tuple)):
        return list(x)
    t = _t(x)
    return [ops.getitem(t, i) for i in range(t.shape[0])]


def _ints(value, what) -> list[int]:
    return [int(v) for v in np.atleast_1d(np.asarray(_t(value).value)).reshape(-1)] if not isinstance(
        value, (list, tuple)) else [to_int(v, what) for v in value]


def _dtype(dtype) -> np.dtype:
    if isinstance(dtype, DType):
        return np.dtype(dtype.np)
    if isinstance(dtype, str):
        return np.dtype(DType(dtype).np)
    raise TdfTypeError(f"expected a dtype such as tf.int32, got {dtype!r}")


# ------------------------------------------------------------------ math compositions
@builtin("accumulate_n")
def accumulate_n(inputs, shape=None, tensor_dtype=None, name=None):
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise TdfValueError("accumulate_n: inputs must be a non-empty list of tensors")
    items = [_t(v) for v in inputs]
    if any(t.shape != items[0].shape for t in items):
        raise ShapeError("accumulate_n: the inputs must all have the same shape, got "
                         + ", ".join(str(list(t.shape)) for t in items))
    total = items[0]
    for t in items[1:]:
        total = ops.add(total, t)
    return total


@builtin("cumulative_logsumexp")
def cumulative_logsumexp(x, axis=0, exclusive=False, reverse=False, name=None):
    """log(cumsum(exp(x))), shifted by the maximum along the axis for range, as TensorFlow computes it."""
    x = _t(x)
    axis = to_int(axis, "axis")
    top = ops.stop_gradient(ops.reduce_max(x, axis=axis, keepdims=True))
    top = ops.where(ops.equal(top, top), top, ops.zeros_like(top))
    sums = ops.cumsum(ops.exp(ops.sub(x, top)), axis=axis, exclusive=truth(exclusive), reverse=truth(reverse))
    return ops.add(ops.log(sums), top)


@builtin("lbeta")
def lbeta(x, name=None):
    """log(|Beta(x)|) over the last axis: sum(lgamma(x)) - lgamma(sum(x)); 1 entry gives 0, none gives 0."""
    x = _t(x)
    if x.ndim == 0:
        raise ShapeError("lbeta needs at least one axis")
    return ops.sub(ops.reduce_sum(ops.lgamma(x), axis=-1), ops.lgamma(ops.reduce_sum(x, axis=-1)))


@builtin("nextafter")
def nextafter(x1, x2, name=None):
    a, b = (ops.materialize(t) if t.weak else t for t in (_t(x1), _t(x2)))     # (Python floats: float32)
    if a.dtype != b.dtype or a.dtype.kind != "f":
        raise TdfTypeError("nextafter: x1 and x2 must be float tensors of one dtype")
    return Tensor(np.nextafter(a.value, b.value))


@builtin("saturate_cast")
def saturate_cast(value, dtype, name=None):
    """Clamps to the target dtype's range, then casts."""
    x, want = _t(value), _dtype(dtype)
    if want.kind in "iu" and x.dtype.kind == "f":
        info = np.iinfo(want)
        lo, hi = np.asarray(info.min, x.dtype), np.asarray(info.max, x.dtype)
        if float(hi) > info.max:                 # float32 rounds 2**31 - 1 up: take the float below
            hi = np.nextafter(hi, np.asarray(0, x.dtype))
        x = ops.clip(x, Tensor(lo), Tensor(hi))
    elif want.kind == "f" and x.dtype.kind == "f" and want.itemsize < x.dtype.itemsize:
        info = np.finfo(want)
        x = ops.clip(x, Tensor(np.asarray(info.min, x.dtype)), Tensor(np.asarray(info.max, x.dtype)))
    return ops.cast(x, want)


@builtin("confusion_matrix")
def confusion_matrix(labels, predictions, num_classes=None, weights=None, dtype=None, name=None):
    labels_v = np.asarray(_t(labels).value).astype(np.int64).reshape(-1)
    preds_v = np.asarray(_t(predictions).value).astype(np.int64).reshape(-1)
    if labels_v.shape != preds_v.shape:
        raise ShapeError(f"confusion_matrix: labels and predictions differ in size ({labels_v.size} and "
                         f"{preds_v.size})")
    if (labels_v < 0).any() or (preds_v < 0).any():
        raise TdfValueError("confusion_matrix: labels and predictions must be non-negative")
    n = to_int(num_classes, "num_classes") if num_classes is not None else \
        int(max(labels_v.max(initial=-1), preds_v.max(initial=-1)) + 1)
    if (labels_v >= n).any() or (preds_v >= n).any():
        raise TdfValueError(f"confusion_matrix: labels and predictions must be below num_classes={n}")
    w = None if weights is None else np.asarray(_t(weights).value).reshape(-1)
    out_dtype = _dtype(dtype) if dtype is not None else np.dtype(np.int32)       # weights are cast to it
    cm = np.zeros((n, n), out_dtype)
    np.add.at(cm, (labels_v, preds_v), np.ones(labels_v.shape, out_dtype) if w is None else w.astype(out_dtype))
    return Tensor(cm)


# ------------------------------------------------------------------ array compositions
@builtin("reverse_sequence")
def reverse_sequence(input, seq_lengths, seq_axis=None, batch_axis=None, name=None):  # noqa: A002
    """Reverses the first seq_lengths[b] entries along seq_axis of each batch entry b (a gather)."""
    x = _t(input)
    if seq_axis is None:
        raise TdfValueError("reverse_sequence needs seq_axis")
    seq_axis = to_int(seq_axis, "seq_axis") % x.ndim
    batch_axis = (0 if batch_axis is None else to_int(batch_axis, "batch_axis")) % x.ndim
    lengths = _ints(seq_lengths, "seq_lengths")
    if len(lengths) != x.shape[batch_axis] or any(n < 0 or n > x.shape[seq_axis] for n in lengths):
        raise TdfValueError(f"reverse_sequence: seq_lengths must give one length in [0, {x.shape[seq_axis]}] per "
                            f"batch entry ({x.shape[batch_axis]}), got {lengths}")
    steps = np.arange(x.shape[seq_axis])
    source = np.stack([np.where(steps < n, n - 1 - steps, steps) for n in lengths])      # [batch, seq]
    shape = [1] * x.ndim
    shape[batch_axis], shape[seq_axis] = x.shape[batch_axis], x.shape[seq_axis]
    order = source if batch_axis < seq_axis else source.T
    index = np.broadcast_to(order.reshape(shape), x.shape)
    grid = list(np.indices(x.shape))
    grid[seq_axis] = index
    return ops.gather_nd(x, Tensor(np.stack(grid, axis=-1).astype(np.int64)))


@builtin("unique_with_counts")
def unique_with_counts(x, out_idx=None, name=None):
    y, idx = unique(x, out_idx)
    counts = np.bincount(np.asarray(idx.value), minlength=y.shape[0]).astype(idx.dtype)
    return NamedResult(("y", "idx", "count"), [y, idx, Tensor(counts)], "UniqueWithCounts")


def _scatter_extreme(tensor, indices, updates, pick):
    t = _t(tensor)
    u = _t(updates)
    u = ops.cast(u, t.dtype) if u.dtype != t.dtype else u
    idx = _t(indices)
    current = ops.gather_nd(t, idx)
    chosen = pick(current, u)
    hit = np.zeros(t.shape, bool)
    index = np.asarray(idx.value).astype(np.int64)
    hit[tuple(np.moveaxis(index, -1, 0))] = True
    return ops.where(Tensor(hit), ops.scatter_nd(idx, chosen, t.shape), t)


@builtin("tensor_scatter_nd_max")
def tensor_scatter_nd_max(tensor, indices, updates, name=None):
    return _scatter_extreme(tensor, indices, updates, ops.maximum)


@builtin("tensor_scatter_nd_min")
def tensor_scatter_nd_min(tensor, indices, updates, name=None):
    return _scatter_extreme(tensor, indices, updates, ops.minimum)


@builtin("dynamic_partition")
def dynamic_partition(data, partitions, num_partitions, name=None):
    x = _t(data)
    parts = np.asarray(_t(partitions).value).astype(np.int64)
    n = to_int(num_partitions, "num_partitions")
    if x.shape[:parts.ndim] != parts.shape:
        raise ShapeError(f"dynamic_partition: partitions of shape {list(parts.shape)} must prefix data's shape "
                         f"{list(x.shape)}")
    if ((parts < 0) | (parts >= n)).any():
        raise TdfValueError(f"dynamic_partition: partitions must be in [0, {n})")
    flat = ops.reshape(x, (-1, *x.shape[parts.ndim:]))
    where = parts.reshape(-1)
    return [ops.gather(flat, Tensor(np.nonzero(where == p)[0].astype(np.int64))) for p in range(n)]


@builtin("dynamic_stitch")
def dynamic_stitch(indices, data, name=None):
    """merged[indices[m][i]] = data[m][i]; a later index wins where two name one place."""
    idx = [np.asarray(_t(i).value).astype(np.int64) for i in _items(indices)]
    parts = [_t(d) for d in _items(data)]
    if len(idx) != len(parts):
        raise TdfValueError("dynamic_stitch: indices and data must be lists of the same length")
    inner = parts[0].shape[idx[0].ndim:]
    flat = ops.concat([ops.reshape(p, (-1, *inner)) for p, i in zip(parts, idx)], 0)
    every = np.concatenate([i.reshape(-1) for i in idx])
    size = int(every.max(initial=-1)) + 1
    source = np.zeros(size, np.int64)
    source[every] = np.arange(every.size)          # the last occurrence wins, as TensorFlow's
    return ops.gather(flat, Tensor(source))


def _space_to_batch(x, block, paddings):
    x = _t(x)
    m = len(block)
    pads = np.asarray(_t(paddings).value).astype(np.int64).reshape(m, 2)
    padded = ops.pad(x, np.concatenate([[[0, 0]], pads, [[0, 0]] * (x.ndim - 1 - m)]).astype(int).tolist())
    b, spatial, rest = padded.shape[0], padded.shape[1:1 + m], padded.shape[1 + m:]
    if any(s % k for s, k in zip(spatial, block)):
        raise TdfValueError(f"space_to_batch: padded spatial shape {list(spatial)} is not divisible by block_shape "
                            f"{block}")
    split = [b] + [v for s, k in zip(spatial, block) for v in (s // k, k)] + list(rest)
    y = ops.reshape(padded, split)
    perm = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)] + list(range(1 + 2 * m, len(split)))
    y = ops.transpose(y, perm)
    return ops.reshape(y, [b * int(np.prod(block))] + [s // k for s, k in zip(spatial, block)] + list(rest))


@builtin("space_to_batch_nd", "space_to_batch")
def space_to_batch_nd(input, block_shape, paddings, name=None):  # noqa: A002
    return _space_to_batch(input, _ints(block_shape, "block_shape"), paddings)


@builtin("batch_to_space")
def batch_to_space(input, block_shape, crops, name=None):  # noqa: A002
    x = _t(input)
    block = _ints(block_shape, "block_shape")
    m, prod = len(block), int(np.prod(block))
    if x.shape[0] % prod:
        raise TdfValueError(f"batch_to_space: the batch {x.shape[0]} is not divisible by {prod}")
    b, spatial, rest = x.shape[0] // prod, x.shape[1:1 + m], x.shape[1 + m:]
    y = ops.reshape(x, block + [b] + list(spatial) + list(rest))
    perm = [m] + [v for i in range(m) for v in (m + 1 + i, i)] + list(range(2 * m + 1, y.ndim))
    y = ops.reshape(ops.transpose(y, perm), [b] + [s * k for s, k in zip(spatial, block)] + list(rest))
    cut = np.asarray(_t(crops).value).astype(np.int64).reshape(m, 2)
    index = (slice(None),) + tuple(slice(int(lo), y.shape[1 + i] - int(hi)) for i, (lo, hi) in enumerate(cut))
    return ops.getitem(y, index)


@builtin("required_space_to_batch_paddings")
def required_space_to_batch_paddings(input_shape, block_shape, base_paddings=None, name=None):
    shape, block = _ints(input_shape, "input_shape"), _ints(block_shape, "block_shape")
    base = np.zeros((len(block), 2), np.int64) if base_paddings is None else \
        np.asarray(_t(base_paddings).value).astype(np.int64).reshape(len(block), 2)
    full = np.asarray(shape) + base[:, 0] + base[:, 1]
    extra = (np.asarray(block) - full % np.asarray(block)) % np.asarray(block)
    paddings = np.stack([base[:, 0], base[:, 1] + extra], axis=1).astype(np.int32)
    crops = np.stack([np.zeros(len(block), np.int64), extra], axis=1).astype(np.int32)
    return [Tensor(paddings), Tensor(crops)]


def _histogram_bins(values, value_range, nbins):
    x = _t(values)
    lo, hi = np.asarray(_t(value_range).value).astype(x.dtype).reshape(2)
    n = to_int(nbins, "nbins")
    if n <= 0:
        raise TdfValueError(f"nbins must be positive, got {n}")
    scaled = (np.asarray(x.value) - lo) / (hi - lo)
    return np.clip(np.floor(scaled * x.dtype.type(n)), 0, n - 1).astype(np.int64), n


@builtin("histogram_fixed_width_bins")
def histogram_fixed_width_bins(values, value_range, nbins=100, dtype=None, name=None):
    bins, _ = _histogram_bins(values, value_range, nbins)
    return Tensor(bins.astype(np.int32 if dtype is None else _dtype(dtype)))


@builtin("histogram_fixed_width")
def histogram_fixed_width(values, value_range, nbins=100, dtype=None, name=None):
    bins, n = _histogram_bins(values, value_range, nbins)
    return Tensor(np.bincount(bins.reshape(-1), minlength=n).astype(np.int32 if dtype is None else _dtype(dtype)))


# TensorFlow's other names of the dtypes tapecli has (its enum values: core.DTYPE_ENUMS)
_DTYPE_NAMES = {"float": "float32", "double": "float64", "half": None, "int": "int32", "long": "int64"}


@builtin("as_dtype")
def as_dtype(type_value):
    """tf.as_dtype: a dtype, its name (TensorFlow's spellings: "float", "double") or its enum value."""
    if isinstance(type_value, DType):
        return type_value
    name = type_value if isinstance(type_value, str) else None
    if isinstance(type_value, Tensor) and type_value.ndim == 0 and type_value.dtype.kind in "iu":
        name = DTYPE_ENUMS.get(int(type_value.value))
    name = _DTYPE_NAMES.get(name, name)
    if name is not None and DType(name).name in DTYPES:
        return DType(name)
    shown = format_value(type_value) if isinstance(type_value, Tensor) else repr(type_value)
    raise TdfTypeError(f"as_dtype: cannot convert {shown} to a dtype",
                       hint="tapecli's dtypes: float32, float64, int32, int64, bool")


@builtin("local_response_normalization", "lrn")
def local_response_normalization(input, depth_radius=5, bias=1.0, alpha=1.0, beta=0.5, name=None):  # noqa: A002
    """x / (bias + alpha * sum of the squares within depth_radius along the last axis) ** beta."""
    x = _t(input)
    if x.ndim != 4:
        raise ShapeError(f"local_response_normalization needs a 4-D input, got shape {list(x.shape)}")
    r = to_int(depth_radius, "depth_radius")
    squares = ops.pad(ops.square(x), [[0, 0], [0, 0], [0, 0], [r, r]])
    depth = x.shape[-1]
    total = ops.getitem(squares, (Ellipsis, slice(0, depth)))
    for k in range(1, 2 * r + 1):
        total = ops.add(total, ops.getitem(squares, (Ellipsis, slice(k, k + depth))))
    d = x.dtype.type
    scale = ops.pow_(ops.add(ops.mul(total, Tensor(d(to_float(alpha)))), Tensor(d(to_float(bias)))),
                     Tensor(d(to_float(beta))))
    return ops.div(x, scale)


@builtin("batch_norm_with_global_normalization")
def batch_norm_with_global_normalization(t=None, m=None, v=None, beta=None, gamma=None, variance_epsilon=None,
                                         scale_after_normalization=None, name=None, input=None,  # noqa: A002
                                         mean=None, variance=None):
    """batch_normalization(t, m, v, beta, gamma if scale_after_normalization else None, variance_epsilon)."""
    t = input if t is None else t
    m = mean if m is None else m
    v = variance if v is None else v
    scale = gamma if truth(scale_after_normalization) else None
    return ops.batch_normalization(_t(t), _t(m), _t(v), _t(beta), None if scale is None else _t(scale),
                                   to_float(variance_epsilon, "variance_epsilon"))


# TensorFlow's own initializer classes (init_ops_v2), called as init(shape, dtype=tf.float32): Keras's, renamed
class OnesInitializer(initializers.Ones):
    keras_name = "ones_initializer"


class ZerosInitializer(initializers.Zeros):
    keras_name = "zeros_initializer"


class RandomNormalInitializer(initializers.RandomNormal):
    keras_name = "random_normal_initializer"
    default_seed = False        # (TensorFlow's: its seed is the op's, tf.random.normal's)


class RandomUniformInitializer(initializers.RandomUniform):
    keras_name = "random_uniform_initializer"
    default_seed = False


INITIALIZERS = [OnesInitializer, ZerosInitializer, RandomNormalInitializer, RandomUniformInitializer]
