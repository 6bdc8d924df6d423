"""Reductions (sum, mean, max, min, prod, logsumexp, arg-extremes) and softmax."""
from __future__ import annotations


import numpy as np

from tapecli.kernels import numpy_kernels

from tapecli.errors import ShapeError
from tapecli.ops.core import apply, register, to_tensor
from tapecli.ops.elementwise import (div, equal, exp, mul, reciprocal, stop_gradient, sub, where,
                                     zeros_like)
from tapecli.ops.shape import broadcast_to, reshape, transpose
from tapecli.runtime.values import Tensor


# --------------------------------------------------------------- reductions


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, tuple) else (axis,)
    return tuple(sorted(a % ndim if ndim else a for a in axes))


def _keep_shape(shape, axis):
    """The shape of a reduction over ``axis`` with keepdims."""
    axes = _axes(axis, len(shape))
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def _batch_axis(axis, ndim, lead):
    """A reduction's ``axis`` (of a tensor of ``ndim`` dims) for the same tensor behind ``lead`` batch dims."""
    if not lead:
        return axis
    return tuple(lead + a for a in _axes(axis, ndim))


def _expand_reduced(g, r):
    """A reduction's upstream gradient, reshaped to keep the reduced dims and broadcast."""
    x = r.inputs[0]
    lead = g.ndim - r.output.ndim
    batch = g.shape[:lead]
    if not r.attrs.get("keepdims"):
        g = reshape(g, batch + _keep_shape(x.shape, r.attrs.get("axis")))
    return broadcast_to(g, batch + x.shape)


def _count(r):
    x = r.inputs[0]
    return int(np.prod([x.shape[a] for a in _axes(r.attrs.get("axis"), x.ndim)])) if x.shape else 1


def _reduce_tangent(r, t, weights=None):
    """The tangent of a sum-like reduction: sum(t * weights) over the record's axes."""
    x = r.inputs[0]
    lead = t.ndim - x.ndim
    if weights is not None:
        t = mul(t, weights)
    return reduce_sum(t, axis=_batch_axis(r.attrs.get("axis"), x.ndim, lead), keepdims=r.attrs.get("keepdims", False))


def _extreme_share(r):
    """cast(equal(x, y), x.dtype) / its sum over the axes (TensorFlow's _MaxGrad), as one kernel."""
    x = r.inputs[0]
    axis = r.attrs.get("axis")
    y = r.output if r.attrs.get("keepdims") else reshape(r.output, _keep_shape(x.shape, axis))
    return apply(EXTREME_SHARE, (x, y), axis=axis)


def _extreme_vjp(r, g):
    return (mul(_expand_reduced(g, r), _extreme_share(r)),)


def _prod_others(r):
    """d prod / d x_i, the product of the others, as TensorFlow's _ProdGrad writes it: the reduced axes moved first
    and packed into one, the exclusive cumulative products from each end multiplied, moved back. No division, so
    zeros need no care; its own gradient is Cumprod's (div_no_nan: TensorFlow's Hessian where x has zeros)."""
    from tapecli.ops.scan import cumprod        # (a deferred module: loaded by the first gradient of a product)
    x = r.inputs[0]
    axis = r.attrs.get("axis")
    reduced = tuple(range(x.ndim)) if axis is None else \
        tuple(a % x.ndim for a in (axis if isinstance(axis, tuple) else (axis,)))
    perm = reduced + tuple(a for a in range(x.ndim) if a not in reduced)
    permuted = transpose(x, perm) if perm != tuple(range(x.ndim)) else x
    reduced_num = int(np.prod([x.shape[a] for a in reduced]))
    packed = reshape(permuted, (reduced_num, x.size // reduced_num if reduced_num else 0))
    left = cumprod(packed, axis=0, exclusive=True)
    right = cumprod(packed, axis=0, exclusive=True, reverse=True)
    others = reshape(mul(left, right), permuted.shape)
    return transpose(others, tuple(np.argsort(perm))) if perm != tuple(range(x.ndim)) else others


def _prod_vjp(r, g):
    return (mul(_expand_reduced(g, r), _prod_others(r)),)


def _logsumexp_share(r):
    x = r.inputs[0]
    y = r.output if r.attrs.get("keepdims") else reshape(r.output, _keep_shape(x.shape, r.attrs.get("axis")))
    return exp(sub(x, y))


def _logsumexp_vjp(r, g):
    """The gradient of TensorFlow's reduce_logsumexp, its ops' (math_ops.py: log(sum(exp(x - m))) + m, m the
    finite maximum, without a gradient): Log's grad * 1 / s, Sum's broadcast of it, Exp's grad * exp(x - m)."""
    x = r.inputs[0]
    axis = r.attrs.get("axis")
    top = reduce_max(x, axis=axis, keepdims=True)
    zero = zeros_like(top)
    finite = equal(sub(top, top), zero)         # (inf - inf and nan - nan are nan)
    e = exp(sub(x, stop_gradient(where(finite, top, zero))))
    total = reduce_sum(e, axis=axis, keepdims=r.attrs.get("keepdims", False))
    return (mul(_expand_reduced(mul(g, reciprocal(total)), r), e),)


SUM = register("sum", numpy=numpy_kernels.reduce("sum"), numba=True, vjp=lambda r, g: (_expand_reduced(g, r),),
               jvp=lambda r, ts: _reduce_tangent(r, ts[0]), saves=())
MEAN = register("mean", numpy=numpy_kernels.reduce("mean"), numba=True,
                vjp=lambda r, g: (div(_expand_reduced(g, r), _count(r)),),
                jvp=lambda r, ts: reduce_mean(ts[0], axis=_batch_axis(r.attrs.get("axis"), r.inputs[0].ndim,
                                                                       ts[0].ndim - r.inputs[0].ndim),
                                              keepdims=r.attrs.get("keepdims", False)), saves=())
# piecewise constant in both inputs: no gradient, as equal's
EXTREME_SHARE = register("extreme_share", numpy=numpy_kernels.extreme_share, differentiable=False, saves=())
MAX = register("max", numpy=numpy_kernels.reduce("max"), numba=True, vjp=_extreme_vjp,
               jvp=lambda r, ts: _reduce_tangent(r, ts[0], _extreme_share(r)), saves=(0, "out"))
MIN = register("min", numpy=numpy_kernels.reduce("min"), numba=True, vjp=_extreme_vjp,
               jvp=lambda r, ts: _reduce_tangent(r, ts[0], _extreme_share(r)), saves=(0, "out"))
PROD = register("prod", numpy=numpy_kernels.reduce("prod"), numba=True, vjp=_prod_vjp,
                jvp=lambda r, ts: _reduce_tangent(r, ts[0], _prod_others(r)), saves=(0,))
LOGSUMEXP = register("logsumexp", numpy=numpy_kernels.logsumexp, numba=True, float_only=True, vjp=_logsumexp_vjp,
                     jvp=lambda r, ts: _reduce_tangent(r, ts[0], _logsumexp_share(r)), saves=(0, "out"))
ARGMAX = register("argmax", numpy=numpy_kernels.argmax, differentiable=False)
ARGMIN = register("argmin", numpy=numpy_kernels.argmin, differentiable=False)


def _softmax_axis(r, g):
    axis = r.attrs["axis"]
    lead = g.ndim - r.output.ndim
    return axis + lead if axis >= 0 else axis


def _softmax_vjp(r, g):
    y = r.output
    return (mul(y, sub(g, reduce_sum(mul(g, y), axis=_softmax_axis(r, g), keepdims=True))),)


def _log_softmax_vjp(r, g):
    y = r.output
    return (sub(g, mul(exp(y), reduce_sum(g, axis=_softmax_axis(r, g), keepdims=True))),)


def _log_softmax_jvp(r, ts):
    t, y = ts[0], r.output
    return sub(t, reduce_sum(mul(exp(y), t), axis=_softmax_axis(r, t), keepdims=True))


SOFTMAX = register("softmax", numpy=numpy_kernels.softmax, float_only=True, vjp=_softmax_vjp,
                   jvp=lambda r, ts: _softmax_vjp(r, ts[0])[0], saves=("out",))
LOG_SOFTMAX = register("log_softmax", numpy=numpy_kernels.log_softmax, float_only=True, vjp=_log_softmax_vjp,
                       jvp=_log_softmax_jvp, saves=("out",))


def _check_axis(x: Tensor, axis):
    if axis is None:
        return None
    axes = axis if isinstance(axis, tuple) else (axis,)
    for a in axes:
        if not -max(x.ndim, 1) <= a < max(x.ndim, 1):
            raise ShapeError(f"axis {a} is out of range for a tensor of shape {list(x.shape)}")
    return axis


def _reduction(op):
    def run(x, axis=None, keepdims=False):
        x = to_tensor(x)
        return apply(op, (x,), axis=_check_axis(x, axis), keepdims=bool(keepdims))
    return run


reduce_sum = _reduction(SUM)
reduce_mean = _reduction(MEAN)
reduce_max = _reduction(MAX)
reduce_min = _reduction(MIN)
reduce_prod = _reduction(PROD)
reduce_logsumexp = _reduction(LOGSUMEXP)


def argmax(x, axis=0): return apply(ARGMAX, (x,), axis=axis)
def argmin(x, axis=0): return apply(ARGMIN, (x,), axis=axis)
def softmax(x, axis=-1): return apply(SOFTMAX, (x,), axis=axis)
def log_softmax(x, axis=-1): return apply(LOG_SOFTMAX, (x,), axis=axis)


