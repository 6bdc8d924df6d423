"""Scalar math for fused kernels (``tapecli.fusion``): Numba functions that LLVM inlines and
vectorizes inside a fused loop.

Numba's float32 ``exp`` and ``tanh`` call libm once per element, which stops the loop from
vectorizing (numba_kernels.py measured tanh 20 times slower than NumPy's SIMD loop). These
float32 versions are branch-free and vectorize:

* ``expf`` is NumPy's own float32 SIMD algorithm (Cody-Waite reduction, a [5/2] rational
  approximation, scaling by 2^k): it gives NumPy's results bit for bit on x86-64 (tests compare
  every 37th float32), within 2 ulp of the correctly rounded value.
* ``tanhf``: x + x^3 P(x^2) for |x| < 0.625 (Cephes' tanhf), 1 - 2 / (exp(2|x|) + 1) above; within
  1 ulp of the correctly rounded value and 2 ulp of NumPy's (tests sample the whole range).

Special values follow NumPy: nan stays nan, exp(inf) = inf, exp(-inf) = 0, tanh(+-inf) = +-1.
* ``logf`` is NumPy's own float32 SIMD algorithm too (mantissa and exponent from the bits, a [5/5]
  rational approximation): NumPy's results bit for bit on x86-64 (tests sample every float32 range).

float64 kernels call ``math.exp``/``math.tanh``/``math.log`` (libm).
"""
from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

f32 = np.float32
f64 = np.float64
BLOCK = 2048          # a fused sum adds up blocks of this many values (float64 accumulator)


@intrinsic
def _i32_as_f32(typingctx, x):
    sig = types.float32(types.int32)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.FloatType())
    return sig, codegen


@intrinsic
def _f32_as_i32(typingctx, x):
    sig = types.int32(types.float32)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(32))
    return sig, codegen


def _inline(f):
    return njit(inline="always", error_model="numpy")(f)


@_inline
def expf(x):
    # NumPy's float32 SIMD exp (AVX512F/AVX2 loops): Cody-Waite reduction with fused multiply-adds,
    # a [5/2] rational approximation, scaling by 2^k; bit for bit NumPy's result on x86-64 SIMD.
    xc = min(max(x, f32(-103.97208)), f32(88.72283))
    q = np.rint(xc * f32(1.44269504088896341))
    r = q * f32(-6.93145752e-1) + xc
    r = q * f32(-1.42860677e-6) + r
    num = f32(5.082762527590693718096e-04)
    num = num * r + f32(6.757896990527504603057e-03)
    num = num * r + f32(5.114512081637298353406e-02)
    num = num * r + f32(2.473615434895520810817e-01)
    num = num * r + f32(7.257664613233124478488e-01)
    num = num * r + f32(9.999999999980870924916e-01)
    den = f32(2.159509375685829852307e-02)
    den = den * r + f32(-2.742335390411667452936e-01)
    den = den * r + f32(1.0)
    p = num / den
    k = np.int32(q)
    k1 = k >> np.int32(1)
    k2 = k - k1
    y = p * _i32_as_f32((k1 + np.int32(127)) << np.int32(23)) * _i32_as_f32((k2 + np.int32(127)) << np.int32(23))
    y = y if x < f32(88.72284) else f32(np.inf)
    y = y if x > f32(-103.972084) else f32(0.0)
    return y if x == x else x


@_inline
def logf(x):
    # NumPy's float32 SIMD log (AVX512F/AVX2 loops): x = m * 2^e with m in (sqrt(1/2), sqrt(2)], a [5/5]
    # rational approximation of log(m) in m - 1 with fused multiply-adds, plus e * log(2). The mantissa
    # and exponent come from the bits (subnormals scaled by 2^25 first), as AVX-512's getmant/getexp.
    tiny = x < f32(1.17549435e-38)
    xs = x * f32(33554432.0) if tiny else x
    bits = _f32_as_i32(xs)
    e = f32(((bits >> np.int32(23)) & np.int32(0xFF)) - np.int32(126)) - (f32(25.0) if tiny else f32(0.0))
    m = _i32_as_f32((bits & np.int32(0x7FFFFF)) | np.int32(0x3F000000))
    low = m <= f32(0.707106781)
    m = m + m if low else m
    e = e - f32(1.0) if low else e
    r = m - f32(1.0)
    num = f32(2.589979117907922693523e-02)
    num = num * r + f32(3.808837741388407920751e-01)
    num = num * r + f32(1.480000633576506585156e+00)
    num = num * r + f32(2.112677543073053063722e+00)
    num = num * r + f32(9.999999999999998702752e-01)
    num = num * r
    den = f32(5.875095403124574342950e-03)
    den = den * r + f32(1.546476374983906719538e-01)
    den = den * r + f32(9.864942958519418960339e-01)
    den = den * r + f32(2.453006071784736363091e+00)
    den = den * r + f32(2.612677543073109236779e+00)
    den = den * r + f32(1.0)
    y = e * f32(0.693147180559945309417) + num / den
    y = f32(np.inf) if x == f32(np.inf) else y
    y = f32(-np.inf) if x == f32(0.0) else y
    y = f32(np.nan) if x < f32(0.0) else y
    return y if x == x else x


@_inline
def _expf_cephes(x):
    # Cephes' expf (degree-6 polynomial): within 1 ulp of exact, which tanhf needs (NumPy's exp
    # is within 2)
    xc = min(max(x, f32(-104.0)), f32(88.8))
    k = np.floor(xc * f32(1.44269504088896341) + f32(0.5))
    r = xc - k * f32(0.693359375)
    r = r - k * f32(-2.12194440e-4)
    z = r * r
    p = ((((f32(1.9875691500E-4) * r + f32(1.3981999507E-3)) * r + f32(8.3334519073E-3)) * r
          + f32(4.1665795894E-2)) * r + f32(1.6666665459E-1)) * r + f32(5.0000001201E-1)
    p = p * z + r + f32(1.0)
    ki = np.int32(k)
    k1 = ki >> np.int32(1)
    k2 = ki - k1
    return p * _i32_as_f32((k1 + np.int32(127)) << np.int32(23)) * _i32_as_f32((k2 + np.int32(127)) << np.int32(23))


@_inline
def tanhf(x):
    a = abs(x)
    z = x * x
    small = ((((f32(-5.70498872745E-3) * z + f32(2.06390887954E-2)) * z - f32(5.37397155531E-2)) * z
              + f32(1.33314422036E-1)) * z - f32(3.33332819422E-1)) * z * x + x
    e = _expf_cephes(min(a + a, f32(20.0)))
    big = f32(1.0) - f32(2.0) / (e + f32(1.0))
    big = big if x >= f32(0.0) else -big
    y = small if a < f32(0.625) else big
    return y if x == x else x


@_inline
def sigmoidf(x):
    # as numpy_kernels.sigmoid: exp of a non-positive number only
    e = expf(-abs(x))
    d = f32(1.0) + e
    return f32(1.0) / d if x >= f32(0.0) else e / d


@_inline
def softplusf(x):
    return (x if x > f32(0.0) else f32(0.0)) + np.float32(math.log1p(expf(-abs(x))))


@_inline
def exp64(x):
    return math.exp(x)


@_inline
def log64(x):
    return math.log(x)


@_inline
def tanh64(x):
    return math.tanh(x)


@_inline
def sigmoid64(x):
    e = math.exp(-abs(x))
    d = 1.0 + e
    return 1.0 / d if x >= 0.0 else e / d


@_inline
def softplus64(x):
    return (x if x > 0.0 else 0.0) + math.log1p(math.exp(-abs(x)))


@_inline
def relu(x, zero):
    # TensorFlow's (Eigen's) max(x, 0): nan stays nan, -0 stays -0
    return zero if x < zero else x


@_inline
def maximum(a, b):
    return a if (a > b or a != a) else b


@_inline
def minimum(a, b):
    return a if (a < b or a != a) else b


@_inline
def sign(x, zero, one):
    # np.sign: 0 for either zero, nan for nan
    return zero if x == zero else (one if x > zero else (-one if x < zero else x))


@njit(error_model="numpy", fastmath={"reassoc"})
def block_sum(buf, m):
    """The sum of buf[:m] in float64 (reassociated, so LLVM vectorizes it)."""
    s = 0.0
    for j in range(m):
        s += buf[j]
    return s
