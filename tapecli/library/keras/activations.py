"""keras.activations with Keras 3's signatures and its TensorFlow backend's formulas (keras/src/activations,
keras/src/backend/tensorflow/nn.py), composed from recorded ops. Registered as ``activations.NAME``
(``library/keras_names.py``): ``tf.nn.relu`` and ``keras.activations.relu`` differ in their keywords."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import TdfValueError
from tapecli.library.keras.common import flag, integer, num, opt_num, scalar, tensor
from tapecli.runtime.context import current
from tapecli.runtime.values import Tensor


def _x(x):
    return tensor(x, "an activation's input")


def relu(x, negative_slope=0.0, max_value=None, threshold=0.0):
    x = _x(x)
    slope, top, thr = num(negative_slope, "negative_slope"), opt_num(max_value, "max_value"), num(threshold, "threshold")
    if slope != 0.0:
        if top is None and thr == 0:
            return ops.leaky_relu(x, slope)
        negative = ops.relu(ops.add(ops.neg(x), scalar(thr, x.dtype)) if thr != 0 else ops.neg(x))
    clip = top is not None
    if thr != 0:
        x = ops.where(ops.greater(x, scalar(thr, x.dtype)), x, scalar(0, x.dtype))
    elif top == 6:
        x, clip = ops.relu6(x), False
    else:
        x = ops.relu(x)
    if clip:
        x = ops.clip(x, scalar(0.0, x.dtype), scalar(top, x.dtype))
    if slope != 0.0:
        x = ops.sub(x, ops.mul(scalar(slope, x.dtype), negative))
    return x


def leaky_relu(x, negative_slope=0.2):
    return ops.leaky_relu(_x(x), num(negative_slope, "negative_slope"))


def elu(x, alpha=1.0):
    x, a = _x(x), num(alpha, "alpha")
    res = ops.elu(x)
    return res if a == 1 else ops.where(ops.greater(x, scalar(0, x.dtype)), res, ops.mul(scalar(a, x.dtype), res))


def gelu(x, approximate=False):
    return ops.gelu(_x(x), approximate=flag(approximate))


class KeptLogits:
    """The logits of the latest outputs of Keras's softmax and sigmoid by the output's id (Keras's _keras_logits,
    which its cross-entropies of the output compute from: TensorFlow's backend's _get_logits). A loss reads its
    predictions' soon after they are made: a run keeps the latest ``MOST`` of them, and no more than ``MOST_VALUES``
    values but the latest's, the oldest forgotten first."""

    MOST = 64
    MOST_VALUES = 1 << 24

    def __init__(self):
        self.by_id: dict = {}
        self.values = 0

    def keep(self, out: Tensor, logits: Tensor) -> Tensor:
        self.by_id[out.id] = logits
        self.values += logits.size
        while len(self.by_id) > 1 and (len(self.by_id) > self.MOST or self.values > self.MOST_VALUES):
            self.values -= self.by_id.pop(next(iter(self.by_id))).size
        return out


def kept_logits(out: Tensor, logits: Tensor) -> Tensor:
    """``out``, Keras's softmax or sigmoid of ``logits``, which it keeps as ``out._keras_logits``."""
    ctx = current()
    if ctx.keras_logits is None:
        ctx.keras_logits = KeptLogits()
    return ctx.keras_logits.keep(out, logits)


def logits_of(x) -> Tensor | None:
    """The logits Keras's softmax or sigmoid kept on ``x`` (None: it made no such output, or its were forgotten)."""
    kept = current().keras_logits
    return None if kept is None else kept.by_id.get(getattr(x, "id", None))


def softmax(x, axis=-1):
    x = _x(x)
    return kept_logits(ops.softmax(x, axis=int(num(axis, "axis"))), x)


def sigmoid(x):
    x = _x(x)
    return kept_logits(ops.sigmoid(x), x)


def log_softmax(x, axis=-1):
    return ops.log_softmax(_x(x), axis=int(num(axis, "axis")))


def hard_sigmoid(x):
    x = _x(x)
    return ops.div(ops.relu6(ops.add(x, scalar(3.0, x.dtype))), scalar(6.0, x.dtype))


def hard_silu(x):
    x = _x(x)
    return ops.mul(x, hard_sigmoid(x))


def celu(x, alpha=1.0):
    x, a = _x(x), num(alpha, "alpha")
    zero = scalar(0.0, x.dtype)
    return ops.add(ops.maximum(x, zero),
                   ops.mul(scalar(a, x.dtype), ops.expm1(ops.div(ops.minimum(x, zero), scalar(a, x.dtype)))))


def glu(x, axis=-1):
    x, axis = _x(x), int(num(axis, "axis"))
    n = x.shape[axis]
    if n % 2:
        raise TdfValueError(f"axis size must be divisible by 2. Received: x.shape={tuple(x.shape)} with axis={axis}")
    half = [slice(None)] * x.ndim
    first, second = list(half), list(half)
    first[axis], second[axis] = slice(0, n // 2), slice(n // 2, n)
    return ops.mul(ops.getitem(x, tuple(first)), ops.sigmoid(ops.getitem(x, tuple(second))))


def hard_tanh(x):
    x = _x(x)
    return ops.clip(x, scalar(-1.0, x.dtype), scalar(1.0, x.dtype))


def hard_shrink(x, threshold=0.5):
    x = _x(x)
    return ops.where(ops.greater(ops.abs_(x), scalar(num(threshold, "threshold"), x.dtype)), x, ops.zeros_like(x))


def tanh_shrink(x):
    x = _x(x)
    return ops.sub(x, ops.tanh(x))


def soft_shrink(x, threshold=0.5):
    x = _x(x)
    t = scalar(num(threshold, "threshold"), x.dtype)
    return ops.where(ops.greater(x, t), ops.sub(x, t),
                     ops.where(ops.less(x, ops.neg(t)), ops.add(x, t), ops.zeros_like(x)))


def threshold(x, threshold, default_value):
    x = _x(x)
    return ops.where(ops.greater(x, scalar(num(threshold, "threshold"), x.dtype)), x,
                     scalar(num(default_value, "default_value"), x.dtype))


def squareplus(x, b=4):
    x = _x(x)
    y = ops.add(x, ops.sqrt(ops.add(ops.square(x), scalar(num(b, "b"), x.dtype))))
    return ops.div(y, scalar(2, x.dtype))


def sparse_plus(x):
    x = _x(x)
    one = scalar(1.0, x.dtype)
    quad = ops.mul(scalar(0.25, x.dtype), ops.square(ops.add(x, one)))
    return ops.where(ops.less_equal(x, ops.neg(one)), ops.zeros_like(x), ops.where(ops.less(x, one), quad, x))


def sparse_sigmoid(x):
    x = _x(x)
    one = scalar(1.0, x.dtype)
    mid = ops.mul(scalar(0.5, x.dtype), ops.add(x, one))
    return ops.where(ops.less_equal(x, ops.neg(one)), scalar(0.0, x.dtype),
                     ops.where(ops.greater_equal(x, one), one, mid))


def mish(x):
    x = _x(x)
    return ops.mul(x, ops.tanh(ops.softplus(x)))


def silu(x):
    return ops.silu(_x(x))


def exponential(x):
    return ops.exp(_x(x))


def linear(x):
    return x


def log_sigmoid(x):
    x = _x(x)
    return ops.neg(ops.softplus(ops.neg(x)))


def sparsemax(x, axis=-1):
    """Keras's TensorFlow sparsemax as written (its threshold sums the cumulative sums over the support)."""
    t = _x(x)
    axis = integer(axis, "axis") % t.ndim
    ordered = ops.reverse(ops.sort(t, axis=axis), [axis])
    total = ops.cumsum(ordered, axis=axis)
    ranks = np.arange(1, t.shape[axis] + 1, dtype=t.dtype).reshape([-1 if i == axis else 1 for i in range(t.ndim)])
    one, zero = scalar(1.0, t.dtype), scalar(0.0, t.dtype)
    support = ops.greater(ops.sub(ordered, ops.div(ops.sub(total, one), Tensor(ranks))), zero)
    k = ops.reduce_sum(ops.cast(support, t.dtype), axis, True)
    tau = ops.div(ops.sub(ops.reduce_sum(ops.where(support, total, ops.zeros_like(total)), axis, True), one), k)
    return ops.maximum(ops.sub(t, tau), zero)


def _unary(op, name):
    def activation(x):
        return op(_x(x))
    activation.__name__ = activation.__qualname__ = name       # (Keras's function of that name)
    return activation


FUNCTIONS = {
    "relu": relu, "leaky_relu": leaky_relu, "elu": elu, "gelu": gelu, "softmax": softmax,
    "log_softmax": log_softmax, "hard_sigmoid": hard_sigmoid, "hard_silu": hard_silu, "hard_swish": hard_silu,
    "celu": celu, "glu": glu, "hard_tanh": hard_tanh, "hard_shrink": hard_shrink, "tanh_shrink": tanh_shrink,
    "soft_shrink": soft_shrink, "threshold": threshold, "squareplus": squareplus, "sparse_plus": sparse_plus,
    "sparse_sigmoid": sparse_sigmoid, "mish": mish, "silu": silu, "swish": silu, "exponential": exponential,
    "linear": linear, "log_sigmoid": log_sigmoid, "relu6": _unary(ops.relu6, "relu6"), "selu": _unary(ops.selu, "selu"),
    "softplus": _unary(ops.softplus, "softplus"), "softsign": _unary(ops.softsign, "softsign"), "tanh": _unary(ops.tanh, "tanh"),
    "sigmoid": sigmoid, "sparsemax": sparsemax,
}

# The activations keras.ops has under the same name and defaults (its relu, gelu, ... differ from TensorFlow's
# flat names of keras.ops' own, which serve them).
KERAS_OPS = ("celu", "glu", "hard_shrink", "hard_silu", "hard_swish", "hard_tanh", "soft_shrink", "sparse_plus",
             "sparse_sigmoid", "squareplus", "tanh_shrink", "threshold", "softmax", "sigmoid")


def serialize(activation):
    """keras.activations.serialize: a built-in activation's name (an alias's own function's: swish is silu)."""
    name = next((n for n, fn in FUNCTIONS.items() if fn is activation), None)
    if name is None:
        raise TdfValueError(f"Unknown activation function '{getattr(activation, '__name__', activation)}' cannot be "
                            "serialized: tapecli serializes Keras's own activations")
    return name


def deserialize(config, custom_objects=None):
    """keras.activations.deserialize: the activation of a name serialize gave."""
    if not isinstance(config, str) or config not in FUNCTIONS:
        raise TdfValueError(f"Could not interpret activation function identifier: {config}")
    return FUNCTIONS[config]


def get(identifier=None):
    """keras.activations.get: None is linear, a name its function, a function itself."""
    if identifier is None:
        return FUNCTIONS["linear"]
    if isinstance(identifier, str):
        if identifier not in FUNCTIONS:
            raise TdfValueError(f"Could not interpret activation function identifier: {identifier}")
        return FUNCTIONS[identifier]
    return identifier

