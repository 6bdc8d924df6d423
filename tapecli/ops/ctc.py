"""CTC loss as TensorFlow computes it on the CPU (kernels/tf_ctc.py, TensorFlow's bits): ``ctc_loss`` is
``ctc_loss_dense`` (dense labels; time-major logits, the blank at class 0), whose gradient is TensorFlow's custom
gradient, the upstream gradient times the computed ``exp(log_softmax) - exp(posteriors per class)``;
``ctc_sparse_loss`` is the CTCLoss kernel (a SparseTensor's labels; the blank the last class), whose gradient is
its second output times the upstream gradient. Either gradient is a constant to any tape, as TensorFlow makes it
(a custom gradient's forward pass runs with recording stopped; CTCLoss's gradient is prevent_gradient's): no
second derivative."""
from __future__ import annotations

from tapecli.kernels import tf_ctc
from tapecli.ops.core import apply, register
from tapecli.ops.elementwise import mul
from tapecli.ops.reductions import reduce_sum
from tapecli.ops.shape import reshape
from tapecli.runtime.values import Tensor


def _loss(*arrays):
    return tf_ctc.loss_and_grad(*arrays)[0]


def _grad(*arrays):
    return tf_ctc.loss_and_grad(*arrays)[1]


def _gradient(r) -> Tensor:
    return apply(CTC_LOSS_GRAD, tuple(r.inputs))


CTC_LOSS_GRAD = register("ctc_loss_grad", numpy=_grad, unify=(), saves=(), differentiable=False)
CTC_LOSS = register("ctc_loss", numpy=_loss, unify=(), paired={"ctc_loss_grad": tf_ctc.loss_and_grad},
                    vjp=lambda r, g: (mul(reshape(g, (1, -1, 1)), _gradient(r)),) + (None,) * (len(r.inputs) - 1),
                    jvp=lambda r, ts: reduce_sum(mul(_gradient(r), ts[0]), axis=(0, 2)), batchable=False)


def ctc_loss(logits: Tensor, labels: Tensor, label_length: Tensor, logit_length: Tensor, unique=()) -> Tensor:
    """The per-sequence CTC losses of time-major float ``logits`` [frames, batch, classes], the blank at class 0,
    and integer ``labels`` [batch, max length] of ``label_length`` each, over ``logit_length`` frames each;
    ``unique``: (each row's unique labels, each label's index among them), or ()."""
    return apply(CTC_LOSS, (logits, labels, label_length, logit_length, *unique))


def _sparse_loss(logits, sequence_length, labels):
    return tf_ctc.sparse_loss_and_grad(logits, labels, sequence_length)[0]


def _sparse_grad(logits, sequence_length, labels):
    return tf_ctc.sparse_loss_and_grad(logits, labels, sequence_length)[1]


def _sparse_gradient(r) -> Tensor:
    return apply(CTC_SPARSE_LOSS_GRAD, tuple(r.inputs), labels=r.attrs["labels"])


CTC_SPARSE_LOSS_GRAD = register("ctc_sparse_loss_grad", numpy=_sparse_grad, unify=(), saves=(), differentiable=False)
CTC_SPARSE_LOSS = register("ctc_sparse_loss", numpy=_sparse_loss, unify=(), saves=(0, 1),
                           paired={"ctc_sparse_loss_grad": lambda logits, sequence_length, labels:
                                   tf_ctc.sparse_loss_and_grad(logits, labels, sequence_length)},
                           vjp=lambda r, g: (mul(reshape(g, (1, -1, 1)), _sparse_gradient(r)), None),
                           batchable=False)      # (no forward mode: TensorFlow's, through prevent_gradient, fails)


def ctc_sparse_loss(logits: Tensor, sequence_length: Tensor, labels: tuple) -> Tensor:
    """The per-sequence CTC losses of time-major float32 ``logits`` [frames, batch, classes], the blank the last
    class, over ``sequence_length`` frames each, of ``labels`` (a tuple of each sequence's labels, checked)."""
    return apply(CTC_SPARSE_LOSS, (logits, sequence_length), labels=labels)
