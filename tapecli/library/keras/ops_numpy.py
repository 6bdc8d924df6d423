"""keras.ops' NumPy-like functions that TensorFlow's names do not give (keras/src/backend/tensorflow/numpy.py):
arange, power, full, full_like, empty, empty_like, amax, amin, ravel, ndim, concatenate, flip, tril, triu, log2,
log10, var, std, isnan, isinf, isfinite and trunc, each with Keras's dtypes. Keras promotes dtypes with
``result_type``: a Python number's type is weak (an int meets an int32 tensor in int32, a float an int one in
floatx), alone an int is int32, a float floatx."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.library.keras.common import dims, float_dtype, integer, tensor
from tapecli.library.keras.utilities import keras_reduction
from tapecli.library.keras.utilities import result_type as strong_result_type
from tapecli.runtime.values import NumpyArray, Tensor, dtype_name

_WEAK = {"b": "bool", "i": "int", "u": "int", "f": "float"}


def _raw(x) -> Tensor:
    """An argument as a tensor, a Python literal still weak (a NumPy array keeps its dtype, as Keras's
    convert_to_tensor does; keras' ``tensor`` casts float arrays to floatx, as its layers do)."""
    return tensor(x) if isinstance(x, list) else ops.to_tensor(x)


def _tensor(x) -> Tensor:
    return ops.materialize(_raw(x))


def _kind(x) -> str:
    """What Keras's result_type reads of an argument: a Python number's type ("int", "float", "bool"), else the
    name of the tensor's dtype (a list's as TensorFlow converts it)."""
    t = _raw(x)
    if t.weak and t.ndim == 0 and not isinstance(t, NumpyArray):
        return _WEAK[t.dtype.kind]
    return dtype_name(ops.materialize(t).dtype)


def result_type(*kinds) -> str:
    """Keras's dtypes.result_type of dtype names and weak Python types ("int", "float"; a Python bool is "bool")."""
    return strong_result_type(*kinds)


def _as(x, dtype) -> Tensor:
    return ops.cast(_raw(x), np.dtype(dtype))


def arange(start, stop=None, step=None, dtype=None):
    """The dtype given, else the arguments' result_type (arange(3) is int32, arange(3.0) float32)."""
    from tapecli.library.core import tf_range
    given = [v for v in (start, stop, step) if v is not None]
    dtype = dtype or result_type(*map(_kind, given))
    return tf_range(start, stop, 1 if step is None else step, dtype=dtype)


def power(x1, x2):
    dtype = result_type(_kind(x1), _kind(x2))
    return ops.pow_(_as(x1, dtype), _as(x2, dtype))


def full(shape, fill_value, dtype=None):
    value = _as(fill_value, dtype or float_dtype())
    return ops.broadcast_to(value, tuple(dims(shape, "shape")))


def full_like(x, fill_value, dtype=None):
    t = _tensor(x)
    return full(t.shape, fill_value, dtype or t.dtype)


def empty(shape, dtype=None):
    """Zeros, as Keras's TensorFlow backend gives."""
    return full(shape, Tensor(np.zeros((), np.int32)), dtype)


def empty_like(x, dtype=None):
    return full_like(x, Tensor(np.zeros((), np.int32)), dtype)


def ravel(x):
    return ops.reshape(_tensor(x), (-1,))


def ndim(x):
    return _tensor(x).ndim


def concatenate(xs, axis=0):
    """Keras's concatenate: the tensors cast to their result_type when their dtypes differ."""
    ts = [_tensor(x) for x in xs]
    dtype = result_type(*map(_kind, ts))
    return ops.concat([_as(t, dtype) for t in ts], integer(axis, "axis"))


def flip(x, axis=None):
    t = _tensor(x)
    axes = range(t.ndim) if axis is None else [axis] if not isinstance(axis, (list, tuple)) else axis
    return ops.reverse(t, [integer(a, "axis") % max(t.ndim, 1) for a in axes])


def _band(x, k, lower):
    """tril/triu: the elements on and below (above) the k-th diagonal of the last two axes, the rest zero."""
    t = _tensor(x)
    rows, cols = np.indices(t.shape[-2:])
    keep = cols - rows <= integer(k, "k") if lower else cols - rows >= integer(k, "k")
    return ops.where(Tensor(np.broadcast_to(keep, t.shape)), t, ops.zeros_like(t))


def tril(x, k=0):
    return _band(x, k, True)


def triu(x, k=0):
    return _band(x, k, False)


def _logarithm(base):
    """log2/log10: floatx for an int64 tensor, else the float its dtype meets; log(x) / log(base), as Keras."""
    def log_base(x):
        kind = _kind(x)
        dtype = dtype_name(float_dtype()) if kind == "int64" else result_type(kind, "float")
        t = _as(x, dtype)
        return ops.div(ops.log(t), ops.log(Tensor(np.asarray(base, t.dtype))))
    log_base.__name__ = f"log{base}"
    return log_base


def var(x, axis=None, keepdims=False):
    from tapecli.library.tf_math import reduce_variance
    kind = _kind(x)
    out = reduce_variance(_as(x, result_type(kind, "float32")), axis, keepdims)
    return ops.cast(out, np.dtype(result_type(kind, "float")))


def std(x, axis=None, keepdims=False):
    from tapecli.library.tf_math import reduce_std
    t = _tensor(x)
    return reduce_std(t if t.dtype.kind == "f" else _as(t, float_dtype()), axis, keepdims)


def _test(name, test, for_ints):
    """isnan/isinf/isfinite: an int or bool tensor's answer is ``for_ints`` everywhere."""
    def check(x):
        t = _tensor(x)
        return Tensor(test(t.value) if t.dtype.kind == "f" else np.full(t.shape, for_ints))
    check.__name__ = name
    return check


def trunc(x):
    t = _tensor(x)
    if t.dtype.kind != "f":
        return t
    return ops.where(ops.less(t, Tensor(np.zeros((), t.dtype))), ops.ceil(t), ops.floor(t))


FUNCTIONS = {f"ops.{f.__name__}": f for f in (
    arange, power, full, full_like, empty, empty_like, ravel, ndim, concatenate, flip, tril, triu, var, std,
    trunc, _logarithm(2), _logarithm(10), _test("isnan", np.isnan, False), _test("isinf", np.isinf, False),
    _test("isfinite", np.isfinite, True))}
FUNCTIONS.update({"ops.amax": keras_reduction("reduce_max"), "ops.amin": keras_reduction("reduce_min")})
