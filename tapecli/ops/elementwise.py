"""Elementwise ops: arithmetic, comparisons, unary math, activations, where, clip, cast."""
from __future__ import annotations

import math
import operator

import numpy as np

from tapecli import kernels
from tapecli.kernels import numpy_kernels, tf_float32
from tapecli.lazymodule import LazyModule
from tapecli.errors import KernelValueError, TdfTypeError
from tapecli.ops import remapper
from tapecli.ops.core import _elementwise, _ew_jvp, _ew_vjp, _unary, apply, materialize, OPS, register, to_tensor
from tapecli.runtime.context import current
from tapecli.runtime.tape import Stub
from tapecli.runtime.values import dtype_name, is_float, python_int, Tensor, Variable

tf_rcpps = LazyModule("tapecli.kernels.tf_rcpps", globals())     # (pow's x ** -0.5 alone: on first use)
tf_onednn_eltwise = LazyModule("tapecli.kernels.tf_onednn_eltwise", globals())     # (fused activations: remapper.py)


# ------------------------------------------------------------ elementwise ops

def _g(m, g, a, b, y, at):
    return g


# (numba="formula": the Numba kernel is the formula's loop, one IEEE operation a element as NumPy's; the NumPy
# kernels of the arithmetic run along a bias's rows, numpy_kernels._widened)
NEG = _elementwise("neg", (lambda m, g, x, y, at: m.neg(g),), (), weak_arith=True, numpy=np.negative, numba="formula",
                   fusion="(-{0})", python=operator.neg)
ADD = _elementwise("add", (_g, _g), (), weak_arith=True, numpy=numpy_kernels.add, numba="formula", fusion="({0} + {1})",
                   strings=True, scalar_operator=operator.add, python=operator.add)
SUB = _elementwise("sub", (_g, lambda m, g, a, b, y, at: m.neg(g)), (), weak_arith=True, numpy=numpy_kernels.sub,
                   numba="formula", fusion="({0} - {1})", scalar_operator=operator.sub, python=operator.sub)
MUL = _elementwise("mul", (lambda m, g, a, b, y, at: m.mul(g, b), lambda m, g, a, b, y, at: m.mul(g, a)), (0, 1),
                   weak_arith=True, numpy=numpy_kernels.mul, numba="formula", fusion="({0} * {1})",
                   scalar_operator=operator.mul, python=operator.mul)
# (TensorFlow's RealDiv gradient: grad / b, and grad * ((-a / b) / b), rounded in that order)
DIV = _elementwise("div", (lambda m, g, a, b, y, at: m.div(g, b),
                           lambda m, g, a, b, y, at: m.mul(g, m.div(m.div(m.neg(a), b), b))), (0, 1), weak_arith=True,
                   numpy=numpy_kernels.div, numba="formula", fusion="({0} / {1})", scalar_operator=operator.truediv)
FLOORDIV = register("floordiv", numpy=numpy_kernels.floordiv, weak_arith=True, differentiable=False,
                    python=operator.floordiv)
# floor-mod with TensorFlow's gradient: d/da = 1, d/db = -floor(a / b)
MOD = _elementwise("mod", (_g, lambda m, g, a, b, y, at: m.mul(g, m.neg(m.floor(m.div(a, b))))), (0, 1),
                   weak_arith=True, numpy=numpy_kernels.floormod, python=operator.mod)


def _pow_grad_exponent(m, g, a, b, y, at):
    positive = m.greater(a, 0)
    safe_log = m.log(m.where(positive, a, m.ones_like(a)))
    return m.mul(g, m.mul(y, m.where(positive, safe_log, m.zeros_like(safe_log))))


def _python_pow(a, b):
    """Python's a ** b, but None for integers far past 64 bits (found before it is computed: 2 ** 10**12)."""
    return None if b.__class__ is int and a.__class__ is int and b > 64 and abs(a) > 1 else a ** b


def _pow_kernel(a, b, out=None):
    """TensorFlow's Pow. Inside a tf.function Grappler's arithmetic optimizer (ConvertPowStage) replaces a Pow of
    a constant exponent by another op first: 2 by Square, 3 by x Square(x), 0.5 by Sqrt, -1 by Reciprocal and
    -0.5 by Rsqrt (tf_float32's: on a float32 tensor the CPU's approximations, where tapecli knows them; a float32
    Rsqrt elsewhere is left to Pow); 1 and 0 give x and ones as Pow does. A literal exponent reaches the
    kernel as a NumPy scalar (a tensor's as an array: a tf.constant made in the function, a Const there too, keeps
    Pow), and Pow's gradient's pow(x, y - 1) of it as one too, as TensorFlow folds y - 1 into a Const."""
    if b.__class__ in _FLOAT_SCALARS and current().functions > 0 and a.dtype in _GRAPPLER_POW_DTYPES:
        e = float(b)
        if e == 2.0:
            return np.multiply(a, a, out=out)
        if e == 3.0:
            return np.multiply(a, a * a, out=out)
        if e == 0.5:
            return np.sqrt(a, out=out)
        if e == -1.0:
            return tf_float32.reciprocal(a, out=out)
        if e == -0.5 and (a.dtype == np.float64 or tf_rcpps.known()):
            return tf_float32.rsqrt(a, out=out)
    return tf_float32.pow_(a, b, out=out)


_pow_kernel.writes_out = True
_FLOAT_SCALARS = (np.float32, np.float64)
_GRAPPLER_POW_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
POW = _elementwise("pow", (lambda m, g, a, b, y, at: m.mul(m.mul(g, b), m.pow_(a, m.sub(b, 1))), _pow_grad_exponent),
                   (0, 1, "out"), weak_arith=True, numpy=_pow_kernel, numba=True, program=("pow",), public_name="pow_",
               fusion="math.pow({0}, {1})", python=_python_pow)
MAXIMUM = _elementwise("maximum", (lambda m, g, a, b, y, at: m.where(m.greater_equal(a, b), g, m.zeros_like(g)),
                                   lambda m, g, a, b, y, at: m.where(m.greater_equal(a, b), m.zeros_like(g), g)),
                       (0, 1), numpy=np.maximum, numba="formula", program=("maximum",), fusion="maximum({0}, {1})")
MINIMUM = _elementwise("minimum", (lambda m, g, a, b, y, at: m.where(m.less_equal(a, b), g, m.zeros_like(g)),
                                   lambda m, g, a, b, y, at: m.where(m.less_equal(a, b), m.zeros_like(g), g)),
                       (0, 1), numpy=np.minimum, numba="formula", program=("minimum",), fusion="minimum({0}, {1})")

for _name in ("less", "less_equal", "greater", "greater_equal", "equal", "not_equal"):
    register(_name, numpy=getattr(np, _name), weak_arith=True, differentiable=False, strings=_name in ("equal", "not_equal"))
for _name in ("logical_and", "logical_or"):
    register(_name, numpy=getattr(np, _name), weak_arith=True, differentiable=False)
register("logical_not", numpy=np.logical_not, weak_arith=True, differentiable=False)
# tf.bitwise on integer tensors (the other operand's dtype must match: no promotion)
for _name, _python in (("bitwise_and", operator.and_), ("bitwise_or", operator.or_), ("bitwise_xor", operator.xor),
                      ("left_shift", lambda a, b: None if b > 64 and a else a << b), ("right_shift", operator.rshift)):
    register(_name, numpy=getattr(np, _name), weak_arith=True, differentiable=False, python=_python)
register("invert", numpy=np.invert, weak_arith=True, differentiable=False)
# (the bare name round is Python's, library/python.py: a Python number's round, a tensor's this op)
register("round", numpy=np.round, differentiable=False, numba=True, program=("tf.round", "math.round"),
         public_name="round_")
register("floor", numpy=np.floor, differentiable=False, numba=True, program=("floor",))
register("ceil", numpy=np.ceil, differentiable=False, numba=True, program=("ceil",))
# TensorFlow's SignGrad: zeros (not None), for any input dtype
register("sign", numpy=np.sign, grads=(lambda m, g, x, y, at: m.zeros_like(g),), vjp=_ew_vjp, jvp=_ew_jvp, saves=(), numba=True,
         program=("sign",))


_SQRT_PI = math.sqrt(math.pi)

SIN = _unary("sin", numpy=tf_float32.sin, numba=True, deriv=lambda m, x, y, at: m.cos(x), fusion="math.sin({0})")
COS = _unary("cos", numpy=tf_float32.cos, numba=True, deriv=lambda m, x, y, at: m.neg(m.sin(x)), fusion="math.cos({0})")
TAN = _unary("tan", numpy=tf_float32.tan, numba=True, deriv=lambda m, x, y, at: m.add(1, m.square(y)), saves=("out",))
EXP = _unary("exp", numpy=tf_float32.exp, numba=True, deriv=lambda m, x, y, at: y, saves=("out",), fusion="_exp({0})")
LOG = _unary("log", numpy=tf_float32.log, numba=True, deriv=lambda m, x, y, at: m.reciprocal(x), fusion="_log({0})")
LOG1P = _unary("log1p", numpy=tf_float32.log1p, numba=True, deriv=lambda m, x, y, at: m.reciprocal(m.add(x, 1)))
# TensorFlow's SqrtGrad and RsqrtGrad kernels (Eigen's scalar_sqrt_gradient_op, scalar_rsqrt_gradient_op) give 0
# where the upstream gradient is 0, whatever the output: an unused tf.where branch at sqrt(0) passes 0, not nan
SQRT = _unary("sqrt", numpy=np.sqrt, numba="formula", saves=("out",), fusion="math.sqrt({0})",
              grads=(lambda m, g, x, y, at: m.sqrt_grad(y, g),))
# TensorFlow's SqrtGrad(y, g), its packets' and its scalar tail's orders (tf_float32.sqrt_grad); its gradient is
# _SqrtGradGrad's: ga = g' / y, (-ga * out, 0.5 * ga)
SQRT_GRAD = _elementwise("sqrt_grad", (
    lambda m, gg, y, g, out, at: m.mul(m.neg(m.div(gg, y)), out),
    lambda m, gg, y, g, out, at: m.mul(0.5, m.div(gg, y))), (0, "out"), numpy=tf_float32.sqrt_grad, float_only=True)
RSQRT = _unary("rsqrt", numpy=tf_float32.rsqrt, numba="formula", saves=("out",), fusion="(_F(1.0) / math.sqrt({0}))",
               grads=(lambda m, g, x, y, at: m.multiply_no_nan(m.mul(-0.5, m.square(y)), m.multiply_no_nan(y, g)),))


def _multiply_no_nan(a, b):
    with np.errstate(invalid="ignore"):
        return np.where(b == 0, np.zeros((), a.dtype), a * b).astype(np.result_type(a, b))


# MulNoNan's gradient: mul_no_nan(g, y) for x, mul_no_nan(x, g) for y (the products, where g is not 0)
MULTIPLY_NO_NAN = _elementwise("multiply_no_nan", (lambda m, g, a, b, y, at: m.mul(g, b),
                                                   lambda m, g, a, b, y, at: m.mul(a, g)), (0, 1),
                               numpy=_multiply_no_nan, float_only=True, program=("multiply_no_nan",))


# TensorFlow's Reciprocal (tf.math.reciprocal, and the gradients that call it): its ReciprocalGrad kernel, Eigen's
# scalar_inverse_gradient_op, is mul_no_nan(-(y * y), upstream), 0 where the upstream gradient is 0
RECIPROCAL = _unary("reciprocal", numpy=tf_float32.reciprocal, saves=("out",), program=(),
                    grads=(lambda m, g, x, y, at: m.multiply_no_nan(m.neg(m.square(y)), g),))
SQUARE = _unary("square", numpy=np.square, float_only=False, numba="formula", deriv=lambda m, x, y, at: m.mul(2, x),
                fusion="({0} * {0})")
TANH = _unary("tanh", numpy=tf_float32.tanh, numba=True, grads=(lambda m, g, x, y, at: m.tanh_grad(y, g),), saves=("out",),
              fusion="_tanh({0})")
# TensorFlow's TanhGrad(y, g) (one op: a second derivative sums what reaches y in its order); its gradient is
# _TanhGradGrad's: (g' * -2 * g * y, TanhGrad(y, g'))
TANH_GRAD = _elementwise("tanh_grad", (
    lambda m, gg, y, g, out, at: m.mul(m.mul(m.mul(gg, -2.0), g), y),
    lambda m, gg, y, g, out, at: m.tanh_grad(y, gg)), (0, 1), numpy=tf_float32.tanh_grad, float_only=True)
SIGMOID = _unary("sigmoid", numpy=numpy_kernels.sigmoid, numba=True, grads=(lambda m, g, x, y, at: m.sigmoid_grad(y, g),),
                 saves=("out",), fusion="_sigmoid({0})")
# TensorFlow's SigmoidGrad(y, g), the order of its products its own on Eigen's scalar tail (tf_float32.sigmoid_grad);
# its gradient is _SigmoidGradGrad's: (g' g - 2 (g' g) y, SigmoidGrad(y, g'))
SIGMOID_GRAD = _elementwise("sigmoid_grad", (
    lambda m, gg, y, g, out, at: m.sub(m.mul(gg, g), m.mul(m.mul(m.mul(gg, g), 2.0), y)),
    lambda m, gg, y, g, out, at: m.sigmoid_grad(y, gg)), (0, 1), numpy=tf_float32.sigmoid_grad, float_only=True)
SOFTPLUS = _unary("softplus", numpy=numpy_kernels.softplus, numba=True, deriv=lambda m, x, y, at: m.sigmoid(x),
                  fusion="_softplus({0})")


def _elu_grad(m, g, x, y, at):
    """TensorFlow's EluGrad, ``y < 0 ? (y + 1) * g : g`` of tf.nn.elu's output y; for Keras's other alphas,
    ``where(x > 0, elu, alpha * elu)``, of tf.nn.elu's output and the gradient that where and product give it
    (``g``, or ``g * alpha`` where x <= 0: not y + alpha, which is inf - inf for an infinite alpha)."""
    alpha = at["alpha"]
    if alpha == 1.0:
        return m.where(m.less(y, 0), m.mul(m.add(y, 1), g), g)
    elu = m.elu(x)
    upstream = m.where(m.greater(x, 0), g, m.mul(g, alpha))
    return m.where(m.less(elu, 0), m.mul(m.add(elu, 1), upstream), upstream)


ELU = _unary("elu", numpy=numpy_kernels.elu, numba=True, program=(), saves=(0, "out"), grads=(_elu_grad,))
# oneDNN's kernels of the activations Grappler fuses into a MatMul in a tf.function (ops/remapper.py), the Eigen
# ops' gradients reading their outputs
for _op, _kernel in ((TANH, lambda x: tf_onednn_eltwise.tanh(x)), (SIGMOID, lambda x: tf_onednn_eltwise.logistic(x)),
                     (ELU, lambda x, alpha: tf_onednn_eltwise.elu(x))):
    remapper.fused(_op.name, _unary(f"onednn_{_op.name}", numpy=_kernel, program=(), saves=_op.saves,
                                    grads=_op.grads))


def _silu(x, beta=1.0):
    """tf.nn.silu: ``x * sigmoid(beta * x)``."""
    return x * numpy_kernels.sigmoid(x * x.dtype.type(beta))


def _silu_grad(m, g, x, y, at):
    """tf.nn.silu's own gradient (its custom gradient, not the product's): ``g * (s * (1 + bx * (1 - s)))``, s the
    sigmoid of bx = beta * x."""
    bx = m.mul(x, at["beta"])
    s = m.sigmoid(bx)
    return m.mul(g, m.mul(s, m.add(1, m.mul(bx, m.sub(1, s)))))


SILU = _unary("silu", numpy=_silu, program=(), grads=(_silu_grad,))
# oneDNN's swish (_MklSwish) in a tf.function: silu's, and ``x * sigmoid(x)`` written out (mul)
remapper.fused("silu", _unary("onednn_silu", numpy=lambda x, beta: tf_onednn_eltwise.swish(x), program=(),
                              grads=SILU.grads))
# TensorFlow's _Expm1Grad: g * exp(x)
EXPM1 = _unary("expm1", numpy=tf_float32.expm1, deriv=lambda m, x, y, at: m.exp(x), fusion="math.expm1({0})")
# TensorFlow's _ErfGrad: (grad * 2/sqrt(pi)) * exp(-x^2), in that order
ERF = _unary("erf", numpy=numpy_kernels.erf, numba=True,
             grads=(lambda m, g, x, y, at: m.mul(m.mul(g, 2 / _SQRT_PI), m.exp(m.neg(m.square(x)))),))

# relu, abs and leaky_relu route their gradient through masked_grad, whose own
# gradient w.r.t. x is zeros: their second derivative is zeros, not None (TensorFlow).
# relu reads its output (y > 0 exactly where x > 0), so a record keeps y, not x.
MASKED_GRAD = _elementwise("masked_grad", (lambda m, g, gi, x, y, at: m.masked_grad(g, x, **at),
                                           lambda m, g, gi, x, y, at: m.zeros_like(g)), (1,), unify=(0,),
                           numpy=numpy_kernels.masked_grad, numba=True)


def _masked(kind, saves):
    src = (lambda x, y: y) if kind == "relu" else (lambda x, y: x)
    return dict(grads=(lambda m, g, x, y, at: m.masked_grad(g, src(x, y), kind=kind, alpha=at.get("alpha", 0.2)),),
                saves=saves, vjp=_ew_vjp, jvp=_ew_jvp)


RELU = register("relu", numpy=numpy_kernels.relu, **_masked("relu", ("out",)), numba="formula", program=("relu",),
                fusion="relu({0}, _F(0.0))")
# (a Python number's abs is a number: Python's abs(-2.0); tf.abs converts its literal first, registry.converting)
ABS = register("abs", numpy=np.abs, **_masked("abs", (0,)), numba="formula", program=("abs",), public_name="abs_",
               fusion="abs({0})", weak_arith=True, python=abs)
LEAKY_RELU = register("leaky_relu", numpy=numpy_kernels.leaky_relu, float_only=True, **_masked("leaky_relu", (0,)), numba=True,
                      fusion="({0} if {0} > _F(0.0) else {0} * _F({alpha!r}))")

WHERE = _elementwise("where", (None, lambda m, g, c, a, b, y, at: m.where(c, g, m.zeros_like(g)),
                               lambda m, g, c, a, b, y, at: m.where(c, m.zeros_like(g), g)), (0,), unify=(1, 2),
                    numpy=numpy_kernels.where, numba=True, strings=True)
CLIP = _elementwise("clip", (
    lambda m, g, x, lo, hi, y, at: m.where(m.logical_and(m.greater_equal(x, lo), m.less_equal(x, hi)), g,
                                           m.zeros_like(g)),
    lambda m, g, x, lo, hi, y, at: m.where(m.less(x, lo), g, m.zeros_like(g)),
    lambda m, g, x, lo, hi, y, at: m.where(m.greater(x, hi), g, m.zeros_like(g))), (0, 1, 2),
                    numpy=numpy_kernels.clip, numba=True)


def _cast_vjp(r, g):
    return (cast(g, r.inputs[0].dtype),) if is_float(r.inputs[0].dtype) else (None,)


# No forward-mode rule: a jacobian through a cast is taken in reverse mode.
CAST = register("cast", numpy=numpy_kernels.cast, unify=(), vjp=_cast_vjp, saves=())
CAST_TO_INT = register("cast_to_int", kernel="cast", unify=(), differentiable=False)


def neg(x): return apply(NEG, (x,))
def sigmoid_grad(y, g): return apply(SIGMOID_GRAD, (y, g))
def tanh_grad(y, g): return apply(TANH_GRAD, (y, g))
def sqrt_grad(y, g): return apply(SQRT_GRAD, (y, g))


def add(a, b):
    result = apply(ADD, (a, b))
    if current().remapped is not None:      # (in a tf.function, after a MatMul: ops/remapper.py)
        remapper.biased(a, b, result, False)
    return result


def _add_n_jvp(r, ts):
    present = [t for t in ts if t is not None]
    return present[0] if len(present) == 1 else apply(ADD_N, tuple(present))


# TensorFlow's AddN (tf.add_n): its inputs, of one shape and dtype, summed in blocks of 8 (numpy_kernels.add_n_order);
# each input's gradient is the one received
ADD_N = register("add_n", numpy=numpy_kernels.add_n, saves=(), vjp=lambda r, g: (g,) * len(r.inputs), jvp=_add_n_jvp)


def add_n(xs) -> Tensor:
    return apply(ADD_N, tuple(xs))


def sub(a, b): return apply(SUB, (a, b))


def mul(a, b):
    if current().remapped is not None and (x := remapper.written_swish(a, b)) is not None:
        return apply(remapper.FUSED["silu"][0], (x,), beta=1.0)        # (x * sigmoid(x) in a tf.function)
    return apply(MUL, (a, b))


def div(a, b):
    narrow = _narrow_division(a, b)
    if narrow is not None:      # TensorFlow's truediv: 8- and 16-bit integers divide as float32 (wider ones float64)
        a, b = (cast(t if not t.weak else materialize(t, narrow), np.float32) for t in (to_tensor(a), to_tensor(b)))
    return apply(DIV, (a, b))


def _narrow_division(a, b):
    """The dtype of a division of 8- or 16-bit integers (a literal beside one takes its dtype), else None."""
    dtypes = {x.dtype for x in (a, b) if isinstance(x, (Tensor, Variable)) and not getattr(x, "weak", False)}
    if len(dtypes) == 1:
        dtype = dtypes.pop()
        if dtype.kind in "iu" and dtype.itemsize <= 2:
            return dtype
    return None
def floordiv(a, b): return apply(FLOORDIV, (a, b))
def mod(a, b): return apply(MOD, (a, b))
def pow_(a, b): return apply(POW, (a, b))
def maximum(a, b): return apply(MAXIMUM, (a, b))
def minimum(a, b): return apply(MINIMUM, (a, b))
def less(a, b): return apply(OPS["less"], (a, b))
def less_equal(a, b): return apply(OPS["less_equal"], (a, b))
def greater(a, b): return apply(OPS["greater"], (a, b))
def greater_equal(a, b): return apply(OPS["greater_equal"], (a, b))
def equal(a, b): return apply(OPS["equal"], (a, b))
def not_equal(a, b): return apply(OPS["not_equal"], (a, b))
def logical_and(a, b): return apply(OPS["logical_and"], (a, b))
def logical_or(a, b): return apply(OPS["logical_or"], (a, b))
def logical_not(a): return apply(OPS["logical_not"], (a,))
def bitwise_and(a, b): return apply(OPS["bitwise_and"], (a, b))
def bitwise_or(a, b): return apply(OPS["bitwise_or"], (a, b))
def bitwise_xor(a, b): return apply(OPS["bitwise_xor"], (a, b))
def invert(a): return apply(OPS["invert"], (a,))
def left_shift(a, b): return apply(OPS["left_shift"], (a, b))
def right_shift(a, b): return apply(OPS["right_shift"], (a, b))


# Python's & | ^ ~ on tensors, as TensorFlow's Tensor operators: the logical ops on bool tensors, tf.bitwise's
# on integer tensors; the tensor operand (the left one where both are) decides which.
_LOGICAL = {"&": "logical_and", "|": "logical_or", "^": "not_equal", "~": "logical_not"}
_BITWISE = {"&": "bitwise_and", "|": "bitwise_or", "^": "bitwise_xor", "~": "invert"}


def bitwise_operator(symbol: str, *operands) -> Tensor:
    tensors = [to_tensor(x) for x in operands]
    lead = next((t for t in tensors if not t.weak), tensors[0])
    kinds = {t.value.dtype.kind for t in tensors}
    if lead.value.dtype.kind == "b" and (kinds == {"b"}):
        return apply(OPS[_LOGICAL[symbol]], tensors)
    if lead.value.dtype.kind in "iu" and kinds <= set("biu"):
        return apply(OPS[_BITWISE[symbol]], tensors)
    words = " and ".join(dtype_name(t.dtype) + (" (a literal)" if t.weak else "") for t in tensors)
    raise TdfTypeError(f"'{symbol}' takes bool tensors (logical) or integer tensors (bitwise), got {words}",
                       hint="compare first (x > 0) or cast to an integer dtype")


def sin(x): return apply(SIN, (x,))
def cos(x): return apply(COS, (x,))
def tan(x): return apply(TAN, (x,))
def exp(x): return apply(EXP, (x,))
def log(x): return apply(LOG, (x,))
def log1p(x): return apply(LOG1P, (x,))
def sqrt(x): return apply(SQRT, (x,))
def rsqrt(x): return apply(RSQRT, (x,))
def square(x): return apply(SQUARE, (x,))
def tanh(x): return apply(remapper.activation(TANH, x), (x,))
def silu(x, beta=1.0): return apply(remapper.swish(SILU, x, beta), (x,), beta=float(beta))


def sigmoid(x):
    result = apply(remapper.activation(SIGMOID, x), (x,))
    if current().functions:
        remapper.sigmoid_of(x, result)
    return result


def softplus(x): return apply(SOFTPLUS, (x,))
def relu(x): return apply(RELU, (x,))
def abs_(x): return apply(ABS, (python_int(x),))      # (Python's bool is an int: abs(True) is 1)
def sign(x): return apply(OPS["sign"], (x,))
def erf(x): return apply(ERF, (x,))
def round_(x): return apply(OPS["round"], (x,))
def floor(x): return apply(OPS["floor"], (x,))
def ceil(x): return apply(OPS["ceil"], (x,))
def elu(x, alpha=1.0): return apply(remapper.activation(ELU, x) if alpha == 1.0 else ELU, (x,), alpha=float(alpha))
def leaky_relu(x, alpha=0.2): return apply(LEAKY_RELU, (x,), alpha=float(alpha))
def masked_grad(g, x, kind, alpha=0.2): return apply(MASKED_GRAD, (g, x), kind=kind, alpha=alpha)
def where(c, a, b): return apply(WHERE, (c, a, b))
def clip(x, lo, hi): return apply(CLIP, (x, lo, hi))
def reciprocal(x): return apply(RECIPROCAL, (x,))


def cast(x, dtype) -> Tensor:
    x = to_tensor(x)
    dtype = np.dtype(dtype)
    if x.weak:
        x = Tensor(x.value)  # a literal is cast from its exact value
    if x.dtype == dtype:
        return x
    if x.dtype.hasobject or dtype.hasobject:          # (tf.strings.as_string and to_number convert)
        names = {"float32": "float", "float64": "double"}       # (the kernel's C++ names)
        a, b = (names.get(dtype_name(d), dtype_name(d)) for d in (x.dtype, dtype))
        raise KernelValueError(f"Cast {a} to {b} is not supported [Op:Cast]")
    return apply(CAST if is_float(dtype) else CAST_TO_INT, (x,), dtype=dtype)



def _shape_dtype(x):
    if x.__class__ is not Tensor and x.__class__ is not Stub:
        x = to_tensor(x)
    return x.shape, x.dtype


def zeros_like(x) -> Tensor:
    shape, dtype = _shape_dtype(x)
    return Tensor(kernels.zeros(shape, dtype))


def ones_like(x) -> Tensor:
    shape, dtype = _shape_dtype(x)
    return Tensor(kernels.ones(shape, dtype))


def divide_no_nan(x, y) -> Tensor:
    """x / y, 0 where y is 0 (and its gradients 0 there), as tf.math.divide_no_nan: a composition, so its
    gradient is the primitives'."""
    tx, ty = to_tensor(x), to_tensor(y)
    zero = equal(ty, 0)
    safe = where(zero, ones_like(ty) if not ty.weak else 1.0, ty)
    q = div(tx, safe)
    return where(zero, zeros_like(q), q)


def stop_gradient(x) -> Tensor:
    t = to_tensor(x)
    return Tensor(t.value, weak=t.weak)       # a literal stays a literal (§11)
