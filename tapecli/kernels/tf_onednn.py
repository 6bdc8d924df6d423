"""TensorFlow's float32 softmax on an x86 CPU, bit for bit: TensorFlow runs it with oneDNN there (on by default),
not with the Eigen expression its own kernel writes; and oneDNN's exp, which its activations take too
(tf_onednn_eltwise.py).

oneDNN compiles the kernel for the machine's widest vectors (16 floats with AVX-512, 8 with AVX2) and runs it
with denormals flushed to zero. Along each row (the last axis; tf.nn.softmax moves another axis there first):
the maximum; ``e = exp(x - max)`` by oneDNN's exp (below); the sum of ``e`` in up to four vector accumulators
(whole vectors in turn, four at a time while four remain, the rest into the first ones, the row's last partial
vector into the first), combined as ``(a0 + a1) + (a2 + a3)`` and then across lanes by halves; and
``e * (1 / sum)``. oneDNN's exp: x clamped to [ln(FLT_MIN), ln(FLT_MAX)] (a NaN becomes the upper bound, as
``minps`` gives it), ``n = floor(x * log2(e) + 0.5)``, ``r = x - n * ln 2`` fused, a degree-5 polynomial of ``r``
in fused multiply-adds, times ``2^(n - 1)`` built from its exponent bits, times 2; zero where x was below
ln(FLT_MIN). (Measured against TensorFlow 2.21's pip wheel on an AVX-512 machine: every element of rows of 1 to
4,096 elements alike, NaN and infinite entries included: tests/data/tf_softmax_bits.json. On AVX2 the same
kernel runs on 8 floats: followed here, not measured.)

A fused multiply-add is tf_matmul.fma's, rounded once; ``x - n ln 2`` is exact in float64 (its bits span at
most 32), then rounded once. Other machines (not x86-64, or without AVX2 and FMA) and arrays of more than
``PACKET_LIMIT`` elements keep NumPy's softmax."""
from __future__ import annotations

import numpy as np

from tapecli.kernels.cpu import vector_width
from tapecli.kernels.tf_float32 import PACKET_LIMIT
from tapecli.kernels.tf_matmul import fma

_F32 = np.float32
_TINY = np.finfo(np.float32).tiny
_ACCUMULATORS = 4       # oneDNN's unrolled vector registers


def _bits(word: int) -> np.float32:
    return np.array([word], np.uint32).view(np.float32)[0]


_LOG2E, _LN2 = _bits(0x3FB8AA3B), _bits(0x3F317218)
_LN_FLT_MAX, _LN_FLT_MIN = _bits(0x42B17218), _bits(0xC2AEAC50)
# oneDNN's exp polynomial, highest degree first (its p5 ... p1, then 1)
_EXP_POLYNOMIAL = tuple(_bits(w) for w in (0x3C07CFCE, 0x3D2B9D0D, 0x3E2AAD40, 0x3EFFFEE3, 0x3F7FFFFB, 0x3F800000))


def _flushed(v: np.ndarray) -> np.ndarray:
    v[np.abs(v) < _TINY] = 0
    return v


def exp(x: np.ndarray) -> np.ndarray:
    """oneDNN's exp of a float32 array (the module's doc), its fused multiply-adds rounded once."""
    below = x < _LN_FLT_MIN
    x = np.where(x < _LN_FLT_MAX, x, _LN_FLT_MAX)          # (minps and maxps give their second operand for NaN)
    x = np.where(x > _LN_FLT_MIN, x, _LN_FLT_MIN)
    n = np.floor(x * _LOG2E + _F32(0.5))
    r = (x - n.astype(np.float64) * _LN2).astype(_F32)       # (fused: one rounding)
    scale = (((n - _F32(1)).astype(np.int32) + 127) << 23).view(_F32)
    scale[below] = 0
    y = np.full_like(r, _EXP_POLYNOMIAL[0])
    for coefficient in _EXP_POLYNOMIAL[1:]:
        y = fma(r, y, coefficient)
    return _flushed(_flushed(y * scale) * _F32(2))


def _maximum(a, b):
    return np.where(a > b, a, b)        # maxps: the second operand unless the first is greater


def _across_lanes(v: np.ndarray, combine) -> np.ndarray:
    """The lanes combined by halves (shuffles of 256, 128, 64 and 32 bits): each lane ends with the same sum of
    the same pairs, but where a NaN meets maxps, which gives its second operand."""
    lanes = v.shape[-1]
    step = lanes // 2
    while step:
        v = combine(v, v[:, np.arange(lanes) ^ step])
        step //= 2
    return v


def softmax(x: np.ndarray, axis=-1) -> np.ndarray | None:
    """TensorFlow's oneDNN softmax of a float32 array (rank 1 to 5, up to ``PACKET_LIMIT`` elements: 5 to 10
    times NumPy's time, as tf_float32's kernels) along ``axis``, or None where it does not apply (another dtype
    or rank, an empty or larger array, a machine whose oneDNN kernel is not this one). Another axis
    than the last is swapped with it first (and back), as TensorFlow transposes it."""
    if x.__class__ is not np.ndarray or x.dtype != _F32 or not 1 <= x.ndim <= 5 or not 0 < x.size <= PACKET_LIMIT \
            or not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim or vector_width() is None:
        return None
    axis = int(axis) % x.ndim
    if axis != x.ndim - 1:
        return np.ascontiguousarray(np.swapaxes(_last_axis(np.swapaxes(x, axis, -1), vector_width()), axis, -1))
    return _last_axis(x, vector_width())


def _last_axis(x: np.ndarray, lanes: int) -> np.ndarray:
    n = x.shape[-1]
    rows = _flushed(x.reshape(-1, n).copy())
    full, partial = divmod(n, lanes)
    loops, rest = divmod(full, _ACCUMULATORS)
    used = _ACCUMULATORS if loops else max(rest, 1)

    def accumulated(values, combine, start):
        """Each accumulator's vectors in turn: four at a time while four remain, the rest into the first ones,
        a partial last vector into the first (its operation masked to its lanes)."""
        acc = np.full((used, rows.shape[0], lanes), start, _F32)
        for block in range(full):
            i = block % _ACCUMULATORS if block < loops * _ACCUMULATORS else block - loops * _ACCUMULATORS
            acc[i] = combine(acc[i], values[:, block * lanes:(block + 1) * lanes])
        if partial:
            acc[0][:, :partial] = combine(acc[0][:, :partial], values[:, full * lanes:])
        if used == 4:
            return combine(combine(acc[0], acc[1]), combine(acc[2], acc[3]))
        if used == 3:
            return combine(combine(acc[0], acc[1]), acc[2])
        return combine(acc[0], acc[1]) if used == 2 else acc[0]

    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        if np.isnan(rows).any():
            # a NaN leaves the lanes of the maximum unlike: each element takes its own lane's
            lane = np.arange(n) % lanes
            largest = _across_lanes(accumulated(rows, _maximum, -np.finfo(np.float32).max), _maximum)[:, lane]
        else:
            largest = np.maximum(rows.max(axis=1, keepdims=True), -np.finfo(np.float32).max)
        e = exp(_flushed(rows - largest))
        total = accumulated(e, np.add, 0)
        while total.shape[1] > 1:                       # (the lanes' sums by halves, alike in every lane)
            half = total.shape[1] // 2
            total = total[:, :half] + total[:, half:]
        return _flushed(e * (_F32(1) / total)).reshape(x.shape)
