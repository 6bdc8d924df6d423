"""keras.ops' statistics that TensorFlow's names do not give, as Keras's TensorFlow backend computes them
(keras/src/backend/tensorflow/numpy.py): average, quantile/percentile/median (tfp's sort-and-gather), ptp, the
NaN-skipping reductions, corrcoef, correlate, select and the window functions (bartlett, blackman, hamming,
hanning, kaiser)."""
from __future__ import annotations

import warnings

import numpy as np

from tapecli import ops
from tapecli.errors import TdfValueError
from tapecli.library.keras.common import flag, float_dtype, integer
from tapecli.library.keras.ops_arrays import _ints, moveaxis
from tapecli.library.keras.ops_numpy import _as, _kind, _tensor, result_type
from tapecli.runtime.values import Tensor


def _axes(axis, ndim: int):
    """An axis argument as a sorted tuple of non-negative axes (as tapecli's reductions take them), or None."""
    if axis is None:
        return None
    return tuple(sorted(a % max(ndim, 1) for a in _ints(axis)))


def average(x, axis=None, weights=None):
    if weights is None:
        return ops.reduce_mean(_as(x, result_type(_kind(x), "float")), _axes(axis, _tensor(x).ndim))
    dtype = result_type(_kind(x), _kind(weights), "float")
    t, w = _as(x, dtype), _as(weights, dtype)
    if axis is not None and t.ndim != w.ndim:      # 1-D weights along ``axis``
        a = integer(axis, "axis") % t.ndim
        return ops.div(ops.tensordot(t, w, [[a], [0]]), ops.reduce_sum(w))
    axes = _axes(axis, t.ndim)
    return ops.div(ops.reduce_sum(ops.mul(t, w), axes), ops.reduce_sum(w, axes))


def quantile(x, q, axis=None, method="linear", keepdims=False):
    """tfp.stats.percentile as Keras copies it: ``axis`` moved last and flattened, sorted, and the values at
    (n - 1) * q gathered by ``method`` ("linear" interpolates); NaN wherever a reduced slice has one."""
    t = _as(x, result_type(_kind(x), "float"))
    qs = _tensor(q).value.astype(np.float64)
    axes = _axes(axis, t.ndim)
    if axes is None:
        y = ops.reshape(t, (-1,))
    else:
        others = [i for i in range(t.ndim) if i not in axes]
        y = ops.transpose(t, others + list(axes))
        y = ops.reshape(y, tuple(t.shape[i] for i in others) + (-1,))
    ordered = ops.sort(y, axis=-1)
    n = y.shape[-1]
    exact = (n - 1) * qs

    def at(positions):
        return ops.gather(ordered, Tensor(np.clip(positions.astype(np.int32), 0, n - 1)), axis=y.ndim - 1)
    if method in ("lower", "higher", "nearest"):
        out = at({"lower": np.floor, "higher": np.ceil, "nearest": np.round}[method](exact))
    elif method == "midpoint":
        out = ops.mul(Tensor(np.asarray(0.5, t.dtype)), ops.add(at(np.floor(exact)), at(np.ceil(exact))))
    elif method == "linear":
        larger = np.clip(np.ceil(exact).astype(np.int32), 0, n - 1)
        smaller = np.maximum(larger - 1, 0)
        larger = np.minimum(smaller + 1, n - 1)
        fraction = Tensor((larger - exact).astype(t.dtype))
        out = ops.add(ops.mul(at(larger), ops.sub(Tensor(np.ones((), t.dtype)), fraction)),
                      ops.mul(at(smaller), fraction))
    else:
        raise TdfValueError("Invalid value of `method`. Expected one of {'linear', 'lower', 'higher', 'midpoint', "
                            f"'nearest'}}. Received: method={method}")
    nan = np.any(np.isnan(t.value), axis=axes)
    nan = np.reshape(nan, np.shape(nan) + (1,) * qs.ndim)
    out = ops.where(Tensor(np.broadcast_to(nan, out.shape)), ops.broadcast_to(Tensor(np.asarray(np.nan, t.dtype)),
                                                                              out.shape), out)
    if qs.ndim:                                   # the quantiles' axis first, as NumPy
        out = moveaxis(out, -1, 0)
    if flag(keepdims):
        kept = [1 if axes is None or i in axes else d for i, d in enumerate(t.shape)]
        out = ops.reshape(out, qs.shape + tuple(kept))
    return out


def percentile(x, q, axis=None, method="linear", keepdims=False):
    return quantile(x, ops.div(_as(q, "float64"), Tensor(np.asarray(100.0))), axis, method, keepdims)


def median(x, axis=None, keepdims=False):
    return quantile(x, 0.5, axis=axis, keepdims=keepdims)


def ptp(x, axis=None, keepdims=False):
    t = _tensor(x)
    axes = _axes(axis, t.ndim)
    return ops.sub(ops.reduce_max(t, axes, keepdims), ops.reduce_min(t, axes, keepdims))


def _nan_mask(t: Tensor) -> Tensor:
    return Tensor(np.isnan(t.value) if t.dtype.kind == "f" else np.zeros(t.shape, bool))


def _cleaned(t: Tensor, value) -> Tensor:
    return ops.where(_nan_mask(t), ops.broadcast_to(Tensor(np.asarray(value, t.dtype)), t.shape), t)


def _nan_reduction(name, reduce, identity):
    """keras.ops.nansum / nanprod: the reduction with each NaN its identity (bools counted as int32)."""
    def apply(x, axis=None, keepdims=False):
        t = _cleaned(_tensor(x), identity)
        if t.dtype.kind == "b":
            t = ops.cast(t, np.dtype("int32"))
        return reduce(t, _axes(axis, t.ndim), keepdims)
    apply.__name__ = name
    return apply


nansum = _nan_reduction("nansum", ops.reduce_sum, 0)
nanprod = _nan_reduction("nanprod", ops.reduce_prod, 1)


def nanmean(x, axis=None, keepdims=False):
    t = _tensor(x)
    axes = _axes(axis, t.ndim)
    if t.dtype.kind != "f":
        return ops.reduce_mean(ops.cast(t, np.dtype("float32")), axes, keepdims)
    count = ops.reduce_sum(ops.cast(ops.logical_not(_nan_mask(t)), t.dtype), axes, keepdims)
    return ops.div(nansum(t, axis, keepdims), count)


def nanvar(x, axis=None, keepdims=False):
    t = _as(x, result_type(_kind(x), "float"))
    axes = _axes(axis, t.ndim)
    valid = ops.logical_not(_nan_mask(t))
    centered = ops.where(valid, ops.sub(t, nanmean(t, axis, True)), ops.zeros_like(t))
    count = ops.reduce_sum(ops.cast(valid, t.dtype), axes, keepdims)
    return ops.div(ops.reduce_sum(ops.square(centered), axes, keepdims), count)


def nanstd(x, axis=None, keepdims=False):
    return ops.sqrt(nanvar(x, axis, keepdims))


def _nan_extreme(name, fill, reduce):
    """nanmax/nanmin: the extreme of the values not NaN; NaN where all of them are."""
    def apply(x, axis=None, keepdims=False):
        t = _tensor(x)
        axes = _axes(axis, t.ndim)
        if t.dtype.kind == "b":
            test = np.any if fill < 0 else np.all
            return Tensor(test(t.value, axis=axes, keepdims=flag(keepdims)))
        if t.dtype.kind != "f":
            return reduce(t, axes, keepdims)
        out = reduce(_cleaned(t, fill), axes, keepdims)
        all_nan = np.all(np.isnan(t.value), axis=axes, keepdims=flag(keepdims))
        return ops.where(Tensor(np.broadcast_to(all_nan, out.shape)),
                         ops.broadcast_to(Tensor(np.asarray(np.nan, t.dtype)), out.shape), out)
    apply.__name__ = name
    return apply


def _nan_arg(name, fill, pick):
    """nanargmax/nanargmin: the index of the extreme of the values not NaN; -1 where all of them are."""
    def apply(x, axis=None, keepdims=False):
        v = _tensor(x).value
        axis = None if axis is None else integer(axis, "axis")
        if v.dtype.kind == "f":
            nan = np.isnan(v)
            out = pick(np.where(nan, fill, v), axis=axis, keepdims=flag(keepdims))
            out = np.where(np.all(nan, axis=axis, keepdims=flag(keepdims)), -1, out)
        else:
            out = pick(v, axis=axis, keepdims=flag(keepdims))
        return Tensor(np.asarray(out, np.int32))
    apply.__name__ = name
    return apply


def _nan_cumulative(name, fill, op):
    def apply(x, axis=None, dtype=None):
        t = _cleaned(_tensor(x), fill)
        if axis is None:
            t, axis = ops.reshape(t, (-1,)), 0
        if dtype is not None:
            t = ops.cast(t, np.dtype(dtype))
        elif t.dtype.kind == "b":
            t = ops.cast(t, np.dtype("int32"))
        return op(t, integer(axis, "axis") % max(t.ndim, 1))
    apply.__name__ = name
    return apply


def nanquantile(x, q, axis=None, method="linear", keepdims=False):
    """quantile of the values not NaN: each reduced slice's NaNs sorted last and left out of its count."""
    t = _as(x, result_type(_kind(x), "float"))
    v = t.value
    with warnings.catch_warnings():           # (an all-NaN slice is NaN, as Keras gives it, without NumPy's warning)
        warnings.simplefilter("ignore", RuntimeWarning)
        return Tensor(np.nanquantile(v, _tensor(q).value, axis=_axes(axis, t.ndim),
                                     method=method, keepdims=flag(keepdims)).astype(v.dtype))


def nanpercentile(x, q, axis=None, method="linear", keepdims=False):
    return nanquantile(x, _tensor(q).value / 100.0, axis, method, keepdims)


def nanmedian(x, axis=None, keepdims=False):
    return nanquantile(x, 0.5, axis, keepdims=keepdims)


def corrcoef(x):
    t = _tensor(x)
    if t.dtype.kind != "f":
        t = ops.cast(t, float_dtype())
    if t.ndim == 0:
        return Tensor(np.asarray(np.nan, float_dtype()))
    centered = ops.sub(t, ops.reduce_mean(t, t.ndim - 1, True))
    n = Tensor(np.asarray(t.shape[-1], t.dtype))
    cov = ops.div(ops.matmul(centered, ops.transpose(centered)), ops.sub(n, Tensor(np.ones((), t.dtype))))
    std = ops.sqrt(ops.diag_part(cov))
    return ops.clip(ops.div(cov, ops.tensordot(std, std, 0)), Tensor(np.asarray(-1.0, t.dtype)),
                    Tensor(np.asarray(1.0, t.dtype)))


def correlate(x1, x2, mode="valid"):
    """NumPy's correlate of two vectors: a valid convolution (no flip) of x1 padded by len(x2) - 1 ("full"),
    the middle max(n, m) of that ("same"), or unpadded ("valid"); computed in float32 (float64 for int64)."""
    kind = result_type(_kind(x1), _kind(x2))
    dtype = "float64" if kind in ("int64", "float64") else "float32"
    a, b = _as(x1, dtype), _as(x2, dtype)
    if mode not in ("full", "same", "valid"):
        raise TdfValueError(f"Invalid mode: '{mode}'. Mode must be one of: 'full', 'same', 'valid'.")
    n, m = a.shape[0], b.shape[0]
    if mode != "valid":
        a = ops.pad(a, [[m - 1, m - 1]])
    out = ops.reshape(ops.conv1d(ops.reshape(a, (1, -1, 1)), ops.reshape(b, (m, 1, 1))), (-1,))
    if mode == "same":
        start = (n + m - 1 - max(n, m)) // 2
        out = ops.getitem(out, slice(start, start + max(n, m)))
    return out


def select(condlist, choicelist, default=0):
    """The first choice whose condition holds, else ``default``."""
    choices = [_tensor(c) for c in choicelist]
    dtype = result_type(*map(_kind, choices), _kind(default))
    out = _as(default, dtype)
    for cond, choice in reversed(list(zip(condlist, choices))):
        c = _tensor(cond)
        shape = np.broadcast_shapes(c.shape, choice.shape, out.shape)
        out = ops.where(ops.broadcast_to(c, shape), ops.broadcast_to(_as(choice, dtype), shape),
                        ops.broadcast_to(out, shape))
    return out


def _window(name, formula):
    """The window functions: NumPy's symmetric windows of length x, in floatx."""
    def apply(x):
        return Tensor(np.asarray(formula(integer(x, "x")), float_dtype()))
    apply.__name__ = name
    return apply


def kaiser(x, beta):
    return Tensor(np.asarray(np.kaiser(integer(x, "x"), float(getattr(beta, "value", beta))), float_dtype()))


FUNCTIONS = {f"ops.{f.__name__}": f for f in (
    average, quantile, percentile, median, ptp, nansum, nanprod, nanmean, nanvar, nanstd, nanquantile,
    nanpercentile, nanmedian, corrcoef, correlate, select,
    _nan_extreme("nanmax", -np.inf, ops.reduce_max), _nan_extreme("nanmin", np.inf, ops.reduce_min),
    _nan_arg("nanargmax", -np.inf, np.argmax), _nan_arg("nanargmin", np.inf, np.argmin),
    _nan_cumulative("nancumsum", 0, ops.cumsum), _nan_cumulative("nancumprod", 1, ops.cumprod),
    _window("bartlett", np.bartlett), _window("blackman", np.blackman), _window("hamming", np.hamming),
    _window("hanning", np.hanning), kaiser)}
