"""TensorFlow's float32 elementwise math on the CPU, bit for bit where that can be done cheaply.

TensorFlow's CPU kernels are Eigen expressions. Eigen evaluates a float32 tensor in packets of 8 floats (AVX)
and the last ``size % 8`` elements one at a time, so a tensor of fewer than ``PACKET`` elements takes Eigen's
scalar path alone. There (measured against TensorFlow 2.21's pip wheel, benchmarks/record_tf_float32.py):

* exp, log, sin, cos, tan, atan, expm1, log1p and pow are the C library's float functions (``expf``, ``logf``,
  ...: Eigen's scalar functors call ``std::exp(float)`` and so on), which this module calls through ctypes: on
  Linux glibc's libm, the very functions TensorFlow calls in a process on the same machine. Where no C library
  answers, the float64 result rounded to float32 (the same bits but for about 0.1% to 8% of inputs).
* tanh is Eigen's ``ptanh_float``: a [9/8] rational approximation on x clamped to +-7.90738964, without fused
  multiply-adds (the wheel is built for AVX without FMA: the FMA variant gives TensorFlow's bits for 70% of
  inputs, this one for all).
* sigmoid is Eigen's ``scalar_logistic_op<float>``: ``e = expf(min(x, 16.6355324)); e / (1 + e)``.
* softplus is TensorFlow's Softplus functor: x above -t, ``expf(x)`` below t, ``log1pf(expf(x))`` between,
  t = log(float32 epsilon) + 2.

The kernels that replace a ufunc take ``out=`` as it does. float64 and larger float32 tensors keep NumPy's
functions (Eigen's packet algorithms for exp, log, sigmoid ... differ from NumPy's: see docs/design.md).
"""
from __future__ import annotations

import functools

import numpy as np

PACKET = 8                     # floats in one of Eigen's AVX packets: fewer elements run on the scalar path
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
        return f
    if nargs == 1:
        return lambda v: float(_F32(ufunc(np.float64(v))))
    return lambda a, b: float(_F32(ufunc(np.float64(a), np.float64(b))))


# TensorFlow runs its CPU ops with denormals flushed to zero (FTZ and DAZ set): a result below the smallest
# normal float32 is a zero of its sign, but for the functions that give back a subnormal argument as it is
# (sinf(x) = x for tiny x: no arithmetic, nothing flushed). (Other subnormal arguments reach the C function,
# whose arithmetic then reads them as zeros: log and pow of one are what tapecli does not follow.)
_TINY = float(np.finfo(np.float32).tiny)
_KEEP_TINY_ARGUMENT = {"sinf", "tanf", "atanf", "log1pf"}


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


def _small(x) -> bool:
    return x.__class__ is np.ndarray and x.dtype == _F32_DTYPE and x.size < PACKET


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


def unary(ufunc, c_name: str):
    """``ufunc`` as TensorFlow computes it: the C library's float function on a float32 scalar or a float32
    tensor of fewer than ``PACKET`` elements, ``ufunc`` on anything else."""
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
        return ufunc(x, out=out)
    run.__name__ = ufunc.__name__
    return run


def binary(ufunc, c_name: str):
    """The same for a function of two inputs (``powf``), on their broadcast."""
    f = _Lazy(c_name, 2, ufunc)

    def run(a, b, out=None):
        if a.__class__ is _F32 and b.__class__ is _F32:
            return _scalar(_F32(f(a, b)), out)
        if (a.__class__ is np.ndarray or a.__class__ is _F32) and (b.__class__ is np.ndarray or b.__class__ is _F32) \
                and a.dtype == _F32_DTYPE and b.dtype == _F32_DTYPE:
            shape = np.broadcast_shapes(a.shape, b.shape)
            if _size(shape) < PACKET:
                a, b = np.broadcast_arrays(a, b)
                return _result([f(u, v) for u, v in zip(a.ravel().tolist(), b.ravel().tolist())], shape, out)
        return ufunc(a, b, out=out)
    run.__name__ = ufunc.__name__
    return run


def _found(c_name: str, nargs: int, ufunc) -> tuple:
    c = _c_float(c_name, nargs, ufunc)
    return c, _flushed(c, c_name)


class _Lazy:
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


exp = unary(np.exp, "expf")
log = unary(np.log, "logf")
sin = unary(np.sin, "sinf")
cos = unary(np.cos, "cosf")
tan = unary(np.tan, "tanf")
atan = unary(np.arctan, "atanf")
expm1 = unary(np.expm1, "expm1f")
log1p = unary(np.log1p, "log1pf")
pow_ = binary(np.power, "powf")

_expf = _Lazy("expf", 1, np.exp)
_log1pf = _Lazy("log1pf", 1, np.log1p)


# ------------------------------------------------------------------ tanh: Eigen's ptanh_float

_TANH_CLAMP = _F32(7.90738964080810547)       # (8.01773357391357422 where Eigen is built with FMA)
_A0, _A1, _A2, _A3 = (_F32(v) for v in (1.394553628e-8, 2.102733560e-5, 3.520756727e-3, 1.340216100e-1))
_B0, _B1, _B2, _B3, _B4 = (_F32(v) for v in (8.015776984e-7, 3.326951409e-4, 2.597254514e-2, 4.673548340e-1, 1.0))


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


_ZERO = _F32(0.0)


def tanh(x, out=None):
    """np.tanh, but Eigen's float32 tanh (TensorFlow's) on a float32 scalar or a float32 tensor of fewer than
    ``PACKET`` elements. (Eigen's packets compute the same formula: the NumPy version of it gives TensorFlow's
    bits at every size, but at 7 to 30 times np.tanh's time, so larger tensors keep np.tanh.)"""
    if x.__class__ is _F32:
        return _scalar(_tanh_scalar(x), out)
    if _small(x):
        return _result([_tanh_scalar(v) for v in x.ravel()], x.shape, out)
    return np.tanh(x, out=out)


# ------------------------------------------------------------------ sigmoid and softplus on the scalar path

_LOGISTIC_HI = _F32(16.6355324)
_ONE = _F32(1.0)
# TensorFlow's Softplus threshold: log(float32 epsilon) + 2, in float32
_SOFTPLUS_T = _F32(_F32(np.log(np.float64(np.finfo(np.float32).eps))) + _F32(2.0))


def sigmoid_small(x):
    """Eigen's scalar sigmoid on a float32 scalar or a float32 tensor of fewer than ``PACKET`` elements;
    None for anything else."""
    if x.__class__ is _F32:
        e = _F32(_expf(_LOGISTIC_HI if x > _LOGISTIC_HI else x))
        return e / (_ONE + e)
    if _small(x):
        e = np.array([_expf(v) for v in np.minimum(x, _LOGISTIC_HI).ravel().tolist()], dtype=_F32).reshape(x.shape)
        return e / (_ONE + e)
    return None


def _softplus_one(v: float) -> float:
    if v > -_SOFTPLUS_T or v != v:
        return v
    e = _expf(v)
    return e if v < _SOFTPLUS_T else _log1pf(e)


def softplus_small(x):
    """TensorFlow's Softplus on a float32 scalar or a float32 tensor of fewer than ``PACKET`` elements; None
    for anything else."""
    if x.__class__ is _F32:
        return _F32(_softplus_one(float(x)))
    if _small(x):
        return _result([_softplus_one(v) for v in x.ravel().tolist()], x.shape, None)
    return None
