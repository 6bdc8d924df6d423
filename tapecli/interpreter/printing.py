"""A program's values as text: ``print``, ``str``, ``repr``, f-strings, ``str.format`` and ``%s``.

A TDF program prints as conversions.format_value writes. A Python program (§11) prints as Python, TensorFlow
and NumPy print: a tensor as ``tf.Tensor(..., shape=(2,), dtype=float32)`` (its repr ``<tf.Tensor: ...>``), a
variable as ``<tf.Variable 'x:0' ...>``, ``t.shape`` as ``(2, 2)``, ``t.dtype`` as ``<dtype: 'float32'>``,
``t.numpy()`` as NumPy prints it, Python's numbers, bools and strings as Python does, and lists and dicts
with their elements' repr. ``tf.print`` writes TensorFlow's own summary of a tensor (tf_print_text)."""
from __future__ import annotations

import numpy as np

from tapecli.interpreter.conversions import container_text, format_value
from tapecli.runtime.context import current
from tapecli.runtime.specs import Shape, TypeSpec
from tapecli.runtime.values import (DictView, DType, NumpyArray, NumpyDType, PythonBool, PythonTuple, Tensor, TensorShape,
                                    UnreadVariable, Variable, dtype_name, keras_path, mirrored)


def program_str(value) -> str:
    """``str(value)``: what ``print`` shows."""
    return python_str(value) if current().settings.python_spelling else format_value(value)


def program_repr(value) -> str:
    """``repr(value)``: what ``{value!r}`` shows."""
    return python_repr(value) if current().settings.python_spelling else repr(format_value(value))


def python_format(value) -> str:
    """``format(value)`` with no spec in a Python program: an f-string's ``{value}``. A TensorFlow tensor
    formats as its NumPy value does (a scalar as the Python number, an array as NumPy prints it), a variable
    as its repr; a tracing tf.function's parameter as its placeholder, as str does."""
    if _is_array(value) and id(value) not in current().graph_arguments:
        array = numpy_of(value)
        return format(array.item()) if array.ndim == 0 else str(array)
    return python_str(value)


def python_str(value) -> str:
    if isinstance(value, str):
        return value
    if (placeholder := current().graph_arguments.get(id(value))) is not None:     # (a tracing tf.function's)
        return placeholder[0]
    if isinstance(value, TensorShape):
        return str(tuple(int(d) for d in value.value))
    if isinstance(value, Shape):
        return str(value)
    if isinstance(value, NumpyArray):
        return str(_numpy_scalar(value))
    if isinstance(value, Tensor) and _is_array(value):
        return f"tf.Tensor({_numpy_text(value, False)}, shape={_shape(value)}, dtype={dtype_name(value.dtype)})"
    if isinstance(value, NumpyDType):
        return value.name
    if isinstance(value, DType):        # (NumPy's scalar type, np.float32, prints as its class: python_text)
        return value.python_text() if hasattr(value, "python_text") else f"<dtype: '{value.name}'>"
    own = getattr(value, "own_text", None)
    if own is not None and (text := own("__str__", "__repr__")) is not None:      # (a program's class's)
        return text
    return python_repr(value)


def python_repr(value, _open: tuple = ()) -> str:
    if (placeholder := current().graph_arguments.get(id(value))) is not None:
        return placeholder[1]
    if isinstance(value, Variable) and value.keras and not isinstance(value, UnreadVariable):
        # Keras 3's Variable.__repr__ (a layer's or a metric's weight), its value as NumPy's str
        return (f"<Variable path={keras_path(value)}, shape={_shape(value)}, dtype={dtype_name(value.dtype)}, "
                f"value={np.asarray(value.read().value)}>")
    if isinstance(value, Variable):
        name = "UnreadVariable" if isinstance(value, UnreadVariable) else f"{value.tf_name or 'Variable'}:0"
        text = (f"<tf.Variable '{name}' shape={_shape(value)} "
                f"dtype={dtype_name(value.dtype)}, numpy={_numpy_text(value.read(), True)}>")
        return f"MirroredVariable:{{\n  0: {text}\n}}" if mirrored(value) else text
    if isinstance(value, TensorShape):
        return f"TensorShape({[int(d) for d in value.value]})"
    if isinstance(value, NumpyArray):
        return repr(_numpy_scalar(value))
    if isinstance(value, PythonBool) or (isinstance(value, Tensor) and value.weak):
        return repr(value.value.item() if value.ndim == 0 else value.value.tolist())
    if isinstance(value, Tensor):
        return f"<tf.Tensor: shape={_shape(value)}, dtype={dtype_name(value.dtype)}, numpy={_numpy_text(value, True)}>"
    if isinstance(value, NumpyDType):
        return f"dtype('{value.name}')"
    if isinstance(value, DType):
        return value.python_text() if hasattr(value, "python_text") else f"tf.{value.name}"
    if isinstance(value, list) and getattr(value, "type_name", None):      # a named tuple of TensorFlow's
        fields = ", ".join(f"{f}={python_repr(v, _open)}" for f, v in zip(value.fields, value))
        return f"{value.type_name}({fields})"
    text = getattr(value, "python_text", None)
    if text is not None:            # a library object's repr as TensorFlow's or Keras's class writes it
        return text()
    own = getattr(value, "own_text", None)
    if own is not None and (text := own("__repr__")) is not None:      # (a program's class's)
        return text
    if isinstance(value, DictView):
        return f"{value.view}({container_text(list(value), python_repr, repr, _open)})"
    if isinstance(value, (list, dict)):
        return container_text(value, python_repr, repr, _open)
    if isinstance(value, TypeSpec):     # (a dataset's element_spec: TensorSpec(shape=(3,), dtype=tf.float64, ...))
        return repr(value)
    return repr(value) if isinstance(value, (str, bytes)) or value is Ellipsis else format_value(value)


def _is_array(value) -> bool:
    """Whether ``value`` is a TensorFlow tensor or a NumPy array (not a Python number, bool or shape)."""
    if isinstance(value, Variable):
        return False
    return isinstance(value, Tensor) and not value.weak and value.__class__ in (Tensor, NumpyArray)


def numpy_of(t: Tensor | Variable) -> np.ndarray:
    return np.asarray((t.read() if isinstance(t, Variable) else t).value)


def _numpy_scalar(t: Tensor):
    """The NumPy value of a tensor: a NumPy scalar for a 0-d one, as ``t.numpy()`` returns."""
    array = numpy_of(t)
    return array[()] if array.ndim == 0 else array


def _numpy_text(t: Tensor, is_repr: bool) -> str:
    """TensorFlow's text of a tensor's values (``numpy_text``): NumPy's, a scalar's repr as the Python number,
    on a line of its own when it takes several."""
    value = _numpy_scalar(t)
    if is_repr and isinstance(value, np.generic):       # (a string tensor's scalar is bytes already)
        value = value.item()
    text = repr(value) if is_repr else str(value)
    return "\n" + text if "\n" in text else text


def _shape(t: Tensor | Variable) -> str:
    declared = getattr(t, "declared", None)         # (a variable's partly known shape)
    return str(tuple(int(d) for d in t.shape)) if declared is None else str(declared)


# ------------------------------------------------------------------ tf.print

def tf_print_text(value, summarize: int = 3) -> str:
    """One of tf.print's inputs as TensorFlow prints it (logging_ops.print_v2): a string as it is, a tensor as its
    summary (tf_summary_text), anything else as ``pprint.pformat`` writes it, with each tensor in it summarized
    where the placeholder TensorFlow puts in its place stands (a tuple with ( ), a dict's keys sorted, a Python
    number, string or NumPy array as its repr, a long structure over several lines, a sparse tensor as its
    quoted ``SparseTensor(indices=..., values=..., shape=...)``)."""
    if isinstance(value, str):
        return value
    if _printed_as_tensor(value):
        return tf_summary_text(value, summarize)
    import pprint       # (here: pprint imports dataclasses and copy, which a small run does not)
    texts: list[str] = []
    free = pprint.pformat(_print_structure(value, "", []))
    placeholder = _placeholder_for(free)
    template = pprint.pformat(_print_structure(value, placeholder, texts))
    pieces = template.replace("'" + placeholder + "'", placeholder).split(placeholder)
    summaries = [tf_summary_text(t, summarize) for t in texts]
    return pieces[0] + "".join(text + piece for text, piece in zip(summaries, pieces[1:]))


def tf_summary_text(value, summarize: int = 3) -> str:
    """A tensor as TensorFlow's string_format summarizes it (no padding, floats to the digits that tell them apart,
    bools as 1 and 0, ``...`` past ``summarize`` items a dimension, all with -1); a ragged tensor its rows."""
    if isinstance(value, Variable):
        value = value.read()
    own = getattr(value, "tf_print_text", None)        # (a tf.RaggedTensor's: its rows, as TensorFlow's)
    if own is not None:
        return own(summarize)
    return _summary(numpy_of(value), summarize, 1)


def _printed_as_tensor(value) -> bool:
    """Whether tf.print takes ``value`` as a tensor (tensor_util.is_tf_type): a tensor, a variable, a ragged
    tensor; not a Python number or bool, a NumPy array, a shape."""
    if isinstance(value, Variable):
        return True
    if isinstance(value, Tensor):
        return _is_array(value) and value.__class__ is Tensor
    return getattr(value, "tf_print_text", None) is not None


class _Repr:
    """A leaf of a structure tf.print formats that pprint writes as the repr tapecli gives it."""
    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    def __repr__(self):
        return self.text


def _placeholder_for(free: str) -> str:
    """TensorFlow's placeholder (logging_ops._generate_placeholder_string): ``{}``, digits added while it is in
    the structure's text without its tensors."""
    import random
    placeholder = "{}"
    rng = random.Random(5)
    while placeholder in free:
        placeholder += str(rng.randint(0, 9))
    return placeholder


def _print_structure(value, placeholder: str, tensors: list):
    """``value`` as the Python structure tf.print's template formats (nest.pack_sequence_as of its leaves): each
    tensor its ``placeholder`` (appended to ``tensors``), a sparse tensor's three as one string, Python's values as
    themselves and any other as its repr."""
    if _printed_as_tensor(value):
        tensors.append(value)
        return placeholder
    parts = getattr(value, "tf_print_tensors", None)       # (a tf.SparseTensor: indices, values, dense_shape)
    if parts is not None:
        tensors.extend(parts())
        return f"SparseTensor(indices={placeholder}, values={placeholder}, shape={placeholder})"
    if isinstance(value, PythonBool) or (value.__class__ is Tensor and value.weak):
        return value.value.item() if value.ndim == 0 else value.value.tolist()
    if isinstance(value, (str, bytes)) or value is None:
        return value
    if value.__class__ is PythonTuple:
        return tuple(_print_structure(v, placeholder, tensors) for v in value)
    if value.__class__ is list:
        return [_print_structure(v, placeholder, tensors) for v in value]
    if value.__class__ is dict:
        try:
            keys = sorted(value, key=_print_key)
        except TypeError:
            keys = list(value)
        return {_print_key(k): _print_structure(value[k], placeholder, tensors) for k in keys}
    return _Repr(python_repr(value))


def _print_key(key):
    """A dict's key as Python holds it (a Python number the interpreter holds as a literal tensor)."""
    if isinstance(key, PythonBool) or (key.__class__ is Tensor and key.weak and key.ndim == 0):
        return key.value.item()
    return key


def _summary(array: np.ndarray, summarize: int, indent: int) -> str:
    if np.ndim(array) == 0:         # (an object array's items are its objects: a string tensor's bytes)
        return _element(array[()] if isinstance(array, np.ndarray) else array)
    n = len(array)
    if 0 <= summarize < n and n > 2 * summarize:
        parts = [*(_summary(a, summarize, indent + 1) for a in array[:summarize]), "...",
                 *(_summary(a, summarize, indent + 1) for a in array[n - summarize:])]
    else:
        parts = [_summary(a, summarize, indent + 1) for a in array]
    separator = " " if array.ndim == 1 else "\n" * (array.ndim - 1) + " " * indent
    return "[" + separator.join(parts) + "]"


def _c_escaped(text: bytes) -> str:
    """TensorFlow's Utf8SafeCEscape: quotes, backslashes and the usual control characters escaped, other
    unprintable ASCII in octal, the rest (UTF-8 included) as it is."""
    out = bytearray()
    for b in text:
        if b in _ESCAPES:
            out += _ESCAPES[b]
        elif b < 0x20 or b == 0x7F:
            out += b"\\%03o" % b
        else:
            out.append(b)
    return out.decode("utf-8", "replace")


_ESCAPES = {ord("\n"): b"\\n", ord("\r"): b"\\r", ord("\t"): b"\\t", ord('"'): b'\\"', ord("'"): b"\\'",
            ord("\\"): b"\\\\"}


def _element(x) -> str:
    """One element as TensorFlow's C++ writes it: a float with the fewest of 6 or 9 (float32), 15 or 17
    (float64) significant digits that reads back as itself; a half float (float16, bfloat16) as the float32
    it widens to (its PrintOneElement prints ``static_cast<float>``)."""
    if isinstance(x, np.bool_):
        return "1" if x else "0"
    if isinstance(x, bytes):
        return '"' + _c_escaped(x) + '"'
    if isinstance(x, np.generic) and x.dtype.itemsize == 2 and x.dtype.kind in "fV":
        x = np.float32(x)
    if isinstance(x, np.floating):
        short, full = (6, 9) if x.dtype == np.float32 else (15, 17)
        text = f"{float(x):.{short}g}"
        return text if np.isnan(x) or x.dtype.type(text) == x else f"{float(x):.{full}g}"
    return str(x)
