"""Keras 3 losses, object and function forms, with the TensorFlow backend's formulas: per-sample
values over the last axis, then ``reduction`` ("sum_over_batch_size" divides the weighted sum by the
number of values, not by the sum of the weights)."""
from __future__ import annotations

import numpy as np

from tapecli import kernels, ops
from tapecli.errors import ShapeError, TdfTypeError, TdfValueError
from tapecli.interpreter.objects import PURE
from tapecli.library.core import to_axis, to_dtype
from tapecli.library.keras import activations
from tapecli.library.keras.common import KerasObject, converted, flag, float_dtype, num, scalar, tensor
from tapecli.library.keras.layers import eager_mask
from tapecli.runtime.context import current
from tapecli.runtime.values import Tensor

EPSILON = 1e-7
REDUCTIONS = ("sum_over_batch_size", "sum", "mean", "none", None)


def _f(x, dtype):
    return scalar(x, dtype)


def _float(t: Tensor, dtype) -> Tensor:
    return t if t.dtype == dtype else ops.cast(t, dtype)


def same_rank(a: Tensor, b: Tensor):
    """Keras's squeeze_or_expand_to_same_rank: ranks differing by one with a trailing 1."""
    if a.ndim == b.ndim + 1 and a.shape[-1] == 1:
        return (ops.reshape(a, a.shape[:-1]), b) if b.ndim != 1 else (a, ops.reshape(b, (*b.shape, 1)))
    if b.ndim == a.ndim + 1 and b.shape[-1] == 1:
        return (a, ops.reshape(b, b.shape[:-1])) if a.ndim != 1 else (ops.reshape(a, (*a.shape, 1)), b)
    return a, b


def apply_mask(sample_weight, mask: Tensor, mean: bool):
    """Keras's apply_mask: the mask as float32 weights (for a mean, total / valid where valid, else 0), times
    the sample weights if any."""
    valid = np.asarray(mask.value).astype(bool)
    if mean:
        count = np.sum(valid, dtype=np.float32)
        weight = np.float32(valid.size) / count if count else np.float32(0)     # (divide_no_nan)
        weights = Tensor(np.where(valid, weight, np.float32(0)).astype(np.float32))
    else:
        weights = Tensor(valid.astype(np.float32))
    if sample_weight is None:
        return weights
    weights, given = same_rank(weights, ops.cast(tensor(sample_weight, "sample_weight"), np.float32))
    return ops.mul(given, weights)


def _pair(y_true, y_pred, name, same_shape=False, integers=np.dtype(np.float32)):
    """The labels and predictions as floats of one dtype: the predictions' float dtype, else ``integers``."""
    y_pred = converted(y_pred, "y_pred")
    y_true = converted(y_true, "y_true")
    dtype = y_pred.dtype if y_pred.dtype.kind == "f" else integers
    y_pred, y_true = _float(y_pred, dtype), _float(y_true, dtype)
    y_true, y_pred = same_rank(y_true, y_pred)
    try:
        shape = np.broadcast_shapes(y_true.shape, y_pred.shape)
    except ValueError:
        shape = None
    if shape is None or (same_shape and y_true.shape != y_pred.shape):
        raise ShapeError(f"{name}: y_true has shape {list(y_true.shape)} and y_pred has shape "
                         f"{list(y_pred.shape)}, which do not match")
    return y_true, y_pred


def _mean_last(x):
    return ops.reduce_mean(x, axis=-1) if x.ndim else x


def mean_squared_error(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred, "mean_squared_error")
    return _mean_last(ops.square(ops.sub(y_true, y_pred)))


def mean_absolute_error(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred, "mean_absolute_error")
    return _mean_last(ops.abs_(ops.sub(y_true, y_pred)))


def huber(y_true, y_pred, delta=1.0):
    y_true, y_pred = _pair(y_true, y_pred, "huber")
    d = y_pred.dtype
    delta = _f(num(delta, "delta"), d)
    error = ops.sub(y_pred, y_true)
    a = ops.abs_(error)
    half = _f(0.5, d)
    small = ops.mul(half, ops.square(error))
    large = ops.sub(ops.mul(delta, a), ops.mul(half, ops.square(delta)))
    return _mean_last(ops.where(ops.less_equal(a, delta), small, large))


def _hinge_labels(y_true):
    """Keras's convert_binary_labels_to_hinge: labels that are all 0 or 1 become -1 or 1."""
    v = np.asarray(y_true.value)
    if np.all((v == 0) | (v == 1)):
        return ops.sub(ops.mul(_f(2.0, y_true.dtype), y_true), _f(1.0, y_true.dtype))
    return y_true


def _margin(y_true, y_pred, name):
    y_true, y_pred = _pair(y_true, y_pred, name)
    d = y_pred.dtype
    return ops.maximum(ops.sub(_f(1.0, d), ops.mul(_hinge_labels(y_true), y_pred)), _f(0.0, d))


def hinge(y_true, y_pred):
    return _mean_last(_margin(y_true, y_pred, "hinge"))


def squared_hinge(y_true, y_pred):
    return _mean_last(ops.square(_margin(y_true, y_pred, "squared_hinge")))


def categorical_hinge(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred, "categorical_hinge")
    d = y_pred.dtype
    pos = ops.reduce_sum(ops.mul(y_true, y_pred), axis=-1)
    neg = ops.reduce_max(ops.mul(ops.sub(_f(1.0, d), y_true), y_pred), axis=-1)
    return ops.maximum(ops.add(ops.sub(neg, pos), _f(1.0, d)), _f(0.0, d))


def mean_absolute_percentage_error(y_true, y_pred):
    """Keras's: an integer y_pred makes its epsilon an integer (0), and the division TensorFlow's of integers
    (float64): a zero label gives inf or nan, as Keras's (a loss object casts the predictions to floats first)."""
    integer = converted(y_pred, "y_pred").dtype.kind != "f"
    y_true, y_pred = _pair(y_true, y_pred, "mean_absolute_percentage_error", integers=np.dtype(np.float64))
    d = y_pred.dtype
    epsilon = _f(0.0 if integer else 1e-7, d)
    diff = ops.abs_(ops.div(ops.sub(y_true, y_pred), ops.maximum(ops.abs_(y_true), epsilon)))
    return ops.mul(_f(100.0, d), _mean_last(diff))


def mean_squared_logarithmic_error(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred, "mean_squared_logarithmic_error")
    d = y_pred.dtype
    first = ops.log(ops.add(ops.maximum(y_pred, _f(1e-7, d)), _f(1.0, d)))
    second = ops.log(ops.add(ops.maximum(y_true, _f(1e-7, d)), _f(1.0, d)))
    return _mean_last(ops.square(ops.sub(first, second)))


def l2_normalize(x, axis, epsilon=1e-7):
    """Keras's ops.normalize (order 2): x * min(rsqrt(sum(x^2)), 1 / epsilon)."""
    inv = ops.rsqrt(ops.reduce_sum(ops.square(x), axis=axis, keepdims=True))
    return ops.mul(x, ops.minimum(inv, _f(1.0 / epsilon, x.dtype)))


def cosine_similarity(y_true, y_pred, axis=-1):
    y_true, y_pred = _pair(y_true, y_pred, "cosine_similarity")
    axis = int(num(axis, "axis"))
    return ops.neg(ops.reduce_sum(ops.mul(l2_normalize(y_true, axis), l2_normalize(y_pred, axis)), axis=axis))


def log_cosh(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred, "log_cosh")
    d = y_pred.dtype
    x = ops.sub(y_pred, y_true)
    value = ops.sub(ops.add(x, ops.softplus(ops.mul(x, _f(-2.0, d)))), _f(float(np.log(np.float32(2.0))), d))
    return _mean_last(value)


def kl_divergence(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred, "kl_divergence")
    d = y_pred.dtype
    t = ops.clip(y_true, _f(1e-7, d), _f(1.0, d))
    p = ops.clip(y_pred, _f(1e-7, d), _f(1.0, d))
    return ops.reduce_sum(ops.mul(t, ops.log(ops.div(t, p))), axis=-1)


def poisson(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred, "poisson")
    d = y_pred.dtype
    return _mean_last(ops.sub(y_pred, ops.mul(y_true, ops.log(ops.add(y_pred, _f(1e-7, d))))))


def _logits(y_pred, from_logits, op, name):
    """The predictions and from_logits TensorFlow's backend computes a cross-entropy from (its _get_logits): the
    logits Keras's softmax or sigmoid kept on the predictions, where it made them."""
    logits = activations.logits_of(y_pred)
    if logits is None:
        return y_pred, from_logits
    if op == "Sigmoid" and current().functions:
        # (reading the logits too, a graph's cross-entropy keeps TensorFlow's sigmoid apart from its MatMul: the
        # predictions are Eigen's sigmoid, not the fused kernel's the forward pass took, as the metrics read them)
        y_pred.value = kernels.run("sigmoid", [logits.value], {})
    if from_logits:
        current().settings.warn_once(f'"`{name}` received `from_logits=True`, but the `output` argument was produced '
                                     f'by a {op} activation and thus does not represent logits. Was this intended?')
    return logits, True


def _bce_elementwise(z, x, from_logits):
    d = x.dtype
    if from_logits:          # tf.nn.sigmoid_cross_entropy_with_logits
        cond = ops.greater_equal(x, _f(0.0, d))
        relu_logits = ops.where(cond, x, _f(0.0, d))
        neg_abs = ops.where(cond, ops.neg(x), x)
        return ops.add(ops.sub(relu_logits, ops.mul(x, z)), ops.log1p(ops.exp(neg_abs)))
    p = ops.clip(x, _f(EPSILON, d), _f(1.0 - EPSILON, d))
    one = _f(1.0, d)
    return ops.neg(ops.add(ops.mul(z, ops.log(p)), ops.mul(ops.sub(one, z), ops.log(ops.sub(one, p)))))


def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    y_true, y_pred = _pair(y_true, y_pred, "binary_crossentropy", same_shape=True)
    ls = num(label_smoothing, "label_smoothing")
    if ls:
        d = y_pred.dtype
        y_true = ops.add(ops.mul(y_true, _f(1.0 - ls, d)), _f(0.5 * ls, d))
    values = _bce_elementwise(y_true, *_logits(y_pred, flag(from_logits), "Sigmoid", "binary_crossentropy"))
    return ops.reduce_mean(values, axis=int(num(axis, "axis"))) if values.ndim else values


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    y_true, y_pred = _pair(y_true, y_pred, "categorical_crossentropy", same_shape=True)
    if y_pred.ndim == 0:
        raise ShapeError("categorical_crossentropy needs predictions with a class axis, got a scalar")
    axis = int(num(axis, "axis"))
    d = y_pred.dtype
    ls = num(label_smoothing, "label_smoothing")
    if ls:
        y_true = ops.add(ops.mul(y_true, _f(1.0 - ls, d)), _f(ls / y_pred.shape[axis], d))
    y_pred, from_logits = _logits(y_pred, flag(from_logits), "Softmax", "categorical_crossentropy")
    if from_logits:     # tf.nn.softmax_cross_entropy_with_logits, its gradient TensorFlow's
        return ops.softmax_cross_entropy_with_logits(ops.cast(y_true, y_pred.dtype), y_pred, axis=axis)
    p = ops.div(y_pred, ops.reduce_sum(y_pred, axis=axis, keepdims=True))
    p = ops.clip(p, _f(EPSILON, d), _f(1.0 - EPSILON, d))
    return ops.neg(ops.reduce_sum(ops.mul(y_true, ops.log(p)), axis=axis))


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, ignore_class=None, axis=-1):
    return _scce(y_true, y_pred, from_logits, ignore_class)[0]


def _integer_labels(labels) -> None:
    if np.any(labels != np.floor(labels)):
        raise TdfValueError("sparse_categorical_crossentropy: y_true must hold integer class indices")


def _labels_in_range(labels, n) -> None:
    if labels.size and (labels.min() < 0 or labels.max() >= n):
        bad = (labels < 0) | (labels >= n)
        raise TdfValueError(f"Received a label value of {int(labels[bad].flat[0])} which is outside the valid range "
                            f"of [0, {n}).")


def _scce(y_true, y_pred, from_logits=False, ignore_class=None):
    """The per-sample losses and, with ignore_class, the mask of the labels that count."""
    y_pred = converted(y_pred, "y_pred")
    labels = np.asarray(converted(y_true, "y_true").value)
    if y_pred.ndim == 0:
        raise ShapeError("sparse_categorical_crossentropy needs predictions with a class axis, got a scalar")
    if labels.ndim == y_pred.ndim and labels.shape[-1] == 1:
        labels = labels.reshape(labels.shape[:-1])
    if labels.shape != y_pred.shape[:-1]:
        raise ShapeError(f"sparse_categorical_crossentropy: y_true has shape {list(labels.shape)} and y_pred has "
                         f"shape {list(y_pred.shape)}: y_true must have the shape of y_pred without its last axis",
                         hint="pass integer class indices, one per row of y_pred")
    if labels.dtype.kind == "f":
        kernels.checked(_integer_labels, labels)
    if labels.dtype != np.int64:     # (a host kernel: labels a loop plan takes from each batch stay its inputs)
        labels = kernels.run_on_host("cast", [labels], {"dtype": np.dtype(np.int64)})
    n = y_pred.shape[-1]
    valid = None if ignore_class is None else labels != int(num(ignore_class))
    if ignore_class is not None:
        labels = np.where(valid, labels, 0)
    kernels.checked(_labels_in_range, labels, n)
    d = y_pred.dtype
    if ignore_class is not None:
        y_pred = ops.where(Tensor(valid[..., None]), y_pred, _f(0.0, d))
    y_pred, from_logits = _logits(y_pred, flag(from_logits), "Softmax", "sparse_categorical_crossentropy")
    if not from_logits:
        y_pred = ops.log(ops.clip(y_pred, _f(EPSILON, d), _f(1.0 - EPSILON, d)))
    res = ops.sparse_xent(labels, y_pred)      # tf.nn.sparse_softmax_cross_entropy_with_logits, as Keras calls it
    if ignore_class is not None:
        return ops.where(Tensor(valid), res, _f(0.0, d)), valid
    return res, None


FUNCTIONS = {
    "mean_squared_error": mean_squared_error, "mse": mean_squared_error, "MSE": mean_squared_error,
    "mean_absolute_error": mean_absolute_error, "mae": mean_absolute_error, "MAE": mean_absolute_error,
    "huber": huber, "binary_crossentropy": binary_crossentropy,
    "categorical_crossentropy": categorical_crossentropy,
    "sparse_categorical_crossentropy": sparse_categorical_crossentropy,
}
# registered as "losses.NAME" and "metrics.NAME" (tf.random.poisson is another poisson)
QUALIFIED_FUNCTIONS = {
    "hinge": hinge, "squared_hinge": squared_hinge, "categorical_hinge": categorical_hinge,
    "mean_absolute_percentage_error": mean_absolute_percentage_error, "mape": mean_absolute_percentage_error,
    "MAPE": mean_absolute_percentage_error, "mean_squared_logarithmic_error": mean_squared_logarithmic_error,
    "msle": mean_squared_logarithmic_error, "MSLE": mean_squared_logarithmic_error,
    "cosine_similarity": cosine_similarity, "log_cosh": log_cosh, "logcosh": log_cosh,
    "kl_divergence": kl_divergence, "kld": kl_divergence, "KLD": kl_divergence,
    "kullback_leibler_divergence": kl_divergence, "poisson": poisson,
}


def reduce(values: Tensor, sample_weight, reduction, mask=None):
    """Keras's reduce_weighted_values; ``mask`` marks the values that count (ignore_class)."""
    if sample_weight is not None:
        sw = _float(tensor(sample_weight, "sample_weight"), values.dtype)
        values, sw = same_rank(values, sw)
        try:
            np.broadcast_shapes(values.shape, sw.shape)
        except ValueError:
            raise ShapeError(f"sample_weight of shape {list(sw.shape)} does not broadcast to the losses of shape "
                             f"{list(values.shape)}") from None
        values = ops.mul(values, sw)
    if mask is not None:
        count = int(mask.sum())
        if reduction in ("sum_over_batch_size", "mean"):
            total = ops.reduce_sum(values)
            return total if count == 0 else ops.div(total, _f(count, values.dtype))
    if reduction in (None, "none") or values.shape in ((), (0,)):
        return values
    total = ops.reduce_sum(values)
    if reduction in ("sum_over_batch_size", "mean"):
        return ops.div(total, _f(values.size, values.dtype))
    return total


class Loss(KerasObject):
    kind_word = "a loss"
    keras_bases = ("keras.Loss",)
    class_name = None       # Keras's class (its constructor's name)

    def python_class(self) -> str | None:
        """``type(loss)``: Keras's class of a loss object."""
        return None if self.class_name is None else f"keras.src.losses.losses.{self.class_name}"

    def __init__(self, fn, default_name, reduction="sum_over_batch_size", name=None, dtype=None, **options):
        if reduction not in REDUCTIONS:
            raise TdfValueError(f"Invalid value for argument `reduction`. Expected one of "
                                f"{list(REDUCTIONS)}. Received: reduction={reduction!r}")
        self.fn, self.reduction, self.name, self.options = fn, reduction, name or default_name, options
        self.dtype = float_dtype() if dtype is None else to_dtype(dtype)

    def replay_kind(self, args, kwargs, tracked):
        # the labels are read into Python (the hinge losses' 0/1 test, the ignored ones counted): they must not
        # come from the plan's inputs; sparse cross-entropy's checks and conversion are a plan's (kernels.checked)
        labels = args[0] if args else kwargs.get("y_true")
        if tracked(labels) and not (self.fn is sparse_categorical_crossentropy and self.options.get("ignore_class") is None):
            return None
        return PURE

    def call(self, interp, args, kwargs, node):
        kwargs = dict(kwargs)
        names = ["y_true", "y_pred", "sample_weight"]
        got = dict(zip(names, args))
        for k in list(kwargs):
            if k not in names or k in got:
                raise TdfTypeError(f"a loss is called as loss(y_true, y_pred, sample_weight=None); got {k}=")
            got[k] = kwargs.pop(k)
        if "y_true" not in got or "y_pred" not in got or len(args) > 3:
            raise TdfTypeError("a loss is called as loss(y_true, y_pred, sample_weight=None)")
        predicted_mask = eager_mask(interp, got["y_pred"])     # (Keras's: the predictions' mask weighs the losses)
        if predicted_mask is not None:
            got["sample_weight"] = apply_mask(got.get("sample_weight"), predicted_mask,
                                              mean=self.reduction in ("sum_over_batch_size", "mean"))
        # Keras's Loss.__call__ converts both to its dtype (the labels of sparse cross-entropy stay labels)
        got["y_pred"] = _float(converted(got["y_pred"], "y_pred"), self.dtype)
        if self.fn is not sparse_categorical_crossentropy:
            got["y_true"] = _float(converted(got["y_true"], "y_true"), self.dtype)
        if self.fn is sparse_categorical_crossentropy:
            values, mask = _scce(got["y_true"], got["y_pred"], **self.options)
        else:
            values, mask = self.fn(got["y_true"], got["y_pred"], **self.options), None
        return reduce(values, got.get("sample_weight"), self.reduction, mask)

    def attributes(self):
        return {"name": self.name, "reduction": self.reduction}

    def methods(self):
        return {"get_config": self.get_config}

    def get_config(self) -> dict:
        """Keras's config of a loss: its name and reduction, and the options its class's get_config lists (a
        cross-entropy's, Dice's, Tversky's; Huber's delta and CosineSimilarity's axis are not among them)."""
        config = {"name": self.name, "reduction": self.reduction}
        config.update((key, self.options[key]) for key in _CONFIG_OPTIONS.get(self.class_name, ()))
        return config


# the options each loss class's get_config adds to its name and reduction, in Keras's order
_CROSSENTROPY = ("from_logits", "label_smoothing", "axis")
_CONFIG_OPTIONS = {"BinaryCrossentropy": _CROSSENTROPY, "CategoricalCrossentropy": _CROSSENTROPY,
                   "SparseCategoricalCrossentropy": ("from_logits", "ignore_class"),
                   "BinaryFocalCrossentropy": (*_CROSSENTROPY, "apply_class_balancing", "alpha", "gamma"),
                   "CategoricalFocalCrossentropy": (*_CROSSENTROPY, "alpha", "gamma"), "Dice": ("axis",),
                   "Tversky": ("alpha", "beta", "axis"), "CategoricalGeneralizedCrossEntropy": ("q",)}


# loss classes without options: the class, and its function (its default name)
_PLAIN = {"Hinge": "hinge", "SquaredHinge": "squared_hinge", "CategoricalHinge": "categorical_hinge",
          "MeanAbsolutePercentageError": "mean_absolute_percentage_error",
          "MeanSquaredLogarithmicError": "mean_squared_logarithmic_error", "LogCosh": "log_cosh",
          "KLDivergence": "kl_divergence", "Poisson": "poisson"}


def make(cls_name):
    """The constructor of a loss class: its function, default name and options."""
    spec = {
        "MeanSquaredError": (mean_squared_error, "mean_squared_error", {}),
        "MeanAbsoluteError": (mean_absolute_error, "mean_absolute_error", {}),
        "Huber": (huber, "huber_loss", {"delta": 1.0}),
        "BinaryCrossentropy": (binary_crossentropy, "binary_crossentropy",
                               {"from_logits": False, "label_smoothing": 0.0, "axis": -1}),
        "CategoricalCrossentropy": (categorical_crossentropy, "categorical_crossentropy",
                                    {"from_logits": False, "label_smoothing": 0.0, "axis": -1}),
        "SparseCategoricalCrossentropy": (sparse_categorical_crossentropy, "sparse_categorical_crossentropy",
                                          {"from_logits": False, "ignore_class": None}),
        "CosineSimilarity": (cosine_similarity, "cosine_similarity", {"axis": -1}),
        **{name: (QUALIFIED_FUNCTIONS[fn], fn, {}) for name, fn in _PLAIN.items()},
    }[cls_name]
    return constructor(cls_name, *spec)


def constructor(cls_name, fn, default_name, defaults):
    """A loss class's constructor: ``fn``'s options with their ``defaults``, then reduction and name."""
    def construct(*args, reduction="sum_over_batch_size", name=None, dtype=None, **kwargs):
        options = dict(defaults)
        for key, value in zip(defaults, args):
            options[key] = value
        for key, value in kwargs.items():
            if key not in defaults:
                raise TdfTypeError(f"{cls_name}() got an unexpected keyword argument {key!r}",
                                   hint=f"its options are {', '.join(defaults)}, reduction, name and dtype")
            options[key] = value
        loss = Loss(fn, default_name, reduction, name, dtype, **options)
        loss.class_name = cls_name
        return loss
    construct.__name__ = cls_name
    return construct


CLASS_NAMES = ["MeanSquaredError", "MeanAbsoluteError", "Huber", "BinaryCrossentropy", "CategoricalCrossentropy",
               "SparseCategoricalCrossentropy"]
QUALIFIED_CLASS_NAMES = ["CosineSimilarity", *_PLAIN]     # keras.metrics has metrics of these names


# ------------------------------------------------------------------ Keras 3's focal crossentropies, Dice, Tversky and
# the generalized cross entropy (compositions of recorded ops: their gradients are the ops')
def _float_pair(y_true, y_pred):
    y_pred = converted(y_pred, "y_pred")
    y_pred = _float(y_pred, y_pred.dtype if y_pred.dtype.kind == "f" else np.dtype(np.float32))
    return _float(converted(y_true, "y_true"), y_pred.dtype), y_pred


def _axis(axis):
    return None if axis is None else to_axis(axis)        # an axis or a tuple of them (Dice's (1, 2, 3))


def binary_focal_crossentropy(y_true, y_pred, apply_class_balancing=False, alpha=0.25, gamma=2.0, from_logits=False,
                              label_smoothing=0.0, axis=-1):
    y_true, y_pred = _float_pair(y_true, y_pred)
    d = y_pred.dtype
    one = _f(1.0, d)
    ls = num(label_smoothing, "label_smoothing")
    if ls:
        y_true = ops.add(ops.mul(y_true, _f(1.0 - ls, d)), _f(0.5 * ls, d))
    if flag(from_logits):
        y_pred = activations.sigmoid(y_pred)
    bce = _bce_elementwise(y_true, *_logits(y_pred, False, "Sigmoid", "binary_crossentropy"))
    p_t = ops.add(ops.mul(y_true, y_pred), ops.mul(ops.sub(one, y_true), ops.sub(one, y_pred)))
    focal = ops.mul(ops.pow_(ops.sub(one, p_t), _f(num(gamma, "gamma"), d)), bce)
    if flag(apply_class_balancing):
        a = num(alpha, "alpha")
        focal = ops.mul(ops.add(ops.mul(y_true, _f(a, d)), ops.mul(ops.sub(one, y_true), _f(1 - a, d))), focal)
    return ops.reduce_mean(focal, axis=_axis(axis))


def categorical_focal_crossentropy(y_true, y_pred, alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0,
                                   axis=-1):
    y_true, y_pred = _float_pair(y_true, y_pred)
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
    y_true, y_pred = _float_pair(y_true, y_pred)
    d, axis = y_pred.dtype, _axis(axis)
    intersection = ops.reduce_sum(ops.mul(y_true, y_pred), axis=axis)
    total = ops.add(ops.add(ops.reduce_sum(y_true, axis=axis), ops.reduce_sum(y_pred, axis=axis)), _f(EPSILON, d))
    return ops.sub(_f(1.0, d), ops.div(ops.mul(_f(2.0, d), intersection), total))


def tversky(y_true, y_pred, alpha=0.5, beta=0.5, axis=None):
    y_true, y_pred = _float_pair(y_true, y_pred)
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


def ctc(y_true, y_pred):
    """Keras's CTC loss: keras.ops.ctc_loss of integer labels padded with 0, the blank (mask) 0, each label's
    length its count of non-zero entries, every sequence all of y_pred's steps."""
    from tapecli.library.keras.ops_nn import ctc_loss
    y_true, y_pred = converted(y_true, "y_true"), converted(y_pred, "y_pred")
    if y_true.ndim != 2:
        raise TdfValueError("Targets `y_true` are expected to be a tensor of shape `(batch_size, max_length)` in "
                            f"integer format. Received: y_true.shape={y_true.shape}")
    if y_pred.ndim != 3:
        raise TdfValueError("Logits `y_pred` are expected to be a tensor of shape `(batch_size, max_length, "
                            f"num_classes)`. Received: y_pred.shape={y_pred.shape}")
    batch, steps = y_pred.shape[:2]
    label_length = ops.cast(ops.reduce_sum(ops.cast(ops.not_equal(y_true, _f(0, y_true.dtype)), np.int32), axis=-1),
                            np.int32)
    return ctc_loss(y_true, y_pred, label_length, Tensor(np.full(batch, steps, np.int32)), mask_index=0)


KERAS3_FUNCTIONS = {"binary_focal_crossentropy": binary_focal_crossentropy,
             "categorical_focal_crossentropy": categorical_focal_crossentropy, "dice": dice, "tversky": tversky,
             "categorical_generalized_cross_entropy": categorical_generalized_cross_entropy, "ctc": ctc}
KERAS3_CLASSES = {
    "BinaryFocalCrossentropy": constructor("BinaryFocalCrossentropy", binary_focal_crossentropy,
                                           "binary_focal_crossentropy",
                                           {"apply_class_balancing": False, "alpha": 0.25, "gamma": 2.0,
                                            "from_logits": False, "label_smoothing": 0.0, "axis": -1}),
    "CategoricalFocalCrossentropy": constructor("CategoricalFocalCrossentropy", categorical_focal_crossentropy,
                                                "categorical_focal_crossentropy",
                                                {"alpha": 0.25, "gamma": 2.0, "from_logits": False,
                                                 "label_smoothing": 0.0, "axis": -1}),
    "Dice": constructor("Dice", dice, "dice", {"axis": None}),
    "CTC": constructor("CTC", ctc, "ctc", {}),
    "Tversky": constructor("Tversky", tversky, "tversky", {"alpha": 0.5, "beta": 0.5, "axis": None}),
    "CategoricalGeneralizedCrossEntropy": constructor("CategoricalGeneralizedCrossEntropy",
                                                      categorical_generalized_cross_entropy,
                                                      "categorical_generalized_cross_entropy", {"q": 0.5}),
}
