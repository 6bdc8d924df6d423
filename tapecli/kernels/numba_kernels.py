"""Numba kernels: the contract of numpy_kernels (arrays in, arrays out, same dtypes, shapes
and special values), compiled for large float32/float64 tensors.

The dispatcher imports this module lazily, and this module alone imports numba. Every
kernel is compiled on first use and cached on disk (``tapecli.cache``), so a later process
only loads it. Inputs that a kernel does not cover (integer or bool dtypes, mixed dtypes,
empty tensors, shapes or axes that NumPy rejects) go to the NumPy kernel, which gives the
same result, or raises the same error.

Choices, measured on 2 cores (AVX-512), float32 at 1e6 elements unless noted, warm medians
(benchmarks/kernel_threshold.py times these kernels against numpy_kernels):

* Serial kernels, not ``parallel=True``: prange halved add (0.05 vs 0.10 ms) on an idle
  machine, but while another process held one core a parallel call often waited a whole
  scheduler slice (~4-8 ms where the serial loop took 0.002-0.1 ms), and parallel kernels
  took about twice as long to compile.
* sin, cos, tan, exp, log, log1p, tanh and pow call NumPy: its float32 ufuncs are SIMD
  loops, and a numba loop calls libm once per element: exp 0.6 vs 3.6 ms, tanh 0.8 vs
  20.8 ms, tan 0.5 vs 16.7 ms, log1p 1.4 vs 12.7 ms, expm1 0.5 vs 15.2 ms, pow 0.7 vs
  4.6 ms (float64: exp 0.8 vs 4.3 ms, pow 3.2 vs 16.6 ms; sin and cos a tie).
* For the same reason sigmoid, softplus, elu and logsumexp run
  NumPy's exp/log1p/expm1/tanh in place on a scratch array between fused numba loops
  (sigmoid 0.95 ms vs 5.7 ms for numpy_kernels, elu 0.8 vs 4.8 ms). Their rounding steps
  follow numpy_kernels' order, so all but logsumexp (whose sum differs, see below) agree
  with it bit for bit.
* max and min over all axes or trailing axes call NumPy: its SIMD reduction took 0.05 ms
  where a NaN-propagating numba loop took 0.5-1.4 ms (LLVM does not vectorize it). Over
  leading or middle axes the numba kernel, vectorized along the kept axes, runs.
* add, mul and the other one-operation kernels are a tie with NumPy (memory-bound; both
  vectorized), a few microseconds of call overhead apart; the fused kernels (masked_grad,
  where, clip, relu, leaky_relu, erf) and the float64-accumulated sum, mean and
  prod are 2-12x faster.
"""
from __future__ import annotations

import functools
import math
import operator

import numpy as np

from numba import types
from numba.extending import overload

from . import numba_lanes as lanes, numba_windows, tf_float32, tf_sums
from .formulas import numba_call
from .numpy_kernels import FORMULAS, KERNELS as NUMPY_KERNELS
from .numba_support import (_at, _contiguous, _float_dtype, _jit, _launch, _operands)


# -------------------------------------------------- elementwise numba kernels
# Each writes ``out`` (flat, the result dtype). Constants come in as scalars of the array's
# dtype, so float32 arithmetic stays float32 and rounds as NumPy's does.

@_jit
def _sign(x, zero, one, out):
    # np.sign: +0 for either zero, nan for nan.
    for i in range(out.size):
        v = x[i]
        out[i] = zero if v == zero else (one if v > zero else (-one if v < zero else v))


@_jit
def _leaky_relu(x, alpha, out):
    for i in range(out.size):
        v = x[i]
        out[i] = v if v > 0 else v * alpha


@_jit
def _round(x, out):
    for i in range(out.size):
        out[i] = np.rint(x[i])  # half to even, as np.round


@_jit
def _floor(x, out):
    for i in range(out.size):
        out[i] = np.floor(x[i])


@_jit
def _ceil(x, out):
    for i in range(out.size):
        out[i] = np.ceil(x[i])


# Eigen's generic_fast_erf<float> (tf_float32.erf): the same float32 steps, one element at a time
_ERF_ALPHA = tuple(np.float32(v) for v in tf_float32._ERF_ALPHA)
_ERF_BETA = tuple(np.float32(v) for v in tf_float32._ERF_BETA)


def _erf_value(v):
    return math.erf(np.float64(v))


@overload(_erf_value)
def _erf_value_of(v):
    """numpy_kernels' erf of one element: Eigen's float32 interpolant (TensorFlow's), else math.erf of the float64
    value (rounded to the dtype where it is stored)."""
    if v != types.float32:
        return lambda v: math.erf(np.float64(v))
    a0, a1, a2, a3, a4, a5 = _ERF_ALPHA
    b0, b1, b2, b3, b4, b5 = _ERF_BETA

    def eigen(v):
        x2 = min(np.float32(16.0), v * v)
        p = ((((a0 * x2 + a1) * x2 + a2) * x2 + a3) * x2 + a4) * x2 + a5
        q = ((((b0 * x2 + b1) * x2 + b2) * x2 + b3) * x2 + b4) * x2 + b5
        r = (v * p) / q
        return r if r != r else max(min(r, np.float32(1.0)), np.float32(-1.0))
    return eigen


@_jit
def _erf(x, out):
    for i in range(out.size):
        out[i] = _erf_value(x[i])


@_jit
def _neg_abs(x, out):
    for i in range(out.size):
        out[i] = -abs(x[i])


# The *_finish kernels work in place: ``out`` holds NumPy's intermediate on entry. (Passing
# it as a separate argument too would alias two arguments and defeat LLVM's vectorizer.)

@_jit
def _sigmoid_finish(x, one, out):
    # out = exp(-|x|) on entry: no overflow for large |x|.
    for i in range(out.size):
        d = out[i]
        out[i] = one / (one + d) if x[i] >= 0 else d / (one + d)


@_jit
def _softplus_finish(x, zero, out):
    # out = log1p(exp(-|x|)) on entry; then maximum(x, 0) + out
    for i in range(out.size):
        v = x[i]
        out[i] = (v if v > zero else zero) + out[i]


@_jit
def _min0(x, zero, out):
    # minimum(x, 0) where x <= 0 or nan; its value where x > 0 is never used.
    for i in range(out.size):
        v = x[i]
        out[i] = zero if v > zero else v


@_jit
def _elu_finish(x, alpha, out):
    # out = expm1(minimum(x, 0)) on entry
    for i in range(out.size):
        v = x[i]
        e = alpha * out[i]
        out[i] = v if v > 0 else e


@_jit
def _clip(x, lo, hi, out):
    # np.minimum(np.maximum(x, lo), hi)
    for i in range(out.size):
        u = _at(x, i)
        w = _at(lo, i)
        u = u if (u > w or math.isnan(u)) else w
        w = _at(hi, i)
        out[i] = u if (u < w or math.isnan(u)) else w


@_jit
def _where(c, a, b, out):
    for i in range(out.size):
        u = _at(a, i)  # both loaded: a select, not a branch, so LLVM vectorizes it
        w = _at(b, i)
        out[i] = u if _at(c, i) else w


@_jit
def _masked_grad(g, x, kind, alpha, zero, one, out):
    # kind 0: relu (g where x > 0), 1: abs (g * sign(x)), 2: leaky_relu (g or g * alpha)
    if kind == 0:
        for i in range(out.size):
            u = _at(g, i)
            out[i] = u if _at(x, i) > 0 else zero
    elif kind == 1:
        for i in range(out.size):
            v = _at(x, i)
            s = zero if v == zero else (one if v > zero else (-one if v < zero else v))
            out[i] = _at(g, i) * s
    else:
        for i in range(out.size):
            u = _at(g, i)
            out[i] = u if _at(x, i) > 0 else u * alpha


# ---------------------------------------------------------- reduction kernels
# A reduction sees its input as [outer, reduced] ("rows", reducing each row) or
# [outer, reduced, inner] ("mid", reducing axis 1 with loops vectorized along inner).
# Sums accumulate in float64 (reassociated, so LLVM vectorizes them): at least as
# accurate as NumPy's pairwise float32 sum. Products accumulate in the dtype, so they
# overflow where NumPy's do.

@_jit(fastmath={"reassoc"})
def _sum_rows(x, count, out):
    for r in range(x.shape[0]):
        s = 0.0
        for j in range(x.shape[1]):
            s += x[r, j]
        out[r] = s / count


@_jit
def _sum_mid(x, count, out):
    acc = np.empty(x.shape[2], np.float64)
    for o in range(x.shape[0]):
        acc[:] = 0.0
        for r in range(x.shape[1]):
            for j in range(x.shape[2]):
                acc[j] += x[o, r, j]
        for j in range(x.shape[2]):
            out[o, j] = acc[j] / count


@_jit(fastmath={"reassoc"})
def _prod_rows(x, one, out):
    for r in range(x.shape[0]):
        p = one
        for j in range(x.shape[1]):
            p *= x[r, j]
        out[r] = p


@_jit
def _prod_mid(x, out):
    for o in range(x.shape[0]):
        for j in range(x.shape[2]):
            out[o, j] = x[o, 0, j]
        for r in range(1, x.shape[1]):
            for j in range(x.shape[2]):
                out[o, j] *= x[o, r, j]


@_jit
def _max_mid(x, out):
    # np.maximum.reduce: nan propagates; a tie keeps the later element.
    for o in range(x.shape[0]):
        for j in range(x.shape[2]):
            out[o, j] = x[o, 0, j]
        for r in range(1, x.shape[1]):
            for j in range(x.shape[2]):
                u = out[o, j]
                w = x[o, r, j]
                out[o, j] = u if (u > w or math.isnan(u)) else w


@_jit
def _min_mid(x, out):
    for o in range(x.shape[0]):
        for j in range(x.shape[2]):
            out[o, j] = x[o, 0, j]
        for r in range(1, x.shape[1]):
            for j in range(x.shape[2]):
                u = out[o, j]
                w = x[o, r, j]
                out[o, j] = u if (u < w or math.isnan(u)) else w


@_jit
def _columns_in_ranges(rows, starts, stops, zero, out):
    # tf_sums.bias_add_grad: each range's column sums from zero, its rows in order; the ranges' sums added in order;
    # a vector of columns at a time
    c, step = rows.shape[1], lanes.width(rows)
    for j in range(0, c, step):
        n = min(step, c - j)
        total = lanes.fill(zero)
        for k in range(starts.shape[0]):
            part = lanes.fill(zero)
            for r in range(starts[k], stops[k]):
                part = lanes.add(part, lanes.load(rows[r], j, n))
            total = part if k == 0 else lanes.add(total, part)
        lanes.store(out, j, n, total)


def _bias_add_grad(g, threads=tf_sums.POOL_THREADS):
    """tf_sums.bias_add_grad of float32/float64 rows (of 2 or more: one row is itself, not 0 + it)."""
    dtype = _float_dtype(g)
    if dtype is None or g.ndim < 2 or not g.shape[-1] or g.size // g.shape[-1] < 2:
        return NotImplemented
    rows = _contiguous(g).reshape(-1, g.shape[-1])
    ranges = np.array(tf_sums.row_ranges(rows.shape[0], rows.shape[1], dtype.itemsize, threads), np.int64)
    out = np.empty(rows.shape[1], dtype)
    _launch(_columns_in_ranges, rows, np.ascontiguousarray(ranges[:, 0]), np.ascontiguousarray(ranges[:, 1]),
            dtype.type(0), out)
    return out


# ---------------------------------------------------------- elementwise calls

def _unary(kernel, *consts):
    """A kernel of one float input: ``kernel(x, *consts as x's dtype, out)``."""
    def run(x):
        dtype = _float_dtype(x)
        if dtype is None:
            return NotImplemented
        out = np.empty(x.shape, dtype)
        _launch(kernel, _contiguous(x).reshape(-1), *[dtype.type(c) for c in consts], out.reshape(-1))
        return out
    return run


def _elementwise(kernel):
    """A kernel of two or more float inputs of one dtype, broadcast as NumPy does."""
    def run(*arrays):
        dtype = _float_dtype(*arrays)
        if dtype is None:
            return NotImplemented
        shape, flat = _operands(*arrays)
        if shape is None:
            return NotImplemented  # NumPy broadcasts in place (or raises its own broadcast error)
        out = np.empty(shape, dtype)
        _launch(kernel, *flat, out.reshape(-1))
        return out
    return run


_quiet = np.errstate(all="ignore")  # NumPy steps: inf and nan are values here, as in numpy_kernels


def _scratch(x):
    """A flat contiguous view of ``x`` and an empty result of its shape, for in-place steps."""
    out = np.empty(x.shape, x.dtype)
    return _contiguous(x).reshape(-1), out, out.reshape(-1)


@_quiet
def _sigmoid(x):
    if _float_dtype(x) is None:
        return NotImplemented
    flat, out, o = _scratch(x)
    _launch(_neg_abs, flat, o)
    np.exp(o, out=o)
    _launch(_sigmoid_finish, flat, x.dtype.type(1), o)
    return out


@_quiet
def _softplus(x):
    if _float_dtype(x) is None:
        return NotImplemented
    flat, out, o = _scratch(x)
    _launch(_neg_abs, flat, o)
    np.exp(o, out=o)
    np.log1p(o, out=o)
    _launch(_softplus_finish, flat, x.dtype.type(0), o)
    return out


@_quiet
def _elu(x, alpha=1.0):
    if _float_dtype(x) is None:
        return NotImplemented
    flat, out, o = _scratch(x)
    _launch(_min0, flat, x.dtype.type(0), o)
    np.expm1(o, out=o)
    _launch(_elu_finish, flat, x.dtype.type(alpha), o)
    return out


def _leaky_relu_call(x, alpha=0.2):
    dtype = _float_dtype(x)
    if dtype is None:
        return NotImplemented
    out = np.empty(x.shape, dtype)
    _launch(_leaky_relu, _contiguous(x).reshape(-1), dtype.type(alpha), out.reshape(-1))
    return out


_MASK_KINDS = {"relu": 0, "abs": 1}


def _masked_grad_call(g, x, kind="relu", alpha=0.2):
    dtype = _float_dtype(g, x)
    if dtype is None:
        return NotImplemented
    shape, flat = _operands(g, x)
    if shape is None:
        return NotImplemented
    fg, fx = flat
    out = np.empty(shape, dtype)
    _launch(_masked_grad, fg, fx, _MASK_KINDS.get(kind, 2), dtype.type(alpha), dtype.type(0), dtype.type(1),
            out.reshape(-1))
    return out


def _where_call(c, a, b):
    if _float_dtype(a, b) is None:
        return NotImplemented
    if c.dtype != np.bool_:
        c = c.astype(np.bool_)  # np.where's truth: nonzero, nan included
    shape, flat = _operands(c, a, b)
    if shape is None:
        return NotImplemented
    out = np.empty(shape, a.dtype)
    _launch(_where, *flat, out.reshape(-1))
    return out


# ---------------------------------------------------------------- reductions

def _reduced_axes(x: np.ndarray, axis):
    """The reduced axes, sorted and non-negative; None for anything NumPy would reject
    (or an empty tuple: a no-op that the NumPy kernel does)."""
    if axis is None:
        return tuple(range(x.ndim))
    raw = axis if isinstance(axis, tuple) else (axis,)
    if not raw or x.ndim == 0:
        return None
    axes = []
    for a in raw:
        try:
            a = operator.index(a)
        except TypeError:
            return None
        if not -x.ndim <= a < x.ndim:
            return None
        axes.append(a % x.ndim)
    if len(set(axes)) != len(axes):
        return None
    return tuple(sorted(axes))


def _layout(x: np.ndarray, axes):
    """``x`` as [outer, reduced, inner] (a view where the reduced axes are one block, else a
    transposed copy with them last)."""
    shape = x.shape
    if not axes:  # a 0-d tensor, axis=None
        return _contiguous(x).reshape(1, 1, 1)
    first, last = axes[0], axes[-1] + 1
    if axes == tuple(range(first, last)):
        outer = math.prod(shape[:first])
        red = math.prod(shape[first:last])
        return _contiguous(x).reshape(outer, red, math.prod(shape[last:]))
    kept = [i for i in range(x.ndim) if i not in axes]
    moved = np.ascontiguousarray(x.transpose(kept + list(axes)))
    return moved.reshape(math.prod(shape[i] for i in kept), math.prod(shape[i] for i in axes), 1)


def _middle_block(x: np.ndarray, axes) -> bool:
    """Whether the reduced axes are one block with kept axes after it."""
    return bool(axes) and axes == tuple(range(axes[0], axes[-1] + 1)) and axes[-1] < x.ndim - 1


def _out_shape(x, axes, keepdims):
    if keepdims:
        return tuple(1 if i in axes else n for i, n in enumerate(x.shape))
    return tuple(n for i, n in enumerate(x.shape) if i not in axes)


def _reduction(kind):
    def run(x, axis=None, keepdims=False):
        if _float_dtype(x) is None or x.size == 0:
            return NotImplemented
        axes = _reduced_axes(x, axis)
        if axes is None:
            return NotImplemented
        if kind in ("max", "min") and not _middle_block(x, axes):
            return NotImplemented  # NumPy's SIMD reduction (see the module docstring)
        x3 = _layout(x, axes)
        outer, red, inner = x3.shape
        out = np.empty((outer, inner), x.dtype)
        if kind in ("sum", "mean"):
            count = float(red) if kind == "mean" else 1.0
            if inner == 1:
                _launch(_sum_rows, x3.reshape(outer, red), count, out.reshape(-1))
            else:
                _launch(_sum_mid, x3, count, out)
        elif kind == "prod":
            if inner == 1:
                _launch(_prod_rows, x3.reshape(outer, red), x.dtype.type(1), out.reshape(-1))
            else:
                _launch(_prod_mid, x3, out)
        else:
            _launch(_max_mid if kind == "max" else _min_mid, x3, out)
        return out.reshape(_out_shape(x, axes, keepdims))
    return run


def _max_keepdims(x, axes):
    axis = axes or None  # () is every axis of a 0-d tensor here
    m = _REDUCE["max"](x, axis=axis, keepdims=True)
    if m is NotImplemented:
        m = np.max(x, axis=axis, keepdims=True)
    return m


@_quiet
def _logsumexp(x, axis=None, keepdims=False):
    """Stable: exp(x - max) summed, with NumPy's SIMD exp between numba's max and sum."""
    if _float_dtype(x) is None or x.size == 0:
        return NotImplemented
    axes = _reduced_axes(x, axis)
    if axes is None:
        return NotImplemented
    m = _max_keepdims(x, axes)
    m = np.where(np.isfinite(m), m, 0).astype(x.dtype)  # a row of -inf gives -inf, not nan
    t = np.subtract(x, m, out=np.empty(x.shape, x.dtype))
    np.exp(t, out=t)
    s = _REDUCE["sum"](t, axis=axes or None, keepdims=True)
    out = np.log(s, out=s)
    out += m
    return out.reshape(_out_shape(x, axes, keepdims))


_REDUCE = {kind: _reduction(kind) for kind in ("sum", "mean", "prod", "max", "min")}


# ------------------------------------------------------------------ the table

_numpy = None  # this op calls NumPy: see the module docstring for the measurements

# The kernels written by hand (an op with numba="formula" has its loop made from its formula, formulas.py)
_IMPLS = {
    "sign": _unary(_sign, 0, 1), "round": _unary(_round), "floor": _unary(_floor), "ceil": _unary(_ceil),
    "erf": _unary(_erf),
    "sin": _numpy, "cos": _numpy, "tan": _numpy, "exp": _numpy, "log": _numpy, "log1p": _numpy,
    "tanh": _numpy, "pow": _numpy,
    "sigmoid": _sigmoid, "softplus": _softplus, "elu": _elu, "leaky_relu": _leaky_relu_call,
    "clip": _elementwise(_clip), "where": _where_call, "masked_grad": _masked_grad_call,
    **_REDUCE, "logsumexp": _logsumexp, "bias_add_grad": _bias_add_grad,
    "windows_grad": numba_windows.windows_grad, "max_pool": numba_windows.max_pool,
    "max_pool_grad": numba_windows.max_pool_grad,
}


def call(name: str, *args, **attrs) -> np.ndarray:
    """Run kernel ``name``: numba where it covers the inputs, else the NumPy kernel."""
    impl = _IMPLS.get(name)
    if impl is None and name in FORMULAS:       # an op with a formula and no hand-written kernel
        impl = functools.partial(numba_call, name)
    if impl is not None and all(isinstance(a, np.ndarray) for a in args):
        out = impl(*args, **attrs)
        if out is not NotImplemented:
            return out
    return np.asarray(NUMPY_KERNELS[name](*args, **attrs))
