"""Program values as JSON (docs/spec/CLI.md): tensors as nested lists of shortest round-tripping decimals."""
from __future__ import annotations

import math

import numpy as np

from tapecli.errors import LimitError
from tapecli.interpreter.conversions import MAX_PRINT_DEPTH, int_fits_text, long_int_error
from tapecli.ops import materialize
from tapecli.runtime.limits import admit
from tapecli.runtime.values import DType, Tensor, Variable

# A number in a JSON document costs about this much at its peak (a Python float, its slot in a list, its
# text); a value is weighed against --max-elements and the memory cap before it is converted.
BYTES_PER_NUMBER = 48
_CHUNK = 1 << 16


def _float_items(arr: np.ndarray) -> list:
    """Shortest decimals that read back to the same value in the array's dtype (in chunks: the text
    of a whole large array at once would take 128 bytes an element)."""
    out = []
    flat = arr.ravel()
    for start in range(0, flat.size, _CHUNK):
        chunk = flat[start:start + _CHUNK]
        if np.isfinite(chunk).all():
            out.extend(map(float, chunk.astype(str)))
            continue
        for text, v in zip(chunk.astype(str), chunk):
            if np.isfinite(v):
                out.append(float(text))
            else:
                out.append("NaN" if np.isnan(v) else ("Infinity" if v > 0 else "-Infinity"))
    return out


def tensor_json(arr: np.ndarray):
    if arr.dtype.hasobject or arr.dtype.kind == "S":         # a string tensor (or NumPy's bytes): its strings
        return np.array([_text_json(v) for v in arr.reshape(-1)], dtype=object).reshape(arr.shape).tolist()
    if arr.dtype.kind == "f":
        flat = _float_items(arr)
        if arr.ndim == 0:
            return flat[0]
        return np.array(flat, dtype=object).reshape(arr.shape).tolist()
    return arr.tolist()


def _text_json(text: bytes) -> str:
    """A string tensor's element (or bytes) as a JSON string: its UTF-8 text, a byte that is not as ``\\xNN``."""
    return text.decode("utf-8", "backslashreplace")


def to_json(value, name: str | None = None):
    """A program value as JSON data; a list or dict that holds the same object twice converts it once."""
    numbers = json_numbers(value, {})
    if numbers > 1:
        admit(numbers, BYTES_PER_NUMBER, f"the JSON of {name}" if name else "the value's JSON")
    try:
        return _to_json(value, {})
    except LimitError as e:
        raise e.about(name) from None


def json_numbers(value, memo: dict, depth: int = 0) -> int:
    """How many numbers the JSON of ``value`` writes, each shared part counted where it appears."""
    if isinstance(value, (Tensor, Variable, np.ndarray)):
        shape = tuple(value.shape)
        # (an empty tensor writes its lists: one per index of the dimensions before its first zero)
        return int(np.prod(shape)) if 0 not in shape else math.prod(shape[:shape.index(0)])
    if isinstance(value, (list, tuple, dict)):
        key = id(value)
        if key not in memo:
            if depth >= MAX_PRINT_DEPTH:
                raise LimitError(f"a list or dict nested more than {MAX_PRINT_DEPTH} deep cannot be written as JSON")
            memo[key] = 0                # inside itself: its JSON writes "[...]" there (_to_json)
            memo[key] = sum(json_numbers(v, memo, depth + 1)
                            for v in (value.values() if isinstance(value, dict) else value))
        return memo[key]
    return 1


def _to_json(value, memo: dict, depth: int = 0):
    if isinstance(value, (Tensor, Variable, list, tuple, dict)):
        key = id(value)
        if key not in memo:
            if depth >= MAX_PRINT_DEPTH:
                raise LimitError(f"a list or dict nested more than {MAX_PRINT_DEPTH} deep cannot be written as JSON")
            memo[key] = _INSIDE_ITSELF[isinstance(value, dict)]
            memo[key] = _convert(value, memo, depth)
        return memo[key]
    if isinstance(value, DType):
        return value.name
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if value is None or isinstance(value, (str, bool, float)):
        return value
    if isinstance(value, bytes):
        return _text_json(value)
    if isinstance(value, int):
        if not int_fits_text(value):        # (an exact Python integer: JSON writes its decimal digits)
            raise long_int_error()
        return value
    if isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind in "biuf":
        return tensor_json(np.asarray(value))
    if isinstance(value, (np.ndarray, np.generic)):
        return _to_json(value.tolist(), memo, depth)
    return None


# A list or dict inside itself is written as Python prints it there.
_INSIDE_ITSELF = {False: "[...]", True: "{...}"}


def _convert(value, memo: dict, depth: int):
    if isinstance(value, Variable):
        return tensor_json(value.read().value)
    if isinstance(value, Tensor):
        return tensor_json(value.value if not value.weak else _weak_default(value))
    if isinstance(value, (list, tuple)):
        return [_to_json(v, memo, depth + 1) for v in value]
    return {k: _to_json(v, memo, depth + 1) for k, v in value.items()}


def _weak_default(t: Tensor) -> np.ndarray:
    return materialize(t).value
