"""The names a program can call (docs/spec/LANGUAGE.md §5) and the attributes of its objects."""
from __future__ import annotations

import inspect
import math
import sys

import numpy as np

from tapecli.autodiff import gradients
from tapecli import kernels, ops
from tapecli.errors import KernelValueError, NoAttribute, ShapeError, TdfTypeError, TdfValueError
from tapecli.runtime.context import current
from tapecli.runtime.limits import admit
from tapecli.runtime.tape import as_tensor, type_word
from tapecli.runtime.values import (DTYPE_ATTRIBUTES, DType, DTYPES, NumpyArray, NumpyDType, PythonBool, PythonTuple,
                                    Tensor, TensorShape, UnreadVariable, Variable, dtype_name, keras_path,
                                    filled, literal_array, tensorflow_name)
from tapecli.interpreter.conversions import joined, to_float, to_int, truth
from tapecli.interpreter.registry import BUILTINS, after_load, builtin, call_builtin, hook, load_word, register  # noqa: F401 (call_builtin re-exported)
from tapecli.runtime import spelling
from tapecli.version import KERAS_VERSION, TENSORFLOW_VERSION
from tapecli.lazymodule import LazyModule

jacobians = LazyModule("tapecli.autodiff.jacobians", globals())    # (t.jacobian, t.batch_jacobian alone)
# (random draws, a program's classes, type specs and printing: imported where a run first needs them)
draws = LazyModule("tapecli.library.draws", globals())
classes = LazyModule("tapecli.interpreter.classes", globals())
specs = LazyModule("tapecli.runtime.specs", globals())
printing = LazyModule("tapecli.interpreter.printing", globals())


class NamedResult(list):
    """A result TensorFlow gives as a named tuple (``top_k``'s values and indices): a list whose items are also
    attributes. With ``type_name`` it prints as TensorFlow's named tuple does (``PhysicalDevice(name=...)``)."""

    def __init__(self, fields: tuple, items, type_name: str | None = None):
        super().__init__(items)
        self.fields = fields
        self.type_name = type_name


# ------------------------------------------------------------- conversions

def to_shape(value, negative: bool = False) -> tuple:
    """A shape (or, with ``negative``, axes or a reshape target, whose entries may be negative) from a
    list or a 1-D integer tensor."""
    if isinstance(value, (list, tuple)):
        return tuple(to_int(v, "a dimension") for v in value)
    t = as_tensor(value) if isinstance(value, (Tensor, Variable)) else None
    if t is not None and t.ndim == 1 and t.size == 0:
        return ()                   # ([] converted, float as TensorFlow's [] is: the shape of a scalar)
    if t is not None and t.dtype.kind in "iu" and t.ndim <= 1:
        dims = tuple(int(v) for v in np.atleast_1d(t.value))
        if not negative and any(d < 0 for d in dims):
            raise ShapeError(f"a shape cannot have negative dimensions: {list(dims)}")
        return dims
    raise TdfTypeError(f"a shape must be a list of integers, got {type_word(value)}")


def to_axis(value):
    if value is None:
        return None
    if isinstance(value, (list, tuple)) or (isinstance(value, Tensor) and value.ndim == 1):
        return to_shape(value, negative=True)
    return to_int(value, "axis")


# TensorFlow's enum values (types.proto) of the dtypes tapecli has: tf.as_dtype(2) is float64
DTYPE_ENUMS = {1: "float32", 2: "float64", 3: "int32", 4: "uint8", 5: "int16", 6: "int8", 7: "string", 9: "int64",
               10: "bool", 17: "uint16", 19: "float16", 22: "uint32", 23: "uint64"}


# The Python classes TensorFlow takes as dtypes (dtypes._PYTHON_TO_TF; not int)
_PYTHON_DTYPES = {float: "float32", bool: "bool", object: "string"}


def to_dtype(value) -> np.dtype:
    if isinstance(value, DType):
        return value.np
    if getattr(value, "as_dtype", None):         # Python's float, int, bool, as TensorFlow reads them
        return DType(value.as_dtype).np
    if isinstance(value, type) and value in _PYTHON_DTYPES:        # (CPython's run: Python's own classes)
        return DTYPES[_PYTHON_DTYPES[value]]
    if isinstance(value, str) and DType(value).name in DTYPES:
        return DType(value).np
    if isinstance(value, np.dtype) and dtype_name(value) in DTYPES:     # a tensor's own dtype, as the library reads it
        return value
    if isinstance(value, type) and issubclass(value, np.generic) and dtype_name(np.dtype(value)) in DTYPES:
        return np.dtype(value)                                          # NumPy's np.int32 (CPython's run)
    if isinstance(value, Tensor) and value.weak and value.ndim == 0 and value.dtype.kind in "iu" \
            and int(value.value) in DTYPE_ENUMS:                        # TensorFlow's enum value (tf.ones(2, 3))
        return DTYPES[DTYPE_ENUMS[int(value.value)]]
    raise TdfTypeError(f"expected a dtype such as tf.float32, got {type_word(value)}")


def tensor_argument(x) -> Tensor:
    """A tensor argument as TensorFlow converts it: a list packed (its Python numbers one literal, its tensors
    stacked), a list of the library's own numbers an array; a variable is read where tapes see it."""
    if isinstance(x, list) and x and all(isinstance(v, (int, float)) for v in x):
        return ops.to_tensor(np.asarray(x))
    return ops.to_tensor(x)


def kernel_name(dtype) -> str:
    """A dtype as TensorFlow's kernels name it in their errors (C++'s float, double, half)."""
    name = dtype_name(dtype)
    return {"float32": "float", "float64": "double", "float16": "half"}.get(name, name)


def same_dtype(t: Tensor, dtype, op: str, position: int) -> Tensor:
    """``t``, which a kernel takes at input ``position`` only of the values' dtype (TensorFlow's words)."""
    if t.dtype != dtype:
        raise KernelValueError(f"cannot compute {op} as input #{position}(zero-based) was expected to be a "
                               f"{kernel_name(dtype)} tensor but is a {kernel_name(t.dtype)} tensor")
    return t


def _float_dtype(dtype) -> np.dtype:
    return current().settings.float_dtype if dtype is None else to_dtype(dtype)


def _check_size(shape, dtype=None):
    """Before a constructor allocates: the limits on elements and memory."""
    size = math.prod(int(n) for n in shape) if shape else 1
    admit(size, np.dtype(dtype or current().settings.float_dtype).itemsize, f"a tensor of shape {list(shape)}")


# ----------------------------------------------------------------- math ops

# The elementwise ops' builtins come from the op table (``Op.program``): the op's public function is the builtin, one
# call less per use. A deferred op family's (ops.BUILTINS: library/__init__.py defers it by them) are registered once
# a program's words or another use load it.
@after_load
def _op_builtins() -> None:
    for op, name in [(op, name) for op in ops.OPS.values() for name in op.program if name not in BUILTINS]:
        builtin(name)(getattr(ops, op.public_name))


@builtin()
def elu(x, alpha=1.0):
    return ops.elu(x, to_float(alpha, "alpha"))


@builtin()
def leaky_relu(x, alpha=0.2):
    return ops.leaky_relu(x, to_float(alpha, "alpha"))


@builtin()
def gelu(x, approximate=False):
    return ops.gelu(x, truth(approximate))


@builtin()
def clip(x, lo, hi):
    return ops.clip(x, lo, hi)


@builtin()
def where(condition, x=None, y=None, name=None):
    """tf.where: x where the condition holds, else y (broadcast); alone, the condition's true indices
    ([n, rank] int64, row-major order)."""
    c = ops.to_tensor(condition)
    if x is None and y is None:
        return Tensor(np.argwhere(c.value).astype(np.int64))
    if x is None or y is None:
        raise TdfValueError("tf.where: x and y must both be given, or neither")
    if c.dtype != np.bool_:
        raise TdfTypeError(f"where needs a bool condition, got {dtype_name(c.dtype)}",
                           hint=f"compare: {spelling.call('where', 'x > 0', 'a', 'b')}")
    return ops.where(c, x, y)


@builtin()
def dot(a, b):
    ta, tb = ops.to_tensor(a), ops.to_tensor(b)
    if ta.ndim == 1 and tb.ndim == 1:
        if ta.shape != tb.shape:
            raise ShapeError(f"dot of vectors of lengths {ta.shape[0]} and {tb.shape[0]}")
        return ops.reduce_sum(ops.mul(ta, tb))
    return ops.matmul(ta, tb)


def _reduction(short: str, name: str):
    def run(x, axis=None, keepdims=False):     # (ops.<name> read at the call: its family loads on first use)
        return getattr(ops, name)(x, axis=to_axis(axis), keepdims=truth(keepdims))
    run.__name__ = short
    builtin(short, name)(run)


for _short in ("sum", "mean", "max", "min", "prod", "logsumexp"):
    _reduction(_short, f"reduce_{_short}")


@builtin()
def norm(x, axis=None, keepdims=False, ord="euclidean"):
    """Euclidean norm; its gradient at zero is zero, not NaN. ``ord`` (by keyword, or a string in
    the second place) as tf.norm: "euclidean"/"fro", 1, 2, inf or p > 0 for vectors; "fro", 1 or inf
    for the matrices of a pair of axes."""
    x = ops.to_tensor(x)
    if isinstance(axis, str):           # tf.norm(x, "euclidean"): ord in TensorFlow's second place
        axis, ord = None, axis
    if ord not in ("euclidean", "fro"):
        return ops.norm_ord(x, ord, to_axis(axis), truth(keepdims))
    squared = ops.reduce_sum(ops.square(x), axis=to_axis(axis), keepdims=truth(keepdims))
    return ops.sqrt(squared)


@builtin("tf.norm", "tf.linalg.norm")      # (TensorFlow's ord second; the bare norm keeps axis there)
def tf_norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None):  # noqa: A002
    return norm(tensor, axis=axis, keepdims=False if keepdims is None else keepdims, ord=ord)


@builtin("all")
def all_(x, axis=None):
    t = ops.to_tensor(x)
    return Tensor(np.asarray(np.all(t.value, axis=to_axis(axis))))


@builtin("any")
def any_(x, axis=None):
    t = ops.to_tensor(x)
    return Tensor(np.asarray(np.any(t.value, axis=to_axis(axis))))


@builtin()
def argmax(x, axis=0, output_type=None):
    out = ops.argmax(x, to_int(axis, "axis") if axis is not None else 0)
    return out if output_type is None else ops.cast(out, _index_dtype(output_type))


@builtin()
def argmin(x, axis=0, output_type=None):
    out = ops.argmin(x, to_int(axis, "axis") if axis is not None else 0)
    return out if output_type is None else ops.cast(out, _index_dtype(output_type))


def _index_dtype(output_type):
    dt = to_dtype(output_type)
    if dt not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise TdfTypeError(f"output_type must be int32 or int64, got {dtype_name(dt)}")
    return dt


@builtin()
def softmax(x, axis=-1):
    return ops.softmax(x, to_int(axis, "axis"))


@builtin()
def log_softmax(x, axis=-1):
    return ops.log_softmax(x, to_int(axis, "axis"))


@builtin()
def clip_by_norm(x, clip_norm, axes=None, name=None):
    """x * clip_norm / max(norm(x), clip_norm), as tf.clip_by_norm (the norm over ``axes``, all by default); a
    tf.IndexedSlices' rows are clipped by their own norm, and it stays one."""
    slices = x if getattr(x, "is_indexed_slices", False) else None
    x = ops.to_tensor(x if slices is None else slices.values)
    axes = to_axis(axes)
    n = ops.sqrt(ops.reduce_sum(ops.square(x)) if axes is None else ops.reduce_sum(ops.square(x), axes, True))
    clipped = ops.div(ops.mul(x, clip_norm), ops.maximum(n, clip_norm))
    return clipped if slices is None else type(slices)(clipped, slices.indices, slices.dense_shape)


@builtin()
def stop_gradient(x):
    return ops.stop_gradient(x)


@builtin()
def cast(x, dtype):
    return ops.cast(x, to_dtype(dtype))


@builtin()
def transpose(x, perm=None, conjugate=False, name=None):     # (conjugate: the same, of real numbers)
    return ops.transpose(x, None if perm is None else to_shape(perm))


@builtin()
def reshape(x, shape):
    t = ops.to_tensor(x)
    shape = list(to_shape(shape, negative=True))
    if any(s < -1 for s in shape):
        raise ShapeError(f"a shape cannot have negative dimensions other than -1: {shape}")
    if shape.count(-1) > 1:
        raise ShapeError("reshape takes at most one -1")
    if -1 in shape:
        known = int(np.prod([s for s in shape if s != -1]))
        if known == 0 or t.size % known:
            raise ShapeError(f"cannot reshape {list(t.shape)} to {shape}")
        shape[shape.index(-1)] = t.size // known
    if int(np.prod(shape)) != t.size:
        raise ShapeError(f"cannot reshape a tensor of shape {list(t.shape)} ({t.size} elements) to {shape}")
    return ops.reshape(t, shape)


@builtin()
def expand_dims(x, axis):
    t = ops.to_tensor(x)
    a = to_int(axis, "axis")
    if not -t.ndim - 1 <= a <= t.ndim:
        raise ShapeError(f"axis {a} is out of range for expand_dims of shape {list(t.shape)}")
    a = a % (t.ndim + 1)
    return ops.reshape(t, t.shape[:a] + (1,) + t.shape[a:])


@builtin()
def squeeze(x, axis=None):
    t = ops.to_tensor(x)
    axes = to_axis(axis)
    if axes is None:
        shape = tuple(n for n in t.shape if n != 1)
    else:
        axes = {a % t.ndim for a in (axes if isinstance(axes, tuple) else (axes,))}
        for a in axes:
            if t.shape[a] != 1:
                raise ShapeError(f"cannot squeeze axis {a} of size {t.shape[a]}")
        shape = tuple(n for i, n in enumerate(t.shape) if i not in axes)
    return ops.reshape(t, shape)


def _tensor_list(xs, what):
    if isinstance(xs, Tensor) and xs.ndim >= 1 and xs.shape[0]:     # a literal list of numbers (or a tensor): its rows
        return ops.rows(xs)
    if not isinstance(xs, (list, tuple)) or not xs:
        raise TdfTypeError(f"{what} takes a non-empty list of tensors")
    return list(xs)


@builtin()
def concat(xs, axis=0):
    xs = _tensor_list(xs, "concat")
    return ops.concat(xs, to_int(axis, "axis"))


@builtin()
def stack(xs, axis=0):
    return ops.stack(_tensor_list(xs, "stack"), to_int(axis, "axis"))


@builtin()
def tensor(value, dtype=None):
    """A tensor from a literal or a list of tensors (stacked)."""
    if isinstance(value, list):
        t = ops.stack(value)
    else:
        t = ops.to_tensor(value)
    return t if dtype is None else ops.cast(t, to_dtype(dtype))


# -------------------------------------------------------------- constructors

@builtin()
def zeros(shape, dtype=None):
    shape = to_shape(shape)
    _check_size(shape)
    return Tensor(filled(shape, 0, _float_dtype(dtype)))


@builtin()
def ones(shape, dtype=None):
    shape = to_shape(shape)
    _check_size(shape)
    return Tensor(filled(shape, 1, _float_dtype(dtype)))


@builtin()
def fill(shape, value, dtype=None):
    shape = to_shape(shape)
    _check_size(shape)
    v = ops.to_tensor(value)
    dt = to_dtype(dtype) if dtype is not None else (ops.default_dtype(v.value) if v.weak else v.dtype)
    if v.ndim:
        raise ShapeError(f"fill takes a scalar value, got shape {list(v.shape)}",
                         hint=f"use {spelling.call('ones', 'shape')} * value")
    return Tensor(np.full(shape, v.value, dtype=dt))


@builtin()
def linspace(start, stop, num, dtype=None, axis=0, name=None):
    """``num`` evenly spaced values from start to stop; start and stop may be tensors (broadcast together), the
    values then along ``axis`` of the result."""
    n = to_int(num, "num")
    if n < 0:
        raise TdfValueError(f"linspace needs a count of at least 0, got {n}")
    ends = [ops.to_tensor(v) for v in (start, stop)]
    typed = [t.dtype for t in ends if not t.weak and t.dtype.kind == "f"]     # (a float tensor's dtype, start's first)
    dt = typed[0] if dtype is None and typed else _float_dtype(dtype)
    a, b = (np.asarray(t.value, dtype=dt) for t in ends)
    if a.ndim == 0 and b.ndim == 0:
        _check_size((n,))
        return Tensor(_spaced(a, b, n, 0))
    try:
        shape = np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise ShapeError(f"linspace: start of shape {list(a.shape)} and stop of shape {list(b.shape)} do not "
                         "broadcast") from None
    _check_size((n, *shape))
    k = to_int(axis, "axis")
    if not -len(shape) - 1 <= k <= len(shape):
        raise ShapeError(f"linspace: axis {k} is out of range for a result of rank {len(shape) + 1}")
    if 0 in shape:          # (no value: without the n steps, which --max-elements does not weigh here)
        return Tensor(np.moveaxis(np.zeros((n, *shape), dt), 0, k))
    return Tensor(_spaced(*np.broadcast_arrays(a, b), n, k))


def _spaced(a, b, n, axis):
    """TensorFlow's LinSpace in the values' dtype: ``start + i * step``, step ``(stop - start) / (num - 1)``, and
    ``stop`` itself last (NumPy's linspace rounds otherwise)."""
    steps = np.arange(n, dtype=a.dtype).reshape((n,) + (1,) * a.ndim)
    out = a + steps * ((b - a) / a.dtype.type(max(n - 1, 1)))
    if n > 1:
        out[-1] = b
    return np.moveaxis(out, 0, axis)


@builtin("range")
def range_(start, limit=None, delta=1, dtype=None):
    """Like Python's range: a literal (weak) tensor that takes the dtype it meets."""
    values = [ops.to_tensor(v) for v in (start, limit, delta) if v is not None]
    if any(v.dtype.kind == "f" for v in values):
        lo, hi, step = (to_float(start), to_float(limit), to_float(delta)) if limit is not None else \
            (0.0, to_float(start), to_float(delta))
    else:
        lo, hi, step = (to_int(start), to_int(limit), to_int(delta)) if limit is not None else \
            (0, to_int(start), to_int(delta))
    if step == 0:
        raise TdfValueError("range() step must not be zero")
    count = max(0, math.ceil((hi - lo) / step))
    _check_size((count,))
    arr = literal_array(lo + step * np.arange(count))
    return Tensor(arr, weak=True) if dtype is None else Tensor(arr.astype(to_dtype(dtype)))


# tf.__version__: the release whose semantics tapecli follows (programs print it first)
register("tf.__version__", TENSORFLOW_VERSION)
register("keras.__version__", KERAS_VERSION)


@builtin("tf.range")
def tf_range(start, limit=None, delta=1, dtype=None, name="range"):
    """tf.range: a tensor, not Python's literal range: the dtype given, else the first tensor argument's, else
    int32 for integers and float32 for floats."""
    if dtype is None:
        strong = next((v for v in (start, limit, delta) if isinstance(v, Tensor) and not v.weak), None)
        dtype = strong.dtype if strong is not None else None
    t = range_(start, limit, delta, None if dtype is None else dtype)
    return ops.materialize(t) if t.weak else t


tf_range.literals = "the widest of start, limit and delta"     # (interpreter/registry.py: call_builtin)


@builtin()
def eye(num_rows, num_columns=None, batch_shape=None, dtype=None, name=None):
    rows = to_int(num_rows, "num_rows")
    cols = rows if num_columns is None else to_int(num_columns, "num_columns")
    batch = () if batch_shape is None else to_shape(batch_shape)
    _check_size((*batch, rows, cols))
    return Tensor(np.broadcast_to(np.eye(rows, cols, dtype=_float_dtype(dtype)), (*batch, rows, cols)).copy())


def to_seed(seed) -> int:
    n = to_int(seed, "seed")
    if n < 0:
        raise TdfValueError(f"a seed must be a non-negative integer, got {n}")
    return n


def _source(interp, seed):
    """What a draw takes its numbers from: the run's generator, or the seed of a generator made for it."""
    return interp.rng if seed is None else to_seed(seed)


def _rng(interp, seed) -> np.random.Generator:
    return draws.generator(_source(interp, seed))


def _draw(interp, shape, seed, dtype, sample, *params):
    """A tensor of ``shape`` drawn by ``sample(source, *params, shape)`` (``kernels.drawn``: a loop plan draws
    again), weighed first, in the float dtype asked for (converted by a kernel)."""
    shape = to_shape(shape)
    _check_size(shape)
    return draws.drawn(sample, _float_dtype(dtype), _source(interp, seed), *params, shape)


def _seed_dtype(positional: tuple, seed, dtype):
    """The seed and dtype of TDF's order (shape, mean, stddev, seed, dtype) or TensorFlow's (shape, mean, stddev,
    dtype, seed), given by position (a dtype given fourth is the dtype) or by keyword."""
    if len(positional) > 2:
        raise TdfTypeError(f"takes at most 5 positional arguments ({3 + len(positional)} given)")
    given = dict(zip(("dtype", "seed") if positional and isinstance(positional[0], DType) else ("seed", "dtype"),
                     positional))
    for name, value in (("seed", seed), ("dtype", dtype)):
        if value is not None:
            if name in given:
                raise TdfTypeError(f"got multiple values for argument '{name}'")
            given[name] = value
    return given.get("seed"), given.get("dtype")


def tf_draw(op: str, shape, seed, dtype, *params):
    """TensorFlow's own numbers for a seeded draw of a TensorFlow program (draws.tensorflow_stream), None
    where the run's generator draws; its values made again by a loop plan (``kernels.drawn``)."""
    state = draws.tensorflow_stream(seed)
    if state is None:
        return None
    shape = to_shape(shape)
    _check_size(shape)
    want = _float_dtype(dtype) if op != "uniform" or dtype is None or to_dtype(dtype).kind == "f" else to_dtype(dtype)
    return Tensor(kernels.drawn(draws.tf_op_values, state, op, None if seed is None else to_int(seed, "seed"), want, shape,
                                *params))


def _python_number(value):
    """A bound as TensorFlow's Python code sees it: a Python int stays an int (tf.random.uniform's scaling
    depends on it), a float a float."""
    if isinstance(value, Tensor) and value.weak and value.ndim == 0:
        return value.value.item()
    return to_float(value)


@builtin(interp=True)
def normal(interp, shape, mean=0.0, stddev=1.0, *seed_dtype, seed=None, dtype=None, name=None):
    seed, dtype = _seed_dtype(seed_dtype, seed, dtype)
    found = tf_draw("normal", shape, seed, dtype, to_float(mean), to_float(stddev))
    if found is not None:
        return found
    return _draw(interp, shape, seed, dtype, draws.normal_values, to_float(mean), to_float(stddev))


@builtin(interp=True)
def uniform(interp, shape, minval=0.0, maxval=1.0, *seed_dtype, seed=None, dtype=None, name=None):
    seed, dtype = _seed_dtype(seed_dtype, seed, dtype)
    found = tf_draw("uniform", shape, seed, dtype, _python_number(minval), None if maxval is None else
                    _python_number(maxval))
    if found is not None:
        return found
    return _draw(interp, shape, seed, dtype, draws.uniform_values, to_float(minval), to_float(maxval))


@builtin(interp=True)
def glorot_uniform(interp, shape, seed=None, dtype=None):
    from tapecli.library.keras.initializers import glorot_uniform as glorot    # (Keras-lite: not at start-up)
    shape = to_shape(shape)
    _check_size(shape)
    return Tensor(glorot(shape, _rng(interp, seed), _float_dtype(dtype)))


@builtin(interp=True)
def seed(interp, n):
    interp.rng = np.random.default_rng(to_seed(n))


# --------------------------------------------------------------- inspection

def sparse_dims(x) -> tuple[int, ...] | None:
    """A tf.SparseTensor's dense shape (what tf.shape, tf.size and tf.rank read of one), else None."""
    if x.__class__ in (Tensor, Variable) or not hasattr(x, "dense_shape"):
        return None
    sparse = sys.modules.get("tapecli.library.tf_sparse")   # (no sparse tensor before tf.sparse loads; it imports this)
    return x.dims if sparse is not None and isinstance(x, sparse.SparseTensor) else None


def _shape_type(out_type) -> np.dtype:
    """tf.shape's out_type: TensorFlow's Shape op takes int32 or int64."""
    dtype = to_dtype(out_type)
    if dtype not in (np.int32, np.int64):
        raise KernelValueError(f"Value for attr 'out_type' of {kernel_name(dtype)} is not in the list of allowed "
                               "values: int32, int64")
    return dtype


@builtin("shape")
def shape_(input, out_type=None, name=None):  # noqa: A002 (TensorFlow's parameter names)
    """A tensor's dimensions (``out_type``: int32, TensorFlow's default, where the program uses them, or int64)."""
    dims = sparse_dims(input)
    if dims is not None:
        return Tensor(np.array(dims, dtype=np.int32 if out_type is None else _shape_type(out_type)))
    t = as_tensor(input) if isinstance(input, (Tensor, Variable)) else None
    if t is None:
        raise TdfTypeError(f"shape() takes a tensor, got {type_word(input)}")
    if out_type is not None:
        return Tensor(np.array(t.shape, dtype=_shape_type(out_type)))
    return Tensor(np.array(t.shape, dtype=np.int64), weak=True)


@builtin()
def size(input, out_type=None, name=None):  # noqa: A002
    """The number of elements (a sparse tensor's of its dense shape), in ``out_type``: TensorFlow's Size op
    casts to any dtype it is given."""
    dims = sparse_dims(input)
    n = math.prod(dims) if dims is not None else ops.to_tensor(input).size
    if out_type is not None:
        return Tensor(np.array(n, dtype=to_dtype(out_type)))
    if dims is not None:
        return Tensor(np.array(n, dtype=np.int32))
    return Tensor(np.array(n, dtype=np.int64), weak=True)


@builtin("len", interp=True)
def len_(interp, x):
    if isinstance(x, (list, dict, str, bytes)):
        return Tensor(np.array(len(x), dtype=np.int64), weak=True)
    if hasattr(x, "length"):            # (a tf.data.Dataset)
        return Tensor(np.array(x.length(), dtype=np.int64), weak=True)
    if isinstance(x, classes.Instance) and x.cls.find("__len__")[0] is not None:      # (a program's class's own)
        return interp.call_value(x.get_attribute(interp, "__len__", None), [])
    t = ops.to_tensor(x)
    if t.ndim == 0 and t.dtype.kind in "OSU" and x.__class__ is NumpyArray:     # (bytes, a NumPy str_: Python's len)
        return Tensor(np.array(len(t.value[()]), dtype=np.int64), weak=True)
    if t.ndim == 0:
        raise TdfTypeError("len() of a scalar", hint=f"use {spelling.call('size', 'x')}")
    return Tensor(np.array(t.shape[0], dtype=np.int64), weak=True)


@builtin("print", interp=True)
def print_(interp, *values, sep=" ", end="\n", flush=False):
    if interp.muted_prints:          # a tf.function's call that runs its traced graph: Python's print ran at tracing
        return
    for name, text in (("sep", sep), ("end", end)):
        if not isinstance(text, str):
            raise TdfTypeError(f"print(): {name} must be a string, got {type_word(text)}")
    line = joined(sep, [printing.program_str(v) for v in values], "print()")
    if end == "\n":
        interp.output.append(line)
    else:
        interp.output.write(line + end)


@builtin("tf.print", interp=True, literals="a Python value prints as pprint writes it")
def tf_print(interp, *inputs, output_stream=None, summarize=3, sep=" ", end="\n", name=None):
    """tf.print: each input as TensorFlow summarizes it (printing.tf_print_text), to standard error as TensorFlow
    writes it, or to standard output where ``output_stream`` is the program's ``sys.stdout``."""
    if not isinstance(sep, str) or not isinstance(end, str):
        raise TdfTypeError("tf.print(): sep and end must be strings")
    if output_stream is not None and not hasattr(output_stream, "standard_error"):
        raise TdfValueError("tf.print(): output_stream is sys.stdout or sys.stderr in a tapecli program (a file's "
                            "path or a logging function reaches outside the run)")
    n = to_int(summarize, "summarize") if summarize is not None else 3
    text = joined(sep, [printing.tf_print_text(v, n) for v in inputs], "tf.print()")
    if output_stream is not None and not output_stream.standard_error:
        interp.output.write(text + end)
    else:
        interp.output.write_error(text + end)


for _d in ("float32", "float64", "int32", "int64", "bool", "f32", "f64", "i32", "i64"):
    register(_d, DType(_d))


# ---------------------------------------------------------------- attributes

@hook("attribute")
def attribute(interp, value, attr, node):
    from tapecli.interpreter.objects import EFFECT, BoundMethod, ProgramObject, TapeObject
    if isinstance(value, ProgramObject):
        return value.get_attribute(interp, attr, node)
    if isinstance(value, TapeObject):
        return _tape_attribute(interp, value, attr, node)
    if attr == "experimental_get_tracing_count" and getattr(value, "traced", False):      # a tf.function's
        return BoundMethod(attr, lambda call_node: Tensor(np.array(0 if value.traces is None else value.traces.count),
                                                          weak=True))
    if attr == "__name__" and getattr(value, "is_builtin", False):     # (keras.activations.relu.__name__)
        return value.__name__.rstrip("_")
    class_methods = getattr(value, "class_methods", None)       # a Keras class's own (Dense.from_config)
    if class_methods is not None and attr in class_methods:
        return BoundMethod(attr, lambda call_node, *args, **kwargs: class_methods[attr](interp, *args, **kwargs))
    if isinstance(value, Variable):
        if attr in ASSIGNS:
            return BoundMethod(attr, _assign_method(value, attr), replay=EFFECT)
        if attr in SPARSE_SCATTERS:
            return BoundMethod(attr, lambda call_node, sparse_delta, use_locking=False, name=None:
                               _scatter_slices(value, attr, sparse_delta), replay=EFFECT)
        if attr == "sparse_read":
            return BoundMethod(attr, lambda call_node, indices, name=None: ops.gather(value, indices))
        if attr in SCATTERS:
            return BoundMethod(attr, lambda call_node, indices, updates, name=None:
                               _scatter(value, attr, indices, updates), replay=EFFECT)
        if attr == "name":      # TensorFlow's name of it in a Python program, tapecli's label in TDF
            return tensorflow_name(value) if current().settings.python_spelling else value.name
        if attr == "trainable":
            return PythonBool(np.array(value.trainable))
        if value.keras and attr == "dtype":         # (a Keras variable's dtype is the name of one)
            return dtype_name(value.dtype)
        if value.keras and attr == "path":
            return keras_path(value)
        if attr == "constraint":            # (the function given, as TensorFlow's variable holds it)
            return variable_constraint(value)
        if attr in ("shape", "get_shape") and value.declared is not None:
            raise TdfValueError(f"the static shape {value.declared} of a variable made with unknown dimensions is "
                                "printed on CPython's run (TAPECLI_TF_ON_CPYTHON), not the interpreter's")
        if attr in ("shape", "dtype", "value", "get_shape", "device"):
            return _tensor_attribute(value.read(), attr)
    elif isinstance(value, TensorShape):
        return _shape_attribute(value, attr)
    elif isinstance(value, Tensor):
        sliced = current().variable_slices.of(value) if attr == "assign" else None     # (TensorFlow's only)
        if sliced is not None:
            return BoundMethod(attr, lambda call_node, e: assign_value(*sliced, attr, e), replay=EFFECT)
        if attr == "_keras_mask":           # (a Keras masking layer's output: Embedding(mask_zero=True), Masking)
            from tapecli.library.keras.layers import eager_mask
            mask = eager_mask(interp, value)
            if mask is not None:
                return mask
        return _tensor_attribute(value, attr)
    elif isinstance(value, DType):
        return _dtype_attribute(value, attr)
    elif isinstance(value, (specs.Shape, specs.TypeSpec)) and not attr.startswith("_") and hasattr(value, attr):
        return _spec_attribute(getattr(value, attr), attr)
    raise NoAttribute(f"{type_word(value)} has no attribute {attr}")


def _spec_attribute(found, attr):
    """An attribute of a static shape with unknown dimensions or of a spec (a ragged tensor's shape, a
    RaggedTensorSpec): its Python value as the program holds one, a method's result likewise."""
    from tapecli.interpreter.objects import BoundMethod
    if callable(found):
        return BoundMethod(attr, lambda call_node, *args: _spec_attribute(found(*args), attr))
    if isinstance(found, bool):
        return PythonBool(np.array(found))
    if isinstance(found, int):
        return Tensor(np.array(found, dtype=np.int64), weak=True)
    if isinstance(found, list):
        return [_spec_attribute(v, attr) for v in found]
    return found


_NUMPY_DTYPE_ATTRIBUTES = ("name", "kind", "itemsize", "char", "str")


def _dtype_attribute(dtype: DType, attr):
    """TensorFlow's DType properties (runtime.values.DType), or a NumPy array's dtype's own."""
    from tapecli.interpreter.conversions import python_number
    from tapecli.library.numpy_forms import NumpyScalarType
    if attr == "as_numpy_dtype" and not isinstance(dtype, NumpyDType) or attr == "type" and isinstance(dtype, NumpyDType):
        return NumpyScalarType(dtype.name)
    if attr in (_NUMPY_DTYPE_ATTRIBUTES if isinstance(dtype, NumpyDType) else DTYPE_ATTRIBUTES):
        try:
            found = getattr(dtype.np if isinstance(dtype, NumpyDType) else dtype, attr)
        except TypeError as e:          # the minimum of tf.bool
            raise TdfTypeError(str(e)) from None
        return NumpyArray(np.array(found)) if isinstance(found, np.generic) else python_number(found)    # (NumPy's)
    raise NoAttribute(f"{type_word(dtype)} has no attribute {attr}")


def _shape_attribute(shape: TensorShape, attr):
    """TensorFlow's TensorShape: ``as_list()``, ``rank``/``ndims``, ``num_elements()``, ``is_fully_defined()``
    (a shape here is always known), ``dims``."""
    from tapecli.interpreter.objects import BoundMethod
    dims = [Tensor(np.array(d, dtype=np.int64), weak=True) for d in shape.value]      # (a Python list of ints)
    if attr == "as_list":
        return BoundMethod(attr, lambda call_node: list(dims))
    if attr in ("rank", "ndims"):
        return Tensor(np.array(shape.size, dtype=np.int64), weak=True)
    if attr == "dims":
        return dims
    if attr == "num_elements":
        return BoundMethod(attr, lambda call_node: Tensor(np.array(int(np.prod(shape.value)), dtype=np.int64), weak=True))
    if attr == "is_fully_defined":
        return BoundMethod(attr, lambda call_node: PythonBool(np.array(True)))
    raise NoAttribute(f"a TensorShape has no attribute {attr}",
                       hint="a shape has as_list(), rank, ndims, dims, num_elements() and is_fully_defined()")


def variable_constraint(variable: Variable):
    """``v.constraint``: what ``tf.Variable(constraint=)`` or a layer's ``kernel_constraint=`` gave it, or None."""
    found = current().constraints.get(variable.id)
    return getattr(found, "fn", found)


def _tensor_attribute(t: Tensor, attr):
    if attr == "shape":
        if isinstance(t, NumpyArray):       # NumPy's shape is a tuple of Python ints ([w.shape for w in ws] prints so)
            return PythonTuple(Tensor(np.array(d, dtype=np.int64), weak=True) for d in t.shape)
        return TensorShape(np.array(t.shape, dtype=np.int64), weak=True)
    if attr == "dtype":
        return NumpyDType(str(t.dtype)) if isinstance(t, NumpyArray) else DType(dtype_name(t.dtype))
    if attr == "value":
        return t
    if attr == "T":                         # (a NumPy array's: NumPy's view, which NumPy's operators take)
        return NumpyArray(t.value.T) if t.__class__ is NumpyArray else ops.transpose(t)
    if attr == "get_shape":
        from tapecli.interpreter.objects import BoundMethod
        return BoundMethod(attr, lambda call_node: _tensor_attribute(t, "shape"))
    if attr == "device":
        return DEVICE
    raise NoAttribute(f"a tensor has no attribute {attr}", hint="tensors have .shape, .dtype and .T")


# Where TensorFlow's eager CPU tensors live (``t.device``): tapecli's host tensors' place in TensorFlow's words.
DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"


ASSIGNS = ("assign", "assign_add", "assign_sub")
SCATTERS = ("scatter_nd_update", "scatter_nd_add", "scatter_nd_sub")


def _assign_method(var: Variable, how: str):
    """``var.assign(value, use_locking=False, name=None, read_value=True)`` (assign_add and assign_sub: ``delta``),
    as TensorFlow's: with read_value=False, None. (It closes over the variable and ``how`` alone: a loop plan
    knows one method of one variable by them.)"""
    if how == "assign":
        def assign(call_node, value, use_locking=False, name=None, read_value=True):
            return _assigned(var, how, value, read_value)
        return assign

    def update(call_node, delta, use_locking=False, name=None, read_value=True):
        return _assigned(var, how, delta, read_value)
    return update


def _assigned(var: Variable, how: str, value, read_value):
    done = assign_value(var, how, value)
    return done if read_value is True or truth(read_value) else None      # (the default reads nothing)


def assign_value(var: Variable, *key_how_e):
    """``var.assign(e)`` (or assign_add, assign_sub); with a key, the assign of the slice ``var[key]`` alone."""
    *key, how, e = key_how_e
    new = ops.to_tensor(e)
    new = ops.materialize(new, var.dtype) if new.weak else new
    if new.__class__ is NumpyArray and new.dtype != var.dtype:     # (TF converts a NumPy value to the variable's
        new = Tensor(np.asarray(new.value).astype(var.dtype))     # dtype, as NumPy's astype does; not a tensor)
    if new.dtype != var.dtype:
        raise TdfValueError(f"{how} of a {dtype_name(new.dtype)} value to {dtype_name(var.dtype)} "   # (TF's class)
                           f"variable {var.name}", hint=f"use {spelling.cast('...', dtype_name(var.dtype))}")
    old = var.read().value
    part = old[key[0]] if key else old
    if how == "assign" and not key and new.shape != part.shape and var.fits(new.shape):
        part = new.value        # (a variable of a partly known shape: the value's shape is its new one)
    if not key and new.shape != part.shape:     # (a slice's assign broadcasts; the variable's takes its shape only)
        if how == "assign":
            shape = tuple(part.shape) if var.declared is None else var.declared
            raise TdfValueError(f"Cannot assign value to variable ' {tensorflow_name(var)}': Shape mismatch.The variable "
                                f"shape {shape}, and the assigned value shape {tuple(new.shape)} are "
                                "incompatible.")
        raise KernelValueError(f"Cannot update variable with shape {list(part.shape)} using a Tensor with shape "
                               f"{list(new.shape)}, shapes must be equal.")
    try:
        update = np.broadcast_to(new.value, np.shape(part))
    except ValueError:
        raise ShapeError(f"{how} of a value of shape {list(new.shape)} to variable {var.name}"
                         f"{'' if not key else ' sliced'} of shape {list(np.shape(part))}") from None
    changed = {"assign": lambda: update.copy(), "assign_add": lambda: part + update,
               "assign_sub": lambda: part - update}[how]()
    if key:
        value = old.copy()
        value[key[0]] = changed
    else:
        value = changed
    var.assign(value.astype(var.dtype, copy=False))
    ctx = current()
    if ctx.provenance.enabled:
        ctx.provenance.assigns.append((ctx.provenance.now, ctx.settings.line, var.id, var.name, how, (new.id,)))
    return UnreadVariable(var)


# ``var.scatter_add(tf.IndexedSlices(...))`` and its kin: how each row meets the variable's (None: replaces it)
# (batch_scatter_update: the indices' leading axes are the variable's, each batch's rows replaced)
SPARSE_SCATTERS = {"scatter_update": None, "scatter_add": np.add, "scatter_sub": np.subtract,
                   "scatter_max": np.maximum, "scatter_min": np.minimum, "scatter_mul": np.multiply,
                   "scatter_div": np.divide, "batch_scatter_update": None}


def _scatter_slices(var: Variable, how: str, sparse_delta):
    """TensorFlow's sparse updates of a variable's rows, one row after another (a repeated index meets each)."""
    if not getattr(sparse_delta, "is_indexed_slices", False):
        raise TdfTypeError(f"{how}: sparse_delta is not IndexedSlices: {type_word(sparse_delta)}")
    value = np.array(var.read().value)
    indices = np.asarray(sparse_delta.indices.value)
    rows = np.asarray(sparse_delta.values.value, dtype=value.dtype)
    batch = indices.ndim - 1 if how == "batch_scatter_update" else 0
    if value.ndim <= batch or indices.shape[:batch] != value.shape[:batch] \
            or rows.shape[:indices.ndim] != indices.shape:
        raise ShapeError(f"{how}: indices of shape {list(indices.shape)} and updates of shape {list(rows.shape)} "
                         f"do not fit a variable of shape {list(value.shape)}")
    if indices.size and (indices.min() < 0 or indices.max() >= value.shape[batch]):
        raise KernelValueError(f"{how}: indices {indices.tolist()} out of range for a variable of "
                               f"{value.shape[batch]} rows")
    combine = SPARSE_SCATTERS[how]
    for at in np.ndindex(indices.shape[:batch]):
        if combine is None:
            value[at][indices[at]] = rows[at]
        else:
            combine.at(value[at], indices[at], rows[at])
    var.assign(value)
    return UnreadVariable(var)


def _scatter(var: Variable, how: str, indices, updates):
    """``var.scatter_nd_update(indices, updates)`` (add, sub): tf.tensor_scatter_nd_* of its value, assigned."""
    name = "tensor_" + how
    load_word(name)                     # (tf_array's family, imported when a program first names it)
    scatter = BUILTINS[name]
    var.assign(np.asarray(ops.to_tensor(scatter(var.read(), indices, updates)).value, dtype=var.dtype))
    return UnreadVariable(var)


def _tape_attribute(interp, tape_obj, attr, node):
    from tapecli.interpreter.objects import PURE, REQUEST, BoundMethod, PausedTape
    tape = tape_obj.tape

    def request(kind, f):
        def run(call_node, *args, **kwargs):
            target_node = call_node.args[0] if call_node.args else _kw_node(call_node, "target")
            source_node = call_node.args[1] if len(call_node.args) > 1 else _kw_node(call_node, "sources", "source")
            result, values, whys = f(tape, args, kwargs, current().settings.line)
            sources = args[1] if len(args) > 1 else kwargs.get("sources", kwargs.get("source"))
            target = args[0] if args else kwargs.get("target")
            objective = gradients.objective(target, kwargs.get("output_gradients", args[2] if len(args) > 2 else None)) \
                if kind == "gradient" else None
            interp.add_request(kind, tape, target, target_node, source_node, sources, values, result, whys,
                               objective)
            return result
        return BoundMethod(attr, run, replay=REQUEST)

    if attr == "gradient":
        return request("gradient", _checked(_program_gradient, "gradient(target, sources, output_gradients=None, "
                                                               "unconnected_gradients=\"none\")"))
    if attr == "jacobian":
        return request("jacobian", _checked(jacobians.jacobian, "jacobian(target, sources, "
                                                                "unconnected_gradients=\"none\")"))
    if attr == "batch_jacobian":
        return request("batch_jacobian", _checked(jacobians.batch_jacobian, "batch_jacobian(target, source)"))
    if attr == "watched_variables":
        return BoundMethod(attr, lambda call_node: PythonTuple(tape.watched_variables()))     # (TensorFlow's tuple)
    if attr == "watch":
        return BoundMethod(attr, lambda call_node, *values: interp.watch_values(tape, list(values), call_node.args,
                                                                                 call_node), replay=PURE)
    if attr == "reset":
        return BoundMethod(attr, lambda call_node: interp.reset_tape(tape, call_node))
    if attr == "stop_recording":
        return BoundMethod(attr, lambda call_node: PausedTape(tape))
    if attr == "name":
        return tape.name
    raise NoAttribute(f"a tape has no attribute {attr}", hint="tapes have gradient, jacobian, batch_jacobian, "
                       "watched_variables, watch, reset and stop_recording")


def _program_gradient(tape, target, sources, output_gradients=None, unconnected_gradients="none", line=None):
    """``tape.gradient``: in a Python program, a variable read only by gathers (an Embedding's table) gets
    TensorFlow's tf.IndexedSlices of the rows read; a TDF program's gradients are dense tensors."""
    rows = None
    if current().settings.python_spelling:
        from tapecli.library.tf_indexed_slices import IndexedSlices
        rows = IndexedSlices
    return gradients.gradient(tape, target, sources, output_gradients, unconnected_gradients, line, rows=rows)


def _checked(f, usage):
    """``run(tape, args, kwargs, line)``: ``f(tape, *args, line=line, **kwargs)`` once a program's arguments
    fit ``f``'s parameters other than ``tape`` and ``line`` (a TdfTypeError with the usage where not)."""
    found = _SIGNATURES.get(f)
    if found is None:
        params = [p for name, p in inspect.signature(f).parameters.items() if name not in ("tape", "line")]
        required = sum(p.default is inspect.Parameter.empty for p in params)
        found = _SIGNATURES[f] = (inspect.Signature(params), required, len(params))
    sig, required, most = found
    name = usage.split("(")[0]

    def run(tape, args, kwargs, line):
        if kwargs or not required <= len(args) <= most:       # (positional arguments that fit: the usual call)
            try:
                sig.bind(*args, **kwargs)
            except TypeError as e:
                raise TdfTypeError(f"{name}(): {e}", hint=f"usage: t.{usage}") from None
        return f(tape, *args, line=line, **kwargs)
    return run


_SIGNATURES: dict = {}      # gradients' functions -> (signature without tape and line, required, most), once per process


def _kw_node(call_node, *names):
    for kw in call_node.keywords:
        if kw.name in names:
            return kw.value
    return None


def swapped_values(args, kwargs, kind: type, part):
    """The arguments with each value of class ``kind`` in them (in lists, tuples and dicts too) replaced by
    ``part(value)``, and those values in order (tf.sparse.map_values' SparseTensors, tf.ragged.map_flat_values'
    RaggedTensors)."""
    found = []

    def inner(value):
        if isinstance(value, kind):
            found.append(value)
            return part(value)
        if value.__class__ in (list, PythonTuple):
            return value.__class__(inner(v) for v in value)
        return {k: inner(v) for k, v in value.items()} if isinstance(value, dict) else value
    return inner(list(args)), inner(kwargs), found
