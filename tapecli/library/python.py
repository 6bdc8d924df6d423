"""Python's builtins and methods as TensorFlow programs use them (docs/spec/LANGUAGE.md §11), and the
TensorFlow constructors of values: ``Variable``, ``constant``, ``Module`` and ``Layer`` bases.

Lists, dicts and strings are the program's own values; their methods are answered here by name
(never through Python's attributes), and formatting only ever formats numbers and strings."""
from __future__ import annotations

import builtins
import sys

import numpy as np

from tapecli import ops
from tapecli.errors import TdfNameError, TdfTypeError, TdfValueError
from tapecli.interpreter.classes import (KERAS, LAYER, MODULE, FrameworkBase, Instance, ProgramClass, Super,
                                        is_instance, off_the_tape)
from tapecli.interpreter.conversions import joined, to_float, to_int, truth
from tapecli.interpreter.objects import _PYFUNCTION, EFFECT, BoundMethod, Function, ProgramObject, TapeObject
from tapecli.interpreter.printing import program_repr, program_str
from tapecli.library.core import NamedResult, to_shape
from tapecli.library.numpy_forms import array_attribute
from tapecli.interpreter.registry import BUILTINS, HOOKS, builtin, builtin_function, hook, register
from tapecli.runtime.clock import CLOCK_START
from tapecli.runtime.context import current
from tapecli.runtime.limits import LIST_SLOT, admit, admit_pieces, admit_text
from tapecli.runtime.tape import type_word
from tapecli.runtime.values import (MAX_LITERAL_DIMS, BackendVariable, DictView, DType, NumpyArray, PythonBool,
                                    PythonTuple, Tensor, TensorShape, UnreadVariable, Variable, convert_weak, python_int,
                                    mirrored, requested_dtype, scoped_name, text_array,
                                    tf_tensor)
from tapecli.runtime import spelling

register("Module", FrameworkBase("tf.Module", MODULE))
register("Layer", FrameworkBase(LAYER, KERAS))


def _dtype(dtype):
    if dtype is None:
        return None
    if isinstance(dtype, DType):
        return np.dtype(dtype.np)
    if isinstance(dtype, str):
        return np.dtype(DType(dtype).np)
    raise TdfTypeError(f"dtype must be a dtype such as tf.float32, got {type_word(dtype)}")


_MIXED = "Can't convert Python sequence with mixed types to Tensor."     # TensorFlow's words


def _packed(value):
    """A (nested) list of numbers and tensors as one tensor, as TensorFlow packs it: literals stay a literal,
    a list holding a tensor is their stack (its gradient flows to each)."""
    if not isinstance(value, list):
        unconvertible_none(value)
        return ops.to_tensor(value.read() if isinstance(value, Variable) else value)
    if ops.text_leaf(value):
        return Tensor(text_array(value))
    if not value:
        return ops.to_tensor(value)
    if any(v is None for v in value) and any(v is not None for v in value):
        raise TdfValueError(_MIXED)
    items = [_packed(v) for v in value]
    if len({t.dtype.hasobject for t in items}) > 1:         # numbers beside strings
        raise TdfValueError(_MIXED)
    if items[0].ndim >= MAX_LITERAL_DIMS:
        raise TdfValueError(f"a list nested more than {MAX_LITERAL_DIMS} deep: a tensor has at most "
                            f"{MAX_LITERAL_DIMS} dimensions")
    if len({t.shape for t in items}) > 1:
        raise TdfValueError("Can't convert non-rectangular Python sequence to Tensor.")     # TensorFlow's words
    if all(t.weak for t in items):
        return Tensor(np.array([t.value for t in items]), weak=True)
    return ops.stack(items, 0)


def unconvertible_none(value) -> None:
    """TensorFlow's ValueError for ``tf.constant(None)`` and ``tf.convert_to_tensor(None)`` (its message)."""
    if value is None:
        raise TdfValueError("Attempt to convert a value (None) with an unsupported type (<class 'NoneType'>) "
                            "to a Tensor.")


def _tensor_of(value, dtype=None) -> Tensor:
    unconvertible_none(value)
    t = _packed(value)
    want = _dtype(dtype)
    if want is not None:
        converted = host_conversion(value, t, want)
        if converted is not None:
            return converted
        if t.dtype != want:
            raise TdfTypeError(f"a {t.dtype} value given dtype {want}", hint=f"use {spelling.cast('...', str(want))}")
    if t.weak:
        return Tensor(convert_weak(t.value, ops.default_dtype(t.value)))
    return tf_tensor(t)


def host_conversion(value, t: Tensor, dtype: np.dtype) -> Tensor | None:
    """``t``, the tensor of the program's ``value``, in a requested ``dtype`` as TensorFlow converts a host value (a
    NumPy array, Python's numbers and bools and lists of them: runtime.values.requested_dtype); None where ``value``
    is a tensor of TensorFlow's own (which no conversion changes)."""
    numpy = isinstance(value, (NumpyArray, np.ndarray, np.generic))
    if not (numpy or t.weak or t.__class__ is PythonBool or isinstance(value, str)
            or isinstance(value, list) and _host_leaves(value)):
        return None
    return Tensor(requested_dtype(t, dtype, program_repr(value), numpy))


def _host_leaves(value) -> bool:
    """Whether a (nested) list holds only Python's numbers and bools and NumPy's scalars."""
    if isinstance(value, list):
        return all(_host_leaves(v) for v in value)
    return isinstance(value, Tensor) and value.ndim == 0 and (value.weak or value.__class__ in (NumpyArray, PythonBool))


@builtin("Variable", interp=True)
def variable(interp, initial_value, trainable=True, name=None, dtype=None, shape=None, validate_shape=True,
             constraint=None):
    """tf.Variable as an expression (a top-level ``x = tf.Variable(v)`` is the declaration ``var x = v``). A
    ``shape`` must fit the value; where some of its dimensions are unknown, it is the variable's static shape
    (``v.shape``), and a value of another shape that fits it may be assigned. A
    ``constraint`` (a function of the value) is what Keras's optimizers apply after each step, as to a layer's
    ``kernel_constraint``."""
    value = _tensor_of(initial_value, dtype)
    dims = None
    if shape is not None:
        from tapecli.runtime.specs import Shape, static_shape
        dims = static_shape(shape)
        if not dims.is_compatible_with(value.shape):
            given = str(shape) if isinstance(shape, Shape) else repr(tuple(static_shape(shape))) if isinstance(
                shape, tuple) else repr(list(dims))
            raise TdfValueError(f"In this `tf.Variable` creation, the initial value's shape ({Shape(value.shape)}) "
                                f"is not compatible with the explicitly supplied `shape` argument ({given}).")
    made = Variable(name if isinstance(name, str) else "Variable", value.value.copy(), trainable=truth(trainable),
                    tf_name=scoped_name(name if isinstance(name, str) else None))
    if dims is not None and not dims.is_fully_defined():
        made.declared = dims
    from tapecli.library.keras.penalties import hold_constraint
    hold_constraint(made, constraint, interp)
    return made


@builtin("constant")
def constant(value, dtype=None, shape=None, name=None):
    t = _tensor_of(value, dtype)
    if shape is not None:
        dims = list(to_shape(shape if isinstance(shape, (list, Tensor)) else [shape]))
        t = Tensor(np.broadcast_to(t.value, dims).copy()) if t.size == 1 or t.shape == tuple(dims) else \
            ops.reshape(t, dims)
    return t


@builtin("function")
def function(func=None, input_signature=None, autograph=True, jit_compile=None, reduce_retracing=False,
             experimental_implements=None, experimental_autograph_options=None, experimental_attributes=None,
             experimental_relax_shapes=None, experimental_compile=None, experimental_follow_type_hints=None):
    """@tf.function / tf.function(f, ...): the function runs as eager TensorFlow runs it (tracing, autograph,
    XLA and retracing options change how TensorFlow runs it, not what it computes): a program's function called
    through it runs inside a function (``tf.inside_function()``) and returns tensors where it returns variables.
    ``reduce_retracing`` changes which calls trace it (objects.Traces), and so its experimental_get_tracing_count()."""
    relax = bool(truth(reduce_retracing))
    if func is not None:
        return _same_function(func, relax)
    return _same_function if not relax else builtin_function(lambda f: _same_function(f, relax))


@builtin("_same_function")
def _same_function(f, relax=False):
    if isinstance(f, Function) and not f.traced:
        import copy         # here: a small run never needs it
        f = copy.copy(f)
        f.traced = True
        f.relaxed = relax
    return f


@builtin("super", interp=True)
def super_(interp, cls=None, obj=None):
    """super() in a method, or super(Class, self): the attributes after Class in self's class's bases."""
    if cls is not None:
        if not isinstance(cls, ProgramClass) or not isinstance(obj, Instance):
            raise TdfTypeError("super(Class, self) takes a class of the program and an instance of it")
        if not _derives(obj.cls, cls):
            raise TdfTypeError(f"super(type, obj): obj must be an instance or subtype of type {cls.name}")
        return Super(cls, obj)
    if not interp.method_stack:
        raise TdfTypeError("super() outside a method")
    owner, instance = interp.method_stack[-1]
    return Super(owner, instance)


def _derives(cls, base) -> bool:
    return cls is base or any(_derives(b, base) for b in cls.bases)


def _number(value, kind):
    if isinstance(value, str):
        try:
            return kind(value)
        except ValueError:
            raise TdfValueError(f"{kind.__name__}() cannot read {value!r}") from None
    t = value.read() if isinstance(value, Variable) else ops.to_tensor(value)
    if t.size != 1:
        raise TdfTypeError(f"{kind.__name__}() of a tensor of shape {list(t.shape)}: only one element converts")
    return kind(t.value.reshape(()).item())


@builtin("float")
def float_(value=0.0):
    return Tensor(np.array(_number(value, float)), weak=True)


@builtin("int")
def int_(value=0):
    return Tensor(np.array(_number(value, int), dtype=np.int64), weak=True)


@builtin("bool", replaces=True)     # the function; tf.bool and np.bool_ stay the dtype (classes.Namespace)
def bool_(value=False):
    return PythonBool(np.array(truth(value)))


# TensorFlow reads Python's types as dtypes: tf.cast(n, float), tf.zeros(3, dtype=int).
float_.as_dtype, int_.as_dtype, bool_.as_dtype = "float32", "int32", "bool"


@builtin("str")
def str_(value=""):
    return program_str(value)


@builtin("repr")
def repr_(value):
    return program_repr(value)


def _items(value, what) -> list:
    if isinstance(value, Variable):
        value = value.read()
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, dict):
        return list(value)
    if isinstance(value, str):
        admit_pieces(len(value), value, f"{what} of a string of {len(value):,} characters")
        return list(value)
    if isinstance(value, Tensor):
        if value.ndim == 0:
            raise TdfTypeError(f"{what} of a scalar")
        return ops.rows(value)
    if isinstance(value, ProgramObject):
        return list(value.items())
    raise TdfTypeError(f"{what} needs a list, a dict, a string or a tensor, got {type_word(value)}")


@builtin("zip")
def zip_(*iterables):
    return [PythonTuple(group) for group in zip(*(_items(i, "zip()") for i in iterables))]


@builtin("enumerate")
def enumerate_(iterable, start=0):
    first = to_int(start, "start")
    return [PythonTuple((Tensor(np.array(first + i, dtype=np.int64), weak=True), item))
            for i, item in enumerate(_items(iterable, "enumerate()"))]


@builtin("list")
def list_(iterable=None):
    return [] if iterable is None else _items(iterable, "list()")


@builtin("tuple")
def tuple_(iterable=None):
    return PythonTuple(list_(iterable))


@builtin("dict")
def dict_(pairs=None, **kwargs):
    out = {}
    if isinstance(pairs, dict):
        out.update(pairs)
    elif pairs is not None:
        for pair in _items(pairs, "dict()"):
            if not isinstance(pair, list) or len(pair) != 2:
                raise TdfTypeError("dict() needs pairs [key, value]")
            out[_key(pair[0])] = pair[1]
    out.update(kwargs)
    return out


def _key(k):
    from tapecli.interpreter.pyforms import _key as key
    return key(k)


def _sort_key(value):
    if isinstance(value, str) or value is None:     # (None compares by == alone: Python's TypeError at a <)
        return value
    if isinstance(value, list):             # a tuple or a list compares item by item, as Python's do
        return tuple(_sort_key(v) for v in value)
    t = value.read() if isinstance(value, Variable) else value
    if isinstance(t, Tensor) and t.weak and t.ndim:        # a list of numbers, as the interpreter holds a literal
        return t.value.tolist()
    if isinstance(t, Tensor) and t.size == 1:
        return t.value.item()
    raise TdfTypeError(f"sorted() compares numbers or strings, got {type_word(value)}")


# What sorted keeps per item while it sorts: a slot and a (key, item) tuple.
_SORT_ENTRY = LIST_SLOT + sys.getsizeof((0, 0))


@builtin("sorted", interp=True)
def sorted_(interp, iterable, key=None, reverse=False):
    items = _items(iterable, "sorted()")
    admit(len(items), _SORT_ENTRY, "sorted()'s keys")
    keyed = [(_sort_key(interp.call_value(key, [i]) if key is not None else i), i) for i in items]
    try:        # (Python's sort is stable, reversed too: equal keys keep their order)
        keyed.sort(key=lambda e: e[0], reverse=truth(reverse))
    except TypeError as e:          # a string beside a number, as Python says it
        raise TdfTypeError(str(e)) from None
    return [i for _, i in keyed]


@builtin("getattr", interp=True)
def getattr_(interp, obj, name, *default):
    """Python's getattr: the attribute as the program would read it (``obj.name``), or the default where the object
    has none."""
    if not isinstance(name, str):
        raise TdfTypeError(f"attribute name must be string, not {type_word(name)}")
    try:
        return interp.attribute(obj, name, None)
    except (TdfTypeError, TdfNameError):
        if default:
            return default[0]
        raise


@builtin("hasattr", interp=True)
def hasattr_(interp, obj, name):
    return PythonBool(np.array(getattr_(interp, obj, name, _ABSENT) is not _ABSENT))


_ABSENT = object()


@builtin("reversed")
def reversed_(iterable):
    return _items(iterable, "reversed()")[::-1]


_TYPES = {"list": list, "dict": dict, "str": str, "tuple": PythonTuple}


@builtin("isinstance")
def isinstance_(value, kinds):
    kinds = kinds if isinstance(kinds, list) else [kinds]
    for k in kinds:
        if is_instance(value, k):
            return PythonBool(np.array(True))
        name = getattr(k, "__name__", "").rstrip("_")
        if name in _TYPES and isinstance(value, _TYPES[name]) and not (name == "list" and value.__class__ is PythonTuple):
            return PythonBool(np.array(True))
        if name in ("int", "bool") and value.__class__ is PythonBool:       # (Python's bool is an int)
            return PythonBool(np.array(True))
        if name in ("float", "int") and isinstance(value, Tensor) and value.weak and value.ndim == 0:
            kind = value.value.dtype.kind
            if (name == "float") == (kind == "f"):
                return PythonBool(np.array(True))
        if name == "convert_to_tensor" and isinstance(value, Tensor):      # tf.Tensor
            return PythonBool(np.array(True))
        if k is variable and isinstance(value, Variable) and not value.keras:    # (Keras 3's weights are not)
            return PythonBool(np.array(True))
    return PythonBool(np.array(False))


class PythonClass(ProgramObject):
    """``type(x)``: the class of a value, by its qualified name, printed as Python prints a class
    (``<class 'tensorflow.python.framework.ops.EagerTensor'>``); one object a name, so ``is`` compares them."""

    def __init__(self, name: str):
        self.name = name
        self.kind_word = f"class '{name}'"

    def get_attribute(self, interp, attr, node):
        """A Keras class's own methods (``type(layer).from_config``): those of the builtin of its name."""
        if attr == "__name__":
            return self.name.rpartition(".")[2]
        made = BUILTINS.get(self.name.rpartition(".")[2]) if self.name.startswith("keras.") else None
        if attr in getattr(made, "class_methods", ()):
            return HOOKS["attribute"](interp, made, attr, node)
        return super().get_attribute(interp, attr, node)


_CLASSES: dict[str, PythonClass] = {}        # (one object a class: values without state, as the dtypes)
_TF = "tensorflow.python."
TF_FUNCTION_CLASS = _TF + "eager.polymorphic_function.polymorphic_function.Function"     # (a @tf.function's)
_BUILTIN_NAMES = frozenset(dir(builtins))


@builtin("type")
def type_(value):
    """The class of a value whose class tapecli knows as TensorFlow, Keras, NumPy or Python name it; any other
    value (a list, which may be a tuple here; an object tapecli does not give Keras's class of) is a TypeError."""
    name = python_class(value)
    if name is None:
        raise TdfTypeError(f"type() of {type_word(value)}: tapecli does not know its class as Python would name it",
                           hint="type() knows tensors, variables, shapes, NumPy values, numbers, strings, dicts, "
                                "functions, the program's classes and Keras's losses, metrics and optimizers")
    return class_named(name)


def class_named(name: str) -> PythonClass:
    """The class of this qualified name, one object a name (``keras.KerasTensor is type(x)``)."""
    return _CLASSES.setdefault(name, PythonClass(name))


def python_class(value) -> str | None:
    """The qualified name of ``value``'s class as ``type(value)`` prints it, None where tapecli cannot say."""
    if value is None:
        return "NoneType"
    if value.__class__ in (str, bytes, dict, list):
        return value.__class__.__name__
    if value.__class__ is PythonTuple:
        return "tuple"
    if isinstance(value, Variable) and value.keras:
        return "keras.src.backend.tensorflow.core.Variable"
    if isinstance(value, Variable) and mirrored(value):
        return _TF + "distribute.values.MirroredVariable"
    if isinstance(value, Variable):
        return _TF + ("ops.resource_variable_ops._UnreadVariable" if isinstance(value, UnreadVariable) else
                      "ops.resource_variable_ops.ResourceVariable")
    if value.__class__ is PythonBool:
        return "bool"
    if value.__class__ is TensorShape:
        return _TF + "framework.tensor_shape.TensorShape"
    if getattr(value, "is_indexed_slices", False):
        return _TF + "framework.indexed_slices.IndexedSlices"
    if value.__class__ is NumpyArray:
        return f"numpy.{value.value.dtype.type.__name__}" if value.ndim == 0 else "numpy.ndarray"  # (numpy.str_)
    if value.__class__ is Tensor:
        if not value.weak:
            return _TF + "framework.ops.EagerTensor"
        kind = value.value.dtype.kind                   # a Python number (a list of them may be a tuple)
        return {"f": "float", "i": "int", "u": "int", "b": "bool"}.get(kind) if value.ndim == 0 else None
    if isinstance(value, DType):
        return _TF + "framework.dtypes.DType"
    if isinstance(value, Function):
        return TF_FUNCTION_CLASS if value.traced else "function"
    if value.__class__ is BoundMethod and value.function is not None:      # (a method of the program's class)
        return TF_FUNCTION_CLASS if value.function.traced else "method"
    if getattr(value, "is_builtin", False) or value.__class__ is _PYFUNCTION:
        # TensorFlow's and Keras's functions are functions; Python's own (len, abs) are not
        return None if getattr(value, "__name__", "").rstrip("_") in _BUILTIN_NAMES else "function"
    if isinstance(value, ProgramClass):
        return "type"
    if isinstance(value, Instance):
        return f"__main__.{value.cls.name}"
    if isinstance(value, TapeObject):
        return _TF + "eager.backprop.GradientTape"
    if isinstance(value, PythonClass):
        return "type"
    found = getattr(value, "python_class", None)
    return found() if found is not None else None


# ---------------------------------------------- sum, min and max: Python's and TensorFlow's (§11)

def _python_numbers(values) -> bool:
    return all(isinstance(v, Tensor) and v.weak and v.ndim == 0 for v in values)


def _fold(values, pair, pick):
    if _python_numbers(values):
        return pick(values, key=lambda v: v.value.item())
    out = values[0]
    for v in values[1:]:
        out = pair(out, v)
    return out


def _extreme(name, reduce, pair, pick):
    def run(*args, axis=None, keepdims=False):
        if len(args) >= 2:
            return _fold(list(args), pair, pick)
        if len(args) != 1:
            raise TdfTypeError(f"{name}() needs at least one argument")
        values = args[0]
        if axis is None and isinstance(values, Tensor) and values.weak and values.ndim == 1:
            if values.size == 0:        # Python's min/max of a list of Python numbers: one of them, as Python's
                raise TdfValueError(f"{name}() iterable argument is empty")
            return Tensor(np.array(pick(values.value.tolist())), weak=True)
        if isinstance(values, list) and axis is None and values:
            return _fold(values, pair, pick)
        return reduce(args[0], axis=_axis(axis), keepdims=truth(keepdims))
    run.__name__ = name
    builtin(name, replaces=True)(run)      # Python's min/max of several values; one argument still reduces


def _axis(axis):
    from tapecli.library.core import to_axis
    return to_axis(axis)


@builtin("round")
def round_(value, ndigits=None):
    """Python's round of a Python number (banker's rounding, exact; ``ndigits`` as in Python); a tensor's
    elementwise tf.round."""
    value = python_int(value)       # (Python's bool is an int: round(True) is 1)
    if isinstance(value, Tensor) and value.weak and value.ndim == 0:
        digits = None if ndigits is None else to_int(ndigits, "ndigits")
        return Tensor(np.array(round(value.value.item(), digits)), weak=True)
    if value.__class__ is NumpyArray:       # NumPy's own __round__ (np.float64 of 1 / np.int64(3))
        digits = None if ndigits is None else to_int(ndigits, "ndigits")
        rounded = round(value.value[()] if value.ndim == 0 else value.value, digits)
        return NumpyArray(np.asarray(rounded)) if isinstance(rounded, (np.ndarray, np.generic)) else Tensor(
            np.array(rounded), weak=True)
    if ndigits is not None:
        raise TdfTypeError(f"round() of {type_word(value)} takes no ndigits", hint="use tf.round(x)")
    return ops.round_(value)


_extreme("min", ops.reduce_min, ops.minimum, min)
_extreme("max", ops.reduce_max, ops.maximum, max)


@builtin("sum", replaces=True)
def sum_(values, axis=None, keepdims=False, start=None):
    """Python's sum of a list (its elements added, as tf.add_n); a tensor's reduce_sum (TDF's), or in a Python
    program Python's: its rows added to ``start``, which Python's sum takes second."""
    python = current().settings.python_spelling
    if python and axis is not None and start is None:
        start, axis = axis, None
    if isinstance(values, list) and axis is None:
        total = start
        for v in values:
            if total is None or total.__class__ is Tensor and total.weak:      # (a Python total counts bools)
                v = python_int(v)
            total = v if total is None else ops.add(total, v)
        return total if total is not None else Tensor(np.array(0, dtype=np.int64), weak=True)
    if python and axis is None and isinstance(values, (Tensor, Variable)):
        # Python's sum of a tensor: start (0) plus each of its rows in turn, as Python iterates a tensor
        t = ops.to_tensor(values)
        if t.ndim == 0:
            kind = "float" if t.weak and t.dtype.kind == "f" else "int" if t.weak else None
            raise TdfTypeError(f"'{kind}' object is not iterable" if kind else "Cannot iterate over a scalar tensor.")
        total = Tensor(np.array(0, dtype=np.int64), weak=True) if start is None else start
        for i in range(t.shape[0]):
            total = ops.add(total, ops.getitem(t, (i,)))
        return total
    return ops.reduce_sum(values, axis=_axis(axis), keepdims=truth(keepdims))


def _truth_of_each(name: str, python):
    """Python's ``all``/``any`` in a program that speaks Python (the truth of each item of an iterable, a Python
    bool); TDF's, a tensor's reduction."""
    tdf = BUILTINS[name]

    def run(iterable, axis=None):
        if axis is None and current().settings.python_spelling:
            return PythonBool(np.array(python(truth(v) for v in _items(iterable, f"{name}()"))))
        return tdf(iterable, axis)
    run.__name__ = name
    builtin(name, replaces=True)(run)


_truth_of_each("all", all)
_truth_of_each("any", any)


# ------------------------------------------------------------ methods of lists, dicts, strings

@hook("python_attribute")
def python_attribute(interp, value, attr, node):
    """The methods of lists, dicts and strings, and the TensorFlow-eager attributes of tensors and
    variables that TDF's core attributes lack (``numpy``, ``ndim``, ``read_value``); None if not one."""
    method = _METHODS.get((value.__class__, attr))
    if method is None and value.__class__ is str and attr in _STR_METHODS:
        method = _str_method(attr)
    if method is not None:
        return BoundMethod(attr, lambda call_node, *a, **k: method(interp, value, *a, **k),
                           EFFECT if method is _list_append else None)     # (losses.append(loss) in a loop plan)
    if isinstance(value, NamedResult) and attr in value.fields:
        return value[value.fields.index(attr)]
    if isinstance(value, (Tensor, Variable)):
        t = value.read() if isinstance(value, Variable) else value
        if attr == "numpy":        # the values, which no tape follows (as in TensorFlow)
            return BoundMethod(attr, lambda call_node: off_the_tape(lambda: _as_numpy(t),
                                                                    f"{interp.text(node) or 'x.numpy'}()",
                                                                    call_node.line, [value]))
        if attr == "ndim":
            return Tensor(np.array(t.ndim, dtype=np.int64), weak=True)
        if attr == "value" and isinstance(value, Variable) and value.keras:
            return BackendVariable(value)           # (Keras's property: the tf.Variable behind the weight)
        if attr in ("read_value", "value") and isinstance(value, Variable):
            return BoundMethod(attr, lambda call_node: value.read())
        behavior = current().numpy_behavior          # (TensorFlow's NumPy methods of a tensor, where switched on)
        if behavior is not None and value.__class__ is Tensor and attr == "size":
            return NumpyArray(np.array(t.size, dtype=np.int64))         # (NumPy's product of the dimensions)
        if behavior is not None and value.__class__ is Tensor and attr in behavior.methods:
            method = behavior.methods[attr]
            return BoundMethod(attr, lambda call_node, *a, **k: method(value, *a, **k))
        return array_attribute(interp, t, attr, node)
    return None


def _as_numpy(t: Tensor) -> NumpyArray:
    """``t.numpy()``: the tensor's values as a NumPy array (or scalar), which prints as NumPy prints; a string
    tensor's scalar is its bytes (TensorFlow's). A copy, as TensorFlow's: the program may write to it."""
    if t.dtype == object and t.ndim == 0:
        return t.value[()]
    array = NumpyArray((ops.materialize(t) if t.weak else t).value.copy())
    array.source = t
    return array


def _list_append(interp, lst, item):
    lst.append(item)


def _list_extend(interp, lst, items):
    items = _items(items, "extend()")
    admit(len(lst) + len(items), LIST_SLOT, "a list")
    lst.extend(items)


def _list_insert(interp, lst, index, item):
    lst.insert(to_int(index, "index"), item)


def _list_pop(interp, lst, index=-1):
    if not lst:
        raise TdfValueError("pop from an empty list")
    try:
        return lst.pop(to_int(index, "index"))
    except IndexError:
        raise TdfValueError(f"pop index {to_int(index)} is out of range for a list of {len(lst)}") from None


def _same(a, b) -> bool:
    if a is b:
        return True
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    if isinstance(a, Tensor) and isinstance(b, Tensor) and a.size == 1 and b.size == 1:
        return a.value.item() == b.value.item()
    return False


def _list_index(interp, lst, item):
    for i, v in enumerate(lst):
        if _same(v, item):
            return Tensor(np.array(i, dtype=np.int64), weak=True)
    raise TdfValueError("the item is not in the list")


def _list_count(interp, lst, item):
    return Tensor(np.array(sum(_same(v, item) for v in lst), dtype=np.int64), weak=True)


def _dict_get(interp, d, key, default=None):
    return d.get(_key(key), default)


def _dict_pop(interp, d, key, *default):
    k = _key(key)
    if k not in d and not default:
        raise TdfValueError(f"no key {k!r} in the dict")
    return d.pop(k, *default)


def _str_format(interp, s, *args, **kwargs):
    """str.format with plain fields only ({}, {0}, {name}, with a format spec): no attribute or item access."""
    return _formatted(s, lambda field: args[int(field)] if field.isdigit() else kwargs[field])


def _str_format_map(interp, s, mapping):
    """str.format_map: str.format's named fields, each read from ``mapping`` as it is met."""
    def value(field):
        if field.isdigit():
            raise TdfValueError("Format string contains positional fields")
        return mapping[field]
    return _formatted(s, value)


def _formatted(s: str, value) -> str:
    """``s`` with each field replaced by ``value(field)`` formatted by its spec and conversion."""
    import string                  # here, not at the top: a run that formats nothing does not import it
    from tapecli.interpreter.pyforms import format_with
    out, auto = [], 0
    try:
        parsed = list(string.Formatter().parse(s))
    except ValueError as e:
        raise TdfValueError(f"format string: {e}") from None
    for literal, field, spec, conversion in parsed:
        out.append(literal)
        if field is None:
            continue
        if field == "":
            field, auto = str(auto), auto + 1
        if not (field.isdigit() or field.isidentifier()):
            raise TdfValueError(f"format field {{{field}}}: only positions and names are allowed",
                                hint="format the value itself: '{}'.format(x)")
        try:
            found = value(field)
        except (IndexError, KeyError):
            raise TdfValueError(f"format field {{{field}}} has no value") from None
        if conversion in ("r", "s", "a"):
            found = program_str(found) if conversion == "s" else program_repr(found)
        out.append(format_with(found, spec or ""))
    return joined("", out, "format()")


def _str_join(interp, s, items):
    parts = [_numpy_text(p) for p in _items(items, "join()")]
    if not all(isinstance(p, str) for p in parts):
        raise TdfTypeError("join() joins strings")
    return joined(s, parts, "join()")


def _numpy_text(value):
    """A NumPy string scalar (numpy.str_, a str subclass, as an array's item is) as its str; else the value."""
    if value.__class__ is NumpyArray and value.ndim == 0 and value.value.dtype.kind == "U":
        return str(value.value[()])
    return value


# The characters str.split() and str.splitlines() cut at (Python's str.isspace, and its line boundaries).
_SPACES = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200b))) + \
    "\u2028\u2029\u202f\u205f\u3000"
_LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def _cuts(s: str, at) -> int:
    """How many pieces cutting ``s`` at each occurrence of any of ``at`` would make at most (counted, not
    cut: weighing the pieces must not make them; an ASCII string holds none of the others)."""
    return 1 + sum(s.count(c) for c in at if c.isascii() or not s.isascii())


def _str_split(interp, s, sep=None, maxsplit=-1):
    limit = to_int(maxsplit)
    if isinstance(sep, str) and sep:
        pieces = s.count(sep) + 1
    else:
        pieces = _cuts(s, _SPACES)
    admit_pieces(pieces if limit < 0 else min(pieces, limit + 1), s, "split()")
    return s.split(sep, limit)


def _str_splitlines(interp, s, keepends=False):
    admit_pieces(_cuts(s, _LINE_BREAKS), s, "splitlines()")
    return s.splitlines(truth(keepends))


def _str_replace(interp, s, old, new, count=-1):
    if not isinstance(old, str) or not isinstance(new, str):
        raise TdfTypeError("replace() replaces a string with a string")
    n = to_int(count)
    found = len(s) + 1 if not old else s.count(old)
    found = found if n < 0 else min(found, n)
    admit_text(len(s) + found * max(len(new) - len(old), 0), "replace()", s, new)
    return s.replace(old, new, n)


def _str_case(method):
    """upper() and lower(): a copy as long, or for non-ASCII text up to three characters for one ('ß' upper
    is 'SS') in up to 4 bytes each."""
    def run(interp, s):
        if s.isascii():
            admit_text(len(s), f"{method.__name__}()", s)
        else:
            admit_text(3 * len(s), f"{method.__name__}()", width=4)
        return method(s)
    return run


def _str(f):
    return lambda interp, s, *a: f(s, *[x for x in a])


# Python's other str methods, called on the program's values as Python calls them (str is CPython's own type):
# those that widen a string (to a width, tabs to spaces, a case mapping of up to three characters for one) are
# weighed before they are made, the rest make at most their string's length.
_STR_METHODS = frozenset(name for name in dir(str) if not name.startswith("_"))
_WIDENING = frozenset(("center", "ljust", "rjust", "zfill"))


def _str_method(name: str):
    method = getattr(str, name)

    def run(interp, s, *args, **kwargs):
        args = [_python_value(a) for a in args]
        kwargs = {k: _python_value(v) for k, v in kwargs.items()}
        if name in _WIDENING and args and isinstance(args[0], int):
            admit_text(max(args[0], len(s)), f"{name}()", s, *[a for a in args[1:] if isinstance(a, str)])
        elif name == "expandtabs":
            tab = args[0] if args and isinstance(args[0], int) else kwargs.get("tabsize", 8)
            admit_text(len(s) + s.count("\t") * max(tab, 0), "expandtabs()", s)
        elif name in ("upper", "lower", "casefold", "swapcase", "title", "capitalize") and not s.isascii():
            admit_text(3 * len(s), f"{name}()", width=4)
        try:
            return _program_value(method(s, *args, **kwargs))
        except (TypeError, ValueError) as e:
            raise (TdfTypeError if isinstance(e, TypeError) else TdfValueError)(str(e)) from None
    return run


def _python_value(value):
    """A program's argument as Python's: a Python number or bool as itself, lists and tuples item by item."""
    if isinstance(value, Tensor) and value.ndim == 0 and (value.weak or value.__class__ is PythonBool):
        return value.value.item()
    if value.__class__ is PythonTuple:
        return tuple(_python_value(v) for v in value)
    if isinstance(value, list):
        return [_python_value(v) for v in value]
    return value


def _program_value(value):
    """Python's result as a program value: a bool or a number as the interpreter holds them, containers item by
    item (strings and bytes are themselves)."""
    if isinstance(value, bool):
        return PythonBool(np.array(value))
    if isinstance(value, int):
        return Tensor(np.array(value, dtype=np.int64), weak=True)
    if isinstance(value, tuple):
        return PythonTuple([_program_value(v) for v in value])
    if isinstance(value, list):
        return [_program_value(v) for v in value]
    return value


_METHODS = {
    (list, "append"): _list_append, (list, "extend"): _list_extend, (list, "insert"): _list_insert,
    (list, "pop"): _list_pop, (list, "index"): _list_index, (list, "count"): _list_count,
    (list, "copy"): lambda interp, lst: list(lst), (list, "reverse"): lambda interp, lst: lst.reverse(),
    (list, "clear"): lambda interp, lst: lst.clear(),
    (dict, "keys"): lambda interp, d: DictView("dict_keys", d.keys()),
    (dict, "values"): lambda interp, d: DictView("dict_values", d.values()),
    (dict, "items"): lambda interp, d: DictView("dict_items", (PythonTuple((k, v)) for k, v in d.items())),
    (dict, "get"): _dict_get,
    (dict, "pop"): _dict_pop, (dict, "copy"): lambda interp, d: dict(d),
    (dict, "update"): lambda interp, d, other=None, **kw: (d.update(other or {}), d.update(kw))[0],
    (str, "format"): _str_format, (str, "format_map"): _str_format_map, (str, "join"): _str_join, (str, "split"): _str_split,
    (str, "splitlines"): _str_splitlines, (str, "upper"): _str_case(str.upper), (str, "lower"): _str_case(str.lower),
    (str, "strip"): _str(str.strip), (str, "replace"): _str_replace, (str, "startswith"): _str(str.startswith),
    (str, "endswith"): _str(str.endswith),
}


# ---------------------------------------------- time, on the run's clock (runtime/clock.py), as where CPython runs

def _clock_reading(since_start: bool):
    def read():
        ctx = current()
        now = ctx.clock.read(ctx.settings, ctx.settings.line)
        return Tensor(np.array(now - CLOCK_START if since_start else now), weak=True)
    return read


for _name, _since_start in (("time", False), ("perf_counter", True), ("monotonic", True), ("process_time", True)):
    builtin(f"time.{_name}")(_clock_reading(_since_start))


@builtin("time.sleep")
def time_sleep(secs):
    current().clock.sleep(to_float(secs, "secs"))
    return None
