"""TensorFlow's array vocabulary beyond the core: repeat, slice, broadcast_to, meshgrid, rank, the scatter
updates, unique and searchsorted, and the eager-mode answers (is_tensor, no_op; executing_eagerly is in control.py), written as
compositions of the op table's ops (their gradients are the compositions')."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import KernelValueError, ShapeError, TdfTypeError, TdfValueError
from tapecli.interpreter.conversions import format_value
from tapecli.library.core import DTYPE_ENUMS, NamedResult, sparse_dims, tensor_argument, to_dtype, to_int, to_shape
from tapecli.library.tf_nn import check_bad_indices_policy
from tapecli.interpreter.registry import builtin
from tapecli.runtime.context import current
from tapecli.runtime.limits import LIST_SLOT, admit
from tapecli.runtime.tape import type_word
from tapecli.runtime.specs import Shape, static_shape
from tapecli.runtime.values import DTYPES, DType, NumpyArray, PythonBool, Tensor, Variable, dtype_name

@builtin()
def broadcast_to(input, shape, name=None):  # noqa: A002
    t = ops.to_tensor(input)
    target = to_shape(shape)
    try:
        np.broadcast_shapes(t.shape, target)
    except ValueError:
        raise ShapeError(f"tf.broadcast_to: cannot broadcast shape {list(t.shape)} to {list(target)}") from None
    if np.broadcast_shapes(t.shape, target) != target:
        raise ShapeError(f"tf.broadcast_to: cannot broadcast shape {list(t.shape)} to {list(target)}")
    return ops.broadcast_to(ops.materialize(t) if t.weak else t, target)


@builtin()
def rank(input, name=None):  # noqa: A002
    dims = sparse_dims(input)
    return Tensor(np.array(len(dims) if dims is not None else ops.to_tensor(input).ndim, dtype=np.int32))


@builtin()
def is_tensor(x):
    """Whether ``x`` is a tensor or a variable, a Python bool (a Python number or a NumPy array is not one)."""
    return PythonBool(np.array(isinstance(x, Variable) or (
        isinstance(x, Tensor) and not x.weak and x.__class__ is not NumpyArray)))


is_tensor.literals = "a Python number is no tensor"     # (interpreter/registry.py: call_builtin)


@builtin()
def no_op(name=None):
    return None


@builtin("identity_n")
def identity_n(input, name=None):  # noqa: A002
    return [ops.identity(ops.to_tensor(x)) for x in input]


@builtin()
def repeat(input, repeats, axis=None, name=None):  # noqa: A002
    """tf.repeat: each element (along ``axis``; of the flattened input without one) ``repeats`` times, as
    TensorFlow does it: a tile of a new axis after ``axis`` (to the largest count), the other counts' surplus
    masked out; the gradient is then TileGrad's sum."""
    t = ops.to_tensor(input)
    if axis is None:
        t, axis = ops.reshape(t, (-1,)), 0
    axis = to_int(axis, "axis") % max(t.ndim, 1)
    n = t.shape[axis]
    given = np.asarray(ops.to_tensor(repeats).value, dtype=np.int64)
    counts = np.broadcast_to(given, (n,))
    if (counts < 0).any():
        raise TdfValueError("tf.repeat: repeats must be non-negative")
    most = int(counts.max(initial=0))
    before, after = t.shape[:axis], t.shape[axis + 1:]
    tiled = ops.tile(ops.reshape(t, before + (n, 1) + after), (1,) * (axis + 1) + (most,) + (1,) * len(after))
    tiled = ops.reshape(tiled, before + (n * most,) + after)
    if given.size == 1:
        return tiled
    kept = (np.arange(most) < counts[:, None]).reshape(-1)
    return ops.gather(tiled, Tensor(np.flatnonzero(kept).astype(np.int64)), axis=axis)


@builtin("strided_slice")
def strided_slice(input_, begin, end, strides=None, begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0,
                  shrink_axis_mask=0, var=None, name=None):
    """tf.strided_slice: the index ``t[b0:e0:s0, ...]`` its spec makes, bit i of each mask about entry i (begin
    or end left open, ``...``, a new axis, an integer index that drops the axis), as TensorFlow's index does."""
    t = ops.to_tensor(input_)
    begin, end = to_shape(begin, negative=True), to_shape(end, negative=True)
    strides = (1,) * len(begin) if strides is None else to_shape(strides, negative=True)
    if not len(begin) == len(end) == len(strides):
        raise ShapeError(f"tf.strided_slice: begin, end and strides need as many entries, got {len(begin)}, "
                         f"{len(end)} and {len(strides)}")
    if 0 in strides:
        raise TdfValueError("tf.strided_slice: strides entries must be non-zero")
    masks = [to_int(m, "a mask") for m in (begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask)]
    index = []
    for i, (b, e, s) in enumerate(zip(begin, end, strides)):
        bit = [m >> i & 1 for m in masks]
        index.append(Ellipsis if bit[2] else None if bit[3] else b if bit[4] else
                     slice(None if bit[0] else b, None if bit[1] else e, s))
    return ops.getitem(t, tuple(index))


@builtin("slice")
def slice_(input_, begin, size, name=None):
    """tf.slice: ``size[i]`` elements from ``begin[i]`` on each axis (-1: to the end)."""
    t = ops.to_tensor(input_)
    begin, size = to_shape(begin), to_shape(size, negative=True)
    if len(begin) != t.ndim or len(size) != t.ndim:
        raise ShapeError(f"tf.slice: begin and size need {t.ndim} entries, got {len(begin)} and {len(size)}")
    index = []
    for b, s, n in zip(begin, size, t.shape):
        end = n if s == -1 else b + s
        if b > n or end > n or s < -1:
            raise TdfValueError(f"tf.slice: begin {list(begin)} and size {list(size)} do not fit shape {list(t.shape)}")
        index.append(slice(b, end))
    return ops.getitem(t, tuple(index))


@builtin()
def meshgrid(*args, indexing="xy", name=None):
    if indexing not in ("xy", "ij"):
        raise TdfValueError(f"tf.meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    vectors = [ops.reshape(ops.to_tensor(a), (-1,)) for a in args]
    shape = [v.shape[0] for v in vectors]
    if indexing == "xy" and len(vectors) >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, v in enumerate(vectors):
        where = (1 - i if i < 2 else i) if indexing == "xy" and len(vectors) >= 2 else i
        view = [1] * len(vectors)
        view[where] = v.shape[0]
        out.append(ops.broadcast_to(ops.reshape(v, tuple(view)), tuple(shape)))
    return out


def _scatter_mask(tensor, indices):
    """The tensor, its indices, and where they write: an index shorter than the rank writes a whole slice."""
    t = ops.to_tensor(tensor)
    idx = ops.to_tensor(indices)
    depth = idx.shape[-1] if idx.ndim else 0
    ones = Tensor(np.ones((*idx.shape[:-1], *t.shape[depth:]), dtype=t.dtype))
    return t, idx, ops.greater(ops.scatter_nd(idx, ones, t.shape), 0)


@builtin()
def tensor_scatter_nd_update(tensor, indices, updates, name=None):
    """``tensor`` with the elements or slices at ``indices`` replaced by ``updates``; of an index given twice, the
    last update (TensorFlow's CPU kernel applies them in order)."""
    t, idx, u = ops.to_tensor(tensor), ops.to_tensor(indices), ops.to_tensor(updates)
    u = ops.cast(u, t.dtype) if u.weak else u
    batch = idx.ndim - 1                        # the dimensions of updates that follow the indices'
    if batch >= 0 and idx.size and tuple(u.shape[:batch]) == tuple(idx.shape[:-1]):
        depth = idx.shape[-1]
        rows = np.asarray(idx.value).reshape(-1, depth)
        last = {tuple(row): n for n, row in enumerate(rows.tolist())}
        if len(last) < len(rows):
            keep = Tensor(np.array(sorted(last.values()), dtype=np.int64))
            idx = ops.gather(ops.reshape(idx, (-1, depth)), keep)
            u = ops.gather(ops.reshape(u, (len(rows), *u.shape[batch:])), keep)
    t, idx, hit = _scatter_mask(t, idx)
    return ops.where(hit, ops.scatter_nd(idx, u, t.shape), t)


@builtin()
def tensor_scatter_nd_sub(tensor, indices, updates, bad_indices_policy="", name=None):
    check_bad_indices_policy(bad_indices_policy)
    return ops.tensor_scatter_nd_add(tensor, indices, ops.neg(updates))


@builtin()
def unique(x, out_idx=None, name=None):
    """[y, idx]: the distinct values in order of first appearance, and each element's position in y."""
    t = ops.to_tensor(x)
    if t.ndim != 1:
        raise ShapeError(f"tf.unique needs a 1-D tensor, got shape {list(t.shape)}")
    values, first, inverse = np.unique(t.value, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank_of = np.empty_like(order)
    rank_of[order] = np.arange(len(order))
    idx_dtype = np.int32 if out_idx is None else to_dtype(out_idx)
    return NamedResult(("y", "idx"), [Tensor(values[order].astype(t.dtype)),
                                      Tensor(rank_of[inverse.reshape(-1)].astype(idx_dtype))], "Unique")


@builtin()
def searchsorted(sorted_sequence, values, side="left", out_type=None, name=None):
    if side not in ("left", "right"):
        raise TdfValueError(f"tf.searchsorted: side must be 'left' or 'right', got {side!r}")
    s, v = ops.to_tensor(sorted_sequence), ops.to_tensor(values)
    if s.ndim < 1 or s.shape[:-1] != v.shape[:-1]:
        raise ShapeError(f"tf.searchsorted: shapes {list(s.shape)} and {list(v.shape)} differ before the last axis")
    rows_s, rows_v = s.value.reshape(-1, s.shape[-1]), v.value.reshape(-1, v.shape[-1] if v.ndim else 1)
    out = np.stack([np.searchsorted(a, b, side=side) for a, b in zip(rows_s, rows_v)]).reshape(v.shape)
    return Tensor(out.astype(np.int32 if out_type is None else to_dtype(out_type)))


@builtin("scalar_mul")
def scalar_mul(scalar, x, name=None):
    if ops.to_tensor(scalar).ndim != 0:
        raise TdfTypeError("tf.math.scalar_mul: scalar must be a 0-D tensor")
    return ops.mul(scalar, x)


@builtin()
def is_symbolic_tensor(tensor):
    """False: tapecli runs eagerly, there are no graph tensors."""
    return Tensor(np.array(False))


@builtin()
def inside_function():
    """A Python bool, as TensorFlow's: True while a tf.function's call is under way, else False."""
    return PythonBool(np.array(current().functions > 0))


@builtin()
def get_static_value(tensor, partial=False):
    """The value as a NumPy array, as TensorFlow gives it (every tensor's value is known eagerly); None for a
    variable, whose value is no constant."""
    if tensor is None or isinstance(tensor, Variable):
        return None
    t = ops.to_tensor(tensor)
    return NumpyArray((ops.materialize(t) if t.weak else t).value.copy())


@builtin()
def ensure_shape(x, shape, name=None):
    """x itself, when its shape matches ``shape`` (None entries match any size)."""
    t = ops.to_tensor(x)
    want = list(shape) if isinstance(shape, list) else list(to_shape(shape, negative=True))
    want = [None if w is None or to_int(w, "a dimension") == -1 else to_int(w, "a dimension") for w in want]
    if len(want) != t.ndim or any(w not in (None, n) for w, n in zip(want, t.shape)):
        def text(dims):
            return "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"
        raise ShapeError(f"Shape of tensor input {text(t.shape)} is not compatible with expected shape {text(want)}. "
                         "[Op:EnsureShape] name: ")
    return ops.identity(t)


@builtin()
def shape_n(input, out_type=None, name=None):  # noqa: A002
    dtype = np.int32 if out_type is None else to_dtype(out_type)
    return [Tensor(np.array(ops.to_tensor(x).shape, dtype=dtype)) for x in input]


@builtin()
def broadcast_dynamic_shape(shape_x, shape_y):
    return _broadcast_shapes(shape_x, shape_y)


@builtin()
def broadcast_static_shape(shape_x, shape_y):
    """The static broadcast of two TensorShapes, unknown dimensions as TensorFlow's common_shapes broadcasts
    them."""
    x, y = static_shape(shape_x), static_shape(shape_y)
    if not (x.known and y.known):
        return Shape(None)
    n = max(len(x), len(y))
    x, y = (1,) * (n - len(x)) + tuple(x), (1,) * (n - len(y)) + tuple(y)
    dims = []
    for dx, dy in zip(x, y):
        if dx is None or dy is None:
            known = dx if dx is not None else dy
            dims.append(known if known is not None and known > 1 else None)
        elif dx == 1 or dy == 1 or dx == dy:
            dims.append(dy if dx == 1 else dx)
        else:
            raise TdfValueError(f"Incompatible shapes for broadcasting: {static_shape(shape_x)} and "
                                f"{static_shape(shape_y)}")
    return Shape(dims)


def _broadcast_shapes(a, b):
    try:
        shape = np.broadcast_shapes(to_shape(a), to_shape(b))
    except ValueError:
        raise ShapeError(f"incompatible shapes to broadcast: {list(to_shape(a))} and {list(to_shape(b))}") from None
    dtype = a.dtype if isinstance(a, Tensor) and not a.weak else np.int32
    return Tensor(np.array(shape, dtype=dtype))


@builtin()
def unravel_index(indices, dims, name=None):
    i, d = ops.to_tensor(indices), ops.to_tensor(dims)
    d = ops.materialize(d) if d.weak else d
    out = np.array(np.unravel_index(np.asarray(i.value), tuple(int(v) for v in d.value)))
    return Tensor(out.astype(d.dtype))


@builtin()
def truncatediv(x, y, name=None):
    """Division rounded towards zero (integers; no gradient)."""
    a, b = ops.to_tensor(x), ops.to_tensor(y)
    q = ops.floordiv(a, b)
    return ops.where(ops.logical_and(ops.not_equal(ops.mod(a, b), 0), ops.less(ops.mul(a, b), 0)), ops.add(q, 1), q)


@builtin()
def truncatemod(x, y, name=None):
    """The remainder of truncatediv: x - truncatediv(x, y) * y, with x's sign."""
    return ops.sub(x, ops.mul(truncatediv(x, y), y))


@builtin()
def timestamp(name=None):
    import time
    return Tensor(np.array(time.time(), dtype=np.float64))


def _items(x) -> list:
    """A list argument of tensors (a literal list of lists arrives as one tensor: its rows)."""
    if isinstance(x, (list, tuple)):
        return list(x)
    t = tensor_argument(x)
    return [ops.getitem(t, i) for i in range(t.shape[0])]


def _ints(value, what) -> list[int]:
    return [int(v) for v in np.atleast_1d(np.asarray(tensor_argument(value).value)).reshape(-1)] if not isinstance(
        value, (list, tuple)) else [to_int(v, what) for v in value]


@builtin("bitcast")
def bitcast(input, type, name=None):  # noqa: A002 (TensorFlow's parameter names)
    """The same bytes read as another dtype: a wider one takes the last dimension's items (its size the ratio),
    a narrower one adds a dimension of them (TensorFlow's Bitcast; no gradient)."""
    x = ops.to_tensor(input)
    x = ops.materialize(x) if x.weak else x
    want = to_dtype(type)
    if x.dtype.kind not in "fiu" or want.kind not in "fiu":
        raise KernelValueError(f"Value for attr 'T' of {dtype_name(x.dtype if x.dtype.kind not in 'fiu' else want)} "
                               f"is not in the list of allowed values")
    have, get = x.dtype.itemsize, want.itemsize
    if get > have and (x.ndim == 0 or x.shape[-1] != get // have):
        raise KernelValueError(f"Cannot bitcast from {get} to {have}")     # (TensorFlow words it so)
    value = np.ascontiguousarray(x.value).view(want)
    shape = x.shape[:-1] if get > have else x.shape + ((have // get,) if get < have else ())
    return Tensor(value.reshape(shape))


@builtin("saturate_cast")
def saturate_cast(value, dtype, name=None):
    """Clamps to the target dtype's range, then casts."""
    x, want = tensor_argument(value), to_dtype(dtype)
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


# ------------------------------------------------------------------ array compositions
@builtin("reverse_sequence")
def reverse_sequence(input, seq_lengths, seq_axis=None, batch_axis=None, name=None):  # noqa: A002
    """Reverses the first seq_lengths[b] entries along seq_axis of each batch entry b (a gather)."""
    x = tensor_argument(input)
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
    t = tensor_argument(tensor)
    u = tensor_argument(updates)
    u = ops.cast(u, t.dtype) if u.dtype != t.dtype else u
    idx = tensor_argument(indices)
    current = ops.gather_nd(t, idx)
    chosen = pick(current, u)
    hit = np.zeros(t.shape, bool)
    index = np.asarray(idx.value).astype(np.int64)
    hit[tuple(np.moveaxis(index, -1, 0))] = True
    return ops.where(Tensor(hit), ops.scatter_nd(idx, chosen, t.shape), t)


@builtin("tensor_scatter_nd_max")
def tensor_scatter_nd_max(tensor, indices, updates, bad_indices_policy="", name=None):
    check_bad_indices_policy(bad_indices_policy)
    return _scatter_extreme(tensor, indices, updates, ops.maximum)


@builtin("tensor_scatter_nd_min")
def tensor_scatter_nd_min(tensor, indices, updates, bad_indices_policy="", name=None):
    check_bad_indices_policy(bad_indices_policy)
    return _scatter_extreme(tensor, indices, updates, ops.minimum)


@builtin("dynamic_partition")
def dynamic_partition(data, partitions, num_partitions, name=None):
    x = tensor_argument(data)
    parts = np.asarray(tensor_argument(partitions).value).astype(np.int64)
    n = to_int(num_partitions, "num_partitions")
    admit(n, LIST_SLOT, "dynamic_partition's list of partitions")      # (2**31 of them: a tensor each)
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
    idx = [np.asarray(tensor_argument(i).value).astype(np.int64) for i in _items(indices)]
    parts = [tensor_argument(d) for d in _items(data)]
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
    x = tensor_argument(x)
    m = len(block)
    pads = np.asarray(tensor_argument(paddings).value).astype(np.int64).reshape(m, 2)
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
    x = tensor_argument(input)
    block = _ints(block_shape, "block_shape")
    m, prod = len(block), int(np.prod(block))
    if x.shape[0] % prod:
        raise TdfValueError(f"batch_to_space: the batch {x.shape[0]} is not divisible by {prod}")
    b, spatial, rest = x.shape[0] // prod, x.shape[1:1 + m], x.shape[1 + m:]
    y = ops.reshape(x, block + [b] + list(spatial) + list(rest))
    perm = [m] + [v for i in range(m) for v in (m + 1 + i, i)] + list(range(2 * m + 1, y.ndim))
    y = ops.reshape(ops.transpose(y, perm), [b] + [s * k for s, k in zip(spatial, block)] + list(rest))
    cut = np.asarray(tensor_argument(crops).value).astype(np.int64).reshape(m, 2)
    index = (slice(None),) + tuple(slice(int(lo), y.shape[1 + i] - int(hi)) for i, (lo, hi) in enumerate(cut))
    return ops.getitem(y, index)


@builtin("required_space_to_batch_paddings")
def required_space_to_batch_paddings(input_shape, block_shape, base_paddings=None, name=None):
    shape, block = _ints(input_shape, "input_shape"), _ints(block_shape, "block_shape")
    base = np.zeros((len(block), 2), np.int64) if base_paddings is None else \
        np.asarray(tensor_argument(base_paddings).value).astype(np.int64).reshape(len(block), 2)
    full = np.asarray(shape) + base[:, 0] + base[:, 1]
    extra = (np.asarray(block) - full % np.asarray(block)) % np.asarray(block)
    paddings = np.stack([base[:, 0], base[:, 1] + extra], axis=1).astype(np.int32)
    crops = np.stack([np.zeros(len(block), np.int64), extra], axis=1).astype(np.int32)
    return [Tensor(paddings), Tensor(crops)]


def _histogram_bins(values, value_range, nbins):
    x = tensor_argument(values)
    lo, hi = np.asarray(tensor_argument(value_range).value).astype(x.dtype).reshape(2)
    n = to_int(nbins, "nbins")
    if n <= 0:
        raise TdfValueError(f"nbins must be positive, got {n}")
    scaled = (np.asarray(x.value) - lo) / (hi - lo)
    return np.clip(np.floor(scaled * x.dtype.type(n)), 0, n - 1).astype(np.int64), n


@builtin("histogram_fixed_width_bins")
def histogram_fixed_width_bins(values, value_range, nbins=100, dtype=None, name=None):
    bins, _ = _histogram_bins(values, value_range, nbins)
    return Tensor(bins.astype(np.int32 if dtype is None else to_dtype(dtype)))


@builtin("histogram_fixed_width")
def histogram_fixed_width(values, value_range, nbins=100, dtype=None, name=None):
    bins, n = _histogram_bins(values, value_range, nbins)
    return Tensor(np.bincount(bins.reshape(-1), minlength=n).astype(np.int32 if dtype is None else to_dtype(dtype)))


# TensorFlow's other names of the dtypes tapecli has (its enum values: core.DTYPE_ENUMS)
_DTYPE_NAMES = {"float": "float32", "double": "float64", "half": None, "int": "int32", "long": "int64"}


@builtin("DType")
def dtype_of_enum(type_enum):
    """tf.DType: TensorFlow's class of dtypes (``isinstance(x, tf.DType)``), made from its enum value."""
    if not (isinstance(type_enum, Tensor) and type_enum.ndim == 0 and type_enum.dtype.kind in "iu"):
        raise TdfTypeError(f"tf.DType takes a dtype's enum value (tf.float32 is tf.DType(1)), got "
                           f"{type_word(type_enum)}", hint="tf.as_dtype takes a dtype's name")
    return as_dtype(type_enum)


dtype_of_enum.makes = DType


@builtin("as_dtype")
def as_dtype(type_value):
    """tf.as_dtype: a dtype, its name (TensorFlow's spellings: "float", "double") or its enum value."""
    if isinstance(type_value, DType):       # (np.float64 as the interpreter holds it: TensorFlow's DType of it)
        return type_value if type(type_value) is DType else DType(type_value.name)
    if isinstance(type_value, np.dtype) or isinstance(type_value, type) and issubclass(type_value, np.generic):
        type_value = np.dtype(type_value).name
    name = type_value if isinstance(type_value, str) else None
    if isinstance(type_value, Tensor) and type_value.ndim == 0 and type_value.dtype.kind in "iu":
        name = DTYPE_ENUMS.get(int(type_value.value))
    name = _DTYPE_NAMES.get(name, name)
    if name is not None and DType(name).name in DTYPES:
        return DType(name)
    shown = format_value(type_value) if isinstance(type_value, Tensor) else repr(type_value)
    raise TdfTypeError(f"as_dtype: cannot convert {shown} to a dtype",
                       hint="tapecli's dtypes: float32, float64, int32, int64, bool")
