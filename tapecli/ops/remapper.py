"""Grappler's remapper in a tf.function on an x86 CPU: TensorFlow's graph runs a float32 MatMul, the add of its
bias and the activation after them as one oneDNN kernel (_FusedMatMul, whose post-op is oneDNN's activation:
kernels/tf_onednn_eltwise.py), and ``x * sigmoid(x)`` as oneDNN's swish (_MklSwish); eagerly each op is Eigen's.

tapecli computes op by op, so inside a tf.function (``RunContext.functions``: Keras's fit, evaluate and predict
run their steps so too) it follows the pattern as it goes (``RunContext.remapped``): a float32 MatMul of two
matrices (``product``), an add of its output and a bias (``biased``: tf.add, ``+`` or tf.nn.bias_add, the bias a
float32 tensor of the product's columns, shape (n,) or (1, n)), and an activation of that sum (``activation``):
then the activation is the fused kernel's. As TensorFlow 2.21 fuses: tanh, sigmoid and elu after either add;
gelu (exact) after tf.nn.bias_add only, and only where no tape records (its gradient reads the sum, which keeps
TensorFlow's ops apart); silu (beta 1) of any float32 tensor, a MatMul's or not (``swish``), and ``x * sigmoid(x)``
written out where no tape records (``written_swish``). Relu, relu6 and
leaky_relu fuse too, with the eager op's values. The fused ops' gradients are their Eigen ops' rules, which read the
fused output as TensorFlow's TanhGrad, SigmoidGrad and EluGrad do. On a machine whose TensorFlow runs no such
kernel (``tf_onednn_eltwise.known``), and on --device cuda, every activation is the eager op's.

What TensorFlow's whole graph shows and an op at a time does not: a sum or product that another op reads too
(TensorFlow keeps the ops apart; tapecli fuses where the activation comes first, but for a Keras sigmoid's logits
that a cross-entropy reads: keras/losses.py), and gelu's approximate form (fused after BiasAdd: not followed)."""
from __future__ import annotations

import numpy as np

from tapecli.lazymodule import LazyModule
from tapecli.runtime.context import current

tf_onednn_eltwise = LazyModule("tapecli.kernels.tf_onednn_eltwise", globals())     # (on a tf.function's first fusion)

_F32 = np.dtype(np.float32)
# an Eigen op's name -> (its fused kernel's op, whether this machine's TensorFlow runs that kernel); the op
# modules register theirs beside the Eigen ops
FUSED: dict = {}


def fused(name: str, op, known=None):
    """Register ``op`` as the fused kernel's op of activation ``name``, run where ``known()`` (by default, where
    this machine's TensorFlow runs oneDNN's kernels: tf_onednn_eltwise.known)."""
    FUSED[name] = (op, known or (lambda: tf_onednn_eltwise.known()))
    return op


def product(result) -> None:
    """A MatMul's output, in a tf.function: the start of the pattern where it is a float32 matrix."""
    ctx = current()
    if ctx.functions and ctx.device is None and result.value.dtype == _F32 and result.value.ndim == 2:
        ctx.remapped = ("product", result)


def biased(a, b, result, bias_add: bool) -> None:
    """``result = a + b`` (tf.nn.bias_add: ``bias_add``), seen while a pattern is noted: the pattern's sum where one
    side is the noted product and the other its bias."""
    ctx = current()
    if not ctx.functions:       # (the function that noted it has returned)
        ctx.remapped = None
        return
    kind, held = ctx.remapped[:2]
    if kind != "product":
        return
    bias = b if a is held else a if b is held else None
    n = held.value.shape[-1]
    if bias is not None and tuple(getattr(bias, "shape", ())) in ((n,), (1, n)) \
            and (getattr(bias, "weak", False) or getattr(bias, "dtype", None) == _F32):
        ctx.remapped = ("sum", result, bias_add)


def activation(op, x):
    """The op to apply for activation ``op`` of ``x``: its fused kernel's where ``x`` is the pattern's sum, else
    ``op``."""
    return fused_for(op.name, x) or op


def fused_for(name: str, x, after_bias_add: bool = False):
    """The fused kernel's op for activation ``name`` of ``x`` where ``x`` is the pattern's sum (made by
    tf.nn.bias_add where ``after_bias_add``) in a tf.function, else None."""
    ctx = current()
    held = ctx.remapped
    if held is None or held[0] != "sum" or held[1] is not x or not ctx.functions:
        return None
    ctx.remapped = None
    fused_op, known = FUSED[name]
    return fused_op if known() and (held[2] or not after_bias_add) else None


def swish(op, x, beta: float):
    """The op to apply for silu ``op`` of ``x``: oneDNN's swish in a tf.function, for float32 and beta 1."""
    ctx = current()
    if not ctx.functions or ctx.device is not None or beta != 1.0 or getattr(x, "dtype", None) != _F32 \
            or getattr(x, "weak", False):
        return op
    fused_op, known = FUSED[op.name]
    return fused_op if known() else op


def sigmoid_of(x, result) -> None:
    """``result = sigmoid(x)``, in a tf.function where no tape records (its gradient would read the sigmoid): noted
    for a product with x (``written_swish``)."""
    ctx = current()
    if ctx.functions and ctx.device is None and not taped(ctx) and result.value.dtype == _F32:
        ctx.remapped = ("sigmoid", x, result)


def taped(ctx) -> bool:
    """Whether a tape of the program's records (not a tf.function's own, which records its body for tf.gradients
    in it: execution/tf_calls.py, as TensorFlow's graph holds the ops the remapper fuses before any gradient)."""
    return any(not tape.graph for tape in ctx.tapes)


def written_swish(a, b):
    """The x of ``a * b`` where that is ``x * sigmoid(x)`` (either way round) just noted, which TensorFlow's graph
    runs as oneDNN's swish, else None."""
    ctx = current()
    held = ctx.remapped
    if not ctx.functions:       # (the function that noted it has returned)
        ctx.remapped = None
        return None
    if held[0] != "sigmoid":
        return None
    x, s = held[1:]
    if not ((a is x and b is s) or (a is s and b is x)) or not FUSED["silu"][1]():
        return None
    ctx.remapped = None
    return x
