"""What a Python program's operators, text and methods would make, weighed before CPython makes it (against
--max-elements and the memory cap, by the real size: a string's characters take 1, 2 or 4 bytes as its widest
does, a list a pointer per item, each new string of a split its own object). guard.py routes the operators,
f-strings and the calls of ``str``/``repr``/``format`` here; sandbox.py the methods."""
from __future__ import annotations

import array
import operator
import re
import sys

from tapecli.runtime.limits import LIST_SLOT, STRING_OBJECT, admit, admit_bytes, admit_pieces, char_bytes
from tapecli.runtime.specs import Shape

_OPERATORS = {
    "Add": operator.add, "Sub": operator.sub, "Mult": operator.mul, "MatMult": operator.matmul,
    "Div": operator.truediv, "FloorDiv": operator.floordiv, "Mod": operator.mod, "Pow": operator.pow,
    "LShift": operator.lshift, "RShift": operator.rshift, "BitOr": operator.or_, "BitXor": operator.xor,
    "BitAnd": operator.and_,
    "Add=": operator.iadd, "Sub=": operator.isub, "Mult=": operator.imul, "MatMult=": operator.imatmul,
    "Div=": operator.itruediv, "FloorDiv=": operator.ifloordiv, "Mod=": operator.imod, "Pow=": operator.ipow,
    "LShift=": operator.ilshift, "RShift=": operator.irshift, "BitOr=": operator.ior, "BitXor=": operator.ixor,
    "BitAnd=": operator.iand,
}
_NUMBERS = frozenset({int, float, bool, complex})
# (a set, not a tuple: a tuple's ``in`` compares, and a comparison at the recursion limit would make CPython's
# RecursionError "... in comparison" where the program's own recursion gives CPython's plain message)
_INTEGER_GROWERS = frozenset({"Pow", "LShift", "Pow=", "LShift="})
_INT_DIGIT_BITS = sys.int_info.bits_per_digit
_WORD = {str: "string", list: "list", tuple: "tuple", bytes: "bytes", bytearray: "bytearray", array.array: "array"}


def _kind(value) -> type | None:
    """The sequence kind ``value`` is weighed as (an array module's array, the run's subclass of it, too)."""
    return array.array if isinstance(value, array.array) else (type(value) if type(value) in _WORD else None)



def binary(op: str, left, right):
    """``left op right`` (``op`` an ``ast`` operator's name, ``=`` after it for the in-place form)."""
    if type(left) in _NUMBERS and type(right) in _NUMBERS:
        if op in _INTEGER_GROWERS:
            _weigh_integer(op, left, right)
        return _OPERATORS[op](left, right)
    kind = op.rstrip("=")
    if kind == "Mult":
        _weigh_repeat(left, right) or _weigh_repeat(right, left)
    elif kind == "Add":
        _weigh_concatenation(left, right)
    elif kind == "Mod" and isinstance(left, str):
        if isinstance(right, Shape):        # (TensorFlow's TensorShape is no tuple: one value to format)
            right = (right,)
        _weigh_percent(left, right)
    if "numpy" in sys.modules:
        _weigh_arrays(kind, left, right)
    return _OPERATORS[op](left, right)


def _weigh_integer(op, left, right) -> None:
    if type(left) is int and type(right) is int and right > 0 and left:
        bits = right * left.bit_length() if op[:3] == "Pow" else right + left.bit_length()
        if bits > _INT_DIGIT_BITS:      # as CPython stores it: one 4-byte element per 30-bit digit
            admit(bits // _INT_DIGIT_BITS + 1, 4, f"the integer {'**' if op[:3] == 'Pow' else '<<'}'s result")


def _weigh_repeat(seq, count) -> bool:
    kind = _kind(seq)
    if kind is not None and type(count) is int and count > 1:
        length = len(seq) * count
        admit_bytes(length, length * _item_bytes(seq, kind), f"a repeated {_WORD[kind]}")
        return True
    return False


def _weigh_concatenation(left, right) -> None:
    kind = _kind(left)
    if kind is not None and _kind(right) is kind:
        length = len(left) + len(right)
        if length > 1 << 16:
            admit_bytes(length, length * _item_bytes(left, kind, right), f"a {_WORD[kind]}")


def _item_bytes(seq, kind, other="") -> int:
    if kind is str:
        return char_bytes(seq, other)
    return LIST_SLOT if kind in (list, tuple) else (seq.itemsize if kind is array.array else 1)


# %-formatting: a field's width and precision, each a number or * (taken from the arguments)
_PERCENT = re.compile(r"%(?:\([^)]*\))?[-+ #0]*(\*|\d+)?(?:\.(\*|\d+))?[hlL]?([a-zA-Z%])")


def _weigh_percent(template: str, args) -> None:
    values = list(args) if isinstance(args, tuple) else [args]
    total, widest = len(template), char_bytes(template)
    for match in _PERCENT.finditer(template):
        width, precision, conversion = match.groups()
        sizes = []
        for part in (width, precision):
            if part == "*":
                sizes.append(values.pop(0) if values and isinstance(values[0], int) else 0)
            elif part:
                sizes.append(int(part))
        value = values.pop(0) if values and conversion != "%" else None
        if conversion == "c" and isinstance(value, int) and value > 0xFFFF:
            widest = 4
        if isinstance(value, str):
            total += len(value)
            widest = max(widest, char_bytes(value))
        total += max(sizes, default=0)
    if total > 1 << 16:
        admit_bytes(total, total * widest, "a string formatted with '%'")


# a format spec's width: [[fill]align][sign][z][#][0][width][,_][.precision][type]
_SPEC_WIDTH = re.compile(r"^(?:.?[<>=^])?[-+ ]?z?#?0?(\d*)[,_]?(?:\.(\d+))?")


def field(value, conversion: int, spec: str | None):
    """One ``{value!conversion:spec}`` of an f-string, weighed by its width (and its fill character's)."""
    if conversion == ord("r"):
        value = repr_of(value)
    elif conversion == ord("s"):
        value = str_of(value)
    elif conversion == ord("a"):
        weigh_text(value, "an f-string")
        value = ascii(value)
    else:
        weigh_text(value, "an f-string")
    if spec:
        weigh_spec(spec, "a field formatted with")
    return format(value, spec or "")


def weigh_spec(spec: str, words: str) -> None:
    match = _SPEC_WIDTH.match(spec)
    width = max(int(match.group(1) or 0), int(match.group(2) or 0)) if match else 0
    if width > 1 << 16:
        admit_bytes(width, width * char_bytes(spec), f"{words} '{spec}'")


def joined(*parts: str) -> str:
    """An f-string's parts joined, weighed first."""
    total = sum(len(p) for p in parts)
    if total > 1 << 16:
        admit_bytes(total, total * char_bytes(*parts), "an f-string")
    return "".join(parts)


# ---- the text of containers (str, repr, print, f-strings of a list or dict)
_TEXT_VISITS = 1 << 20      # items walked to weigh a container's text before it is made


def weigh_text(value, words: str) -> None:
    if type(value) in (list, tuple, dict, set, frozenset):
        size, width = _text_size(value)
        if size > 1 << 16:
            admit_bytes(size, size * width, f"the text of a {type(value).__name__}" if words is None else
                        f"the text of a {type(value).__name__} ({words})")


def str_of(value) -> str:
    weigh_text(value, None)
    return str(value)


def repr_of(value) -> str:
    weigh_text(value, None)
    return repr(value)


def _text_size(value) -> tuple[int, int]:
    """About how many characters the text of ``value`` has, and the widest character's bytes (each string
    leaf's quotes and separators counted; a container past _TEXT_VISITS items is weighed from those it saw)."""
    size, width, seen, visits = 0, 1, set(), 0
    stack = [value]
    while stack:
        item = stack.pop()
        visits += 1
        if visits > _TEXT_VISITS:
            size = size * 2      # the rest, at least as large again: weighed as such
            break
        kind = type(item)
        if kind is str:
            size += len(item) + 4
            if not item.isascii():
                width = max(width, char_bytes(item))
        elif kind in (list, tuple, set, frozenset):
            if id(item) in seen:
                size += 5
                continue
            seen.add(id(item))
            size += 2
            stack.extend(item)
        elif kind is dict:
            if id(item) in seen:
                size += 5
                continue
            seen.add(id(item))
            size += 2
            stack.extend(item.keys())
            stack.extend(item.values())
        else:
            size += 24
    return size, width


# ---- methods that cut a string into new strings
def weigh_split(text: str, name: str, sep=None) -> None:
    if len(text) < 1 << 16:
        return
    if name == "splitlines":
        count = text.count("\n") + text.count("\r") + 1
    elif isinstance(sep, str) and sep:
        count = text.count(sep) + 1
    else:
        count = len(text) // 2 + 1
    admit_pieces(count, text, f"{name}()")


def weigh_characters(text: str, words: str) -> None:
    """A list of a string's characters (list(s), sorted(s), a comprehension over s): a slot each, and an
    object each for characters past Latin-1 (CPython keeps the first 256 as singletons)."""
    if len(text) > 1 << 16:
        each = LIST_SLOT + (0 if char_bytes(text) == 1 else STRING_OBJECT + 4)
        admit_bytes(len(text), len(text) * each, words)


def _weigh_arrays(kind, left, right) -> None:
    import numpy as np
    if isinstance(left, np.ndarray) or isinstance(right, np.ndarray):
        try:
            shape = np.broadcast_shapes(np.shape(left), np.shape(right)) if kind != "MatMult" else None
            dtype = np.result_type(left, right)
        except (ValueError, TypeError):
            return            # NumPy raises its own error
        if shape is not None:
            admit(_product(shape), dtype.itemsize, "the array result")


def _product(shape) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n
