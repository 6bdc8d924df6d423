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
# pround's addend: the float (the double) below 1/2 (Eigen's AVX pround: trunc(a + copysign(0x1.fffffep-2, a)))
_BELOW_HALF = np.array(0x3EFFFFFF, np.uint32).view(_F32)
_BELOW_HALF_64 = np.array(0x3FDFFFFFFFFFFFFF, np.uint64).view(_F64)

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
    n = np.copysign(_BELOW_HALF_64 if a.dtype == _F64 else _BELOW_HALF, a)
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


def _select_special_cases(x0, y0, p, tiny=_TINY, huge=_HUGE):
    """generic_pow's selects for C's special cases, in its order, on every lane (where some lane may need one);
    ``tiny`` and ``huge``: the type's smallest normal and _HUGE."""
    x = x0 * (np.abs(x0) >= tiny)              # (DAZ: a subnormal reads as a zero of its sign)
    y = y0 * (np.abs(y0) >= tiny)
    x_abs, y_abs = np.abs(x), np.abs(y)
    x_negative, x_zero, y_negative = x < _ZERO, x == _ZERO, y < _ZERO
    y_int = (np.floor(y) == y) & (y_abs != _INF)
    half = y * _HALF
    y_odd = y_int & (_pround(half) != half)
    np.copyto(p, _NAN, where=x_negative & ~y_int)
    np.copyto(p, np.where(y_negative, _INF, _ZERO), where=x_zero)
    np.negative(p, out=p, where=np.signbit(x) & y_odd)
    huge_value = np.where((y_negative & x_zero) | (y_negative ^ (x_abs > _ONE)), _INF, _ZERO)
    np.copyto(huge_value, _ONE, where=x == -_ONE)
    np.copyto(p, huge_value, where=y_abs >= huge)
    positive_inf = np.where(y_negative, _ZERO, _INF)
    negative_inf = np.where(y_odd, -positive_inf, positive_inf)
    np.copyto(p, np.where(x_negative, negative_inf, positive_inf), where=x_abs == _INF)
    np.copyto(p, _NAN, where=np.isnan(x) | np.isnan(y))
    np.copyto(p, _ONE, where=(x == _ONE) | (y == _ZERO))
    np.copyto(p, x0, where=y == _ONE)
    return p


def _select_for_an_exponent(x, y: float, p, lowest, highest, tiny=_TINY):
    """The same selects for one finite exponent y (|y| from the smallest normal to _HUGE, not 1), on x's
    lanes that are not positive, normal and finite (``lowest`` and ``highest``: x's least and greatest)."""
    y_int = y.is_integer()
    y_odd = y_int and int(y) % 2 == 1
    if not y_int:
        np.copyto(p, _NAN, where=x <= -tiny)
    np.copyto(p, _INF if y < 0 else _ZERO, where=np.abs(x) < tiny)
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
    """generic_pow on float32 or float64 ``x`` (1-D, a multiple of 8 floats or 4 doubles) and ``y`` (the same
    size, or one element: a broadcast exponent)."""
    double = x.dtype == _F64
    tiny, huge = (_TINY_64, _HUGE_64) if double else (_TINY, _HUGE)
    if y.size == 1:
        exponent = float(y[0])
        if exponent == 1.0:                     # (the selects' last: x itself, a nan or a subnormal too)
            return x.copy()
        if abs(exponent) < tiny:
            return np.ones_like(x)
        if exponent != exponent:
            return np.where(x == _ONE, _ONE, _NAN).astype(x.dtype)
    with np.errstate(all="ignore"):
        p = (_pow_positive_64 if double else _pow_positive)(np.abs(x), y)
    lowest, highest = float(x.min()), float(x.max())
    if y.size == 1 and abs(exponent) < huge:
        if lowest >= tiny and highest < np.inf:         # (a nan fails the comparisons)
            return p
        return _select_for_an_exponent(x, exponent, p, lowest, highest, tiny)
    y_abs = np.abs(y)
    if lowest >= tiny and highest < np.inf and y_abs.min() >= tiny and y_abs.max() < huge \
            and not (y == _ONE).any():
        return p
    return _select_special_cases(x, y, p, tiny, huge)


# ------------------------------------------------------------------ float64: generic_pow on packets of 4 doubles
# The same algorithm on doubles, each step a float64 operation as Eigen's (no FMA: twoprod is Dekker's product
# on Veltkamp's splitting, a pmadd a product and a sum); accurate_log2<double> is a rational transformation
# r = c (x - 1) / (x + 1) and an odd polynomial in r, its low terms in double words, and generic_exp2's pexp is
# pexp_double (Cephes' [2/3] rational interpolant).

_TINY_64 = np.finfo(np.float64).tiny
_HUGE_64 = 1024 * 0.693147180559945309417232121458176568 / np.finfo(np.float64).eps
_SPLITTER_64 = float(2 ** 27 + 1)
_LN2 = 0.693147180559945309417232121458176568
# accurate_log2<double>: Q's coefficients (q12 ... q0), C as a double word, 2 log2(e) as a double word
_LOG2_Q = (2.87074255468000586e-9, 2.38957980901884082e-8, 2.31032094540014656e-7, 2.27279857398537278e-6,
           2.31271023278625638e-5, 2.47556738444535513e-4, 2.88543873228900172e-3)
_LOG2_C = (0.0400377511598501157, -4.77726582251425391e-19)
_TWO_LOG2E = (2.88539008177792677, 4.07660016854549667e-17)
# pexp_double's constants
_EXP64_LOG2EF, _EXP64_C1, _EXP64_C2 = 1.4426950408889634073599, 0.693145751953125, 1.42860682030941723212e-6
_EXP64_P = (1.26177193074810590878e-4, 3.02994407707441961300e-2, 9.99999999999999999910e-1)
_EXP64_Q = (3.00198505138664455042e-6, 2.52448340349684104192e-3, 2.27265548208155028766e-1,
            2.00000000000000000009e0)


def _split_64(x):
    """veltkamp_splitting: x = hi + lo exactly, hi holding half of x's significand."""
    gamma = x * _SPLITTER_64
    hi = (x - gamma) + gamma
    return hi, x - hi


def _twoprod_64(x, y):
    """Dekker's product: hi = fl(x y), lo = x y - hi (pmadd: a product and a sum)."""
    x_hi, x_lo = _split_64(x)
    y_hi, y_lo = _split_64(y)
    hi = x * y
    lo = x_hi * y_hi - hi
    lo = x_hi * y_lo + lo
    lo = x_lo * y_hi + lo
    return hi, x_lo * y_lo + lo


def _times_64(x_hi, x_lo, y):
    """twoprod of a double word and a double (Muller's algorithm 7)."""
    c_hi, c_lo1 = _twoprod_64(x_hi, y)
    t_hi, t_lo1 = _fast_two_sum(c_hi, x_lo * y)
    return _fast_two_sum(t_hi, t_lo1 + c_lo1)


def _times_double_words_64(x_hi, x_lo, y_hi, y_lo):
    """twoprod of two double words: x y_hi + x y_lo, added by fast_twosum."""
    return _add_double_words(*_times_64(x_hi, x_lo, y_hi), *_times_64(x_hi, x_lo, y_lo))


def _divide_64(x_hi, x_lo, y):
    """doubleword_div_fp: a double word over a double (Joldes, Muller and Popescu's algorithm 15)."""
    t_hi = x_hi / y
    pi_hi, pi_lo = _twoprod_64(t_hi, y)
    delta = ((x_hi - pi_hi) - pi_lo) + x_lo
    return _fast_two_sum(t_hi, delta / y)


def _log2_64(m):
    """accurate_log2<double> of m in [sqrt(1/2), sqrt(2)), a double word: r = c (m - 1) / (m + 1) in double
    words, log2(m) = ((Q(r^2) r^2 + C) r^2 + 1) r, Q in doubles (its even and odd halves in r^4)."""
    r_hi, r_lo = _divide_64(*_times_64(*_TWO_LOG2E, m - 1.0), m + 1.0)
    r2_hi, r2_lo = _times_double_words_64(r_hi, r_lo, r_hi, r_lo)
    r4 = _times_double_words_64(r2_hi, r2_lo, r2_hi, r2_lo)[0]
    q12, q10, q8, q6, q4, q2, q0 = _LOG2_Q
    q_even = (q12 * r4 + q8) * r4 + q4
    q_odd = (q10 * r4 + q6) * r4 + q2
    q = q_odd * r2_hi + (q_even * r4 + q0)
    p_hi, p_lo = _add_double_words(*_LOG2_C, *_times_64(r2_hi, r2_lo, q))
    p_hi, p_lo = _times_double_words_64(r2_hi, r2_lo, p_hi, p_lo)
    s_hi, s_lo = _fast_two_sum(np.ones_like(p_hi), p_hi)        # fast_twosum of 1 and a double word
    p_hi, p_lo = _fast_two_sum(s_hi, p_lo + s_lo)
    return _times_double_words_64(p_hi, p_lo, r_hi, r_lo)


def exp_double_packets(x):
    """pexp_double (TensorFlow's float64 exp on Eigen's packets): x = g + n ln 2 (x clamped to 709.784),
    exp(g) = 1 + 2 g P(g^2) / (Q(g^2) - g P(g^2)), times 2^n; the max with x keeps a nan and +inf; below
    -745.519 a zero, as a subnormal result (FTZ)."""
    with np.errstate(all="ignore"):
        clamped = np.minimum(x, 709.784)
        n = np.floor(_EXP64_LOG2EF * clamped + 0.5)
        g = (clamped - n * _EXP64_C1) - n * _EXP64_C2
        g2 = g * g
        p = (_EXP64_P[0] * g2 + _EXP64_P[1]) * g2 + _EXP64_P[2]
        p *= g
        q = ((_EXP64_Q[0] * g2 + _EXP64_Q[1]) * g2 + _EXP64_Q[2]) * g2 + _EXP64_Q[3]
        e = 2.0 * (p / (q - p)) + 1.0
        y = np.ldexp(e, np.nan_to_num(np.clip(n, -2099.0, 2099.0)).astype(np.int32))
        y *= y >= _TINY_64
        y = np.maximum(y, x)
        y[x < -745.519] = 0.0
    return y


def _pow_positive_64(x, y):
    """generic_pow_impl on |x| in doubles (see _pow_positive): f = e y + log2(m) y in double words, f = n + r,
    2^r = pexp(hi) (1 + lo) with twoprod(ln 2, r) = hi + lo, times 2^n (flushed below the smallest normal)."""
    m, e = np.frexp(x)
    below = m < 0.70710678118654752440
    m += m * below
    e -= below
    f_hi, f_lo = _add_double_words(*_twoprod_64(e.astype(_F64), y),
                                   *_times_64(*_log2_64(m), y))
    n = _pround(f_hi)
    r = (f_hi - n) + f_lo
    r_n = _pround(r)
    r -= r_n
    n += r_n
    hi, lo = _twoprod_64(np.full_like(r, _LN2), r)
    p = exp_double_packets(hi) * (1.0 + lo)
    np.clip(n, -2099.0, 2099.0, out=n)
    p = np.ldexp(p, n.astype(np.int32))
    p *= p >= _TINY_64
    return p
