"""tf.experimental.numpy ("tnp"), its base: NumPy's dtypes as TensorFlow reads them, array-likes as tensors
(asarray and array), the promotion of several arguments to one dtype, and the constructors (zeros, full, eye, tri,
arange, linspace, meshgrid...). Written after TensorFlow's own Python (ops/numpy_ops: np_array_ops.py,
np_math_ops.py, np_dtypes.py, np_utils.py): the same steps and ops in the same order, so that the dtypes are
TensorFlow's (a Python int is int64 and a Python float float64, unless NumPy behaviour prefers float32) and the
gradients flow through casts and reshapes as TensorFlow's do. Every tnp function returns a TensorFlow tensor.

A program reaches them as ``tnp.X`` (``import tensorflow.experimental.numpy as tnp``) or
``tf.experimental.numpy.X``, never as a flat name: tnp's module gives its own names only (classes.Namespace.CLOSED),
so a name tapecli leaves out is an error saying so, not TensorFlow's function of the same name. tf_numpy_arrays.py
(reductions, sorting, shapes, joining), tf_numpy_indexing.py (picking elements, diagonals) and tf_numpy_math.py
(elementwise math, products, NumPy behaviour) hold the rest."""
from __future__ import annotations

import math

import numpy as np

from tapecli import ops
from tapecli.errors import NoAttribute, ShapeError, TdfTypeError, TdfValueError
from tapecli.interpreter.conversions import to_int, truth
from tapecli.interpreter.registry import builtin, register
from tapecli.library.core import _check_size, linspace as tf_linspace, to_shape
from tapecli.library.numpy_forms import NumpyScalarType, finfo as np_finfo, iinfo as np_iinfo
from tapecli.library.python import bool_ as python_bool, float_ as python_float, int_ as python_int
from tapecli.library.tf_array import broadcast_to as tf_broadcast_to, meshgrid as tf_meshgrid
from tapecli.ops import promotion
from tapecli.runtime.context import current
from tapecli.runtime.tape import type_word
from tapecli.runtime.values import DType, NumpyArray, NumpyDType, PythonBool, PythonTuple, Tensor, Variable, dtype_name, filled

MODULE = "experimental.numpy"


def numpy_function(*names):
    """Register a function of tf.experimental.numpy under its module's names (``experimental.numpy.sum``). The
    Python numbers it takes and gives are left as they are (interpreter/registry.py: call_builtin converts none to
    TensorFlow's int32 and float32): tnp reads them as NumPy does, and tnp.ndim's count is a Python int."""
    def deco(f):
        builtin(*(f"{MODULE}.{name}" for name in names or (f.__name__.rstrip("_"),)))(f)
        f.literals = "a Python number is NumPy's: int64 or float64"
        f.numpy_results = "a Python number it gives is one"
        return f
    return deco


# ------------------------------------------------------------------ dtypes
# NumPy's scalar types, which tnp's dtypes are (tnp.float32 is np.float32); complex, string and object dtypes are
# not among them: tapecli's tensors are real numbers.
_TYPES = ("bool_", "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
          "uint64")
for _name in _TYPES:
    register(f"{MODULE}.{_name}", NumpyScalarType(_name.rstrip("_")))
register(f"{MODULE}.int_", NumpyScalarType("int64"))
register(f"{MODULE}.float_", NumpyScalarType("float64"))
register(f"{MODULE}.pi", Tensor(np.array(math.pi), weak=True))
register(f"{MODULE}.e", Tensor(np.array(math.e), weak=True))
register(f"{MODULE}.inf", Tensor(np.array(math.inf), weak=True))
register(f"{MODULE}.newaxis", None)

# Python's types as NumPy reads them (np.dtype(float) is float64), where TensorFlow's tf.cast reads float as float32.
_PYTHON_TYPES = {python_float: np.dtype(np.float64), python_int: np.dtype(np.int64), python_bool: np.dtype(np.bool_),
                 float: np.dtype(np.float64), int: np.dtype(np.int64), bool: np.dtype(np.bool_)}


def numpy_dtype(value) -> np.dtype | None:
    """A dtype argument as tnp reads it (np_utils.result_type of one dtype): a tf.DType, NumPy's type or dtype,
    its name, or Python's float, int or bool (NumPy's float64, int64, bool); None for None."""
    if value is None:
        return None
    if isinstance(value, DType):        # (tf.float32, and NumPy's scalar types: tnp.float32, np.int64)
        return value.np
    if isinstance(value, np.dtype):
        return value
    if isinstance(value, type) and issubclass(value, np.generic):      # NumPy's own type (CPython's run)
        return np.dtype(value)
    if isinstance(value, str):
        try:
            return np.dtype(value)
        except TypeError:
            pass
    found = _PYTHON_TYPES.get(value) if getattr(value, "__hash__", None) is not None else None
    if found is None:
        raise TdfTypeError(f"expected a dtype such as tnp.float32, got {type_word(value)}")
    return found


def float32_for_float(dtype):
    """A dtype argument TensorFlow's own tf.cast reads (np_array_ops.var's result): Python's float there is float32,
    NumPy's float64 elsewhere in tnp (CPython's run hands the library Python's type itself)."""
    return DType("float32") if dtype is float or dtype is python_float else dtype


def result_type(*values) -> np.dtype:
    """np_utils.result_type: NumPy's result type of array-likes and dtypes (tensors, Python numbers, lists)."""
    return promotion.result_type(*(numpy_dtype(v) if _is_dtype(v) else v for v in values))


def _is_dtype(value) -> bool:
    if isinstance(value, (Tensor, Variable, list)):
        return False
    return isinstance(value, (DType, np.dtype, str, type)) or value in _PYTHON_TYPES


def default_float() -> np.dtype:
    """np_dtypes.default_float_type: float64, float32 where NumPy behaviour prefers it."""
    behavior = current().numpy_behavior
    return np.dtype(np.float32 if behavior is not None and behavior.prefer_float32 else np.float64)


def tensor_astype(t: Tensor, dtype: np.dtype) -> Tensor:
    """``t.astype(dtype)`` where tnp's own Python calls it: a tensor has that method only once NumPy behaviour is on
    (TensorFlow's AttributeError otherwise, which tnp.around of any array and tnp.heaviside of integers meet)."""
    if current().numpy_behavior is None:
        raise NoAttribute("EagerTensor object has no attribute 'astype' (tf.experimental.numpy's function calls it)",
                           hint="TensorFlow gives it once tnp.experimental_enable_numpy_behavior() has run")
    return asarray(t, dtype)


def as_float(t: Tensor) -> Tensor:
    """np_math_ops._scalar's promote_to_float: an integer or bool array as float64 (NumPy's float of them), by the
    tensor's astype (so only once NumPy behaviour is on, as in TensorFlow)."""
    return t if t.dtype.kind == "f" else tensor_astype(t, np.dtype(np.float64))


def is_python(value) -> bool:
    """A Python number or bool, or a list of them (a literal): what NumPy's own rules give a dtype."""
    return value.__class__ is PythonBool or getattr(value, "weak", False)


# ------------------------------------------------------------------ array-likes as tensors

def asarray(value, dtype: np.dtype | None = None) -> Tensor:
    """np_array_ops._array_internal: ``value`` as a TensorFlow tensor of ``dtype`` (None: its own, NumPy's for a
    Python number or list). A tensor of another dtype is cast, a variable read (tapes see both); a Python list of
    tensors is the stack of its items, each converted to their common dtype."""
    if isinstance(value, (bool, int, float)):        # (a default of the library's own: base=10.0)
        value = ops.to_tensor(value)
    if isinstance(value, (list, tuple)) and not isinstance(value, Tensor):
        if not value:
            return Tensor(np.zeros(0, dtype=dtype or np.float64))
        want = dtype or result_type(value)
        return ops.stack([asarray(v, want) for v in value])
    if isinstance(value, Variable) or value.__class__ is Tensor and not value.weak:
        t = ops.to_tensor(value)
        return t if dtype is None or t.dtype == dtype else ops.cast(t, dtype)
    if isinstance(value, Tensor) and value.dtype.hasobject:
        raise TdfTypeError("tapecli's tf.experimental.numpy takes numbers, not strings")
    if value.__class__ is NumpyArray or value.__class__ is PythonBool or (isinstance(value, Tensor) and not value.weak):
        return Tensor(np.array(value.value, dtype=dtype or result_type(value)))     # (copied: off the tape)
    if not isinstance(value, Tensor):
        raise TdfTypeError(f"expected an array-like (a tensor, a number or a list of them), got {type_word(value)}")
    want = dtype or result_type(value)
    return _converted(value, want)


def _converted(literal: Tensor, dtype: np.dtype) -> Tensor:
    """A Python number (or list) as TensorFlow converts it with this dtype as a hint and casts it
    (np_arrays.convert_to_tensor, then math_ops.cast): where the hint fails (a float for an integer or bool dtype,
    an integer for bool), TensorFlow's own conversion runs first (float32, int32), then the cast."""
    kind = literal.dtype.kind
    if dtype.kind in "iub" and kind == "f":
        return ops.cast(Tensor(literal.value.astype(np.float32)), dtype)
    if dtype.kind == "b" and kind in "iu":
        return ops.cast(Tensor(literal.value.astype(np.int32)), dtype)
    return ops.materialize(literal, dtype)


def promote(*values) -> list[Tensor]:
    """np_array_ops._promote_dtype: the arguments as tensors of their NumPy result type."""
    dtype = result_type(*values)
    return [asarray(v, dtype) for v in values]


@numpy_function()
def array(val, dtype=None, copy=True, ndmin=0):
    """A tensor of ``val`` (np_array_ops.array): of ``dtype``, with at least ``ndmin`` dimensions (ones in front)."""
    t = asarray(val, numpy_dtype(dtype))
    least = to_int(ndmin, "ndmin")
    if least > 32:
        raise TdfValueError("ndmin bigger than allowable number of dimensions: 32.")
    return ops.reshape(t, (1,) * (least - t.ndim) + t.shape) if least > t.ndim else t


@numpy_function("asarray", "asanyarray")
def asarray_(a, dtype=None):
    return asarray(a, numpy_dtype(dtype))


@numpy_function()
def ascontiguousarray(a, dtype=None):
    return array(a, dtype, ndmin=1)


@numpy_function()
def copy(a):
    return asarray(a)


@numpy_function()
def finfo(dtype):
    """NumPy's float information (eps, max, tiny...) of a dtype, as np.finfo."""
    return np_finfo(NumpyDType(numpy_dtype(dtype).name))


@numpy_function()
def iinfo(int_type):
    return np_iinfo(NumpyDType(numpy_dtype(int_type).name))


@numpy_function("result_type")
def result_type_(*arrays_and_dtypes):
    """NumPy's result type, as TensorFlow's dtype (np_utils.result_type)."""
    return DType(dtype_name(result_type(*arrays_and_dtypes)))


# ------------------------------------------------------------------ constructors

def _shape(shape) -> tuple:
    dims = to_shape(shape)
    _check_size(dims)
    return dims


@numpy_function()
def zeros(shape, dtype=python_float):
    """Zeros of ``shape`` (tnp.zeros): float64 unless a dtype is given (Python's float is float64 here)."""
    return Tensor(filled(_shape(shape), 0, numpy_dtype(dtype) if dtype is not None else default_float()))


def _given_dtype(dtype) -> np.dtype:
    """The dtype tf.ones and tf.eye are given: None is TensorFlow's TypeError there (tnp passes it on)."""
    if dtype is None:
        raise TdfTypeError("Cannot convert the argument `type_value`: None to a TensorFlow DType.")
    return numpy_dtype(dtype)


@numpy_function()
def ones(shape, dtype=python_float):
    return Tensor(filled(_shape(shape), 1, _given_dtype(dtype)))


@numpy_function()
def empty(shape, dtype=python_float):
    """tnp.empty is tnp.zeros (a tensor has no uninitialized memory)."""
    return zeros(shape, dtype)


def _like(a, dtype, fill) -> Tensor:
    """np_array_ops.zeros_like/ones_like: the shape of ``a``, the dtype given or ``a``'s own (NumPy's, for a
    literal)."""
    want = numpy_dtype(dtype) or result_type(a)
    return Tensor(filled(asarray(a).shape, fill, want))


@numpy_function("zeros_like", "empty_like")
def zeros_like(a, dtype=None):
    return _like(a, dtype, 0)


@numpy_function()
def ones_like(a, dtype=None):
    return _like(a, dtype, 1)


@numpy_function()
def full(shape, fill_value, dtype=None):
    """``fill_value`` (converted to ``dtype``) broadcast to ``shape``."""
    fill = asarray(fill_value, numpy_dtype(dtype))
    dims = to_shape(shape)
    _check_size(dims)
    return tf_broadcast_to(fill, dims)


@numpy_function()
def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None):
    if order != "K":
        raise TdfValueError("Non-standard orders are not supported.")
    if not truth(subok):
        raise TdfValueError("subok being False is not supported.")
    if shape is not None:
        raise TdfValueError("Overriding the shape is not supported.")
    t = asarray(a)
    return tf_broadcast_to(asarray(fill_value, numpy_dtype(dtype) or t.dtype), t.shape)


@numpy_function()
def eye(N, M=None, k=0, dtype=python_float):  # noqa: N803 (NumPy's parameter names)
    """Ones on the ``k``-th diagonal of an N x M matrix."""
    rows = to_int(N, "N")
    cols = rows if M is None or not truth(M) else to_int(M, "M")
    _check_size((rows, cols))
    return Tensor(np.eye(rows, cols, to_int(k, "k"), dtype=_given_dtype(dtype)))


@numpy_function()
def identity(n, dtype=python_float):
    return eye(n, n, 0, dtype)


@numpy_function()
def tri(N, M=None, k=0, dtype=None):  # noqa: N803
    """Ones at and below the ``k``-th diagonal of an N x M matrix; float64 by default."""
    rows = to_int(N, "N")
    cols = rows if M is None else to_int(M, "M")
    _check_size((rows, cols))
    want = numpy_dtype(dtype) if dtype is not None else np.dtype(np.float64)      # (np_utils.result_type(float))
    return Tensor(np.tri(rows, cols, to_int(k, "k"), dtype=want))


@numpy_function()
def arange(start, stop=None, step=1, dtype=None):
    """``start + i * step`` below ``stop`` (np_array_ops.arange): the widest of the arguments' NumPy dtypes (an
    int64 range for Python ints), computed as tf.range computes it and cast."""
    if not truth(step):
        raise TdfValueError("step must be non-zero.")
    given = [v for v in (start, step, stop) if v is not None]
    want = numpy_dtype(dtype) if dtype is not None else result_type(*given)
    lo, hi = (0, start) if stop is None else (start, stop)
    numbers = [ops.to_tensor(v) for v in (lo, hi, step)]
    if any(t.ndim for t in numbers):
        raise TdfValueError("arange takes scalars: start, stop and step")
    a, b, d = (t.value.item() for t in numbers)
    if d > 0 and a > b or d < 0 and a < b:
        return Tensor(np.zeros(0, dtype=want))
    kinds = [_range_dtype(t) for t in numbers]
    odd = [k for k in kinds if k not in _RANGE_DTYPES]
    if odd:
        raise TdfTypeError(f"tf.range, which tnp.arange calls, takes no {dtype_name(odd[0])} arguments")
    computed = max(kinds, key=_RANGE_DTYPES.index)
    a, b, d = (computed.type(v) for v in (a, b, d))
    # tf.range's count and values, in its dtype: ceil(|(limit - start) / delta|), start + i * delta
    count = int(np.ceil(np.abs((b - a) / d))) if computed.kind == "f" else (abs(b - a) + abs(d) - 1) // abs(d)
    _check_size((count,))
    values = a + np.arange(count, dtype=computed) * d
    return ops.cast(Tensor(values.astype(computed)), want)


# tf.range's dtypes, narrowest first: the widest of its arguments' is its own (math_ops.range's dtype_hierarchy)
_RANGE_DTYPES = [np.dtype(t) for t in (np.int32, np.int64, np.float16, np.float32, np.float64)]


def _range_dtype(t: Tensor) -> np.dtype:
    """An argument's dtype to tf.range: a tensor's own; a Python float float32, a Python int int32 (int64 past it)."""
    if not t.weak:
        return t.dtype
    if t.dtype.kind == "f":
        return np.dtype(np.float32)
    return np.dtype(np.int32 if -2**31 <= t.value.item() < 2**31 else np.int64)


@numpy_function()
def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=python_float, axis=0):
    """``num`` evenly spaced values (np_math_ops.linspace under NumPy 2: the dtype is that of ``start * 1.0`` and
    ``stop * 1.0``, whatever ``dtype`` says), as tf.linspace computes them; ``endpoint=False`` stops a step short."""
    want = result_type(*(_times_one(v) for v in (start, stop))) if dtype is not None else None
    a, b = asarray(start, want), asarray(stop, want)
    n = to_int(num, "num")
    if n < 0:
        raise TdfValueError("Argument `num` (number of samples) must be a non-negative integer. "
                            f"Received: num={n}")
    step = Tensor(np.array(np.nan, dtype=np.float32))
    if truth(endpoint):
        result = tf_linspace(a, b, n, axis=axis)
        if n > 1:
            step = ops.div(ops.sub(b, a), n - 1)
    else:
        if n > 0:
            step = ops.div(ops.sub(b, a), n)
        if n > 1:
            result = tf_linspace(ops.cast(a, step.dtype), ops.sub(ops.cast(b, step.dtype), step), n, axis=axis)
        else:
            result = tf_linspace(a, b, n, axis=axis)
    if want is not None:
        result = ops.cast(ops.floor(result) if want.kind in "iu" else result, want)
    return PythonTuple([result, step]) if truth(retstep) else result


def _times_one(value):
    """``value * 1.0`` as NumPy types it: a Python number's float, a tensor's own float dtype (or float64)."""
    if is_python(value) or isinstance(value, (list, tuple)):
        return 1.0
    return value if asarray(value).dtype.kind == "f" else np.dtype(np.float64)


@numpy_function()
def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """``base ** linspace(start, stop)`` in the dtype of ``start * 1.0`` and ``stop * 1.0``."""
    want = result_type(*(_times_one(v) for v in (start, stop)))
    result = linspace(start, stop, num=num, endpoint=endpoint, axis=axis)
    return ops.pow_(asarray(base, want), result)


@numpy_function()
def meshgrid(*xi, **kwargs):
    """tf.meshgrid of the arrays (``indexing`` "xy" or "ij"); sparse and copy=False are not supported."""
    if truth(kwargs.get("sparse", False)):
        raise TdfValueError("Function `meshgrid` does not support returning sparse arrays yet. Received: sparse=True")
    if not truth(kwargs.get("copy", True)):
        raise TdfValueError("Function `meshgrid` only supports copy=True. Received: copy=False")
    return tf_meshgrid(*(asarray(x) for x in xi), indexing=kwargs.get("indexing", "xy"))


def check_axis(axis: int, ndim: int, what: str) -> int:
    """``axis`` of an ``ndim``-d array, counted from 0."""
    if not -ndim <= axis < max(ndim, 1):
        raise ShapeError(f"{what}: axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % max(ndim, 1)
