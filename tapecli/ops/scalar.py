"""The ops' shortest path: scalars that nothing watches (the interpreter's loops on NumPy scalars)."""
from __future__ import annotations

import operator

import numpy as np

from tapecli import kernels
from tapecli.runtime.values import Tensor, make_tensor as _tensor

_numpy_quiet = kernels.numpy_quiet
_RAW_KERNELS = kernels.RAW_NUMPY_KERNELS

# Kernels that Python's operators compute exactly as NumPy's ufuncs on two float scalars of one dtype
# (IEEE arithmetic, correctly rounded), at a tenth of a ufunc call's cost.
SCALAR_OPERATORS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": operator.truediv}
FLOAT_SCALARS = (np.float32, np.float64)


def by_operator(op, a, b):
    """``op``'s kernel on two float scalars of one dtype by Python's operator, where it has one and the kernel
    would run on NumPy with warnings off; else None."""
    operate = op._scalar_operator
    if operate is not None and a.__class__ is b.__class__ and a.__class__ in FLOAT_SCALARS and _numpy_quiet():
        return operate(a, b)
    return None


def unwatched_scalar(op, inputs):
    """``op`` applied to ``inputs`` by the shortest way, when they are one or two tensors of float scalars (see
    :func:`scalar_binary`) and kernels run on NumPy with warnings off; the caller checked that nothing records,
    logs or checks it. None otherwise: then ``apply``'s full path runs (it also gives any error its message)."""
    n = len(inputs)
    if n == 2:
        a, b = inputs
        if a.__class__ is Tensor and b.__class__ is Tensor and _numpy_quiet():
            return scalar_binary(op, a, b)
    elif n == 1:
        a = inputs[0]
        if a.__class__ is Tensor and _numpy_quiet():
            return scalar_unary(op, a)
    return None


def scalar_binary(op, a: Tensor, b: Tensor):
    """``op`` on two float scalars of one dtype, both strong or both literals (of an op whose literal
    arithmetic stays literal), or None. The caller checked that nothing watches and that kernels run on
    NumPy with warnings off."""
    av = a.value
    bv = b.value
    weak = a.weak
    if av.__class__ is not bv.__class__ or av.__class__ not in FLOAT_SCALARS or b.weak is not weak \
            or (weak and not op.weak_arith):
        return None
    operate = op._scalar_operator
    if operate is not None:
        return _tensor(operate(av, bv), weak)
    return _kernel(op, (av, bv), weak)


def scalar_unary(op, a: Tensor):
    """``op`` on a float scalar, strong or (for an op whose literal arithmetic stays literal) a literal, or
    None; as :func:`scalar_binary`."""
    v = a.value
    if v.__class__ not in FLOAT_SCALARS or (a.weak and not op.weak_arith):
        return None
    return _kernel(op, (v,), a.weak)


def _kernel(op, args, weak):
    try:
        out = _RAW_KERNELS[op.kernel](*args)      # what kernels.run picks for scalars here
    except Exception:
        return None
    if out.__class__ in FLOAT_SCALARS or isinstance(out, (np.generic, np.ndarray)) and out.size <= 1:
        return _tensor(out, weak)
    return None
