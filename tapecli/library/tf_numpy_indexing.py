"""tf.experimental.numpy, picking elements: by position (take, take_along_axis, ix_), by condition (where, select,
compress, nonzero), and diagonals and triangles, as np_array_ops.py writes them over TensorFlow's gathers, wheres and
masks, so the gradients flow to the elements picked (tf_numpy.py says how the module is reached)."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import ShapeError, TdfValueError
from tapecli.interpreter.conversions import to_int
from tapecli.library.tf_numpy import asarray, check_axis, numpy_function, promote
from tapecli.library.tf_numpy_arrays import at_least, moveaxis
from tapecli.runtime.values import PythonTuple, Tensor

_BOOL = np.dtype(np.bool_)


@numpy_function()
def take(a, indices, axis=None, out=None, mode="clip"):
    """The elements at ``indices`` along ``axis`` (of the flattened array without one); indices out of range are
    clipped (``mode="clip"``, tnp's default) or wrapped (``"wrap"``)."""
    if out is not None:
        raise TdfValueError("out argument is not supported in take.")
    if mode not in ("raise", "clip", "wrap"):
        raise TdfValueError(f"Invalid mode '{mode}' for take")
    if mode == "raise":
        raise TdfValueError("The 'raise' mode to take is not supported.")
    t, index = asarray(a), asarray(indices)
    if axis is None:
        t, at = ops.reshape(t, (-1,)), 0
    else:
        at = check_axis(to_int(axis, "axis"), t.ndim, "take")
    n = t.shape[at]
    idx = np.clip(index.value, 0, n - 1) if mode == "clip" else np.mod(index.value, n)
    return ops.gather(t, Tensor(idx), axis=at)


@numpy_function()
def take_along_axis(arr, indices, axis):
    """The elements of ``arr`` at ``indices`` along ``axis`` (the other axes broadcast between the two; a negative
    index counts from the end)."""
    t, index = asarray(arr), asarray(indices)
    if axis is None:
        t, index, at = ops.reshape(t, (-1,)), ops.reshape(index, (-1,)), 0
    else:
        at = check_axis(to_int(axis, "axis"), t.ndim, "take_along_axis")
    if index.ndim != t.ndim:
        raise ShapeError(f"take_along_axis: indices of rank {index.ndim} for an array of rank {t.ndim}")
    others = np.broadcast_shapes(*(tuple(1 if i == at else n for i, n in enumerate(s)) for s in (t.shape, index.shape)))
    t = ops.broadcast_to(t, others[:at] + (t.shape[at],) + others[at + 1:])
    picked = np.broadcast_to(index.value, others[:at] + (index.shape[at],) + others[at + 1:])
    picked = np.where(picked < 0, picked + t.shape[at], picked)
    grids = list(np.indices(picked.shape, sparse=True))
    grids[at] = picked
    return ops.getitem(t, tuple(grids))


@numpy_function("ix_")
def ix_(*args):
    """Open grids of the 1-d index arrays (a bool one's true positions), each shaped to index its own axis."""
    out = []
    for i, a in enumerate(args):
        t = asarray(a)
        if t.ndim != 1:
            raise TdfValueError(f"Arguments must be 1-d, got arg {i} of rank {t.ndim}")
        if t.dtype == np.bool_:
            t = nonzero(t)[0]
        elif t.dtype.kind not in "iu":
            raise TdfValueError(f"Only integer and bool dtypes are supported, got {t.dtype}")
        out.append(ops.reshape(t, tuple(-1 if j == i else 1 for j in range(len(args)))))
    return out


@numpy_function()
def where(condition, x=None, y=None):
    """``x`` where ``condition`` holds, else ``y`` (promoted to one dtype, broadcast); alone, the condition's
    nonzero indices."""
    c = asarray(condition, _BOOL)
    if x is None and y is None:
        return nonzero(c)
    if x is None or y is None:
        raise TdfValueError("Both x and y must be ndarrays, or both must be None.")
    return ops.where(c, *promote(x, y))


@numpy_function()
def select(condlist, choicelist, default=0):
    """The choice of the first condition that holds, element by element; ``default`` where none does."""
    if len(condlist) != len(choicelist):
        raise TdfValueError(f"condlist must have length equal to choicelist ({len(condlist)} vs {len(choicelist)})")
    if not len(condlist):
        raise TdfValueError("condlist must be non-empty")
    output, *choices = promote(default, *choicelist)
    for cond, choice in zip(list(condlist)[::-1], choices[::-1]):
        output = where(cond, choice, output)
    return output


@numpy_function()
def nonzero(a):
    """The indices of the nonzero elements, one int64 array per axis."""
    t = at_least(1, a)
    found = np.argwhere(t.value.astype(bool)).astype(np.int64)
    return [Tensor(np.ascontiguousarray(found[:, i])) for i in range(t.ndim)]


@numpy_function()
def compress(condition, a, axis=None):
    """The slices of ``a`` along ``axis`` (of the flattened array without one) where the 1-d ``condition`` holds;
    a shorter condition leaves out the rest."""
    keep, t = asarray(condition, _BOOL), asarray(a)
    if keep.ndim != 1:
        raise TdfValueError("condition must be a 1-d array.")
    if t.ndim == 0 or axis is None:
        t, at = ops.reshape(t, (-1,)), 0
    else:
        at = check_axis(to_int(axis, "axis"), t.ndim, "compress")
    if keep.shape[0] < t.shape[at]:
        keep = Tensor(np.concatenate([keep.value, np.zeros(t.shape[at] - keep.shape[0], dtype=bool)]))
    return ops.boolean_mask(t, keep, at)


# ------------------------------------------------------------------ diagonals and triangles

@numpy_function()
def diag(v, k=0):
    """A vector's diagonal matrix (on the ``k``-th diagonal), or a matrix's ``k``-th diagonal."""
    t = asarray(v)
    at = to_int(k, "k")
    if t.ndim not in (1, 2):
        raise TdfValueError(f"Shape must be at most rank 2 but is rank {t.ndim}")
    if t.ndim == 1:
        n = t.shape[0] + abs(at)
        grid = np.arange(t.shape[0])
        rows, cols = (grid, grid + at) if at >= 0 else (grid - at, grid)
        return ops.scatter_nd(Tensor(np.stack([rows, cols], 1).astype(np.int64)), t, (n, n))
    return diagonal(t, at)


@numpy_function()
def diagflat(v, k=0):
    return diag(ops.reshape(asarray(v), (-1,)), k)


@numpy_function()
def diagonal(a, offset=0, axis1=0, axis2=1):
    """The ``offset``-th diagonal of the matrices ``axis1`` and ``axis2`` span, along a new last axis."""
    t = asarray(a)
    at = to_int(offset, "offset")
    first, second = (check_axis(to_int(x, "axis"), t.ndim, "diagonal") for x in (axis1, axis2))
    moved = moveaxis(t, [first, second], [-2, -1])
    rows, cols = moved.shape[-2:]
    grid = np.arange(max(0, min(rows, cols - at) if at >= 0 else min(rows + at, cols)))
    pick = (grid, grid + at) if at >= 0 else (grid - at, grid)
    return ops.getitem(moved, (Ellipsis, pick[0].astype(np.int64), pick[1].astype(np.int64)))


@numpy_function()
def diag_indices(n, ndim=2):
    """The indices of the main diagonal of an ``ndim``-d array of side ``n``: one int32 range per axis."""
    side, rank = to_int(n, "n"), to_int(ndim, "ndim")
    if side < 0:
        raise TdfValueError(f"n argument to diag_indices must be nonnegative, got {side}")
    if rank < 0:
        raise TdfValueError(f"ndim argument to diag_indices must be nonnegative, got {rank}")
    return PythonTuple([Tensor(np.arange(side, dtype=np.int32))] * rank)


def _triangle(m, k, lower: bool) -> Tensor:
    t = asarray(m)
    if t.ndim < 2:
        raise TdfValueError(f"Argument to {'tril' if lower else 'triu'} must have rank at least 2")
    rows, cols = t.shape[-2:]
    mask = np.tri(rows, cols, k if lower else k - 1, dtype=bool)
    zero = Tensor(np.zeros((), dtype=t.dtype))
    keep, drop = (t, zero) if lower else (zero, t)
    return ops.where(Tensor(np.broadcast_to(mask, t.shape)), keep, drop)


@numpy_function()
def tril(m, k=0):
    return _triangle(m, to_int(k, "k"), True)


@numpy_function()
def triu(m, k=0):
    return _triangle(m, to_int(k, "k"), False)
