"""tf.experimental.numpy, its math: elementwise functions (a float function of integers computes in float64),
binary arithmetic, bitwise operations and comparisons of operands promoted to NumPy's result type, products (dot,
matmul, tensordot, einsum, cross...), closeness tests, real numbers' complex parts, and
experimental_enable_numpy_behavior, as np_math_ops.py and np_config.py write them over TensorFlow's ops (tf_numpy.py
says how the module is reached)."""
from __future__ import annotations

import math

import numpy as np

from tapecli import ops
from tapecli.errors import ShapeError, TdfValueError
from tapecli.interpreter.conversions import to_float, to_int, truth
from tapecli.library.core import cast as tf_cast
from tapecli.library.tf_array import broadcast_to as tf_broadcast_to
from tapecli.library.tf_linalg import tensordot as tf_tensordot
from tapecli.library.tf_numpy import (as_float, asarray, check_axis, default_float, is_python, logspace, numpy_dtype,
                                      numpy_function, promote, result_type, tensor_astype)
from tapecli.library.tf_numpy_arrays import all_, amax, amin, flatten, mean, moveaxis, ravel, reshape, sum_, transpose
from tapecli.library.tf_numpy_indexing import diagonal
from tapecli.ops.promotion import numpy_operands
from tapecli.runtime.context import NumpyBehavior, current
from tapecli.runtime.values import NumpyArray, NumpyDType, PythonBool, PythonTuple, Tensor

_FLOAT64 = np.dtype(np.float64)


def _unary(name: str, f, to_float: bool):
    def run(x):
        t = asarray(x)
        return f(as_float(t) if to_float else t)
    run.__name__ = name
    numpy_function(name)(run)


for _name, _f in (("sqrt", ops.sqrt), ("exp", ops.exp), ("log", ops.log), ("log1p", ops.log1p),
                  ("expm1", ops.expm1), ("sin", ops.sin), ("cos", ops.cos), ("tan", ops.tan), ("sinh", ops.sinh),
                  ("cosh", ops.cosh), ("tanh", ops.tanh), ("arcsin", ops.asin), ("arccos", ops.acos),
                  ("arctan", ops.atan), ("arcsinh", ops.asinh), ("arccosh", ops.acosh), ("arctanh", ops.atanh),
                  ("ceil", ops.ceil), ("floor", ops.floor)):
    _unary(_name, _f, True)
for _name, _f in (("abs", ops.abs_), ("absolute", ops.abs_), ("fabs", ops.abs_), ("negative", ops.neg),
                  ("square", ops.square), ("sign", ops.sign), ("positive", lambda t: t),
                  ("reciprocal", ops.reciprocal)):
    _unary(_name, _f, False)


def _float_test(name: str, f):
    def run(x):
        t = as_float(asarray(x))
        return Tensor(np.asarray(f(t.value)))
    run.__name__ = name
    numpy_function(name)(run)


_float_test("isnan", np.isnan)
_float_test("isfinite", np.isfinite)


@numpy_function()
def isinf(x):
    """Where ``x`` is infinite; False (a Python bool) for an array that is not of floats, as tnp answers."""
    t = asarray(x)
    return Tensor(np.isinf(t.value)) if t.dtype.kind == "f" else PythonBool(np.array(False))


@numpy_function()
def isposinf(x):
    t = asarray(x)
    return Tensor(np.isposinf(t.value)) if t.dtype.kind == "f" else PythonBool(np.array(False))


@numpy_function()
def isneginf(x):
    t = asarray(x)
    return Tensor(np.isneginf(t.value)) if t.dtype.kind == "f" else PythonBool(np.array(False))


@numpy_function()
def signbit(x):
    t = asarray(x)
    return Tensor(np.zeros(t.shape, dtype=bool)) if t.dtype == np.bool_ else ops.less(t, 0)


def _operator(f, a, b):
    """``a op b`` as a tensor's operator computes it: with NumPy's promotion once NumPy behaviour is on."""
    return f(*numpy_operands(a, b))


@numpy_function()
def log2(x):
    """log(x) / np.log(2): NumPy's float64 scalar, which makes a float32 log float64 under NumPy's promotion."""
    return _operator(ops.div, ops.log(as_float(asarray(x))), NumpyArray(np.log(2)))


@numpy_function()
def log10(x):
    return _operator(ops.div, ops.log(as_float(asarray(x))), NumpyArray(np.log(10)))


@numpy_function()
def exp2(x):
    return ops.pow_(2, as_float(asarray(x)))


@numpy_function()
def deg2rad(x):
    return ops.mul(as_float(asarray(x)), math.pi / 180.0)


@numpy_function()
def rad2deg(x):
    """x * (180 / pi), as Python computes it: a Python number's is a Python float."""
    if x.__class__ is Tensor and x.weak and x.ndim == 0:
        return Tensor(np.array(x.value.item() * (180.0 / math.pi)), weak=True)
    return _operator(ops.mul, x, Tensor(np.array(180.0 / math.pi), weak=True))


@numpy_function()
def cbrt(x):
    t = as_float(asarray(x))
    root = ops.pow_(ops.abs_(t), 1.0 / 3)
    return ops.where(ops.less(t, 0), ops.neg(root), root)


@numpy_function()
def fix(x):
    t = as_float(asarray(x))
    return ops.where(ops.less(t, 0), ops.ceil(t), ops.floor(t))


@numpy_function()
def sinc(x):
    t = as_float(asarray(x))
    pi_x = ops.mul(t, math.pi)
    return ops.where(ops.equal(t, 0), ops.ones_like(t), ops.div(ops.sin(pi_x), pi_x))


# ------------------------------------------------------------------ binary arithmetic

def _bin_op(f, a, b):
    """np_math_ops._bin_op: ``f`` of both operands promoted to their NumPy result type."""
    return f(*promote(a, b))


def _bool_or(bool_op, op):
    """An operation that is ``bool_op`` on bools (NumPy's + of bools is or, its * and)."""
    return lambda x, y: (bool_op if x.dtype == np.bool_ else op)(x, y)


def _int8_bools(op):
    """An operation that takes bools as int8 (NumPy's // and % of bools)."""
    def run(x, y):
        if x.dtype == np.bool_:
            x, y = (ops.cast(v, np.dtype(np.int8)) for v in (x, y))
        return op(x, y)
    return run


def _true_divide(x, y):
    if x.dtype == np.bool_:
        x, y = ops.cast(x, _FLOAT64), ops.cast(y, _FLOAT64)
    return ops.div(x, y)


_BINARY = {"add": _bool_or(ops.logical_or, ops.add), "subtract": ops.sub,
           "multiply": _bool_or(ops.logical_and, ops.mul), "true_divide": _true_divide, "divide": _true_divide,
           "floor_divide": _int8_bools(ops.floordiv), "mod": _int8_bools(ops.mod), "remainder": _int8_bools(ops.mod),
           "minimum": _bool_or(ops.logical_and, ops.minimum), "power": ops.pow_, "float_power": ops.pow_,
           "arctan2": ops.atan2}


def _binary(name: str, f):
    def run(x1, x2):
        return _bin_op(f, x1, x2)
    run.__name__ = name
    numpy_function(name)(run)


for _name, _f in _BINARY.items():
    _binary(_name, _f)


@numpy_function()
def maximum(x1, x2):
    """The larger of each pair; ``maximum(x, 0)`` of a tensor is its relu (whose gradient at 0 is 0)."""
    if x2.__class__ is Tensor and x2.weak and x2.ndim == 0 and x2.value == 0 and x1.__class__ is Tensor \
            and not x1.weak and x1.dtype != np.bool_:
        return ops.relu(x1)
    return _bin_op(_bool_or(ops.logical_or, ops.maximum), x1, x2)


@numpy_function("divmod")
def divmod_(x1, x2):
    return PythonTuple([_bin_op(_int8_bools(ops.floordiv), x1, x2), _bin_op(_int8_bools(ops.mod), x1, x2)])


@numpy_function()
def hypot(x1, x2):
    return ops.sqrt(ops.add(*promote(ops.square(as_float(asarray(x1))), ops.square(as_float(asarray(x2))))))


@numpy_function()
def heaviside(x1, x2):
    def step(a, b):
        return ops.where(ops.less(a, 0), Tensor(np.zeros((), dtype=b.dtype)),
                         ops.where(ops.greater(a, 0), Tensor(np.ones((), dtype=b.dtype)), b))
    y = _bin_op(step, x1, x2)
    return y if y.dtype.kind == "f" else tensor_astype(y, _FLOAT64)


@numpy_function()
def logaddexp(x1, x2):
    a, b = promote(x1, x2)
    delta = ops.sub(a, b)
    return ops.where(Tensor(np.isnan(delta.value)), ops.add(a, b),
                     ops.add(ops.maximum(a, b), ops.log1p(ops.exp(ops.neg(ops.abs_(delta))))))


@numpy_function()
def logaddexp2(x1, x2):
    a, b = promote(x1, x2)
    delta = ops.sub(a, b)
    tail = _operator(ops.div, ops.log1p(ops.pow_(2, ops.neg(ops.abs_(delta)))), NumpyArray(np.log(2)))
    return ops.where(Tensor(np.isnan(delta.value)), ops.add(a, b), ops.add(ops.maximum(a, b), tail))


@numpy_function()
def nextafter(x1, x2):
    a, b = promote(x1, x2)
    return Tensor(np.nextafter(a.value, b.value))


def _integers(x1, x2, what: str):
    a, b = promote(x1, x2)
    if a.dtype.kind not in "iu":
        raise TdfValueError(f"Arguments to {what} must be integers.")
    return a, b


@numpy_function()
def gcd(x1, x2):
    """The greatest common divisor of each pair's absolute values (0 for two zeros)."""
    a, b = _integers(x1, x2, "gcd")
    return Tensor(np.gcd(a.value, b.value))


@numpy_function()
def lcm(x1, x2):
    a, b = _integers(x1, x2, "gcd")
    return Tensor(np.lcm(a.value, b.value))


def _bitwise(name: str, f):
    """np_math_ops._bitwise_binary_op: integers' bits; bools as int8 and back."""
    def run(x1, x2):
        a, b = promote(x1, x2)
        if a.dtype == np.bool_:
            return Tensor(f(a.value, b.value).astype(bool))
        if a.dtype.kind not in "iu":
            raise TdfValueError(f"{name} takes integers or bools, got {a.dtype}")
        return Tensor(f(a.value, b.value))
    run.__name__ = name
    numpy_function(name)(run)


_bitwise("bitwise_and", np.bitwise_and)
_bitwise("bitwise_or", np.bitwise_or)
_bitwise("bitwise_xor", np.bitwise_xor)


@numpy_function()
def bitwise_not(x):
    t = asarray(x)
    if t.dtype != np.bool_ and t.dtype.kind not in "iu":
        raise TdfValueError(f"bitwise_not takes integers or bools, got {t.dtype}")
    return Tensor(np.invert(t.value))


@numpy_function()
def clip(a, a_min, a_max):
    """``a`` clipped to [a_min, a_max] (one of them may be None), the three promoted and broadcast together."""
    if a_min is None and a_max is None:
        raise TdfValueError("Not more than one of `a_min` and `a_max` may be `None`.")
    if a_min is None:
        return _bin_op(_bool_or(ops.logical_and, ops.minimum), a, a_max)
    if a_max is None:
        return maximum(a, a_min)
    values = promote(a, a_min, a_max)
    try:
        common = np.broadcast_shapes(*(v.shape for v in values))
    except ValueError:
        raise ShapeError("clip: the shapes of a, a_min and a_max do not broadcast: " +
                         ", ".join(str(list(v.shape)) for v in values)) from None
    return ops.clip(*(tf_broadcast_to(v, common) for v in values))


# ------------------------------------------------------------------ comparisons and logic

def _comparison(name: str, f, bools_as_ints: bool):
    def run(x1, x2):
        dtype = result_type(x1, x2)
        a, b = asarray(x1, dtype), asarray(x2, dtype)
        if bools_as_ints and dtype == np.bool_:
            a, b = (ops.cast(v, np.dtype(np.int32)) for v in (a, b))
        return f(a, b)
    run.__name__ = name
    numpy_function(name)(run)


for _name, _f, _ints in (("equal", ops.equal, False), ("not_equal", ops.not_equal, False),
                         ("greater", ops.greater, True), ("greater_equal", ops.greater_equal, True),
                         ("less", ops.less, True), ("less_equal", ops.less_equal, True)):
    _comparison(_name, _f, _ints)


@numpy_function()
def array_equal(a1, a2):
    dtype = result_type(a1, a2)
    a, b = asarray(a1, dtype), asarray(a2, dtype)
    same = a.shape == b.shape and bool(np.all(a.value == b.value))
    return Tensor(np.array(same))


def _logical(name: str, f):
    def run(x1, x2):
        return f(asarray(x1, np.dtype(np.bool_)), asarray(x2, np.dtype(np.bool_)))
    run.__name__ = name
    numpy_function(name)(run)


_logical("logical_and", ops.logical_and)
_logical("logical_or", ops.logical_or)
_logical("logical_xor", ops.not_equal)


@numpy_function()
def logical_not(x):
    return ops.logical_not(asarray(x, np.dtype(np.bool_)))


@numpy_function()
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|a - b| <= atol + rtol * |b| for floats (NaNs equal with ``equal_nan``), a == b for integers."""
    x, y = promote(a, b)
    if x.dtype.kind != "f":
        return ops.equal(x, y)
    tolerance = ops.add(Tensor(np.array(to_float(atol, "atol"), dtype=x.dtype)),
                        ops.mul(Tensor(np.array(to_float(rtol, "rtol"), dtype=x.dtype)), ops.abs_(y)))
    result = ops.less_equal(ops.abs_(ops.sub(x, y)), tolerance)
    if truth(equal_nan):
        result = ops.logical_or(result, Tensor(np.isnan(x.value) & np.isnan(y.value)))
    return result


@numpy_function()
def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return all_(isclose(a, b, rtol, atol, equal_nan))


# ------------------------------------------------------------------ products

@numpy_function()
def dot(a, b):
    """a * b for a scalar; else the sum over a's last axis and b's last (a vector) or second-to-last axis."""
    x, y = promote(a, b)
    if x.ndim == 0 or y.ndim == 0:
        return ops.mul(x, y)
    return ops.tensordot(x, y, [[x.ndim - 1], [y.ndim - 1 if y.ndim == 1 else y.ndim - 2]])


@numpy_function()
def vdot(a, b):
    x, y = promote(a, b)
    return dot(ops.reshape(x, (-1,)), ops.reshape(y, (-1,)))


@numpy_function()
def inner(a, b):
    x, y = promote(a, b)
    if x.ndim == 0 or y.ndim == 0:
        return ops.mul(x, y)
    return ops.tensordot(x, y, [[x.ndim - 1], [y.ndim - 1]])


@numpy_function()
def outer(a, b):
    x, y = promote(a, b)
    return ops.mul(ops.reshape(x, (-1, 1)), ops.reshape(y, (-1,)))


@numpy_function()
def matmul(x1, x2):
    """The matrix product: of matrices (batches of them broadcast); a vector on either side is contracted."""
    a, b = promote(x1, x2)
    if a.ndim == 0 or b.ndim == 0:
        raise TdfValueError("matmul: Input operand does not have enough dimensions")
    if b.ndim == 1:
        return ops.tensordot(a, b, 1)
    if a.ndim == 1:
        return ops.tensordot(a, b, [[0], [b.ndim - 2]])
    return ops.matmul(a, b)


@numpy_function()
def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The cross product of the vectors along ``axisa`` of a and ``axisb`` of b (of 2 or 3 components; a 2-d
    vector's third is 0, and two 2-d vectors' product is its third component alone), along ``axisc`` of the
    result, with TensorFlow's Cross kernel's formula (a1 b2 - a2 b1, ...)."""
    x, y = promote(a, b)
    at_a, at_b, at_c = (axisa, axisb, axisc) if axis is None else (axis, axis, axis)
    x, y = (moveaxis(t, to_int(at, "axis"), -1) for t, at in ((x, at_a), (y, at_b)))
    sizes = (x.shape[-1], y.shape[-1])
    if not set(sizes) <= {2, 3}:
        raise TdfValueError(f"incompatible dimensions for cross product (dimension must be 2 or 3): {sizes}")
    x, y = (t if t.shape[-1] == 3 else ops.pad(t, [(0, 0)] * (t.ndim - 1) + [(0, 1)]) for t in (x, y))
    common = np.broadcast_shapes(x.shape, y.shape)
    x, y = (tf_broadcast_to(t, common) for t in (x, y))
    u = [ops.getitem(x, (Ellipsis, i)) for i in range(3)]
    v = [ops.getitem(y, (Ellipsis, i)) for i in range(3)]
    parts = [ops.sub(ops.mul(u[(i + 1) % 3], v[(i + 2) % 3]), ops.mul(u[(i + 2) % 3], v[(i + 1) % 3])) for i in range(3)]
    if sizes == (2, 2):
        return parts[2]
    return moveaxis(ops.stack(parts, -1), -1, to_int(at_c, "axisc"))


@numpy_function()
def kron(a, b):
    """The Kronecker product: each element of ``a`` times all of ``b`` (the lower rank's shape padded with ones in
    front), as np_math_ops.kron's interleaved reshapes and product."""
    x, y = promote(a, b)
    rank = max(x.ndim, y.ndim)
    x, y = (ops.reshape(t, (1,) * (rank - t.ndim) + t.shape) for t in (x, y))
    spread = ops.mul(ops.reshape(x, tuple(d for n in x.shape for d in (n, 1))),
                     ops.reshape(y, tuple(d for n in y.shape for d in (1, n))))
    return ops.reshape(spread, tuple(m * n for m, n in zip(x.shape, y.shape)))


@numpy_function()
def vander(x, N=None, increasing=False):  # noqa: N803 (NumPy's parameter name)
    """The powers of ``x`` (1-d) in columns, decreasing unless ``increasing``."""
    t = asarray(x)
    if t.ndim != 1:
        raise TdfValueError("x must be a one-dimensional array")
    n = t.shape[0] if N is None else to_int(N, "N")
    if n < 0:
        raise TdfValueError("N must be nonnegative")
    powers = np.arange(n) if truth(increasing) else np.arange(n - 1, -1, -1)
    return ops.pow_(ops.reshape(t, (-1, 1)), Tensor(powers.astype(t.dtype)))


@numpy_function()
def tensordot(a, b, axes=2):
    return tf_tensordot(*promote(a, b), axes)


@numpy_function()
def einsum(subscripts, *operands, **kwargs):
    """tf.einsum of the operands, promoted to one dtype (``casting="safe"``) or as they are (``"no"``)."""
    casting = kwargs.get("casting", "safe")
    if casting not in ("safe", "no"):
        raise TdfValueError('Invalid value for argument `casting`. Expected casting="safe" or casting="no". '
                            f"Received: casting={casting}")
    values = promote(*operands) if casting == "safe" else [asarray(x) for x in operands]
    return ops.einsum(subscripts, *values)


@numpy_function()
def polyval(p, x):
    """p[0] * x**(n-1) + ... + p[n-1] by Horner's rule (tf.math.polyval), p and x promoted together."""
    coeffs, t = promote(p, x)
    if coeffs.ndim == 0:
        coeffs = ops.reshape(coeffs, (1,))
    rows = ops.rows(coeffs)
    value = rows[0]
    for c in rows[1:]:
        value = ops.add(c, ops.mul(value, t))
    return tf_broadcast_to(value, t.shape) if len(rows) == 1 else value


@numpy_function()
def trace(a, offset=0, axis1=0, axis2=1, dtype=None):
    """The sum of a diagonal: tf.linalg.trace's (in the array's dtype) where that is the last two axes' main
    diagonal, else NumPy's sum of it."""
    want = numpy_dtype(dtype)
    t = asarray(a, want)
    first, second = (check_axis(to_int(v, "axis"), t.ndim, "trace") for v in (axis1, axis2))
    if to_int(offset, "offset") == 0 and (first, second) == (t.ndim - 2, t.ndim - 1):
        return ops.trace(t)
    return sum_(diagonal(t, offset, axis1, axis2), -1, dtype)


@numpy_function()
def diff(a, n=1, axis=-1):
    """The ``n``-th differences along ``axis`` (a bool array's are its changes: !=)."""
    t = asarray(a)
    at = to_int(axis, "axis")
    times = to_int(n, "n")
    if t.ndim == 0 or (at + t.ndim if at < 0 else at) >= t.ndim:
        raise TdfValueError(f"Argument `axis` (received axis={at}) is out of bounds for input of rank {t.ndim}.")
    if times < 0:
        raise TdfValueError(f"Argument `order` must be a non-negative integer. Received: axis={times}")
    after = tuple(slice(1, None) if i == at % t.ndim else slice(None) for i in range(t.ndim))
    before = tuple(slice(None, -1) if i == at % t.ndim else slice(None) for i in range(t.ndim))
    op = ops.not_equal if t.dtype == np.bool_ else ops.sub
    for _ in range(times):
        t = op(ops.getitem(t, after), ops.getitem(t, before))
    return t


# ------------------------------------------------------------------ real numbers' complex parts
# (tapecli's tensors are real: a real array is its own real part and conjugate, its imaginary part is zeros)

@numpy_function()
def real(val):
    return asarray(val)


@numpy_function()
def imag(val):
    t = asarray(val)
    return Tensor(np.zeros(t.shape, dtype=t.dtype))


@numpy_function("conj", "conjugate")
def conj(x):
    return asarray(x)


@numpy_function()
def angle(z, deg=False):
    """pi where a real number is negative, else 0 (tf.where of Python numbers: float32), in degrees with ``deg``."""
    negative = ops.less(as_float(asarray(z)), 0)
    y = ops.where(negative, Tensor(np.array(np.pi, dtype=np.float32)), Tensor(np.array(0.0, dtype=np.float32)))
    return rad2deg(y) if truth(deg) else y


@numpy_function()
def iscomplex(x):
    return ops.not_equal(imag(x), 0)


@numpy_function()
def isreal(x):
    return ops.equal(imag(x), 0)


@numpy_function()
def iscomplexobj(x):
    asarray(x)
    return PythonBool(np.array(False))


@numpy_function()
def isrealobj(x):
    asarray(x)
    return PythonBool(np.array(True))


@numpy_function()
def promote_types(type1, type2):
    """NumPy's promotion of two dtypes, as NumPy's dtype."""
    return NumpyDType(np.promote_types(numpy_dtype(type1), numpy_dtype(type2)).name)


@numpy_function()
def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """``num`` numbers evenly spaced on a log scale (np_math_ops.geomspace over real numbers: logspace of the
    logarithms of |start| and |stop|, the sign given back)."""
    count = to_int(num, "num")
    want = numpy_dtype(dtype) or result_type(start, stop, float(count), default_float())
    computing = np.promote_types(want, np.float32)
    a, b = asarray(start, computing), asarray(stop, computing)
    flip = ops.sub(1, ops.floordiv(ops.mul(ops.sub(1, ops.sign(a)), ops.sub(1, ops.sign(b))), 2))
    logs = [_operator(ops.div, ops.log(ops.mul(flip, t)), NumpyArray(np.log(10))) for t in (a, b)]
    result = ops.mul(flip, logspace(logs[0], logs[1], count, endpoint))
    at = to_int(axis, "axis")
    return ops.cast(result if at == 0 else moveaxis(result, 0, at), want)


# ------------------------------------------------------------------ NumPy behaviour

def _reshape_method(t, *newshape, order="C"):
    """``t.reshape(2, 3)`` or ``t.reshape((2, 3))`` (np_array_ops._reshape_method_wrapper)."""
    shape = newshape[0] if len(newshape) == 1 and not (is_python(newshape[0]) and newshape[0].ndim == 0) \
        else list(newshape)
    return reshape(t, shape, order)


def _max_method(t, axis=None, out=None, keepdims=None):
    return amax(t, axis, out, keepdims)


def _min_method(t, axis=None, out=None, keepdims=None):
    return amin(t, axis, out, keepdims)


# The methods experimental_enable_numpy_behavior gives tensors (np_math_ops._enable_numpy_methods): .T, .ndim,
# .size and .tolist() tensors have on tapecli's interpreter already.
_METHODS = {"reshape": _reshape_method, "ravel": ravel, "flatten": flatten, "transpose": transpose, "clip": clip,
            "astype": tf_cast, "max": _max_method, "min": _min_method, "mean": mean}


@numpy_function()
def experimental_enable_numpy_behavior(prefer_float32=False, dtype_conversion_mode="legacy"):
    """TensorFlow's NumPy behaviour, for the rest of the run: tensors' operators promote mixed dtypes as NumPy does,
    tensors gain NumPy's methods (``t.reshape(2, 3)``, ``t.astype(...)``), and with ``prefer_float32`` a Python float
    is read as float32. The newer "safe" and "all" conversion modes (weak tensors) are not supported."""
    if dtype_conversion_mode not in ("off", "legacy", "safe", "all"):
        raise TdfValueError(f"The provided promotion mode {dtype_conversion_mode} does not exist. Make sure the "
                            "provided dtype conversion mode is one of the followings: 'off', 'legacy', 'safe' or 'all'.")
    if dtype_conversion_mode in ("safe", "all"):
        raise TdfValueError(f"experimental_enable_numpy_behavior: tapecli does not support dtype_conversion_mode="
                            f"{dtype_conversion_mode!r} (TensorFlow's weak tensors); 'legacy' and 'off' are supported")
    current().numpy_behavior = NumpyBehavior(dtype_conversion_mode == "legacy", truth(prefer_float32), _METHODS)

