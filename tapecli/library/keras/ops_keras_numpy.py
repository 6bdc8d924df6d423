"""keras.ops' NumPy-like functions whose TensorFlow namesakes take other arguments or mean something else, with
Keras's own signatures and semantics (keras/src/backend/tensorflow/numpy.py): cumsum and cumprod (axis None
flattens), eye and identity, trace, normalize (one tensor, not tf.linalg.normalize's pair), roll (axis None
flattens), pad (NumPy's pad widths), tile (NumPy's repeats), unique (sorted by default), linspace (endpoint,
retstep), round (decimals), max and min (initial), prod (Keras's widened dtypes), all and any (any dtype)."""
from __future__ import annotations

import builtins

import numpy as np

from tapecli import ops
from tapecli.errors import KernelValueError, TdfTypeError, TdfValueError
from tapecli.library.core import to_axis, to_dtype
from tapecli.library.keras.common import flag, float_dtype, integer, num
from tapecli.library.keras.ops_arrays import _ints
from tapecli.library.keras.ops_numpy import _as, _kind, _tensor, result_type
from tapecli.runtime.values import PythonTuple, Tensor, dtype_name

EPSILON = 1e-7          # backend.epsilon()
# the dtypes Keras widens before summing or multiplying (prod, trace), as NumPy does
_WIDENED = {"bool": "int32", "int8": "int32", "int16": "int32", "uint8": "uint32", "uint16": "uint32"}


def _flat_or(t: Tensor, axis):
    """A tensor and the axis a cumulative op runs along: axis None flattens ``t`` first, as NumPy's."""
    if axis is None:
        return ops.reshape(t, (-1,)), 0
    return t, integer(axis, "axis")


def _cumulative(name):
    def cumulative(x, axis=None, dtype=None):
        t = _tensor(x) if dtype is None else _as(x, to_dtype(dtype))
        if t.dtype == bool:                     # (TensorFlow's cumsum and cumprod take no bool)
            t = ops.cast(t, np.dtype(np.int32))
        return getattr(ops, name)(*_flat_or(t, axis))     # (ops.cumsum's family loads when first read)
    cumulative.__name__ = name
    return cumulative


def eye(N, M=None, k=0, dtype=None):  # noqa: N803 (Keras's parameter names)
    for value, what in ((N, "`N` must be an integer or an integer tensor."),
                        (M, "`M` must be an integer, an integer tensor, or `None`.")):
        if isinstance(value, float) or (isinstance(value, Tensor) and value.dtype.kind == "f"):
            raise TdfTypeError(f"Argument {what}")
    rows = integer(N, "N")
    cols = rows if M is None else integer(M, "M")
    return Tensor(np.eye(rows, cols, integer(k, "k"), dtype=to_dtype(dtype or float_dtype())))


def identity(n, dtype=None):
    return eye(n, n, dtype=dtype)


def trace(x, offset=0, axis1=0, axis2=1):
    """The sum along the ``offset`` diagonal of axes ``axis1`` and ``axis2``, in int32 for narrow integers."""
    t = _tensor(x)
    kind = dtype_name(t.dtype)
    t = ops.cast(t, np.dtype(_WIDENED.get(kind, kind)))
    first, second = (integer(a, "axis") % t.ndim for a in (axis1, axis2))
    t = ops.transpose(t, [i for i in range(t.ndim) if i not in (first, second)] + [first, second])
    diagonal = np.eye(t.shape[-2], t.shape[-1], integer(offset, "offset"), dtype=bool)
    kept = ops.where(Tensor(np.broadcast_to(diagonal, t.shape)), t, ops.zeros_like(t))
    return ops.reduce_sum(kept, axis=(t.ndim - 2, t.ndim - 1))


def normalize(x, axis=-1, order=2, epsilon=None):
    """``x`` over its ``order``-norm along ``axis``: order 2 as ``x * min(rsqrt(sum(x²)), 1 / epsilon)``, any
    other as ``x / max(norm, epsilon)``."""
    if isinstance(order, Tensor) and order.weak and order.ndim == 0 and order.dtype.kind in "iu":
        order = int(order.value)                # (a program's int literal)
    if not isinstance(order, int) or isinstance(order, bool) or order < 1:
        raise TdfValueError(f"Argument `order` must be an int >= 1. Received: order={order}")
    t = _tensor(x)
    if t.ndim == 0:
        t = ops.reshape(t, (1,))
    eps = EPSILON if epsilon is None else num(epsilon, "epsilon")
    axes = to_axis(axis)

    def const(value):
        return Tensor(np.asarray(value, t.dtype))
    if order == 2:
        inverse = ops.rsqrt(ops.reduce_sum(ops.square(t), axis=axes, keepdims=True))
        return ops.mul(t, ops.minimum(inverse, const(1.0 / eps)))
    if isinstance(axes, tuple) and len(axes) != 1:
        raise TdfValueError(f"normalize: order {order} takes one axis, got axis={axes}")
    powered = ops.reduce_sum(ops.pow_(ops.abs_(t), const(order)), axis=axes, keepdims=True)
    norm = ops.pow_(powered, const(1.0 / order))
    return ops.div(t, ops.maximum(norm, const(eps)))


def roll(x, shift, axis=None):
    t = _tensor(x)
    if axis is None:
        return ops.reshape(ops.roll(ops.reshape(t, (-1,)), _ints(shift), [0]), t.shape)
    shifts, axes = _ints(shift), _ints(axis)
    if len(shifts) == 1:
        shifts = shifts * len(axes)
    return ops.roll(t, shifts, axes)


def _plain(value):
    """Nested lists, tuples and tensors as nested Python lists of numbers."""
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return np.asarray(getattr(value, "value", value)).tolist()


def _pad_widths(pad_width) -> list:
    """Keras's Pad._process_pad_width: an int pads every side alike (here only a 1-D tensor's), a pair is one
    axis's (before, after), a list of 1-tuples pads each axis's both sides alike."""
    widths = _plain(pad_width)
    if not isinstance(widths, list):
        return [[widths, widths]]
    if not isinstance(widths[0], list):
        return [widths]
    if len({len(w) for w in widths}) != 1:
        raise TdfValueError(f"`pad_width` should be a list of tuples of length 1 or 2. Received: "
                            f"pad_width={pad_width}")
    return [w * 2 if len(w) == 1 else w for w in widths]


def pad(x, pad_width, mode="constant", constant_values=None):
    t = _tensor(x)
    widths = _pad_widths(pad_width)
    if len(widths) > 1 and len(widths) != t.ndim:
        raise TdfValueError(f"`pad_width` must have the same length as `x.shape`. Received: "
                            f"pad_width={widths} (of length {len(widths)}) and x.shape={t.shape} (of length "
                            f"{t.ndim})")
    if constant_values is not None and mode != "constant":
        raise TdfValueError(f"Argument `constant_values` can only be provided when `mode == 'constant'`. "
                            f"Received: mode={mode}")
    fill = 0 if constant_values is None else _tensor(constant_values).value
    return ops.pad(t, [[int(n) for n in w] for w in widths], str(mode).upper(), fill)


def tile(x, repeats):
    """NumPy's tile: repeats shorter than the rank repeat the last axes, longer ones add leading axes."""
    t = _tensor(x)
    reps = _ints(repeats)
    reps = [1] * (t.ndim - len(reps)) + reps
    if len(reps) > t.ndim:
        t = ops.reshape(t, (1,) * (len(reps) - t.ndim) + t.shape)
    return ops.tile(t, reps)


def unique(x, sorted=True, return_index=False, return_inverse=False, return_counts=False, axis=None,  # noqa: A002
           size=None, fill_value=None):
    """The distinct elements (slices along ``axis``), sorted (lexicographically for slices) or in order of first
    appearance; each one's first index, each element's position among them and their counts, as asked (int32).
    ``size`` cuts or pads the result (padded with ``fill_value``, else 0; indices with 1, counts with 0)."""
    t = _tensor(x)
    a = None if axis is None else integer(axis, "axis") % max(t.ndim, 1)
    values, first, inverse, counts = np.unique(t.value, True, True, True, axis=a)
    along = 0 if a is None else a
    if not flag(sorted):                        # tf.unique's order: first appearance
        order = np.argsort(first, kind="stable")
        rank_of = np.empty_like(order)
        rank_of[order] = np.arange(len(order))
        values, first, counts, inverse = np.take(values, order, along), first[order], counts[order], rank_of[inverse]
    inverse = np.reshape(inverse, t.shape if a is None else (-1,))
    if size is not None:
        n = integer(size, "size")
        values, first, counts = np.take(values, np.arange(builtins.min(n, len(first))), along), first[:n], counts[:n]
        extra = builtins.max(n - len(first), 0)
        widths = [(0, extra if i == along else 0) for i in range(values.ndim)]
        fill = 0 if fill_value is None else _tensor(fill_value).value
        values = np.pad(values, widths, constant_values=np.asarray(fill).astype(values.dtype))
        first, counts = np.pad(first, (0, extra), constant_values=1), np.pad(counts, (0, extra))
    results = [Tensor(values.astype(t.dtype))] + [Tensor(v.astype(np.int32)) for v, asked in (
        (first, return_index), (inverse, return_inverse), (counts, return_counts)) if flag(asked)]
    return PythonTuple(results) if len(results) > 1 else results[0]


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """``num`` values from start to stop (stop left out without ``endpoint``), in the dtype given (an integer
    one floors them), else the result_type of start, stop and float; ``retstep`` adds the step (NaN for one
    value; an integer dtype's in float64, as TensorFlow divides integers)."""
    from tapecli.library.core import linspace as tf_linspace
    n = integer(num, "num")
    if n < 0:
        raise TdfValueError(f"`num` must be a non-negative integer. Received: num={n}")
    dtype = result_type(_kind(start), _kind(stop), "float") if dtype is None else dtype_name(to_dtype(dtype))
    compute = np.dtype(dtype) if np.dtype(dtype).kind == "f" else np.dtype(np.float64)
    first, last = _as(_as(start, dtype), compute), _as(_as(stop, dtype), compute)
    step = Tensor(np.asarray(np.nan, float_dtype()))
    endpoint = flag(endpoint)
    if n > (1 if endpoint else 0):
        step = ops.div(ops.sub(last, first), Tensor(np.asarray(n - 1 if endpoint else n, compute)))
    if not endpoint and n > 1:
        last = ops.sub(last, step)
    out = tf_linspace(first, last, n, dtype=compute, axis=axis)
    if np.dtype(dtype).kind != "f":
        out = ops.floor(out)
    out = ops.cast(out, np.dtype(dtype))
    return PythonTuple([out, step]) if flag(retstep) else out


def round(x, decimals=0):  # noqa: A001 (keras.ops.round)
    """Half to even; ``decimals`` scales by 10 ** decimals first (an integer tensor's in floatx, unchanged for
    decimals > 0)."""
    t = _tensor(x)
    places = integer(decimals, "decimals")
    if places == 0:
        return ops.round_(t)
    if t.dtype.kind != "f":
        if places > 0:
            return t
        scaled = ops.cast(t, np.dtype(float_dtype()))
    else:
        scaled = t
    factor = Tensor(np.asarray(10.0 ** places, scaled.dtype))
    return ops.cast(ops.div(ops.round_(ops.mul(scaled, factor)), factor), t.dtype)


def _boolean(reduce, t: Tensor, axis, keepdims) -> Tensor:
    """reduce_all / reduce_any of ``t`` as bool (its nonzero elements True)."""
    axes = to_axis(axis)
    if t.dtype != bool:
        t = ops.cast(t, np.dtype(bool))
    return Tensor(np.asarray(reduce(t.value, axis=axes, keepdims=flag(keepdims))))


def all(x, axis=None, keepdims=False):  # noqa: A001 (keras.ops.all)
    return _boolean(np.all, _tensor(x), axis, keepdims)


def any(x, axis=None, keepdims=False):  # noqa: A001 (keras.ops.any)
    return _boolean(np.any, _tensor(x), axis, keepdims)


def _extreme(name, reduce, boolean, pick):
    """max / min: a bool tensor's as any / all; ``initial`` joins the reduced values (an empty tensor needs it)."""
    def extreme(x, axis=None, keepdims=False, initial=None):
        t = _tensor(x)
        if initial is None and t.size == 0:
            raise KernelValueError(f"Cannot compute the {name} of an empty tensor.")   # (tf.assert_greater)
        if t.dtype == bool:
            out = _boolean(boolean, t, axis, keepdims)
            if initial is None:
                return out
            return ops.cast(pick(ops.cast(out, np.dtype(np.int32)), _as(initial, "int32")), np.dtype(bool))
        out = reduce(t, axis=to_axis(axis), keepdims=flag(keepdims))
        return out if initial is None else pick(out, _as(initial, out.dtype))
    extreme.__name__ = name
    return extreme


def prod(x, axis=None, keepdims=False, dtype=None):
    """In Keras's widened dtype (int32 for bool and narrow ints); a dtype given is not applied, as Keras's
    TensorFlow backend does not."""
    t = _tensor(x)
    if dtype is None:
        kind = dtype_name(t.dtype)
        t = ops.cast(t, np.dtype(_WIDENED.get(kind, kind)))
    return ops.reduce_prod(t, axis=to_axis(axis), keepdims=flag(keepdims))


FUNCTIONS = {f"ops.{f.__name__}": f for f in (
    _cumulative("cumsum"), _cumulative("cumprod"), eye, identity, trace, normalize, roll,
    pad, tile, unique, linspace, round, all, any, prod,
    _extreme("max", ops.reduce_max, np.any, ops.maximum), _extreme("min", ops.reduce_min, np.all, ops.minimum))}
