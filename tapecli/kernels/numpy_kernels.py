"""NumPy kernels: arrays in, arrays out. They know nothing of tapes or the AST."""
from __future__ import annotations

import functools
import math
import warnings

import numpy as np

from tapecli.kernels import tf_float32
from tapecli.lazymodule import LazyModule

# Called by kernels of matmul, softmax, sums and half floats alone: imported on first use (docs/performance.md,
# "Start-up")
blas = LazyModule("tapecli.kernels.blas", globals())
tf_half = LazyModule("tapecli.kernels.tf_half", globals())
tf_matmul = LazyModule("tapecli.kernels.tf_matmul", globals())
tf_onednn = LazyModule("tapecli.kernels.tf_onednn", globals())
tf_sums = LazyModule("tapecli.kernels.tf_sums", globals())

_erf_scalar = np.vectorize(math.erf, otypes=[np.float64])


def _quiet(f):
    """Run a kernel with floating-point warnings off: inf/nan results are values here."""
    def run(*args, **kwargs):
        with np.errstate(all="ignore"):
            return f(*args, **kwargs)
    run.__name__ = f.__name__
    return run


def add_n_order(items, plus):
    """``items`` summed with ``plus`` as TensorFlow's AddN CPU kernel sums its inputs (kernels/aggregate_ops_cpu.h):
    the first n % 8 of them in order (8 or 9 of them where that leaves fewer than 2), then each 8 more summed in order
    and added to the total. (Up to 9 inputs that is their sum in order.) tf.add_n's order, and the tape's of the
    gradients that meet at one tensor."""
    n = len(items)
    first = n % 8 if n % 8 >= 2 else n % 8 + 8
    total = functools.reduce(plus, items[:first])
    for i in range(first, n, 8):
        total = plus(total, functools.reduce(plus, items[i:i + 8]))
    return total


def add_n(*xs):
    """AddN's sum of arrays of one shape and dtype (:func:`add_n_order`)."""
    return np.asarray(add_n_order(xs, np.add))


def erf(x):
    if (y := tf_float32.erf(x)) is not None:        # TensorFlow's bits (tf_float32.py)
        return y
    return _erf_scalar(x).astype(x.dtype, copy=False)


def sigmoid(x):
    if (y := tf_float32.sigmoid(x)) is not None:     # TensorFlow's bits (tf_float32.py)
        return y
    if half_float(x.dtype):
        return tf_half.sigmoid(x)
    # exp of a non-positive number only: no overflow for large |x|.
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


def softplus(x):
    if (y := tf_float32.softplus(x)) is not None:    # TensorFlow's bits (tf_float32.py)
        return y
    if x.dtype == _FLOAT16:
        return tf_float32.softplus_half(x)
    return (np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))).astype(x.dtype, copy=False)


def elu(x, alpha=1.0):
    if (y := tf_float32.elu(x, alpha)) is not None:     # TensorFlow's Elu, and Keras's alpha (tf_float32.py)
        return y
    return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0))).astype(x.dtype, copy=False)


def leaky_relu(x, alpha=0.2):
    return np.where(x > 0, x, x * x.dtype.type(alpha)).astype(x.dtype, copy=False)


def relu(x, out=None):
    # max(0, x), zero first: NumPy gives the second operand of a tie, so -0 stays -0, as Eigen's max(x, 0) keeps it
    if x.__class__ is np.ndarray and x.dtype.kind == "f" and x.size >= _LARGE:
        width = _relu_width(x)
        if width is not None:
            return _relu_rows(x, np.zeros(width, dtype=x.dtype), out)
        return np.maximum(np.zeros_like(x), x, out=out)
    if out is not None:
        return np.maximum(x.dtype.type(0), x, out=out)
    return np.maximum(0, x).astype(x.dtype, copy=False)


def _relu_width(x):
    """The rows of about _WIDE elements that relu takes a large float ``x`` as, where it is laid out for them: against
    a row of zeros, not the scalar 0 (NumPy's loop against a scalar is slower), which spares making and reading x's
    size of them; else None."""
    width = math.gcd(x.size, _WIDE)
    return width if width >= _WIDE // 4 and x.flags.c_contiguous else None


def _relu_rows(x, zeros, out):
    out = np.empty(x.shape, dtype=x.dtype) if out is None else out
    width = zeros.shape[0]
    np.maximum(zeros, x.reshape(-1, width), out=out.reshape(-1, width))
    return out


def _relu_for_plan(x):
    """relu's function for arrays laid out as ``x`` (kernels.for_plan): against one row of zeros made once."""
    if x.__class__ is np.ndarray and x.dtype.kind == "f" and x.size >= _LARGE and (width := _relu_width(x)):
        zeros = np.zeros(width, dtype=x.dtype)
        return lambda x, out=None: _relu_rows(x, zeros, out)
    return None


relu.writes_out = True
relu.for_plan = _relu_for_plan


# From this many elements, the layout tricks below pay for their Python
_LARGE = 4096
# Elements in a row that NumPy's inner loop runs at full speed over (a short last axis makes short loops)
_WIDE = 256


def _widened(ufunc):
    """``ufunc(a, b)``; where ``b`` is a short vector along ``a``'s last axis (a bias), over rows of about
    ``_WIDE`` elements with ``b`` repeated along them: the same pairs, so the same bits, at a fraction of
    the time NumPy takes looping over the short axis."""
    def run(a, b, out=None):
        reps = _repeats(a, b)
        if reps is not None:
            return _along_rows(ufunc, a, np.tile(b, reps), out)
        return ufunc(a, b, out=out)

    def for_plan(a, b):
        """run's function for arguments laid out as these (kernels.for_plan): ``b`` repeated along a row into an
        array of its own, made once."""
        reps = _repeats(a, b)
        if reps is None:
            return None
        row = np.empty((reps, b.shape[0]), dtype=b.dtype)

        def widened(a, b, out=None):
            np.copyto(row, b)
            return _along_rows(ufunc, a, row.reshape(-1), out)
        return widened
    run.__name__ = ufunc.__name__
    run.writes_out = True
    run.for_plan = for_plan
    return run


def _repeats(a, b):
    """How many times _widened repeats ``b`` along a row of ``a``'s, where it does; else None."""
    if b.__class__ is np.ndarray and b.ndim == 1 and a.__class__ is np.ndarray and a.ndim >= 2 \
            and a.size >= _LARGE and a.shape[-1] == b.shape[0] and b.shape[0] <= _WIDE // 4 \
            and a.dtype == b.dtype and a.flags.c_contiguous:
        reps = math.gcd(a.size // b.shape[0], _WIDE // b.shape[0])
        return reps if reps > 1 else None
    return None


def _along_rows(ufunc, a, row, out):
    """``ufunc(a, row)`` over rows of ``a`` as long as ``row``, into ``out`` (else an array of its own, not a view:
    what a trace follows)."""
    out = np.empty(a.shape, dtype=a.dtype) if out is None else out
    ufunc(a.reshape(-1, row.shape[0]), row, out=out.reshape(-1, row.shape[0]))
    return out


add, sub, mul, div = (_widened(f) for f in (np.add, np.subtract, np.multiply, np.true_divide))


def _column_sums(x, axis, keepdims):
    """np.sum of a float array over every axis but a short last one (a bias's gradient) in blocks of rows
    that make rows of about ``_WIDE`` elements: the rows of each block summed in order, then the blocks'
    sums; None where that does not apply. (NumPy sums a column at a time over short rows: ten times slower.)"""
    if x.__class__ is not np.ndarray or x.dtype.kind != "f" or x.ndim < 2 or x.size < _LARGE \
            or x.shape[-1] > _WIDE // 4 or not x.flags.c_contiguous:
        return None
    if isinstance(axis, (int, np.integer)) and not isinstance(axis, (bool, np.bool_)):
        axis = (axis,)
    if not isinstance(axis, tuple) or tuple(sorted(int(a) % x.ndim for a in axis)) != tuple(range(x.ndim - 1)):
        return None
    columns = x.shape[-1]
    block = math.gcd(x.size // columns, _WIDE // columns)
    if block < 2:
        return None
    blocks = np.add.reduce(x.reshape(-1, block * columns), axis=0)
    # (kept dimensions made by the reduction itself: the result its own array, not a view, as traces need)
    return np.add.reduce(blocks.reshape((block,) + (1,) * (x.ndim - 2) * keepdims + (columns,)), axis=0,
                         keepdims=keepdims)


def broadcast_to(x, shape):
    """np.array(np.broadcast_to(x, shape)) without np.broadcast_to's Python (the same ValueError)."""
    x = np.asarray(x)
    out = np.empty(shape, dtype=x.dtype)
    np.copyto(out, x)
    return out


def masked_grad(g, x, kind="relu", alpha=0.2, out=None):
    """The upstream gradient times the derivative of a piecewise-linear function (into ``out``, where given)."""
    if _relu_bits(g, x, kind):
        return _relu_masked(np.ascontiguousarray(g), x, np.dtype(f"u{g.dtype.itemsize}"), out)
    if kind == "relu":
        result = np.where(x > 0, g, 0).astype(g.dtype, copy=False)
    elif kind == "abs":
        result = (g * np.sign(x)).astype(g.dtype, copy=False)
    else:
        result = np.where(x > 0, g, g * g.dtype.type(alpha)).astype(g.dtype, copy=False)
    if out is None:
        return result
    np.copyto(out, result)
    return out


def _relu_bits(g, x, kind) -> bool:
    return kind == "relu" and g.__class__ is np.ndarray and g.ndim > 0 and g.dtype.kind == "f" and g.shape == x.shape


def _relu_masked(g, x, bits, out):
    """where(x > 0, g, 0) on the bits (``bits``: the unsigned integers of g's size): g's bits times 1 where x > 0,
    times 0 elsewhere (NaN too) is every bit of g or +0.0, as where gives it, at a quarter of where's time on a
    mixed mask."""
    out = np.empty(g.shape, dtype=g.dtype) if out is None else out
    np.multiply(g.view(bits), np.greater(x, 0), out=out.view(bits), dtype=bits)
    return out


def _masked_grad_for_plan(g, x, kind="relu", alpha=0.2):
    """masked_grad's function for arguments laid out as these (kernels.for_plan): relu's, on a contiguous ``g``."""
    if not _relu_bits(g, x, kind) or not g.flags.c_contiguous:
        return None
    bits = np.dtype(f"u{g.dtype.itemsize}")
    return lambda g, x, out=None: _relu_masked(g, x, bits, out)


masked_grad.writes_out = True
masked_grad.for_plan = _masked_grad_for_plan


def logsumexp(x, axis=None, keepdims=False):
    """TensorFlow's reduce_logsumexp (math_ops.py): log(sum(exp(x - m))) + m, m the maximum where it is finite
    (else 0), each op as TensorFlow's kernel computes it (exp and log: tf_float32's; the sum: tf_sums')."""
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0).astype(x.dtype, copy=False)
    out = RAW_KERNELS["log"](RAW_KERNELS["sum"](RAW_KERNELS["exp"](x - m), axis=axis, keepdims=True)) + m
    return (out if keepdims else np.squeeze(out, axis=axis)).astype(x.dtype, copy=False)


def softmax(x, axis=-1):
    if (y := tf_onednn.softmax(x, axis)) is not None:       # TensorFlow's bits on an x86 CPU (tf_onednn.py)
        return y
    if x.dtype == _FLOAT16:
        return tf_half.softmax(x, axis, RAW_KERNELS["sum"])
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return (e / np.sum(e, axis=axis, keepdims=True)).astype(x.dtype, copy=False)


def transpose(x, perm, view=False):
    """A copy in the new order, as TensorFlow's Transpose makes it (a product tells a view apart: tf_matmul.py);
    with ``view``, the view."""
    y = np.transpose(x, perm)
    return y if view or y.flags.c_contiguous else y.copy()


def matmul(a, b):
    if half_float(a.dtype):     # TensorFlow's half and bfloat16 products: float32's of the operands, rounded
        return matmul(a.astype(_FLOAT32), b.astype(_FLOAT32)).astype(a.dtype)
    if (y := tf_matmul.matmul(a, b)) is not None:      # TensorFlow's bits for small float32 products (tf_matmul.py)
        return y
    if (y := tf_matmul.matmul_double(a, b)) is not None:       # and float64 matrix-vector products
        return tf_matmul.double_zero_signs(a, b, y)
    if tf_matmul.small_double(a, b):        # (and the signs of their zeros)
        return tf_matmul.double_zero_signs(a, b, blas.matmul(a, b))
    return blas.matmul(a, b)


def _matmul_for_plan(a, b):
    """matmul's function for operands laid out as these (kernels.for_plan): BLAS's product, chosen once, where
    neither of TensorFlow's orders computed here takes them (which of them does is the layouts' but for a float32
    product whose values could underflow: then it is not chosen once)."""
    if a.__class__ is np.ndarray and b.__class__ is np.ndarray and not half_float(a.dtype) \
            and not tf_matmul.takes(a, b) and not tf_matmul.takes_double(a, b) and not tf_matmul.small_double(a, b):
        return blas.for_shapes(a, b)
    return None


matmul.for_plan = _matmul_for_plan


def log_softmax(x, axis=-1):
    if (y := tf_float32.log_softmax(x, axis)) is not None:     # TensorFlow's bits (tf_float32.py)
        return y
    if x.dtype == _FLOAT16:
        return tf_half.log_softmax(x, axis, RAW_KERNELS["sum"])
    shifted = x - np.max(x, axis=axis, keepdims=True)
    return (shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))).astype(x.dtype, copy=False)


def floordiv(a, b):
    _no_integer_zero(b)
    return np.floor_divide(a, b)


def floormod(a, b):
    _no_integer_zero(b)
    out = np.mod(a, b)
    if out.dtype.kind != "f":
        return out
    with np.errstate(invalid="ignore"):     # (TensorFlow's zero has the dividend's sign, as fmod's; NumPy's the divisor's)
        return np.where(out == 0, np.fmod(a, b), out).astype(out.dtype)


def _no_integer_zero(b):
    """Integer division by zero is an error in TensorFlow (NumPy returns 0 with a warning)."""
    b = np.asarray(b)
    if b.dtype.kind in "iu" and not b.all():
        raise ValueError("Integer division by zero")


def reduce(kind):
    f = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min, "mean": np.mean}[kind]

    exact = kind in ("sum", "mean")
    mean = kind == "mean"

    def run(x, axis=None, keepdims=False):
        if exact and x.dtype.kind == "V":       # bfloat16: TensorFlow adds in float32 and rounds
            return np.asarray(run(x.astype(_FLOAT32), axis, keepdims)).astype(x.dtype)
        # float32 and float64 sums and means as TensorFlow's CPU kernels add (tf_sums.py), where it follows them
        if exact and x.__class__ is np.ndarray and x.dtype in tf_sums.PACKETS \
                and (out := tf_sums.reduce_sum(x, axis, keepdims, mean)) is not None:
            return out
        if x.size == 0 and kind == "mean":
            with warnings.catch_warnings():      # NaN, as TensorFlow's; not NumPy's "Mean of empty slice" on stderr
                warnings.simplefilter("ignore", RuntimeWarning)
                out = f(x, axis=axis, keepdims=keepdims)
        elif kind == "sum" and (columns := _column_sums(x, axis, keepdims)) is not None:
            out = columns
        elif kind in _ALONG and (short := _short_inner_axis(x, axis)) is not None:
            out = _along(x, short, _ALONG[kind])
            if keepdims:
                out = np.expand_dims(out, short)
        elif x.dtype.kind == "f" and kind in _UFUNC_REDUCE:     # (np.sum's and np.max's Python skipped)
            out = _UFUNC_REDUCE[kind](x, axis=axis, keepdims=keepdims)
        else:
            out = f(x, axis=axis, keepdims=keepdims)
        return np.asarray(out, dtype=x.dtype if x.dtype.kind != "b" or kind in ("max", "min") else np.int64)

    def for_plan(x, axis=None, keepdims=False):
        """run's function for arrays laid out as ``x`` (kernels.for_plan): TensorFlow's sum (mean) of the whole
        array, where tf_sums computes it as one leaf."""
        return tf_sums.full_sum_for_plan(x, mean) if exact and axis is None and not keepdims else None
    run.__name__ = kind
    run.for_plan = for_plan
    return run


_FLOAT32 = np.dtype(np.float32)
_FLOAT16 = np.dtype(np.float16)


def half_float(dtype: np.dtype) -> bool:
    """float16 or bfloat16 (ml_dtypes' type, of NumPy's kind "V"), which TensorFlow's CPU kernels compute in
    float32."""
    return dtype.itemsize == 2 and dtype.kind in "fV"
# np.sum, np.max, np.min of a float array: these reductions themselves
_UFUNC_REDUCE = {"sum": np.add.reduce, "max": np.maximum.reduce, "min": np.minimum.reduce}
# the reductions that NumPy computes over an axis that is not the last one as one slice after another
_ALONG = {"sum": np.add, "max": np.maximum, "min": np.minimum}


def _short_inner_axis(x, axis):
    """The axis of a sum/max/min over one short axis that is not the last one (a pooling window's), else None."""
    if x.__class__ is not np.ndarray or x.dtype.kind != "f" or x.size < 4096:
        return None
    if isinstance(axis, tuple) and len(axis) == 1:
        axis = axis[0]
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        return None
    axis = int(axis) % x.ndim
    return axis if axis < x.ndim - 1 and 2 <= x.shape[axis] <= 16 else None


def _along(x, axis, combine):
    """np.sum (np.max, np.min) over ``axis`` as NumPy reduces an axis that is not the last, one slice after
    another: the same bits, at a fraction of the reduction's time on a short axis."""
    index = [slice(None)] * x.ndim
    index[axis] = 0
    out = np.array(x[tuple(index)])
    for i in range(1, x.shape[axis]):
        index[axis] = i
        combine(out, x[tuple(index)], out=out)
    return out


def extreme_share(x, y, axis=None):
    """What max (min) over ``axis`` passes back to each entry of ``x``, ``y`` being the extremes with the axis
    kept: TensorFlow's ``indicators / num_selected`` (1 / the number of ties where an entry is the extreme, 0
    elsewhere). Over one short axis that is not the last (a pooling window's), slice by slice: the same
    bits (counting ones is exact in any order) without NumPy's slow broadcasts along a middle axis."""
    short = _short_inner_axis(x, axis)
    if short is None or y.shape[short] != 1:
        hit = np.equal(x, y).astype(x.dtype)
        return hit / np.sum(hit, axis=axis, keepdims=True)
    index = [slice(None)] * x.ndim
    index[short] = 0
    extreme = y[tuple(index)]
    hits = []
    for i in range(x.shape[short]):
        index[short] = i
        hits.append(np.equal(x[tuple(index)], extreme).astype(x.dtype))
    ties = np.array(hits[0])
    for hit in hits[1:]:
        ties += hit
    out = np.empty(x.shape, x.dtype)
    for i, hit in enumerate(hits):
        index[short] = i
        np.divide(hit, ties, out=out[tuple(index)])
    return out


def getitem(x, index):
    return np.array(x[index], dtype=x.dtype)        # (a string tensor's element stays an object, not bytes)


def index_grad(g, shape, index):
    """Zeros of ``shape`` with ``g`` added at ``index`` (repeated positions accumulate, in order). A basic
    index (slices, integers, None, ...) reaches each position once: ``+=`` on its view adds the same, and
    is many times faster than ``np.add.at``."""
    out = np.zeros(shape, dtype=g.dtype)
    if all(it is None or it is Ellipsis or it.__class__ is slice
           or (isinstance(it, (int, np.integer)) and not isinstance(it, (bool, np.bool_)))
           for it in (index if isinstance(index, tuple) else (index,))):
        out[index] += g
    else:
        np.add.at(out, index, g)
    return out


def where(c, a, b):
    return np.where(c, a, b)


def cast(x, dtype):
    return x.astype(dtype)


def argmax(x, axis):
    return np.argmax(x, axis=axis).astype(np.int64)


def argmin(x, axis):
    return np.argmin(x, axis=axis).astype(np.int64)


def reshape(x, shape):
    return np.reshape(x, shape)


def concat(*xs, axis):
    return np.concatenate(xs, axis=axis)


def stack(*xs, axis):
    return np.stack(xs, axis=axis)


def clip(x, lo, hi):
    return np.minimum(np.maximum(x, lo), hi)


# An op names its kernel on its entry in the op table (``numpy=``: the functions above, tf_float32's, NumPy's
# ufuncs), or has it made from its formula (formulas.py); ``kernels.register`` adds them here. matmul's is
# named here: TensorFlow's float32 product where it is small (tf_matmul.py), OpenBLAS's otherwise (blas.py).
KERNELS = {"matmul": matmul}
RAW_KERNELS = KERNELS          # unwrapped: for callers that already run under np.errstate(all="ignore")


def writes_out(f) -> bool:
    """Whether kernel function ``f`` writes its result into ``out=`` where given (an array of the result's shape
    and dtype, which may be one of its arguments), with the bits it gives without it: a ufunc of one output, or
    a function that says so (``f.writes_out``). A loop plan reuses an argument's array that nothing else holds
    (interpreter/loop_plans.py)."""
    return f.nout == 1 if isinstance(f, np.ufunc) else getattr(f, "writes_out", False)


KERNELS = {name: _quiet(f) for name, f in RAW_KERNELS.items()}
# kernel name -> (scalar formula, number of inputs): the kernels made from the formula an op handed down, for
# the ops with no kernel written by hand (``kernels.register``; formulas.py makes each backend's)
FORMULAS: dict = {}
