"""TensorFlow's float32 elementwise math on the CPU, bit for bit where that can be done cheaply.

TensorFlow's CPU kernels are Eigen expressions. Eigen evaluates a float32 tensor in packets of 8 floats (AVX)
and the last ``size % 8`` elements one at a time (its threads take blocks of whole packets, so the split is the
same at every size), so a tensor of fewer than ``PACKET`` elements takes Eigen's scalar path alone. There
(measured against TensorFlow 2.21's pip wheel, benchmarks/record_tf_float32.py):

* exp, log, sin, cos, tan, atan, expm1, log1p and pow are the C library's float functions (``expf``, ``logf``,
  ...: Eigen's scalar functors call ``std::exp(float)`` and so on), which this module calls through ctypes: on
  Linux glibc's libm, the very functions TensorFlow calls in a process on the same machine. Where no C library
  answers, the float64 result rounded to float32 (the same bits but for about 0.1% to 8% of inputs).
* tanh is Eigen's ``ptanh_float``: a [9/8] rational approximation on x clamped to +-7.90738964, without fused
  multiply-adds (the wheel is built for AVX without FMA: the FMA variant gives TensorFlow's bits for 70% of
  inputs, this one for all).
* sigmoid is Eigen's ``scalar_logistic_op<float>``: ``e = expf(min(x, 16.6355324)); e / (1 + e)``.
* softplus is TensorFlow's Softplus functor: x above -t, ``expf(x)`` below t, ``log1pf(expf(x))`` between,
  t = log(float32 epsilon) + 2; elu TensorFlow's Elu functor, ``expf(x) - 1`` below zero; selu its Selu
  functor, ``scale_alpha * (expf(x) - 1)`` below zero and ``scale * x`` elsewhere.

On the packets of a float32 tensor of ``PACKET`` to ``PACKET_LIMIT`` elements, exp, log, sin, cos, tanh,
sigmoid, softplus, expm1, log1p, elu and selu are NumPy versions of Eigen's packet algorithms (``pexp_float``,
``plog_float``, ``psincos_float``, ``ptanh_float``, the logistic functor's ``packetOp``, ``generic_expm1`` and
``generic_log1p``, and Softplus's, Elu's and Selu's expressions of them), each
float32 step as Eigen rounds it: TensorFlow's bits for every input tried, at 5 to 15 times NumPy's time (a
few microseconds). pow's are Eigen's ``generic_pow`` (tf_pow.py), on the broadcast of its operands (a scalar
exponent as a tensor of it), at about 6 to 8 times exp's time. The last ``size % PACKET`` elements take the scalar
path above. log_softmax is TensorFlow's LogSoftmax functor on them, with Eigen's order for the row sums.

The kernels that replace a ufunc take ``out=`` as it does. float64 tanh is Eigen's ``ptanh_double``, float64
exp its ``pexp_double`` and float64 pow its ``generic_pow`` on the packets of 4 doubles (and the C library's
``tanh``, ``exp`` and ``pow`` on the tail) at any size; float64's other functions, larger
float32 tensors and the other functions' packets keep NumPy's functions (see docs/design.md).
"""
from __future__ import annotations

import contextlib
import contextvars
import functools

import numpy as np

from tapecli.lazymodule import LazyModule

tf_rcpps = LazyModule("tapecli.kernels.tf_rcpps", globals())     # (packets of reciprocals alone: on first use)
# Eigen's pow and pexp_float's constants: packets alone (a scalar's exp and pow are the C library's), on first use
tf_pow = LazyModule("tapecli.kernels.tf_pow", globals())

PACKET = 8                     # floats in one of Eigen's AVX packets: fewer elements run on the scalar path
# Up to this many elements, a float32 tensor takes NumPy versions of Eigen's packet algorithms (TensorFlow's
# bits, at 5 to 20 times the cost of NumPy's SIMD functions: 10 to 40 µs here; pow's, some 120 NumPy steps of
# double-word arithmetic, 6 to 8 times exp's); above, NumPy's functions. What
# a program prints is this small; a training step's activations and logits are often not (at 16,384 the Keras
# MLP workload ran 9-21% longer, at 1,024 about 3%).
PACKET_LIMIT = 1024
_F32 = np.float32
_F32_DTYPE = np.dtype(np.float32)


@functools.cache
def _c_library():
    """The C library's math functions, loaded at the first float32 function a run computes (ctypes and the
    library take milliseconds a program that computes none should not pay): glibc's libm, else the
    process's own symbols (CPython links the math library), else None."""
    import ctypes
    for name in ("libm.so.6", "libm.dylib", None):
        try:
            library = ctypes.CDLL(name)
        except OSError:
            continue
        if getattr(library, "expf", None) is not None:
            return library
    return None


def _c_float(name: str, nargs: int, ufunc):
    """The C library's float function ``name`` (Python floats in, a Python float out, float32's value), or
    ``ufunc`` in float64 rounded to float32 where the C library has none."""
    import ctypes
    library = _c_library()
    f = getattr(library, name, None) if library is not None else None
    if f is not None:
        f.restype = ctypes.c_float
        f.argtypes = [ctypes.c_float] * nargs
        if name == "logf":
            return _logf_of_subnormals(f)
        return f
    if nargs == 1:
        return lambda v: float(_F32(ufunc(np.float64(v))))
    return lambda a, b: float(_F32(ufunc(np.float64(a), np.float64(b))))


# TensorFlow runs its CPU ops with denormals flushed to zero (FTZ and DAZ set): a result below the smallest
# normal float32 is a zero of its sign, but for the functions that give back a subnormal argument as it is
# (sinf(x) = x for tiny x: no arithmetic, nothing flushed). (Other subnormal arguments reach the C function,
# whose arithmetic then reads them as zeros: logf's answer is followed (_logf_of_subnormals), powf's is not.)
_TINY = float(np.finfo(np.float32).tiny)
_KEEP_TINY_ARGUMENT = {"sinf", "tanf", "atanf", "log1pf"}


# What glibc's logf gives a subnormal argument under DAZ (it scales a subnormal by 2^23, a zero there):
# log(2^-150) for a positive one, nan for a negative one (measured against TensorFlow 2.21)
_LOG_SUBNORMAL = -103.97207641601562


def _logf_of_subnormals(f):
    def logf(x):
        if -_TINY < x < _TINY and x != 0:
            return _LOG_SUBNORMAL if x > 0 else float("nan")
        return f(x)
    return logf


def _flushed(f, name):
    if name in _KEEP_TINY_ARGUMENT:
        def run(x):
            y = f(x)
            return y if not -_TINY < y < _TINY or y == x else y * 0.0
        return run

    def run(*args):
        y = f(*args)
        return y if not -_TINY < y < _TINY else y * 0.0
    return run


def libm_float_functions() -> bool:
    """Whether the C library's float functions answer (else float64 rounded to float32 stands in)."""
    return _c_library() is not None


# Within ``pointwise()``, every tensor takes NumPy's functions.
_POINTWISE = contextvars.ContextVar("tf_float32_pointwise", default=False)


@contextlib.contextmanager
def pointwise():
    """A block where an element's value does not depend on its tensor's size or its place in it (NumPy's
    functions): a vectorised sweep's points give the same values however they are batched."""
    token = _POINTWISE.set(True)
    try:
        yield
    finally:
        _POINTWISE.reset(token)


def _small(x) -> bool:
    return x.__class__ is np.ndarray and x.dtype == _F32_DTYPE and x.size < PACKET and not _POINTWISE.get()


def _packets(x) -> bool:
    """Whether ``x`` is a float32 tensor that this module computes in Eigen's packets (and scalar tail)."""
    return x.__class__ is np.ndarray and x.dtype == _F32_DTYPE and x.size <= PACKET_LIMIT and not _POINTWISE.get()


def _in_packets(x, packets, tail, out):
    """``packets`` on the first ``size - size % PACKET`` elements of ``x`` (in C order: TensorFlow's kernel
    reads its tensor's buffer, row-major), ``tail`` (the scalar path) on the rest, as Eigen evaluates a
    tensor: its threads take blocks of whole packets, so only the last ``size % PACKET`` elements are scalar.
    ``tail`` None: the scalar path computes what the packets do (tanh)."""
    flat = x.reshape(-1)
    k = flat.size - flat.size % PACKET
    if k == flat.size or tail is None:
        y = packets(flat)
    else:
        y = np.concatenate((packets(flat[:k]), tail(flat[k:])))
    y = y.reshape(x.shape)
    if out is not None:
        out[...] = y
        return out
    return y


def _result(values, shape, out):
    y = np.array(values, dtype=_F32).reshape(shape)
    if out is not None:
        out[...] = y
        return out
    return y if shape else y[()]       # a 0-d result is a NumPy scalar, as a ufunc's


def _scalar(value, out):
    if out is None:
        return value
    out[...] = value
    return out


def unary(ufunc, c_name: str, packets=None, double_packets=None):
    """``ufunc`` as TensorFlow computes it: the C library's float function on a float32 scalar or a float32
    tensor of fewer than ``PACKET`` elements; where ``packets`` (Eigen's packet algorithm, on a 1-D float32
    array of a multiple of ``PACKET`` elements) is given, it on the packets of a float32 tensor of up to
    ``PACKET_LIMIT`` elements and the C function on the last ``size % PACKET``; where ``double_packets`` (the
    same on doubles) is given, it on a float64 tensor of any size (:func:`_in_double_packets`); ``ufunc`` on
    anything else."""
    keep = c_name in _KEEP_TINY_ARGUMENT
    found: list = []            # (the C function and its flushed form, found at the first call)

    def run(x, out=None):
        if x.__class__ is _F32:
            if not found:
                found.extend(_found(c_name, 1, ufunc))
            y = found[0](x)             # (the flushing inlined: a scalar op's time is mostly calls)
            if -_TINY < y < _TINY and not (keep and y == x):
                y *= 0.0
            return _F32(y) if out is None else _scalar(_F32(y), out)
        if _small(x):
            if not found:
                found.extend(_found(c_name, 1, ufunc))
            return _result([found[1](v) for v in x.ravel().tolist()], x.shape, out)
        if packets is not None and _packets(x):
            if not found:
                found.extend(_found(c_name, 1, ufunc))
            return _in_packets(x, packets, lambda t: np.array([found[1](v) for v in t.tolist()], _F32), out)
        if double_packets is not None and x.__class__ is np.ndarray and x.dtype == _F64_DTYPE \
                and not _POINTWISE.get():
            return _scalar(_in_double_packets(x, double_packets, c_name.removesuffix("f"), ufunc), out)
        if x.dtype.itemsize == 2 and x.dtype.kind in "fV":
            # float16 and bfloat16: Eigen's half packets (and scalars) compute the float32 function and round
            y = run(x.astype(_F32)).astype(x.dtype)
            return y if out is None else _scalar(y, out)
        return ufunc(x, out=out)
    run.__name__ = ufunc.__name__
    run.writes_out = True           # (numpy_kernels.writes_out)
    return run


def binary(ufunc, c_name: str, packets=None):
    """The same for a function of two inputs (``powf``, and Eigen's ``generic_pow`` as ``packets``: on 1-D float32
    arrays, the first of a multiple of ``PACKET`` elements, the second of as many or of one), on their broadcast."""
    f = CFunction(c_name, 2, ufunc)

    def run(a, b, out=None):
        if a.__class__ is _F32 and b.__class__ is _F32:
            return _scalar(_F32(f(a, b)), out)
        if (a.__class__ is np.ndarray or a.__class__ is _F32) and (b.__class__ is np.ndarray or b.__class__ is _F32) \
                and a.dtype == _F32_DTYPE and b.dtype == _F32_DTYPE:
            shape = np.broadcast_shapes(a.shape, b.shape)
            size = _size(shape)
            if size < PACKET:
                a, b = np.broadcast_arrays(a, b)
                return _result([f(u, v) for u, v in zip(a.ravel().tolist(), b.ravel().tolist())], shape, out)
            if packets is not None and size <= PACKET_LIMIT and not _POINTWISE.get():
                return _scalar(_binary_in_packets(a, b, shape, packets, f).reshape(shape), out)
        elif packets is not None and a.__class__ is np.ndarray and a.dtype == _F64_DTYPE and not _POINTWISE.get() \
                and (b := np.asarray(b)).dtype == _F64_DTYPE:
            shape = np.broadcast_shapes(a.shape, b.shape)
            double = _double_function(c_name.removesuffix("f"), ufunc)
            return _scalar(_binary_in_packets(a, b, shape, packets, double, _DOUBLE_PACKET).reshape(shape), out)
        return ufunc(a, b, out=out)
    run.__name__ = ufunc.__name__
    run.writes_out = True
    return run


def _binary_in_packets(a, b, shape, packets, f, packet=PACKET):
    """``packets`` on the first ``size - size % packet`` elements of the broadcast of ``a`` and ``b`` (in C order,
    as TensorFlow's kernel writes its output, broadcast or not), ``f`` on the rest. A one-element ``b`` stays
    one (Eigen's packets of a broadcast scalar hold it in every lane)."""
    x = np.broadcast_to(a, shape).reshape(-1)
    y = b.reshape(1) if b.size == 1 else np.broadcast_to(b, shape).reshape(-1)
    k = x.size - x.size % packet
    head = packets(x[:k], y if y.size == 1 else y[:k]) if k else x[:0]
    if k == x.size:
        return head
    exponents = y.tolist() * (x.size - k) if y.size == 1 else y[k:].tolist()
    return np.concatenate((head, np.array([f(u, v) for u, v in zip(x[k:].tolist(), exponents)], x.dtype)))


@functools.cache
def _double_function(c_name: str, ufunc):
    """The C library's double function of two doubles (``pow``: Eigen's scalar path), else ``ufunc``'s."""
    from tapecli.kernels.tf_random import libm_function
    return libm_function(c_name, arguments=2) or (lambda u, v: float(ufunc(np.float64(u), np.float64(v))))


def _found(c_name: str, nargs: int, ufunc) -> tuple:
    c = _c_float(c_name, nargs, ufunc)
    return c, _flushed(c, c_name)


class CFunction:
    """The C library's float function, flushed, found at its first call."""

    def __init__(self, c_name: str, nargs: int, ufunc):
        self.args, self.f = (c_name, nargs, ufunc), None

    def __call__(self, *values):
        if self.f is None:
            self.f = _found(*self.args)[1]
        return self.f(*values)


def _size(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


# Eigen's ptanh_float constants (the scalar path and the packets below)
_TANH_CLAMP = _F32(7.90738964080810547)       # (8.01773357391357422 where Eigen is built with FMA)
_A0, _A1, _A2, _A3 = (_F32(v) for v in (1.394553628e-8, 2.102733560e-5, 3.520756727e-3, 1.340216100e-1))
_B0, _B1, _B2, _B3, _B4 = (_F32(v) for v in (8.015776984e-7, 3.326951409e-4, 2.597254514e-2, 4.673548340e-1, 1.0))
_ZERO = _F32(0.0)


# ------------------------------------------------------------------ Eigen's packet algorithms, in NumPy

# Each is a NumPy float32 version of Eigen's algorithm for an AVX packet (GenericPacketMathFunctions.h),
# step by step, each step rounded to float32 as Eigen's: pmadd(a, b, c) is a * b + c in two roundings (the
# wheel is built without FMA). TensorFlow runs with denormals flushed to zero (DAZ and FTZ): a subnormal
# argument reads as a zero of its sign, a subnormal result is one; NumPy's intermediate subnormals, where
# Eigen's are flushed, only meet a larger addend or end in a result flushed here. The steps run in place
# on a few arrays and the constants are 0-d arrays: on a tensor of tens of elements a step's time is NumPy's
# call. (They run under the caller's np.errstate, as the kernels do: nan and inf lanes warn otherwise.)

def _c(v):
    return np.array(v, dtype=_F32)


_TINY32 = _c(_TINY)
_ONE_C, _HALF = _c(1.0), _c(0.5)
_EXP_HI, _EXP_FLOOR = _c(88.723), _c(-105.0)


def _reduced(x):
    """pexp's range reduction of x (clamped): m = floor(x log2(e) + 1/2) and r = x - m ln 2, m ln 2 in two
    parts (Cephes' C1 and C2)."""
    m = x * tf_pow.LOG2EF             # (pexp_float's constants, written once there)
    m += _HALF
    np.floor(m, out=m)
    r = m * tf_pow.EXP_C1
    r += x
    t = m * tf_pow.EXP_C2
    r += t
    return m, r


def _exp_packets(x0):
    """pexp_float: exp(x) = 2^m exp(r) with exp(r) a degree-6 polynomial, on x clamped above at 88.723
    (results of x below -104 are zeros: here x is clamped below at -105, whose results FTZ flushes as
    well). Eigen scales by 2^m with pldexp_fast where a packet's |x| are all <= 87, else pldexp's four
    factors: the same product but where it overflows (inf) or is subnormal (flushed): np.ldexp's here."""
    x = np.maximum(x0, _EXP_FLOOR)
    np.minimum(x, _EXP_HI, out=x)
    m, r = _reduced(x)
    p2, p3, p4, p5, p6 = tf_pow.EXP_POLYNOMIAL
    r2 = r * r
    y = r2 * p6
    y += p4
    y *= r2
    y += p2                         # p_even
    p_odd = r2 * p5
    p_odd += p3
    p_odd *= r
    y += p_odd                      # r p_odd + p_even
    y *= r2
    r += _ONE_C
    y += r                          # r2 (...) + (r + 1)
    np.ldexp(y, m.astype(np.int32), out=y)
    y *= y >= _TINY32               # FTZ (a nan stays one)
    return y


_SQRTHF, _LN2 = _c(0.707106781186547524), _c(0.693147180559945309)
_LA0, _LA1, _LA2 = (_c(v) for v in (0.18256296349849254, 1.0000000190281063, 1.0000000190281136))
_LB0, _LB1, _LB2, _LB3 = (_c(v) for v in (0.049616247954120038, 0.59923249590823520, 1.4999999999999927, 1.0))


def _horner(x, coefficients):
    """c0 x^n + c1 x^(n-1) + ... + cn in float32 as Eigen's chain of pmadd evaluates it without FMA: each multiply
    and each add rounded, in place on one new array."""
    p = x * coefficients[0]
    for c in coefficients[1:-1]:
        p += c
        p *= x
    p += coefficients[-1]
    return p


def _log_core(x0):
    """plog_float on positive normal finite x: log(x) = e ln 2 + log(1 + f), x = (1 + f) 2^e with 1 + f in
    [sqrt(1/2), sqrt(2)) (pfrexp's mantissa in [1/2, 1), doubled below sqrt(1/2)), log(1 + f) a [3/3]
    rational function of f."""
    m, e = np.frexp(x0)
    e = e.astype(_F32)
    below = m < _SQRTHF
    x = m - _ONE_C
    m *= below
    x += m
    e -= below
    p = _horner(x, (_LA0, _LA1, _LA2))
    p *= x
    p /= _horner(x, (_LB0, _LB1, _LB2, _LB3))
    e *= _LN2
    e += p
    return e


def _log_packets(x0):
    """plog_float: _log_core, and log(0) = -inf (a subnormal argument too, read as a zero), nan below zero
    and for nan, log(inf) = inf."""
    y = _log_core(x0)
    if not (x0.min() >= _TINY and x0.max() < np.inf):   # (a nan fails both)
        y[x0 == np.inf] = np.inf
        y[~(x0 >= 0)] = np.nan
        y[np.abs(x0) < _TINY] = -np.inf
    return y


_LOGISTIC_P2, _LOGISTIC_P3, _LOGISTIC_P4, _LOGISTIC_P5 = (
    _c(v) for v in (0.49999141693115234375, 0.16666877269744873046875, 4.1898667812347412109375e-2,
                    8.33471305668354034423828125e-3))
_LOGISTIC_HI_C = _c(16.6355324)


def _logistic_packets(x0):
    """scalar_logistic_op<float>::packetOp: e = exp(x / 2)^2 (pexp's reduction on x / 2, a degree-5
    polynomial, 2^m from the bits), e / (1 + e), on x clamped at 16.6355324 (results of x below -104 are
    zeros: here x is clamped below at -105, whose e FTZ flushes)."""
    x = np.maximum(x0, _EXP_FLOOR)
    np.minimum(x, _LOGISTIC_HI_C, out=x)
    x *= _HALF
    m, r = _reduced(x)
    r2 = r * r
    p = r2 * _LOGISTIC_P5
    p += _LOGISTIC_P3
    p *= r
    t = r2 * _LOGISTIC_P4
    t += _LOGISTIC_P2
    p += t                          # r p_odd + p_even
    p *= r2
    r += _ONE_C
    p += r
    scale = m.astype(np.int32)      # pldexp_fast: 2^m from the bits (m >= -76 here)
    scale += 127
    scale <<= 23
    p *= scale.view(_F32)
    p *= p
    p *= p >= _TINY32               # FTZ
    t = p + _ONE_C
    p /= t
    return p


_TANH_CLAMP_C = _c(_TANH_CLAMP)
_A0C, _A1C, _A2C, _A3C = (_c(v) for v in (_A0, _A1, _A2, _A3))
_B0C, _B1C, _B2C, _B3C, _B4C = (_c(v) for v in (_B0, _B1, _B2, _B3, _B4))


def _tanh_packets(x0):
    """ptanh_float on packets: the scalar path's formula, x (x^2 p(x^2)) + x) / q(x^2)."""
    x = np.minimum(x0, _TANH_CLAMP_C)
    x = np.maximum(x, -_TANH_CLAMP_C, out=x)
    x2 = x * x
    p = _horner(x2, (_A0C, _A1C, _A2C, _A3C))
    q = _horner(x2, (_B0C, _B1C, _B2C, _B3C, _B4C))
    x2 *= x
    x2 *= p
    x2 += x
    x2 /= q
    x2 *= np.abs(x2) >= _TINY32     # FTZ (a nan stays one, a flushed result keeps its sign)
    return x2


# psincos_float's constants: 2/pi, the rounding to an integer, pi/2 in four parts (the wheel's, without FMA),
# the cosine's and sine's polynomials on [-pi/4, pi/4], and 192 bits of 2/pi for huge arguments
_TWO_OVER_PI, _ROUNDING = _c(0.636619746685028076171875), _c(12582912.0)
_PI_OVER_2 = tuple(_c(v) for v in (-1.5703125, -0.000483989715576171875, 1.62865035235881805419921875e-07,
                                   5.5644315544167710640977020375430583953857421875e-11))
_COS_POLY = tuple(_c(v) for v in (2.4372266125283204019069671630859375e-05, -0.00138865201734006404876708984375,
                                  0.041666619479656219482421875, -0.5, 1.0))
_SIN_POLY = tuple(_c(v) for v in (-0.0001959234114083702898469196984621021329076029360294342041015625,
                                  0.0083326873655616851693794799871284340042620897293090820312500000,
                                  -0.1666666203982298255503735617821803316473960876464843750000000000))
_TWO_OVER_PI_BITS = (
    0x00000028, 0x000028be, 0x0028be60, 0x28be60db, 0xbe60db93, 0x60db9391, 0xdb939105, 0x9391054a, 0x91054a7f,
    0x054a7f09, 0x4a7f09d5, 0x7f09d5f4, 0x09d5f47d, 0xd5f47d4d, 0xf47d4d37, 0x7d4d3770, 0x4d377036, 0x377036d8,
    0x7036d8a5, 0x36d8a566, 0xd8a5664f, 0xa5664f10, 0x664f10e4, 0x4f10e410, 0x10e41000, 0xe4100000)
_M32, _M64 = (1 << 32) - 1, (1 << 64) - 1


def _trig_reduce_huge(x: float) -> tuple:
    """Eigen's trig_reduce_huge (Payne-Hanek) of |x| >= 18838: x - q pi/2 and the quadrant q, in 64-bit
    fixed point (Python's integers, masked as C's unsigned ones wrap)."""
    xi = int(np.array(x, _F32).view(np.uint32))
    e = ((xi >> 23) - 118) & _M32
    xi = (((xi & 0x7fffff) | 0x800000) << (e & 7)) & _M32
    i = e >> 3
    p = xi * _TWO_OVER_PI_BITS[i + 7]
    p = (xi * _TWO_OVER_PI_BITS[i + 3] + (p >> 32)) & _M64
    p = ((((xi * _TWO_OVER_PI_BITS[i - 1]) & _M32) << 32) + p) & _M64
    q = ((p + (1 << 61)) & _M64) >> 62
    p = (p - (q << 62)) & _M64
    return _F32(float(p - (1 << 64) if p >> 63 else p) * 3.4061215800865545e-19), q


def _sincos_packets(x0, sine: bool):
    """psincos_float: x reduced by the nearest multiple q of pi/2 (Payne-Hanek above a threshold), then the
    sine's or the cosine's polynomial as q's parity picks, its sign from q's second bit (and x's, for sin)."""
    x0 = x0 * (np.abs(x0) >= _TINY32)         # (DAZ)
    x = np.abs(x0)
    y = x * _TWO_OVER_PI
    y += _ROUNDING
    quadrant = y.view(np.int32).copy()
    y -= _ROUNDING
    for part in _PI_OVER_2:
        x += y * part
    for k in np.flatnonzero((np.abs(x0) >= (25966.0 if sine else 18838.0)) & np.isfinite(x0)):
        x[k], quadrant[k] = _trig_reduce_huge(abs(x0[k]))
    x2 = x * x
    cos_poly, sin_poly = _horner(x2, _COS_POLY), _horner(x2, _SIN_POLY)
    sin_poly *= x2
    sin_poly *= x
    sin_poly += x
    even = (quadrant & 1) == 0
    y = np.where(even, sin_poly, cos_poly) if sine else np.where(even, cos_poly, sin_poly)
    turned = (quadrant if sine else quadrant + 1).view(np.uint32) << 30
    sign = (x0.view(np.uint32) ^ turned if sine else turned) & np.uint32(0x80000000)
    y = (y.view(np.uint32) ^ sign).view(_F32)
    y *= np.abs(y) >= _TINY32                  # (FTZ)
    return y


def _log1p_packets(x):
    """Eigen's generic_log1p (Kahan's): x log(1 + x) / ((1 + x) - 1) with plog, x itself where 1 + x is 1 or
    log(1 + x) is 1 + x (inf); a subnormal x gives a zero of its sign (measured: TensorFlow's threads flush it)."""
    xp1 = x + _ONE_C
    log1 = _log_packets(xp1)
    with np.errstate(all="ignore"):
        y = log1 / (xp1 - _ONE_C)
        y *= x
    np.copyto(y, x, where=(xp1 == _ONE_C) | (xp1 == log1))
    y *= np.abs(y) >= _TINY32       # (FTZ: a nan stays one)
    return y


def _expm1_packets(x):
    """Eigen's generic_expm1 (Kahan's): (u - 1) (x / log u) with u = pexp(x) and plog; x where u is 1, -1 where
    u - 1 is -1, u where log u is u (inf)."""
    u = _exp_packets(x)
    u_minus_one = u - _ONE_C
    log_u = _log_packets(u)
    with np.errstate(all="ignore"):
        y = x / log_u
        y *= u_minus_one
    np.copyto(y, u, where=log_u == u)
    np.copyto(y, -_ONE_C, where=u_minus_one == -_ONE_C)
    np.copyto(y, x, where=u == _ONE_C)
    return y


exp = unary(np.exp, "expf", _exp_packets, lambda x: tf_pow.exp_double_packets(x))
log = unary(np.log, "logf", _log_packets)
sin = unary(np.sin, "sinf", functools.partial(_sincos_packets, sine=True))
cos = unary(np.cos, "cosf", functools.partial(_sincos_packets, sine=False))
tan = unary(np.tan, "tanf")
atan = unary(np.arctan, "atanf")
expm1 = unary(np.expm1, "expm1f", _expm1_packets)
log1p = unary(np.log1p, "log1pf", _log1p_packets)
pow_ = binary(np.power, "powf", lambda x, y: tf_pow.pow_packets(x, y))

_expf = CFunction("expf", 1, np.exp)
_log1pf = CFunction("log1pf", 1, np.log1p)


# ------------------------------------------------------------------ tanh: Eigen's ptanh_float

def _tanh_scalar(x):
    """ptanh_float on a float32 scalar: Python's operators on NumPy float32 scalars, each rounded to float32."""
    if x > _TANH_CLAMP:
        x = _TANH_CLAMP
    elif x < -_TANH_CLAMP:
        x = -_TANH_CLAMP
    x2 = x * x
    p = ((_A0 * x2 + _A1) * x2 + _A2) * x2 + _A3
    q = (((_B0 * x2 + _B1) * x2 + _B2) * x2 + _B3) * x2 + _B4
    y = (x2 * x * p + x) / q
    return y if not -_TINY < y < _TINY else y * _ZERO


def tanh(x, out=None):
    """np.tanh, but Eigen's float32 tanh (TensorFlow's) on a float32 scalar or a float32 tensor of up to
    ``PACKET_LIMIT`` elements (packets and the scalar tail compute the same formula), and Eigen's float64 tanh
    on a float64 tensor of any size (:func:`_tanh64`)."""
    if x.__class__ is _F32:
        return _scalar(_tanh_scalar(x), out)
    if _small(x):
        return _result([_tanh_scalar(v) for v in x.ravel()], x.shape, out)
    if _packets(x):
        return _in_packets(x, _tanh_packets, None, out)
    if x.__class__ is np.ndarray and x.dtype == _F64_DTYPE and not _POINTWISE.get():
        return _scalar(_tanh64(x), out)
    if x.dtype.itemsize == 2 and x.dtype.kind in "fV":       # (half floats: float32's, rounded, as unary's)
        return _scalar(tanh(x.astype(_F32)).astype(x.dtype), out)
    return np.tanh(x, out=out)


def reciprocal(x, out=None):
    """np.reciprocal, but TensorFlow's Reciprocal on the packets of a float32 tensor of ``PACKET`` to
    ``PACKET_LIMIT`` elements on a CPU whose approximate RCPPS is known (tf_rcpps.py): RCPPS and a Newton step,
    1 / x on the last ``size % PACKET``. (log's and log1p's gradients, g * reciprocal(x), read it.)"""
    if _packets(x) and x.size >= PACKET and tf_rcpps.known():
        return _in_packets(x, tf_rcpps.newton_reciprocal, np.reciprocal, out)
    return np.reciprocal(x, out=out)


reciprocal.writes_out = True


def rsqrt(x, out=None):
    """1 / sqrt(x) in x's dtype, but TensorFlow's Rsqrt on the packets of a float32 tensor of ``PACKET`` to
    ``PACKET_LIMIT`` elements on a CPU whose approximate RSQRTPS is known (tf_rcpps.py): RSQRTPS and a Newton
    step, 1 / sqrt(x) on the last ``size % PACKET`` (LayerNormalization's and BatchNormalization's rsqrt)."""
    if _packets(x) and x.size >= PACKET and tf_rcpps.known():
        return _in_packets(x, tf_rcpps.newton_rsqrt, _one_over_root, out)
    return _scalar(_one_over_root(x), out)


def _one_over_root(x):
    with np.errstate(all="ignore"):
        return (1 / np.sqrt(x)).astype(x.dtype, copy=False)


rsqrt.writes_out = True


# Eigen's ptanh_double (GenericPacketMathFunctions.h, built without FMA): a [19/18] rational interpolant, odd
# over even, on x clamped to +-17.714196154005176
_TANH64_CLAMP = 17.714196154005176
_TANH64_ALPHA = (2.6158007860482230e-23, 7.6534862268749319e-19, 3.1309488231386680e-15, 4.2303918148209176e-12,
                 2.4618379131293676e-09, 6.8644367682497074e-07, 9.3839087674268880e-05, 5.9809711724441161e-03,
                 1.5184719640284322e-01)
_TANH64_BETA = (6.463747022670968018e-21, 5.782506856739003571e-17, 1.293019623712687916e-13,
                1.123643448069621992e-10, 4.492975677839633985e-08, 8.785185266237658698e-06,
                8.295161192716231542e-04, 3.437448108450402717e-02, 4.851805297361760360e-01, 1.0)
_F64_DTYPE = np.dtype(np.float64)
_DOUBLE_PACKET = 4          # doubles in an AVX packet: the last size % 4 take the scalar path, the C library's tanh


def _in_double_packets(x, packets, c_name: str, ufunc):
    """``packets`` on the first ``size - size % 4`` doubles of ``x`` (row-major), the C library's double function
    ``c_name`` (else ``ufunc``) on the rest: Eigen's scalar path."""
    flat = x.reshape(-1)
    k = flat.size - flat.size % _DOUBLE_PACKET
    y = packets(flat[:k]) if k else flat[:0]
    if k < flat.size:
        from tapecli.kernels.tf_random import libm_function
        c = libm_function(c_name) or (lambda v: float(ufunc(np.float64(v))))
        y = np.concatenate((y, np.array([c(v) for v in flat[k:].tolist()], np.float64)))
    return y.reshape(x.shape)


def _tanh64(x):
    """TensorFlow's float64 Tanh: ptanh_double on Eigen's packets (each pmadd a product and a sum), the C library's
    ``tanh`` on the scalar tail; NaN stays NaN."""
    return _in_double_packets(x, _tanh64_packets, "tanh", np.tanh)


def _tanh64_packets(head):
    with np.errstate(invalid="ignore"):
        c = np.maximum(np.minimum(head, _TANH64_CLAMP), -_TANH64_CLAMP)
        x2 = c * c
        x3 = x2 * c
        p = np.full_like(c, _TANH64_ALPHA[0])
        for a in _TANH64_ALPHA[1:]:
            p = p * x2 + a
        q = np.full_like(c, _TANH64_BETA[0])
        for b in _TANH64_BETA[1:]:
            q = q * x2 + b
        return (x3 * p + c) / q


tanh.writes_out = True


# Eigen's generic_fast_erf<float> (SpecialFunctionsImpl.h: TensorFlow's Erf on the scalar path and the packets
# alike): an [11/10] rational interpolant, odd over even, in x^2 clamped to 16, each pmadd a product and a sum
_ERF_ALPHA = tuple(_F32(v) for v in (2.123732201653183437883853912353515625e-06, 2.861979592125862836837768554687500000e-04,
                                     3.658048342913389205932617187500000000e-03, 5.243302136659622192382812500000000000e-02,
                                     1.874160766601562500000000000000000000e-01, 1.128379106521606445312500000000000000e+00))
_ERF_BETA = tuple(_F32(v) for v in (3.89185734093189239501953125000e-05, 1.14329601638019084930419921875e-03,
                                    1.47520881146192550659179687500e-02, 1.12945675849914550781250000000e-01,
                                    4.99425798654556274414062500000e-01, 1.0))


def erf(x):
    """TensorFlow's float32 Erf (Eigen's generic_fast_erf<float>) of a float32 scalar or tensor of any size; None
    for anything else."""
    if not (x.__class__ is _F32 or x.__class__ is np.ndarray and x.dtype == _F32_DTYPE):
        return None
    with np.errstate(all="ignore"):
        x2 = np.minimum(_F32(16.0), x * x)
        p = _ERF_ALPHA[0]
        for a in _ERF_ALPHA[1:]:
            p = p * x2 + a
        q = _ERF_BETA[0]
        for b in _ERF_BETA[1:]:
            q = q * x2 + b
        r = (x * p) / q
        return np.maximum(np.minimum(r, _F32(1.0)), _F32(-1.0)).astype(_F32)


# ------------------------------------------------------------------ sigmoid, softplus and elu

_LOGISTIC_HI = _F32(16.6355324)
_ONE = _F32(1.0)
# TensorFlow's Softplus threshold: log(float32 epsilon) + 2, in float32
_SOFTPLUS_T = _F32(_F32(np.log(np.float64(np.finfo(np.float32).eps))) + _F32(2.0))


def _sigmoid_tail(x):
    e = np.array([_expf(v) for v in np.minimum(x, _LOGISTIC_HI).tolist()], dtype=_F32)
    return e / (_ONE + e)


# The doubles and halves in one of Eigen's AVX packets, as PACKET floats: an elementwise kernel's scalar tail
_PACKET_OF = {np.dtype(np.float64): 4, np.dtype(np.float16): PACKET}


def sigmoid_grad(y, g):
    """TensorFlow's SigmoidGrad (Eigen's ``scalar_sigmoid_gradient_op``): ``g * (y * (1 - y))`` on the packets,
    ``(g * y) * (1 - y)`` on the scalar tail (the last ``size % PACKET`` elements; of each of ``g``'s leading batch
    entries, each a tensor TensorFlow would have given). Its bits at any size."""
    one = y.dtype.type(1)
    if y.__class__ is not np.ndarray and g.__class__ is not np.ndarray:
        return (g * y) * (one - y)          # (a scalar: the tail alone)
    out = g * (y * (one - y))
    if _POINTWISE.get():
        return out
    if out.__class__ is not np.ndarray:     # (0-d operands: NumPy's product is a scalar, all of it the tail)
        return (g * y) * (one - y)
    tail = y.size % _PACKET_OF.get(out.dtype, PACKET)
    if tail and out.size:
        rows = out.reshape(-1, y.size)
        gs = np.broadcast_to(g, out.shape).reshape(-1, y.size)[:, -tail:]
        ys = y.reshape(-1)[-tail:]
        rows[:, -tail:] = (gs * ys) * (one - ys)
    return out


def tanh_grad(y, g):
    """TensorFlow's TanhGrad (Eigen's ``scalar_tanh_gradient_op``): ``g * (1 - y * y)``, packets and scalar tail
    alike. Its bits at any size."""
    return g * (y.dtype.type(1) - y * y)


def sqrt_grad(y, g):
    """TensorFlow's SqrtGrad (Eigen's ``scalar_sqrt_gradient_op``): ``(0.5 / y) * g`` on the packets,
    ``(0.5 * g) / y`` on the scalar tail (the last ``size % PACKET`` elements; of each of ``g``'s leading batch
    entries, as sigmoid_grad's), 0 where g is 0 whatever y. Its bits at any size."""
    half, zero = y.dtype.type(0.5), y.dtype.type(0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if y.__class__ is not np.ndarray and g.__class__ is not np.ndarray:
            return zero if g == 0 else (half * g) / y          # (a scalar: the tail alone)
        out = np.where(g == 0, zero, (half / y) * g)
        if _POINTWISE.get():
            return out
        if not out.ndim:                    # (0-d operands: all of it the tail)
            return np.where(g == 0, zero, (half * g) / y)
        tail = y.size % _PACKET_OF.get(out.dtype, PACKET)
        if tail and out.size:
            rows = out.reshape(-1, y.size)
            gs = np.broadcast_to(g, out.shape).reshape(-1, y.size)[:, -tail:]
            ys = y.reshape(-1)[-tail:]
            rows[:, -tail:] = np.where(gs == 0, zero, (half * gs) / ys)
    return out


def sigmoid(x):
    """Eigen's float32 sigmoid (TensorFlow's) on a float32 scalar or a float32 tensor of up to
    ``PACKET_LIMIT`` elements: the scalar functor below ``PACKET`` elements and on a larger tensor's last
    ``size % PACKET``, the packet functor on the rest. None for anything else."""
    if x.__class__ is _F32:
        e = _F32(_expf(_LOGISTIC_HI if x > _LOGISTIC_HI else x))
        return e / (_ONE + e)
    if _small(x):
        return _result(_sigmoid_tail(x.ravel()), x.shape, None)
    if _packets(x):
        return _in_packets(x, _logistic_packets, _sigmoid_tail, None)
    return None


def _softplus_one(v: float) -> float:
    if v > -_SOFTPLUS_T or v != v:
        return v
    e = _expf(v)
    return e if v < _SOFTPLUS_T else _log1pf(e)


def _softplus_tail(x):
    return np.array([_softplus_one(v) for v in x.tolist()], dtype=_F32)


def _softplus_packets(x):
    """TensorFlow's Softplus functor on packets: x above -t, pexp(x) below t, between them Eigen's log1p of
    u = pexp(x)."""
    u = _exp_packets(x)
    with np.errstate(all="ignore"):
        y = _log1p_packets(u)
    np.copyto(y, u, where=x < _SOFTPLUS_T)
    np.copyto(y, x, where=x > -_SOFTPLUS_T)
    return y


def softplus(x):
    """TensorFlow's Softplus on a float32 scalar or a float32 tensor of up to ``PACKET_LIMIT`` elements; None
    for anything else."""
    if x.__class__ is _F32:
        return _F32(_softplus_one(float(x)))
    if _small(x):
        return _result([_softplus_one(v) for v in x.ravel().tolist()], x.shape, None)
    if _packets(x):
        return _in_packets(x, _softplus_packets, _softplus_tail, None)
    return None


_FLOAT16 = np.dtype(np.float16)
# Softplus's threshold in float16: ``log(epsilon) + 2`` in half floats, Eigen's epsilon of half being 2 ** -13
_SOFTPLUS_T16 = np.float16(np.log(np.float32(2.0 ** -13))) + np.float16(2)


def softplus_half(x):
    """TensorFlow's Softplus functor on float16: Eigen's half packets compute exp and log1p in float32 (packets,
    and the C library's functions on the last ``size % PACKET``) and round each result to float16."""
    u = exp(x.astype(_F32)).astype(_FLOAT16)
    with np.errstate(all="ignore"):
        y = log1p(u.astype(_F32)).astype(_FLOAT16)
    return np.where(x > -_SOFTPLUS_T16, x, np.where(x < _SOFTPLUS_T16, u, y))


def _elu_tail(x):
    e = np.array([_expf(v) for v in x.tolist()], dtype=_F32) - _ONE
    return np.where(x <= -_TINY, e, x)         # (a subnormal x reads as a zero: x)


def _elu_packets(x):
    e = _exp_packets(x)
    e -= _ONE_C
    np.copyto(e, x, where=x > -_TINY32)
    return e


def _by_size(x, packets, tail):
    """A float32 scalar (as an array of one) or a float32 tensor below ``PACKET`` elements on the scalar path
    ``tail``, one of up to ``PACKET_LIMIT`` elements in ``packets`` and its tail; None for anything else."""
    if x.__class__ is _F32:
        return tail(np.array([x]))
    if _small(x):
        return tail(x.ravel()).reshape(x.shape)
    if _packets(x):
        return _in_packets(x, packets, tail, None)
    return None


def elu(x, alpha=1.0):
    """TensorFlow's Elu functor (``x < 0 ? exp(x) - 1 : x``, with Eigen's exp: packets and the scalar tail) on a
    float32 tensor of up to ``PACKET_LIMIT`` elements or a float32 scalar, and for another ``alpha`` Keras's
    ``where(x > 0, elu, alpha * elu)`` (float32 products, flushed); None for anything else."""
    y = _by_size(x, _elu_packets, _elu_tail)
    if y is None:
        return None
    if alpha != 1.0:
        scaled = y * _F32(alpha)
        scaled *= np.abs(scaled) >= _TINY32
        y = np.where(x >= _TINY32, y, scaled)          # (x > 0, with a subnormal x read as a zero)
    return y[0] if x.__class__ is _F32 else y if x.shape else y[()]


# TensorFlow's Selu functor's constants, as its source writes them (scale * alpha is another double)
SELU_SCALE = 1.0507009873554804934193349852946
SELU_SCALE_ALPHA = 1.7580993408473768599402175208123
_SELU_SCALE32, _SELU_SCALE_ALPHA32 = _F32(SELU_SCALE), _F32(SELU_SCALE_ALPHA)


def _selu_of(x, e):
    """``x < 0 ? scale_alpha * e : scale * x`` (e = exp(x) - 1), with a subnormal x read as a zero and subnormal
    results flushed, as TensorFlow's DAZ and FTZ do."""
    x = np.where(np.abs(x) >= _TINY32, x, x * _ZERO)
    y = np.where(x < _ZERO, e * _SELU_SCALE_ALPHA32, x * _SELU_SCALE32)
    y *= ~(np.abs(y) < _TINY32)         # (a nan stays one)
    return y


def _selu_tail(x):
    return _selu_of(x, np.array([_expf(v) for v in x.tolist()], dtype=_F32) - _ONE)


def _selu_packets(x):
    e = _exp_packets(x)
    e -= _ONE_C
    return _selu_of(x, e)


def selu(x):
    """TensorFlow's Selu functor (``x < 0 ? scale_alpha * (exp(x) - 1) : scale * x``, with Eigen's exp: packets and
    the scalar tail) on a float32 tensor of up to ``PACKET_LIMIT`` elements or a float32 scalar; None for anything
    else."""
    y = _by_size(x, _selu_packets, _selu_tail)
    if y is None:
        return None
    return y[0] if x.__class__ is _F32 else y if x.shape else y[()]


# ------------------------------------------------------------------ log_softmax: TensorFlow's LogSoftmax functor

# SoftmaxEigenImpl (log): shifted = x - max(x along the row); shifted - log(sum(exp(shifted) along the row)).
# The row sums are Eigen's InnerMostDimReducer (rows of up to 8 * 1024 elements; longer ones split in two):
# packets of exp from the row's start (a scalar tail of row % 8), into four packet accumulators over each 32
# elements while whole groups of 32 remain, those added in order, the packets left added to the first, the
# packet summed as ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7)) (predux), after the tail's own sum.
# The log of the rows' sums is a tensor of the rows: packets and a scalar tail too.
LEAF = 8 * 1024
# Each row's tail is expf calls (about half a microsecond each): beyond this many, NumPy's log_softmax
_MAX_TAILS = 2048


def row_exp(shifted):
    """exp of each row as the reduction reads it: Eigen's packets on the row's whole packets, expf on the
    last ``row % PACKET``."""
    rows, n = shifted.shape
    k = n - n % PACKET
    e = np.empty_like(shifted)
    if k:
        e[:, :k] = _exp_packets(shifted[:, :k])
    if k < n:
        expf = _c_expf()
        tail = np.array([expf(v) for v in shifted[:, k:].ravel().tolist()], _F32)
        tail *= tail >= _TINY32         # FTZ
        e[:, k:] = tail.reshape(rows, n - k)
    return e


@functools.cache
def _c_expf():
    """The C library's expf itself (many calls: the flushing is done on their array)."""
    return _c_float("expf", 1, np.exp)


def row_sums(e):
    """Eigen's float32 sum of each row of ``e`` (rows of at most ``LEAF`` elements)."""
    rows, n = e.shape
    start = 0
    if n >= 4 * PACKET:
        groups = n // (4 * PACKET)
        start = groups * 4 * PACKET
        # each accumulator's packets in order: np.add.accumulate adds one after another (np.sum would pair them)
        acc = np.add.accumulate(e[:, :start].reshape(rows, groups, 4, PACKET), axis=1)[:, -1]
        p = acc[:, 0] + acc[:, 1]
        p += acc[:, 2]
        p += acc[:, 3]
    else:
        p = np.zeros((rows, PACKET), _F32)
    for j in range(start, n - n % PACKET, PACKET):
        p += e[:, j:j + PACKET]
    half = p[:, :4] + p[:, 4:]
    total = (half[:, 0] + half[:, 2]) + (half[:, 1] + half[:, 3])
    if n % PACKET:          # the tail's own sum, from zero, one after another, first
        total += np.add.accumulate(e[:, n - n % PACKET:], axis=1)[:, -1]
    return total


def log_softmax(x, axis=-1):
    """TensorFlow's LogSoftmax of a float32 tensor of up to ``PACKET_LIMIT`` elements (rows of up to 8,192,
    ``_MAX_TAILS`` elements in the rows' tails); None for anything else. An axis other than the last is swapped
    with it first (and back), as TensorFlow transposes it."""
    if x.__class__ is not np.ndarray or x.dtype != _F32_DTYPE or not x.ndim or not 0 < x.size <= PACKET_LIMIT \
            or _POINTWISE.get() \
            or not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        return None
    axis = int(axis) % x.ndim
    if axis != x.ndim - 1:
        y = log_softmax(np.swapaxes(x, axis, -1))
        return None if y is None else np.ascontiguousarray(np.swapaxes(y, axis, -1))
    n = x.shape[-1]
    if n > LEAF or x.size // n * (n % PACKET) > _MAX_TAILS:
        return None
    rows = x.reshape(-1, n)
    shifted = rows - rows.max(axis=1, keepdims=True)
    shifted -= log(row_sums(row_exp(shifted)))[:, None]
    return shifted.reshape(x.shape)
