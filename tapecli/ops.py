"""The op table: each op's forward kernel, gradient rule and forward-mode rule, side by side.

Gradient rules (``vjp``) and forward-mode rules (``jvp``) are written with the public
op functions below, so the backward pass is itself recorded on any tape that
watches what it touches. ``vjp=None`` on a differentiable op means "no gradient
registered" (a GradientError at backward time); ``differentiable=False`` means the
op cuts the path: its output is never recorded.
"""
from __future__ import annotations

import math

import numpy as np

from . import kernels
from .errors import ShapeError, TdfTypeError
from .numerics import NUMERICS
from .provenance import PROVENANCE
from .runtime import STATE
from .tape import ACTIVE, Record
from .values import Tensor, Variable, convert_weak, dtype_name, is_float, literal_array


class Op:
    __slots__ = ("name", "kernel", "vjp", "jvp", "differentiable", "weak_arith", "unify", "float_only")

    def __init__(self, name, *, kernel=None, vjp=None, jvp=None, differentiable=True, weak_arith=False,
                 unify="all", float_only=False):
        self.name = name
        self.kernel = kernel or name
        self.vjp = vjp
        self.jvp = jvp
        self.differentiable = differentiable
        self.weak_arith = weak_arith      # all-literal inputs give a literal (Python arithmetic)
        self.unify = unify                # indices of inputs that must share one dtype
        self.float_only = float_only

    def __repr__(self):
        return f"Op({self.name})"


OPS: dict[str, Op] = {}


def register(name, **kw) -> Op:
    op = Op(name, **kw)
    OPS[name] = op
    return op


# ------------------------------------------------------------------- applying

def to_tensor(x) -> Tensor:
    """A program value as an op input: variables are read, numbers become literals."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, Variable):
        for tape in ACTIVE:
            if tape.watch_accessed_variables and x.trainable and tape.recording:
                tape.watch_variable(x, "accessed", STATE.line)
        if PROVENANCE.enabled and ACTIVE:
            PROVENANCE.read(x, ACTIVE, STATE.line)
        return x.read()
    if isinstance(x, (bool, int, float, np.ndarray, np.generic)):
        return Tensor(literal_array(x), weak=not isinstance(x, (np.ndarray, np.generic)))
    raise TdfTypeError(f"expected a tensor, got {_word(x)}")


def _word(x) -> str:
    from .tape import type_word
    return type_word(x)


def default_dtype(value: np.ndarray) -> np.dtype:
    """The dtype a literal takes on its own: float32 (or --dtype), int32, bool."""
    if value.dtype.kind == "f":
        return STATE.float_dtype
    if value.dtype.kind in "iu":
        return np.dtype(np.int32)
    return value.dtype


def materialize(t: Tensor, dtype=None) -> Tensor:
    """A literal as a tensor of ``dtype`` (its default dtype if None)."""
    if not t.weak:
        return t
    return Tensor(convert_weak(t.value, np.dtype(dtype) if dtype is not None else default_dtype(t.value)))


def _unify(op: Op, tensors: list[Tensor]) -> list[Tensor]:
    idx = range(len(tensors)) if op.unify == "all" else op.unify
    group = [tensors[i] for i in idx]
    strong = [t for t in group if not t.weak]
    if strong:
        dtype = strong[0].dtype
        for t in strong[1:]:
            if t.dtype != dtype:
                a, b = dtype_name(dtype), dtype_name(t.dtype)
                raise TdfTypeError(f"{op.name} got tensors of different dtypes: {a} and {b}",
                                   hint=f"convert one with cast(x, {a}) or cast(x, {b})")
        for i in idx:
            if tensors[i].weak:
                tensors[i] = materialize(tensors[i], dtype)
    elif group and not op.weak_arith:
        for i in idx:
            tensors[i] = materialize(tensors[i])
    if op.float_only:
        for i in idx:
            t = tensors[i]
            if not is_float(t.dtype):
                if t.weak:
                    tensors[i] = materialize(t, STATE.float_dtype)
                else:
                    raise TdfTypeError(f"{op.name} needs a float tensor, got {dtype_name(t.dtype)}",
                                       hint=f"use cast(x, {dtype_name(STATE.float_dtype)})")
    return tensors


def apply(op: Op, inputs, **attrs) -> Tensor:
    tensors = _unify(op, [to_tensor(x) for x in inputs])
    try:
        out = kernels.call(op.kernel, *[t.value for t in tensors], **attrs)
    except MemoryError:
        from .errors import LimitError
        raise LimitError(f"{op.name} ran out of memory", hint="use smaller tensors") from None
    except ValueError as e:
        shapes = " and ".join(str(list(t.shape)) for t in tensors)
        if "zero-size" in str(e) or "empty" in str(e):
            raise ShapeError(f"{op.name} of an empty tensor (shape {shapes})") from None
        raise ShapeError(f"{op.name}: incompatible shapes {shapes}", hint=_shape_hint(op, str(e))) from None
    if out.size > STATE.max_elements:
        from .errors import LimitError
        raise LimitError(f"{op.name} would make a tensor of {out.size:,} elements, over the limit of "
                         f"{STATE.max_elements:,}", hint="raise it with --max-elements N")
    result = Tensor(out, weak=op.weak_arith and all(t.weak for t in tensors))
    emit(op, tensors, result, attrs)
    if NUMERICS.enabled:
        NUMERICS.forward(op, tensors, result, STATE.line)
        if op is WHERE:
            NUMERICS.where(tensors, result, STATE.line)
    return result


def emit(op: Op, inputs: list[Tensor], output: Tensor, attrs: dict) -> None:
    """Record an applied op on the tapes that watch an input, and in the provenance log if kept."""
    tapes = record(op, inputs, output, attrs) if op.differentiable and ACTIVE else ()
    if PROVENANCE.enabled:
        PROVENANCE.op(op.name, inputs, output, STATE.line, op.differentiable, is_float(output.dtype), tapes)


def record(op: Op, inputs: list[Tensor], output: Tensor, attrs: dict) -> list:
    """Record on every open, recording tape that watches an input (LANGUAGE.md §4.1); returns those tapes."""
    if not is_float(output.dtype):
        return []
    rec = None
    tapes = []
    for tape in ACTIVE:
        if tape.recording and any(t.id in tape.watched_ids for t in inputs):
            if rec is None:
                rec = Record(op, inputs, output, attrs, STATE.line)
            tape.records.append(rec)
            tape.watched_ids.add(output.id)
            tapes.append(tape)
    return tapes


def _shape_hint(op: Op, detail: str) -> str | None:
    if op.name == "matmul":
        return "the inner dimensions must agree: [n, k] @ [k, m]"
    if "broadcast" in detail:
        return "shapes broadcast when each trailing dimension is equal or 1"
    return None


# ------------------------------------------------------- broadcasting helper

def unbroadcast(g: Tensor, shape: tuple) -> Tensor:
    """Sum a gradient back down to ``shape``: the one reduction for NumPy broadcasting."""
    if g.shape == tuple(shape):
        return g
    lead = len(g.shape) - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1)
    if axes:
        g = reduce_sum(g, axis=axes, keepdims=True)
    return reshape(g, shape) if g.shape != tuple(shape) else g


# ------------------------------------------------------------ elementwise ops

def _unary(name, deriv=None, **kw):
    """A unary elementwise op whose gradient and tangent are ``upstream * deriv(x, y)``."""
    if deriv is not None:
        kw.setdefault("vjp", lambda r, g: (mul(g, deriv(r.inputs[0], r.output, r.attrs)),))
        kw.setdefault("jvp", lambda r, ts: mul(ts[0], deriv(r.inputs[0], r.output, r.attrs)))
    return register(name, float_only=True, **kw)


def _binary_vjp(fa, fb):
    def vjp(r, g):
        a, b = r.inputs
        return (unbroadcast(fa(g, a, b, r.output), a.shape) if fa else None,
                unbroadcast(fb(g, a, b, r.output), b.shape) if fb else None)
    return vjp


NEG = register("neg", weak_arith=True, vjp=lambda r, g: (neg(g),), jvp=lambda r, ts: neg(ts[0]))
ADD = register("add", weak_arith=True,
               vjp=_binary_vjp(lambda g, a, b, y: g, lambda g, a, b, y: g),
               jvp=lambda r, ts: _sum_tangents(ts, r.output))
SUB = register("sub", weak_arith=True,
               vjp=_binary_vjp(lambda g, a, b, y: g, lambda g, a, b, y: neg(g)),
               jvp=lambda r, ts: _sum_tangents([ts[0], None if ts[1] is None else neg(ts[1])], r.output))
MUL = register("mul", weak_arith=True,
               vjp=_binary_vjp(lambda g, a, b, y: mul(g, b), lambda g, a, b, y: mul(g, a)),
               jvp=lambda r, ts: _sum_tangents([None if ts[0] is None else mul(ts[0], r.inputs[1]),
                                                None if ts[1] is None else mul(r.inputs[0], ts[1])], r.output))
DIV = register("div", weak_arith=True,
               vjp=_binary_vjp(lambda g, a, b, y: div(g, b), lambda g, a, b, y: neg(div(mul(g, y), b))),
               jvp=lambda r, ts: _sum_tangents([None if ts[0] is None else div(ts[0], r.inputs[1]),
                                                None if ts[1] is None else neg(div(mul(ts[1], r.output),
                                                                                   r.inputs[1]))], r.output))
FLOORDIV = register("floordiv", weak_arith=True, differentiable=False)
# floor-mod with TensorFlow's gradient: d/da = 1, d/db = -floor(a / b)
MOD = register("mod", weak_arith=True,
               vjp=_binary_vjp(lambda g, a, b, y: g, lambda g, a, b, y: mul(g, neg(floor(div(a, b))))))


def _pow_grad_exponent(g, a, b, y):
    positive = greater(a, 0)
    safe_log = log(where(positive, a, ones_like(a)))
    return mul(g, mul(y, where(positive, safe_log, zeros_like(safe_log))))


POW = register("pow", weak_arith=True,
               vjp=_binary_vjp(lambda g, a, b, y: mul(g, mul(b, pow_(a, sub(b, 1)))), _pow_grad_exponent))
MAXIMUM = register("maximum", vjp=_binary_vjp(lambda g, a, b, y: where(greater_equal(a, b), g, zeros_like(g)),
                                              lambda g, a, b, y: where(greater_equal(a, b), zeros_like(g), g)))
MINIMUM = register("minimum", vjp=_binary_vjp(lambda g, a, b, y: where(less_equal(a, b), g, zeros_like(g)),
                                              lambda g, a, b, y: where(less_equal(a, b), zeros_like(g), g)))

for _name in ("less", "less_equal", "greater", "greater_equal", "equal", "not_equal"):
    register(_name, weak_arith=True, differentiable=False)
for _name in ("logical_and", "logical_or"):
    register(_name, weak_arith=True, differentiable=False)
register("logical_not", weak_arith=True, differentiable=False)
for _name in ("round", "floor", "ceil"):
    register(_name, differentiable=False)
register("sign", differentiable=False)


def _sum_tangents(ts, out):
    present = [unbroadcast_to(t, out.shape) for t in ts if t is not None]
    if not present:
        return None
    total = present[0]
    for t in present[1:]:
        total = add(total, t)
    return total


def unbroadcast_to(t: Tensor, shape) -> Tensor:
    return t if t.shape == tuple(shape) else broadcast_to(t, shape)


_SQRT_PI = math.sqrt(math.pi)
_SQRT_2PI = math.sqrt(2 * math.pi)

SIN = _unary("sin", lambda x, y, at: cos(x))
COS = _unary("cos", lambda x, y, at: neg(sin(x)))
TAN = _unary("tan", lambda x, y, at: add(1, square(y)))
EXP = _unary("exp", lambda x, y, at: y)
LOG = _unary("log", lambda x, y, at: reciprocal(x))
LOG1P = _unary("log1p", lambda x, y, at: reciprocal(add(x, 1)))
SQRT = _unary("sqrt", lambda x, y, at: div(0.5, y))
RSQRT = _unary("rsqrt", lambda x, y, at: mul(-0.5, mul(y, square(y))))
SQUARE = _unary("square", lambda x, y, at: mul(2, x))
TANH = _unary("tanh", lambda x, y, at: sub(1, square(y)))
SIGMOID = _unary("sigmoid", lambda x, y, at: mul(y, sub(1, y)))
SOFTPLUS = _unary("softplus", lambda x, y, at: sigmoid(x))
ELU = _unary("elu", lambda x, y, at: where(greater(x, 0), ones_like(y), add(y, at["alpha"])))
ERF = _unary("erf", lambda x, y, at: mul(2 / _SQRT_PI, exp(neg(square(x)))))


def _gelu_deriv(x, y, at):
    if at["approximate"]:
        c = math.sqrt(2 / math.pi)
        inner = mul(c, add(x, mul(0.044715, pow_(x, 3))))
        th = tanh(inner)
        dinner = mul(c, add(1, mul(3 * 0.044715, square(x))))
        return add(mul(0.5, add(1, th)), mul(mul(0.5, x), mul(sub(1, square(th)), dinner)))
    cdf = mul(0.5, add(1, erf(mul(1 / math.sqrt(2), x))))
    pdf = div(exp(mul(-0.5, square(x))), _SQRT_2PI)
    return add(cdf, mul(x, pdf))


GELU = _unary("gelu", _gelu_deriv)

# relu, abs and leaky_relu route their gradient through masked_grad, whose own
# gradient w.r.t. x is zeros: their second derivative is zeros, not None (TensorFlow).
MASKED_GRAD = register("masked_grad", unify=(0,),
                       vjp=lambda r, g: (masked_grad(g, r.inputs[1], **r.attrs), zeros_like(r.inputs[1])),
                       jvp=lambda r, ts: masked_grad(ts[0], r.inputs[1], **r.attrs) if ts[0] is not None else None)


def _masked(kind):
    return dict(vjp=lambda r, g: (masked_grad(g, r.inputs[0], kind=kind, alpha=r.attrs.get("alpha", 0.2)),),
                jvp=lambda r, ts: masked_grad(ts[0], r.inputs[0], kind=kind, alpha=r.attrs.get("alpha", 0.2)))


RELU = register("relu", **_masked("relu"))
ABS = register("abs", **_masked("abs"))
LEAKY_RELU = register("leaky_relu", float_only=True, **_masked("leaky_relu"))


def _where_vjp(r, g):
    c, a, b = r.inputs
    zero = zeros_like(g)
    return (None, unbroadcast(where(c, g, zero), a.shape), unbroadcast(where(c, zero, g), b.shape))


WHERE = register("where", unify=(1, 2), vjp=_where_vjp)


def _clip_vjp(r, g):
    x, lo, hi = r.inputs
    zero = zeros_like(g)
    inside = logical_and(greater_equal(x, lo), less_equal(x, hi))
    return (unbroadcast(where(inside, g, zero), x.shape),
            unbroadcast(where(less(x, lo), g, zero), lo.shape),
            unbroadcast(where(greater(x, hi), g, zero), hi.shape))


CLIP = register("clip", vjp=_clip_vjp)


def _cast_vjp(r, g):
    return (cast(g, r.inputs[0].dtype),) if is_float(r.inputs[0].dtype) else (None,)


CAST = register("cast", unify=(), vjp=_cast_vjp)
CAST_TO_INT = register("cast_to_int", kernel="cast", unify=(), differentiable=False)

# --------------------------------------------------------------- reductions


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, tuple) else (axis,)
    return tuple(sorted(a % ndim if ndim else a for a in axes))


def _keep_shape(shape, axis):
    """The shape of a reduction over ``axis`` with keepdims."""
    axes = _axes(axis, len(shape))
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def _expand_reduced(g, r):
    """A reduction's upstream gradient, reshaped to keep the reduced dims and broadcast."""
    x = r.inputs[0]
    if not r.attrs.get("keepdims"):
        g = reshape(g, _keep_shape(x.shape, r.attrs.get("axis")))
    return broadcast_to(g, x.shape)


def _count(r):
    x = r.inputs[0]
    return int(np.prod([x.shape[a] for a in _axes(r.attrs.get("axis"), x.ndim)])) if x.shape else 1


def _extreme_vjp(r, g):
    x = r.inputs[0]
    y = r.output if r.attrs.get("keepdims") else reshape(r.output, _keep_shape(x.shape, r.attrs.get("axis")))
    hit = cast(equal(x, y), x.dtype)
    ties = reduce_sum(hit, axis=r.attrs.get("axis"), keepdims=True)
    return (mul(_expand_reduced(g, r), div(hit, ties)),)


def _prod_vjp(r, g):
    """d prod / d x_i = the product of the others, written as (the product of the other
    nonzero entries) * (the product of the other zero entries) so that it stays
    differentiable where x has zeros. The second factor is exact as a function for slices
    with at most two zeros; with three or more it is the constant 0, whose value and first
    derivative are right, so prod's value, gradient and Hessian are exact everywhere."""
    x = r.inputs[0]
    axis = r.attrs.get("axis")
    is_zero = equal(x, 0)
    nonzero = where(is_zero, ones_like(x), x)
    others = div(broadcast_to(reduce_prod(nonzero, axis=axis, keepdims=True), x.shape), nonzero)
    zeros = reduce_sum(cast(is_zero, x.dtype), axis=axis, keepdims=True)
    if np.any(zeros.value > 0):
        zero_part = where(is_zero, x, ones_like(x))      # the zero entries (value 0), 1 elsewhere
        # for a nonzero entry: the product of all the zero entries (a recorded prod)
        all_zeros = broadcast_to(reduce_prod(zero_part, axis=axis, keepdims=True), x.shape)
        # for a zero entry: the product of the other zero entries; with two zeros, the other one
        zero_sum = reduce_sum(where(is_zero, x, zeros_like(x)), axis=axis, keepdims=True)
        other_zero = sub(broadcast_to(zero_sum, x.shape), x)
        one = broadcast_to(equal(zeros, 1), x.shape)
        two = broadcast_to(equal(zeros, 2), x.shape)
        at_zero = where(one, ones_like(x), where(two, other_zero, zeros_like(x)))
        others = mul(others, where(is_zero, at_zero, all_zeros))
    return (mul(_expand_reduced(g, r), others),)


def _logsumexp_vjp(r, g):
    x = r.inputs[0]
    y = r.output if r.attrs.get("keepdims") else reshape(r.output, _keep_shape(x.shape, r.attrs.get("axis")))
    return (mul(_expand_reduced(g, r), exp(sub(x, y))),)


SUM = register("sum", vjp=lambda r, g: (_expand_reduced(g, r),),
               jvp=lambda r, ts: reduce_sum(ts[0], **r.attrs))
MEAN = register("mean", vjp=lambda r, g: (div(_expand_reduced(g, r), _count(r)),),
                jvp=lambda r, ts: reduce_mean(ts[0], **r.attrs))
MAX = register("max", vjp=_extreme_vjp)
MIN = register("min", vjp=_extreme_vjp)
PROD = register("prod", vjp=_prod_vjp)
LOGSUMEXP = register("logsumexp", float_only=True, vjp=_logsumexp_vjp)
ARGMAX = register("argmax", differentiable=False)
ARGMIN = register("argmin", differentiable=False)


def _softmax_vjp(r, g):
    y, axis = r.output, r.attrs["axis"]
    return (mul(y, sub(g, reduce_sum(mul(g, y), axis=axis, keepdims=True))),)


def _log_softmax_vjp(r, g):
    y, axis = r.output, r.attrs["axis"]
    return (sub(g, mul(exp(y), reduce_sum(g, axis=axis, keepdims=True))),)


SOFTMAX = register("softmax", float_only=True, vjp=_softmax_vjp)
LOG_SOFTMAX = register("log_softmax", float_only=True, vjp=_log_softmax_vjp)

# ------------------------------------------------------- shapes and matmul


def _swap_last(t):
    perm = list(range(t.ndim))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return transpose(t, perm)


def _matmul_vjp(r, g):
    a, b = r.inputs
    a2 = a if a.ndim > 1 else reshape(a, (1,) + a.shape)
    b2 = b if b.ndim > 1 else reshape(b, b.shape + (1,))
    out_shape = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2]) + (a2.shape[-2], b2.shape[-1])
    g2 = reshape(g, out_shape)
    ga = unbroadcast(matmul(g2, _swap_last(b2)), a2.shape)
    gb = unbroadcast(matmul(_swap_last(a2), g2), b2.shape)
    return reshape(ga, a.shape), reshape(gb, b.shape)


MATMUL = register("matmul", vjp=_matmul_vjp,
                  jvp=lambda r, ts: _sum_tangents([None if ts[0] is None else matmul(ts[0], r.inputs[1]),
                                                   None if ts[1] is None else matmul(r.inputs[0], ts[1])], r.output))
RESHAPE = register("reshape", unify=(), vjp=lambda r, g: (reshape(g, r.inputs[0].shape),),
                   jvp=lambda r, ts: reshape(ts[0], r.attrs["shape"]))
TRANSPOSE = register("transpose", unify=(), vjp=lambda r, g: (transpose(g, tuple(np.argsort(r.attrs["perm"]))),),
                     jvp=lambda r, ts: transpose(ts[0], r.attrs["perm"]))
BROADCAST_TO = register("broadcast_to", unify=(), vjp=lambda r, g: (unbroadcast(g, r.inputs[0].shape),),
                        jvp=lambda r, ts: broadcast_to(ts[0], r.attrs["shape"]))


def _concat_vjp(r, g):
    axis = r.attrs["axis"]
    out, start = [], 0
    for x in r.inputs:
        index = [slice(None)] * g.ndim
        index[axis] = slice(start, start + x.shape[axis])
        out.append(getitem(g, tuple(index)))
        start += x.shape[axis]
    return tuple(out)


def _stack_vjp(r, g):
    axis = r.attrs["axis"] % g.ndim      # stack(xs, axis=-1): count from the output's end
    return tuple(getitem(g, (slice(None),) * axis + (i,)) for i in range(len(r.inputs)))


CONCAT = register("concat", vjp=_concat_vjp)
STACK = register("stack", vjp=_stack_vjp)
GETITEM = register("getitem", unify=(), vjp=lambda r, g: (index_grad(g, r.inputs[0].shape, r.attrs["index"]),),
                   jvp=lambda r, ts: getitem(ts[0], r.attrs["index"]))
INDEX_GRAD = register("index_grad", unify=(), vjp=lambda r, g: (getitem(g, r.attrs["index"]),))


# ------------------------------------------------------- the public functions

def neg(x): return apply(NEG, (x,))
def add(a, b): return apply(ADD, (a, b))
def sub(a, b): return apply(SUB, (a, b))
def mul(a, b): return apply(MUL, (a, b))
def div(a, b): return apply(DIV, (a, b))
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
def sin(x): return apply(SIN, (x,))
def cos(x): return apply(COS, (x,))
def tan(x): return apply(TAN, (x,))
def exp(x): return apply(EXP, (x,))
def log(x): return apply(LOG, (x,))
def log1p(x): return apply(LOG1P, (x,))
def sqrt(x): return apply(SQRT, (x,))
def rsqrt(x): return apply(RSQRT, (x,))
def square(x): return apply(SQUARE, (x,))
def tanh(x): return apply(TANH, (x,))
def sigmoid(x): return apply(SIGMOID, (x,))
def softplus(x): return apply(SOFTPLUS, (x,))
def relu(x): return apply(RELU, (x,))
def abs_(x): return apply(ABS, (x,))
def sign(x): return apply(OPS["sign"], (x,))
def erf(x): return apply(ERF, (x,))
def round_(x): return apply(OPS["round"], (x,))
def floor(x): return apply(OPS["floor"], (x,))
def ceil(x): return apply(OPS["ceil"], (x,))
def elu(x, alpha=1.0): return apply(ELU, (x,), alpha=float(alpha))
def leaky_relu(x, alpha=0.2): return apply(LEAKY_RELU, (x,), alpha=float(alpha))
def gelu(x, approximate=False): return apply(GELU, (x,), approximate=bool(approximate))
def masked_grad(g, x, kind, alpha=0.2): return apply(MASKED_GRAD, (g, x), kind=kind, alpha=alpha)
def where(c, a, b): return apply(WHERE, (c, a, b))
def clip(x, lo, hi): return apply(CLIP, (x, lo, hi))
def matmul(a, b): return apply(MATMUL, (a, b))
def reciprocal(x): return div(1, x)


def _check_axis(x: Tensor, axis):
    if axis is None:
        return None
    axes = axis if isinstance(axis, tuple) else (axis,)
    for a in axes:
        if not -max(x.ndim, 1) <= a < max(x.ndim, 1):
            raise ShapeError(f"axis {a} is out of range for a tensor of shape {list(x.shape)}")
    return axis


def _reduction(op):
    def run(x, axis=None, keepdims=False):
        x = to_tensor(x)
        return apply(op, (x,), axis=_check_axis(x, axis), keepdims=bool(keepdims))
    return run


reduce_sum = _reduction(SUM)
reduce_mean = _reduction(MEAN)
reduce_max = _reduction(MAX)
reduce_min = _reduction(MIN)
reduce_prod = _reduction(PROD)
reduce_logsumexp = _reduction(LOGSUMEXP)


def argmax(x, axis=0): return apply(ARGMAX, (x,), axis=axis)
def argmin(x, axis=0): return apply(ARGMIN, (x,), axis=axis)
def softmax(x, axis=-1): return apply(SOFTMAX, (x,), axis=axis)
def log_softmax(x, axis=-1): return apply(LOG_SOFTMAX, (x,), axis=axis)


def cast(x, dtype) -> Tensor:
    x = to_tensor(x)
    dtype = np.dtype(dtype)
    if x.weak:
        x = Tensor(x.value)  # a literal is cast from its exact value
    if x.dtype == dtype:
        return x
    return apply(CAST if is_float(dtype) else CAST_TO_INT, (x,), dtype=dtype)


def reshape(x, shape) -> Tensor:
    x = to_tensor(x)
    shape = tuple(int(n) for n in shape)
    if x.shape == shape:
        return x
    return apply(RESHAPE, (x,), shape=shape)


def transpose(x, perm=None) -> Tensor:
    x = to_tensor(x)
    perm = tuple(range(x.ndim))[::-1] if perm is None else tuple(int(p) for p in perm)
    if sorted(perm) != list(range(x.ndim)):
        raise ShapeError(f"perm {list(perm)} is not a permutation of the {x.ndim} axes of shape {list(x.shape)}")
    return apply(TRANSPOSE, (x,), perm=perm)


def broadcast_to(x, shape) -> Tensor:
    x = to_tensor(x)
    shape = tuple(shape)
    return x if x.shape == shape else apply(BROADCAST_TO, (x,), shape=shape)


def concat(xs, axis=0) -> Tensor:
    return apply(CONCAT, tuple(xs), axis=int(axis))


def stack(xs, axis=0) -> Tensor:
    return apply(STACK, tuple(xs), axis=int(axis))


def getitem(x, index) -> Tensor:
    return apply(GETITEM, (x,), index=index)


def index_grad(g, shape, index) -> Tensor:
    return apply(INDEX_GRAD, (g,), shape=tuple(shape), index=index)


def zeros_like(x) -> Tensor:
    x = to_tensor(x)
    return Tensor(np.zeros(x.shape, dtype=x.dtype))


def ones_like(x) -> Tensor:
    x = to_tensor(x)
    return Tensor(np.ones(x.shape, dtype=x.dtype))


def stop_gradient(x) -> Tensor:
    return Tensor(to_tensor(x).value)

