"""TensorFlow's math vocabulary (tf.math, tf.X): the named arithmetic and comparison functions,
constants, clipping, moments and reductions, written as compositions of the op table's ops
wherever TensorFlow's gradient is the composition's (so gradients of every order come free).

A program reaches them as ``X``, ``tf.X``, ``tf.math.X`` or ``tf.nn.X`` (docs/spec/LANGUAGE.md §11)."""
from __future__ import annotations

import itertools
import math

import numpy as np

from tapecli import ops
from tapecli.errors import KernelValueError, ShapeError, TdfError, TdfTypeError, TdfValueError
from tapecli.library.core import kernel_name, same_dtype, tensor_argument, to_axis, to_dtype, to_float, to_int, truth
from tapecli.library.python import host_conversion, unconvertible_none
from tapecli.interpreter.registry import builtin, register
from tapecli.runtime.tape import type_word
from tapecli.runtime.values import PythonTuple, Tensor, Variable, dtype_name, filled, literal_array, tf_tensor
from tapecli.runtime import spelling

# ------------------------------------------------------------------ constants

register("pi", Tensor(np.array(math.pi), weak=True))
register("e", Tensor(np.array(math.e), weak=True))
register("inf", Tensor(np.array(math.inf), weak=True))
register("nan", Tensor(np.array(math.nan), weak=True))
register("newaxis", None)


# ------------------------------------------------------ named arithmetic (tf.math)

def _binary(names, f):
    def run(x, y):
        return f(x, y)
    run.__name__ = names[0]
    builtin(*names)(run)


_binary(("add",), ops.add)
_binary(("subtract",), ops.sub)
_binary(("multiply",), ops.mul)
_binary(("divide", "truediv"), ops.div)
_binary(("floordiv",), ops.floordiv)
_binary(("floormod", "mod"), ops.mod)
_binary(("equal",), ops.equal)
_binary(("not_equal",), ops.not_equal)
_binary(("greater",), ops.greater)
_binary(("greater_equal",), ops.greater_equal)
_binary(("less",), ops.less)
_binary(("less_equal",), ops.less_equal)


def _bool_operands(name, *xs):
    ts = [ops.to_tensor(x) for x in xs]
    for t in ts:
        if t.dtype != np.bool_:
            raise TdfTypeError(f"{name} needs bool tensors, got {dtype_name(t.dtype)}",
                               hint="compare first, e.g. x > 0")
    return ts


@builtin()
def logical_and(x, y):
    return ops.logical_and(*_bool_operands("logical_and", x, y))


@builtin()
def logical_or(x, y):
    return ops.logical_or(*_bool_operands("logical_or", x, y))


@builtin()
def logical_xor(x, y):
    a, b = _bool_operands("logical_xor", x, y)
    return ops.not_equal(a, b)


@builtin()
def logical_not(x):
    return ops.logical_not(*_bool_operands("logical_not", x))


def _zero_where_x_is(x, y, f):
    """f(x, y), 0 where x is 0 (y read as 1 there, so no NaN reaches the gradients), as tf.math.xlogy/xdivy."""
    tx, ty = ops.to_tensor(x), ops.to_tensor(y)
    zero = ops.equal(tx, 0)
    out = f(tx, ops.where(zero, ops.ones_like(ty) if not ty.weak else 1.0, ty))
    return ops.where(zero, ops.zeros_like(out), out)


@builtin()
def xlogy(x, y, name=None):
    return _zero_where_x_is(x, y, lambda a, b: ops.mul(a, ops.log(b)))


@builtin()
def xlog1py(x, y, name=None):
    return _zero_where_x_is(x, y, lambda a, b: ops.mul(a, ops.log1p(b)))


@builtin()
def xdivy(x, y, name=None):
    return _zero_where_x_is(x, y, ops.div)


@builtin()
def reciprocal_no_nan(x, name=None):
    """1 / x, 0 where x is 0 (TensorFlow's is divide_no_nan(1, x))."""
    return divide_no_nan(ops.ones_like(x), x)


@builtin()
def zero_fraction(value, name=None):
    """The fraction of zeros in ``value``, a float32 scalar."""
    return ops.reduce_mean(ops.cast(ops.equal(value, 0), np.dtype(np.float32)))


divide_no_nan = builtin("divide_no_nan")(ops.divide_no_nan)


def _float_test(name, f):
    def run(x):
        t = ops.to_tensor(x)
        if t.dtype.kind != "f" and not t.weak:
            raise TdfTypeError(f"{name} needs a float tensor, got {dtype_name(t.dtype)}")
        return Tensor(np.asarray(f(t.value)))
    run.__name__ = name
    builtin(name)(run)


_float_test("is_nan", np.isnan)
_float_test("is_inf", np.isinf)
_float_test("is_finite", np.isfinite)


@builtin()
def count_nonzero(input, axis=None, keepdims=False, dtype=None):  # noqa: A002
    t = ops.to_tensor(input)
    ax = to_axis(axis)
    n = np.count_nonzero(t.value, axis=ax, keepdims=truth(keepdims))
    return Tensor(np.asarray(n).astype(np.int64 if dtype is None else to_dtype(dtype)))


@builtin()
def reduce_euclidean_norm(input_tensor, axis=None, keepdims=False):
    return ops.sqrt(ops.reduce_sum(ops.square(ops.to_tensor(input_tensor)), axis=to_axis(axis),
                                   keepdims=truth(keepdims)))


@builtin()
def negative(x):
    return ops.neg(x)


@builtin()
def reciprocal(x):
    return ops.reciprocal(x)


@builtin()
def log_sigmoid(x):
    """-softplus(-x), as tf.math.log_sigmoid."""
    return ops.neg(ops.softplus(ops.neg(x)))


@builtin("silu", "swish")
def silu(x, beta=1.0):
    """x * sigmoid(beta * x), as tf.nn.silu, with its gradient, sigmoid * (1 + beta x (1 - sigmoid))."""
    return ops.silu(ops.to_tensor(x), to_float(beta, "beta"))


@builtin()
def hard_sigmoid(x):
    """relu6(x + 3) / 6, as keras.activations.hard_sigmoid (Keras 3): 0 below -3, 1 above 3."""
    return ops.div(ops.relu6(ops.add(x, 3.0)), 6.0)


@builtin()
def clip_by_value(t, clip_value_min, clip_value_max):
    """min(max(t, lo), hi); the gradient passes where lo <= t <= hi (tf.clip_by_value)."""
    x = ops.to_tensor(t)
    lo, hi = ops.to_tensor(clip_value_min), ops.to_tensor(clip_value_max)
    for bound in (lo, hi):
        try:
            shape = np.broadcast_shapes(x.shape, bound.shape)
        except ValueError:
            shape = None
        if shape != x.shape:
            raise ShapeError(f"clip_by_value: the bound of shape {list(bound.shape)} does not broadcast to t's "
                             f"shape {list(x.shape)}")
    return ops.clip(x, lo, hi)


# -------------------------------------------------------------- like / identity

def _like(x, dtype, fill):
    if isinstance(x, Variable):
        x = x.read()
    t = ops.to_tensor(x)
    if t.weak:
        t = ops.materialize(t)
    dt = t.dtype if dtype is None else to_dtype(dtype)
    return Tensor(filled(t.shape, fill, dt))


@builtin()
def zeros_like(input, dtype=None):  # noqa: A002 (TensorFlow's parameter name)
    return _like(input, dtype, 0)


@builtin()
def ones_like(input, dtype=None):  # noqa: A002
    return _like(input, dtype, 1)


@builtin()
def identity(input):  # noqa: A002
    """The same values, a new tensor on the tape (a literal stays a literal)."""
    t = ops.to_tensor(input)
    return t if t.weak else ops.identity(t)


@builtin()
def convert_to_tensor(value, dtype=None, dtype_hint=None):
    """A tensor from a literal, a variable (its value) or a list of tensors (stacked); ``dtype`` must
    agree with a tensor's own dtype (TensorFlow converts only literals)."""
    unconvertible_none(value)
    if isinstance(value, (list, tuple)) and not ops.text_leaf(value):      # (a list of strings: a string tensor)
        t = ops.stack(list(value)) if any(isinstance(v, (Tensor, Variable)) and not getattr(v, "weak", False)
                                          for v in value) else Tensor(literal_array(_plain(value)), weak=True)
    else:
        t = ops.to_tensor(value)
    want = dtype if dtype is not None else dtype_hint
    if want is None:
        return ops.materialize(t) if t.weak else tf_tensor(t)
    dt = to_dtype(want)
    try:
        converted = host_conversion(value, t, dt)
    except TdfError:
        if dtype is not None:
            raise
        converted = ops.materialize(t) if t.weak else tf_tensor(t)    # (a hint that does not convert is passed over)
    if converted is not None:
        return converted
    if t.dtype != dt and dtype is not None:
        raise TdfValueError(f"convert_to_tensor: tensor conversion requested dtype {dtype_name(dt)} for a tensor "
                            f"with dtype {dtype_name(t.dtype)}",
                            hint=f"use {spelling.cast('x', dtype_name(dt))}")
    return tf_tensor(t)


def _plain(value):
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, Tensor):
        return value.value
    return value


# ------------------------------------------------------------------ reductions

def _tensor_list(xs, what):
    if isinstance(xs, (Tensor, Variable)):
        return ops.to_tensor(xs)
    if not isinstance(xs, (list, tuple)) or not xs:
        raise TdfTypeError(f"{what} takes a tensor or a non-empty list of tensors, got {type_word(xs)}")
    return ops.stack(list(xs))


@builtin()
def reduce_variance(input_tensor, axis=None, keepdims=False):
    """mean(square(x - mean(x, keepdims))), as tf.math.reduce_variance."""
    x = _tensor_list(input_tensor, "reduce_variance")
    if x.weak:
        x = ops.materialize(x)
    if x.dtype.kind != "f":
        raise TdfTypeError(f"reduce_variance needs a float tensor, got {dtype_name(x.dtype)}",
                           hint=f"{spelling.cast('x', 'float32')} first")
    ax = to_axis(axis)
    means = ops.reduce_mean(x, axis=ax, keepdims=True)
    return ops.reduce_mean(ops.square(ops.sub(x, means)), axis=ax, keepdims=truth(keepdims))


@builtin()
def reduce_std(input_tensor, axis=None, keepdims=False):
    """sqrt(reduce_variance(...)), as tf.math.reduce_std (its gradient is nan where the variance is 0)."""
    return ops.sqrt(reduce_variance(input_tensor, axis, keepdims))


def _bool_reduce(name, f):
    def run(input_tensor, axis=None, keepdims=False):
        t = _tensor_list(input_tensor, name)
        if t.dtype != np.bool_:
            raise TdfTypeError(f"{name} needs a bool tensor, got {dtype_name(t.dtype)}", hint="compare first, e.g. x > 0")
        ax = to_axis(axis)
        ax = tuple(a % max(t.ndim, 1) for a in ax) if isinstance(ax, tuple) else ax
        return Tensor(np.asarray(f(t.value, axis=ax, keepdims=truth(keepdims))))
    run.__name__ = name
    builtin(name)(run)


_bool_reduce("reduce_any", np.any)
_bool_reduce("reduce_all", np.all)


@builtin()
def moments(x, axes, shift=None, keepdims=False):
    """(mean, variance) over ``axes``, as tf.nn.moments: the variance is the mean squared difference
    from the mean with the mean's gradient stopped."""
    t = ops.to_tensor(x)
    if t.weak:
        t = ops.materialize(t)
    ax = to_axis(axes)
    mean = ops.reduce_mean(t, axis=ax, keepdims=True)
    variance = ops.reduce_mean(ops.squared_difference(t, ops.stop_gradient(mean)), axis=ax, keepdims=True)
    if not truth(keepdims):
        shape = ops.reduce_sum(t, axis=ax).shape
        mean, variance = ops.reshape(mean, shape), ops.reshape(variance, shape)
    return PythonTuple([mean, variance])


@builtin()
def add_n(inputs):
    """The sum of a list of tensors of one shape and dtype (no broadcasting), as tf.math.add_n. A tensor (a list
    of numbers is one) is the list of its rows, as TensorFlow iterates it: ``add_n([1.0, 2.0])`` is 3.0."""
    if isinstance(inputs, (Tensor, Variable)):
        t = ops.to_tensor(inputs)
        if t.ndim == 0:
            raise TdfTypeError("add_n takes a list of tensors: cannot iterate over a scalar tensor")
        inputs = ops.rows(t)
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise TdfValueError("add_n takes a non-empty list of tensors")
    ts = [ops.numeric(ops.to_tensor(v), "add_n") for v in inputs]
    strong = [t for t in ts if not t.weak]
    for t in strong[1:]:
        if t.shape != strong[0].shape:
            raise ShapeError(f"add_n: shapes must be equal, got {list(strong[0].shape)} and {list(t.shape)}")
    if len(ts) == 1:
        return ts[0]
    dtype = strong[0].dtype if strong else ops.default_dtype(ts[0].value)
    return ops.add_n([ops.materialize(t, dtype) if t.weak else t for t in ts])


@builtin()
def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """x * rsqrt(max(sum(x^2, axis, keepdims), epsilon)), as tf.math.l2_normalize (``dim``: TensorFlow 1's name of
    ``axis``)."""
    axis = dim if axis is None else axis
    t = ops.to_tensor(x)
    square_sum = ops.reduce_sum(ops.square(t), axis=to_axis(axis), keepdims=True)
    return ops.mul(t, ops.rsqrt(ops.maximum(square_sum, to_float(epsilon, "epsilon"))))


@builtin()
def global_norm(t_list):
    """sqrt(sum of the squared elements of every tensor), as tf.linalg.global_norm (via l2 losses)."""
    ts = [ops.to_tensor(_rows_of(t)) for t in t_list if t is not None]
    if not ts:
        raise TdfValueError("global_norm takes a non-empty list of tensors")
    half = [ops.mul(ops.reduce_sum(ops.square(t)), 0.5) for t in ts]
    total = half[0]
    for h in half[1:]:
        total = ops.add(total, h)
    return ops.sqrt(ops.mul(total, 2.0))


@builtin()
def clip_by_global_norm(t_list, clip_norm, use_norm=None):
    """[clipped list, global norm], as tf.clip_by_global_norm: every tensor times
    clip_norm * min(1 / norm, 1 / clip_norm); None entries stay None; an infinite norm gives nan."""
    if not isinstance(t_list, (list, tuple)):
        raise TdfTypeError(f"clip_by_global_norm takes a list of tensors, got {type_word(t_list)}")
    norm = global_norm(t_list) if use_norm is None else ops.to_tensor(use_norm)
    c = to_float(clip_norm, "clip_norm")
    scale = ops.mul(c, ops.minimum(ops.div(1.0, norm), 1.0 / c))
    if not np.isfinite(norm.value).all():
        scale = ops.add(scale, math.nan)
    out = [None if t is None else _scaled(t, ops.cast(scale, ops.to_tensor(_rows_of(t)).dtype)
                                          if ops.to_tensor(_rows_of(t)).dtype != scale.dtype else scale) for t in t_list]
    return PythonTuple([out, norm])


def _rows_of(t):
    """What a norm of ``t`` reads: a tf.IndexedSlices' rows (TensorFlow's: not their dense sum), else ``t``."""
    return t.values if getattr(t, "is_indexed_slices", False) else t


def _scaled(t, factor):
    """``t`` times ``factor``; a tf.IndexedSlices stays one, its rows scaled."""
    return t.scaled(factor) if getattr(t, "is_indexed_slices", False) else ops.mul(t, factor)


@builtin()
def cumsum(x, axis=0, exclusive=False, reverse=False):
    return ops.cumsum(x, _axis_of(x, axis, "cumsum"), truth(exclusive), truth(reverse))


@builtin()
def cumprod(x, axis=0, exclusive=False, reverse=False):
    return ops.cumprod(x, _axis_of(x, axis, "cumprod"), truth(exclusive), truth(reverse))


def _axis_of(x, axis, what):
    from tapecli.library.core import to_int
    t = ops.to_tensor(x)
    a = to_int(axis, "axis")
    if not -max(t.ndim, 1) <= a < max(t.ndim, 1):
        raise ShapeError(f"{what}: axis {a} is out of range for a tensor of shape {list(t.shape)}")
    return a


def _stacking_reduction(name, f):
    """TensorFlow's reduce_*: a list of tensors is first converted to one tensor (stacked).
    (``sum``/``max``/``min`` keep Python's meaning for lists: docs/spec/LANGUAGE.md §11.)"""
    def run(input_tensor, axis=None, keepdims=False):
        x = _tensor_list(input_tensor, name) if isinstance(input_tensor, (list, tuple)) else input_tensor
        return f(x, axis=to_axis(axis), keepdims=truth(keepdims))
    run.__name__ = name
    builtin(name, replaces=True)(run)      # core's reduce_* take a tensor; these also stack a list


for _name, _f in (("reduce_sum", ops.reduce_sum), ("reduce_mean", ops.reduce_mean), ("reduce_max", ops.reduce_max),
                  ("reduce_min", ops.reduce_min), ("reduce_prod", ops.reduce_prod),
                  ("reduce_logsumexp", ops.reduce_logsumexp)):
    _stacking_reduction(_name, _f)


# ------------------------------------------------------------------ compositions TensorFlow writes in Python
@builtin("accumulate_n")
def accumulate_n(inputs, shape=None, tensor_dtype=None, name=None):
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise TdfValueError("accumulate_n: inputs must be a non-empty list of tensors")
    items = [tensor_argument(v) for v in inputs]
    if any(t.shape != items[0].shape for t in items):
        raise ShapeError("accumulate_n: the inputs must all have the same shape, got "
                         + ", ".join(str(list(t.shape)) for t in items))
    total = items[0]
    for t in items[1:]:
        total = ops.add(total, t)
    return total


@builtin("cumulative_logsumexp")
def cumulative_logsumexp(x, axis=0, exclusive=False, reverse=False, name=None):
    """TensorFlow's CumulativeLogsumexp: a running log(exp(a) + exp(b)) along the axis (ops.scan)."""
    x = tensor_argument(x)
    return ops.cumulative_logsumexp(ops.materialize(x) if x.weak else x, to_int(axis, "axis"), truth(exclusive),
                                    truth(reverse))


@builtin("lbeta")
def lbeta(x, name=None):
    """log(|Beta(x)|) over the last axis: sum(lgamma(x)) - lgamma(sum(x)); 1 entry gives 0, none gives 0."""
    x = tensor_argument(x)
    if x.ndim == 0:
        raise ShapeError("lbeta needs at least one axis")
    return ops.sub(ops.reduce_sum(ops.lgamma(x), axis=-1), ops.lgamma(ops.reduce_sum(x, axis=-1)))


@builtin("nextafter")
def nextafter(x1, x2, name=None):
    # (Python floats: float32)
    a, b = (ops.materialize(t) if t.weak else t for t in (tensor_argument(x1), tensor_argument(x2)))
    if a.dtype != b.dtype or a.dtype.kind != "f":
        raise TdfTypeError("nextafter: x1 and x2 must be float tensors of one dtype")
    return Tensor(np.nextafter(a.value, b.value))


@builtin("confusion_matrix")
def confusion_matrix(labels, predictions, num_classes=None, weights=None, dtype=None, name=None):
    labels_v = np.asarray(tensor_argument(labels).value).astype(np.int64).reshape(-1)
    preds_v = np.asarray(tensor_argument(predictions).value).astype(np.int64).reshape(-1)
    if labels_v.shape != preds_v.shape:
        raise ShapeError(f"confusion_matrix: labels and predictions differ in size ({labels_v.size} and "
                         f"{preds_v.size})")
    if (labels_v < 0).any() or (preds_v < 0).any():
        raise TdfValueError("confusion_matrix: labels and predictions must be non-negative")
    n = to_int(num_classes, "num_classes") if num_classes is not None else \
        int(max(labels_v.max(initial=-1), preds_v.max(initial=-1)) + 1)
    if (labels_v >= n).any() or (preds_v >= n).any():
        raise TdfValueError(f"confusion_matrix: labels and predictions must be below num_classes={n}")
    w = None if weights is None else np.asarray(tensor_argument(weights).value).reshape(-1)
    out_dtype = to_dtype(dtype) if dtype is not None else np.dtype(np.int32)       # weights are cast to it
    cm = np.zeros((n, n), out_dtype)
    np.add.at(cm, (labels_v, preds_v), np.ones(labels_v.shape, out_dtype) if w is None else w.astype(out_dtype))
    return Tensor(cm)


def _float_operands(op: str, values, allowed: tuple) -> list:
    """The operands of TensorFlow's op ``op`` (one dtype T, of ``allowed``: C++'s names), converted as TensorFlow
    converts them: literals take the first tensor's dtype, or the first literal's own where none is a tensor (a
    Python int's is int32, which no such op takes). Its errors are TensorFlow's; a half or bfloat16 T has no CPU
    kernel."""
    ts = [tensor_argument(v) for v in values]
    dtype = next((t.dtype for t in ts if not t.weak), None) or ops.materialize(ts[0]).dtype
    ts = [ops.materialize(t, dtype) if t.weak else t for t in ts]
    name = kernel_name(dtype)
    if name not in allowed:
        raise KernelValueError(f"Value for attr 'T' of {name} is not in the list of allowed values: "
                               f"{', '.join(allowed)} [Op:{op}]")
    if name in ("half", "bfloat16"):
        raise TdfTypeError(f"Could not find device for node: {{{{node {op}}}}} = {op}[T=DT_{name.upper()}] "
                           "(its CPU kernels are float32's and float64's)")
    return [same_dtype(t, dtype, op, i) for i, t in enumerate(ts)]


_IGAMMA_TYPES = ("bfloat16", "half", "float", "double")


@builtin("igamma")
def igamma(a, x, name=None):
    """P(a, x), the lower regularized incomplete gamma function (TensorFlow's kernel: kernels/tf_igamma.py)."""
    return ops.igamma(*_float_operands("Igamma", (a, x), _IGAMMA_TYPES))


@builtin("igammac")
def igammac(a, x, name=None):
    """Q(a, x) = 1 - P(a, x), the upper one."""
    return ops.igammac(*_float_operands("Igammac", (a, x), _IGAMMA_TYPES))


@builtin("betainc")
def betainc(a, b, x, name=None):
    """I_x(a, b), the regularized incomplete beta integral. TensorFlow's kernel broadcasts scalars alone: the
    operands that are not scalars have one shape."""
    ts = _float_operands("Betainc", (a, b, x), ("float", "double"))
    for (i, p), (j, q) in itertools.combinations(enumerate(ts), 2):
        if p.ndim and q.ndim and p.shape != q.shape:
            raise ShapeError(f"Shapes of {'abx'[i]} and {'abx'[j]} are inconsistent: "
                             f"[{','.join(map(str, p.shape))}] vs. [{','.join(map(str, q.shape))}]")
    return ops.betainc(*ts)
