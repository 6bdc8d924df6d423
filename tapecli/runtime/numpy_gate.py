"""NumPy's functions and array methods as a program sees them: NumPy itself, each result weighed against
--max-elements and the memory cap before it is made, from NumPy's own shape and dtype rules (a function this
table does not know is weighed as soon as its result exists). Both paths call NumPy through here: a Python
program's ``numpy`` module (execution/modules.py) and a TensorFlow program's ``np.*`` calls and array methods
(library/numpy_forms.py)."""
from __future__ import annotations

import functools
import math
import operator
import sys
import types

import numpy as np

from tapecli.runtime.limits import LIST_SLOT, admit, admit_bytes

_FILES, _MEMORY = "it reads or writes files", "it reaches raw memory or the host"
_BUILDS = "it builds and loads compiled code"
# Names of NumPy's modules that reach files, raw memory or the machine: refused in every program, each with its
# reason (a Python program's ``numpy`` module and a TensorFlow program's ``np.*`` alike).
REFUSED = {
    "numpy": {**dict.fromkeys(("load", "save", "savez", "savez_compressed", "loadtxt", "savetxt", "genfromtxt",
                               "fromfile", "fromregex", "memmap", "DataSource"), _FILES),
              **dict.fromkeys(("ctypeslib", "lib", "testing"), _MEMORY), "f2py": _BUILDS, "distutils": _BUILDS,
              "show_config": "it prints how tapecli's NumPy was built", "show_runtime": "it prints the machine's details",
              "get_include": "it names where tapecli's NumPy is installed"},
    "numpy.random": {"bit_generator": _MEMORY},
}
# Of those, the readers and writers a Python program's NumPy runs on its own streams and lines, refusing a path
# (execution/state.py)
IN_MEMORY = ("loadtxt", "genfromtxt", "savetxt", "load", "save", "savez", "savez_compressed")


def _count(shape) -> int:
    if shape is None:
        return 1
    if isinstance(shape, (int, np.integer)):
        return int(shape)
    return math.prod(operator.index(d) for d in shape)


def _itemsize(dtype, default=np.float64) -> int:
    return np.dtype(default if dtype is None else dtype).itemsize


def _shaped(shape, dtype=None, *args, **kwargs):
    return _count(shape), _itemsize(kwargs.get("dtype", dtype))


def _full(shape, fill_value, dtype=None, *args, **kwargs):
    return _count(shape), np.dtype(kwargs.get("dtype", dtype) or np.result_type(fill_value)).itemsize


def _like(a, dtype=None, *args, shape=None, **kwargs):
    a = np.asarray(a) if not hasattr(a, "shape") else a
    return (_count(shape) if shape is not None else int(np.prod(a.shape))), _itemsize(dtype, a.dtype)


def _full_like(a, fill_value, dtype=None, *args, shape=None, **kwargs):
    return _like(a, dtype, shape=shape)


def _arange(*args, dtype=None, **kwargs):
    if len(args) >= 2:
        start, stop, step = args[0], args[1], args[2] if len(args) > 2 else kwargs.get("step", 1)
    else:
        start = kwargs.get("start", 0) if args else kwargs.get("start", 0)
        stop = args[0] if args else kwargs.get("stop")
        step = kwargs.get("step", 1)
        if args and "stop" in kwargs:
            start, stop = args[0], kwargs["stop"]
    if stop is None or not step:
        return 1, 8
    return max(0, math.ceil((float(stop) - float(start)) / float(step))), _itemsize(dtype, np.float64)


def _spaced(start, stop, num=50, *args, **kwargs):
    return int(num), 8


def _eye(N, M=None, *args, dtype=None, **kwargs):
    return int(N) * int(N if M is None else M), _itemsize(dtype)


def _repeat(a, repeats, axis=None):
    a = np.asarray(a)
    total = int(np.sum(repeats)) if np.ndim(repeats) else int(repeats) * a.size
    return total, a.itemsize


def _tile(a, reps):
    a = np.asarray(a)
    return a.size * _count(reps), a.itemsize


def _outer(a, b, *args, **kwargs):
    a, b = np.asarray(a), np.asarray(b)
    return a.size * b.size, np.result_type(a, b).itemsize


def _sized(*args, size=None, **kwargs):
    return _count(size), 8


def _choice(a, size=None, replace=True, p=None):
    population = int(a) if isinstance(a, (int, np.integer)) else len(a)
    return max(_count(size), 0 if replace else population), 8


def _meshgrid(*xs, sparse=False, **kwargs):
    """One array per input, each of every input's size (sparse: of its own size, the rest of its shape ones)."""
    sizes = [np.size(x) for x in xs]
    return (sum(sizes) if sparse else math.prod(sizes) * len(xs)), 8


def _indices(dimensions, dtype=int, sparse=False):
    if sparse:          # (one array per dimension, of that dimension's length)
        return sum(operator.index(n) for n in dimensions), _itemsize(dtype)
    return _count(dimensions) * len(dimensions), _itemsize(dtype)


def _astype(a, dtype, *args, **kwargs):
    # (astype(str) leaves the width to NumPy: at most 32 characters of 4 bytes for a number)
    return a.size, np.dtype(dtype).itemsize or 128


def _tolist(a):
    return a.size, LIST_SLOT + sys.getsizeof(1.0)        # a slot and a Python number each


def _histogram(a, bins=10, *args, **kwargs):
    """np.histogram's counts and edges where ``bins`` is a count (NumPy makes them whatever the data: a count of
    1e9 ran for minutes); a sequence of edges or a rule's name: the result is as large as what the program gave."""
    if isinstance(bins, (str, list, tuple, np.ndarray)):
        return None, 0
    return 2 * operator.index(bins) + 1, 8


def _histogram2d(x, y, bins=10, *args, **kwargs):
    if isinstance(bins, (list, tuple, np.ndarray)) or isinstance(bins, str):
        return None, 0
    return (operator.index(bins) + 1) ** 2, 8


def _bincount(x, weights=None, minlength=0):
    """np.bincount's counts: one per value up to the largest."""
    values = np.asarray(x)
    largest = int(values.max()) + 1 if values.size and values.dtype.kind in "iub" else 0
    return max(largest, operator.index(minlength)), 8


# An array method's result, from the array and the method's arguments.
METHOD_ESTIMATES = {"astype": _astype, "repeat": _repeat, "tolist": _tolist}

ESTIMATES = {
    **dict.fromkeys(("zeros", "ones", "empty"), _shaped), "full": _full,
    **dict.fromkeys(("zeros_like", "ones_like", "empty_like"), _like), "full_like": _full_like,
    "arange": _arange, **dict.fromkeys(("linspace", "logspace", "geomspace"), _spaced),
    "eye": _eye, "identity": lambda n, dtype=None, **k: (int(n) ** 2, _itemsize(dtype)),
    "repeat": _repeat, "tile": _tile, "outer": _outer, "kron": _outer, "meshgrid": _meshgrid, "indices": _indices,
    "choice": _choice, "histogram": _histogram, "histogram_bin_edges": _histogram, "histogram2d": _histogram2d,
    "bincount": _bincount,
}
_RANDOM_SIZED = ("rand", "randn")


# numpy.char and numpy.strings: a result's characters from its arguments' widths (at most), 4 bytes each.
def _chars(value) -> int:
    """The most characters of a string in ``value`` (an array's itemsize, a Python string's length)."""
    if isinstance(value, (str, bytes)):
        return len(value)
    array = np.asarray(value)
    return array.dtype.itemsize // (4 if array.dtype.kind == "U" else 1) if array.dtype.kind in "US" else 0


def _texts(*arrays) -> int:
    return np.broadcast(*(np.asarray(a) for a in arrays)).size


def _most(value) -> int:
    return int(np.max(value)) if np.size(value) else 0


_STRING_ESTIMATES = {
    "multiply": lambda a, i: (_texts(a, i), 4 * _chars(a) * max(_most(i), 0)),
    "add": lambda a, b: (_texts(a, b), 4 * (_chars(a) + _chars(b))),
    **dict.fromkeys(("center", "ljust", "rjust"), lambda a, width, fillchar=" ": (
        _texts(a, width), 4 * max(_chars(a), _most(width)))),
    "zfill": lambda a, width: (_texts(a, width), 4 * max(_chars(a), _most(width))),
    "expandtabs": lambda a, tabsize=8: (_texts(a), 4 * _chars(a) * max(_most(tabsize), 1)),
    # each of a's characters (and the ends) may become ``new``, as an empty ``old`` does
    "replace": lambda a, old, new, count=-1: (_texts(a, old, new), 4 * (_chars(a) + 1) * (_chars(new) + 1)),
    "join": lambda sep, seq: (_texts(sep, seq), 4 * _chars(seq) * (_chars(sep) + 1)),
    **dict.fromkeys(("encode", "decode"), lambda a, *args, **kwargs: (_texts(a), 4 * _chars(a))),
}
# Where a module's functions of a name are not NumPy's top-level ones of that name (np.char.multiply).
def _records(obj=None, dtype=None, shape=None, offset=0, strides=None, formats=None, names=None, titles=None,
             *args, **kwargs):
    """np.rec.array's result where it allocates one (no object given): its shape of records (None: its object's)."""
    if obj is not None or shape is None:
        return None, 0
    record = np.dtype(dtype) if dtype is not None else np.rec.format_parser(formats, names, titles).dtype
    return _count(shape), record.itemsize


_MODULE_ESTIMATES = {"numpy.char": _STRING_ESTIMATES, "numpy.strings": _STRING_ESTIMATES,
                     "numpy.rec": {"array": _records}}
# What numpy.char and numpy.strings leave out: a result whose size their arguments do not bound.
STRING_REFUSED = {"mod": "its result's size comes from the format's widths, which nothing bounds before it runs",
                  "translate": "its table may map a character to any string: the result's size is not bounded"}


def _strided_within_its_array(x, shape=None, strides=None, subok=False, writeable=True):
    """as_strided's view reads only the memory of the array it is a view of (NumPy checks nothing: a shape or
    strides past its end would read or write whatever lies beyond). The layout is read through ndarray's own
    descriptors, which a program's subclass cannot override."""
    a = np.array(x, copy=None, subok=bool(subok))
    start, own_shape, own_strides, itemsize = _layout(a)
    shape = own_shape if shape is None else tuple(operator.index(n) for n in np.atleast_1d(shape))
    strides = own_strides if strides is None else tuple(operator.index(n) for n in np.atleast_1d(strides))
    if len(shape) != len(strides) or any(n < 0 for n in shape) or 0 in shape:
        return                                       # NumPy says what is wrong, or the view has no element
    low, high = _extent(shape, strides, itemsize)
    owner = a
    while isinstance(np.ndarray.base.__get__(owner), np.ndarray):
        owner = np.ndarray.base.__get__(owner)
    owner_start, owner_shape, owner_strides, owner_itemsize = _layout(owner)
    lowest, highest = _extent(owner_shape, owner_strides, owner_itemsize) if 0 not in owner_shape else (0, 0)
    lowest, highest = owner_start + lowest - start, owner_start + highest - start
    if low < lowest or high > highest:
        raise ValueError(f"as_strided: a view of shape {shape} with strides {strides} reaches bytes {low} to {high} "
                         f"of its array's data, which has bytes {lowest} to {highest}")


def _layout(a: np.ndarray) -> tuple:
    return (np.ndarray.__array_interface__.__get__(a)["data"][0], np.ndarray.shape.__get__(a),
            np.ndarray.strides.__get__(a), np.ndarray.itemsize.__get__(a))


def _extent(shape, strides, itemsize) -> tuple[int, int]:
    """The bytes a layout reaches, from its first element's: [low, high)."""
    return (sum(st * (n - 1) for n, st in zip(shape, strides) if st < 0),
            sum(st * (n - 1) for n, st in zip(shape, strides) if st > 0) + itemsize)


# A function's own refusals, checked with its arguments before NumPy runs.
_CHECKS = {("numpy.lib.stride_tricks", "as_strided"): _strided_within_its_array}


def weighed(module: str, name: str, function, then=None):
    """``function`` of NumPy's ``module`` with its result weighed before (or, unknown, as soon as) it is made;
    ``then``: called with the arguments once they are weighed, before NumPy runs (a caller's own refusals)."""
    if isinstance(function, (type, np.ufunc, types.GenericAlias)) or not callable(function):
        return function         # (a class, a ufunc, an alias such as numpy.typing.NDArray: NumPy's own)
    then = then or _CHECKS.get((module, name))
    estimate = _MODULE_ESTIMATES[module].get(name) if module in _MODULE_ESTIMATES else ESTIMATES.get(name)
    if estimate is None and module == "numpy.random":
        estimate = _random_estimate(name)
    return _gated(f"{module.replace('numpy', 'np', 1)}.{name}()", function, estimate, then)


# NumPy's own methods of an ndarray, which the interpreter's arrays have (library/numpy_forms.py), with NumPy's
# semantics (``sort``, ``fill``, ``put``, ``resize`` change the array in place; ``view`` shares its memory): all but
# those that reach raw memory (a field at any byte offset, the writeable flag) or write files, bytes and pickles
_RAW_OR_OUT = frozenset(("itemset", "setfield", "getfield", "setflags", "dumps", "tobytes", "tostring", "dump",
                         "tofile"))
# (ndarray's own namespace: dir() adds object's dunders alone, and sorts, at twice the time of every start-up)
ARRAY_METHODS = frozenset(name for name, value in vars(np.ndarray).items() if not name.startswith("_")
                          and callable(value) and name not in _RAW_OR_OUT)


def weighed_method(array: np.ndarray, name: str, then=None):
    """The method ``name`` of ``array``, its result weighed as ``weighed``'s are."""
    estimate = METHOD_ESTIMATES.get(name)
    return _gated(f"x.{name}()", getattr(array, name), estimate and functools.partial(estimate, array), then)


def _gated(what: str, function, estimate, then=None):
    """``function``, its result weighed before it is made (``estimate``: its elements and item size from the
    arguments) and once it exists."""
    @functools.wraps(function)
    def gated(*args, **kwargs):
        if estimate is not None:
            try:
                elements, itemsize = estimate(*args, **kwargs)
            except (TypeError, ValueError, OverflowError, IndexError):
                elements = None         # NumPy says what is wrong with the arguments
            if elements is not None:
                admit(elements, itemsize, f"{what}'s result")
        if then is not None:
            then(*args, **kwargs)
        result = function(*args, **kwargs)
        weigh_result(result, what)
        return result
    return gated


def _random_estimate(name: str):
    if name in _RANDOM_SIZED:
        return lambda *shape: (_count(shape), 8)
    return _sized


def weigh_result(result, what: str) -> None:
    if isinstance(result, np.ndarray) and result.size > 1:
        admit(result.size, result.itemsize, f"{what}'s result", allocated=True)
    elif isinstance(result, list) and len(result) > 1024:
        admit_bytes(len(result), len(result) * LIST_SLOT, f"{what}'s result")


class numpy_settings_kept:
    """What a program may change of NumPy's process-wide settings (print options, error handling and its
    callback) comes back when its run ends, on either runner: two runs in one process never see each other's."""

    def __enter__(self):
        self.saved = (np.get_printoptions(), np.geterr(), np.geterrcall(), _polynomial_style(), _masked_display())

    def __exit__(self, *exc):
        printing, errors, call, unicode, masked = self.saved
        np.set_printoptions(**printing)
        np.seterr(**errors)
        np.seterrcall(call)
        polybase = sys.modules.get(_POLYBASE)
        if polybase is not None:        # (np.polynomial.set_default_printstyle: its classes' print style)
            polybase.ABCPolyBase._use_unicode = unicode
        ma = sys.modules.get(_MA)
        if ma is not None:              # (np.ma.masked_print_option.set_display / enable)
            vars(ma.masked_print_option).update(masked)


# (read without importing the modules where nothing has yet: their defaults)
_POLYBASE, _MA = "numpy.polynomial._polybase", "numpy.ma.core"


def _polynomial_style() -> bool:
    """Whether NumPy's polynomials print in unicode: their default, unless a program changed it."""
    polybase = sys.modules.get(_POLYBASE)
    return True if polybase is None else polybase.ABCPolyBase._use_unicode


def _masked_display() -> dict:
    """How numpy.ma prints a masked element (``--``, unless a program changed it)."""
    ma = sys.modules.get(_MA)
    return {"_display": "--", "_enabled": True} if ma is None else dict(vars(ma.masked_print_option))
