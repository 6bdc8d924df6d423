"""TensorFlow's random numbers on the CPU, bit for bit, in NumPy.

TensorFlow draws every seeded random tensor from Philox4x32-10 (Salmon et al., SC 2011): a counter of 128 bits
and a key of 64 turn into four uint32 per counter. What this module reproduces (TensorFlow 2.21's CPU kernels,
``core/lib/random`` and ``core/kernels/random_op*``, ``stateless_random_ops*``, ``random_shuffle_op``):

* the generator, with ``PhiloxRandom::Skip``'s carry rule (:func:`philox4x32`, :func:`counter_skip`);
* the key and counter a stateless seed pair becomes (``StatelessRandomGetKeyCounter``: the pair is itself
  run through one Philox call under a fixed key, :func:`stateless_key_counter`);
* the distributions of ``random_distributions.h``: a float from 23 random mantissa bits, a double from 52,
  Box-Muller normals, truncated normals by rejection, integers by ``bits % range``;
* ``FillPhiloxRandom``: output group ``g`` reads counter ``+ g`` (a truncated normal's group ``+ 256 g`` for
  float32, ``+ 128 g`` for float64, as its rejection loop may read more), so the values do not depend on how
  TensorFlow splits the work among threads;
* the stateful ops' hidden state (:class:`StatefulRandom`): the seed pair from the global and the op seed, the
  eager op-seed generator, and each cached kernel's Philox state, which every call advances.

Box-Muller's float32 logarithm and sine/cosine are glibc's ``logf`` and ``sincosf`` (TensorFlow calls the C
library's ``log`` and, on Linux, ``sincosf``). On the 2**23 arguments Box-Muller passes them, NumPy's float32
``log`` differs from glibc's on 22% and its ``sin`` on 12%, even float64 rounded to float32 on 0.7% and 1.3%:
:func:`glibc_logf` and :func:`glibc_sincosf` redo glibc's algorithms in float64 (as glibc computes them), the
same bits as glibc 2.36 on all those arguments. Their constants are those of Arm's Optimized Routines (MIT OR
Apache-2.0 WITH LLVM-exception), where glibc's float functions come from. Float64 Box-Muller takes the C
library's ``log`` (:func:`c_log`: a long double logarithm rounded, ctypes's ``log`` where that is too close
to a rounding boundary to tell) and NumPy's float64 ``sin`` and ``cos`` (the C library's, as measured).
"""
from __future__ import annotations

import contextlib
import functools
import math
import random as _pyrandom
import secrets

import numpy as np

from tapecli.runtime.context import current

_U32 = np.uint32
_U64 = np.uint64
_M32 = 0xFFFFFFFF
_M64 = 0xFFFFFFFFFFFFFFFF
_M128 = (1 << 128) - 1

# Philox4x32-10's constants (the paper's)
_MUL_A = _U64(0xD2511F53)
_MUL_B = _U64(0xCD9E8D57)
_KEY_A = 0x9E3779B9
_KEY_B = 0xBB67AE85
_SHIFT = _U64(32)
_LOW = _U64(_M32)
_MUL_A_INT, _MUL_B_INT, _M128 = int(_MUL_A), int(_MUL_B), (1 << 128) - 1
PYTHON_BLOCKS = 8           # philox_blocks makes fewer outputs than this in Python's integers

# StatelessRandomGetKeyCounter scrambles the seed pair with one Philox call under this key
_SEED_SCRAMBLE_KEY = 0x02461E29_3EC8F720

# FillPhiloxRandomTask<Distribution, true>: each output group of a variable-sample distribution (the truncated
# normal) may read this many uint32 per output, so group g starts at counter + g * group_size * 256 / 4
_RESERVED_SAMPLES_PER_OUTPUT = 256

# tensorflow/python/framework/random_seed.py
DEFAULT_GRAPH_SEED = 87654321
MAXINT32 = 2**31 - 1


# ----------------------------------------------------------------------------------------------------------
# Philox4x32-10
# ----------------------------------------------------------------------------------------------------------

def _philox_words(c0, c1, c2, c3, key: int) -> np.ndarray:
    """Philox4x32-10 of the counters whose words are the uint64 arrays c0..c3 (values below 2**32; consumed):
    (n, 4) uint32. In place: a round is 8 array operations."""
    k0, k1 = key & _M32, (key >> 32) & _M32
    p0, p1 = np.empty_like(c0), np.empty_like(c0)
    for r in range(10):
        if r:
            k0, k1 = (k0 + _KEY_A) & _M32, (k1 + _KEY_B) & _M32
        np.multiply(c0, _MUL_A, out=p0)
        np.multiply(c2, _MUL_B, out=p1)
        np.right_shift(p1, _SHIFT, out=c0)         # c0' = hi(B c2) ^ c1 ^ k0
        c0 ^= c1
        c0 ^= _U64(k0)
        np.right_shift(p0, _SHIFT, out=c2)         # c2' = hi(A c0) ^ c3 ^ k1
        c2 ^= c3
        c2 ^= _U64(k1)
        np.bitwise_and(p1, _LOW, out=c1)           # c1' = lo(B c2)
        np.bitwise_and(p0, _LOW, out=c3)           # c3' = lo(A c0)
    out = np.empty((c0.size, 4), dtype=_U32)
    out[:, 0], out[:, 1], out[:, 2], out[:, 3] = c0, c1, c2, c3
    return out


def philox4x32(counters: np.ndarray, key: int) -> np.ndarray:
    """Philox4x32-10 of each row of ``counters`` ((n, 4) uint32, word 0 lowest) under the 64-bit ``key``
    (word 0 = its low 32 bits): (n, 4) uint32, TensorFlow's ``PhiloxRandom::operator()`` at each counter."""
    c = np.asarray(counters, dtype=_U32).reshape(-1, 4)
    return _philox_words(*(c[:, i].astype(_U64) for i in range(4)), key)


def counter_skip(counter: int, count: int) -> int:
    """``PhiloxRandom::Skip(count)`` on a 128-bit counter: a 128-bit addition of ``count`` (< 2**64) but for
    TensorFlow's carry rule (a carry out of the low word is lost when the count's high word is all ones:
    counts this large never occur)."""
    w = [(counter >> (32 * i)) & _M32 for i in range(4)]
    lo, hi = count & _M32, (count >> 32) & _M32
    w[0] = (w[0] + lo) & _M32
    if w[0] < lo:
        hi = (hi + 1) & _M32
    w[1] = (w[1] + hi) & _M32
    if w[1] < hi:
        w[2] = (w[2] + 1) & _M32
        if w[2] == 0:
            w[3] = (w[3] + 1) & _M32
    return w[0] | w[1] << 32 | w[2] << 64 | w[3] << 96


def _counter_words(counter: int, offsets) -> tuple:
    """The words (uint64 arrays) of ``counter + offsets`` (128-bit, wrapping): the counters a run of
    ``SkipOne`` calls and small ``Skip``s reaches."""
    off = np.asarray(offsets, dtype=_U64).reshape(-1)
    base_lo, base_hi = _U64(counter & _M64), _U64((counter >> 64) & _M64)
    lo = off + base_lo
    hi = (lo < base_lo).astype(_U64)
    hi += base_hi
    return lo & _LOW, lo >> _SHIFT, hi & _LOW, hi >> _SHIFT


def philox_at(key: int, counter: int, offsets) -> np.ndarray:
    """The Philox outputs at ``counter + offsets`` (128-bit) under ``key``: (len(offsets), 4) uint32."""
    return _philox_words(*_counter_words(counter, offsets), key)


def philox_blocks(key: int, counter: int, n: int) -> np.ndarray:
    """The first ``n`` outputs of a ``PhiloxRandom`` at (``key``, ``counter``): (n, 4) uint32 (fewer than
    ``PYTHON_BLOCKS`` in Python's integers, the same words: a seed's key and counter are one block, which the
    hundred NumPy calls of ``_philox_words`` on arrays of one element took many times as long to make)."""
    if n < PYTHON_BLOCKS:
        counter, key = int(counter), int(key)
        return np.array([_philox_block((counter + i) & _M128, key) for i in range(n)], dtype=_U32).reshape(n, 4)
    return _philox_words(*_counter_words(counter, np.arange(n, dtype=_U64)), key)


def _philox_block(counter: int, key: int) -> tuple:
    """Philox4x32-10 of one 128-bit counter, the words of ``_philox_words``' rounds in Python's integers."""
    c0, c1, c2, c3 = counter & _M32, (counter >> 32) & _M32, (counter >> 64) & _M32, counter >> 96
    k0, k1 = key & _M32, (key >> 32) & _M32
    for r in range(10):
        if r:
            k0, k1 = (k0 + _KEY_A) & _M32, (k1 + _KEY_B) & _M32
        p0, p1 = c0 * _MUL_A_INT, c2 * _MUL_B_INT
        c0, c1, c2, c3 = (p1 >> 32) ^ c1 ^ k0, p1 & _M32, (p0 >> 32) ^ c3 ^ k1, p0 & _M32
    return c0, c1, c2, c3


def philox_uint32(key: int, counter: int, n: int) -> np.ndarray:
    """The first ``n`` uint32 of a ``SingleSampleAdapter`` over a fresh ``PhiloxRandom`` at (key, counter)."""
    return philox_blocks(key, counter, -(-n // 4)).reshape(-1)[:n]


# ----------------------------------------------------------------------------------------------------------
# Seeds
# ----------------------------------------------------------------------------------------------------------

def stateless_key_counter(seed) -> tuple[int, int]:
    """The Philox key (64 bits) and counter (128 bits) that ``StatelessRandomGetKeyCounter`` (what
    ``tf.random.stateless_*`` run for their default ``alg="auto_select"``, Philox on the CPU) makes of a seed
    pair: each seed as a uint64 (an int32 seed sign-extended: the same as its int64), both as a counter under a
    fixed key, one Philox call; its first two words are the key, its last two the counter's high half.
    TensorFlow's tensors: key ``[key]``, counter ``[counter & 2**64-1, counter >> 64]`` (uint64)."""
    s0, s1 = (int(s) & _M64 for s in seed)
    mix = philox_blocks(_SEED_SCRAMBLE_KEY, s0 | s1 << 64, 1)[0]
    key = int(mix[0]) | int(mix[1]) << 32
    counter = int(mix[2]) << 64 | int(mix[3]) << 96
    return key, counter


def stateful_key_counter(seed: int, seed2: int) -> tuple[int, int]:
    """A stateful kernel's initial Philox state, ``PhiloxRandom(seed, seed2)``: the key is ``seed``, the
    counter's high half ``seed2`` (both as uint64), its low half zero."""
    return int(seed) & _M64, (int(seed2) & _M64) << 64


def truncate_seed(seed: int) -> int:
    """``random_seed._truncate_seed``: Python's ``seed % (2**31 - 1)`` (so a negative seed is allowed)."""
    return int(seed) % MAXINT32


# ----------------------------------------------------------------------------------------------------------
# glibc's float math, as Box-Muller calls it
# ----------------------------------------------------------------------------------------------------------

_H = float.fromhex
# logf: log(x) = log1p(z/c - 1) + log(c) + k ln2, z/c - 1 from a 16-entry table of (1/c, log c)
_LOGF_INVC = np.array([_H(v) for v in (
    "0x1.661ec79f8f3bep+0", "0x1.571ed4aaf883dp+0", "0x1.49539f0f010bp+0", "0x1.3c995b0b80385p+0",
    "0x1.30d190c8864a5p+0", "0x1.25e227b0b8eap+0", "0x1.1bb4a4a1a343fp+0", "0x1.12358f08ae5bap+0",
    "0x1.0953f419900a7p+0", "0x1p+0", "0x1.e608cfd9a47acp-1", "0x1.ca4b31f026aap-1",
    "0x1.b2036576afce6p-1", "0x1.9c2d163a1aa2dp-1", "0x1.886e6037841edp-1", "0x1.767dcf5534862p-1")])
_LOGF_LOGC = np.array([_H(v) for v in (
    "-0x1.57bf7808caadep-2", "-0x1.2bef0a7c06ddbp-2", "-0x1.01eae7f513a67p-2", "-0x1.b31d8a68224e9p-3",
    "-0x1.6574f0ac07758p-3", "-0x1.1aa2bc79c81p-3", "-0x1.a4e76ce8c0e5ep-4", "-0x1.1973c5a611cccp-4",
    "-0x1.252f438e10c1ep-5", "0x0p+0", "0x1.aa5aa5df25984p-5", "0x1.c5e53aa362eb4p-4",
    "0x1.526e57720db08p-3", "0x1.bc2860d22477p-3", "0x1.1058bc8a07ee1p-2", "0x1.4043057b6ee09p-2")])
_LOGF_LN2 = _H("0x1.62e42fefa39efp-1")
_LOGF_A0, _LOGF_A1, _LOGF_A2 = _H("-0x1.00ea348b88334p-2"), _H("0x1.5575b0be00b6ap-2"), _H("-0x1.ffffef20a4123p-2")
_LOGF_OFF = 0x3F330000

# sincosf: reduction by n * pi/2 (n from x * 2/pi * 2^24 truncated), then polynomials in double
_SC_HPI_INV = _H("0x1.45F306DC9C883p+23")
_SC_HPI = _H("0x1.921FB54442D18p0")
_SC_HPI_HI = _SC_HPI * 134217729.0 - (_SC_HPI * 134217729.0 - _SC_HPI)      # (Veltkamp's split)
_SC_HPI_LO = _SC_HPI - _SC_HPI_HI
_SC_COS = (1.0, _H("-0x1.ffffffd0c621cp-2"), _H("0x1.55553e1068f19p-5"), _H("-0x1.6c087e89a359dp-10"),
           _H("0x1.99343027bf8c3p-16"))
_SC_SIN = (_H("-0x1.555545995a603p-3"), _H("0x1.1107605230bc4p-7"), _H("-0x1.994eb3774cf24p-13"))


def _abstop12(x: np.ndarray) -> np.ndarray:
    return (x.view(_U32) >> _U32(20)) & _U32(0x7FF)


def glibc_logf(x) -> np.ndarray:
    """glibc's ``logf`` (2.28 and later) of positive normal float32 ``x``: the same bits as the C function (for
    all 2**23 arguments ``max(k * 2**-23, 1e-7f)`` that Box-Muller passes it, and 4 million others tried)."""
    x = np.asarray(x, dtype=np.float32)
    if x.size and not (float(x.min()) >= float(np.finfo(np.float32).tiny) and np.isfinite(x).all()):
        raise ValueError("glibc_logf takes positive normal floats")
    ix = x.view(_U32)
    tmp = ix - _U32(_LOGF_OFF)                               # (uint32, wrapping)
    i = (tmp >> _U32(19)) & _U32(15)
    k = tmp.view(np.int32) >> np.int32(23)                   # (arithmetic shift)
    z = (ix - (tmp & _U32(0xFF800000))).view(np.float32).astype(np.float64)
    r = z * _LOGF_INVC[i] - 1.0
    y0 = _LOGF_LOGC[i] + k * _LOGF_LN2
    r2 = r * r
    y = _LOGF_A1 * r + _LOGF_A2
    y = _LOGF_A0 * r2 + y
    y = y * r2 + (y0 + r)
    return np.where(ix == 0x3F800000, np.float32(0.0), y.astype(np.float32))


def glibc_sincosf(x) -> tuple[np.ndarray, np.ndarray]:
    """glibc's ``sincosf`` (2.28 and later, the build for CPUs with FMA that x86-64 machines of the last decade
    run) of float32 ``x`` with ``|x| < 120``: (sin, cos), the same bits as the C function (for all 2**23 angles
    ``2 pi u`` that Box-Muller passes it, and 4 million others tried). glibc's build without FMA rounds the
    reduction ``x - n pi/2`` twice, a different bit for a few arguments per million beyond 2 pi."""
    y = np.asarray(x, dtype=np.float32)
    top = _abstop12(y)
    if y.size and int(top.max()) >= 0x42F:
        raise ValueError("glibc_sincosf takes |x| < 120")
    xd = y.astype(np.float64)
    small = top < 0x3F4                      # |x| < pi/4 or a little more (the top 12 bits): no reduction
    tiny = top < 0x398                       # |x| < 2^-12: sin x = x, cos x = 1
    n = ((xd * _SC_HPI_INV).astype(np.int32) + np.int32(0x800000)) >> np.int32(24)
    n[small] = 0
    # x - n pi/2 with one rounding, as glibc's FMA build computes it: n pi/2 = p + e exactly (Dekker's product,
    # pi/2 split in halves of 26 and 27 bits, |n| < 2^7), and x - p is exact (Sterbenz)
    p = n * _SC_HPI
    e = (n * _SC_HPI_HI - p) + n * _SC_HPI_LO
    xr = (xd - p) - e
    x2 = xr * xr
    xs = np.where(((n ^ (n >> 1)) & 1) != 0, -xr, xr)      # sin's sign in quadrants 0..3: +, -, -, +
    c0, c1, c2, c3, c4 = _SC_COS
    s1, s2, s3 = _SC_SIN
    x4 = x2 * x2
    x3 = x2 * xs
    cc2 = c3 + x2 * c4
    ss1 = s2 + x2 * s3
    cc1 = c0 + x2 * c1
    x5 = x3 * x2
    x6 = x4 * x2
    sv = ((xs + x3 * s1) + x5 * ss1).astype(np.float32)
    cv = ((cc1 + x4 * c2) + x6 * cc2).astype(np.float32)
    # quadrants 2 and 3 take the cosine polynomial with every coefficient negated: the negated value, exactly
    np.negative(cv, out=cv, where=(n & 2) != 0)
    odd = (n & 1) != 0
    sin, cos = np.where(odd, cv, sv), np.where(odd, sv, cv)
    return np.where(tiny, y, sin), np.where(tiny, np.float32(1.0), cos)


@functools.cache
def libm_function(name: str, single: bool = False, arguments: int = 1):
    """The C library's function ``name`` of one double (``single``: its float one, ``log1pf``; ``arguments``: of
    that many, ``pow``) through ctypes (None where none loads)."""
    import ctypes
    kind = ctypes.c_float if single else ctypes.c_double
    for library_name in ("libm.so.6", "libm.dylib", None):
        try:
            library = ctypes.CDLL(library_name)
        except OSError:
            continue
        f = getattr(library, name, None)
        if f is not None:
            f.restype, f.argtypes = kind, [kind] * arguments
            return f
    return None


# A libm log within 0.52 ulp (glibc's bound: 0.519) rounds as the exact value does wherever that is more than
# 0.02 ulp from a rounding boundary; the long-double reference is within 2^-11 ulp of the exact value.
_LOG_MARGIN = 0.03


def c_log(x) -> np.ndarray:
    """The C library's double ``log`` of positive ``x`` (what TensorFlow's float64 Box-Muller calls), without a
    call per element: NumPy's long-double log rounded to double where that is more than ``_LOG_MARGIN`` ulp from
    a rounding boundary (glibc's log rounds those the same), ctypes's ``log`` on the few percent left."""
    x = np.asarray(x, dtype=np.float64)
    c = libm_function("log")
    if np.finfo(np.longdouble).nmant < 60:           # no wider type: every element through the C library
        if c is None:
            return np.log(x)
        return np.array([c(v) for v in x.ravel().tolist()], dtype=np.float64).reshape(x.shape)
    ref = np.log(x.astype(np.longdouble))
    y = ref.astype(np.float64)
    yl = y.astype(np.longdouble)
    other = np.where(ref >= yl, np.nextafter(y, np.inf), np.nextafter(y, -np.inf)).astype(np.longdouble)
    gap = np.abs(other - yl)
    close = np.abs(ref - (yl + other) / 2) < _LOG_MARGIN * gap
    if c is not None and close.any():
        idx = np.flatnonzero(close)
        y.reshape(-1)[idx] = [c(v) for v in x.reshape(-1)[idx].tolist()]
    return y


# ----------------------------------------------------------------------------------------------------------
# Distributions (random_distributions.h): uint32 words in, values out
# ----------------------------------------------------------------------------------------------------------

def uint32_to_float(bits) -> np.ndarray:
    """``Uint32ToFloat``: 1.m - 1 with the low 23 bits as the mantissa m: [0, 1) in steps of 2**-23."""
    b = np.asarray(bits, dtype=_U32)
    return ((b & _U32(0x7FFFFF)) | _U32(0x3F800000)).view(np.float32) - np.float32(1.0)


def uint64_to_double(hi, lo) -> np.ndarray:
    """``Uint64ToDouble(x0, x1)``: 1.m - 1 with 20 bits of x0 and 32 of x1 as the mantissa."""
    hi = np.asarray(hi, dtype=_U32).astype(_U64)
    lo = np.asarray(lo, dtype=_U32).astype(_U64)
    return (((hi & _U64(0xFFFFF)) << _U64(32)) | lo | _U64(0x3FF0000000000000)).view(np.float64) - 1.0


def box_muller_float(x0, x1) -> tuple[np.ndarray, np.ndarray]:
    """``BoxMullerFloat``: u1 = max(Uint32ToFloat(x0), 1e-7f), v1 = (float)(2 pi (double) * Uint32ToFloat(x1)),
    u2 = sqrtf(-2 logf(u1)), (sin v1 * u2, cos v1 * u2), all float32 but v1's product."""
    u1 = np.maximum(uint32_to_float(x0), np.float32(1e-7))
    v1 = (np.float64(2.0 * math.pi) * uint32_to_float(x1).astype(np.float64)).astype(np.float32)
    u2 = np.sqrt(np.float32(-2.0) * glibc_logf(u1))
    s, c = glibc_sincosf(v1)
    return s * u2, c * u2


def box_muller_double(x0, x1, x2, x3) -> tuple[np.ndarray, np.ndarray]:
    """``BoxMullerDouble``: u1 = max(Uint64ToDouble(x0, x1), 1e-7), v1 = 2 pi Uint64ToDouble(x2, x3),
    u2 = sqrt(-2 log u1), (sin v1 * u2, cos v1 * u2)."""
    u1 = np.maximum(uint64_to_double(x0, x1), 1e-7)
    v1 = (2.0 * math.pi) * uint64_to_double(x2, x3)
    u2 = np.sqrt(-2.0 * c_log(u1))
    return np.sin(v1) * u2, np.cos(v1) * u2


# ----------------------------------------------------------------------------------------------------------
# FillPhiloxRandom
# ----------------------------------------------------------------------------------------------------------

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_INTS = (np.dtype(np.int32), np.dtype(np.int64))                        # uniform_int
_FULL_INTS = _INTS + (np.dtype(np.uint32), np.dtype(np.uint64))         # full_int


def _fixed_groups(kind: str, dtype: np.dtype, blocks: np.ndarray, minval=None, maxval=None) -> np.ndarray:
    """The values of a fixed-sample distribution from its groups' Philox outputs ((groups, 4) uint32), in
    order: 4 per group for 32-bit types, 2 for 64-bit ones."""
    b = blocks
    wide = dtype.itemsize == 8
    if kind == "uniform":
        if dtype == np.float32:
            return uint32_to_float(b.reshape(-1))
        return uint64_to_double(b[:, 0::2].reshape(-1), b[:, 1::2].reshape(-1))
    if kind == "normal":
        if dtype == np.float32:
            f0, f1 = box_muller_float(b[:, 0::2].reshape(-1), b[:, 1::2].reshape(-1))
            return np.stack([f0, f1], axis=1).reshape(-1)
        d0, d1 = box_muller_double(b[:, 0], b[:, 1], b[:, 2], b[:, 3])
        return np.stack([d0, d1], axis=1).reshape(-1)
    if kind == "full_int":
        if wide:
            v = b[:, 0::2].reshape(-1).astype(_U64) | (b[:, 1::2].reshape(-1).astype(_U64) << _U64(32))
            return v.view(dtype)
        return b.reshape(-1).view(dtype)
    if kind == "uniform_int":
        lo, hi = int(minval), int(maxval)
        if wide:
            span = _U64((hi - lo) & _M64)
            v = b[:, 0::2].reshape(-1).astype(_U64) | (b[:, 1::2].reshape(-1).astype(_U64) << _U64(32))
            return ((v % span) + _U64(lo & _M64)).view(np.int64)
        span = _U32((hi - lo) & _M32)
        return ((b.reshape(-1) % span) + _U32(lo & _M32)).view(np.int32)
    raise ValueError(kind)


def _truncated_normal(dtype: np.dtype, key: int, counter: int, size: int) -> np.ndarray:
    """``TruncatedNormalDistribution`` as ``FillPhiloxRandomTask<.., true>`` runs it: group g (4 float32 or
    2 float64 values) reads uint32 one at a time from counter + g * 256 (float32) or + g * 128 (float64),
    Box-Muller pairs in order, keeping the values of magnitude below 2 until the group is full."""
    single = dtype == np.float32
    group = 4 if single else 2
    stride = group * _RESERVED_SAMPLES_PER_OUTPUT // 4
    groups = -(-size // group)
    out = np.empty((groups, group), dtype=dtype)
    filled = np.zeros(groups, dtype=np.int64)
    pending = np.arange(groups, dtype=np.int64)
    step = 0
    while pending.size:
        # the next Philox output of every pending group: two Box-Muller pairs (float32) or one (float64)
        offsets = pending.astype(_U64) * _U64(stride) + _U64(step)
        b = _philox_words(*_counter_words(counter, offsets), key)
        if single:
            f0, f1 = box_muller_float(b[:, 0::2].reshape(-1), b[:, 1::2].reshape(-1))
            cand = np.stack([f0, f1], axis=1).reshape(-1, 4)
        else:
            cand = np.stack(box_muller_double(b[:, 0], b[:, 1], b[:, 2], b[:, 3]), axis=1)
        keep = np.abs(cand) < (np.float32(2.0) if single else 2.0)
        if step == 0:                        # most groups keep all their first candidates: fill those at once
            full = keep.all(axis=1)
            out[full] = cand[full]
            filled[full] = group
            pending, cand, keep = pending[~full], cand[~full], keep[~full]
        slot = filled[pending][:, None] + np.cumsum(keep, axis=1) - 1
        take = keep & (slot < group)
        rows = np.broadcast_to(pending[:, None], take.shape)[take]
        out[rows, slot[take]] = cand[take]
        filled[pending] += take.sum(axis=1)
        pending = pending[filled[pending] < group]
        step += 1
    return out.reshape(-1)[:size]


def philox_fill(kind: str, dtype, key: int, counter: int, size: int, minval=None, maxval=None) -> np.ndarray:
    """``FillPhiloxRandom`` of ``size`` values (1-D) of a distribution from the generator at (key, counter):
    ``kind`` "uniform" (float32/float64 in [0, 1)), "normal", "truncated_normal", "uniform_int" (int32/int64
    in [minval, maxval): ``minval + bits % (maxval - minval)``) or "full_int" (raw bits as int32, uint32,
    int64 or uint64). The fixed-sample kinds read one Philox output per group of 4 (32-bit) or 2 (64-bit)
    values from ``counter + group``."""
    dtype = np.dtype(dtype)
    allowed = {"uniform": _FLOATS, "normal": _FLOATS, "truncated_normal": _FLOATS, "uniform_int": _INTS,
               "full_int": _FULL_INTS}[kind]
    if dtype not in allowed:
        raise TypeError(f"TensorFlow's {kind} has no {dtype.name} kernel")
    size = int(size)
    if size == 0:
        return np.empty(0, dtype=dtype)
    if kind == "truncated_normal":
        return _truncated_normal(dtype, key, counter, size)
    per = 2 if dtype.itemsize == 8 else 4
    blocks = philox_blocks(key, counter, -(-size // per))
    return _fixed_groups(kind, dtype, blocks, minval, maxval)[:size]


def _shape(shape) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(d) for d in shape)


def _float_arg(dtype: np.dtype, value):
    return dtype.type(value)


# ----------------------------------------------------------------------------------------------------------
# Stateless ops (tf.random.stateless_*, alg="auto_select": Philox on the CPU)
# ----------------------------------------------------------------------------------------------------------

def stateless_uniform(seed, shape, dtype=np.float32, minval=0, maxval=None) -> np.ndarray:
    """``tf.random.stateless_uniform``: floats ``rnd * (maxval - minval) + minval`` in ``dtype`` (maxval
    None: 1), rnd from ``StatelessRandomUniformV2``; int32/int64 with both bounds ``StatelessRandomUniformIntV2``
    (``minval + bits % (maxval - minval)``); an integer dtype with ``minval=maxval=None`` the raw bits
    (``StatelessRandomUniformFullIntV2``)."""
    dtype = np.dtype(dtype)
    shape = _shape(shape)
    size = math.prod(shape)
    key, counter = stateless_key_counter(seed)
    if dtype.kind in "iu":
        if minval is None and maxval is None:
            return philox_fill("full_int", dtype, key, counter, size).reshape(shape)
        if maxval is None:
            raise ValueError("an integer stateless_uniform needs maxval")
        if not int(minval) < int(maxval):
            raise ValueError(f"Need minval < maxval, got {minval} >= {maxval}")
        return philox_fill("uniform_int", dtype, key, counter, size, minval, maxval).reshape(shape)
    lo = _float_arg(dtype, 0 if minval is None else minval)
    hi = _float_arg(dtype, 1 if maxval is None else maxval)
    rnd = philox_fill("uniform", dtype, key, counter, size).reshape(shape)
    return np.asarray(rnd * (hi - lo) + lo)


def stateless_normal(seed, shape, dtype=np.float32, mean=0.0, stddev=1.0) -> np.ndarray:
    """``tf.random.stateless_normal``: ``rnd * stddev + mean`` in ``dtype``, rnd from ``StatelessRandomNormalV2``
    (Box-Muller on pairs of uint32 for float32, on four for float64)."""
    dtype = np.dtype(dtype)
    shape = _shape(shape)
    key, counter = stateless_key_counter(seed)
    rnd = philox_fill("normal", dtype, key, counter, math.prod(shape)).reshape(shape)
    return np.asarray(rnd * _float_arg(dtype, stddev) + _float_arg(dtype, mean))


def stateless_truncated_normal(seed, shape, dtype=np.float32, mean=0.0, stddev=1.0) -> np.ndarray:
    """``tf.random.stateless_truncated_normal``: ``rnd * stddev + mean``, rnd from
    ``StatelessTruncatedNormalV2`` (standard normals of magnitude below 2, by rejection)."""
    dtype = np.dtype(dtype)
    shape = _shape(shape)
    key, counter = stateless_key_counter(seed)
    rnd = philox_fill("truncated_normal", dtype, key, counter, math.prod(shape)).reshape(shape)
    return np.asarray(rnd * _float_arg(dtype, stddev) + _float_arg(dtype, mean))


# ----------------------------------------------------------------------------------------------------------
# Shuffle (RandomShuffle)
# ----------------------------------------------------------------------------------------------------------

def fisher_yates(targets, n: int) -> np.ndarray:
    """The array ``range(n)`` after ``swap(a[i], a[targets[i]])`` for i = 0 .. n-2 in turn (``targets[i] >= i``),
    without a loop over i. At time i, position p >= i holds what the last step m < i that wrote it
    (``targets[m] = p``) moved there, the value position m held at time m, else its own index: each
    position's value at its own time follows such writers back to a position never written before its own
    time (pointer jumping, a few passes)."""
    j = np.asarray(targets, dtype=np.int64)
    steps = n - 1
    order = np.argsort(j, kind="stable")                 # steps grouped by target, in order within a group
    tj = j[order]
    same = tj[1:] == tj[:-1]
    previous = np.full(steps, -1, dtype=np.int64)        # the last earlier step with the same target
    previous[order[1:][same]] = order[:-1][same]
    ends = np.flatnonzero(np.append(~same, True))        # each target's last step
    target = tj[ends]
    last = order[ends]
    last = np.where(last == target, previous[last], last)   # a step swapping a[i] with itself writes nothing
    held = np.arange(n, dtype=np.int64)                  # -> the value each position holds at its own time
    written = last >= 0
    held[target[written]] = last[written]
    while True:
        deeper = held[held]
        if np.array_equal(deeper, held):
            break
        held = deeper
    out = np.empty(n, dtype=np.int64)
    moved = np.where(previous >= 0, held[np.maximum(previous, 0)], j)   # what sits at targets[i] at time i
    out[:-1] = np.where(j == np.arange(steps), held[:-1], moved)
    out[-1] = held[-1]
    return out


def shuffle_permutation(key: int, counter: int, n: int) -> np.ndarray:
    """``RandomShuffle``'s permutation of ``n`` (>= 2) rows: a Fisher-Yates pass, ``swap(i, i + u_i % (n - i))``
    for i = 0 .. n-2, u_i the uint32 of a ``SingleSampleAdapter`` from (key, counter); row i of the output is
    row ``perm[i]`` of the input."""
    u = philox_uint32(key, counter, n - 1).astype(np.int64)
    return fisher_yates(np.arange(n - 1) + u % np.arange(n, 1, -1), n)


def dataset_shuffle(elements, buffer_size: int, seed: int, seed2: int, iteration: int = 0,
                    reshuffle_each_iteration: bool = True):
    """The elements of ``elements`` (an iterable, perhaps endless) in the order ``tf.data.Dataset.shuffle(
    buffer_size)`` (``ShuffleDatasetV3`` on the CPU) yields them on its ``iteration``-th pass (0 first), read
    from the input only as the buffer needs them.

    ``seed, seed2`` are the op's (``get_seed(seed)`` of the Python call; (0, 0) means random seeds, not
    reproducible). With ``reshuffle_each_iteration`` each pass draws its own pair, the uint32 number
    ``2 * iteration`` and ``2 * iteration + 1`` of a ``SingleSampleAdapter`` at ``PhiloxRandom(seed, seed2)``;
    without, every pass uses (seed, seed2). A pass's generator is ``PhiloxRandom(pair)``: the buffer fills to
    ``buffer_size`` elements (a ring, in input order), then each output takes the element at
    ``start + u % (number in buffer)``, swaps the ring's first element into its place and drops the first
    slot, the buffer refilling by one from the input before each draw while the input lasts."""
    if reshuffle_each_iteration:
        key, counter = stateful_key_counter(seed, seed2)
        pair = philox_uint32(key, counter, 2 * iteration + 2)[-2:]
        seed, seed2 = int(pair[0]), int(pair[1])
    key, counter = stateful_key_counter(seed, seed2)
    size, source = int(buffer_size), iter(elements)
    ring: dict[int, object] = {}            # (by slot: a buffer as large as asked is never laid out ahead)
    start = end = 0
    exhausted = False
    for u in _draws(key, counter):
        while not exhausted and end - start < size:
            try:
                ring[end % size] = next(source)
                end += 1
            except StopIteration:
                exhausted = True
        if end == start:
            return
        index = (start + u % (end - start)) % size
        yield ring[index]
        ring[index] = ring[start % size]
        start += 1


def _draws(key: int, counter: int, blocks: int = 256):
    """The uint32 of a ``SingleSampleAdapter`` at (key, counter), one by one, made ``blocks`` at a time."""
    while True:
        yield from philox_blocks(key, counter, blocks).reshape(-1).tolist()
        counter = (counter + blocks) & _M128


# ----------------------------------------------------------------------------------------------------------
# Stateful ops in eager mode
# ----------------------------------------------------------------------------------------------------------

def run_state() -> StatefulRandom:
    """The run's TensorFlow global seed and its seeded ops' kernel states, made at the first use."""
    ctx = current()
    if ctx.tf_random_state is None:
        ctx.tf_random_state = StatefulRandom()
    return ctx.tf_random_state


class StatefulRandom:
    """The hidden state of TensorFlow's stateful random ops in eager mode, for one program's run.

    * ``tf.random.set_seed(s)`` (:meth:`set_seed`): the global seed, a ``random.Random(s)`` that draws the
      op seed of every op given none, and clearing the kernel cache (so each kernel starts again).
    * :meth:`get_seed` is ``random_seed.get_seed``: (global, op) seeds, each ``% (2**31 - 1)``; op seed None:
      ``rng.randint(0, 2**31 - 1)`` (a fresh kernel per call); no global seed: (87654321, op seed); neither:
      (None, None), which the kernel replaces with random 64-bit seeds (non-deterministic); (0, 0) becomes
      (0, 2**31 - 1).
    * Each op type, dtype and seed pair is one cached kernel (eager's kernel cache) holding a Philox state:
      key ``seed``, counter ``seed2 << 64``. A call of n values reads from the current state and skips it by
      ``n * 256`` (``ReserveRandomOutputs(n, 256)``); a shuffle of n rows skips ``ceil((n - 1) / 4)``. So two
      calls ``tf.random.normal([3], seed=1)`` give different values, and a uniform and a normal with the same
      seeds do not share a state.
    * Within :meth:`function_kernels`, a traced function's call (a tf.data function's, a tf.function's): its ops are a graph's,
      each op a kernel of its own, in the kernels of the function's instantiation. So the n-th call of a kind
      and seeds in the function reads the n-th such kernel: two ``tf.random.uniform([], seed=3)`` in one
      function give the same values, each kernel going on at the function's next call.
    """

    def __init__(self, global_seed=None):
        self.global_seed = None
        self._rng: _pyrandom.Random | None = None
        self._kernels: dict[tuple, list[int]] = {}
        self._function_calls: dict[tuple, int] | None = None     # within function_kernels: each kernel's calls
        if global_seed is not None:
            self.set_seed(global_seed)

    def set_seed(self, seed) -> None:
        """``tf.random.set_seed(seed)`` in eager mode (None: back to no global seed, the kernels cleared too)."""
        if seed is not None and not isinstance(seed, int):
            seed = int(np.asarray(seed))        # (context._set_global_seed: a NumPy integer through int)
        self.global_seed = seed
        self._rng = _pyrandom.Random(seed)
        self._kernels.clear()

    def get_seed(self, op_seed=None) -> tuple:
        """``random_seed.get_seed(op_seed)`` in eager mode: the (seed, seed2) attributes of the op."""
        if self.global_seed is not None:
            if op_seed is None:
                op_seed = self._rng.randint(0, MAXINT32)
            seeds = truncate_seed(self.global_seed), truncate_seed(op_seed)
        elif op_seed is not None:
            seeds = DEFAULT_GRAPH_SEED, truncate_seed(op_seed)
        else:
            seeds = None, None
        if seeds == (0, 0):
            return 0, MAXINT32
        return seeds

    def enter_function(self, kernels: dict) -> tuple:
        """One call of a traced function whose instantiation's kernels are ``kernels`` starts; what it gives,
        :meth:`leave_function` takes when the call ends (a tf.data function's call: no context manager's cost)."""
        saved = self._kernels, self._function_calls
        self._kernels, self._function_calls = kernels, {}
        return saved

    def leave_function(self, saved: tuple) -> None:
        self._kernels, self._function_calls = saved

    @contextlib.contextmanager
    def function_kernels(self, kernels: dict):
        """Within the block, one call of a traced function whose instantiation's kernels are ``kernels``."""
        saved = self.enter_function(kernels)
        try:
            yield
        finally:
            self.leave_function(saved)

    def reserve(self, op: str, dtype, seeds: tuple, count: int) -> tuple[int, int]:
        """The (key, counter) the kernel ``op`` of ``dtype`` with attributes ``seeds`` = (seed, seed2) reads
        from now, then its state skipped by ``count`` Philox outputs (``GuardedPhiloxRandom::ReserveSamples128``)."""
        seed, seed2 = (0, 0) if seeds == (None, None) else seeds
        name = (op, np.dtype(dtype).name, seed, seed2)
        if self._function_calls is not None:
            calls = self._function_calls[name] = self._function_calls.get(name, -1) + 1
            name += (calls,)
        state = self._kernels.get(name)
        if state is None:
            if seed == 0 and seed2 == 0:                   # GuardedPhiloxRandom::Init: random seeds
                seed, seed2 = secrets.randbits(64), secrets.randbits(64)
            state = self._kernels[name] = list(stateful_key_counter(seed, seed2))
        key, counter = state
        state[1] = counter_skip(counter, count)
        return key, counter

    def uniform(self, shape, minval=0, maxval=None, dtype=np.float32, seed=None) -> np.ndarray:
        """``tf.random.uniform``: ``RandomUniform`` (floats in [0, 1)), scaled as random_ops.py does: by
        nothing where minval is the int 0 and maxval None or the int 1, ``rnd * maxval`` where only minval is
        the int 0, else ``rnd * (maxval - minval) + minval``; int32/int64 ``RandomUniformInt`` (needs maxval)."""
        dtype = np.dtype(dtype)
        shape = _shape(shape)
        size = math.prod(shape)
        if dtype.kind in "iu":
            if maxval is None:
                raise ValueError(f"Must specify maxval for integer dtype {dtype}")
            if not int(minval) < int(maxval):
                raise ValueError(f"Need minval < maxval, got {minval} >= {maxval}")
            key, counter = self.reserve("RandomUniformInt", dtype, self.get_seed(seed), size * 256)
            return philox_fill("uniform_int", dtype, key, counter, size, minval, maxval).reshape(shape)
        if maxval is None:
            maxval = 1
        minval_is_zero = isinstance(minval, int) and minval == 0
        maxval_is_one = isinstance(maxval, int) and maxval == 1
        key, counter = self.reserve("RandomUniform", dtype, self.get_seed(seed), size * 256)
        rnd = philox_fill("uniform", dtype, key, counter, size).reshape(shape)
        if minval_is_zero:
            return rnd if maxval_is_one else np.asarray(rnd * _float_arg(dtype, maxval))
        lo, hi = _float_arg(dtype, minval), _float_arg(dtype, maxval)
        return np.asarray(rnd * (hi - lo) + lo)

    def normal(self, shape, mean=0.0, stddev=1.0, dtype=np.float32, seed=None) -> np.ndarray:
        """``tf.random.normal``: ``RandomStandardNormal`` times stddev plus mean."""
        return self._scaled("RandomStandardNormal", "normal", shape, mean, stddev, dtype, seed)

    def truncated_normal(self, shape, mean=0.0, stddev=1.0, dtype=np.float32, seed=None) -> np.ndarray:
        """``tf.random.truncated_normal``: ``TruncatedNormal`` times stddev plus mean."""
        return self._scaled("TruncatedNormal", "truncated_normal", shape, mean, stddev, dtype, seed)

    def _scaled(self, op: str, kind: str, shape, mean, stddev, dtype, seed) -> np.ndarray:
        """The kernel ``op``'s values of ``kind`` (philox_fill's), times stddev plus mean in ``dtype``."""
        dtype = np.dtype(dtype)
        shape = _shape(shape)
        size = math.prod(shape)
        key, counter = self.reserve(op, dtype, self.get_seed(seed), size * 256)
        rnd = philox_fill(kind, dtype, key, counter, size).reshape(shape)
        return np.asarray(rnd * _float_arg(dtype, stddev) + _float_arg(dtype, mean))

    def shuffle(self, value, seed=None) -> np.ndarray:
        """``tf.random.shuffle``: ``RandomShuffle``'s rows of ``value`` along axis 0. A tensor of at most one
        element or one row is returned as it is, and its kernel's state does not move (the op seed is still
        drawn where none is given)."""
        x = np.asarray(value)
        seeds = self.get_seed(seed)
        if x.size <= 1 or x.shape[0] <= 1:
            return x.copy()
        n = x.shape[0]
        key, counter = self.reserve("RandomShuffle", x.dtype, seeds, (n - 1 + 3) // 4)
        return x[shuffle_permutation(key, counter, n)]
