"""TensorFlow's fake quantization (FakeQuantWithMinMaxArgs, FakeQuantWithMinMaxVars and its per-channel form, as
fake_quant_ops_functor.h computes them in float32): the range [min, max] nudged so that zero is a step, the input
clamped to it and rounded to its step, one float32 operation at a time. Its gradient is the straight-through one:
the output's gradient where the input lies in the nudged range, to min (max) the sum of it below (above) the range.
A channel (or tensor) whose min and max are both zero gives zeros and passes its whole gradient to the input.
Also QuantizeAndDequantizeV2/V4 (quantize_and_dequantize_op.h), in the input's float dtype: the range given or
the input's own, its scale set by the side that needs the smaller one, rounded half to even or half up."""
from __future__ import annotations

import math

import numpy as np

from tapecli.errors import KernelValueError
from tapecli.ops.core import apply, register
from tapecli.ops.elementwise import cast, greater_equal, less_equal, logical_and, mul, zeros_like
from tapecli.ops.reductions import reduce_sum

_F = np.float32


def _nudged(lo, hi, quant_min: int, quant_max: int):
    """Nudge: the range's nudged min and max, its scale and its inverse (float32, per channel), as TensorFlow's:
    the zero point quant_min - min / scale rounded half away from zero (std::round), within the quantized range."""
    qmin, qmax = _F(quant_min), _F(quant_max)
    lo, hi = np.asarray(lo, _F), np.asarray(hi, _F)
    with np.errstate(all="ignore"):
        scale = (hi - lo) / (qmax - qmin)
        inverse = (qmax - qmin) / (hi - lo)
        from_min = qmin - lo / scale
        # (a float32 plus one half is exact in float64: the truncation is std::round's)
        rounded = np.trunc(from_min.astype(np.float64) + np.copysign(0.5, from_min))
        zero = np.where(from_min < qmin, quant_min, np.where(from_min > qmax, quant_max, np.nan_to_num(rounded)))
        zero = zero.astype(np.uint16).astype(_F)
        return (qmin - zero) * scale, (qmax - zero) * scale, scale, inverse


def _fake_quant(x, lo, hi, quant_min, quant_max, divide):
    """The quantized values: ((clamped - nudged min) * inverse - zero + 1/2).floor() * scale, the Vars kernel
    dividing by the scale where the others multiply by its inverse."""
    low, high, scale, inverse = _nudged(lo, hi, quant_min, quant_max)
    with np.errstate(all="ignore"):
        quant_zero = np.floor(-low * inverse + _F(0.5))
        shifted = np.maximum(np.minimum(x, high), low) - low
        steps = shifted / scale if divide else shifted * inverse
        out = np.floor(steps - quant_zero + _F(0.5)) * scale
    return np.where((lo == 0) & (hi == 0), _F(0), out).astype(_F)


def _fake_quant_mask(x, lo, hi, quant_min, quant_max, side):
    """1 where the input lies in the nudged range ("between"), below it or above it, else 0 (float32)."""
    low, high, _, _ = _nudged(lo, hi, quant_min, quant_max)
    off = (lo == 0) & (hi == 0)
    if side == "between":
        return ((x >= low) & (x <= high) | off).astype(_F)
    return (((x < low) if side == "below" else (x > high)) & ~off).astype(_F)


def _masks(r):
    x, lo, hi = r.inputs
    attrs = {"quant_min": r.attrs["quant_min"], "quant_max": r.attrs["quant_max"]}
    return [apply(FAKE_QUANT_MASK, (x, lo, hi), side=side, **attrs) for side in ("between", "below", "above")]


def _fake_quant_vjp(r, g, needs):
    between, below, above = _masks(r)
    x, lo, _ = r.inputs
    axes = tuple(range(x.ndim - lo.ndim))           # (all of them, or all but the channels')
    return (mul(g, between) if needs[0] else None, reduce_sum(mul(g, below), axes) if needs[1] else None,
            reduce_sum(mul(g, above), axes) if needs[2] else None)


FAKE_QUANT = register("fake_quant", numpy=_fake_quant, unify=(), batchable=False, vjp=_fake_quant_vjp)
FAKE_QUANT_MASK = register("fake_quant_mask", numpy=_fake_quant_mask, unify=(), batchable=False,
                           differentiable=False)


def fake_quant(x, lo, hi, num_bits: int, narrow_range: bool, divide: bool):
    """x (float32) fake-quantized to ``num_bits`` over [lo, hi] (float32 scalars, or vectors along x's last axis)."""
    return apply(FAKE_QUANT, (x, lo, hi), quant_min=1 if narrow_range else 0, quant_max=(1 << num_bits) - 1,
                 divide=divide)


def _quantization_range(lo, hi, signed: bool, num_bits: int, narrow: bool):
    """ComputeQuantizationRange: the scale (and its inverse) that takes [lo, hi] into the quantized integers
    without moving zero, set by the side that needs the smaller one; the other end moved to match (in lo's dtype)."""
    t = lo.dtype.type
    low_q = (-(1 << (num_bits - 1)) + int(narrow)) if signed else 0
    high_q = (1 << (num_bits - 1)) - 1 if signed else (1 << num_bits) - 1
    low_q, high_q, largest = t(low_q), t(high_q), np.finfo(lo.dtype).max
    with np.errstate(all="ignore"):
        from_low = np.where(low_q * lo > 0, low_q / lo, largest)
        from_high = np.where(high_q * hi > 0, high_q / hi, largest)
        low_side = from_low < from_high
        inverse = np.where(low_side, lo / low_q, hi / high_q).astype(lo.dtype)
        return (np.where(low_side, from_low, from_high).astype(lo.dtype), inverse,
                np.where(low_side, lo, low_q * inverse).astype(lo.dtype),
                np.where(low_side, high_q * inverse, hi).astype(lo.dtype))


def _quantize_dequantize(x, lo, hi, signed, num_bits, range_given, half_up, narrow, axis, pass_through):
    """QuantizeAndDequantizeV2/V4: over the given range (clamped to it) or, without one, the input's own range
    (per channel of ``axis``, -1 the whole tensor), scaled, rounded (half to even, or half up) and scaled back."""
    if x.size == 0:
        return x.copy()
    shape = x.shape
    if axis != -1:
        x = x.reshape(math.prod(shape[:axis]), shape[axis], -1)
    if not range_given:
        reduced = None if axis == -1 else (0, 2)
        lo, hi = np.min(x, axis=reduced, keepdims=axis != -1), np.max(x, axis=reduced, keepdims=axis != -1)
    lo, hi = np.asarray(lo, x.dtype), np.asarray(hi, x.dtype)
    scale, inverse, lo, hi = _quantization_range(lo, hi, signed, num_bits, narrow)
    with np.errstate(all="ignore"):
        scaled = (np.maximum(np.minimum(x, hi), lo) if range_given else x) * scale
        rounded = np.floor(scaled + x.dtype.type(0.5)) if half_up else np.rint(scaled)
        return (rounded * inverse).astype(x.dtype).reshape(shape)


def _quantize_dequantize_vjp(r, g, needs):
    """V2's gradient passes through; V4's is the gradient where the input lies in the given range, zeros to it."""
    if r.attrs["pass_through"]:
        return g, None, None
    if r.attrs["axis"] != -1:        # (TensorFlow 2.21's gradient op asks per-channel ranges its forward op refuses)
        raise KernelValueError("Shape must be rank 1 for input_min_tensor when the axis is specified")
    x, lo, hi = r.inputs
    inside = cast(logical_and(greater_equal(x, lo), less_equal(x, hi)), g.dtype)
    return (mul(g, inside) if needs[0] else None, zeros_like(lo) if needs[1] else None,
            zeros_like(hi) if needs[2] else None)


QUANTIZE_DEQUANTIZE = register("quantize_dequantize", numpy=_quantize_dequantize, unify=(), batchable=False,
                               vjp=_quantize_dequantize_vjp)


def quantize_dequantize(x, lo, hi, *, signed: bool, num_bits: int, range_given: bool, half_up: bool, narrow: bool,
                        axis: int, pass_through: bool):
    return apply(QUANTIZE_DEQUANTIZE, (x, lo, hi), signed=signed, num_bits=num_bits, range_given=range_given,
                 half_up=half_up, narrow=narrow, axis=axis, pass_through=pass_through)
