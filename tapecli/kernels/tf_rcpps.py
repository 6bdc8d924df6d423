"""The approximate reciprocal RCPPS and reciprocal square root RSQRTPS of this machine's kind of CPU, for
TensorFlow's float32 Reciprocal and Rsqrt (tf_float32.reciprocal, tf_float32.rsqrt).

They are the x86 vector instructions that Eigen's AVX packets take for 1 / x and 1 / sqrt(x), and not IEEE
arithmetic: RCPPS's result for x = 1.m * 2**e is a table's entry for the first 12 bits of m, scaled by 2**-e,
and 0 where that falls below float32's smallest normal number; RSQRTPS's one of two tables' (for e even and odd),
scaled by 2**-(e // 2). The tables are the processor's own: the ones in tf_rcpps_tables.py were read off an AMD EPYC of family
25 with AVX-512 (Zen 4) for all their 4,096 entries, each the 12 fraction bits of a value in [0.5, 1) (the rest
are zeros), as little-endian uint16 (base64); family 25's Zen 3 is taken to share them (not measured). Intel's and
other families' tables are not known here, so there tapecli keeps 1 / x and 1 / sqrt(x). Eigen refines an
entry by one Newton step; TensorFlow's threads flush subnormal numbers to zero, in and out. Measured against
TensorFlow 2.21 on floats of every exponent, zeros, infinities and NaN: all equal."""
from __future__ import annotations

import functools

import numpy as np

from tapecli.kernels.cpu import cpu

_F32 = np.float32
_MAGNITUDE, _SMALLEST_NORMAL, _INFINITY = np.uint32(0x7FFFFFFF), np.uint32(0x00800000), np.uint32(0x7F800000)


@functools.cache
def _entries(name: str) -> np.ndarray:
    """The entries of tf_rcpps_tables' table ``name`` as float32 bits (exponent field 126), as int64 to scale.
    The tables (33 KB of text) are imported on first use: most runs take no reciprocal."""
    import base64
    from tapecli.kernels import tf_rcpps_tables
    fractions = np.frombuffer(base64.b64decode("".join(getattr(tf_rcpps_tables, name))), "<u2").astype(np.int64)
    return (126 << 23) | (fractions << 11)


def known() -> bool:
    """Whether this machine's RCPPS and RSQRTPS are the tables' (an AMD x86 of family 25 with AVX, whose packets
    TensorFlow's Eigen takes)."""
    vendor, family, flags = cpu()
    return vendor == "AuthenticAMD" and family == "25" and "avx" in flags


def _flushed(v: np.ndarray) -> np.ndarray:
    """Subnormal numbers as zeros of their sign (TensorFlow's threads' flush-to-zero)."""
    bits = v.view(np.uint32)
    return np.where((bits & _MAGNITUDE) < _SMALLEST_NORMAL, bits & ~_MAGNITUDE, bits).view(_F32)


def rcpps(x: np.ndarray) -> np.ndarray:
    """RCPPS of a float32 array, with subnormal inputs read as zeros: inf of their sign for zeros, zeros of
    their sign for infinities, NaN for NaN."""
    bits = x.view(np.uint32)
    sign, magnitude = bits & ~_MAGNITUDE, bits & _MAGNITUDE
    exponent = (magnitude >> np.uint32(23)).astype(np.int64)
    scaled = _entries("RCPPS")[_first_bits(magnitude)] - ((exponent - 127) << 23)
    out = np.where(scaled >= 1 << 23, scaled, 0).astype(np.uint32) | sign          # (below the normal: 0)
    return _special(bits, out, infinite=sign)


def _first_bits(magnitude):
    """The first 12 fraction bits: the tables' index."""
    return (magnitude >> np.uint32(11)) & np.uint32(0xFFF)


def _special(bits, out, infinite):
    """``out`` but for zeros and subnormals (read as zeros: inf of their sign), infinities (``infinite``) and
    NaN (quieted)."""
    magnitude = bits & _MAGNITUDE
    out = np.where(magnitude < _SMALLEST_NORMAL, (bits & ~_MAGNITUDE) | _INFINITY, out)
    out = np.where(magnitude == _INFINITY, infinite, out)
    return np.where(magnitude > _INFINITY, bits | np.uint32(0x00400000), out).view(_F32)


def newton_reciprocal(x: np.ndarray) -> np.ndarray:
    """Eigen's packet reciprocal as TensorFlow's CPU kernel computes it: RCPPS's r, then r + r * (1 - x * r),
    each step flushed; where that is NaN (x zero, infinite or NaN), r."""
    x = _flushed(np.ascontiguousarray(x, _F32))
    r = rcpps(x)
    with np.errstate(all="ignore"):
        refined = _flushed(r + _flushed(r * _flushed(_F32(1) - _flushed(x * r))))
    return np.where(np.isnan(refined), r, refined)


def rsqrtps(x: np.ndarray) -> np.ndarray:
    """RSQRTPS of a float32 array, with subnormal inputs read as zeros: inf of their sign for zeros, 0 for inf,
    NaN for NaN and negative numbers."""
    bits = x.view(np.uint32)
    sign, magnitude = bits & ~_MAGNITUDE, bits & _MAGNITUDE
    power = (magnitude >> np.uint32(23)).astype(np.int64) - 127
    odd = power & 1
    entries = _entries("RSQRTPS").reshape(2, 4096)        # (x in [1, 2), then [2, 4))
    out = (entries[odd, _first_bits(magnitude)] - (((power - odd) // 2) << 23)).astype(np.uint32)
    out = np.where((sign != 0) & (magnitude >= _SMALLEST_NORMAL), np.uint32(0xFFC00000), out)
    return _special(bits, out, infinite=np.where(sign != 0, np.uint32(0xFFC00000), np.uint32(0)))


def newton_rsqrt(x: np.ndarray) -> np.ndarray:
    """Eigen's packet reciprocal square root as TensorFlow's CPU kernel computes it: RSQRTPS's r, then
    r + r * (0.5 - 0.5 * ((x * r) * r)), each step flushed; where r is zero or infinite, r."""
    x = _flushed(np.ascontiguousarray(x, _F32))
    r = rsqrtps(x)
    half = _F32(0.5)
    with np.errstate(all="ignore"):
        step = _flushed(half - _flushed(half * _flushed(_flushed(x * r) * r)))
        refined = _flushed(r + _flushed(r * step))
    return np.where((r == 0) | np.isinf(r), r, refined)
