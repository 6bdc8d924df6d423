"""keras.ops' array functions that TensorFlow's names do not give, as Keras's TensorFlow backend computes them
(keras/src/backend/tensorflow/numpy.py): axes moved (swapaxes, moveaxis, rot90, fliplr/flipud), gathered (take,
take_along_axis, diagonal), stacked and split (hstack, vstack, dstack, append, hsplit, vsplit, dsplit,
array_split), products (outer, inner, vdot, kron), built (tri, diagflat, vander, logspace, geomspace) and
the integer answers (nonzero, digitize, isin, argpartition, histogram), each in Keras's result_type."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import TdfValueError
from tapecli.library.keras.common import flag, float_dtype, integer
from tapecli.library.keras.ops_numpy import _as, _kind, _tensor, result_type
from tapecli.runtime.values import Tensor, dtype_name


def _axis(axis, ndim: int) -> int:
    return integer(axis, "axis") % max(ndim, 1)


def _ints(value) -> list[int]:
    """An int or a list or tuple of them (a program's list arrives as a tensor) as Python ints."""
    items = [getattr(v, "value", v) for v in value] if isinstance(value, (list, tuple)) else getattr(value, "value", value)
    return [int(n) for n in np.ravel(items)]


def _along(t: Tensor, axis: int, part) -> Tensor:
    """``t[..., part, ...]`` with ``part`` (a slice) on ``axis``."""
    return ops.getitem(t, (slice(None),) * axis + (part,))


def dtype_of(x):
    """keras.ops.dtype: the tensor's dtype as Keras's standardized string."""
    return dtype_name(_tensor(x).dtype)


def view(x, dtype=None):
    """The same bytes read as another dtype (the last axis scaled by the ratio of the item sizes)."""
    v = _tensor(x).value
    new = np.dtype(dtype or v.dtype)
    if v.ndim == 0 and new.itemsize != v.dtype.itemsize or v.shape[-1] * v.dtype.itemsize % new.itemsize:
        raise TdfValueError(f"Cannot view array of shape {v.shape} and dtype {v.dtype} as dtype {new} because the "
                            "total number of bytes is not divisible by the new itemsize.")
    return Tensor(np.ascontiguousarray(v).view(new))


def copy(x):
    return ops.identity(_tensor(x))


def swapaxes(x, axis1, axis2):
    t = _tensor(x)
    perm = list(range(t.ndim))
    a, b = _axis(axis1, t.ndim), _axis(axis2, t.ndim)
    perm[a], perm[b] = b, a
    return ops.transpose(t, perm)


def moveaxis(x, source, destination):
    t = _tensor(x)
    sources = [_axis(a, t.ndim) for a in _ints(source)]
    targets = [_axis(a, t.ndim) for a in _ints(destination)]
    if len(sources) != len(targets):
        raise TdfValueError("Inconsistent number of `source` and `destination`. "
                            f"Received: source={source}, destination={destination}")
    perm = [i for i in range(t.ndim) if i not in sources]
    for target, src in sorted(zip(targets, sources)):
        perm.insert(target, src)
    return ops.transpose(t, perm)


def _wrapped(indices, size: int) -> Tensor:
    """Negative indices counted from the end (Keras's "fill" mode)."""
    i = _tensor(indices)
    return Tensor(np.where(i.value < 0, i.value + size, i.value).astype(i.dtype))


def take(x, indices, axis=None):
    t = _tensor(x)
    if axis is None:
        t, axis = ops.reshape(t, (-1,)), 0
    axis = _axis(axis, t.ndim)
    return ops.gather(t, _wrapped(indices, t.shape[axis]), axis=axis)


def take_along_axis(x, indices, axis=None):
    t, i = _tensor(x), _tensor(indices)
    if axis is None:
        if i.ndim != 1:
            raise TdfValueError(f"`indices` must be 1D if axis=None. Received: indices.shape={i.shape}")
        t, axis = ops.reshape(t, (-1,)), 0
    axis = _axis(axis, t.ndim)
    shape = np.broadcast_shapes(t.shape[:axis] + (1,) + t.shape[axis + 1:], i.shape[:axis] + (1,) + i.shape[axis + 1:])
    t = ops.broadcast_to(t, shape[:axis] + (t.shape[axis],) + shape[axis + 1:])
    index = np.broadcast_to(_wrapped(i, t.shape[axis]).value, shape[:axis] + (i.shape[axis],) + shape[axis + 1:])
    grid = list(np.indices(index.shape, sparse=True))
    grid[axis] = index
    full = np.stack(np.broadcast_arrays(*grid), axis=-1).astype(np.int64)
    return ops.gather_nd(t, Tensor(full))


def _joined(xs) -> list[Tensor]:
    ts = [_tensor(x) for x in xs]
    dtype = result_type(*map(_kind, ts))
    return [_as(t, dtype) for t in ts]


def hstack(xs):
    ts = _joined(xs)
    return ops.concat(ts, 0 if ts[0].ndim == 1 else 1)


def vstack(xs):
    return ops.concat(_joined(xs), 0)


def dstack(xs):
    shapes = {0: (1, 1, 1), 1: None, 2: None}
    out = []
    for t in _joined(xs):
        if t.ndim in shapes:
            t = ops.reshape(t, shapes[t.ndim] or ((1, t.shape[0], 1) if t.ndim == 1 else t.shape + (1,)))
        out.append(t)
    return ops.concat(out, 2)


def append(x1, x2, axis=None):
    a, b = _joined([x1, x2])
    if axis is None:
        return ops.concat([ops.reshape(a, (-1,)), ops.reshape(b, (-1,))], 0)
    return ops.concat([a, b], integer(axis, "axis"))


def _split(t: Tensor, bounds: list[int], axis: int) -> list[Tensor]:
    return [_along(t, axis, slice(lo, hi)) for lo, hi in zip(bounds[:-1], bounds[1:])]


def split(x, indices_or_sections, axis=0):
    """Sections of equal size (as TensorFlow's split, which refuses unequal ones) or cut at the indices given."""
    t = _tensor(x)
    axis = _axis(axis, t.ndim)
    size = t.shape[axis]
    if np.ndim(getattr(indices_or_sections, "value", indices_or_sections)):
        cuts = _ints(indices_or_sections)
        return _split(t, [0, *cuts, size], axis)
    n = integer(indices_or_sections, "indices_or_sections")
    if size % n:
        raise TdfValueError(f"Determined shape must either match input shape along split_dim exactly if fully "
                            f"specified, or be less than the size of the input along split_dim if not fully "
                            f"specified.  Got: {size}")
    return _split(t, list(range(0, size + 1, size // n)), axis)


def hsplit(x, indices_or_sections):
    return split(x, indices_or_sections, 0 if _tensor(x).ndim == 1 else 1)


def vsplit(x, indices_or_sections):
    return split(x, indices_or_sections, 0)


def dsplit(x, indices_or_sections):
    return split(x, indices_or_sections, 2)


def array_split(x, indices_or_sections, axis=0):
    """``indices_or_sections`` parts, the first ``size % n`` of them one longer."""
    t = _tensor(x)
    axis = _axis(axis, t.ndim)
    n = integer(indices_or_sections, "indices_or_sections")
    avg, extra = divmod(t.shape[axis], n)
    sizes = [avg + 1] * extra + [avg] * (n - extra)
    return _split(t, [0, *np.cumsum(sizes).tolist()], axis)


def diff(a, n=1, axis=-1):
    t = _tensor(a)
    n = integer(n, "n")
    if n < 0:
        raise TdfValueError(f"Order `n` must be non-negative. Received n={n}")
    if n and t.ndim == 0:
        raise TdfValueError(f"`diff` requires input that is at least one dimensional. Received: a={a}")
    axis = _axis(axis, t.ndim) if n else 0
    for _ in range(n):
        later, earlier = _along(t, axis, slice(1, None)), _along(t, axis, slice(None, -1))
        t = ops.not_equal(later, earlier) if t.dtype == bool else ops.sub(later, earlier)
    return t


def outer(x1, x2):
    a, b = _joined([x1, x2])
    return ops.mul(ops.reshape(a, (-1, 1)), ops.reshape(b, (-1,)))


def _computed_in_float(x1, x2):
    """inner/vdot: computed in result_type(x1, x2, float), returned in result_type(x1, x2)."""
    dtype = result_type(_kind(x1), _kind(x2))
    compute = result_type(dtype, "float")
    return _as(x1, compute), _as(x2, compute), np.dtype(dtype)


def inner(x1, x2):
    a, b, dtype = _computed_in_float(x1, x2)
    out = ops.mul(a, b) if 0 in (a.ndim, b.ndim) else ops.tensordot(a, b, [[a.ndim - 1], [b.ndim - 1]])
    return ops.cast(out, dtype)


def vdot(x1, x2):
    a, b, dtype = _computed_in_float(x1, x2)
    return ops.cast(ops.reduce_sum(ops.mul(ops.reshape(a, (-1,)), ops.reshape(b, (-1,)))), dtype)


def cdist(x, y):
    """The Euclidean distance of each row of x to each of y."""
    a, b = _tensor(x), _tensor(y)
    if a.ndim < 2 or b.ndim < 2:
        raise TdfValueError("`cdist` inputs must have rank >= 2")
    if a.shape[-1] != b.shape[-1]:
        raise TdfValueError("Last dimension of inputs to `cdist` must match")
    gaps = ops.sub(ops.reshape(a, a.shape[:-1] + (1, a.shape[-1])), ops.reshape(b, b.shape[:-2] + (1,) + b.shape[-2:]))
    return ops.sqrt(ops.reduce_sum(ops.square(gaps), -1))


def kron(x1, x2):
    a, b = _joined([x1, x2])
    rank = max(a.ndim, b.ndim)
    a = ops.reshape(a, (1,) * (rank - a.ndim) + a.shape)
    b = ops.reshape(b, (1,) * (rank - b.ndim) + b.shape)
    wide = ops.mul(ops.reshape(a, tuple(d for n in a.shape for d in (n, 1))),
                   ops.reshape(b, tuple(d for n in b.shape for d in (1, n))))
    return ops.reshape(wide, tuple(p * q for p, q in zip(a.shape, b.shape)))


def tri(N, M=None, k=0, dtype=None):
    n = integer(N, "N")
    m = n if M is None else integer(M, "M")
    rows, cols = np.indices((n, m))
    return Tensor((cols - rows <= integer(k, "k")).astype(dtype or float_dtype()))


def diagonal(x, offset=0, axis1=0, axis2=1):
    t = moveaxis(x, (axis1, axis2), (-2, -1))
    offset = integer(offset, "offset")
    rows, cols = t.shape[-2:]
    length = max(0, min(rows + min(offset, 0), cols - max(offset, 0)))
    if length == 0:
        return ops.reshape(ops.getitem(t, (Ellipsis, slice(0, 0), 0)), t.shape[:-2] + (0,))
    r = np.arange(length) - min(offset, 0)
    flat = ops.reshape(t, t.shape[:-2] + (rows * cols,))
    return ops.gather(flat, Tensor(r * cols + r + offset), axis=t.ndim - 2)


def diagflat(x, k=0):
    v = ops.reshape(_tensor(x), (-1,))
    k, n = integer(k, "k"), v.shape[0]
    size = n + abs(k)
    r = np.arange(n) + max(-k, 0)
    return ops.scatter_nd(Tensor(np.stack([r, r + k], -1)), v, (size, size))


def fliplr(x):
    return ops.reverse(_tensor(x), [1])


def flipud(x):
    return ops.reverse(_tensor(x), [0])


def rot90(array, k=1, axes=(0, 1)):
    t = _tensor(array)
    if t.ndim < 2:
        raise TdfValueError(f"Input array must have at least 2 dimensions. Received: array.ndim={t.ndim}")
    axes = tuple(_ints(axes))
    if len(axes) != 2 or axes[0] == axes[1]:
        raise TdfValueError(f"Invalid axes: {axes}. Axes must be a tuple of two different dimensions.")
    k = integer(k, "k") % 4
    if k == 0:
        return t
    # Keras's steps, kept as they are: for k > 1 its turns reshape the turned block to (h, w) first, so that
    # a non-square plane reads its elements in another order than NumPy's rot90.
    a, b = (_axis(i, t.ndim) for i in axes)
    perm = [i for i in range(t.ndim) if i not in (a, b)] + [a, b]
    t = ops.transpose(t, perm)
    outer, (h, w) = t.shape[:-2], t.shape[-2:]

    def turn(block):
        return ops.transpose(ops.reverse(block, [2]), [0, 2, 1])
    t = turn(ops.reshape(t, (-1, h, w)))
    final = (w, h) if k % 2 else (h, w)
    if k > 1:
        t = ops.reshape(t, (-1, *final))
        for _ in range(k - 1):
            t = turn(t)
    return ops.transpose(ops.reshape(t, outer + final), np.argsort(perm).tolist())


def vander(x, N=None, increasing=False):
    t = _tensor(x)
    n = t.shape[0] if N is None else integer(N, "N")
    powers = np.arange(n) if flag(increasing) else np.arange(n - 1, -1, -1)
    compute = np.dtype(result_type(_kind(t), "float32"))
    out = ops.pow_(ops.cast(ops.reshape(t, t.shape + (1,)), compute), Tensor(powers.astype(compute)))
    return ops.cast(out, t.dtype)


def trapezoid(y, x=None, dx=1.0, axis=-1):
    dtype = result_type(_kind(y), "float")
    t = moveaxis(_as(y, dtype), axis, -1)
    step = _as(dx, dtype) if x is None else moveaxis(diff(_as(x, dtype), axis=axis), axis, -1)
    heights = ops.mul(Tensor(np.asarray(0.5, dtype)),
                      ops.add(ops.getitem(t, (Ellipsis, slice(1, None))), ops.getitem(t, (Ellipsis, slice(None, -1)))))
    return ops.reduce_sum(ops.mul(heights, step), axis=-1)


def nonzero(x):
    return [Tensor(i.astype(np.int32)) for i in np.nonzero(_tensor(x).value)]


def _arg_extreme(f, x, axis, keepdims):
    """Keras's argmax/argmin on TensorFlow: int32 indices (tf.argmax's output_type="int32"), of the flattened
    tensor where axis is None; a float tensor in float32 at least, its -0.0 entries -tiny (Keras's flush-to-zero
    fix), so a 0.0 beats a -0.0."""
    t = _tensor(x)
    if t.dtype.kind == "f" and t.ndim:
        t = _as(t, result_type(dtype_name(t.dtype), "float32"))
        negative_zero = (t.value == 0) & np.signbit(t.value)
        if negative_zero.any():
            t = Tensor(np.where(negative_zero, -np.finfo(t.dtype).tiny, t.value).astype(t.dtype))
    flat = ops.reshape(t, (-1,)) if axis is None else t
    a = 0 if axis is None else integer(axis, "axis") % max(t.ndim, 1)
    out = ops.cast(f(flat, a), np.int32) if t.ndim else Tensor(np.array(0, np.int32))
    if flag(keepdims):
        out = ops.reshape(out, (1,) * t.ndim if axis is None else t.shape[:a] + (1,) + t.shape[a + 1:])
    return out


def where(condition, x1=None, x2=None):
    """Keras's where: the condition cast to bool; x1 where it holds, else x2, both in their result_type; neither:
    nonzero's int32 indices, one array an axis (where tf.where gives int64 [n, rank] rows)."""
    c = ops.cast(_tensor(condition), np.bool_)
    if x1 is None and x2 is None:
        return nonzero(c)
    if x1 is None or x2 is None:
        raise TdfValueError("`x1` and `x2` either both should be `None` or both should have non-None value.")
    dtype = result_type(_kind(x1), _kind(x2))
    return ops.where(c, _as(x1, dtype), _as(x2, dtype))


def argmax(x, axis=None, keepdims=False):
    return _arg_extreme(ops.argmax, x, axis, keepdims)


def argmin(x, axis=None, keepdims=False):
    return _arg_extreme(ops.argmin, x, axis, keepdims)


def digitize(x, bins):
    edges = np.asarray([float(b) for b in np.asarray(_tensor(bins).value).ravel()])
    return Tensor(np.searchsorted(edges, _tensor(x).value, side="right").astype(np.int32))


def isin(x1, x2, assume_unique=False, invert=False):
    a, b = (t.value for t in _joined([x1, x2]))
    return Tensor(np.isin(a, b, invert=flag(invert)))


def argpartition(x, kth, axis=-1):
    """The indices of the kth+1 smallest first (smallest first, as top_k of -x gives them), then the rest."""
    t = _tensor(x)
    if axis is None:
        t, axis = ops.reshape(t, (-1,)), 0
    v = np.moveaxis(t.value.astype(np.int32), _axis(axis, t.ndim), -1)
    k = min(max(integer(kth, "kth"), 0), v.shape[-1] - 1)
    bottom = np.argsort(v, axis=-1, kind="stable")[..., :k + 1]
    masked = v.copy()                   # (Keras zeroes the smallest, then takes the largest of what is left)
    np.put_along_axis(masked, bottom, 0, axis=-1)
    top = np.argsort(-masked, axis=-1, kind="stable")[..., :v.shape[-1] - k - 1]
    return Tensor(np.moveaxis(np.concatenate([bottom, top], -1), -1, _axis(axis, t.ndim)).astype(np.int32))


def histogram(x, bins=10, range=None):  # noqa: A002 - Keras's argument name
    t = _tensor(x)
    v = t.value
    low, high = (v.min(), v.max()) if range is None else (np.asarray(r, v.dtype) for r in range)
    kept = v[(v >= low) & (v <= high)]
    n = integer(bins, "bins")
    edges = np.linspace(np.float32(low), np.float32(high), n + 1, dtype=np.float32).astype(v.dtype)
    counts = np.bincount(np.searchsorted(edges[1:-1], kept, side="right"), minlength=n).astype(v.dtype)
    return Tensor(counts), Tensor(edges)


def logspace(start, stop, num=50, endpoint=True, base=10, dtype=None, axis=0):
    from tapecli.library.core import linspace
    n = integer(num, "num")
    dtype = np.dtype(dtype or result_type(_kind(start), _kind(stop), "float"))
    lo, hi = _as(start, dtype), _as(stop, dtype)
    points = linspace(lo, hi, n + (not flag(endpoint)), axis=integer(axis, "axis"))
    if not flag(endpoint):
        points = _along(points, integer(axis, "axis") % points.ndim, slice(0, n))
    return ops.pow_(ops.cast(_tensor(base), points.dtype), points)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    dtype = dtype or dtype_name(float_dtype())
    lo, hi = (ops.log(ops.abs_(_as(v, dtype))) for v in (start, stop))
    ln10 = ops.log(Tensor(np.asarray(10.0, dtype)))
    out = logspace(ops.div(lo, ln10), ops.div(hi, ln10), num, endpoint, 10, dtype, axis)
    return ops.mul(out, ops.sign(_as(start, dtype)))


def extract_sequences(x, sequence_length, sequence_stride):
    """tf.signal.frame of the last axis: the windows of ``sequence_length`` every ``sequence_stride``."""
    t = _tensor(x)
    length, stride = integer(sequence_length, "sequence_length"), integer(sequence_stride, "sequence_stride")
    starts = np.arange(0, max(t.shape[-1] - length, -1) + 1, stride)
    return ops.gather(t, Tensor(starts[:, None] + np.arange(length)), axis=t.ndim - 1)


def segment_prod(data, segment_ids, num_segments=None, sorted=False):  # noqa: A002 - Keras's argument name
    """The product of each segment's rows (1 for an empty segment), TensorFlow's unsorted_segment_prod."""
    t, ids = _tensor(data), np.ravel(_tensor(segment_ids).value)
    if flag(sorted) and num_segments is not None:
        raise TdfValueError("Argument `num_segments` cannot be set when sorted is True when using the tensorflow "
                            f"backend.Received: num_segments={num_segments}, sorted={sorted}.")
    count = int(ids.max()) + 1 if num_segments is None else integer(num_segments, "num_segments")
    return ops.unsorted_segment_prod(t, ids, count)


def cholesky_inverse(a, upper=False):
    """The inverse of L L^T (U^T U with ``upper``) from its factor, through the factor's inverse."""
    t = _tensor(a)
    eye = Tensor(np.broadcast_to(np.eye(t.shape[-1], dtype=t.dtype), t.shape))
    inverse = ops.triangular_solve(t, eye, lower=not flag(upper))
    swapped = swapaxes(inverse, -1, -2)
    return ops.matmul(inverse, swapped) if flag(upper) else ops.matmul(swapped, inverse)


def solve_triangular(a, b, lower=False):
    t, rhs = _tensor(a), _tensor(b)
    if rhs.ndim == t.ndim - 1:
        solved = ops.triangular_solve(t, ops.reshape(rhs, rhs.shape + (1,)), lower=flag(lower))
        return ops.reshape(solved, rhs.shape)
    return ops.triangular_solve(t, rhs, lower=flag(lower))


FUNCTIONS = {f"ops.{f.__name__}": f for f in (
    extract_sequences, segment_prod, cholesky_inverse, solve_triangular, cdist, view,
    copy, swapaxes, moveaxis, take, take_along_axis, hstack, vstack, dstack, append, hsplit, vsplit, dsplit,
    array_split, diff, outer, inner, vdot, kron, tri, diagonal, diagflat, fliplr, flipud, rot90, vander, trapezoid,
    nonzero, where, argmax, argmin, digitize, isin, argpartition, histogram, logspace, geomspace)}
FUNCTIONS["ops.split"] = split
FUNCTIONS["ops.dtype"] = dtype_of
