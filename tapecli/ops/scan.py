"""identity, one_hot, cumsum, cumprod and cumulative_logsumexp (TensorFlow's conventions: exclusive, reverse)."""
from __future__ import annotations

import numpy as np

from tapecli.kernels import tf_float32
from tapecli.ops.core import apply, register, to_tensor
from tapecli.ops.elementwise import add, divide_no_nan, exp, greater, less, log, mul, neg, sub, where
from tapecli.runtime.values import Tensor


IDENTITY = register("identity", unify=(), numpy=lambda x: x.copy(), saves=(), strings=True,
                    vjp=lambda r, g: (g,), jvp=lambda r, ts: ts[0])


def identity(x): return apply(IDENTITY, (x,))


def _one_hot(indices, depth, on, off, axis, dtype):
    hot = np.expand_dims(indices, axis) == np.arange(depth).reshape((depth,) + (1,) * (indices.ndim - axis))
    return np.where(hot, on, off).astype(dtype)


ONE_HOT = register("one_hot", unify=(), numpy=lambda i, on, off, depth, axis, dtype: _one_hot(i, depth, on, off, axis,
                                                                                                 dtype),
                   differentiable=False)


def one_hot(indices, depth, on_value, off_value, axis, dtype) -> Tensor:
    """``indices`` an int tensor, ``axis`` in [0, rank]; out-of-range indices give a row of off_value."""
    return apply(ONE_HOT, (indices, on_value, off_value), depth=depth, axis=axis, dtype=np.dtype(dtype))


# ------------------------------------------------------------- cumsum, cumprod

def _scan(x, axis, exclusive, reverse, f, unit):
    if reverse:
        x = np.flip(x, axis)
    out = f(x, axis=axis)
    if exclusive:
        out = np.concatenate([np.full_like(np.take(out, [0], axis=axis), unit),
                              np.take(out, np.arange(out.shape[axis] - 1), axis=axis)], axis=axis)
    if reverse:
        out = np.flip(out, axis)
    return np.ascontiguousarray(out.astype(x.dtype, copy=False))


def _cumsum_kernel(x, axis, exclusive=False, reverse=False):
    out = _scan(x, axis, exclusive, reverse, np.cumsum, 0)
    if out.dtype.kind == "f":       # (Eigen's scan adds to a +0.0 first: a run of -0.0 sums to +0.0, not NumPy's -0.0)
        np.add(out, out.dtype.type(0), out=out)
    return out


def _cumprod_kernel(x, axis, exclusive=False, reverse=False):
    return _scan(x, axis, exclusive, reverse, np.cumprod, 1)


def _lead_axis(r, t):
    """The op's axis in a (possibly batched) gradient or tangent ``t``."""
    return r.attrs["axis"] + (t.ndim - r.output.ndim)


def _cumsum_vjp(r, g):
    # TensorFlow's CumsumGrad: the cumulative sum of g the other way, exclusive as the forward
    return (cumsum(g, _lead_axis(r, g), r.attrs["exclusive"], not r.attrs["reverse"]),)


def _cumsum_jvp(r, ts):
    return cumsum(ts[0], _lead_axis(r, ts[0]), r.attrs["exclusive"], r.attrs["reverse"])


def _cumprod_vjp(r, g):
    # TensorFlow's CumprodGrad: divide_no_nan(cumsum(y * g, reverse=not reverse), x): 0 where x is 0
    x, y = r.inputs[0], r.output
    a = r.attrs
    axis = _lead_axis(r, g)
    return (divide_no_nan(cumsum(mul(y, g), axis, a["exclusive"], not a["reverse"]), x),)


def _cumprod_jvp(r, ts):
    x, y = r.inputs[0], r.output
    a = r.attrs
    t = ts[0]
    # the transpose of the vjp's linear map, so 0 where x is 0 as there
    return mul(y, cumsum(divide_no_nan(t, x), _lead_axis(r, t), a["exclusive"], a["reverse"]))


CUMSUM = register("cumsum", unify=(), numpy=_cumsum_kernel, vjp=_cumsum_vjp, jvp=_cumsum_jvp, saves=())
CUMPROD = register("cumprod", unify=(), numpy=_cumprod_kernel, vjp=_cumprod_vjp, jvp=_cumprod_jvp, saves=(0, "out"))


def _axis(x, axis):
    x = to_tensor(x)
    return x, int(axis) % max(x.ndim, 1)


def cumsum(x, axis=0, exclusive=False, reverse=False):
    x, axis = _axis(x, axis)
    return apply(CUMSUM, (x,), axis=axis, exclusive=bool(exclusive), reverse=bool(reverse))


def cumprod(x, axis=0, exclusive=False, reverse=False):
    x, axis = _axis(x, axis)
    return apply(CUMPROD, (x,), axis=axis, exclusive=bool(exclusive), reverse=bool(reverse))


# --------------------------------------------------------- cumulative_logsumexp

def _logsumexp_pair(a, b):
    """Eigen's LogSumExp of TensorFlow's scan (scan_ops.h) on one element: max + log1p(exp(min - max)), a float32
    with the C library's expf and log1pf (the scan's scalar path)."""
    lo, hi = min(a, b), max(a, b)
    if a.__class__ is np.float32:
        return hi + tf_float32.log1p(tf_float32.exp(lo - hi))
    return hi + np.log1p(np.exp(lo - hi))


def _cumulative_logsumexp_kernel(x, axis, exclusive=False, reverse=False):
    """CumulativeLogsumexp: along ``axis`` a running LogSumExp from -inf, each line one element after another."""
    lines = np.moveaxis(x, axis, -1)
    out = np.empty(lines.shape, x.dtype)
    flat_in, flat_out = lines.reshape(-1, lines.shape[-1]), out.reshape(-1, lines.shape[-1])
    order = range(lines.shape[-1] - 1, -1, -1) if reverse else range(lines.shape[-1])
    with np.errstate(all="ignore"):
        for row, done in zip(flat_in, flat_out):
            acc = x.dtype.type(-np.inf)
            for k in order:
                if exclusive:
                    done[k] = acc
                acc = _logsumexp_pair(acc, row[k])
                if not exclusive:
                    done[k] = acc
    return np.ascontiguousarray(np.moveaxis(out, -1, axis))


def _cumulative_logsumexp_vjp(r, g):
    """TensorFlow's _CumulativeLogsumexpGrad: the gradient's positive and negative parts in logs, each scanned the
    other way against the output, exp(... + x), their difference."""
    x, out = r.inputs[0], r.output
    lead = g.ndim - out.ndim
    floor = float(np.finfo(g.dtype).min)
    parts = []
    for select, magnitude in ((greater, g), (less, neg(g))):
        logs = where(select(g, 0.0), log(magnitude), floor)
        scanned = cumulative_logsumexp(sub(logs, out), r.attrs["axis"] + lead, exclusive=r.attrs["exclusive"],
                                       reverse=not r.attrs["reverse"])
        parts.append(exp(add(scanned, x)))
    return (sub(*parts),)


CUMULATIVE_LOGSUMEXP = register("cumulative_logsumexp", unify=(), numpy=_cumulative_logsumexp_kernel,
                                vjp=_cumulative_logsumexp_vjp, saves=(0, "out"), float_only=True)


def cumulative_logsumexp(x, axis=0, exclusive=False, reverse=False):
    x, axis = _axis(x, axis)
    return apply(CUMULATIVE_LOGSUMEXP, (x,), axis=axis, exclusive=bool(exclusive), reverse=bool(reverse))
