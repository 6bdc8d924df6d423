"""TensorFlow's fake quantization (FakeQuantWithMinMaxArgs, FakeQuantWithMinMaxVars and its per-channel form, as
fake_quant_ops_functor.h computes them in float32): the range [min, max] nudged so that zero is a step, the input
clamped to it and rounded to its step, one float32 operation at a time. Its gradient is the straight-through one:
the output's gradient where the input lies in the nudged range, to min (max) the sum of it below (above) the range.
A channel (or tensor) whose min and max are both zero gives zeros and passes its whole gradient to the input."""
from __future__ import annotations

import numpy as np

from tapecli.ops.core import apply, register
from tapecli.ops.elementwise import mul
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
