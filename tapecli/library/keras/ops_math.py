"""keras.ops' element-wise math that TensorFlow's names do not give, as Keras's TensorFlow backend computes it
(keras/src/backend/tensorflow/numpy.py): the inverse trigonometric and hyperbolic functions, cbrt, exp2, fabs,
deg2rad/rad2deg, floor_divide/true_divide, fmod, hypot, logaddexp(2), signbit, heaviside, sinc, isclose,
isneginf/isposinf/isreal, nan_to_num, fmax/fmin, ldexp, gcd/lcm, the bitwise functions (integers only) and
real/imag/conj/angle of real tensors. Each casts its arguments to Keras's result_type first."""
from __future__ import annotations

import math

import numpy as np

from tapecli import ops
from tapecli.errors import TdfTypeError
from tapecli.library.keras.common import flag, float_dtype
from tapecli.library.keras.ops_numpy import _as, _kind, _tensor, result_type
from tapecli.runtime.values import Tensor, dtype_name

_NARROW_INTS = ("bool", "int8", "int16", "int32", "uint8", "uint16", "uint32")


def _floating(kind: str) -> str:
    """The float a unary float function computes in: floatx for int64 (not float64), else result_type(x, float)."""
    return dtype_name(float_dtype()) if kind == "int64" else result_type(kind, "float")


def _widened(kind: str) -> str:
    """deg2rad/hypot/heaviside's float: floatx for narrow ints, float64 for int64, else the dtype itself."""
    return dtype_name(float_dtype()) if kind in _NARROW_INTS else "float64" if kind == "int64" else kind


def _unary(name, op):
    def apply(x):
        return op(_as(x, _floating(_kind(x))))
    apply.__name__ = name
    return apply


def i0(x):
    """The modified Bessel function of order 0, in float64 for int64 and float64 inputs, else in floatx."""
    kind = _kind(x)
    return ops.bessel_i0(_as(x, "float64" if kind in ("int64", "float64") else dtype_name(float_dtype())))


def _constant(value, like: Tensor) -> Tensor:
    """A number (a Python one, or a program's literal as the call gives it) in ``like``'s dtype."""
    return Tensor(np.asarray(getattr(value, "value", value), like.dtype))


def cbrt(x):
    kind = _kind(x)
    t = _as(x, "float64" if kind in ("int64", "float64") else dtype_name(float_dtype()))
    return ops.mul(ops.sign(t), ops.pow_(ops.abs_(t), _constant(1.0 / 3.0, t)))


def deg2rad(x):
    t = _as(x, _widened(_kind(x)))
    return ops.mul(t, ops.div(_constant(math.pi, t), _constant(180.0, t)))


def rad2deg(x):
    t = _as(x, _widened(_kind(x)))
    return ops.mul(t, ops.div(_constant(180.0, t), _constant(math.pi, t)))


def _float_if_int(x) -> Tensor:
    """exp2/fabs: an int or bool tensor in floatx, a float one as it is."""
    t = _tensor(x)
    return t if t.dtype.kind == "f" else ops.cast(t, float_dtype())


def exp2(x):
    t = _float_if_int(x)
    return ops.pow_(_constant(2.0, t), t)


def fabs(x):
    return ops.abs_(_float_if_int(x))


def _pair(x1, x2, *extra):
    dtype = result_type(_kind(x1), _kind(x2), *extra)
    return _as(x1, dtype), _as(x2, dtype)


def floor_divide(x1, x2):
    return ops.floordiv(*_pair(x1, x2))


def true_divide(x1, x2):
    return ops.div(*_pair(x1, x2, "float"))


def fmod(x1, x2):
    """The remainder with the dividend's sign: sign(x1) * floormod(|x1|, |x2|)."""
    dtype = result_type(_kind(x1), _kind(x2))
    a, b = _as(x1, "int32" if dtype == "bool" else dtype), _as(x2, "int32" if dtype == "bool" else dtype)
    return ops.cast(ops.mul(ops.sign(a), ops.mod(ops.abs_(a), ops.abs_(b))), np.dtype(dtype))


def hypot(x1, x2):
    dtype = _widened(result_type(_kind(x1), _kind(x2)))
    a, b = ops.abs_(_as(x1, dtype)), ops.abs_(_as(x2, dtype))
    high, low = ops.maximum(a, b), ops.minimum(a, b)
    ratio = ops.divide_no_nan(low, high)
    return ops.mul(high, ops.sqrt(ops.add(_constant(1.0, ratio), ops.square(ratio))))


def _log_add_exp(name, scale):
    """logaddexp (scale 1) and logaddexp2 (scale ln 2): max + log1p(exp(-|x1 - x2| * scale)) / scale, and
    x1 + x2 where their difference is NaN (infinities of one sign)."""
    def apply(x1, x2):
        a, b = _pair(x1, x2, "float")
        delta = ops.sub(a, b)
        factor = ops.log(_constant(scale, a))
        tail = ops.log1p(ops.exp(ops.mul(ops.neg(ops.abs_(delta)), factor)))
        if scale != math.e:
            tail = ops.div(tail, factor)
        return ops.where(Tensor(np.isnan(delta.value)), ops.add(a, b), ops.add(ops.maximum(a, b), tail))
    apply.__name__ = name
    return apply


def signbit(x):
    t = _tensor(x)
    return Tensor(np.signbit(ops.cast(t, np.dtype("float32")).value) if t.dtype.kind == "f" else t.value < 0)


def heaviside(x1, x2):
    dtype = _widened(result_type(_kind(x1), _kind(x2)))
    a, b = _as(x1, dtype), _as(x2, dtype)
    zero = _constant(0, a)
    return ops.where(ops.less(a, zero), ops.zeros_like(a), ops.where(ops.greater(a, zero), ops.ones_like(a), b))


def sinc(x):
    t = _as(x, _floating(_kind(x)))
    pi_x = ops.mul(t, _constant(np.pi, t))
    return ops.where(ops.equal(t, _constant(0, t)), ops.ones_like(t), ops.div(ops.sin(pi_x), pi_x))


def isclose(x1, x2, rtol=1e-5, atol=1e-8, equal_nan=False):
    a, b = (t.value for t in _pair(x1, x2))
    if a.dtype.kind != "f":
        return Tensor(np.equal(a, b))
    close = np.abs(a - b) <= (_constant(atol, a).value + _constant(rtol, a).value * np.abs(b))
    return Tensor(close | (np.isnan(a) & np.isnan(b)) if flag(equal_nan) else close)


def _infinity(name, sign):
    def test(x):
        v = _tensor(x).value
        return Tensor(v == sign * np.inf if v.dtype.kind == "f" else np.zeros(v.shape, bool))
    test.__name__ = name
    return test


def isreal(x):
    return Tensor(np.ones(_tensor(x).shape, bool))


def nan_to_num(x, nan=0.0, posinf=None, neginf=None):
    """NaN to ``nan``, infinities to ``posinf``/``neginf`` (the dtype's largest/lowest by default); ints as given."""
    t = _tensor(x)
    if t.dtype.kind != "f":
        return t
    info = np.finfo(t.dtype)
    v = t.value
    for mask, value in ((np.isnan(v), nan), (np.isposinf(v), info.max if posinf is None else posinf),
                        (np.isneginf(v), info.min if neginf is None else neginf)):
        t = ops.where(Tensor(mask), ops.broadcast_to(_constant(value, t), t.shape), t)
    return t


def _nan_extreme(name, op):
    """fmax/fmin: the larger (smaller) element, the other where one of them is NaN."""
    def apply(x1, x2):
        a, b = _pair(x1, x2)
        out = op(a, b)
        if a.dtype.kind != "f":
            return out
        nan_a, nan_b = np.isnan(a.value), np.isnan(b.value)
        out = ops.where(Tensor(nan_a & ~nan_b), ops.broadcast_to(b, out.shape), out)
        return ops.where(Tensor(nan_b & ~nan_a), ops.broadcast_to(a, out.shape), out)
    apply.__name__ = name
    return apply


def ldexp(x1, x2):
    kind = _kind(x2)
    if kind not in ("int", "int32", "int64"):
        raise TdfTypeError(f"ldexp exponent must be an integer type. Received: x2 dtype={kind}")
    dtype = result_type(_kind(x1), kind, "float")
    a = _as(x1, dtype)
    scaled = ops.mul(a, ops.pow_(_constant(2.0, a), _as(x2, dtype)))
    return ops.where(Tensor(np.isinf(a.value) | (a.value == 0)), ops.broadcast_to(a, scaled.shape), scaled)


def _integers(name, x1, x2):
    a, b = (t.value for t in _pair(x1, x2))
    if a.dtype.kind not in "iu":
        raise TdfTypeError(f"Arguments to {name} must be integers.")
    return a, b


def gcd(x1, x2):
    return Tensor(np.gcd(*_integers("gcd", x1, x2)))


def lcm(x1, x2):
    return Tensor(np.lcm(*_integers("lcm", x1, x2)))


def _bitwise(name, fn):
    """The bitwise functions of integer (and bool) tensors, in their result_type."""
    def apply(x, y):
        a, b = (t.value for t in _pair(x, y))
        return Tensor(np.asarray(fn(a, b), a.dtype))
    apply.__name__ = name
    return apply


def bitwise_invert(x):
    return Tensor(np.invert(_tensor(x).value))


def real(x):
    return _tensor(x)


def imag(x):
    return ops.zeros_like(_tensor(x))


def angle(x):
    """A real number's angle: pi where it is negative, else 0."""
    t = _as(x, _floating(_kind(x)))
    return ops.where(ops.less(t, _constant(0, t)), ops.broadcast_to(_constant(np.pi, t), t.shape), ops.zeros_like(t))


_BITWISE = {"bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor,
            "bitwise_left_shift": np.left_shift, "bitwise_right_shift": np.right_shift,
            "left_shift": np.left_shift, "right_shift": np.right_shift}
FUNCTIONS = {f"ops.{f.__name__}": f for f in (
    cbrt, deg2rad, rad2deg, exp2, fabs, floor_divide, true_divide, fmod, hypot, signbit, heaviside, sinc, isclose,
    isreal, nan_to_num, ldexp, i0, gcd, lcm, bitwise_invert, real, imag, angle,
    _unary("arccos", ops.acos), _unary("arcsin", ops.asin), _unary("arctan", ops.atan),
    _unary("arccosh", ops.acosh), _unary("arcsinh", ops.asinh), _unary("arctanh", ops.atanh),
    _log_add_exp("logaddexp", math.e), _log_add_exp("logaddexp2", 2.0),
    _infinity("isneginf", -1), _infinity("isposinf", 1),
    _nan_extreme("fmax", ops.maximum), _nan_extreme("fmin", ops.minimum),
    *(_bitwise(name, fn) for name, fn in _BITWISE.items()))}
FUNCTIONS.update({"ops.arctan2": lambda x1, x2: ops.atan2(*_pair(x1, x2, "float")),
                  "ops.bitwise_not": bitwise_invert, "ops.conj": real, "ops.conjugate": real})
