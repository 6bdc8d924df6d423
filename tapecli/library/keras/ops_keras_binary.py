"""keras.ops' functions whose TensorFlow namesakes take other parameter names, with Keras's signatures and its
TensorFlow backend's dtype rules (keras/src/backend/tensorflow/numpy.py): the arithmetic (add, subtract, multiply,
divide, divide_no_nan, maximum, minimum) promotes both operands to their result_type, a Python number weak (an
int32 tensor plus 1.5 is float32); mod, the comparisons, dot, matmul and einsum convert a Python number to a
tensor first (int32, float32), then promote; the logical functions cast to bool. The rest are renames: clip,
ones_like, zeros_like, argsort, sort, stack, transpose, reshape, repeat, size, broadcast_to, count_nonzero,
array, unstack."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import TdfValueError
from tapecli.library.core import to_dtype
from tapecli.library.keras.common import float_dtype, integer
from tapecli.library.keras.ops_math import _pair
from tapecli.library.keras.ops_numpy import _as, _kind, _tensor, result_type
from tapecli.runtime.values import Tensor, dtype_name

_CONVERTED = {"int": "int32", "float": "float32", "bool": "bool"}    # tf.convert_to_tensor of a Python number


def _strong(x) -> str:
    """The dtype of ``x`` once Keras's convert_to_tensor made it a tensor (a Python number loses its weakness)."""
    kind = _kind(x)
    return _CONVERTED.get(kind, kind)


def _arithmetic(name, op, *also):
    """add, subtract...: both operands in their result_type (with ``also``: divide's "float")."""
    def arithmetic(x1, x2):
        return op(*_pair(x1, x2, *also))
    arithmetic.__name__ = name
    return arithmetic


def _compared(name, op):
    """mod and the comparisons: Python numbers made tensors first, then both cast to their result_type."""
    def compared(x1, x2):
        dtype = result_type(_strong(x1), _strong(x2))
        if name == "mod" and dtype == "bool":
            dtype = "int32"
        return op(_as(x1, dtype), _as(x2, dtype))
    compared.__name__ = name
    return compared


def _logical(name, op):
    def logical(x1, x2):
        return op(_as(x1, "bool"), _as(x2, "bool"))
    logical.__name__ = name
    return logical


def _product_dtypes(*xs) -> tuple[str, str]:
    """The result dtype of a product and the float dtype it is computed in (Keras's dot, matmul, einsum)."""
    result = result_type(*map(_strong, xs))
    return result, result_type(result, "float")


def dot(x1, x2):
    result, compute = _product_dtypes(x1, x2)
    a, b = _as(x1, compute), _as(x2, compute)
    if a.ndim == 0 or b.ndim == 0:
        out = ops.mul(a, b)
    else:
        out = ops.tensordot(a, b, [[-1], [-1 if b.ndim == 1 else -2]])
    return ops.cast(out, np.dtype(result))


def matmul(x1, x2):
    result, compute = _product_dtypes(x1, x2)
    a, b = _as(x1, compute), _as(x2, compute)
    if b.ndim == 1:
        out = ops.tensordot(a, b, 1)
    elif a.ndim == 1:
        out = ops.tensordot(a, b, [[0], [-2]])
    else:
        out = ops.matmul(a, b)
    return ops.cast(out, np.dtype(result))


def einsum(subscripts, *operands, **kwargs):
    """In the operands' result_type, computed in floatx where that is an integer one."""
    from tapecli.library.tf_linalg import einsum as tf_einsum
    ts = [_tensor(x) for x in operands]
    result = result_type(*(dtype_name(t.dtype) for t in ts))
    compute = dtype_name(float_dtype()) if "int" in result else result
    return ops.cast(tf_einsum(subscripts, *(_as(t, compute) for t in ts), **kwargs), np.dtype(result))


def clip(x, x_min, x_max):
    from tapecli.library.tf_math import clip_by_value
    t = _tensor(x)
    return clip_by_value(_as(t, "int32") if t.dtype == bool else t, x_min, x_max)


def _like(name):
    def like(x, dtype=None):
        from tapecli.library import tf_math
        return getattr(tf_math, name)(x, dtype)
    like.__name__ = name
    return like


def argsort(x, axis=-1):
    t = _tensor(x)
    if t.dtype == bool:
        t = _as(t, "uint8")
    if t.ndim == 0:
        return Tensor(np.zeros(1, np.int32))
    if axis is None:
        t, axis = ops.reshape(t, (-1,)), 0
    return ops.argsort(t, integer(axis, "axis"))


def sort(x, axis=-1):
    t = _tensor(x)
    if axis is None:
        t, axis = ops.reshape(t, (-1,)), 0
    if t.dtype == bool:
        return _as(ops.sort(_as(t, "int8"), integer(axis, "axis")), "bool")
    return ops.sort(t, integer(axis, "axis"))


def stack(x, axis=0):
    """Tensors of different dtypes (a Python number's weak) first cast to their result_type."""
    from tapecli.library.core import stack as tf_stack
    xs = list(x) if isinstance(x, (list, tuple)) else x
    if isinstance(xs, list) and len({_kind(v) for v in xs}) > 1:
        dtype = result_type(*map(_kind, xs))
        xs = [_as(v, dtype) for v in xs]
    return tf_stack(xs, axis)


def transpose(x, axes=None):
    from tapecli.library.core import transpose as tf_transpose
    if axes:
        t = _tensor(x)
        axes = [integer(a, "axis") % max(t.ndim, 1) for a in axes]
        if len(set(axes)) != len(axes):
            raise TdfValueError(f"`axes` must be a valid permutation of the input dimensions (no duplicates). "
                                f"Received: axes={axes} for input of rank {t.ndim}.")
    return tf_transpose(x, axes or None)


def reshape(x, newshape):
    from tapecli.library.core import reshape as tf_reshape
    return tf_reshape(_tensor(x), newshape)


def repeat(x, repeats, axis=None):
    from tapecli.library.tf_array import repeat as tf_repeat
    return tf_repeat(_tensor(x), repeats, axis)


def size(x):
    return Tensor(np.array(_tensor(x).size, np.int32))


def broadcast_to(x, shape):
    from tapecli.library.tf_array import broadcast_to as tf_broadcast_to
    return tf_broadcast_to(x, shape)


def count_nonzero(x, axis=None):
    from tapecli.library.tf_math import count_nonzero as tf_count_nonzero
    return tf_count_nonzero(x, axis, dtype="int32")


def array(x, dtype=None):
    """Keras's convert_to_tensor: a dtype given casts (a tensor's too)."""
    t = _tensor(x)
    return t if dtype is None else ops.cast(t, to_dtype(dtype))


def unstack(x, num=None, axis=0):
    from tapecli.library.tf_nn import unstack as tf_unstack
    return tf_unstack(x, num, axis)


FUNCTIONS = {f"ops.{f.__name__}": f for f in (
    _arithmetic("add", ops.add), _arithmetic("subtract", ops.sub), _arithmetic("multiply", ops.mul),
    _arithmetic("divide", ops.div, "float"), _arithmetic("divide_no_nan", ops.divide_no_nan, "float"),
    _arithmetic("maximum", ops.maximum), _arithmetic("minimum", ops.minimum),
    _compared("mod", ops.mod), _compared("equal", ops.equal), _compared("not_equal", ops.not_equal),
    _compared("greater", ops.greater), _compared("greater_equal", ops.greater_equal), _compared("less", ops.less),
    _compared("less_equal", ops.less_equal), _logical("logical_and", ops.logical_and),
    _logical("logical_or", ops.logical_or), _logical("logical_xor", ops.not_equal),
    dot, matmul, einsum, clip, _like("ones_like"), _like("zeros_like"), argsort, sort, stack, transpose, reshape,
    repeat, size, broadcast_to, count_nonzero, array, unstack)}
