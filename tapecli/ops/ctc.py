"""CTC loss as TensorFlow's ``ctc_loss_dense`` computes it (kernels/tf_ctc.py: its ops in their order, TensorFlow's
bits) on time-major logits with the blank at class 0: one op whose gradient is TensorFlow's custom gradient, the
upstream gradient times the computed ``exp(log_softmax) - exp(posteriors per class)``. That gradient is a constant
to any tape, as TensorFlow's custom gradient makes it (its forward pass runs with recording stopped): no second
derivative."""
from __future__ import annotations

from tapecli.kernels import tf_ctc
from tapecli.ops.core import apply, register
from tapecli.ops.elementwise import mul
from tapecli.ops.reductions import reduce_sum
from tapecli.ops.shape import reshape
from tapecli.runtime.values import Tensor


def _loss(logits, labels, label_length, logit_length):
    return tf_ctc.loss_and_grad(logits, labels, label_length, logit_length)[0]


def _grad(logits, labels, label_length, logit_length):
    return tf_ctc.loss_and_grad(logits, labels, label_length, logit_length)[1]


def _gradient(r) -> Tensor:
    return apply(CTC_LOSS_GRAD, tuple(r.inputs))


CTC_LOSS_GRAD = register("ctc_loss_grad", numpy=_grad, unify=(), saves=(), differentiable=False)
CTC_LOSS = register("ctc_loss", numpy=_loss, unify=(), saves=(0, 1, 2, 3),
                    paired={"ctc_loss_grad": tf_ctc.loss_and_grad},
                    vjp=lambda r, g: (mul(reshape(g, (1, -1, 1)), _gradient(r)), None, None, None),
                    jvp=lambda r, ts: reduce_sum(mul(_gradient(r), ts[0]), axis=(0, 2)), batchable=False)


def ctc_loss(logits: Tensor, labels: Tensor, label_length: Tensor, logit_length: Tensor) -> Tensor:
    """The per-sequence CTC losses of time-major float ``logits`` [frames, batch, classes], the blank at class 0,
    and integer ``labels`` [batch, max length] of ``label_length`` each, over ``logit_length`` frames each."""
    return apply(CTC_LOSS, (logits, labels, label_length, logit_length))
