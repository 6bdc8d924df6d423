"""More elementwise math (tf.math): hyperbolic and inverse trigonometric functions, atan2,
squared_difference, softsign, selu, relu6, erfc and the gamma family. One entry per op: kernel,
derivative (TensorFlow's gradient formula), builtin name, fusion template where Numba has one."""
from __future__ import annotations

import math

import numpy as np

from tapecli.kernels import tf_erfc, tf_float32
from tapecli.lazymodule import LazyModule
from tapecli.errors import TdfValueError
from tapecli.ops import remapper
from tapecli.ops.core import _elementwise, _unary, apply, materialize, register, to_tensor
from tapecli.ops.elementwise import add, mul, neg, pow_, tanh
from tapecli.runtime.context import current
from tapecli.runtime.values import dtype_name, is_float, Tensor

_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
tf_igamma = LazyModule("tapecli.kernels.tf_igamma", globals())     # (lgamma's and digamma's kernels: on first use)
tf_onednn_eltwise = LazyModule("tapecli.kernels.tf_onednn_eltwise", globals())     # (fused activations: remapper.py)

# -------------------------------------------------------------- NumPy kernels

def _vectorized(f):
    v = np.vectorize(f, otypes=[np.float64])

    def run(x):
        return np.asarray(v(x), dtype=x.dtype if x.dtype.kind == "f" else np.float64)
    run.__name__ = f.__name__
    return run


def _trigamma64(x):
    """psi'(x) in float64: the reflection formula below 1/2, the recurrence up to 10, then the asymptotic series."""
    x = np.asarray(x, dtype=np.float64)
    pole = (x <= 0) & (x == np.floor(x))
    reflect = x < 0.5
    z = np.where(reflect, 1 - x, x)
    acc = np.zeros_like(z)
    for _ in range(10):
        small = z < 10
        acc = acc + np.where(small, 1 / np.where(small, z * z, 1), 0)
        z = np.where(small, z + 1, z)
    r = 1 / (z * z)
    series = 1 / z + r / 2 + (1 / z) * r * (1 / 6 - r * (1 / 30 - r * (1 / 42 - r * (1 / 30 - r * (5 / 66)))))
    psi1 = acc + series
    with np.errstate(all="ignore"):
        psi1 = np.where(reflect, (np.pi / np.sin(np.pi * x)) ** 2 - psi1, psi1)
    return np.where(pole, np.nan, psi1)


def _float_kernel(f64):
    def run(x):
        return np.asarray(f64(x)).astype(x.dtype if x.dtype.kind == "f" else np.float64)
    run.__name__ = f64.__name__
    return run


def _selu(x):
    """TensorFlow's Selu functor: ``x < 0 ? scale_alpha * (exp(x) - 1) : scale * x`` in x's dtype."""
    if (y := tf_float32.selu(x)) is not None:       # (Eigen's exp: TensorFlow's bits)
        return y
    t = x.dtype.type
    return np.where(x < 0, t(tf_float32.SELU_SCALE_ALPHA) * (np.exp(np.minimum(x, 0)) - t(1)),
                    t(tf_float32.SELU_SCALE) * x).astype(x.dtype, copy=False)


def _relu6(x):
    return np.minimum(np.maximum(x, 0), 6).astype(x.dtype)


# ------------------------------------------------------------------ the entries

SINH = _unary("sinh", numpy=np.sinh, deriv=lambda m, x, y, at: m.cosh(x), fusion="math.sinh({0})")
COSH = _unary("cosh", numpy=np.cosh, deriv=lambda m, x, y, at: m.sinh(x), fusion="math.cosh({0})")
# TensorFlow: asin' = rsqrt(1 - x^2), acos' = -rsqrt(1 - x^2), atan' = 1 / (1 + x^2)
ASIN = _unary("asin", numpy=np.arcsin, deriv=lambda m, x, y, at: m.rsqrt(m.sub(1, m.square(x))),
              fusion="math.asin({0})")
ACOS = _unary("acos", numpy=np.arccos, deriv=lambda m, x, y, at: m.neg(m.rsqrt(m.sub(1, m.square(x)))),
              fusion="math.acos({0})")
ATAN = _unary("atan", numpy=tf_float32.atan, deriv=lambda m, x, y, at: m.reciprocal(m.add(1, m.square(x))),
              fusion="math.atan({0})")
# TensorFlow: asinh' = 1 / cosh(y), acosh' = 1 / sinh(y) (from the output), atanh' = 1 / (1 - x^2)
ASINH = _unary("asinh", numpy=np.arcsinh, deriv=lambda m, x, y, at: m.reciprocal(m.cosh(y)), saves=("out",),
               fusion="math.asinh({0})")
ACOSH = _unary("acosh", numpy=np.arccosh, deriv=lambda m, x, y, at: m.reciprocal(m.sinh(y)), saves=("out",),
               fusion="math.acosh({0})")
ATANH = _unary("atanh", numpy=np.arctanh, deriv=lambda m, x, y, at: m.reciprocal(m.sub(1, m.square(x))),
               fusion="math.atanh({0})")
# TensorFlow's _ErfcGrad: (grad * -2/sqrt(pi)) * exp(-x^2), in that order
ERFC = _unary("erfc", numpy=tf_erfc.erfc, fusion="math.erfc({0})",
              grads=(lambda m, g, x, y, at: m.mul(m.mul(g, -_TWO_OVER_SQRT_PI), m.exp(m.neg(m.square(x)))),))
TRIGAMMA = register("trigamma", numpy=_float_kernel(_trigamma64), float_only=True, differentiable=False)
DIGAMMA = _unary("digamma", numpy=lambda x: tf_igamma.digamma(x), deriv=lambda m, x, y, at: m.trigamma(x))
LGAMMA = _unary("lgamma", numpy=lambda x: tf_igamma.lgamma(x), deriv=lambda m, x, y, at: m.digamma(x))
# TensorFlow's SoftsignGrad: g / (|x| + 1)^2
SOFTSIGN = _unary("softsign", grads=(lambda m, g, x, y, at: m.div(g, m.square(m.add(m.abs_(x), 1))),),
                  fusion="({0} / (_F(1.0) + abs({0})))")
# SeluGrad reads the output: y + scale_alpha where y < 0, else scale (at 0 too)
SELU = _unary("selu", numpy=_selu, saves=("out",),
              deriv=lambda m, x, y, at: m.where(m.less(y, 0), m.add(y, tf_float32.SELU_SCALE_ALPHA),
                                                m.mul(m.ones_like(y), tf_float32.SELU_SCALE)))


# oneDNN's gelu_erf (fused into a MatMul) in a tf.function: ops/remapper.py. It is taken where no tape records: it
# needs no gradient.
remapper.fused("gelu", register("onednn_gelu", numpy=lambda x: tf_onednn_eltwise.gelu_erf(x), differentiable=False),
               lambda: tf_onednn_eltwise.gelu_erf_known())
# Relu6Grad passes the gradient where 0 < x < 6 (0 at both kinks)
RELU6 = _unary("relu6", numpy=_relu6,
               deriv=lambda m, x, y, at: m.where(m.logical_and(m.greater(x, 0), m.less(x, 6)), m.ones_like(x),
                                                 m.zeros_like(x)))
ATAN2 = _elementwise("atan2", (
    lambda m, g, a, b, y, at: m.mul(g, m.div(b, m.add(m.square(a), m.square(b)))),
    lambda m, g, a, b, y, at: m.mul(g, m.neg(m.div(a, m.add(m.square(a), m.square(b)))))), (0, 1),
    numpy=np.arctan2, float_only=True, program=("atan2",), fusion="math.atan2({0}, {1})")


def atan2(y, x):
    """The angle of the point (x, y): tf.atan2's parameters, ``y`` first."""
    return apply(ATAN2, (y, x))


SQUARED_DIFFERENCE = _elementwise("squared_difference", (
    lambda m, g, a, b, y, at: m.mul(g, m.mul(2, m.sub(a, b))),
    lambda m, g, a, b, y, at: m.mul(g, m.mul(-2, m.sub(a, b)))), (0, 1),
    numpy=lambda a, b: np.square(np.subtract(a, b)), program=("squared_difference",),
    fusion="(({0} - {1}) * ({0} - {1}))")


def trigamma(x): return apply(TRIGAMMA, (x,))


def _cast_constant(value: float, dtype) -> Tensor:
    """TensorFlow's ``math_ops.cast(value, dtype)`` of a Python float: a float32 constant, then cast."""
    return Tensor(np.asarray(np.float32(value)).astype(dtype))


def gelu(x, approximate=False):
    """tf.nn.gelu as TensorFlow writes it, a composition of its ops (so its values and its gradients, of any
    order, are theirs): 0.5 x erfc(-x / sqrt(2)), or 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))."""
    x = to_tensor(x)
    if x.weak:
        x = materialize(x)
    if not is_float(x.dtype):
        raise TdfValueError("`features.dtype` must be a floating point tensor."      # (TensorFlow's words)
                            f"Received:features.dtype=<dtype: '{dtype_name(x.dtype)}'>")
    if not approximate and not remapper.taped(current()) and (fused := remapper.fused_for("gelu", x, after_bias_add=True)):
        return apply(fused, (x,))
    if approximate:
        cube = mul(_cast_constant(0.044715, x.dtype), pow_(x, 3))
        return mul(mul(0.5, x), add(1.0, tanh(mul(0.7978845608028654, add(x, cube)))))
    return mul(mul(0.5, x), apply(ERFC, (mul(neg(x), _cast_constant(0.7071067811865476, x.dtype)),)))
