"""tf.raw_ops: TensorFlow's generated op wrappers, for the ops tapecli implements. Each raw op takes keyword
arguments only, named as TensorFlow's wrapper names them (the op's inputs, then its attrs, then ``name``), and calls
the library function TensorFlow's own Python API calls that op from, so its values and gradients are that function's.
An attr is converted as TensorFlow's wrapper converts it (a bool must be a bool, a type is a dtype, an int an int).
Ops tapecli does not implement are absent (tapecli has no tf.raw_ops.X).

Each row of OPS: the wrapper's Python name (TensorFlow's errors name it), its parameters as TensorFlow's signature
spells them with each attr's type (``keep_dims:bool=False``; tests/data/tf_raw_ops.json holds TensorFlow's, which
tests/library/test_tf_raw_ops.py compares), and the implementation: a builtin's name, called with the parameters in
order, or a function of them."""
from __future__ import annotations

import ast

import numpy as np

from tapecli.errors import TdfTypeError
from tapecli.interpreter.conversions import to_int
from tapecli.interpreter.registry import BUILTINS, builtin_function, literal_list, load_word, register
from tapecli.library.core import to_dtype
from tapecli.library.tf_math import convert_to_tensor
from tapecli.runtime.values import DType, PythonBool, Tensor, dtype_name


def _call(builtin: str, *args, **kwargs):
    load_word(builtin.partition(".")[0])        # (its module's word: tf.bitwise's family registers bitwise.invert)
    load_word(builtin.rpartition(".")[2])
    return BUILTINS[builtin](*args, **kwargs)


def _population_count(x):
    """Each element's number of set bits, as uint8 (TensorFlow gives the op no gradient)."""
    value = convert_to_tensor(x).value
    bits = np.unpackbits(np.ascontiguousarray(value).view(np.uint8).reshape(*value.shape, value.dtype.itemsize), axis=-1)
    return Tensor(bits.sum(axis=-1, dtype=np.uint8))


def _reduction(builtin: str):
    return lambda input, axis, keep_dims: _call(builtin, input, axis, keep_dims)  # noqa: A006


def _arg_reduction(builtin: str):
    return lambda input, dimension, output_type: _call(builtin, input, dimension, output_type)  # noqa: A006


_BINARY, _UNARY = "x, y", "x"
OPS = {
    "Add": ("add", _BINARY, "add"),
    "AddV2": ("add_v2", _BINARY, "add"),
    "Sub": ("sub", _BINARY, "subtract"),
    "Mul": ("mul", _BINARY, "multiply"),
    "RealDiv": ("real_div", _BINARY, "truediv"),
    "Div": ("div", _BINARY, lambda x, y: _call("truncatediv" if convert_to_tensor(x).dtype.kind in "iu" else "truediv",
                                               x, y)),
    "FloorDiv": ("floor_div", _BINARY, "floordiv"),
    "FloorMod": ("floor_mod", _BINARY, "floormod"),
    "Maximum": ("maximum", _BINARY, "maximum"),
    "Minimum": ("minimum", _BINARY, "minimum"),
    "Pow": ("_pow", _BINARY, "pow"),
    "Neg": ("neg", _UNARY, "negative"),
    "Abs": ("_abs", _UNARY, "abs"),
    "Exp": ("exp", _UNARY, "exp"),
    "Log": ("log", _UNARY, "log"),
    "Log1p": ("log1p", _UNARY, "log1p"),
    "Sqrt": ("sqrt", _UNARY, "sqrt"),
    "Rsqrt": ("rsqrt", _UNARY, "rsqrt"),
    "Square": ("square", _UNARY, "square"),
    "Sin": ("sin", _UNARY, "sin"),
    "Cos": ("cos", _UNARY, "cos"),
    "Tanh": ("tanh", _UNARY, "tanh"),
    "Sigmoid": ("sigmoid", _UNARY, "sigmoid"),
    "Relu": ("relu", "features", "relu"),
    "Relu6": ("relu6", "features", "relu6"),
    "Elu": ("elu", "features", "elu"),
    "Selu": ("selu", "features", "selu"),
    "Softplus": ("softplus", "features", "softplus"),
    "Sign": ("sign", _UNARY, "sign"),
    "Floor": ("floor", _UNARY, "floor"),
    "Ceil": ("ceil", _UNARY, "ceil"),
    "Round": ("round", _UNARY, "tf.round"),
    "Rint": ("rint", _UNARY, "tf.round"),             # (both round half to even)
    "Reciprocal": ("reciprocal", _UNARY, "reciprocal"),
    "Erf": ("erf", _UNARY, "erf"),
    "Erfc": ("erfc", _UNARY, "erfc"),
    "Lgamma": ("lgamma", _UNARY, "lgamma"),
    "Equal": ("equal", "x, y, incompatible_shape_error:bool=True", lambda x, y, **_: _call("equal", x, y)),
    "NotEqual": ("not_equal", "x, y, incompatible_shape_error:bool=True", lambda x, y, **_: _call("not_equal", x, y)),
    "Less": ("less", _BINARY, "less"),
    "LessEqual": ("less_equal", _BINARY, "less_equal"),
    "Greater": ("greater", _BINARY, "greater"),
    "GreaterEqual": ("greater_equal", _BINARY, "greater_equal"),
    "LogicalAnd": ("logical_and", _BINARY, "logical_and"),
    "LogicalOr": ("logical_or", _BINARY, "logical_or"),
    "LogicalNot": ("logical_not", _UNARY, "logical_not"),
    "BitwiseAnd": ("bitwise_and", _BINARY, "bitwise.bitwise_and"),
    "BitwiseOr": ("bitwise_or", _BINARY, "bitwise.bitwise_or"),
    "BitwiseXor": ("bitwise_xor", _BINARY, "bitwise.bitwise_xor"),
    "Invert": ("invert", _UNARY, "bitwise.invert"),
    "LeftShift": ("left_shift", _BINARY, "bitwise.left_shift"),
    "RightShift": ("right_shift", _BINARY, "bitwise.right_shift"),
    "PopulationCount": ("population_count", _UNARY, _population_count),
    "Cast": ("cast", "x, DstT:type, Truncate:bool=False", lambda x, DstT, **_: _call("cast", x, DstT)),
    "Identity": ("identity", "input", "identity"),
    "Sum": ("_sum", "input, axis, keep_dims:bool=False", _reduction("reduce_sum")),
    "Mean": ("mean", "input, axis, keep_dims:bool=False", _reduction("reduce_mean")),
    "Max": ("_max", "input, axis, keep_dims:bool=False", _reduction("reduce_max")),
    "Min": ("_min", "input, axis, keep_dims:bool=False", _reduction("reduce_min")),
    "Prod": ("prod", "input, axis, keep_dims:bool=False", _reduction("reduce_prod")),
    "All": ("_all", "input, axis, keep_dims:bool=False", _reduction("reduce_all")),
    "Any": ("_any", "input, axis, keep_dims:bool=False", _reduction("reduce_any")),
    "ArgMax": ("arg_max", "input, dimension, output_type:type=tf.int64", _arg_reduction("argmax")),
    "ArgMin": ("arg_min", "input, dimension, output_type:type=tf.int64", _arg_reduction("argmin")),
    "MatMul": ("mat_mul", "a, b, transpose_a:bool=False, transpose_b:bool=False, grad_a:bool=False, grad_b:bool=False",
               lambda a, b, transpose_a, transpose_b, **_: _call("matmul", a, b, transpose_a, transpose_b)),
    "BatchMatMulV2": ("batch_mat_mul_v2", "x, y, adj_x:bool=False, adj_y:bool=False, grad_x:bool=False, "
                      "grad_y:bool=False", lambda x, y, adj_x, adj_y, **_: _call("matmul", x, y, adjoint_a=adj_x,
                                                                                 adjoint_b=adj_y)),
    "Reshape": ("reshape", "tensor, shape", "reshape"),
    "Transpose": ("transpose", "x, perm", "transpose"),
    "ConcatV2": ("concat_v2", "values, axis", "concat"),
    "Pack": ("pack", "values, axis:int=0", "stack"),
    "Unpack": ("unpack", "value, num:int, axis:int=0", "unstack"),
    "Shape": ("shape", "input, out_type:type=tf.int32", lambda input, out_type: _call(  # noqa: A006
        "shape", input, out_type)),
    "Size": ("size", "input, out_type:type=tf.int32", lambda input, out_type: _call(  # noqa: A006
        "size", input, out_type)),
    "Rank": ("rank", "input", "rank"),
    "ExpandDims": ("expand_dims", "input, axis", "expand_dims"),
    "Squeeze": ("squeeze", "input, axis:list(int)=[]", lambda input, axis: _call(  # noqa: A006
        "squeeze", input, axis or None)),
    "Tile": ("tile", "input, multiples", "tile"),
    "Fill": ("fill", "dims, value", "fill"),
    "ZerosLike": ("zeros_like", "x", "zeros_like"),
    "OnesLike": ("ones_like", "x", "ones_like"),
    "GatherV2": ("gather_v2", "params, indices, axis, batch_dims:int=0", lambda params, indices, axis, batch_dims: _call(
        "gather", params, indices, axis=axis, batch_dims=batch_dims)),
    "Slice": ("_slice", "input, begin, size", "slice"),
    "StridedSlice": ("strided_slice", "input, begin, end, strides, begin_mask:int=0, end_mask:int=0, "
                     "ellipsis_mask:int=0, new_axis_mask:int=0, shrink_axis_mask:int=0", "strided_slice"),
    "Pad": ("pad", "input, paddings", "pad"),
    "SelectV2": ("select_v2", "condition, t, e", "where"),
    "Where": ("where", "condition", "where"),
    "OneHot": ("one_hot", "indices, depth, on_value, off_value, axis:int=-1", "one_hot"),
    "Range": ("_range", "start, limit, delta", "range"),
    "Softmax": ("softmax", "logits", "softmax"),
    "LogSoftmax": ("log_softmax", "logits", "log_softmax"),
    "BiasAdd": ("bias_add", "value, bias, data_format:string='NHWC'", "bias_add"),
    "Cumsum": ("cumsum", "x, axis, exclusive:bool=False, reverse:bool=False", "cumsum"),
    "TopKV2": ("top_kv2", "input, k, sorted:bool=True, index_type:type=tf.int32",
               lambda input, k, sorted, index_type: _call("top_k", input, k, sorted,  # noqa: A006
                                                          index_type)),
    "Unique": ("unique", "x, out_idx:type=tf.int32", lambda x, out_idx: _call("unique", x, out_idx)),
}


def parameters(text: str) -> list[tuple[str, str | None, str | None]]:
    """A row's parameters: each one's name, attr type (None for an input) and default's text (None for none)."""
    args = ast.parse(f"def op({text}): pass").body[0].args
    defaults = [None] * (len(args.args) - len(args.defaults)) + [ast.unparse(d) for d in args.defaults]
    return [(arg.arg, arg.annotation and ast.unparse(arg.annotation), default)
            for arg, default in zip(args.args, defaults)]


def _attr(kind: str, param: str, value, default: str | None):
    """An attr's value as TensorFlow's wrapper converts it (its default for None, where it has one)."""
    # (a Python literal, as the runs pass one: a weak tensor, a Python bool)
    if value.__class__ is PythonBool or value.__class__ is Tensor and value.weak:
        value = value.value.item()
    if value is None and default is not None:
        value = DType(default.removeprefix("tf.")) if default.startswith("tf.") else ast.literal_eval(default)
    if kind == "bool":
        if not isinstance(value, (bool, np.bool_)):
            raise TdfTypeError(f"Expected bool for argument '{param}' not {value!r}.")
        return bool(value)
    if kind == "type":
        return DType(dtype_name(to_dtype(value)))
    if kind == "int":
        return to_int(value)
    if kind == "list(int)":         # (CPython's run passes a list of one int as the int)
        return [to_int(v) for v in (value if isinstance(value, (list, tuple)) else [value])]
    return value


def _missing(function: str, names: list[str]) -> TdfTypeError:
    quoted = [f"'{n}'" for n in names]
    listed = quoted[0] if len(quoted) == 1 else f"{quoted[0]} and {quoted[1]}" if len(quoted) == 2 else \
        ", ".join(quoted[:-1]) + f", and {quoted[-1]}"
    plural = "s" if len(names) > 1 else ""
    return TdfTypeError(f"{function}() missing {len(names)} required positional argument{plural}: {listed}")


def raw_op(function: str, text: str, implementation):
    """The builtin ``tf.raw_ops.<op>``: keyword arguments only, checked as TensorFlow's wrapper checks them."""
    params = parameters(text)
    keys = [name for name, _, _ in params] + ["name"]
    call = implementation if callable(implementation) else (lambda *inputs: _call(implementation, *inputs))

    def wrapper(*args, **kwargs):
        if args:
            raise TdfTypeError(f"{function} only takes keyword args (possible keys: {keys}). Please pass these args "
                               "as kwargs instead.")
        unexpected = next((k for k in kwargs if k not in keys), None)
        if unexpected is not None:
            raise TdfTypeError(f"{function}() got an unexpected keyword argument '{unexpected}'")
        missing = [name for name, _, default in params if default is None and name not in kwargs]
        if missing:
            raise _missing(function, missing)
        values = {}
        for index, (param, kind, default) in enumerate(params):
            value = kwargs.get(param)
            # (the first input converted as TensorFlow's function converts a literal: registry.call_builtin)
            values[param] = _attr(kind, param, value, default) if kind else \
                literal_list(value) if index == 0 and isinstance(value, list) else value
        return call(**values) if callable(implementation) else call(*values.values())
    wrapper.__name__ = wrapper.__qualname__ = function
    return builtin_function(wrapper)


for _op, (_function, _text, _implementation) in OPS.items():
    register(f"raw_ops.{_op}", raw_op(_function, _text, _implementation))
