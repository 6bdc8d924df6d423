"""A program's values as Python sees them: truth (``if``, ``while``, ``and``), integers and numbers (arguments),
and text (``print``, f-strings)."""
from __future__ import annotations

import numpy as np

from tapecli.errors import LimitError, TdfTypeError, TdfValueError
from tapecli.runtime.limits import admit_text
from tapecli.runtime.tape import as_tensor, type_word
from tapecli.runtime.values import PythonTuple, Tensor, Variable
from tapecli.runtime import spelling


def python_number(value):
    """A library's Python result as the interpreter holds a Python value: a float or an int a weak scalar (a
    Python number), a bool a Python bool; lists, tuples and dicts item by item; anything else as it is."""
    kind = value.__class__
    if kind is float or kind is int:
        return Tensor(np.array(value), weak=True)
    if kind is bool:
        from tapecli.runtime.values import PythonBool
        return PythonBool(np.array(value))
    if kind is list or kind is tuple or kind is PythonTuple:
        return kind(python_number(v) for v in value)
    if kind is dict:
        return {k: python_number(v) for k, v in value.items()}
    return value


def truth(value) -> bool:
    if value.__class__ is Tensor and value.value.size == 1:     # the common case, first
        return bool(value.value.reshape(()))
    if isinstance(value, Variable):
        value = value.read()
    if isinstance(value, Tensor):
        if value.size != 1:
            raise TdfValueError(f"the truth value of a tensor of shape {list(value.shape)} is ambiguous",   # (as NumPy's)
                               hint=spelling.either("use all(...) or any(...)", "use tf.reduce_all(...) or tf.reduce_any(...)"))
        return bool(value.value.reshape(()))
    if value is None or isinstance(value, bool):
        return bool(value)
    if isinstance(value, (list, dict, str)):
        return len(value) > 0
    return True


def to_int(value, what="this argument") -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, (Tensor, Variable)):
        t = as_tensor(value)
        if t.size == 1 and (t.dtype.kind in "iu" or (t.dtype.kind == "f" and float(t.value) == int(t.value))):
            return int(t.value.reshape(()))
    raise TdfTypeError(f"{what} must be an integer, got {type_word(value)}")


def to_float(value, what="this argument") -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, (Tensor, Variable)):
        t = as_tensor(value)
        if t.size == 1 and t.dtype.kind in "iuf":
            return float(t.value.reshape(()))
    raise TdfTypeError(f"{what} must be a number, got {type_word(value)}")


# Deeper than this, printing a nested list (or writing it as JSON, at the default recursion limit) would
# recurse past what the stack holds (Python's own repr raises RecursionError): tapecli says so instead.
MAX_PRINT_DEPTH = 256


_PYTHON_VALUES = (bool, int, float, complex, tuple, set, frozenset, bytes, np.ndarray, np.generic)


def long_int_error(holder: str = "an integer") -> LimitError:
    """What writing an integer of more decimal digits than CPython writes as text raises (its limit,
    ``sys.get_int_max_str_digits()``, is 4,300 digits by default). A Python program may hold one (``0x`` and
    3,600 f's; ``10 ** 5000``): CPython's ``str`` refuses it, and so does tapecli's output."""
    import sys
    return LimitError(f"{holder} of more than {sys.get_int_max_str_digits():,} decimal digits cannot be written as "
                      "text (Python's limit)", hint="hex(n) writes such an integer whole")


def int_fits_text(value: int) -> bool:
    """Whether CPython writes ``value`` in decimal (long_int_error)."""
    import sys
    limit = sys.get_int_max_str_digits()
    if not limit or value.bit_length() <= 3.3 * limit:        # (fewer digits than the limit: 3.32 bits a digit)
        return True
    try:
        str(value)
    except ValueError:
        return False
    return True


def python_text(value) -> str:
    """A Python value's text as CPython shows it (``repr``; ``str`` of an array); one holding an integer too
    long to write is a LimitError (long_int_error)."""
    try:
        return str(value) if isinstance(value, (np.ndarray, np.generic)) else repr(value)
    except ValueError as e:
        if "integer string conversion" not in str(e):
            raise
        holder = "an array" if isinstance(value, np.ndarray) else f"a {type(value).__name__}"
        raise long_int_error("an integer" if isinstance(value, int) else f"{holder} holding an integer") from None


def format_value(value, _open: tuple = ()) -> str:
    """A TDF program's value as print shows it (printing.py: a Python program's)."""
    if isinstance(value, Variable):
        return f"<variable {value.name}: {format_value(value.read())}>"
    if isinstance(value, Tensor):
        return np.array2string(value.value, separator=", ") if value.ndim else str(value.value.item())
    if isinstance(value, (list, dict)):
        return container_text(value, format_value, lambda key: f'"{key}"', _open)
    if value is None:
        return "None"
    if isinstance(value, str):
        return value
    if isinstance(value, _PYTHON_VALUES):        # a Python program's own values (execution/): as CPython shows them
        return python_text(value)
    word = type_word(value)
    return f"<{word.split(' ', 1)[1] if word.startswith(('a ', 'an ')) else word}>"


def container_text(value: list | dict, element, key, _open: tuple) -> str:
    """A list's or dict's text: ``element(item, open)`` of each item, ``key(k)`` of each key. A list or dict
    inside itself prints as Python prints it (``[[...]]``); nesting past MAX_PRINT_DEPTH is a LimitError,
    before Python's own stack runs out."""
    if id(value) in _open:
        return "[...]" if isinstance(value, list) else "{...}"
    if len(_open) >= MAX_PRINT_DEPTH:
        raise LimitError(f"a list or dict nested more than {MAX_PRINT_DEPTH} deep cannot be printed")
    inner = (*_open, id(value))
    if isinstance(value, list):
        texts, ends = [element(v, inner) for v in value], "()" if value.__class__ is PythonTuple else "[]"
        if len(texts) == 1 and ends == "()":
            texts[0] += ","
    else:
        texts, ends = [f"{key(k)}: {element(v, inner)}" for k, v in value.items()], "{}"
    texts = texts or [""]
    texts[0] = ends[0] + texts[0]
    texts[-1] = texts[-1] + ends[1]
    return joined(", ", texts, f"the text of {type_word(value)}")


def joined(sep: str, parts: list, what: str) -> str:
    """``sep.join(parts)`` for strings, weighed before it is built."""
    admit_text(sum(map(len, parts)) + len(sep) * max(len(parts) - 1, 0), what, sep, *parts)
    return sep.join(parts)
