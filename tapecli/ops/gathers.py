"""Gathers, scatters, sorting and rearranging (tf.gather, tf.gather_nd, tf.scatter_nd, tf.sort, tf.tile,
tf.pad, ...), written as compositions of ``getitem`` and ``index_grad`` (whose gradients scatter and
gather back), ``concat`` and ``where`` (tf.tile: a broadcast, as TensorFlow's gradient sums it): TensorFlow's
gradients are those of the compositions, and every order and the forward mode come with them. The segment
product is an op of its own: TensorFlow's gradient divides its result by each factor (the factors' own zeros
apart), which no composition records.

Index arguments are NumPy integer arrays here (the builtins convert and check them)."""
from __future__ import annotations

import numpy as np

from tapecli.errors import KernelValueError, ShapeError, TdfTypeError, TdfValueError
from tapecli.ops.core import apply, materialize, numeric, register, to_tensor
from tapecli.ops.elementwise import add, cast, div, equal, greater, mul, ones_like, where, zeros_like
from tapecli.ops.shape import broadcast_to, concat, getitem, index_grad, reshape, transpose
from tapecli.runtime.limits import admit_result
from tapecli.runtime.values import dtype_name, Tensor
from tapecli.runtime import spelling


def _axis(axis, ndim, what):
    if not -max(ndim, 1) <= axis < max(ndim, 1):
        raise ShapeError(f"{what}: axis {axis} is out of range for a tensor of rank {ndim}")
    return axis % max(ndim, 1)


def int_indices(indices, what) -> np.ndarray:
    """An index argument as an int array; a float or bool one is TensorFlow's TypeError."""
    t = to_tensor(indices)
    if t.dtype.kind not in "iu":
        raise TdfTypeError(f"{what} needs int32 or int64 indices, got {dtype_name(t.dtype)}",
                           hint=spelling.cast("indices", "int32"))
    return np.asarray(t.value, dtype=np.int64)


def _check_range(idx, n, what):
    bad = (idx < 0) | (idx >= n)
    if bad.any():
        pos = tuple(int(i) for i in np.argwhere(bad)[0])
        if what == "gather":        # (TensorFlow's words: GatherV2's kernel)
            raise KernelValueError(f"indices[{','.join(map(str, pos))}] = {int(idx[pos])} is not in [0, {n}) "
                                   "[Op:GatherV2]")
        where_ = ", ".join(str(p) for p in pos)
        raise KernelValueError(f"{what}: indices{f'[{where_}]' if where_ else ''} = {int(idx[pos])} is not in [0, {n})")


def _along(x: Tensor, axis: int, idx) -> Tensor:
    return getitem(x, (slice(None),) * axis + (idx,))


def gather(params, indices, axis=0, batch_dims=0) -> Tensor:
    """params.shape[:axis] + indices.shape[batch_dims:] + params.shape[axis + 1:], as tf.gather: a negative
    batch_dims counts from the indices' rank, and without an axis (None) the axis is batch_dims."""
    x = to_tensor(params)
    idx = int_indices(indices, "gather")
    if x.ndim == 0:
        raise ShapeError("gather: params must be at least 1-D, got a scalar")
    b = batch_dims + idx.ndim if batch_dims < 0 else batch_dims
    axis = _axis(b if axis is None else axis, x.ndim, "gather")
    if b:
        if not 0 <= b <= min(axis, idx.ndim) or x.shape[:b] != idx.shape[:b]:
            raise ShapeError(f"gather: batch_dims={batch_dims} needs an axis at or after it and params' first "
                             f"{b} dimensions (shape {list(x.shape)}) equal to the indices' (shape {list(idx.shape)})")
        _check_range(idx, x.shape[axis], "gather")
        if axis == b:
            return getitem(x, _batch_grids(idx, b) + (idx,))
        # the axis moved next to the batch dimensions, gathered there, and the dimensions between moved back
        moved = getitem(transpose(x, [*range(b), axis, *(d for d in range(b, x.ndim) if d != axis)]),
                        _batch_grids(idx, b) + (idx,))
        k, between = idx.ndim - b, axis - b
        return transpose(moved, [*range(b), *range(b + k, b + k + between), *range(b, b + k),
                                 *range(b + k + between, moved.ndim)])
    _check_range(idx, x.shape[axis], "gather")
    return _along(x, axis, idx)


def _batch_grids(idx, b):
    """Index arrays for the first ``b`` (batch) dimensions, broadcasting against ``idx``."""
    return tuple(np.arange(idx.shape[i]).reshape((-1,) + (1,) * (idx.ndim - i - 1)) for i in range(b))


def gather_nd(params, indices, batch_dims=0) -> Tensor:
    """indices.shape[:-1] + params.shape[indices.shape[-1]:], as tf.gather_nd."""
    x = to_tensor(params)
    idx = int_indices(indices, "gather_nd")
    if batch_dims:
        b = batch_dims
        if b < 0 or b >= idx.ndim or x.shape[:b] != idx.shape[:b] or idx.shape[-1] > x.ndim - b:
            raise ShapeError(f"gather_nd: batch_dims={b} needs params (shape {list(x.shape)}) and indices (shape "
                             f"{list(idx.shape)}) to share their first {b} dimensions")
        for j in range(idx.shape[-1]):
            _check_range(idx[..., j], x.shape[b + j], "gather_nd")
        grids = _batch_grids(idx[..., 0], b)
        return getitem(x, grids + tuple(idx[..., j] for j in range(idx.shape[-1])))
    if idx.ndim == 0 or idx.shape[-1] > x.ndim:
        raise ShapeError(f"gather_nd: the last dimension of indices (shape {list(idx.shape)}) must be at most the "
                         f"rank of params (shape {list(x.shape)})")
    for j in range(idx.shape[-1]):
        _check_range(idx[..., j], x.shape[j], "gather_nd")
    return getitem(x, tuple(idx[..., j] for j in range(idx.shape[-1])))


def scatter_nd(indices, updates, shape) -> Tensor:
    """A zeros tensor of ``shape`` with ``updates`` added at ``indices`` (duplicates add), as tf.scatter_nd."""
    u = to_tensor(updates)
    idx = int_indices(indices, "scatter_nd")
    shape = tuple(int(s) for s in shape)
    k = idx.shape[-1] if idx.ndim else 0
    want = idx.shape[:-1] + shape[k:]
    if idx.ndim == 0 or k > len(shape) or u.shape != want:
        raise ShapeError(f"scatter_nd: updates of shape {list(u.shape)} do not fit indices of shape {list(idx.shape)} "
                         f"into shape {list(shape)} (updates must have shape {list(want)})")
    for j in range(k):
        _check_range(idx[..., j], shape[j], "scatter_nd")
    if u.weak:
        u = materialize(u)
    return index_grad(u, shape, tuple(idx[..., j] for j in range(k)))


def _segments(data, segment_ids, num_segments, what):
    """An unsorted segment op's data (a tensor) and ids (checked: a prefix of its shape, each in range)."""
    x = to_tensor(data)
    ids = int_indices(segment_ids, what)
    if x.shape[:ids.ndim] != ids.shape:
        raise ShapeError(f"{what}: segment_ids of shape {list(ids.shape)} must be a prefix of data's shape "
                         f"{list(x.shape)}")
    _check_range(ids, num_segments, what)
    return (materialize(x) if x.weak else x), ids


def unsorted_segment_sum(data, segment_ids, num_segments) -> Tensor:
    """Sums of the rows of ``data`` sharing a segment id (tf.math.unsorted_segment_sum)."""
    x, ids = _segments(data, segment_ids, num_segments, "unsorted_segment_sum")
    return index_grad(x, (num_segments,) + x.shape[ids.ndim:], (ids,))


def _segment_prod_kernel(x, ids, num):
    """Each segment's product in the order of its rows (1 for an empty one), as TensorFlow's kernel multiplies."""
    out = np.ones((num,) + x.shape[ids.ndim:], dtype=x.dtype)
    np.multiply.at(out, ids, x)
    return out


def _segment_prod_partials(r):
    """d out / d x, as TensorFlow's _UnsortedSegmentProdGrad: the segment's product over x; where x is 0, the
    product of the segment's other rows (its non-zero product). Also where a segment has more than one zero
    (its gradient is 0 there), shaped as the output."""
    x, ids, num = r.inputs[0], r.attrs["ids"], r.attrs["num"]
    is_zero = equal(x, 0)
    zeros = unsorted_segment_sum(cast(is_zero, np.int32), ids, num)
    non_zero = where(is_zero, ones_like(x), x)
    non_zero_prod = unsorted_segment_prod(non_zero, ids, num)
    partials = where(is_zero, gather(non_zero_prod, ids), div(gather(r.output, ids), non_zero))
    return partials, greater(zeros, 1)


def _segment_prod_vjp(r, g):
    partials, dead = _segment_prod_partials(r)
    g = where(dead, zeros_like(g), g)
    return (mul(gather(g, r.attrs["ids"], axis=g.ndim - r.output.ndim), partials),)


def _segment_prod_jvp(r, ts):
    partials, dead = _segment_prod_partials(r)
    t, ids = ts[0], r.attrs["ids"]
    batch = t.ndim - partials.ndim          # (a batch of tangents: its dimensions moved behind the segments')
    order = [*range(batch, batch + ids.ndim), *range(batch), *range(batch + ids.ndim, t.ndim)]
    summed = unsorted_segment_sum(transpose(mul(t, partials), order), ids, r.attrs["num"])
    summed = transpose(summed, [*range(1, batch + 1), 0, *range(batch + 1, summed.ndim)])
    return where(dead, zeros_like(summed), summed)


UNSORTED_SEGMENT_PROD = register("unsorted_segment_prod", unify=(), numpy=_segment_prod_kernel,
                                 vjp=_segment_prod_vjp, jvp=_segment_prod_jvp, saves=(0, "out"))


def unsorted_segment_prod(data, segment_ids, num_segments) -> Tensor:
    """Products of the rows of ``data`` sharing a segment id (tf.math.unsorted_segment_prod)."""
    x, ids = _segments(data, segment_ids, num_segments, "unsorted_segment_prod")
    admit_result((num_segments,) + x.shape[ids.ndim:], x.dtype, "the result of unsorted_segment_prod")
    return apply(UNSORTED_SEGMENT_PROD, (x,), ids=ids, num=int(num_segments))


def tensor_scatter_nd_add(tensor, indices, updates) -> Tensor:
    t = to_tensor(tensor)
    u = to_tensor(updates)
    if u.weak and not t.weak:
        u = materialize(u, t.dtype)
    return add(t, scatter_nd(indices, u, t.shape))


def boolean_mask(tensor, mask, axis=0) -> Tensor:
    x = to_tensor(tensor)
    m = to_tensor(mask)
    if m.dtype.kind not in "biuf":
        raise TdfTypeError(f"boolean_mask needs a bool mask, got {dtype_name(m.dtype)}")
    axis = _axis(axis, x.ndim, "boolean_mask")
    if m.ndim == 0 or x.shape[axis:axis + m.ndim] != m.shape:
        raise ShapeError(f"boolean_mask: the mask's shape {list(m.shape)} must match the tensor's shape "
                         f"{list(x.shape)} from axis {axis}")
    # (a number mask takes its nonzero entries: TensorFlow's boolean_mask gathers where(mask))
    chosen = m.value if m.dtype == np.bool_ else np.asarray(m.value) != 0
    return getitem(x, (slice(None),) * axis + (chosen,))


def _sort_order(values: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """Stable: ties keep their order, as TensorFlow's top_k-based sort."""
    v = values
    if descending:
        v = -v if v.dtype.kind == "f" else (-(v.astype(np.int64)) if v.dtype.kind in "iu" else ~v)
    return np.argsort(v, axis=axis, kind="stable")


def _take_along(x: Tensor, order: np.ndarray, axis: int) -> Tensor:
    grids = list(np.indices(order.shape, sparse=True))
    grids[axis] = order
    return getitem(x, tuple(grids))


def argsort(values, axis=-1, direction="ASCENDING") -> Tensor:
    x = numeric(to_tensor(values), "argsort")
    axis = _axis(axis, x.ndim, "argsort")
    return Tensor(_sort_order(x.value, axis, _descending(direction)).astype(np.int32))


def sort(values, axis=-1, direction="ASCENDING") -> Tensor:
    x = numeric(to_tensor(values), "sort")
    axis = _axis(axis, x.ndim, "sort")
    return _take_along(x, _sort_order(x.value, axis, _descending(direction)), axis)


def _descending(direction) -> bool:
    if direction not in ("ASCENDING", "DESCENDING"):
        raise TdfValueError(f"direction must be \"ASCENDING\" or \"DESCENDING\", got {direction!r}")
    return direction == "DESCENDING"


def top_k(x, k=1, sorted=True) -> list:  # noqa: A002 (TensorFlow's parameter name)
    """[values, indices] of the k largest entries of the last axis; ties: the lower index first."""
    t = numeric(to_tensor(x), "top_k")
    if t.ndim == 0:
        raise ShapeError("top_k: input must be at least 1-D, got a scalar")
    n = t.shape[-1]
    if k < 0 or k > n:
        raise TdfValueError(f"top_k: input must have at least k={k} columns, had {n}")
    order = _sort_order(t.value, t.ndim - 1, True)[..., :k]
    return [_take_along(t, order, t.ndim - 1), Tensor(order.astype(np.int32))]


def reverse(tensor, axis) -> Tensor:
    x = to_tensor(tensor)
    axes = {_axis(a, x.ndim, "reverse") for a in axis}
    return getitem(x, tuple(slice(None, None, -1) if i in axes else slice(None) for i in range(x.ndim)))


def roll(x, shift, axis) -> Tensor:
    t = to_tensor(x)
    for s, a in zip(shift, axis):
        a = _axis(a, t.ndim, "roll")
        t = _along(t, a, np.roll(np.arange(t.shape[a]), s))
    return t


def tile(x, multiples) -> Tensor:
    t = to_tensor(x)
    if len(multiples) != t.ndim:
        raise ShapeError(f"tile: expected multiples of length {t.ndim} (the rank of shape {list(t.shape)}), "
                         f"got length {len(multiples)}")
    if any(m < 0 for m in multiples):
        raise TdfValueError(f"tile: multiples must be non-negative, got {list(multiples)}")
    tiled = [n * int(m) for n, m in zip(t.shape, multiples)]
    admit_result(tiled, t.dtype, "the result of tile")
    admit_result((max(tiled, default=0),), np.int64, "tile's index")     # the int64 index along an axis
    if all(m == 1 for m in multiples):
        return t
    # each tiled axis of n as (1, n) broadcast to (m, n): the gradient is then TensorFlow's TileGrad, the sum of
    # the gradient as (m, n) pairs over every m at once (copies along the axis, one after another, differ)
    split, spread = [], []
    for n, m in zip(t.shape, multiples):
        split += [1, n] if m != 1 else [n]
        spread += [int(m), n] if m != 1 else [n]
    return reshape(broadcast_to(reshape(t, split), spread), tiled)


def pad(tensor, paddings, mode="CONSTANT", constant_values=0) -> Tensor:
    """tf.pad: CONSTANT (constant_values), REFLECT (the edge not repeated) or SYMMETRIC (repeated)."""
    x = to_tensor(tensor)
    if x.weak:
        x = materialize(x)
    mode = str(mode).upper()
    if mode not in ("CONSTANT", "REFLECT", "SYMMETRIC"):
        raise TdfValueError(f"pad: mode must be CONSTANT, REFLECT or SYMMETRIC, got {mode!r}")
    if len(paddings) != x.ndim or any(len(p) != 2 for p in paddings):
        raise ShapeError(f"pad: paddings must be a list of {x.ndim} [before, after] pairs for shape "
                         f"{list(x.shape)}, got {paddings}")
    if any(before < 0 or after < 0 for before, after in paddings):
        raise TdfValueError(f"pad: paddings must be non-negative, got {paddings}")
    admit_result([n + int(before) + int(after) for n, (before, after) in zip(x.shape, paddings)], x.dtype,
                 "the result of pad")
    for a, (before, after) in enumerate(paddings):
        if not before and not after:
            continue
        n = x.shape[a]
        if mode == "CONSTANT":
            parts = []
            for count in (before, None, after):
                if count is None:
                    parts.append(x)
                elif count:
                    fill = np.full(x.shape[:a] + (count,) + x.shape[a + 1:], constant_values, dtype=x.dtype)
                    parts.append(Tensor(fill))
            x = concat(parts, axis=a)
            continue
        limit = n - 1 if mode == "REFLECT" else n
        if before > limit or after > limit:
            word = "less than" if mode == "REFLECT" else "no greater than"
            raise TdfValueError(f"pad: {mode} paddings must be {word} the dimension size: {before}, {after} vs {n}")
        idx = np.arange(-before, n + after)
        if mode == "REFLECT":
            idx = np.abs(idx)
            idx = np.where(idx >= n, 2 * (n - 1) - idx, idx)
        else:
            idx = np.where(idx < 0, -idx - 1, idx)
            idx = np.where(idx >= n, 2 * n - 1 - idx, idx)
        x = _along(x, a, idx)
    return x


def band_part(x, num_lower, num_upper) -> Tensor:
    """The band of the last two axes (negative: keep all), zeros elsewhere, as tf.linalg.band_part."""
    t = to_tensor(x)
    if t.ndim < 2:
        raise ShapeError(f"band_part needs at least a matrix, got shape {list(t.shape)}")
    m, n = t.shape[-2:]
    i = np.arange(m)[:, None]
    j = np.arange(n)[None, :]
    keep = ((num_lower < 0) | (i - j <= num_lower)) & ((num_upper < 0) | (j - i <= num_upper))
    return where(Tensor(np.broadcast_to(keep, t.shape).copy()), t, zeros_like(t))


def sequence_mask(lengths: np.ndarray, maxlen=None, dtype=np.bool_) -> Tensor:
    n = int(lengths.max()) if maxlen is None and lengths.size else int(maxlen or 0)
    # weighed at 8 bytes an element, the widest dtype the mask can be asked in
    admit_result(lengths.shape + (max(n, 0),), np.float64, "the result of sequence_mask")
    return Tensor((np.arange(n) < lengths[..., None]).astype(dtype))
