"""TensorFlow's fused softmax cross-entropy kernels (Eigen; oneDNN has none) on float32 logits of up to
``PACKET_LIMIT`` elements, bit for bit. Both take ``shifted = logits - max`` along each row and the row's sum of
``exp(shifted)`` as Eigen's reducer computes it (``tf_float32.row_exp``/``row_sums``, as LogSoftmax's), and
give back ``exp(shifted) / sum`` minus the labels (one-hot for the sparse kernel), the exp of the whole tensor
(packets and scalar tail; not oneDNN's softmax). SparseSoftmaxCrossEntropyWithLogits's loss is
``logf(sum) - shifted[label]``, the C library's logf on every row (a generator that Eigen evaluates one
coefficient at a time, never in packets); SoftmaxCrossEntropyWithLogits's the row sums of
``labels * (log(sum) - shifted)``, that log a tensor's (packets). Measured against TensorFlow 2.21 on 2 to 128
rows of 3 to 100 classes (tests/data/tf_programs_softmax.json). Larger or other logits keep NumPy's functions (ops/nn.py)."""
from __future__ import annotations

import numpy as np

from tapecli.kernels import tf_float32

_LOGF = tf_float32.CFunction("logf", 1, np.log)
# Up to this many classes (and more rows than that), logits that these kernels do not take are worked class-major
# (ops/nn.py; kernels/plan_kernels.py's compiled pair follows it)
FEW_CLASSES = 32


def applies(logits) -> bool:
    return logits.__class__ is np.ndarray and logits.dtype == np.float32 and logits.ndim == 2 \
        and 0 < logits.size <= tf_float32.PACKET_LIMIT and logits.shape[1] <= tf_float32.LEAF


def _shifted_and_sums(logits):
    shifted = logits - logits.max(axis=1, keepdims=True)
    return shifted, tf_float32.row_sums(tf_float32.row_exp(shifted))


def sparse_xent(logits, labels):
    """The loss per row, or None where the kernel above does not apply (logits: rows x classes)."""
    if not applies(logits):
        return None
    shifted, sums = _shifted_and_sums(logits)
    logs = np.array([_LOGF(s) for s in sums.tolist()], np.float32)
    return logs - shifted[np.arange(len(labels)), labels]


def sparse_xent_backprop(logits, labels):
    """``exp(shifted) / sum - one_hot(label)``, or None where the kernel above does not apply."""
    if not applies(logits):
        return None
    shifted, sums = _shifted_and_sums(logits)
    out = tf_float32.exp(shifted) / sums[:, None]
    out[np.arange(len(labels)), labels] -= 1
    return out


def softmax_xent(logits, labels):
    """SoftmaxCrossEntropyWithLogits's loss per row, ``sum(labels * (log(sum) - shifted))``: the log a tensor op
    (packets), the row sums Eigen's; None where the kernel above does not apply."""
    if not applies(logits):
        return None
    shifted, sums = _shifted_and_sums(logits)
    return tf_float32.row_sums(labels * (tf_float32.log(sums)[:, None] - shifted))


def softmax_xent_backprop(logits, labels):
    """Its backprop ``exp(shifted) / sum - labels``, or None where the kernel above does not apply."""
    if not applies(logits):
        return None
    shifted, sums = _shifted_and_sums(logits)
    return tf_float32.exp(shifted) / sums[:, None] - labels
