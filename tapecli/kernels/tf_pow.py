"""TensorFlow's float32 pow on Eigen's packets: Eigen's ``generic_pow`` (GenericPacketMathFunctions.h), in NumPy.

TensorFlow's CPU Pow kernel is Eigen's ``scalar_pow_op``: on packets of 8 floats its ``packetOp``,
``generic_pow``, on the last ``size % 8`` elements the C library's ``powf`` (tf_float32.py). A broadcast scalar
exponent (``x ** 2.0``) takes the same packet function, on the scalar set in every lane.

``generic_pow`` computes ``x^y = 2^(y log2 x)`` for ``|x|`` in double-word arithmetic (a float32 pair hi + lo):
``log2`` of the mantissa by ``accurate_log2<float>`` (a degree-8 polynomial in float32, its last two Horner steps
in double words), ``y log2 x`` as ``twoprod(e, y) + twoprod(log2 m, y)``, split into an integer ``n`` and
``r`` in [-1/2, 1/2], ``2^r`` by ``generic_exp2`` (``pexp_float(hi) (1 + lo)`` of ``twoprod(ln 2, r)``) and
scaled by ``2^n``; then C's special cases (zeros, infinities, nan, negative bases, ``y`` = 0 or 1 ...) by
selects. Each float32 step is rounded as Eigen's are without FMA (the pip wheel's build): a multiply-add is
a product and a sum. Two steps are computed another way with the same bits: ``twoprod`` (Dekker's product,
Veltkamp's splitting: ``hi = fl(a b)``, ``lo = a b - hi`` exactly) from the float64 product, exact for two
floats; and ``pexp_float``'s ``2^m`` (``m`` in -1..1 on these arguments) folded into ``n``, an exact
scaling. TensorFlow runs with denormals flushed (DAZ and FTZ): a subnormal argument reads as a zero of its
sign (but ``y = 1`` selects ``x`` itself), a subnormal result is a zero.
"""
from __future__ import annotations

import numpy as np

_F32 = np.float32
_F64 = np.float64


def _c(v):
    return np.array(v, dtype=_F32)


_TINY = _c(np.finfo(np.float32).tiny)
_ZERO, _HALF, _ONE = _c(0.0), _c(0.5), _c(1.0)
_INF, _NAN = _c(np.inf), _c(np.nan)
_SQRT_HALF = _c(0.70710678118654752440)
# pround's addend: the float below 1/2 (Eigen's AVX pround: trunc(a + copysign(0x1.fffffep-2, a)))
_BELOW_HALF = np.array(0x3EFFFFFF, np.uint32).view(_F32)

# accurate_log2<float>: log2(1 + x) / x on [sqrt(1/2) - 1, sqrt(2) - 1], a minimax polynomial whose two
# lowest coefficients are double words (their float and the float of the rest)
_LOG2_POLY = tuple(_c(v) for v in (
    9.7010828554630279541015625e-02, -1.6896486282348632812500000e-01, 1.7200836539268493652343750e-01,
    -1.7892272770404815673828125e-01, 2.0505344867706298828125000e-01, -2.4046677350997924804687500e-01,
    2.8857553005218505859375000e-01, -3.6067414283752441406250000e-01, 4.8089790344238281250000000e-01))


def _double_word(v: float) -> tuple:
    hi = _F32(v)
    return _c(hi), _c(v - float(hi))


_C0 = _double_word(1.442695041742110273474963832995854318141937255859375)
_C1 = _double_word(-7.2134751588268664068692714863573201000690460205078125e-01)

_LN2_64 = np.array(_F32(0.693147180559945309417232121458176568), _F64)    # (Eigen's float EIGEN_LN2)
# pldexp's clamp of the exponent: beyond it any float times 2^n is 0 or inf
_LDEXP_LIMIT = _c(278.0)
# |y| from which x^y is 0 or inf but for |x| = 1: 128 ln 2 / float32 epsilon, as Eigen computes it in float
_HUGE = _F32(_F32(128 * _F32(0.693147180559945309417232121458176568)) / _F32(np.finfo(np.float32).eps))

# pexp_float's constants, tf_float32.py's too (that module imports this one; its exp takes every argument, this
# one only generic_exp2's, where pexp_float's clamps do not bind)
LOG2EF = _c(1.44269504088896341)
EXP_C1, EXP_C2 = _c(-0.693359375), _c(2.12194440e-4)
EXP_POLYNOMIAL = _P2, _P3, _P4, _P5, _P6 = tuple(_c(v) for v in (
    0.49999988079071044921875, 0.16666518151760101318359375, 4.166965186595916748046875e-2,
    8.36894474923610687255859375e-3, 1.37449637986719608306884765625e-3))


def _split_product(p):
    """twoprod's pair from the product p = a b in float64 (exact for two floats): hi = fl(a b) and lo = a b - hi,
    as Dekker's product (Veltkamp's splitting, without FMA) gives them exactly barring overflow and underflow,
    where the results are selected away or are 1 whatever lo is."""
    hi = p.astype(_F32)
    p -= hi
    return hi, p.astype(_F32)


def _fast_two_sum(a, b):
    """fast_twosum: hi = fl(a + b), lo = b - (hi - a), the sum's error where |a| >= |b|."""
    hi = a + b
    lo = hi - a
    np.subtract(b, lo, out=lo)
    return hi, lo


def _add_double_words(a_hi, a_lo, b_hi, b_lo):
    """fast_twosum of double words: (a_hi + b_hi) split, its error plus b_lo plus a_lo (two roundings), split."""
    hi, lo = _fast_two_sum(a_hi, b_hi)
    lo += b_lo
    lo += a_lo
    return _fast_two_sum(hi, lo)


def _multiply_double_word(a_hi, a_lo, b, b64):
    """twoprod of a double word and a float (Muller's algorithm 7; b64: b in float64): twoprod(a_hi, b) =
    c_hi + c_lo1, c_hi + fl(a_lo b) split, its low part plus c_lo1 (rounded), split."""
    p = a_hi.astype(_F64)
    p *= b64
    c_hi, c_lo1 = _split_product(p)
    t_hi, t_lo = _fast_two_sum(c_hi, a_lo * b)
    t_lo += c_lo1
    return _fast_two_sum(t_hi, t_lo)


def _log2(m):
    """accurate_log2<float> of m in [sqrt(1/2), sqrt(2)), a double word: x = m - 1, p(x) in float32 by Horner,
    then ((p x + c1) x + c0) x in double words."""
    x = m - _ONE
    x64 = x.astype(_F64)
    p = x * _LOG2_POLY[0]
    for c in _LOG2_POLY[1:-1]:
        p += c
        p *= x
    p += _LOG2_POLY[-1]
    p64 = p.astype(_F64)
    p64 *= x64
    hi, lo = _add_double_words(*_C1, *_split_product(p64))
    hi, lo = _multiply_double_word(hi, lo, x, x64)
    hi, lo = _add_double_words(*_C0, hi, lo)
    return _multiply_double_word(hi, lo, x, x64)


def _pround(a):
    """Eigen's AVX pround: trunc(a + copysign(the float below 1/2, a)), the sum rounded."""
    n = np.copysign(_BELOW_HALF, a)
    n += a
    return np.trunc(n, out=n)


def _pow_positive(x, y):
    """generic_pow_impl on |x| (its value where x is positive, normal and finite and y finite; the special cases'
    selects replace the others'): x = m 2^e with m in [sqrt(1/2), sqrt(2)), f = e y + log2(m) y in double
    words, f = n + r with n an integer and r in [-1/2, 1/2] (pround twice), 2^r = pexp(hi) (1 + lo) with
    twoprod(ln 2, r) = hi + lo, times 2^n (flushed below the smallest normal)."""
    m, e = np.frexp(x)
    below = m < _SQRT_HALF
    m += m * below
    e -= below
    l_hi, l_lo = _log2(m)
    y64 = y.astype(_F64)
    e64 = e.astype(_F64)
    e64 *= y64
    l_hi, l_lo = _multiply_double_word(l_hi, l_lo, y, y64)
    f_hi, f_lo = _add_double_words(*_split_product(e64), l_hi, l_lo)
    n = _pround(f_hi)
    f_hi -= n
    f_hi += f_lo
    r_n = _pround(f_hi)
    f_hi -= r_n
    n += r_n
    # generic_exp2(r): pexp_float of hi, whose m = floor(hi log2(e) + 1/2) is 0 here but where |r| is about 1/2
    # (-1 or 1: r is reduced by m ln 2 and 2^m goes into n)
    r64 = f_hi.astype(_F64)
    r64 *= _LN2_64
    r, lo = _split_product(r64)
    m = r * LOG2EF
    m += _HALF
    np.floor(m, out=m)
    if m.any():
        n += m
        t = m * EXP_C1
        r += t
        m *= EXP_C2
        r += m
    r2 = r * r
    p_even = r2 * _P6
    p_even += _P4
    p_even *= r2
    p_even += _P2
    p_odd = r2 * _P5
    p_odd += _P3
    p_odd *= r
    p_odd += p_even
    p_odd *= r2
    r += _ONE
    p_odd += r
    lo += _ONE
    p_odd *= lo
    # pldexp by n (one rounding, of a subnormal result only: FTZ flushes it), n clamped as pldexp clamps it
    np.minimum(n, _LDEXP_LIMIT, out=n)
    np.maximum(n, -_LDEXP_LIMIT, out=n)
    y = np.ldexp(p_odd, n.astype(np.int32))
    y *= y >= _TINY
    return y


def _select_special_cases(x0, y0, p):
    """generic_pow's selects for C's special cases, in its order, on every lane (where some lane may need one)."""
    x = x0 * (np.abs(x0) >= _TINY)              # (DAZ: a subnormal reads as a zero of its sign)
    y = y0 * (np.abs(y0) >= _TINY)
    x_abs, y_abs = np.abs(x), np.abs(y)
    x_negative, x_zero, y_negative = x < _ZERO, x == _ZERO, y < _ZERO
    y_int = (np.floor(y) == y) & (y_abs != _INF)
    half = y * _HALF
    y_odd = y_int & (_pround(half) != half)
    np.copyto(p, _NAN, where=x_negative & ~y_int)
    np.copyto(p, np.where(y_negative, _INF, _ZERO), where=x_zero)
    np.negative(p, out=p, where=np.signbit(x) & y_odd)
    huge = np.where((y_negative & x_zero) | (y_negative ^ (x_abs > _ONE)), _INF, _ZERO)
    np.copyto(huge, _ONE, where=x == -_ONE)
    np.copyto(p, huge, where=y_abs >= _HUGE)
    positive_inf = np.where(y_negative, _ZERO, _INF)
    negative_inf = np.where(y_odd, -positive_inf, positive_inf)
    np.copyto(p, np.where(x_negative, negative_inf, positive_inf), where=x_abs == _INF)
    np.copyto(p, _NAN, where=np.isnan(x) | np.isnan(y))
    np.copyto(p, _ONE, where=(x == _ONE) | (y == _ZERO))
    np.copyto(p, x0, where=y == _ONE)
    return p


def _select_for_an_exponent(x, y: float, p, lowest, highest):
    """The same selects for one finite exponent y (|y| from the smallest normal float to _HUGE, not 1), on x's
    lanes that are not positive, normal and finite (``lowest`` and ``highest``: x's least and greatest)."""
    y_int = y.is_integer()
    y_odd = y_int and abs(y) < 2.0 ** 24 and int(y) % 2 == 1
    if not y_int:
        np.copyto(p, _NAN, where=x <= -_TINY)
    np.copyto(p, _INF if y < 0 else _ZERO, where=np.abs(x) < _TINY)
    if y_odd:
        np.negative(p, out=p, where=np.signbit(x))
    if not -np.inf < lowest <= highest < np.inf:          # (an infinity, or a nan: either may be there)
        value = _ZERO if y < 0 else _INF
        np.copyto(p, value, where=x == _INF)
        np.copyto(p, -value if y_odd else value, where=x == -_INF)
    if lowest != lowest:
        np.copyto(p, _NAN, where=np.isnan(x))
    return p


def pow_packets(x, y):
    """generic_pow on float32 ``x`` (1-D, a multiple of 8 elements) and ``y`` (the same size, or one element:
    a broadcast exponent)."""
    if y.size == 1:
        exponent = float(y[0])
        if exponent == 1.0:                     # (the selects' last: x itself, a nan or a subnormal too)
            return x.copy()
        if abs(exponent) < _TINY:
            return np.ones_like(x)
        if exponent != exponent:
            return np.where(x == _ONE, _ONE, _NAN)
    p = _pow_positive(np.abs(x), y)
    lowest, highest = float(x.min()), float(x.max())
    if y.size == 1 and abs(exponent) < _HUGE:
        if lowest >= _TINY and highest < np.inf:         # (a nan fails the comparisons)
            return p
        return _select_for_an_exponent(x, exponent, p, lowest, highest)
    y_abs = np.abs(y)
    if lowest >= _TINY and highest < np.inf and y_abs.min() >= _TINY and y_abs.max() < _HUGE \
            and not (y == _ONE).any():
        return p
    return _select_special_cases(x, y, p)
