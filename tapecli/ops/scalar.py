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
    """``op`` applied to one or two float scalars of one dtype, all strong or all literals (of an op whose
    literal arithmetic stays literal), by the shortest way: the caller checked that nothing records, logs or
    checks it. None otherwise: then ``apply``'s full path runs (it also gives any error its message)."""
    n = len(inputs)
    if n == 1:
        a = inputs[0]
        if a.__class__ is not Tensor or a.value.__class__ not in FLOAT_SCALARS:
            return None
        weak = a.weak
        args = [a.value]
    elif n == 2:
        a, b = inputs
        if a.__class__ is not Tensor or b.__class__ is not Tensor or a.weak is not b.weak:
            return None
        weak = a.weak
        av = a.value
        bv = b.value
        if av.__class__ is not bv.__class__ or av.__class__ not in FLOAT_SCALARS:
            return None
        if weak and not op.weak_arith:
            return None
        out = by_operator(op, av, bv)
        if out is not None:
            return _tensor(out, weak)
        args = [av, bv]
    else:
        return None
    if (weak and not op.weak_arith) or not _numpy_quiet():
        return None
    try:
        out = _RAW_KERNELS[op.kernel](*args)      # what kernels.run picks for scalars here
    except Exception:
        return None
    if out.__class__ in FLOAT_SCALARS or isinstance(out, (np.generic, np.ndarray)) and out.size <= 1:
        return _tensor(out, weak)
    return None
