"""Values across the boundary of a TensorFlow program that CPython runs (execution/tensorflow.py): a program's
value as the library takes it and a library result as the program holds it, TensorFlow's TensorShape, the library's
objects (a tf.random.Generator) behind a proxy, and the crossing that gives the library's errors the classes a
program catches (tf_errors.py)."""
from __future__ import annotations

import ast
import collections
import contextlib
import functools
import inspect
import sys
import types

import numpy as np

from tapecli import ops
from tapecli.errors import NoAttribute, TdfError, TdfTypeError
from tapecli.execution.tf_errors import catchable
from tapecli.interpreter.classes import is_instance
from tapecli.interpreter.objects import BoundMethod, ProgramObject, TapeObject, _list_as_tensor
from tapecli.interpreter.printing import python_repr, python_str
from tapecli.interpreter.registry import BUILTINS, call_builtin
from tapecli.library.core import NamedResult
from tapecli.library.keras.epochs import GeneratorData
from tapecli.library.keras.keras_tensor import KERAS_MASK, KerasTensor
from tapecli.library.numpy_forms import NumpyScalarType
from tapecli.library.python import PythonClass
from tapecli.runtime.specs import Shape
from tapecli.runtime.context import current
from tapecli.runtime.tape import leave_tapes
from tapecli.runtime.values import (RAGGED, DType, NumpyArray, PythonBool, PythonTuple, Tensor, TensorShape, Variable,
                                    literal_array)


def as_tensorflow(f):
    """``f`` where the program calls into the library: the library's code sees tensors as the interpreter's
    does (no Python operators: ``v in list`` is identity, RunContext.eager), and an error of the library leaves
    it as the class a program catches (tf_errors.catchable: ``except tf.errors.InvalidArgumentError``,
    ``except ValueError``...)."""
    @functools.wraps(f)
    def crossing(*args, **kwargs):
        ctx = current()
        eager, ctx.eager = ctx.eager, None
        try:
            return f(*args, **kwargs)
        except TdfError as e:
            catchable(e)
            raise
        finally:
            ctx.eager = eager
    return crossing


def run_view(run, table: str, obj, make):
    """The run's one ``make(run, obj)`` for ``obj``, kept by the run in its dict ``table`` beside ``obj`` (an id is
    reused once its object is gone)."""
    views = getattr(run, table, None)
    if views is None:
        views = {}
        setattr(run, table, views)
    found = views.get(id(obj))
    if found is None or found[0] is not obj:
        found = views[id(obj)] = (obj, make(run, obj))
    return found[1]


@contextlib.contextmanager
def program_side(eager):
    """The program's code called back from the library (a dataset's map function, a custom gradient's body):
    its tensors have their Python operators again."""
    ctx = current()
    held, ctx.eager = ctx.eager, eager
    try:
        yield
    finally:
        ctx.eager = held


class Node:
    """What a library function reads of a call site: the program's text of an argument, its items' where it
    is a list or dict display, its line; a call's ``func``, ``args`` and ``keywords``."""

    def __init__(self, text: str | None = None, items: list | None = None, line: int | None = None,
                 args: list | None = None, keywords: list | None = None):
        self.text, self.items, self.line = text, items, line
        self.func = self
        self.args = args or []
        self.keywords = keywords or []


class Keyword:
    def __init__(self, name: str, value: Node):
        self.name, self.value = name, value


def to_library(value):
    """A program's value as the library takes it: Python numbers and bools as literals, tuples as tuples, a NumPy
    array as a tensor that stays NumPy's, a shape as the interpreter's."""
    kind = type(value)
    if kind is bool:
        return PythonBool(np.array(value))
    if kind in (int, float):
        return Tensor(literal_array(value), weak=True)
    if kind is tuple:               # as the interpreter holds a tuple display: its items, each converted
        return PythonTuple(to_library(v) for v in value)
    if getattr(kind, "made_by_library", False):        # a named tuple the library gave (to_program)
        return NamedResult(value._fields, [to_library(v) for v in value],
                           None if kind.__name__ == "Result" else kind.__name__)
    if kind is list:                # a literal of numbers (or of bools), as the interpreter makes one
        if is_numbers(value):
            try:
                return Tensor(literal_array(value), weak=True)
            except TdfTypeError as e:       # rows of different lengths: a list of literals, as the interpreter's
                if e.message != RAGGED:
                    raise
                return [to_library(v) for v in value]
        if is_numbers(value, bool):
            try:
                return Tensor(np.array(value))
            except ValueError:          # rows of different lengths (tf.ragged.constant's): a list of rows
                pass
        return [to_library(v) for v in value]
    if kind is dict:
        return {k: to_library(v) for k, v in value.items()}
    if kind is zip:                 # (apply_gradients(zip(grads, variables)): its pairs, as the interpreter's zip)
        return [to_library(v) for v in value]
    if kind is Shape and value.is_fully_defined():
        return TensorShape(np.array(value, dtype=np.int64), weak=True)
    if kind is LibraryObject:
        return object.__getattribute__(value, "_of")
    if kind is LibraryKind:         # a Keras class (compile(metrics=[keras.metrics.AUC])): the interpreter's builtin
        return value._of
    if kind is types.FunctionType and getattr(value, "library_builtin", None) is not None:
        return value.library_builtin     # a library function the program names (activation=keras.activations.relu)
    if kind is types.FunctionType or kind is types.MethodType:      # (what the library calls back: Dataset.map's)
        return ProgramCallable(value)
    if isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind in "biufSUO":    # (O: strings, as str's)
        return NumpyArray(np.asarray(value))
    if isinstance(value, LibraryDerived):   # (a program's subclass of a library class: the object it holds)
        return value.held()
    if isinstance(value, type) and issubclass(value, KerasBase):    # (a program's Keras class: its from_config)
        return ProgramCallable(value)
    if isinstance(value, KerasBase):        # (a program's Loss, Metric, Callback...: the library's view of it)
        return library_view(value)
    if kind is types.GeneratorType:         # (fit's data: the library's view of it)
        return ProgramGenerator(value, current().bridge)
    return value


@functools.lru_cache(maxsize=None)
def _named_tuple(name: str, fields: tuple):
    made = collections.namedtuple(name, fields)
    made.made_by_library = True
    return made


def to_program(value):
    """A library result as the program holds it (to_library's converse); tensors and variables as they are."""
    kind = type(value)
    if kind is Tensor and value.weak and value.ndim == 0:           # a Python number, as the library holds one
        return value.value.item()
    if kind is NumpyArray:          # NumPy's own array (Keras's predict, to_categorical), a scalar for 0-d
        return value.value[()] if value.value.ndim == 0 else value.value
    if kind is Tensor or kind is Variable:
        return value
    if kind is PythonBool:
        return bool(value.value)
    if kind is TensorShape:
        return Shape(int(d) for d in value.value)
    if isinstance(value, Tensor) and value.weak:
        return value.value.item() if value.ndim == 0 else value.value.tolist()
    if kind is NamedResult:                     # TensorFlow's named tuple, by its name (PhysicalDevice)
        return _named_tuple(value.type_name or "Result", tuple(value.fields))(*(to_program(v) for v in value))
    if kind is list:
        return [to_program(v) for v in value]
    if kind is PythonTuple:
        return tuple(to_program(v) for v in value)
    if kind is dict:
        return {k: to_program(v) for k, v in value.items()}
    if kind is ProgramCallable:
        return value.fn
    if kind is BoundMethod:         # (a function the library makes: tf.py_function's decorator)
        return program_method(value, value.name)
    if kind is ProgramGenerator:
        return value.generator
    if kind is NumpyScalarType:     # (tnp.float32 is NumPy's own np.float32)
        return value.np.type
    if kind is types.FunctionType and getattr(value, "is_builtin", False):     # (a layer's activation)
        return program_function(None, value, value.__name__)
    if isinstance(value, ProgramView):
        return value.instance
    if kind is PythonClass:         # (a class as a value: keras.KerasTensor)
        return class_of_tensorflow(value.name)
    if isinstance(value, ProgramObject):
        # one view of an object while the program holds one (``m.layers[0] is m.layers[0]``, a dict's keys)
        views = current().library_views
        view = views.get(id(value))
        if view is None:
            view = views[id(value)] = LibraryObject(value, _MADE_HERE)
        return view
    return value


def is_numbers(value, kind=None) -> bool:
    """Whether ``value`` is a number (or a ``kind``), or a non-empty list or tuple of them (at any depth)."""
    if isinstance(value, (list, tuple)):
        return bool(value) and all(is_numbers(v, kind) for v in value)
    return type(value) in ((int, float) if kind is None else (kind,))


_MADE_HERE = object()
_NO_ITEM = object()         # (no item is it: an iteration ends at StopIteration)


class KerasBase:
    """A Keras base class of the bridge's (keras_bases.py: Loss, Metric, Callback...) whose instances the library
    takes as its view of them (a ProgramView: the view class ``VIEWS`` holds for the base). Neither the view nor the
    run is held by the instance, which the program reads as its own object: the view holds the run's Eager, to call
    back on the program's side."""


# A KerasBase subclass of the bridge's -> the ProgramView class the library takes its instances as (keras_bases.py)
VIEWS: dict[type, type] = {}


def library_view(value: KerasBase):
    """The library's view of a program's Loss, Metric, Callback... (its nearest base's view)."""
    view = next(VIEWS[base] for base in type(value).__mro__ if base in VIEWS)(value)
    view.eager = current().bridge
    return view


class LibraryDerived(KerasBase):
    """An instance of a program's class derived from a concrete Keras class of the library's (keras_derived.py):
    the library takes the object it holds as itself."""

    def held(self) -> ProgramObject:
        of = vars(self).get("_keras_of")
        if of is None:
            raise TypeError(f"{type(self).__name__}.__init__ must call super().__init__() before the object is used")
        return of


class ProgramView:
    """The library's view of a program's KerasBase instance (``instance``), which to_program gives back; ``eager``:
    the run's Eager that made it."""

    instance: KerasBase
    eager: object


class LibraryObject:
    """An object of the library (a ``tf.random.Generator``, the class itself) as the program holds it: its
    attributes are those the interpreter gives (``get_attribute``), its methods and calls take the program's
    values and give it theirs. Its own fields are out of the program's reach (slots, private names)."""

    __slots__ = ("_of", "__weakref__")

    def __init__(self, of: ProgramObject, made):
        if made is not _MADE_HERE:
            raise TypeError("cannot create 'LibraryObject' instances")
        object.__setattr__(self, "_of", of)

    def __getattr__(self, attr: str):
        return library_attribute(object.__getattribute__(self, "_of"), attr)

    def __setattr__(self, attr, value):          # (layer.trainable = False, optimizer.learning_rate = 0.1)
        set_library_attribute(object.__getattribute__(self, "_of"), attr, value)

    def __call__(self, *args, **kwargs):
        return call_library(object.__getattribute__(self, "_of"), args, kwargs)

    def __bool__(self):             # (an object's truth, as TensorFlow's datasets and strategies have: not its length)
        return True

    def __len__(self):              # (a dataset's)
        of = object.__getattribute__(self, "_of")
        if not hasattr(of, "length"):
            raise TypeError(f"object of type '{of.kind_word}' has no len()")
        return as_tensorflow(of.length)()

    def __iter__(self):             # (a dataset's elements: each charged to the run's steps by the library)
        of = object.__getattribute__(self, "_of")
        if getattr(of, "it", None) is not None:     # (an iterator's iterator: itself)
            return self
        if hasattr(of, "iterator"):     # (a dataset's: TensorFlow's iterator object, with get_next and element_spec)
            return to_program(of.iterator())
        items = iter(_items(of))
        return (to_program(item) for item in iter(lambda: _next(items), _NO_ITEM))   # (its errors catchable)

    def __next__(self):
        of = object.__getattribute__(self, "_of")
        if getattr(of, "it", None) is None:
            raise TypeError(f"{of.kind_word} is not an iterator")
        return to_program(_next(of.it))

    def __repr__(self):
        return python_repr(object.__getattribute__(self, "_of"))

    def __str__(self):
        return python_str(object.__getattribute__(self, "_of"))

    def __neg__(self):                          # (-slices: a tf.IndexedSlices' one operator)
        of = object.__getattribute__(self, "_of")
        if not hasattr(of, "negated"):
            raise TypeError(f"bad operand type for unary -: '{of.kind_word}'")
        return to_program(as_tensorflow(of.negated)())

    def __getitem__(self, key):                 # (a tf.RaggedTensor's rows: its getitem)
        of = object.__getattribute__(self, "_of")
        if not hasattr(of, "getitem"):
            raise TypeError(f"'{type(of).__name__}' object is not subscriptable")
        current().eager._line()
        return to_program(as_tensorflow(of.getitem)(tuple(to_library(k) for k in
                                                          (key if isinstance(key, tuple) else (key,)))))

    __hash__ = object.__hash__              # (its == below is a library object's own operator where it has one)

    def __enter__(self):                        # a scope of the library's (tf.name_scope, tf.device, ...)
        of = object.__getattribute__(self, "_of")
        if not hasattr(of, "enter"):
            raise TypeError(f"{of.kind_word} is not a context manager")
        return to_program(as_tensorflow(of.enter)())

    def __exit__(self, *exc):
        as_tensorflow(object.__getattribute__(self, "_of").exit)()
        return False

    def __instancecheck__(self, value):         # (a base class of the library's: tf.keras.layers.Layer)
        return _instance_of(value, object.__getattribute__(self, "_of"))


def _object_operator(symbol: str, reflected: bool):
    """A Python operator of a library object that has its own (a tf.RaggedTensor's ``operator``), NotImplemented
    for any other (== is then identity, as Python's)."""
    def method(self, other):
        of = object.__getattribute__(self, "_of")
        if not hasattr(of, "operator"):
            return NotImplemented
        current().eager._line()
        return to_program(as_tensorflow(of.operator)(symbol, to_library(other), reflected))
    return method


for _name, _symbol in (("add", "+"), ("sub", "-"), ("mul", "*"), ("truediv", "/"), ("floordiv", "//"),
                       ("mod", "%"), ("pow", "**"), ("matmul", "@"), ("and", "&"), ("or", "|"), ("xor", "^")):
    setattr(LibraryObject, f"__{_name}__", _object_operator(_symbol, False))
    setattr(LibraryObject, f"__r{_name}__", _object_operator(_symbol, True))
for _name, _symbol in (("eq", "=="), ("ne", "!="), ("lt", "<"), ("le", "<="), ("gt", ">"), ("ge", ">=")):
    setattr(LibraryObject, f"__{_name}__", _object_operator(_symbol, False))


# How a class statement derives from a LibraryKind: keras_derived.derived_base, which registers itself (as VIEWS)
DERIVED_BASE: list = []


class LibraryKind:
    """A constructor of the library's objects that TensorFlow has as a class (``tf.keras.layers.Dense``): called,
    it makes one; ``isinstance`` asks whether a value is one (classes.is_instance)."""

    def __init__(self, make, of):
        self._make, self._of = make, of
        self.__name__, self.__doc__ = make.__name__, make.__doc__

    def __call__(self, *args, **kwargs):
        return self._make(*args, **kwargs)

    def __instancecheck__(self, value):
        return _instance_of(value, self._of)

    def __getattr__(self, attr: str):
        """The class's own methods (``Dense.from_config``), the interpreter's class methods of its builtin."""
        method = None if attr.startswith("_") else getattr(self._of, "class_methods", {}).get(attr)
        if method is None:
            raise AttributeError(f"type object '{self.__name__}' has no attribute '{attr}'")
        run = current().eager.run

        @as_tensorflow
        def call(*args, **kwargs):
            return method(run, *(to_library(a) for a in args), **{k: to_library(v) for k, v in kwargs.items()})
        return lambda *args, **kwargs: to_program(call(*args, **kwargs))

    def __repr__(self):
        return f"<class '{self.__name__}'>"

    def __mro_entries__(self, bases):
        """The class it stands for in a class statement (``class GCRMSprop(keras.optimizers.RMSprop)``)."""
        return (DERIVED_BASE[0](self),)


def _instance_of(value, kind) -> bool:
    # (a program's layer derived from a library layer is an instance of the layer it holds: keras_derived.py)
    held = vars(value).get("_keras_held") if hasattr(type(value), "_keras_kind") else None
    found = is_instance(library_value(value if held is None else held), kind)
    if found is None:
        raise TypeError("isinstance() arg 2 must be a type, a tuple of types, or a union")
    return found


def library_value(value):
    """A value of the program's globals as the run's documents show it: a library object as the interpreter's."""
    if type(value) is LibraryObject:
        return object.__getattribute__(value, "_of")
    return vars(value).get("_keras_of", value) if isinstance(value, LibraryDerived) else value


def library_attribute(of: ProgramObject, attr: str):
    """An attribute of a library object as the program reads it (its methods Python functions)."""
    if attr.startswith("_") and not (attr == KERAS_MASK and isinstance(of, KerasTensor)):   # (its Keras mask)
        raise AttributeError(attr)
    try:
        found = _attribute(of, attr)
    except NoAttribute as e:        # (Python's, so that hasattr and getattr's default answer as Python's do)
        raise AttributeError(e.message) from None
    return program_method(found, attr)


def set_library_attribute(of: ProgramObject, attr: str, value) -> None:
    if attr.startswith("_"):
        raise AttributeError(f"cannot set attribute {attr} of {of.kind_word}")
    _set_attribute(current().eager.run, of, attr, to_library(value))


def _attribute(of: ProgramObject, attr: str):
    ctx = current()
    found = _attribute_of(ctx.eager.run, of, attr)
    if found.__class__ is Tensor and ctx.mode.observer is not None:     # (a value of the object's state: a loop plan's
        ctx.mode.observer.refuse(f"attribute {attr}")                    # constant, which would not follow it)
    return found


@as_tensorflow
def _attribute_of(run, of: ProgramObject, attr: str):
    return of.get_attribute(run, attr, Node(attr))


@as_tensorflow
def _set_attribute(run, of: ProgramObject, attr: str, value):
    of.set_attribute(run, attr, value, Node(attr))


@as_tensorflow
def _items(of: ProgramObject):
    return of.items()


@as_tensorflow
def _next(it):
    return next(it)


def call_library(of: ProgramObject, args, kwargs):
    """A library object called by the program."""
    eager = current().eager
    eager._line(2)          # (the program's line that calls it: where its ops are recorded)
    return _call_of(eager.run, of, args, kwargs)


@as_tensorflow
def _call_of(run, of: ProgramObject, args, kwargs):
    return to_program(of.call(run, [to_library(a) for a in args], {k: to_library(v) for k, v in kwargs.items()},
                              Node(type(of).__name__)))


def program_method(found, name: str):
    """An attribute the library gives, as the program holds it: a bound method a Python function."""
    if not isinstance(found, BoundMethod):
        return to_program(found)

    def method(*args, **kwargs):
        current().eager._line()
        return call(*args, **kwargs)

    convert = _items_converted if getattr(found, "item_lists", False) else to_library

    @as_tensorflow
    def call(*args, **kwargs):
        node = Node(name)
        return to_program(found.fn(node, *(convert(a) for a in args), **{k: convert(v) for k, v in kwargs.items()}))
    method.__name__ = method.__qualname__ = name
    return method


class ProgramCallable(ProgramObject):
    """A function of the program as the library calls it (Run.call_value: a custom gradient's ``grad_fn``, a
    dataset's ``map`` function): with the library's values, giving the program's results back as the library's."""

    kind_word = "a function"

    def __init__(self, fn):
        self.fn = fn

    def call(self, interp, args, kwargs, node):
        return self.call_as_held(interp.sandbox.eager, [to_program(a) for a in args],
                                 {k: to_program(v) for k, v in kwargs.items()})

    def call_as_held(self, eager, args: list, kwargs: dict):
        """The call with arguments as the program holds them (``to_program``'s), its result as the library's."""
        settings = current().settings
        line = settings.line            # (the calling statement's, which its records keep: not the function's lines)
        try:
            with program_side(eager):
                result = self.fn(*args, **kwargs)
            return to_library(result)
        finally:
            settings.line = line

    @property
    def name(self) -> str:
        """The program function's name (an interpreter Function's ``name``)."""
        return self.fn.__name__

    def parameter_names(self) -> tuple:
        """The names of the program function's parameters (an interpreter Function's ``node.params``)."""
        try:
            return tuple(inspect.signature(self.fn).parameters)
        except (TypeError, ValueError):
            return ()

    def python_class(self) -> str:
        """The class of the program's value as type() names it (a function's is ``function``)."""
        if isinstance(self.fn, types.FunctionType):
            return "function"
        return f"{type(self.fn).__module__}.{type(self.fn).__qualname__}"

    def get_attribute(self, interp, attr, node):
        """An attribute of the program's value, read on the program's side (its class's get_config)."""
        with program_side(interp.sandbox.eager):
            return to_library(getattr(self.fn, attr))

    def takes_keyword(self, name: str) -> bool:
        try:
            parameters = inspect.signature(self.fn).parameters.values()
        except (TypeError, ValueError):
            return False
        return any(p.name == name and p.kind is not p.POSITIONAL_ONLY or p.kind is p.VAR_KEYWORD for p in parameters)


class ProgramGenerator(GeneratorData):
    """A program's generator as the library takes it (fit's, evaluate's and predict's data): each value taken on the
    program's side."""

    def __init__(self, generator, eager):
        self.generator, self.eager = generator, eager

    def next_item(self):
        return self.eager.run.call_value(ProgramCallable(self.generator.__next__), [])


def operand_of(value):
    """The other operand of a tensor's operator as a tensor where it is one: a list or tuple of numbers as the
    literal it is, one holding tensors stacked (as tf.convert_to_tensor does)."""
    if isinstance(value, (list, tuple)):
        if is_numbers(value):
            return Tensor(literal_array(value), weak=True)
        return _list_as_tensor([operand_of(v) for v in value])
    return to_library(value)


def index_of(key):
    """A tensor's index as NumPy takes it: a scalar tensor an int, another its array."""
    if isinstance(key, (Tensor, Variable)):
        t = ops.to_tensor(key)
        return t.value.__index__() if t.ndim == 0 else np.asarray(t.value)
    if isinstance(key, slice):
        return slice(*(index_of(p) for p in (key.start, key.stop, key.step)))
    return key


def leave_tapes_for_numpy(eager, value) -> None:
    """NumPy taking ``value``'s numbers (its ``numpy()``, ``np.square(x)``) while tapes record: noted on each, named
    by the program's call that runs (``x.numpy()``, ``np.square()``), as the interpreter notes it
    (tape.leave_tapes: the `why` of a None names it; a trainable variable read is watched, as TensorFlow's is)."""
    tapes = current().tapes
    if not any(tape.recording for tape in tapes):
        return
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename != eager.filename:
        frame = frame.f_back
    if frame is None:
        return
    line, end_line, column, end_column = list(frame.f_code.co_positions())[frame.f_lasti // 2]
    leave_tapes(tapes, _call_named(eager.run.source_lines, line, end_line, column, end_column), line, [value])


def _call_named(lines: list[str], line, end_line, column, end_column) -> str:
    """The call at a position of the program as the interpreter names one that leaves the tapes: its function's
    text and ``()`` (``np.square()``, ``x.numpy()``); ``NumPy`` where the position is no call on one line."""
    if line is None or line != end_line or column is None or not 0 < line <= len(lines):
        return "NumPy"
    try:
        call = ast.parse(lines[line - 1][column:end_column], mode="eval").body
    except SyntaxError:
        return "NumPy"
    return f"{ast.unparse(call.func)}()" if isinstance(call, ast.Call) else "NumPy"


# ------------------------------------------------------------------ type()
class _ClassOfTensorFlow(type):
    """The class of a library value as ``type()`` gives it to the program: named as TensorFlow's own (printed
    ``<class 'tensorflow.python.framework.ops.EagerTensor'>``), not to be made or reached into."""

    def __instancecheck__(cls, value):
        return tensorflow_class_name(value) == f"{cls.__module__}.{cls.__qualname__}"

    def __call__(cls, *args, **kwargs):
        raise TypeError(f"cannot create '{cls.__module__}.{cls.__qualname__}' instances")

    def __getattr__(cls, attr: str):
        """A Keras class's own methods (``type(layer).from_config``, clone_model's recipe): its builtin's."""
        made = BUILTINS.get(cls.__qualname__) if cls.__module__.startswith("keras.") else None
        if made is None or attr not in getattr(made, "class_methods", {}):
            raise AttributeError(f"type object '{cls.__qualname__}' has no attribute '{attr}'")
        return getattr(LibraryKind(made, made), attr)


_CLASSES: dict[str, type] = {}      # one class a name, as TensorFlow's are (they hold nothing of a run)


def class_of_tensorflow(name: str) -> type:
    """The class of this qualified name as the program holds it, one a name."""
    found = _CLASSES.get(name)
    if found is None:
        module, _, qualified = name.rpartition(".")
        found = _CLASSES[name] = _ClassOfTensorFlow(qualified, (), {"__module__": module,
                                                                   "__qualname__": qualified, "__slots__": ()})
    return found


@as_tensorflow
def tensorflow_class_name(value) -> str | None:
    """The qualified name of a library value's class (a tensor, variable, shape, dtype, tape, Keras object), None
    for any other value; a library value whose class tapecli cannot name is the interpreter's TypeError."""
    from tapecli.library.python import python_class, type_
    if type(value) is Shape:
        return "tensorflow.python.framework.tensor_shape.TensorShape"
    if not isinstance(value, (Tensor, Variable, LibraryObject, DType, TapeObject)):
        return None
    of = library_value(value)
    name = python_class(of)
    if name is None:
        type_(of)           # (the interpreter's TypeError: tapecli cannot name its class)
    return name


@as_tensorflow
def _library_call(f, run, node, args, kwargs):
    if run.captures is not None:        # (a tf.function's trace: what it reads from outside, tf_signatures.Captures)
        run.captures.read((args, kwargs))
    convert = _items_converted if getattr(f, "item_lists", False) else to_library
    return to_program(call_builtin(f, run, node, [convert(a) for a in args], {k: convert(v) for k, v in kwargs.items()}))


def _items_converted(value):
    """An argument of a builtin that reads a list's items each as its own tensor (an attribute ``item_lists``),
    as the interpreter passes it: a list of its items, each converted (not one tensor of them all)."""
    return [to_library(v) for v in value] if type(value) is list else to_library(value)


def program_function(eager, f, spelled: str):
    """The program's function of a library function: one per function while the program holds it, whatever the
    spelling (``tf.keras.activations.relu is keras.activations.relu``, and is a Dense layer's ``activation``)."""
    views = current().library_views
    found = views.get(id(f))
    if found is None:
        found = library_function(eager, f, spelled)
        if isinstance(found, types.FunctionType):
            views[id(f)] = found
    return found


def library_function(eager, f, spelled: str):
    """The program's function of the library's ``f`` (``eager`` None: the run's that calls it, for a function the
    library hands the program)."""
    node = Node(spelled)

    def call(*args, **kwargs):
        calling = eager or current().eager
        calling._line()
        graphs = current().tf1_graphs
        if graphs is not None and graphs.stack:         # a TF1 graph's node (execution/tf_graphs.py)
            return graphs.library_op(f, spelled, node, args, kwargs)
        return _library_call(f, calling.run, node, args, kwargs)
    call.__name__ = call.__qualname__ = spelled.rpartition(".")[2]
    call.__doc__ = f.__doc__
    call.library_builtin = f            # (handed back to the library, it is the library's own: tf_values.to_library)
    return LibraryKind(call, f) if getattr(f, "makes", None) is not None else call


# The attributes tensors gain from experimental_enable_numpy_behavior (np_math_ops._enable_numpy_methods; the
# methods' functions are ctx.numpy_behavior's, given by library/tf_numpy_math.py).
NUMPY_ATTRIBUTES = frozenset({"T", "size", "data", "tolist", "reshape", "ravel", "flatten", "transpose", "clip",
                              "astype", "max", "min", "mean"})


def numpy_attribute(eager, t: Tensor, name: str):
    """A tensor's NumPy attribute, once NumPy behaviour is on: ``.T``, ``.size`` (a Python int), ``.data`` (the
    tensor), ``.tolist()``, and the methods NumPy behaviour gives (``.reshape(2, 3)``, ``.astype(...)``)."""
    if name == "T":
        return as_tensorflow(ops.transpose)(t)
    if name == "size":
        return np.int64(t.size)         # (NumPy's product of the dimensions)
    if name == "data":
        return t
    if name == "tolist":
        return lambda: np.asarray(t.value).tolist()
    method = current().numpy_behavior.methods[name]

    @as_tensorflow
    def call(*args, **kwargs):
        eager._line()
        return to_program(method(t, *(to_library(a) for a in args), **{k: to_library(v) for k, v in kwargs.items()}))
    return call


# ------------------------------------------------------------------ tf.Tensor and tf.Variable for isinstance
class _TypeCheck(type):
    def __instancecheck__(cls, value):
        return cls.holds(value)

    def __repr__(cls):              # (TensorFlow's class, where a program prints it)
        return f"<class '{cls.tensorflow_class}'>"


class TensorType(metaclass=_TypeCheck):
    """``tf.Tensor``: what ``isinstance`` takes for a tensor (a variable is not one, as in TensorFlow)."""
    holds = staticmethod(lambda value: type(value) is Tensor)
    tensorflow_class = "tensorflow.python.framework.tensor.Tensor"


def _tf_variable(value) -> bool:
    """``isinstance(value, tf.Variable)``: a tf.Variable, an assign's unread one, a Keras weight's ``value``; not
    a Keras weight itself (Keras 3's Variable is no tf.Variable)."""
    return isinstance(value, Variable) and not value.keras


def variable_type(make) -> type:
    """``tf.Variable``: ``make`` when called, TensorFlow's answer to ``isinstance``."""
    return _TypeCheck("Variable", (), {"holds": staticmethod(_tf_variable), "__new__": lambda cls, *a, **k: make(*a, **k),
                                       "tensorflow_class": "tensorflow.python.ops.variables.Variable"})
