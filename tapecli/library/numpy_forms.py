"""NumPy as TensorFlow programs use it beside the tape: the methods of arrays (``x.astype``, ``x.reshape``,
``x.mean()``, ``x.sum(axis=)``, ``x.tolist()``...), ``np.random.default_rng(seed)`` and ``np.random.seed`` with
the ``np.random.*`` functions, ``np.finfo``, ``np.arange``, ``np.append``, ``np.concatenate``.

Each calls NumPy itself on the values, so the numbers (random streams included) and dtypes are NumPy's, bit
for bit; what it computes is off every tape, as NumPy is in TensorFlow (a gradient through it is None, and the
tape's `why` says where the path left it). The global ``np.random`` state is the run's own (seeded by
``np.random.seed``), never the process's.

Every call is weighed against --max-elements and the memory cap before NumPy allocates its result, by the
rules a Python program's ``numpy`` module is weighed by (runtime/numpy_gate.py), and again as it becomes a
program value (``tolist``'s numbers, one tensor each)."""
from __future__ import annotations

import functools
import math
import sys

import numpy as np

from tapecli.errors import NoAttribute, TdfNameError, TdfTypeError, TdfValueError
from tapecli.interpreter.classes import off_the_tape
from tapecli.interpreter.objects import BoundMethod, ProgramObject
from tapecli.interpreter.registry import builtin, builtin_function, hook, register
from tapecli.runtime.limits import LIST_SLOT, admit
from tapecli.runtime import numpy_gate
from tapecli.runtime.numpy_gate import ARRAY_METHODS, weighed, weighed_method
from tapecli.runtime.tape import type_word
from tapecli.runtime.values import DType, NumpyArray, PythonBool, PythonTuple, Tensor, Variable


def to_numpy(value):
    """A program value as NumPy takes it: a literal as a Python number, a NumPy array as itself (which NumPy may
    change in place: ``out=``, ``np.copyto``), a tensor as its array, read-only (a tensor never changes), lists
    nested."""
    if isinstance(value, Variable):
        value = value.read()
    if isinstance(value, Tensor):
        if value.ndim == 0:        # a literal as Python's number, a tensor's scalar as NumPy's
            return value.value.item() if value.weak or value.dtype.kind == "b" else value.value[()]
        return value.value if value.__class__ is NumpyArray else read_only(value.value)
    if isinstance(value, (list, tuple)):        # (a tuple stays one: NumPy's axis=(1, 2) takes no list)
        items = [to_numpy(v) for v in value]
        return tuple(items) if isinstance(value, (tuple, PythonTuple)) else items
    if isinstance(value, DType):
        return value.np
    if isinstance(value, (str, type(None), bool, int, float)):
        return value
    if isinstance(value, ProgramObject):
        raise TdfTypeError(f"NumPy cannot take {value.kind_word}")
    python_type = _PYTHON_TYPES.get(getattr(value, "__name__", "").rstrip("_")) if getattr(value, "is_builtin", False) \
        else None
    if python_type is not None:             # Python's int, float, bool as a dtype (x.astype(int))
        return python_type
    raise TdfTypeError(f"NumPy cannot take {type_word(value)}")


_PYTHON_TYPES = {"int": int, "float": float, "bool": bool, "complex": complex, "str": str}


def read_only(array: np.ndarray) -> np.ndarray:
    """A view of a tensor's array that NumPy cannot write through (nor through any view NumPy makes of it)."""
    view = array.view()
    view.flags.writeable = False
    return view


def from_numpy(value):
    """NumPy's answer as a program value: arrays and NumPy scalars (numbers, bools and NumPy's strings) as
    NumPy values of NumPy's dtype, Python numbers (``tolist``, ``item``) as literals, lists as lists. An array
    stays NumPy's own (a view shares its array's memory, as in NumPy), except one NumPy cannot write: a view of
    a tensor's values (to_numpy), which the program gets a copy of, as ``np.asarray(t)`` of TensorFlow's; and a
    NumPy scalar (a 0-d array) is one of its own, immutable as NumPy's scalars are."""
    if isinstance(value, np.ndarray) or isinstance(value, np.generic):
        array = np.asarray(value)
        if array.dtype.kind not in "biufUS":
            raise TdfTypeError(f"tapecli has no {array.dtype} tensors (NumPy gave one)",
                               hint="on CPython (TAPECLI_TF_ON_CPYTHON=1 or auto) NumPy's arrays are NumPy's own")
        admit(array.size, array.itemsize, "NumPy's result, as a tensor")
        return NumpyArray(array if array.flags.writeable and array.ndim else array.copy())
    if isinstance(value, (bool, int, float)):
        return Tensor(np.asarray(value)[()], weak=True) if not isinstance(value, bool) else PythonBool(np.array(value))
    if isinstance(value, (list, tuple)):
        return [from_numpy(v) for v in value]
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, dict):                 # (np.seterr's settings, to pass back as np.seterr(**old))
        return {key: from_numpy(v) for key, v in value.items()}
    raise TdfTypeError(f"NumPy gave {type(value).__name__}, which tapecli programs do not hold")


def _held(dtype) -> None:
    """A dtype asked of NumPy that no program value can have (objects, records, dates): refused once the result
    is weighed, before NumPy makes it."""
    try:
        kind = None if dtype is None else np.dtype(dtype).kind
    except (TypeError, ValueError):
        return                                      # NumPy words the error
    if kind is not None and kind not in "biufUS":
        raise TdfTypeError(f"tapecli has no {np.dtype(dtype)} tensors (NumPy was asked for one)")


def _held_dtype(*args, dtype=None, **kwargs) -> None:
    _held(dtype)


def _held_astype(dtype=None, *args, **kwargs) -> None:
    _held(dtype)


def numpy_call(fn, args, kwargs, what: str, line=None):
    """``fn`` (a NumPy function or method) on the program's arguments, off every tape."""
    inputs = list(args) + list(kwargs.values())

    def compute():
        try:
            return from_numpy(fn(*[to_numpy(a) for a in args], **{k: to_numpy(v) for k, v in kwargs.items()}))
        except (TypeError, ValueError) as e:
            raise TdfValueError(f"{what}: {e}") from None
    return off_the_tape(compute, what, line, inputs)


# ------------------------------------------------------------- array methods
def array_attribute(interp, t: Tensor, attr: str, node):
    """The NumPy method ``attr`` of an array (a tensor's values), or None if NumPy arrays have none such."""
    if attr not in ARRAY_METHODS and attr != "size":
        return None
    if attr == "size":
        return Tensor(np.array(t.value.size, dtype=np.int64), weak=True)
    if attr == "resize" and t.__class__ is NumpyArray and t.ndim:
        return BoundMethod(attr, lambda call_node, *args, refcheck=True: _resize(t, args))
    # (a tensor's values, and a NumPy scalar's, never change: NumPy's methods see them read-only)
    array = t.value if t.__class__ is NumpyArray and t.ndim else read_only(np.asarray(t.value))

    def call(call_node, *args, **kwargs):
        if attr == "tolist":        # Python's numbers, then a tensor each (from_numpy), in nested lists
            admit(array.size, _NUMBER_VALUE, f"{interp.text(node) or 'x.tolist'}()'s list")
        return numpy_call(weighed_method(array, attr, _held_astype if attr == "astype" else None), args, kwargs,
                          f"{interp.text(node) or 'x.' + attr}()", getattr(call_node, "line", None))
    return BoundMethod(attr, call)


def _resize(t: NumpyArray, args) -> None:
    """``a.resize(shape)``: the array's own memory made the new size in place, zeros after its elements, where
    NumPy allows it: an array that owns its memory and that no other array views. (NumPy's ``refcheck=False``
    would let a view read freed memory: tapecli checks always.)"""
    shape = tuple(int(d) for d in np.atleast_1d(to_numpy(args[0] if len(args) == 1 else list(args))))
    admit(math.prod(shape), t.value.itemsize, "a.resize()'s array")
    if not t.value.flags.owndata:
        raise TdfValueError("cannot resize this array: it does not own its data")
    if sys.getrefcount(t.value) > _OWNED:      # (another array, a view of it, holds it too)
        raise TdfValueError("cannot resize an array that references or is referenced\nby another object in this "
                            "way.\nUse the np.resize function to get a new resized copy or\n set refcheck=False "
                            "to disable this check")
    try:
        t.value.resize(shape, refcheck=False)
    except (TypeError, ValueError) as e:
        raise TdfValueError(str(e)) from None


# The references to an array that only its NumpyArray holds, as sys.getrefcount counts them in _resize: the
# NumpyArray's slot and getrefcount's argument.
_OWNED = 2


# What a number of ``tolist``'s list costs as a program value: its slot, Python's number, and a tensor of it
# (its NumPy scalar, and 64 bytes for the tensor object: about 120 bytes the two, measured).
_NUMBER_VALUE = LIST_SLOT + sys.getsizeof(1.0) + sys.getsizeof(np.float64(1.0)) + 64


# ------------------------------------------------------------- np.random
@functools.cache
def _draws() -> frozenset:
    """NumPy's Generator's draws: all its methods but spawn (generators of generators) and bytes. (Read at the
    first draw: numpy.random is not imported before.)"""
    return frozenset(name for name in dir(np.random.Generator) if not name.startswith("_") and callable(
        getattr(np.random.Generator, name)) and name not in ("spawn", "bytes"))


def _shuffle(shuffle, what: str, x, *args, **kwargs):
    """``shuffle(x)`` in place, NumPy's: an array's own elements; a program's list, its items in the order
    NumPy's shuffle of their positions gives (the draws it makes for the list itself)."""
    if isinstance(x, list) and x.__class__ is not PythonTuple:
        order = np.arange(len(x))
        numpy_call(shuffle, [NumpyArray(order), *args], kwargs, what)
        x[:] = [x[i] for i in order]
        return None
    return numpy_call(shuffle, [x, *args], kwargs, what)
_LEGACY = ("normal", "uniform", "rand", "randn", "randint", "random", "random_sample", "standard_normal", "choice",
           "permutation", "exponential", "binomial", "poisson", "beta", "gamma", "laplace", "logistic", "lognormal",
           "multivariate_normal", "triangular", "shuffle")


class Generator(ProgramObject):
    """``np.random.default_rng(seed)``: NumPy's own Generator; its methods give NumPy's numbers."""

    kind_word = "a NumPy Generator"

    def __init__(self, generator: np.random.Generator):
        self.generator = generator

    def get_attribute(self, interp, attr, node):
        if attr not in _draws():
            raise TdfTypeError(f"numpy.random.Generator has no method {attr} in tapecli",
                               hint=f"tapecli's: {', '.join(sorted(_draws()))}")
        fn = weighed("numpy.random", attr, getattr(self.generator, attr), _held_dtype)
        if attr == "shuffle":
            return BoundMethod(attr, lambda call_node, *a, **k: _shuffle(fn, "Generator.shuffle()", *a, **k))
        return BoundMethod(attr, lambda call_node, *a, **k: numpy_call(fn, a, k, f"Generator.{attr}()",
                                                                       getattr(call_node, "line", None)))


@builtin("np.random.default_rng")
def default_rng(seed=None):
    return Generator(np.random.default_rng(to_numpy(seed)))


def _global_state(interp) -> np.random.RandomState:
    """The run's np.random state (NumPy's legacy RandomState, which np.random.seed seeds)."""
    state = getattr(interp, "np_random_state", None)
    if state is None:
        state = interp.np_random_state = np.random.RandomState()
    return state


@builtin("np.random.seed", interp=True)
def np_seed(interp, seed=None):
    _global_state(interp).seed(to_numpy(seed))


def _legacy(name):
    def function(interp, *args, **kwargs):
        fn = weighed("numpy.random", name, getattr(_global_state(interp), name), _held_dtype)
        if name == "shuffle":
            return _shuffle(fn, "np.random.shuffle()", *args, **kwargs)
        return numpy_call(fn, args, kwargs, f"np.random.{name}()")
    function.__name__ = name
    return function


for _name in _LEGACY:
    builtin(f"np.random.{_name}", interp=True)(_legacy(_name))


# ------------------------------------------------------------- np functions
class _Finfo(ProgramObject):
    kind_word = "np.finfo"

    def __init__(self, info):
        self.info = info

    def get_attribute(self, interp, attr, node):
        if attr not in ("eps", "max", "min", "tiny", "smallest_normal", "resolution", "epsneg", "bits", "precision"):
            raise NoAttribute(f"np.finfo has no attribute {attr} in tapecli")
        return from_numpy(getattr(self.info, attr))


@builtin("np.finfo")
def finfo(dtype):
    return _Finfo(np.finfo(to_numpy(dtype)))


@builtin("np.iinfo")
def iinfo(dtype):
    return _Finfo(np.iinfo(to_numpy(dtype)))


def _numpy_function(fn, spelling: str, module: str | None):
    """A host module's function as a builtin: NumPy's weighed before it allocates (``module``: its NumPy
    module's name), Python's math as it is."""
    if module is not None:
        fn = weighed(module, spelling.rpartition(".")[2], fn, _held_dtype)

    def function(*args, **kwargs):
        return numpy_call(fn, args, kwargs, f"{spelling}()")
    function.__name__ = spelling.rpartition(".")[2]
    return builtin_function(function)


class NumpyScalarType(DType, ProgramObject):
    """``np.float32``, ``np.int64``: a dtype where one is asked for (``x.astype(np.float32)``, ``tf.cast(x,
    np.float64)``) and, called, NumPy's scalar of that type (``np.float64(2.5)``)."""

    kind_word = "a NumPy scalar type"

    def python_text(self) -> str:
        return repr(self.np.type)          # NumPy's class: <class 'numpy.float32'>

    def call(self, interp, args, kwargs, node):
        return numpy_call(self.np.type, args, kwargs, f"np.{self.name}()", getattr(node, "line", None))


# Names of NumPy refused in a TensorFlow program: those refused everywhere, and those that call program
# functions from inside NumPy, where the interpreter's functions cannot run.
REFUSED = {**numpy_gate.REFUSED["numpy"], **dict.fromkeys(
    ("vectorize", "frompyfunc", "piecewise", "apply_along_axis", "apply_over_axes", "fromfunction"),
    "it calls program functions from inside NumPy, out of tapecli's reach")}
_SCALAR_TYPES = {"float32": "float32", "float64": "float64", "double": "float64", "int32": "int32",
                 "int64": "int64", "bool_": "bool", "float16": "float16", "half": "float16",
                 **{name: name for name in ("int8", "int16", "uint8", "uint16", "uint32", "uint64")}}


register("np.newaxis", None)       # (NumPy's is None: an index item; the module lookup below reads None as absent)


# The modules whose functions a TensorFlow program calls on host values, as CPython calls them: NumPy's and
# Python's math (``math.sqrt(2.0)`` is Python's float, never a float32 tensor).
HOST_MODULES = {"np": np, "math": math}


@hook("host_module_name")
def host_module_name(path: str, attr: str):
    """``np.<attr>``, ``np.linalg.<attr>``, ``math.<attr>``: the module's own function, scalar type or
    constant, computed by the module itself on the program's values; None where it is a submodule. A name the
    module does not have is the program's error, as in Python (``np.relu`` and ``math.softmax`` do not
    resolve)."""
    root, *parts = path.split(".")
    if root == "np" and attr in REFUSED:
        raise TdfNameError(f"{path}.{attr} is out of scope for tapecli: {REFUSED[attr]}")
    if root == "np" and not parts and attr in _SCALAR_TYPES:
        return NumpyScalarType(_SCALAR_TYPES[attr])
    module = HOST_MODULES[root]
    for part in parts:
        module = getattr(module, part, None)
    value = getattr(module, attr, None)
    if isinstance(value, type(np)):
        return None
    if attr == "__version__" and isinstance(value, str):     # (scripts print their libraries' versions first)
        return value
    if value is None or attr.startswith("_"):
        raise TdfNameError(f"{'numpy' if root == 'np' else root}{path[len(root):]} has no attribute {attr!r}")
    if isinstance(value, (float, int)):
        return from_numpy(value)
    if callable(value) and not isinstance(value, type):
        return _numpy_function(value, f"{path}.{attr}", "numpy" + path[2:] if root == "np" else None)
    if root == "np" and not parts and attr in NumpyIndexer.NAMES:
        return NumpyIndexer(value, f"np.{attr}")
    raise TdfNameError(f"{path}.{attr} is not a function or a number tapecli programs can use")


def interpreter_lacks(path: str, attr: str) -> bool:
    """Whether ``np.<path>.<attr>`` (``path`` from ``np``) is NumPy's and the interpreter refuses it
    (host_module_name): a class of NumPy's other than its scalar types and indexers (``np.random.RandomState``),
    which a program on CPython has as NumPy's own."""
    module = np
    for part in path.split(".")[1:]:
        module = getattr(module, part, None)
    value = getattr(module, attr, None)
    return isinstance(value, type) and not (path == "np" and (attr in _SCALAR_TYPES or attr in NumpyIndexer.NAMES))


def gives_complex(path: str, attr: str) -> bool:
    """Whether ``np.<path>.<attr>`` may give complex numbers for real arguments (eigenvalues, Fourier transforms,
    polynomial roots, np.emath's functions), which no value of the interpreter can hold: a program calling one runs
    on CPython, where NumPy's arrays are NumPy's own."""
    return attr in _COMPLEX_RESULTS.get(path, ())


_COMPLEX_RESULTS = {"np": {"roots", "sort_complex"}, "np.linalg": {"eig", "eigvals"},
                    "np.emath": {"arccos", "arcsin", "arctanh", "log", "log10", "log2", "logn", "power", "sqrt"},
                    "np.fft": {"fft", "fft2", "fftn", "ifft", "ifft2", "ifftn", "ihfft", "rfft", "rfft2", "rfftn"}}


class NumpyIndexer(ProgramObject):
    """``np.r_``, ``np.c_``, ``np.mgrid`` and ``np.ogrid``: NumPy's own object, indexed with the program's arrays,
    numbers and ranges; what it makes is weighed before it is made (each range's length, each array's size; a
    mesh grid's arrays each of the ranges' product)."""

    NAMES = frozenset(("r_", "c_", "mgrid", "ogrid"))
    kind_word = "a NumPy index object"
    indexed_by_values = True

    def __init__(self, indexer, spelling: str):
        self.indexer, self.spelling = indexer, spelling

    def index(self, items: list):
        key = [slice(*(to_numpy(p) for p in (i.start, i.stop, i.step))) if isinstance(i, slice) else to_numpy(i)
               for i in items]
        lengths = [_joined_length(k) for k in key]
        admit(math.prod(lengths) * len(lengths) if self.spelling == "np.mgrid" else sum(lengths), 8,
              f"{self.spelling}[...]'s result")
        return numpy_call(lambda: self.indexer[key[0] if len(key) == 1 else tuple(key)], [], {},
                          f"{self.spelling}[...]")


def _joined_length(item) -> int:
    """How many elements ``np.r_`` takes from one item: a range's length (a complex step: that many points), an
    array's size, one for a number or a directive string."""
    if isinstance(item, slice):
        step = 1 if item.step is None else item.step
        if isinstance(step, complex):
            return int(abs(step))
        start, stop = item.start or 0, item.stop or 0
        return max(math.ceil((stop - start) / step), 0) if step else 0
    return int(np.size(item)) if not isinstance(item, str) else 0
