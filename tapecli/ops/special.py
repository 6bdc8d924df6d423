"""Special functions of tf.math: erfinv, ndtri, erfcinv, the modified Bessel functions i0, i0e, i1, i1e,
and the incomplete gamma and beta integrals igamma, igammac, betainc. Kernels in float64 (a
refined normal quantile, erfinv through it as Eigen computes it; series and asymptotic expansions for the Bessel
functions), rounded to the input's dtype, and TensorFlow's own for the incomplete integrals (kernels/tf_igamma.py);
derivatives are TensorFlow's gradient formulas."""
from __future__ import annotations

import math

from tapecli import kernels
from tapecli.ops.core import _elementwise, _ew_jvp, _unary, apply, register
from tapecli.ops.elementwise_math import _vectorized
from tapecli.runtime.values import Tensor
from tapecli.lazymodule import LazyModule

tf_igamma = LazyModule("tapecli.kernels.tf_igamma", globals())     # (TensorFlow's incomplete integrals: on first use)


def _igamma_kernel(name: str):
    def kernel(*args):
        return getattr(tf_igamma, name)(*args)
    kernel.__name__ = name
    return kernel

_SQRT2 = math.sqrt(2.0)
_SQRT_PI_OVER_2 = math.sqrt(math.pi) / 2
_SQRT_2PI = math.sqrt(2 * math.pi)

# Acklam's rational approximation of the normal quantile (relative error 1e-9), refined below
_A = (-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02, 1.383577518672690e+02,
      -3.066479806614716e+01, 2.506628277459239e+00)
_B = (-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02, 6.680131188771972e+01,
      -1.328068155288572e+01, 1.0)
_C = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00, -2.549732539343734e+00,
      4.374664141464968e+00, 2.938163982698783e+00)
_D = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00, 1.0)


def _poly(coeffs, x):
    out = 0.0
    for c in coeffs:
        out = out * x + c
    return out


def _ndtri_scalar(p: float) -> float:
    """The standard normal quantile: Acklam's approximation, then Halley steps on erfc (precise in the tail)."""
    if not 0 < p < 1:
        return -math.inf if p == 0 else math.inf if p == 1 else math.nan
    if p > 0.5:
        return -_ndtri_scalar(1.0 - p)
    if p < 0.02425:
        q = math.sqrt(-2 * math.log(p))
        x = _poly(_C, q) / _poly(_D, q)
    else:
        q = p - 0.5
        x = q * _poly(_A, q * q) / _poly(_B, q * q)
    for _ in range(2):
        e = 0.5 * math.erfc(-x / _SQRT2) - p
        u = e * _SQRT_2PI * math.exp(x * x / 2)
        x = x - u / (1 + x * u / 2)
    return x


def _erfinv(x):
    """TensorFlow's (Eigen's) erfinv: ndtri((x + 1) / 2) / sqrt(2), the argument rounded to x's dtype."""
    half, one = x.dtype.type(0.5), x.dtype.type(1)
    p = (half * (x + one)).astype(x.dtype)
    return (_NDTRI(p) * x.dtype.type(1 / _SQRT2)).astype(x.dtype)


def _erfcinv_scalar(x: float) -> float:
    return -_ndtri_scalar(x / 2) / _SQRT2


def _bessel_scaled(order: int, x: float) -> float:
    """exp(-|x|) I_order(x): the power series up to |x| = 50, the asymptotic expansion beyond."""
    ax = abs(x)
    if ax <= 50:
        term = (ax / 2) ** order / math.factorial(order)
        total, k = term, 0
        while term > total * 1e-17:
            k += 1
            term *= (ax / 2) ** 2 / (k * (k + order))
            total += term
        value = total * math.exp(-ax)
    else:
        mu, term, total = 4.0 * order * order, 1.0, 1.0
        for k in range(1, 30):
            term *= -(mu - (2 * k - 1) ** 2) / (k * 8 * ax)
            total += term
        value = total / math.sqrt(2 * math.pi * ax)
    return -value if order % 2 and x < 0 else value


def _bessel(order, scaled):
    def f(x):
        if math.isnan(x):
            return math.nan
        if math.isinf(x):
            return 0.0 if scaled else (math.inf if order == 0 or x > 0 else -math.inf)
        value = _bessel_scaled(order, x)
        if scaled:
            return value
        ax = abs(x)
        return value * math.exp(ax) if ax < 700 else math.copysign(math.inf, value)
    f.__name__ = f"bessel_i{order}{'e' if scaled else ''}"
    return _vectorized(f)


_NDTRI = _vectorized(_ndtri_scalar)
ERFINV = _unary("erfinv", numpy=_erfinv, saves=("out",),
                deriv=lambda m, x, y, at: m.mul(_SQRT_PI_OVER_2, m.exp(m.square(y))))
NDTRI = _unary("ndtri", numpy=_NDTRI, saves=("out",),
               deriv=lambda m, x, y, at: m.mul(_SQRT_2PI, m.exp(m.mul(0.5, m.square(y)))))
ERFCINV = _unary("erfcinv", numpy=_vectorized(_erfcinv_scalar), saves=("out",),
                 deriv=lambda m, x, y, at: m.mul(-_SQRT_PI_OVER_2, m.exp(m.square(y))))
# TensorFlow imputes 1.0 for i1's derivative at 0 (and 0.5 for i1e's)
BESSEL_I1 = _unary("bessel_i1", numpy=_bessel(1, False), saves=(0, "out"),
                   deriv=lambda m, x, y, at: m.where(m.equal(x, 0), m.ones_like(x), m.sub(
                       m.bessel_i0(x), m.div(y, m.where(m.equal(x, 0), m.ones_like(x), x)))))
BESSEL_I0 = _unary("bessel_i0", numpy=_bessel(0, False), deriv=lambda m, x, y, at: m.bessel_i1(x))
BESSEL_I1E = _unary("bessel_i1e", numpy=_bessel(1, True), saves=(0, "out"),
                    deriv=lambda m, x, y, at: m.where(m.equal(x, 0), m.add(m.zeros_like(x), 0.5), m.sub(
                        m.bessel_i0e(x), m.mul(y, m.add(m.sign(x), m.reciprocal(
                            m.where(m.equal(x, 0), m.ones_like(x), x)))))))
BESSEL_I0E = _unary("bessel_i0e", numpy=_bessel(0, True), saves=(0, "out"),
                    deriv=lambda m, x, y, at: m.sub(m.bessel_i1e(x), m.mul(m.sign(x), y)))


# IgammaGradA, d igamma(a, x) / da: TensorFlow registers no gradient for it (a second derivative through it is
# its LookupError)
IGAMMA_GRAD_A = register("igamma_grad_a", numpy=_igamma_kernel("igamma_grad_a"), float_only=True)


def igamma_grad_a(a, x): return apply(IGAMMA_GRAD_A, (a, x))


def _igamma_partial_x(m, a, x):
    """_IgammaGrad's d igamma(a, x) / dx, in logarithms: exp(-x + (a - 1) log(x) - lgamma(a))."""
    return m.exp(m.sub(m.add(m.neg(x), m.mul(m.sub(a, 1), m.log(x))), m.lgamma(a)))


def _x_log(m, x, y, log):
    """TensorFlow's xlogy (``log`` m.log) and xlog1py (m.log1p) as library/tf_math.py writes them: x log(y), 0
    where x is 0 (y read as 1 there)."""
    zero = m.equal(x, 0)
    out = m.mul(x, log(m.where(zero, m.ones_like(y), y)))
    return m.where(zero, m.zeros_like(out), out)


def _betainc_partial_x(m, a, b, x):
    """_BetaincGrad's d betainc(a, b, x) / dx: exp(xlog1py(b - 1, -x) + xlogy(a - 1, x) - log_beta), log_beta =
    lgamma(a) + lgamma(b) - lgamma(a + b)."""
    log_beta = m.sub(m.add(m.lgamma(a), m.lgamma(b)), m.lgamma(m.add(a, b)))
    return m.exp(m.sub(m.add(_x_log(m, m.sub(b, 1), m.neg(x), m.log1p), _x_log(m, m.sub(a, 1), x, m.log)), log_beta))


# The builtins convert their arguments as TensorFlow's ops do (library/tf_math.py); TensorFlow's gradients:
# igammac's are igamma's negated, betainc's is x's alone (None for a and b)
IGAMMA = _elementwise("igamma", (lambda m, g, a, x, y, at: m.mul(m.igamma_grad_a(a, x), g),
                                 lambda m, g, a, x, y, at: m.mul(_igamma_partial_x(m, a, x), g)), (0, 1),
                      numpy=_igamma_kernel("igamma"), float_only=True)
IGAMMAC = _elementwise("igammac", (lambda m, g, a, x, y, at: m.neg(m.mul(m.igamma_grad_a(a, x), g)),
                                   lambda m, g, a, x, y, at: m.neg(m.mul(_igamma_partial_x(m, a, x), g))), (0, 1),
                       numpy=_igamma_kernel("igammac"), float_only=True)


def _betainc_jvp(r, ts):
    """x's tangent through its formula; where only a's or b's reach the op, zeros (TensorFlow's forward mode gives
    them for an input whose gradient is None)."""
    out = _ew_jvp(r, ts)
    if out is None:
        t, i = next((t, i) for i, t in enumerate(ts) if t is not None)
        out = Tensor(kernels.zeros(t.shape[:t.ndim - r.inputs[i].ndim] + r.output.shape, r.output.dtype))
    return out


BETAINC = _elementwise("betainc", (None, None, lambda m, g, a, b, x, y, at: m.mul(_betainc_partial_x(m, a, b, x), g)),
                       (0, 1, 2), numpy=_igamma_kernel("betainc"), float_only=True)
BETAINC.jvp = _betainc_jvp


def igamma(a, x): return apply(IGAMMA, (a, x))
def igammac(a, x): return apply(IGAMMAC, (a, x))
def betainc(a, b, x): return apply(BETAINC, (a, b, x))
