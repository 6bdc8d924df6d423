"""tf.quantization's fake quantization (ops/quantization.py, TensorFlow's kernels' float32 formulas): over a range
given as two numbers (fake_quant_with_min_max_args), as two float32 scalars the gradient reaches
(fake_quant_with_min_max_vars), or as two float32 vectors, one value per channel of the last axis
(fake_quant_with_min_max_vars_per_channel)."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import KernelValueError, TdfValueError
from tapecli.interpreter.conversions import to_float, to_int, truth
from tapecli.interpreter.registry import builtin
from tapecli.runtime.values import dtype_name, Tensor

_FLOAT32 = np.dtype(np.float32)


def _bits(num_bits) -> int:
    bits = to_int(num_bits, "num_bits")
    if not 2 <= bits <= 16:
        raise KernelValueError("num_bits must be between 2 and 16, inclusive")
    return bits


def _float32(x, op: str, index=0):
    """A float32 tensor (a literal converted to one); TensorFlow's kernels take no other dtype."""
    t = ops.to_tensor(x)
    t = ops.materialize(t, _FLOAT32) if t.weak else t
    if t.dtype != _FLOAT32:
        kind = {"float64": "double", "float16": "half"}.get(dtype_name(t.dtype), dtype_name(t.dtype))
        raise KernelValueError(f"cannot compute {op} as input #{index}(zero-based) was expected to be a float tensor "
                               f"but is a {kind} tensor")
    return t


def _written(v: float) -> str:
    return np.format_float_positional(np.float32(v), trim="-")


@builtin("quantization.fake_quant_with_min_max_args")
def fake_quant_with_min_max_args(inputs, min=-6, max=6, num_bits=8, narrow_range=False, name=None):  # noqa: A002
    """The inputs fake-quantized over [min, max] (numbers, min below max) to 2 ** num_bits steps (one fewer with
    ``narrow_range``); the gradient passes where an input lies in the nudged range."""
    lo, hi = to_float(min, "min"), to_float(max, "max")
    if not lo < hi:
        raise KernelValueError(f"min has to be smaller than max, was: {_written(lo)} >= {_written(hi)}")
    bits = _bits(num_bits)
    x = ops.to_tensor(inputs)
    if not x.weak and x.dtype != _FLOAT32:
        raise TdfValueError(f"Tensor conversion requested dtype float32 for Tensor with dtype {dtype_name(x.dtype)}")
    x = _float32(x, "FakeQuantWithMinMaxArgs")
    return ops.fake_quant(x, Tensor(np.float32(lo)), Tensor(np.float32(hi)), bits, truth(narrow_range),
                          divide=False)


def _range(x, lo, hi, op: str, channels: bool):
    lo, hi = _float32(lo, op, 1), _float32(hi, op, 2)
    for what, t in (("min", lo), ("max", hi)):
        if not channels and t.ndim != 0:
            raise KernelValueError(f"`{what}` must be rank 0 but is rank {t.ndim}")
        if channels and (t.ndim != 1 or x.ndim and t.shape[0] != x.shape[-1]):
            raise KernelValueError(f"{what} has incorrect size, expected {x.shape[-1] if x.ndim else 0} was "
                                   f"{t.shape[0] if t.ndim == 1 else t.size}")
    return lo, hi


@builtin("quantization.fake_quant_with_min_max_vars")
def fake_quant_with_min_max_vars(inputs, min, max, num_bits=8, narrow_range=False, name=None):  # noqa: A002
    """The inputs fake-quantized over [min, max], float32 scalars (both zero: zeros); min's gradient is the sum of
    the output's below the nudged range, max's above it."""
    x = _float32(inputs, "FakeQuantWithMinMaxVars")
    lo, hi = _range(x, min, max, "FakeQuantWithMinMaxVars", channels=False)
    return ops.fake_quant(x, lo, hi, _bits(num_bits), truth(narrow_range), divide=True)


@builtin("quantization.fake_quant_with_min_max_vars_per_channel")
def fake_quant_with_min_max_vars_per_channel(inputs, min, max, num_bits=8, narrow_range=False,  # noqa: A002
                                             name=None):
    """fake_quant_with_min_max_vars along the last axis: min and max one float32 per channel."""
    op = "FakeQuantWithMinMaxVarsPerChannel"
    x = _float32(inputs, op)
    if x.ndim == 0:
        raise KernelValueError(f"{op} needs inputs of rank 1 or more (the channels last), got a scalar")
    lo, hi = _range(x, min, max, op, channels=True)
    return ops.fake_quant(x, lo, hi, _bits(num_bits), truth(narrow_range), divide=False)


_ROUND_MODES = ("HALF_TO_EVEN", "HALF_UP")


def _quantize_and_dequantize(input, input_min, input_max, signed_input, num_bits, range_given,  # noqa: A002
                             round_mode, narrow_range, axis, pass_through):
    x = ops.to_tensor(input)
    x = ops.materialize(x, _FLOAT32) if x.weak else x
    if x.dtype.kind != "f" or x.dtype.itemsize not in (4, 8):     # (TensorFlow's CPU kernels: no half)
        raise KernelValueError(f"quantize_and_dequantize takes float32 or float64 inputs (TensorFlow's CPU kernels), "
                               f"got {dtype_name(x.dtype)}")
    lo, hi = (ops.to_tensor(v) for v in (input_min, input_max))
    lo, hi = (ops.materialize(v, x.dtype) if v.weak else v for v in (lo, hi))
    if lo.dtype != x.dtype or hi.dtype != x.dtype:
        raise KernelValueError(f"input_min and input_max must be of the input's dtype {dtype_name(x.dtype)}, got "
                               f"{dtype_name(lo.dtype)} and {dtype_name(hi.dtype)}")
    signed, bits, given = truth(signed_input), to_int(num_bits, "num_bits"), truth(range_given)
    if not 0 < bits < (62 if signed else 63):
        raise KernelValueError(f"num_bits is out of range: {bits} with signed_input_ {int(signed)}")
    if round_mode not in _ROUND_MODES:
        raise KernelValueError(f"Value for attr 'round_mode' of \"{round_mode}\" is not in the list of allowed values: "
                               '"HALF_TO_EVEN", "HALF_UP"')
    if axis is None:
        axis = -1           # (the whole tensor)
    else:
        axis = to_int(axis, "axis")
        axis = axis % x.ndim if axis < 0 and x.ndim else axis      # (-1 given: the last axis's channels)
    if axis >= x.ndim:
        raise KernelValueError(f"Shape must be at least rank {axis + 1} but is rank {x.ndim}")
    if axis != -1 and given:        # (TensorFlow 2.21 asks a vector of the kernel, which then asks a scalar)
        raise KernelValueError("Shape must be rank 1 for input_min_tensor when the axis is specified" if lo.ndim == 0
                               else "input_min must be a scalar.")
    if lo.ndim or hi.ndim:
        raise KernelValueError("input_min must be a scalar." if lo.ndim else "input_max must be a scalar.")
    if given and lo.value > hi.value:
        raise KernelValueError(f"Invalid range: input_min {_written(lo.value)} > input_max {_written(hi.value)}")
    return ops.quantize_dequantize(x, lo, hi, signed=signed, num_bits=bits, range_given=given,
                                   half_up=round_mode == "HALF_UP", narrow=truth(narrow_range), axis=axis,
                                   pass_through=pass_through)


@builtin("quantization.quantize_and_dequantize_v2")
def quantize_and_dequantize_v2(input, input_min, input_max, signed_input=True, num_bits=8,  # noqa: A002
                               range_given=False, round_mode="HALF_TO_EVEN", name=None, narrow_range=False, axis=None):
    """QuantizeAndDequantizeV4: the input rounded to ``num_bits`` over [input_min, input_max] (``range_given``) or
    its own range (per channel of ``axis``); the gradient passes where the input lies in the given range."""
    return _quantize_and_dequantize(input, input_min, input_max, signed_input, num_bits, range_given, round_mode,
                                    narrow_range, axis, pass_through=False)


@builtin("quantization.quantize_and_dequantize")
def quantize_and_dequantize(input, input_min, input_max, signed_input=True, num_bits=8,  # noqa: A002
                            range_given=False, round_mode="HALF_TO_EVEN", name=None, narrow_range=False, axis=None):
    """QuantizeAndDequantizeV2: quantize_and_dequantize_v2's values, its gradient passed through whole."""
    return _quantize_and_dequantize(input, input_min, input_max, signed_input, num_bits, range_given, round_mode,
                                    narrow_range, axis, pass_through=True)
