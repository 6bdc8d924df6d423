"""Runtime values: tensors, variables and dtypes. Nothing here knows about tapes or the AST."""
from __future__ import annotations

import itertools
import operator
import sys
import weakref

import numpy as np

from tapecli.errors import TdfTypeError, TdfValueError
from tapecli.runtime.context import current
from tapecli.runtime import spelling

DTYPES = {"float32": np.dtype(np.float32), "float64": np.dtype(np.float64), "int32": np.dtype(np.int32),
          "int64": np.dtype(np.int64), "bool": np.dtype(np.bool_), "string": np.dtype(object),
          # (TensorFlow's narrow and unsigned integers and its half floats: NumPy's, NumPy's kernels serve them)
          **{name: np.dtype(name) for name in ("float16", "int8", "int16", "uint8", "uint16", "uint32", "uint64")}}
DTYPE_ALIASES = {"f32": "float32", "f64": "float64", "i32": "int32", "i64": "int64", "half": "float16"}
# TensorFlow's own names of dtypes (DataTypeString: its errors), where they differ from NumPy's; as_dtype reads both
_TF_WORDS = {"float16": "half", "float32": "float", "float64": "double"}
_TF_NAMES = {word: name for name, word in _TF_WORDS.items()}

BFLOAT16 = "bfloat16"


def bfloat16() -> np.dtype:
    """TensorFlow's bfloat16 as ml_dtypes' NumPy type (TensorFlow's own dtype package): imported where a program
    first names it, so that a program without it never loads the package."""
    found = DTYPES.get(BFLOAT16)
    if found is None:
        import ml_dtypes
        found = DTYPES[BFLOAT16] = np.dtype(ml_dtypes.bfloat16)
    return found


_ids = itertools.count(1)
new_id = _ids.__next__          # a fresh tensor id: the counter's own method, as cheap as a call gets


def new_ids(count: int) -> int:
    """The first of ``count`` fresh tensor ids in a row (count >= 1): the ids ``count`` calls of new_id give."""
    first = new_id()
    if count > 1:
        next(itertools.islice(_ids, count - 2, None))       # (the counter passes the others in C)
    return first


class DType:
    """A dtype as a program value: `cast(x, float64)`."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = DTYPE_ALIASES.get(name, name)
        if self.name == BFLOAT16:
            bfloat16()

    @property
    def np(self) -> np.dtype:
        return DTYPES[self.name]

    # TensorFlow's DType properties (dtypes.py), each a Python value
    @property
    def is_floating(self) -> bool:
        return is_float(self.np)

    @property
    def is_integer(self) -> bool:
        return self.np.kind in "iu"

    @property
    def is_unsigned(self) -> bool:
        return self.np.kind == "u"

    @property
    def is_bool(self) -> bool:
        return self.np.kind == "b"

    @property
    def is_complex(self) -> bool:
        return self.np.kind == "c"

    @property
    def is_numpy_compatible(self) -> bool:
        return True

    @property
    def size(self) -> int:
        return self.np.itemsize

    @property
    def is_quantized(self) -> bool:
        return False

    @property
    def min(self):
        """A float dtype's as a NumPy scalar of it, an integer's as a Python int (TensorFlow's types)."""
        return self._limit("minimum")

    @property
    def max(self):
        return self._limit("maximum")

    def _limit(self, which: str):
        floating = self.is_floating
        if not floating and self.np.kind not in "iu":
            raise TypeError(f"Cannot find {which} value of <dtype: '{self.name}'> with type <dtype: '{self.name}'>.")
        if self.name == BFLOAT16:
            import ml_dtypes
            info = ml_dtypes.finfo(self.np)
        else:
            info = np.finfo(self.np) if floating else np.iinfo(self.np)
        value = info.min if which == "minimum" else info.max
        return self.np.type(value) if floating else int(value)

    @property
    def base_dtype(self) -> "DType":
        return self

    @property
    def real_dtype(self) -> "DType":
        return self

    @property
    def as_numpy_dtype(self) -> type:
        return self.np.type

    def __eq__(self, other):
        if isinstance(other, DType):
            return other.name == self.name
        # NumPy's dtype or scalar type, as TensorFlow's DType compares (tf.float32 == np.float32, tnp.float32)
        if isinstance(other, np.dtype) or isinstance(other, type) and issubclass(other, np.generic):
            return self.name in DTYPES and np.dtype(other) == self.np
        if isinstance(other, str):      # a dtype's name, as TensorFlow's as_dtype reads one (tf.float32 == "float")
            return self._named(other)
        return False

    def _named(self, name: str) -> bool:
        return _TF_NAMES.get(name, name) == self.name

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        eager = current().eager
        return self.name if eager is None else f"tf.{self.name}"

    def __str__(self):
        eager = current().eager
        return self.name if eager is None else f"<dtype: '{self.name}'>"


DTYPE_ATTRIBUTES = ("name", "is_floating", "is_integer", "is_unsigned", "is_bool", "is_complex", "is_quantized",
                    "is_numpy_compatible", "size", "min", "max", "base_dtype", "real_dtype", "as_numpy_dtype")


class PythonTuple(list):
    """A Python tuple as the interpreter holds it: a list, so that every sequence rule of the interpreter's lists
    holds for it, which prints as a tuple and answers ``isinstance``, ``type()`` and ``+`` as one."""

    __slots__ = ()


class DictView(list):
    """``d.keys()``, ``d.values()``, ``d.items()`` as the interpreter holds them: the items (taken when made),
    printed as Python prints its views (``dict_keys(['loss'])``)."""

    __slots__ = ("view",)

    def __init__(self, view: str, items):
        super().__init__(items)
        self.view = view


SEQUENCES = (list, tuple, PythonTuple)       # the classes of the sequences a program's values may be


class NumpyDType(DType):
    """A NumPy array's ``dtype``: equal to TensorFlow's of the same name, printed as NumPy prints it (NumPy's
    own name: ``<U10`` for its strings)."""

    __slots__ = ()

    @property
    def np(self) -> np.dtype:
        return np.dtype(self.name)

    def _named(self, name: str) -> bool:
        try:
            return np.dtype(name) == self.np        # (as NumPy reads a name: "float" is float64)
        except TypeError:
            return False


def dtype_name(dtype: np.dtype) -> str:
    return "bool" if dtype == np.bool_ else "string" if dtype.hasobject else dtype.name


def is_float(dtype: np.dtype) -> bool:
    return dtype.kind == "f" or dtype.kind == "V"        # (bfloat16: ml_dtypes' type is of NumPy's kind "V")


class EagerProtocol:
    """Python's operators and conversions of a tensor or variable, for a TensorFlow program that CPython runs
    (``execution/tensorflow.py``): each asks the run's ``eager`` (``RunContext.eager``), which applies the ops,
    so that the tapes record them. In any other run (the interpreter applies the ops itself) a tensor has none
    of them: a binary operator or comparison gives NotImplemented (``==`` is identity, as for any object), a
    conversion raises Python's TypeError, and truth is True. NumPy defers to these operators (its
    ``__array_priority__``, as to TensorFlow's EagerTensor) and reads ``__array__`` only in such a run."""

    __slots__ = ()
    __array_priority__ = 100
    __hash__ = object.__hash__          # by identity (TensorFlow's tensors refuse a hash; tapecli's keep one)

    def __bool__(self):
        eager = _reading()
        return True if eager is None else eager.truth(self)

    def __len__(self):
        return _eager(self, "len").length(self)

    def __iter__(self):
        return _eager(self, "iter").rows(self)

    def __getitem__(self, key):
        return _eager(self, "getitem").getitem(self, key)

    def __setitem__(self, key, value):      # (TensorFlow's tensors and variables are immutable: its words)
        kind = "ResourceVariable" if isinstance(self, Variable) else "tensorflow.python.framework.ops.EagerTensor"
        raise TypeError(f"'{kind}' object does not support item assignment")

    def __float__(self):
        return _eager(self, "float", True).number(self, float)

    def __int__(self):
        return _eager(self, "int", True).number(self, int)

    def __index__(self):
        return _eager(self, "index", True).index(self)

    def __str__(self):
        eager = _reading()
        return repr(self) if eager is None else eager.str(self)

    def __format__(self, spec):
        eager = _reading()
        return object.__format__(self, spec) if eager is None else eager.format(self, spec)

    @property
    def __array__(self):
        eager = _reading()
        if eager is None:
            raise AttributeError("__array__")
        return eager.array(self)


_REFUSED = {"len": "object of type '{}' has no len()", "iter": "'{}' object is not iterable",
            "getitem": "'{}' object is not subscriptable",
            "float": "float() argument must be a string or a real number, not '{}'",
            "int": "int() argument must be a string, a bytes-like object or a real number, not '{}'",
            "index": "'{}' object cannot be interpreted as an integer"}


def _eager(value, what: str, reads: bool = False):
    eager = _reading() if reads else current().eager
    if eager is None:
        raise TypeError(_REFUSED[what].format(type(value).__name__))
    return eager


def _reading():
    """The run's eager, for a conversion that reads a tensor's value into Python: a loop plan tracing the iteration
    is told (its recorder's ``read``: what Python computes from the value no plan makes again)."""
    ctx = current()
    eager = ctx.eager
    if eager is not None and ctx.mode.observer is not None:
        ctx.mode.observer.read()
    return eager


def _operator(name: str):
    def method(self, *other):
        eager = current().eager
        if eager is None:
            if other:
                return NotImplemented
            raise TypeError(f"bad operand type for unary {_UNARY[name]}: '{type(self).__name__}'")
        return eager.operator(name, self, *other)
    method.__name__ = method.__qualname__ = f"__{name}__"
    return method


_UNARY = {"neg": "-", "pos": "+", "abs": "abs()", "invert": "~"}
for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor"):
    for _prefix in ("", "r"):
        setattr(EagerProtocol, f"__{_prefix}{_name}__", _operator(_prefix + _name))
for _name in ("eq", "ne", "lt", "le", "gt", "ge", *_UNARY):
    setattr(EagerProtocol, f"__{_name}__", _operator(_name))


class Tensor(EagerProtocol):
    """An immutable n-d array with an identity that tapes track.

    A *weak* tensor comes from a literal (``2``, ``[1.0, 3.0]``) or from arithmetic on
    literals only. It holds its exact value (float64/int64) and takes the dtype of the
    tensor it meets, as a Python number does in TensorFlow (``x * 2`` stays float32).
    """

    __slots__ = ("value", "weak", "id")

    def __init__(self, value: np.ndarray, weak: bool = False, id: int | None = None):
        self.value = value
        self.weak = weak
        self.id = new_id() if id is None else id

    @property
    def dtype(self) -> np.dtype:
        return self.value.dtype

    @property
    def shape(self) -> tuple:
        return self.value.shape

    @property
    def size(self) -> int:
        return self.value.size

    @property
    def ndim(self) -> int:
        return self.value.ndim

    def __repr__(self):
        eager = _reading()
        return f"Tensor({self.value!r}{', weak' if self.weak else ''})" if eager is None else eager.repr(self)


class NumpyArray(Tensor):
    """A NumPy array or scalar that a Python program holds (``t.numpy()``, NumPy's functions): a tensor that
    prints as NumPy prints (library/printing.py). ``source``: the tensor whose ``numpy()`` copy it is, if it is one
    (what a request's result named through ``.numpy()`` is known by)."""
    __slots__ = ("source",)


class TensorShape(Tensor):
    """``t.shape`` in a Python program: a literal of the dimensions that prints as TensorFlow's TensorShape."""
    __slots__ = ()


class PythonBool(Tensor):
    """A Python ``True`` or ``False`` (a literal, a comparison of Python values): prints as Python's bool,
    where a TensorFlow bool scalar prints as a tensor."""
    __slots__ = ()


def python_int(value):
    """A Python bool as the int it is in Python's arithmetic (``True + True`` is 2); any other value as it is. (A
    NumPy int64 scalar, as an integer literal's: the ops compute that as Python does, ``True % -1.0`` -0.0.)"""
    return Tensor(np.int64(value.value), weak=True) if value.__class__ is PythonBool else value


def not_an_index(key) -> str:
    """TensorFlow's TypeError for a tensor indexed by what is no index (a float)."""
    return ("Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and scalar tf.int32/tf.int64 "
            f"tensors are valid indices, got {key!r}")


def tf_tensor(t: Tensor) -> Tensor:
    """The TensorFlow tensor of a value (tf.constant, tf.convert_to_tensor): a Python bool or NumPy array
    becomes a tensor that prints as one."""
    if t.__class__ is NumpyArray:       # (TensorFlow copies: the program's later writes to its array stay its own)
        return Tensor(text_array(t.value) if numpy_text(t) else np.array(t.value), weak=t.weak)
    return t if t.__class__ is Tensor else Tensor(t.value, weak=t.weak)


_NUMPY_OPERATORS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
                    "//": operator.floordiv, "%": operator.mod, "**": operator.pow, "@": operator.matmul,
                    "&": operator.and_, "|": operator.or_, "^": operator.xor,
                    "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
                    ">=": operator.ge}


def numpy_operand(value) -> bool:
    """Whether NumPy computes with ``value`` beside a NumPy array: an array, or a Python number or bool (a weak
    literal), never a TensorFlow tensor (which makes the result TensorFlow's)."""
    return value.__class__ in (NumpyArray, PythonBool) or value.__class__ is Tensor and value.weak


def numpy_text(value) -> bool:
    """Whether ``value`` is a NumPy array of NumPy's strings (``<U10``), which computes with Python's strings as
    NumPy does (``labels == "cat"``) until TensorFlow converts it."""
    return value.__class__ is NumpyArray and value.value.dtype.kind in "US"


def numpy_binary(op: str, left, right) -> NumpyArray:
    """A binary operation of NumPy operands (numpy_operand) as NumPy computes it: its promotion (an int64 array
    times 0.2 is float64, a float32 array times 2.5 float32: NEP 50's Python scalars), values and errors; the
    result weighed by the memory gate."""
    from tapecli.runtime.numpy_gate import weigh_result
    try:
        with np.errstate(all="ignore"):       # (inf and nan as the interpreter's ops give them)
            result = _NUMPY_OPERATORS[op](_numpy_value(left), _numpy_value(right))
    except (TypeError, OverflowError) as e:
        raise TdfTypeError(str(e)) from None
    except (ValueError, ZeroDivisionError) as e:
        raise TdfValueError(str(e)) from None
    weigh_result(result, f"'{op}'")
    return NumpyArray(result)


def _numpy_value(value):
    """A NumPy operand as NumPy takes it: an array as itself, a Python number, bool or string as a Python
    scalar, a list as a list of those."""
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, list):         # (a list beside an array: NumPy converts it, np.asarray's rules)
        return [_numpy_value(v) for v in value]
    if value.__class__ is NumpyArray or value.value.ndim:
        return value.value
    return value.value.item()


def numpy_result(result, *operands):
    """An operation's result as NumPy makes it: a NumPy array where an operand is one and none is a
    TensorFlow tensor (``t.numpy() * 2``, ``t.numpy()[0]``); else ``result`` as it is."""
    if result.__class__ is not Tensor or result.weak:
        return result
    kinds = {o.__class__ for o in operands if o.__class__ is not PythonBool and not getattr(o, "weak", False)}
    return NumpyArray(result.value) if NumpyArray in kinds and kinds <= {NumpyArray, list} else result


_new = Tensor.__new__


def make_tensor(value, weak=False) -> Tensor:
    """``Tensor(value, weak)`` without the keyword handling: ops make one per application."""
    t = _new(Tensor)
    t.value = value
    t.weak = weak
    t.id = new_id()
    return t


def keras_path(v: "Variable") -> str:
    """A Keras variable's ``path``: its layer's scopes and name, then its own (``dense/kernel``)."""
    return v.keras if isinstance(v.keras, str) else v.tf_name


def scoped_name(name: str | None) -> str | None:
    """A new tf.Variable's TensorFlow name in the open name scopes (library/tf_scopes.py): None where it has no
    name and no scope is open (then ``Variable``)."""
    scopes = current().name_scopes
    return "/".join([*scopes, name or "Variable"]) if scopes else name


def tensorflow_name(v: "Variable") -> str:
    """A variable's ``name`` as TensorFlow gives it to a Python program: ``w:0`` of ``tf.Variable(..., name='w')``,
    ``Variable:0`` without a name, ``kernel`` of a Keras layer's weight (tapecli's own ``name`` labels its reports)."""
    if isinstance(v, UnreadVariable):
        return "UnreadVariable"
    return v.tf_name if v.keras else f"{v.tf_name or 'Variable'}:0"


class Variable(EagerProtocol):
    """A named, mutable holder of a tensor. Its reads share the variable's id, so a
    tape that watches the variable sees every read; ``assign*`` makes a new value,
    which is how state stops gradients."""

    __slots__ = ("name", "trainable", "id", "_value", "order", "version", "tf_name", "keras", "bound_as", "declared",
                 "__weakref__")

    _order = itertools.count()

    def __init__(self, name: str, value: np.ndarray, trainable: bool = True, tf_name: str | None = None,
                 keras: bool | str = False):
        self.name = name
        self.tf_name = tf_name      # the name= a Python program gave it (TensorFlow prints 'Variable:0' without)
        # a Keras weight: its tf_name is Keras's (``kernel``), as ``.name`` gives it; its path (``dense/kernel``)
        # where it is a string
        self.keras = keras
        self.trainable = trainable
        self.id = new_id()
        self.order = next(Variable._order)
        self.version = 0          # how many times it was assigned
        self.bound_as = None      # the first name a program bound it to (`x` of `var x` or `x = tf.Variable(...)`)
        self.declared = None      # tf.Variable's shape= where some dimension is unknown (a specs.Shape): its
        # static shape, which the values it is assigned fit
        self._value = Tensor(value, id=self.id)
        ctx = current()
        ctx.variables.add(self)
        if ctx.mirroring:
            ctx.mirrored_variables[id(self)] = weakref.ref(self)

    def read(self) -> Tensor:
        return self._value

    @property
    def dtype(self) -> np.dtype:
        return self._value.dtype

    @property
    def shape(self) -> tuple:
        return self._value.shape

    def assign(self, value: np.ndarray) -> None:
        if value.shape != self._value.shape and not self.fits(value.shape):
            from tapecli.errors import ShapeError
            raise ShapeError(f"cannot assign a value of shape {list(value.shape)} to variable {self.name} "
                             f"of shape {list(self._value.shape)}")
        if value.dtype != self._value.dtype:
            raise TdfValueError(f"cannot assign a {dtype_name(value.dtype)} value to variable {self.name} "    # (TF's)
                               f"of dtype {dtype_name(self._value.dtype)}",
                               hint=f"use {spelling.cast('value', dtype_name(self._value.dtype))}")
        self._value = Tensor(value, id=self.id)
        self.version += 1

    def stand_in(self, value: Tensor) -> Tensor:
        """Reads give ``value`` itself (a tape sees its reads as reads of it: Keras's StatelessScope) until
        ``restore`` with the tensor this returns, the variable's own; what is assigned meanwhile is read, then
        dropped. Each counts as an assign (what a variable's version keys sees a new value)."""
        held, self._value = self._value, value
        self.version += 1
        return held

    def restore(self, held: Tensor) -> None:
        self._value = held
        self.version += 1

    def fits(self, shape: tuple) -> bool:
        """Whether a value of this shape may be assigned where the variable's shape is declared partly known."""
        return self.declared is not None and self.declared.is_compatible_with(shape)

    def holds_alone(self, kept: int = 0) -> bool:
        """Whether nothing else holds the variable's tensor or its array, but for the ``kept`` references to
        the array that the caller keeps."""
        return _holders(self) == (_SOLE[0], _SOLE[1] + kept)

    def writable(self, in_place: bool) -> tuple[np.ndarray, bool]:
        """The array of an update that writes the variable's new value into it (an optimizer's slots), and
        whether it is the variable's own: with ``in_place``, its own array where nothing else holds it (no
        tensor read from it and kept, no request's snapshot, no view of it), else a copy that becomes its
        value. Either way the variable counts as assigned."""
        private = in_place and _holders(self) == _SOLE      # counted before this call holds anything
        array = self._value.value
        if private and array.__class__ is np.ndarray and array.base is None and array.flags.writeable:
            self.version += 1
            return array, True
        array = array.copy()
        self._value = Tensor(array, id=self.id)
        self.version += 1
        return array, False

    def __repr__(self):
        eager = _reading()
        return f"Variable({self.name})" if eager is None else eager.repr(self)


def mirrored(variable: Variable) -> bool:
    """Whether the variable was made in a MirroredStrategy's scope (library/tf_distribute.py): TensorFlow's
    MirroredVariable, by its type and repr."""
    made = current().mirrored_variables
    found = None if made is None else made.get(id(variable))
    return found is not None and found() is variable


class VariableView(Variable):
    """A variable over another's storage: its assigns are that variable's; not one the run made (not in
    ``ctx.variables``), and never written in place for itself."""

    __slots__ = ("source",)

    def __init__(self, source: Variable, id: int, tf_name: str | None):
        self.source = source
        self.name = source.name
        self.tf_name = tf_name
        self.keras = False
        self.trainable = source.trainable
        self.id = id
        self.order = source.order
        self.version = 0
        self.bound_as = None
        self.declared = source.declared

    def assign(self, value: np.ndarray) -> None:
        self.source.assign(value)

    def holds_alone(self, kept: int = 0) -> bool:
        return False

    def writable(self, in_place: bool) -> tuple[np.ndarray, bool]:
        return self.source.writable(False)


class UnreadVariable(VariableView):
    """What ``assign``, ``assign_add`` and ``assign_sub`` return, as eager TensorFlow's ``_UnreadVariable``: a
    variable over the assigned one's storage, read when used (its value is the variable's at that time; assigning
    it assigns the variable), a variable of its own to the tapes (reading it is no read of the variable: a
    gradient with respect to the variable through it is None, as TensorFlow's), printed as 'UnreadVariable'."""

    __slots__ = ()

    def __init__(self, source: Variable):
        super().__init__(source, new_id(), None)
        self._value = Tensor(source.read().value, id=self.id)

    def read(self) -> Tensor:
        value = self.source.read().value
        if self._value.value is not value:
            self._value = Tensor(value, id=self.id)
        return self._value      # (its dtype and shape are the variable's: an assign keeps them)


class BackendVariable(VariableView):
    """A Keras weight's ``value``: the tf.Variable behind it (Keras 3's TensorFlow backend), one variable with the
    weight to the tapes (its reads are the weight's, its assigns the weight's), named by the weight's path
    (``dense/kernel:0``) and printed as a tf.Variable."""

    __slots__ = ()

    def __init__(self, source: Variable):
        super().__init__(source, source.id, keras_path(source))
        if mirrored(source):                # (a MirroredVariable's value is one too)
            current().mirrored_variables[id(self)] = weakref.ref(self)

    def read(self) -> Tensor:
        return self.source.read()

    @property
    def _value(self) -> Tensor:
        return self.source.read()


def _holders(var: Variable) -> tuple[int, int]:
    """The references to a variable's tensor and to that tensor's array (with this call's own)."""
    tensor = var._value
    return sys.getrefcount(tensor), sys.getrefcount(tensor.value)


def _sole_holders() -> tuple[int, int]:
    """What :func:`_holders` counts where only the variable holds its tensor and only the tensor its array,
    measured the same way (an interpreter may borrow some references and count fewer)."""
    probe = Variable.__new__(Variable)
    probe._value = Tensor(np.zeros(1), id=0)
    return _holders(probe)


_SOLE = _sole_holders()


# The most dimensions a tensor made from a literal or a nested list has: NumPy's (TensorFlow allows more).
MAX_LITERAL_DIMS = 64


RAGGED = "a ragged literal: every row must have the same length"


def literal_array(value) -> np.ndarray:
    """The exact array of a literal: float64 if any float, int64 for ints, bool for bools."""
    try:
        arr = np.asarray(value)
    except ValueError as e:
        if "maximum number of dimension" in str(e):
            raise TdfValueError(f"a literal nested more than {MAX_LITERAL_DIMS} deep: a tensor has at most "
                                f"{MAX_LITERAL_DIMS} dimensions") from None
        arr = np.asarray(value, dtype=object)
    if arr.dtype == object:
        if all(isinstance(v, int) for v in arr.flat):       # Python's exact integers, past what a tensor holds
            raise TdfValueError("an integer out of range for int64 cannot be a tensor (as in TensorFlow)")
        if any(v is None for v in arr.flat):                # [1, None]: TensorFlow's ValueError
            raise TdfValueError("Can't convert Python sequence with mixed types to Tensor.")
        raise TdfTypeError(RAGGED)
    if arr.dtype.kind in "SU" and isinstance(value, (list, tuple)):
        raise TdfValueError("Can't convert Python sequence with mixed types to Tensor.")   # [1, "a"] (NumPy: strings)
    if arr.dtype.kind == "f":
        return arr.astype(np.float64)
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64)
    return arr


def text_array(value) -> np.ndarray:
    """TensorFlow's string tensor of a str, bytes or a (nested) list of them: an object array of bytes, each str
    in UTF-8 (its ``numpy()`` as TensorFlow gives it)."""
    try:
        arr = np.array(value.tolist() if isinstance(value, (np.ndarray, np.generic)) else value, dtype=object)
    except ValueError:
        raise TdfValueError("Can't convert non-rectangular Python sequence to Tensor.") from None  # TensorFlow's words
    flat = arr.reshape(-1)
    for i, v in enumerate(flat):
        if isinstance(v, str):
            flat[i] = v.encode()
        elif not isinstance(v, bytes):
            raise TdfValueError("Can't convert non-rectangular Python sequence to Tensor." if isinstance(v, list)
                                else "Can't convert Python sequence with mixed types to Tensor.")
    return arr


def filled(shape, number, dtype: np.dtype) -> np.ndarray:
    """``np.full`` of a number (tf.zeros, tf.ones, zeros_like...): a string tensor's zero is b'', and no other
    number converts to a string (TensorFlow's words)."""
    if dtype.hasobject:
        if number != 0:
            raise TdfTypeError(f"Cannot convert {number} to EagerTensor of dtype string")
        return np.full(shape, b"", dtype=object)
    return np.full(shape, number, dtype=dtype)


def convert_weak(value: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """A weak tensor's exact value in ``dtype``; a float that an integer dtype cannot hold is an error, and so
    is an integer past the dtype's range (TensorFlow wraps it silently: 300 as uint8 is 44)."""
    if value.dtype == dtype:
        return value
    if value.size == 0:         # ([] is float, and takes any dtype: it holds no number)
        return value.astype(dtype)
    if dtype.kind in "iu":
        if value.dtype.kind == "f":
            raise TdfTypeError(f"cannot use the float value {_short(value)} as {dtype_name(dtype)}",
                               hint=f"write an integer, or cast the tensor with {spelling.cast('x', 'float32')}")
        info = np.iinfo(dtype)
        if value.size and (value.min() < info.min or value.max() > info.max):
            raise TdfTypeError(f"the value {_short(value)} does not fit in {dtype_name(dtype)}")
    if dtype == np.bool_ and value.dtype != np.bool_:
        raise TdfTypeError(f"cannot use the number {_short(value)} as bool")
    if dtype.hasobject:
        raise TdfTypeError(f"Cannot convert {_short(value)} to EagerTensor of dtype string")   # (TensorFlow's words)
    return value.astype(dtype)


# the integer dtypes TensorFlow's conversion of Python values fills from a Python bool: it has converters of its own
# for these, and casts to the others from the value's own dtype, which a bool's is not (py_seq_tensor.cc)
_BOOL_TAKERS = frozenset(np.dtype(t) for t in (np.int32, np.int64, np.uint64))


def requested_dtype(t: Tensor, dtype: np.dtype, shown: str, numpy: bool) -> np.ndarray:
    """The value of ``t`` in a requested ``dtype`` as TensorFlow converts a program's host value (tf.constant,
    tf.convert_to_tensor, tf.Variable): a NumPy array (``numpy``) as NumPy casts it to any number dtype (300.0 as
    int8 is 44, 1.5 is 1), never to a string; Python's ints to any number dtype, wrapping as C casts (300 as uint8
    is 44), never to bool; Python's floats to the float dtypes only; a Python bool to bool, the floats, int32, int64
    and uint64. Anything else is TensorFlow's error, ``shown`` (the value's repr) in its words."""
    value = t.value
    if value.dtype == dtype:
        return value.copy()             # (TensorFlow copies: the program's later writes to its array stay its own)
    word = dtype_name(dtype)
    refused = TdfTypeError(f"Cannot convert {shown} to EagerTensor of dtype {_TF_WORDS.get(word, word)}")
    if numpy:
        if dtype.hasobject:
            if value.dtype.kind in "SU":
                return text_array(value)
            kind = {"b": "bool", "f": "float"}.get(value.dtype.kind, "int")
            raise TdfValueError(f"Failed to convert a NumPy array to a Tensor (Unsupported object type {kind}).")
        if value.dtype.hasobject:       # (NumPy's strings, held as TensorFlow's bytes)
            value = np.array([v.decode() for v in value.flat], dtype=str).reshape(value.shape)
        try:
            with np.errstate(all="ignore"):
                return value.astype(dtype)      # (NumPy's strings are parsed as NumPy parses them)
        except ValueError as e:
            raise TdfValueError(str(e)) from None
    if value.size == 0 and not value.dtype.hasobject:       # ([] is float, and takes any dtype: it holds no number)
        return value.astype(dtype)
    if dtype.hasobject or value.dtype.hasobject or dtype.kind == "b":
        raise refused
    if value.dtype.kind == "f" and not is_float(dtype) or value.dtype.kind == "b" and dtype.kind in "iu" \
            and dtype not in _BOOL_TAKERS:
        raise refused
    if dtype == np.uint64 and value.dtype.kind == "i" and value.min() < 0:
        raise refused       # (TensorFlow's own conversion fails here, its error lost: a SystemError, or 2**64 - 1)
    with np.errstate(over="ignore"):        # (2**40 as float16 is inf, silently)
        return value.astype(dtype)


def _short(value: np.ndarray) -> str:
    text = np.array2string(value, threshold=6)
    return text if len(text) < 60 else text[:57] + "..."
