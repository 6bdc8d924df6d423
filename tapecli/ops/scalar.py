"""The ops' shortest path: float scalars (the interpreter's loops keep their values as NumPy scalars).

Inside ``kernels.quiet()`` on NumPy, a kernel on scalars is its NumPy function (``kernels.run`` never sends
a scalar to Numba), and ``+ - * /`` on two float scalars of one dtype are Python's operators: the same IEEE
arithmetic as the ufuncs, bit for bit, at a tenth of a ufunc call's cost.
"""
from __future__ import annotations

import numpy as np

from tapecli import kernels
from tapecli.errors import TdfValueError
from tapecli.runtime.tape import NO_ATTRS, record_on
from tapecli.runtime.values import Tensor, make_tensor as _tensor

_numpy_quiet = kernels.numpy_quiet
_RAW_KERNELS = kernels.RAW_NUMPY_KERNELS

FLOAT_SCALARS = (np.float32, np.float64)
# Python's binary operators, each the op it makes (the interpreter's compiled closures and generated scalar code)
OP_NAMES = {"+": "add", "-": "sub", "*": "mul", "/": "div", "//": "floordiv", "%": "mod", "**": "pow", "@": "matmul"}


def _run(op, values):
    """``op``'s NumPy kernel on scalar ``values``, its result as ``kernels.run`` gives it."""
    operate = op._scalar_operator
    if operate is not None and len(values) == 2:
        return operate(*values)
    out = _RAW_KERNELS[op.kernel](*values)
    return out if out.__class__ is np.ndarray or isinstance(out, np.generic) else np.asarray(out)


def scalar_kernel(op, tensors):
    """``op``'s kernel on the values of ``apply``'s tensors (unified) when they are one or two float scalars
    of one dtype and kernels run on NumPy with warnings off; else None (``kernels.run`` decides)."""
    n = len(tensors)
    if n == 2:
        values = (tensors[0].value, tensors[1].value)
        if values[0].__class__ is not values[1].__class__:
            return None
    elif n == 1:
        values = (tensors[0].value,)
    else:
        return None
    if values[0].__class__ not in FLOAT_SCALARS or not _numpy_quiet():
        return None
    return _run(op, values)


def unwatched_scalar(op, inputs):
    """``op`` applied to ``inputs`` by the shortest way (see :func:`scalar_result`) when they are one or two
    tensors and kernels run on NumPy with warnings off; the caller checked that nothing records, logs or
    checks it. None otherwise: then ``apply``'s full path runs (it also gives any error its message)."""
    n = len(inputs)
    if n == 2:
        a, b = inputs
        if a.__class__ is Tensor and b.__class__ is Tensor and _numpy_quiet():
            return scalar_binary(op, a, b)
    elif n == 1:
        a = inputs[0]
        if a.__class__ is Tensor and _numpy_quiet():
            return scalar_result(op, (a.value,), a.weak)
    return None


def recorded_scalar(op, inputs, ctx):
    """``op`` on one or two strong float scalars of one dtype while tapes are open (the caller checked that
    nothing logs or checks it), recorded as ``apply``'s full path records it: on the tapes that watch an
    input, keeping its tensors whole (a scalar is smaller than a stub). None otherwise: ``apply`` runs."""
    n = len(inputs)
    if n == 1:
        a = inputs[0]
        if a.__class__ is not Tensor or a.weak:
            return None
        values = (a.value,)
    elif n == 2:
        a, b = inputs
        if a.__class__ is not Tensor or b.__class__ is not Tensor or a.weak or b.weak:
            return None
        values = (a.value, b.value)
        if values[1].__class__ is not values[0].__class__:
            return None
    else:
        return None
    cls = values[0].__class__
    if cls not in FLOAT_SCALARS or not _numpy_quiet():
        return None
    try:
        out = _run(op, values)
    except Exception:
        return None
    if out.__class__ is not cls:        # another dtype, an array: the full path
        return None
    result = _tensor(out)
    if op.differentiable:
        record_on(ctx.tapes, op, inputs if inputs.__class__ is tuple else tuple(inputs), result, NO_ATTRS,
                  ctx.settings.line)
    return result


def scalar_binary(op, a: Tensor, b: Tensor):
    """``op`` on two tensors (see :func:`scalar_result`); the caller checked that nothing watches and that
    kernels run on NumPy with warnings off."""
    av = a.value
    bv = b.value
    weak = a.weak
    if av.__class__ is not bv.__class__ or b.weak is not weak:
        return None
    operate = op._scalar_operator
    if operate is not None and av.__class__ in FLOAT_SCALARS and (op.weak_arith or not weak):
        return _tensor(operate(av, bv), weak)      # the common case, first
    return scalar_result(op, (av, bv), weak)


def scalar_result(op, values, weak):
    """The tensor of ``op`` on float scalar ``values`` of one dtype, all strong or all literals (of an op
    whose literal arithmetic stays literal, as ``apply`` would leave them), or None: a value of another
    kind, a kernel error (``apply`` words it) or a result larger than a scalar (``apply`` admits it)."""
    if values[0].__class__ not in FLOAT_SCALARS or (weak and not op.weak_arith):
        return None
    if weak and op.python is not None and not kernels.recording():
        out = python_result(op, values)
        if out is not None:
            return _tensor(out, True)
    try:
        out = _run(op, values)
    except Exception:
        return None
    return _tensor(out, weak) if out.size <= 1 else None


def python_result(op, values):
    """``op`` on the values of number literals (NumPy's int64 and float64 scalars holding Python's ints and floats)
    as Python computes it (``op.python``): exact integers (``10 ** -3`` a float), Python's floats (its ``**`` is C's
    pow, not NumPy's); None where a value is of another kind or Python raises (a division by zero: the kernel's
    answer) or gives no real number. An integer past int64 is an error, never a wrapped number."""
    numbers = []
    for v in values:
        if v.__class__ is not np.int64 and v.__class__ is not np.float64:
            return None
        numbers.append(v.item())
    try:
        exact = op.python(*numbers)
    except (ArithmeticError, ValueError):
        return None
    if exact.__class__ is float:
        return np.float64(exact)
    if exact.__class__ is int and -_INT64_LIMIT <= exact < _INT64_LIMIT:
        return np.int64(exact)
    if exact.__class__ is int or exact is None and all(n.__class__ is int for n in numbers):
        raise TdfValueError(f"{op.name} of the integers {' and '.join(map(str, numbers))}: Python's result is past "
                            "the 64-bit integers of tapecli's interpreter (docs/language.md: where CPython runs a program)")
    return None


_INT64_LIMIT = 1 << 63


def same_float_scalars(tensors) -> bool:
    """Two strong float scalars of one dtype: nothing for ``_unify`` to do."""
    if len(tensors) != 2:
        return False
    a, b = tensors
    return a.value.__class__ is b.value.__class__ and a.value.__class__ in FLOAT_SCALARS and not (a.weak or b.weak)
