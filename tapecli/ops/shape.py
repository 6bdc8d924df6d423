"""Shape ops: reshape, transpose, broadcast_to, concat, stack, indexing."""
from __future__ import annotations


import numpy as np

from tapecli import kernels
from tapecli.kernels import numpy_kernels

from tapecli.errors import ShapeError
from tapecli.ops.core import _pad, apply, register, to_tensor, unbroadcast
from tapecli.runtime.limits import admit, admit_result
from tapecli.runtime.values import NumpyArray, Tensor


def _reshape_vjp(r, g):
    lead = g.ndim - r.output.ndim
    return (reshape(g, g.shape[:lead] + r.inputs[0].shape),)


def _reshape_jvp(r, ts):
    t = ts[0]
    lead = t.ndim - r.inputs[0].ndim
    return reshape(t, t.shape[:lead] + r.attrs["shape"])


def _batch_perm(perm, lead):
    return tuple(range(lead)) + tuple(lead + p for p in perm)


RESHAPE = register("reshape", numpy=numpy_kernels.reshape, unify=(), weak_arith=True, vjp=_reshape_vjp, jvp=_reshape_jvp,
                   saves=(), strings=True)
TRANSPOSE = register("transpose", numpy=numpy_kernels.transpose, unify=(), weak_arith=True, saves=(), strings=True,
                     vjp=lambda r, g: (transpose(g, _batch_perm(np.argsort(r.attrs["perm"]), g.ndim - r.output.ndim)),),
                     jvp=lambda r, ts: transpose(ts[0], _batch_perm(r.attrs["perm"], ts[0].ndim - r.inputs[0].ndim)))


def _broadcast_to_jvp(r, ts):
    t = ts[0]
    x = r.inputs[0]
    lead = t.ndim - x.ndim
    shape = r.attrs["shape"]
    return broadcast_to(_pad(t, lead, x.shape, len(shape)), t.shape[:lead] + tuple(shape))


BROADCAST_TO = register("broadcast_to", numpy=numpy_kernels.broadcast_to, unify=(), weak_arith=True, saves=(),
                        jvp=_broadcast_to_jvp, strings=True,
                        vjp=lambda r, g: (unbroadcast(g, r.inputs[0].shape, g.ndim - r.output.ndim),))


def _concat_vjp(r, g, needs=None):
    lead = g.ndim - r.output.ndim
    axis = r.attrs["axis"] % r.output.ndim + lead
    out, start = [], 0
    for i, x in enumerate(r.inputs):
        if needs is None or needs[i]:
            index = [slice(None)] * g.ndim
            index[axis] = slice(start, start + x.shape[axis - lead])
            out.append(getitem(g, tuple(index)))
        else:
            out.append(None)
        start += x.shape[axis - lead]
    return tuple(out)


def _present_tangents(r, ts):
    """Each input's tangent, zeros where it has none (a batch of them, as the present ones)."""
    lead = next(t.ndim - x.ndim for t, x in zip(ts, r.inputs) if t is not None)
    batch = next(t.shape[:lead] for t in ts if t is not None)
    full = [t if t is not None else Tensor(kernels.zeros(batch + x.shape, x.dtype)) for t, x in zip(ts, r.inputs)]
    return full, lead


def _concat_jvp(r, ts):
    full, lead = _present_tangents(r, ts)
    return concat(full, axis=r.attrs["axis"] % r.output.ndim + lead)


def _stack_vjp(r, g, needs=None):
    lead = g.ndim - r.output.ndim
    axis = r.attrs["axis"] % r.output.ndim + lead      # stack(xs, axis=-1): count from the output's end
    return tuple(getitem(g, (slice(None),) * axis + (i,)) if needs is None or needs[i] else None
                 for i in range(len(r.inputs)))


def _stack_jvp(r, ts):
    full, lead = _present_tangents(r, ts)
    return stack(full, axis=r.attrs["axis"] % r.output.ndim + lead)


CONCAT = register("concat", numpy=numpy_kernels.concat, vjp=_concat_vjp, jvp=_concat_jvp, saves=(), strings=True)
STACK = register("stack", numpy=numpy_kernels.stack, vjp=_stack_vjp, jvp=_stack_jvp, saves=(), strings=True)


def _index_tuple(index):
    return index if isinstance(index, tuple) else (index,)


def index_batchable(index) -> bool:
    """Whether ``(slice(None),) + index`` indexes each batch element as ``index`` does: NumPy moves
    the dimensions of advanced indices to the front when they are not next to each other."""
    items = _index_tuple(index)
    advanced = [i for i, it in enumerate(items) if isinstance(it, (np.ndarray, list))]
    if not advanced:
        return True
    positions = sorted(advanced + [i for i, it in enumerate(items)
                                   if isinstance(it, (int, np.integer)) and not isinstance(it, bool)])
    return positions == list(range(positions[0], positions[-1] + 1)) and \
        not any(it is None or it is Ellipsis for it in items[positions[0]:positions[-1] + 1])


def _batch_index(index, lead):
    return (slice(None),) * lead + _index_tuple(index) if lead else index


def _index_ok(r):
    return index_batchable(r.attrs["index"])


GETITEM = register("getitem", numpy=numpy_kernels.getitem, unify=(), saves=(), batchable=_index_ok, strings=True,
                   vjp=lambda r, g: (index_grad(g, g.shape[:g.ndim - r.output.ndim] + r.inputs[0].shape,
                                                _batch_index(r.attrs["index"], g.ndim - r.output.ndim)),),
                   jvp=lambda r, ts: getitem(ts[0], _batch_index(r.attrs["index"], ts[0].ndim - r.inputs[0].ndim)))
INDEX_GRAD = register("index_grad", numpy=numpy_kernels.index_grad, unify=(), saves=(), batchable=_index_ok,
                      vjp=lambda r, g: (getitem(g, _batch_index(r.attrs["index"], g.ndim - r.output.ndim)),),
                      jvp=lambda r, ts: index_grad(ts[0], ts[0].shape[:ts[0].ndim - r.inputs[0].ndim] +
                                                   r.attrs["shape"],
                                                   _batch_index(r.attrs["index"], ts[0].ndim - r.inputs[0].ndim)))



def reshape(x, shape) -> Tensor:
    x = to_tensor(x)
    shape = tuple(int(n) for n in shape)
    if x.shape == shape:
        return x
    return apply(RESHAPE, (x,), shape=shape)


def transpose(x, perm=None, view=False) -> Tensor:
    """x's axes in the order ``perm``: its values copied in that order, as TensorFlow's Transpose makes them; or,
    with ``view`` (and for a NumPy array, as NumPy transposes), x's values as they lie, read in that order: how
    TensorFlow's kernels take an operand they are told is transposed (tf.matmul's flags, which its gradients
    set), whose float32 products sum in another order (kernels/tf_matmul.py tells them apart by the layout;
    OpenBLAS's products, NumPy's, differ by layout too)."""
    view = view or x.__class__ is NumpyArray
    x = to_tensor(x)
    perm = tuple(range(x.ndim))[::-1] if perm is None else tuple(int(p) for p in perm)
    if sorted(perm) != list(range(x.ndim)):
        raise ShapeError(f"perm {list(perm)} is not a permutation of the {x.ndim} axes of shape {list(x.shape)}")
    return apply(TRANSPOSE, (x,), perm=perm, view=True) if view else apply(TRANSPOSE, (x,), perm=perm)


def broadcast_to(x, shape) -> Tensor:
    x = to_tensor(x)
    shape = tuple(shape)
    return x if x.shape == shape else apply(BROADCAST_TO, (x,), shape=shape)


def concat(xs, axis=0) -> Tensor:
    xs = [to_tensor(x) for x in xs]
    _check_joined(xs, int(axis), "ConcatOp : ", "ConcatV2", "concat")
    _admit_joined(xs, "concat")
    return apply(CONCAT, tuple(xs), axis=int(axis))


def stack(xs, axis=0) -> Tensor:
    xs = [to_tensor(x) for x in xs]
    _check_joined(xs, None, "", "Pack", "stack")
    _admit_joined(xs, "stack")
    return apply(STACK, tuple(xs), axis=int(axis))


def _check_joined(xs, axis, prefix: str, kernel: str, name: str) -> None:
    """TensorFlow's InvalidArgumentError of concat (``axis``) or stack (None) of tensors that do not fit, in its
    eager words: ranks that differ, an axis out of range, another dimension that differs."""
    if not xs or not xs[0].ndim:
        return
    end = f" [Op:{kernel}] name: {name}"

    def text(x):
        return "[" + ",".join(map(str, x.shape)) + "]"
    first = xs[0]
    for i, x in enumerate(xs[1:], 1):
        if x.shape == first.shape:
            continue
        if axis is None:
            raise ShapeError(f"Shapes of all inputs must match: values[0].shape = {text(first)} != values[{i}].shape "
                             f"= {text(x)}{end}")
        if x.ndim != first.ndim:
            raise ShapeError(f"{prefix}Ranks of all input tensors should match: shape[0] = {text(first)} vs. "
                             f"shape[{i}] = {text(x)}{end}")
    if axis is not None and not -first.ndim <= axis < first.ndim:
        raise ShapeError(f"{prefix}Expected concatenating dimensions in the range [{-first.ndim}, {first.ndim}), "
                         f"but got {axis}{end}")
    for i, x in enumerate(xs[1:], 1):
        if axis is not None:
            d = next((d for d in range(first.ndim) if d != axis % first.ndim and x.shape[d] != first.shape[d]), None)
            if d is not None:
                raise ShapeError(f"{prefix}Dimension {d} in both shapes must be equal: shape[0] = {text(first)} vs. "
                                 f"shape[{i}] = {text(x)}{end}")


def _admit_joined(xs, what: str) -> None:
    """concat and stack hold every input's elements: weighed before they are joined."""
    if len(xs) > 1:
        admit_result((sum(x.size for x in xs),), max((x.dtype for x in xs), key=lambda d: d.itemsize),
                     f"the result of {what}")


def getitem(x, index) -> Tensor:
    return apply(GETITEM, (x,), index=index)


# What a row costs as a Python object (a Tensor and its NumPy array, and the list's pointer), besides its numbers.
ROW_BYTES = 200


def rows(x: Tensor) -> list:
    """A tensor as the list of its rows, as a program's Python forms see it (iteration, list(), zip(),
    sorted()); weighed against the limits first, since each row is a Python object of its own
    (list(range(1e8)) would be some 20 GB). A literal's rows stay literals."""
    admit_rows(x)
    return [row(x, i) for i in range(x.shape[0])]


def admit_rows(x: Tensor) -> None:
    """Weigh ``x``'s rows as Python values against the limits, before any is made."""
    n = x.shape[0]
    admit(n, ROW_BYTES + x.value.itemsize * (x.size // max(n, 1)), f"a list of {n:,} rows")


def row(x: Tensor, i: int) -> Tensor:
    """Row ``i`` of ``x`` as :func:`rows` gives it; alone, for an iteration that takes the rows one at a time (an
    unpacking stops at the first row too many, as CPython's does, never splitting all of them)."""
    if x.__class__ is NumpyArray:         # (NumPy's rows: arrays, or NumPy scalars)
        return NumpyArray(np.asarray(x.value[i]))
    return Tensor(x.value[i], weak=True) if x.weak else getitem(x, i)


def index_grad(g, shape, index) -> Tensor:
    return apply(INDEX_GRAD, (g,), shape=tuple(shape), index=index)


