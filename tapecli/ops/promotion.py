"""NumPy's dtype promotion as tf.experimental.numpy applies it: the dtype NumPy's ``result_type`` gives for a
set of operands (np_utils.result_type, np_dtypes._result_type), and the operands of a tensor's operator promoted to
it once a program has switched TensorFlow's NumPy behaviour on (override_binary_operator.maybe_promote_tensors:
``int32 + float32`` is then float64, where TensorFlow otherwise refuses mixed dtypes).

A Python number is NumPy's weak scalar (NEP 50): it takes the other operand's kind and width (``int8 + 3`` stays
int8, ``int32 + 2.5`` is float64), as NumPy 2 reads the Python numbers TensorFlow hands it; with
``prefer_float32`` a Python float is read as a float32 scalar instead, as np_dtypes does."""
from __future__ import annotations

import numpy as np

from tapecli.ops.core import materialize, to_tensor
from tapecli.ops.elementwise import cast
from tapecli.runtime.context import current
from tapecli.runtime.values import NumpyArray, PythonBool, Tensor, Variable

# A weak literal's stand-in: what each element of a Python list of numbers is to NumPy's result_type (the values
# themselves never change the result of NEP 50's promotion, only their kind).
_PYTHON_NUMBER = {"b": True, "i": 1, "u": 1, "f": 1.0}


def operand_types(value) -> list:
    """What ``np.result_type`` reads of ``value``: a tensor's (or a NumPy array's) dtype, a Python number as a
    Python number, a (nested) list as each of its items (TensorFlow flattens it); a NumPy dtype as itself."""
    if isinstance(value, np.dtype):
        return [value]
    if isinstance(value, (bool, int, float)):
        return [_python_float(value)]
    if isinstance(value, Variable):
        return [value.dtype]
    if value.__class__ is PythonBool:
        return [bool(value.value)]
    if isinstance(value, Tensor):
        if value.weak:
            if value.size == 0:          # ([] flattens to nothing)
                return []
            return [_python_float(_PYTHON_NUMBER[value.dtype.kind])]
        if value.__class__ is NumpyArray and value.ndim == 0 and value.dtype == np.float64:
            return [_python_float(value.value[()])]       # (NumPy's float64 scalar is a Python float to TensorFlow)
        return [value.dtype]
    if isinstance(value, (list, tuple)):
        return [kind for item in value for kind in operand_types(item)]
    raise TypeError(f"no dtype for {type(value).__name__}")


def _python_float(number):
    """A Python float as np_dtypes reads it: a float32 scalar under prefer_float32, else itself."""
    behavior = current().numpy_behavior
    if isinstance(number, float) and behavior is not None and behavior.prefer_float32:
        return np.float32(number)
    return number


def result_type(*values) -> np.dtype:
    """NumPy's result type of ``values`` (tensors, Python numbers and lists of them, NumPy dtypes), float64 for
    none at all (np.asarray([])'s): tf.experimental.numpy.result_type."""
    kinds = list(dict.fromkeys((type(k), k) for v in values for k in operand_types(v)))
    if not kinds:
        return np.dtype(np.float64)
    return np.result_type(*(k for _, k in kinds))


def as_dtype(value, dtype: np.dtype) -> Tensor:
    """``value`` (a tensor, variable or literal) as a tensor of ``dtype``: a variable read where the tapes see it,
    a literal converted, a tensor of another dtype cast (its gradient flows back through the cast)."""
    if value.__class__ is PythonBool:
        return Tensor(value.value.astype(dtype))
    t = to_tensor(value)
    if t.weak:
        return materialize(t, dtype)
    return t if t.dtype == dtype and t.__class__ is Tensor else cast(t, dtype)


def numpy_operands(left, right):
    """The operands of a tensor's binary operator, both of NumPy's result type where NumPy behaviour promotes
    (``ctx.numpy_behavior.promotes``); anything that is not a tensor or a number, and operands of one dtype
    already, as they are."""
    behavior = current().numpy_behavior
    if behavior is None or not behavior.promotes or not isinstance(left, (Tensor, Variable)) \
            or not isinstance(right, (Tensor, Variable)) or left.dtype.hasobject or right.dtype.hasobject:
        return left, right
    python = [x.__class__ is PythonBool or getattr(x, "weak", False) for x in (left, right)]
    if all(python) or not any(python) and left.dtype == right.dtype:     # (Python's arithmetic; or nothing to do)
        return left, right
    dtype = result_type(left, right)
    return as_dtype(left, dtype), as_dtype(right, dtype)
