"""Keras 3's focal crossentropies, Dice, Tversky and the generalized cross entropy, with the TensorFlow
backend's formulas (compositions of recorded ops: their gradients are the ops')."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import TdfValueError
from tapecli.library.core import to_axis
from tapecli.library.keras.common import converted, flag, num
from tapecli.library.keras.losses import EPSILON, _bce_elementwise, _f, _float, constructor
from tapecli.runtime.values import Tensor


def _pair(y_true, y_pred):
    y_pred = converted(y_pred, "y_pred")
    y_pred = _float(y_pred, y_pred.dtype if y_pred.dtype.kind == "f" else np.dtype(np.float32))
    return _float(converted(y_true, "y_true"), y_pred.dtype), y_pred


def _axis(axis):
    return None if axis is None else to_axis(axis)        # an axis or a tuple of them (Dice's (1, 2, 3))


def binary_focal_crossentropy(y_true, y_pred, apply_class_balancing=False, alpha=0.25, gamma=2.0, from_logits=False,
                              label_smoothing=0.0, axis=-1):
    y_true, y_pred = _pair(y_true, y_pred)
    d = y_pred.dtype
    one = _f(1.0, d)
    ls = num(label_smoothing, "label_smoothing")
    if ls:
        y_true = ops.add(ops.mul(y_true, _f(1.0 - ls, d)), _f(0.5 * ls, d))
    if flag(from_logits):
        y_pred = ops.sigmoid(y_pred)
    bce = _bce_elementwise(y_true, y_pred, False)
    p_t = ops.add(ops.mul(y_true, y_pred), ops.mul(ops.sub(one, y_true), ops.sub(one, y_pred)))
    focal = ops.mul(ops.pow_(ops.sub(one, p_t), _f(num(gamma, "gamma"), d)), bce)
    if flag(apply_class_balancing):
        a = num(alpha, "alpha")
        focal = ops.mul(ops.add(ops.mul(y_true, _f(a, d)), ops.mul(ops.sub(one, y_true), _f(1 - a, d))), focal)
    return ops.reduce_mean(focal, axis=_axis(axis))


def categorical_focal_crossentropy(y_true, y_pred, alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0,
                                   axis=-1):
    y_true, y_pred = _pair(y_true, y_pred)
    d = y_pred.dtype
    axis = _axis(axis)
    ls = num(label_smoothing, "label_smoothing")
    if ls:
        y_true = ops.add(ops.mul(y_true, _f(1.0 - ls, d)), _f(ls / y_true.shape[-1], d))
    if flag(from_logits):
        y_pred = ops.softmax(y_pred, axis=axis)
    output = ops.div(y_pred, ops.reduce_sum(y_pred, axis=axis, keepdims=True))
    output = ops.clip(output, _f(EPSILON, d), _f(1.0 - EPSILON, d))
    cce = ops.mul(ops.neg(y_true), ops.log(output))
    factor = ops.mul(ops.pow_(ops.sub(_f(1.0, d), output), _f(num(gamma, "gamma"), d)), _f(num(alpha, "alpha"), d))
    return ops.reduce_sum(ops.mul(factor, cce), axis=axis)


def dice(y_true, y_pred, axis=None):
    y_true, y_pred = _pair(y_true, y_pred)
    d, axis = y_pred.dtype, _axis(axis)
    intersection = ops.reduce_sum(ops.mul(y_true, y_pred), axis=axis)
    total = ops.add(ops.add(ops.reduce_sum(y_true, axis=axis), ops.reduce_sum(y_pred, axis=axis)), _f(EPSILON, d))
    return ops.sub(_f(1.0, d), ops.div(ops.mul(_f(2.0, d), intersection), total))


def tversky(y_true, y_pred, alpha=0.5, beta=0.5, axis=None):
    y_true, y_pred = _pair(y_true, y_pred)
    d, axis = y_pred.dtype, _axis(axis)
    one = _f(1.0, d)
    intersection = ops.reduce_sum(ops.mul(y_true, y_pred), axis=axis)
    fp = ops.reduce_sum(ops.mul(ops.sub(one, y_pred), y_true), axis=axis)
    fn = ops.reduce_sum(ops.mul(y_pred, ops.sub(one, y_true)), axis=axis)
    denominator = ops.add(ops.add(ops.add(intersection, ops.mul(fp, _f(num(alpha, "alpha"), d))),
                                  ops.mul(fn, _f(num(beta, "beta"), d))), _f(EPSILON, d))
    return ops.sub(one, ops.div(intersection, denominator))


def categorical_generalized_cross_entropy(y_true, y_pred, q):
    y_pred = converted(y_pred, "y_pred")
    q = num(q, "q")
    if not 0 < q <= 1:
        raise TdfValueError(f"q must be in the interval (0, 1], got q={q}")
    labels = np.asarray(converted(y_true, "y_true").value).astype(np.int64)
    onehot = (labels[..., None] == np.arange(y_pred.shape[-1])).astype(y_pred.dtype)
    p = ops.reduce_sum(ops.mul(y_pred, Tensor(onehot)), axis=-1)
    d = y_pred.dtype
    return ops.div(ops.sub(_f(1.0, d), ops.pow_(p, _f(q, d))), _f(q, d))


FUNCTIONS = {"binary_focal_crossentropy": binary_focal_crossentropy,
             "categorical_focal_crossentropy": categorical_focal_crossentropy, "dice": dice, "tversky": tversky,
             "categorical_generalized_cross_entropy": categorical_generalized_cross_entropy}
CLASSES = {
    "BinaryFocalCrossentropy": constructor("BinaryFocalCrossentropy", binary_focal_crossentropy,
                                           "binary_focal_crossentropy",
                                           {"apply_class_balancing": False, "alpha": 0.25, "gamma": 2.0,
                                            "from_logits": False, "label_smoothing": 0.0, "axis": -1}),
    "CategoricalFocalCrossentropy": constructor("CategoricalFocalCrossentropy", categorical_focal_crossentropy,
                                                "categorical_focal_crossentropy",
                                                {"alpha": 0.25, "gamma": 2.0, "from_logits": False,
                                                 "label_smoothing": 0.0, "axis": -1}),
    "Dice": constructor("Dice", dice, "dice", {"axis": None}),
    "Tversky": constructor("Tversky", tversky, "tversky", {"alpha": 0.5, "beta": 0.5, "axis": None}),
    "CategoricalGeneralizedCrossEntropy": constructor("CategoricalGeneralizedCrossEntropy",
                                                      categorical_generalized_cross_entropy,
                                                      "categorical_generalized_cross_entropy", {"q": 0.5}),
}
