"""TensorFlow's float16 (and bfloat16) kernels on the CPU, bit for bit, where they are not float32's rounded.

Eigen's half-float packets compute each function in float32 and round it to float16 (``F16_PACKET_FUNCTION``),
its adds and products likewise; so an op that is one Eigen function is float32's of the operands, rounded, and
one that TensorFlow writes as an expression of several (Sigmoid, Softplus, Softmax) rounds after each of them:

* Sigmoid (Eigen's generic ``scalar_logistic_op``): ``e / (1 + e)``, e = exp(x) rounded, 1 where e is infinite;
* Softplus: tf_float32.softplus_half;
* Softmax and LogSoftmax (softmax_op_functor.h): ``x - max``, its exp, the row's sum (tf_sums' float16
  order), its inverse and the product, each rounded (``shifted - log(sum(exp(shifted)))`` for LogSoftmax).

A bfloat16 op computes as float32 and rounds where tests/kernels/test_tf_half.py found TensorFlow's bits so
(``BFLOAT16_OPS``); TensorFlow's bfloat16 Sum and Mean add in float32 (its CASTING_SPECIALIZATION) and round."""
from __future__ import annotations

import numpy as np

from tapecli.kernels import tf_float32

_F32 = np.dtype(np.float32)


def _exp(x):
    return tf_float32.exp(x.astype(_F32)).astype(x.dtype)


def sigmoid(x):
    e = _exp(x)
    with np.errstate(all="ignore"):
        return np.where(np.isinf(e), x.dtype.type(1), e / (x.dtype.type(1) + e))


def softmax(x, axis, row_sum):
    shifted = x - np.max(x, axis=axis, keepdims=True)
    e = _exp(shifted)
    with np.errstate(divide="ignore"):
        return e * (x.dtype.type(1) / row_sum(e, axis=axis, keepdims=True))


def log_softmax(x, axis, row_sum):
    shifted = x - np.max(x, axis=axis, keepdims=True)
    with np.errstate(divide="ignore"):
        return shifted - tf_float32.log(row_sum(_exp(shifted), axis=axis, keepdims=True).astype(_F32)).astype(x.dtype)
