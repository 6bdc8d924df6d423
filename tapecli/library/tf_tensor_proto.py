"""tf.make_tensor_proto and tf.make_ndarray: a tensor's values as TensorFlow's TensorProto message, in memory, and
back to a NumPy array, as tensor_util.py builds and reads them: Python floats as float32 and ints as int32 (NumPy's
own arrays keep their dtype), more than one number of a numeric dtype as raw little-endian ``tensor_content``, else
one ``*_val`` entry per value (or one value a larger shape repeats). The message prints in protobuf's text format;
of its fields a program reads ``dtype`` (the enum), ``tensor_shape.dim[i].size`` and ``tensor_content``."""
from __future__ import annotations

import math

import numpy as np

from tapecli import ops
from tapecli.errors import TdfTypeError, TdfValueError
from tapecli.interpreter.conversions import to_int, truth
from tapecli.interpreter.objects import ProgramObject
from tapecli.interpreter.registry import builtin
from tapecli.library.core import DTYPE_ENUMS, to_dtype, to_shape
from tapecli.runtime.values import NumpyArray, PythonBool, Tensor, Variable, dtype_name

_ENUMS = {name: number for number, name in DTYPE_ENUMS.items()}
_PROTO_NAMES = {"float32": "DT_FLOAT", "float64": "DT_DOUBLE", "int32": "DT_INT32", "uint8": "DT_UINT8",
                "int16": "DT_INT16", "int8": "DT_INT8", "string": "DT_STRING", "int64": "DT_INT64", "bool": "DT_BOOL",
                "uint16": "DT_UINT16", "float16": "DT_HALF", "uint32": "DT_UINT32", "uint64": "DT_UINT64"}
# The repeated field each dtype's values go to when they are not tensor_content (tensor_util's append functions).
_FIELDS = {"float32": "float_val", "float64": "double_val", "float16": "half_val", "int32": "int_val",
           "int16": "int_val", "int8": "int_val", "uint8": "int_val", "uint16": "int_val", "int64": "int64_val",
           "uint32": "uint32_val", "uint64": "uint64_val", "bool": "bool_val", "string": "string_val"}


class TensorProto(ProgramObject):
    """A TensorProto: its dtype, shape, and either its raw content or its listed values."""

    kind_word = "a TensorProto"

    def __init__(self, dtype: np.dtype, shape: tuple, content: bytes, listed: np.ndarray):
        self.dtype, self.shape, self.content, self.listed = dtype, shape, content, listed

    def get_attribute(self, interp, attr, node):
        if attr == "dtype":
            return Tensor(np.array(_ENUMS[dtype_name(self.dtype)], dtype=np.int64), weak=True)
        if attr == "tensor_shape":
            return _Shape(self.shape)
        if attr == "tensor_content":
            return self.content
        raise TdfTypeError(f"tapecli's TensorProto has dtype, tensor_shape and tensor_content, not {attr}")

    @staticmethod
    def python_class() -> str:
        return "tensorflow.core.framework.tensor_pb2.TensorProto"

    def python_text(self) -> str:
        """Protobuf's text format, as ``print(proto)`` writes it."""
        lines = [f"dtype: {_PROTO_NAMES[dtype_name(self.dtype)]}", "tensor_shape {"]
        for n in self.shape:
            lines += ["  dim {", f"    size: {n}", "  }"]
        lines.append("}")
        if self.content:
            lines.append(f'tensor_content: "{_escaped(self.content)}"')
        field = _FIELDS[dtype_name(self.dtype)]
        lines += [f"{field}: {_text(v, self.dtype)}" for v in self.listed]
        return "\n".join(lines) + "\n"


class _Shape(ProgramObject):
    """A TensorShapeProto: ``dim``, each with its ``size``."""

    kind_word = "a TensorShapeProto"

    def __init__(self, shape: tuple):
        self.shape = shape

    def get_attribute(self, interp, attr, node):
        if attr != "dim":
            raise TdfTypeError(f"tapecli's TensorShapeProto has dim, not {attr}")
        return [_Dim(n) for n in self.shape]


class _Dim(ProgramObject):
    kind_word = "a TensorShapeProto.Dim"

    def __init__(self, size: int):
        self.size = size

    def get_attribute(self, interp, attr, node):
        if attr != "size":
            raise TdfTypeError(f"tapecli's TensorShapeProto.Dim has size, not {attr}")
        return Tensor(np.array(self.size, dtype=np.int64), weak=True)


def _escaped(data: bytes) -> str:
    """Protobuf's CEscape: \\n \\r \\t \\" \\' \\\\ by name, other bytes outside printable ASCII in octal."""
    named = {10: "\\n", 13: "\\r", 9: "\\t", 34: '\\"', 39: "\\'", 92: "\\\\"}
    return "".join(named.get(b) or (chr(b) if 32 <= b < 127 else f"\\{b:03o}") for b in data)


def _text(value, dtype: np.dtype) -> str:
    """A listed value as protobuf prints it: floats in the fewest of 6 (15 for doubles) or 9 (17) significant
    digits that read back, a half's bits as an int, bools as true/false, strings escaped."""
    if dtype.hasobject:
        return f'"{_escaped(value)}"'
    if dtype == np.bool_:
        return "true" if value else "false"
    if dtype == np.float16:
        return str(int(np.asarray(value, np.float16).view(np.uint16)))
    if dtype.kind == "f":
        if math.isnan(value) or math.isinf(value):
            return str(float(value))        # (nan, inf, -inf)
        short, long = (6, 9) if dtype == np.float32 else (15, 17)
        text = f"{float(value):.{short}g}"
        return text if dtype.type(float(text)) == value else f"{float(value):.{long}g}"
    return str(int(value))


def _values(values, dtype: np.dtype | None) -> np.ndarray:
    """tensor_util's nparray: a NumPy array (or tensor) as it is (cast to ``dtype``); Python numbers and lists with
    NumPy's dtypes, a float64 one as float32 and an int64 one that fits as int32 where no dtype is given."""
    if isinstance(values, (Tensor, Variable)) and not getattr(values, "weak", False) \
            and values.__class__ is not PythonBool:
        array = np.asarray(ops.to_tensor(values).value)
        return array.astype(dtype) if dtype is not None else array
    if values is None:
        raise TdfValueError("None values not supported.")
    plain = values.value if isinstance(values, Tensor) else _plain(values)
    array = np.array(plain, dtype=dtype)
    if dtype is None and array.dtype == np.float64:
        return array.astype(np.float32)
    if dtype is None and array.dtype == np.int64 and np.array_equal(array.astype(np.int32), array):
        return array.astype(np.int32)
    return array


def _plain(value):
    """A program's list (of numbers, strings, tensors) as Python's values."""
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, (Tensor, Variable)):
        return np.asarray(ops.to_tensor(value).value)
    return value


@builtin()
def make_tensor_proto(values, dtype=None, shape=None, verify_shape=False, allow_broadcast=False):
    """The TensorProto of ``values`` (of ``dtype``; of ``shape``, which a single value fills), as
    tensor_util.make_tensor_proto builds it."""
    if isinstance(values, TensorProto):
        return values
    if truth(allow_broadcast) and truth(verify_shape):
        raise TdfValueError("allow_broadcast and verify_shape are not both allowed.")
    want = None if dtype is None else to_dtype(dtype)
    array = _values(values, want)
    if array.dtype.kind in "US":
        array = np.array([v.encode() if isinstance(v, str) else v for v in array.ravel()], dtype=object).reshape(
            array.shape)
    if dtype_name(array.dtype) not in _FIELDS:
        raise TdfTypeError(f"Unrecognized data type: {array.dtype}.")
    dims = tuple(array.shape) if shape is None else tuple(to_int(d, "a dimension") for d in
                                                           (shape if isinstance(shape, (list, tuple)) else
                                                            to_shape(shape)))
    size = math.prod(dims)
    if shape is not None and truth(verify_shape) and array.shape != dims:
        raise TdfTypeError(f"Expected Tensor's shape: {dims}, but got {array.shape}.")
    if array.size > size and not truth(allow_broadcast):
        raise TdfValueError(f"Too many elements provided. Takes at most {size:d}, but got {array.size:d}.")
    if array.size == size and size > 1 and array.dtype.kind in "iuf":
        return TensorProto(array.dtype, dims, array.astype(array.dtype.newbyteorder("<")).tobytes(), np.zeros(0))
    return TensorProto(array.dtype, dims, b"", array.ravel())


@builtin()
def make_ndarray(tensor):
    """The NumPy array a TensorProto holds (its last listed value repeated to fill its shape)."""
    if not isinstance(tensor, TensorProto):
        raise TdfTypeError("make_ndarray takes a TensorProto (tf.make_tensor_proto's)")
    size = math.prod(tensor.shape)
    if tensor.content:
        return NumpyArray(np.frombuffer(tensor.content, dtype=tensor.dtype.newbyteorder("<")).astype(
            tensor.dtype).reshape(tensor.shape))
    values = tensor.listed
    if values.size == 0:
        return NumpyArray(np.zeros(tensor.shape, dtype=tensor.dtype))
    if values.size != size:
        values = np.pad(values, (0, size - values.size), "edge")
    return NumpyArray(values.astype(tensor.dtype).reshape(tensor.shape))

