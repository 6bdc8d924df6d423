"""NumPy's arrays as NumPy reads and writes them in place: indexing (a view where NumPy gives one), item
assignment (``X[1, 2] = 5``, ``X[mask] = 0``) and the in-place operators (``a += 1``, ``X[i] *= 2``).

Each is NumPy's own operation on the arrays the program holds (a NumpyArray's ``.value``), so NumPy decides
what is a view and what a copy, how a value converts and casts (``int_array[0] = 2.7`` stores 2), how shapes
broadcast, and what is an error: NumPy's message under NumPy's exception class, as CPython shows it. A TensorFlow
tensor never changes: TensorFlow takes a copy of an array when it converts one (ops.to_tensor, tf_tensor), and
a tensor's values reach NumPy read-only (numpy_forms.to_numpy)."""
from __future__ import annotations

import math
import operator

import numpy as np

from tapecli.errors import TdfError
from tapecli.interpreter.registry import hook
from tapecli.library.numpy_forms import to_numpy
from tapecli.runtime.limits import admit
from tapecli.runtime.numpy_gate import weigh_result
from tapecli.runtime.values import NumpyArray, numpy_operand

_IN_PLACE = {"+": operator.iadd, "-": operator.isub, "*": operator.imul, "/": operator.itruediv,
             "//": operator.ifloordiv, "%": operator.imod, "**": operator.ipow, "@": operator.imatmul,
             "&": operator.iand, "|": operator.ior, "^": operator.ixor, "<<": operator.ilshift,
             ">>": operator.irshift}


def numpy_error(error: Exception) -> TdfError:
    """NumPy's exception as the program's error: its message under its class (IndexError, UFuncTypeError)."""
    found = TdfError(str(error))
    found.kind = type(error).__name__
    return found


def _key(items: list):
    """The program's index items as NumPy takes them: numbers, slices of numbers, None, Ellipsis, arrays (a
    tensor's values, read-only) and lists of indices or bools; a tuple where there are several."""
    key = [item if item is None or item is Ellipsis else
           slice(*(to_numpy(p) for p in (item.start, item.stop, item.step))) if isinstance(item, slice) else
           to_numpy(item) for item in items]
    return key[0] if len(key) == 1 else tuple(key)


def _scalar(array: NumpyArray) -> bool:
    """A NumPy scalar (the interpreter holds one as a 0-d array of its own): immutable, as NumPy's are."""
    return array.value.ndim == 0


@hook("numpy_item")
def numpy_item(array: NumpyArray, items: list) -> NumpyArray:
    """``array[items]``, NumPy's: basic indexing a view of the array, advanced indexing a copy, one element
    NumPy's scalar. What advanced indexing makes is weighed before NumPy makes it."""
    key = _key(items)
    try:
        elements = _indexed_elements(array.value.shape, key)
        if elements is not None:
            admit(elements, array.value.itemsize, "an indexed array")
        found = array.value[key]
    except (IndexError, TypeError, ValueError, OverflowError) as e:
        raise numpy_error(e) from None
    if isinstance(found, np.ndarray) and found.ndim:
        if not np.may_share_memory(found, array.value):      # (a copy: advanced indexing's)
            weigh_result(found, "x[...]")
        return NumpyArray(found)
    return NumpyArray(np.array(found))          # (a NumPy scalar: its own)


def _indexed_elements(shape: tuple, key) -> int | None:
    """How many elements advanced indexing (an array or list among the items) makes: the broadcast shape of its
    index arrays (a mask: its True count) times what the other items keep; None for basic indexing (a view)
    or a key NumPy refuses (NumPy says why)."""
    items = key if isinstance(key, tuple) else (key,)
    arrays = [np.asarray(k) for k in items if isinstance(k, (list, np.ndarray))]
    if not arrays:
        return None
    try:
        consumed = sum(0 if k is None or k is Ellipsis else np.ndim(k) if _mask(k) else 1 for k in items)
        dims, kept, advanced = iter(shape), 1, []
        for k in items:
            if k is Ellipsis:
                kept *= math.prod(next(dims) for _ in range(len(shape) - consumed))
            elif isinstance(k, slice):
                kept *= len(range(*k.indices(next(dims))))
            elif _mask(k):
                [next(dims) for _ in range(np.ndim(k))]
                advanced.append((int(np.count_nonzero(k)),))
            elif k is not None:
                next(dims)
                if isinstance(k, (list, np.ndarray)):
                    advanced.append(np.shape(k))
        kept *= math.prod(dims)
        return kept * math.prod(np.broadcast_shapes(*advanced))
    except (TypeError, ValueError, StopIteration):
        return None


def _mask(k) -> bool:
    return isinstance(k, (list, np.ndarray)) and np.asarray(k).dtype == np.bool_ and np.ndim(k) > 0


@hook("numpy_set_item")
def numpy_set_item(array: NumpyArray, items: list, value) -> None:
    """``array[items] = value``: NumPy converts and casts the value, broadcasts it and writes it in place."""
    if _scalar(array):
        raise numpy_error(TypeError(f"'numpy.{array.value.dtype.name}' object does not support item assignment"))
    key, value = _key(items), to_numpy(value)
    try:
        array.value[key] = value
    except (IndexError, TypeError, ValueError, OverflowError) as e:
        raise numpy_error(e) from None


@hook("numpy_in_place")
def numpy_in_place(op: str, array: NumpyArray, value):
    """``array op= value`` as NumPy's in-place operator: the array, changed in place by NumPy's rules (its
    casting: ``int_array += 1.5`` is NumPy's error); NotImplemented where NumPy's operator is no in-place one: a
    NumPy scalar's, or beside a TensorFlow tensor (NumPy defers to it, and the name is bound to its result)."""
    if _scalar(array) or not (numpy_operand(value) or isinstance(value, (list, str))):
        return NotImplemented
    try:
        with np.errstate(all="ignore"):       # (inf and nan as the interpreter's operators give them)
            _IN_PLACE[op](array.value, to_numpy(value))
    except (TypeError, ValueError, OverflowError, ZeroDivisionError) as e:
        raise numpy_error(e) from None
    return array
