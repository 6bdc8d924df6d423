"""Keras 3 metrics Mean, SparseCategoricalAccuracy and CategoricalAccuracy: float32 totals and counts,
updated as state (nothing is recorded)."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import ShapeError, TdfTypeError
from tapecli.kernels import tf_sums
from tapecli.library.keras.common import MetricObject, scalar, tensor
from tapecli.runtime.values import Tensor


def _sum(x, axis=None, mean=False):
    """ops.sum (ops.mean with ``mean``) of a float32 array as TensorFlow adds (kernels/tf_sums.py), NumPy's
    where that does not follow TensorFlow."""
    out = tf_sums.reduce_sum(x, axis, mean=mean)
    if out is None:
        out = (np.mean if mean else np.sum)(x, axis=axis, dtype=np.float32)
    return np.float32(out) if out.ndim == 0 else out


class Mean(MetricObject):
    default_name = "mean"

    def __init__(self, name=None, dtype=None):
        self.name = name or self.default_name
        self.total = np.float32(0.0)
        self.count = np.float32(0.0)

    def values_of(self, args, kwargs):
        values = args[0] if args else kwargs.pop("values", None)
        if values is None:
            raise TdfTypeError("update_state takes values: metric.update_state(values, sample_weight=None)")
        return np.asarray(tensor(values).value, dtype=np.float32)

    def update_state(self, *args, **kwargs):
        sample_weight = kwargs.pop("sample_weight", None)
        values = self.values_of(list(args), kwargs)
        if kwargs:
            raise TdfTypeError(f"update_state got unexpected arguments {sorted(kwargs)}")
        self.add(values, sample_weight)

    def add(self, values, sample_weight):
        """Keras's reduce_to_samplewise_values, then total += sum(values), count += the weights' sum
        (or the number of samples)."""
        values = np.asarray(values, np.float32)
        if sample_weight is not None:
            sw = np.asarray(tensor(sample_weight, "sample_weight").value, dtype=np.float32)
            if values.ndim == sw.ndim + 1 and values.shape[-1] == 1:
                values = values.reshape(values.shape[:-1])
            elif sw.ndim == values.ndim + 1 and sw.shape[-1] == 1:
                sw = sw.reshape(sw.shape[:-1])
            values_ndim = values.ndim
            if values.ndim > sw.ndim:
                values = _sum(values, tuple(range(sw.ndim, values.ndim)), mean=True)
            try:
                sw = np.broadcast_to(sw, values.shape)
            except ValueError:
                raise ShapeError(f"sample_weight of shape {list(sw.shape)} does not broadcast to values of shape "
                                 f"{list(values.shape)}") from None
            values = values * sw
            if values_ndim > 1 and sw.ndim > 1:
                sw = _sum(sw, tuple(range(1, sw.ndim)), mean=True)
        if values.ndim > 1:
            values = _sum(values, tuple(range(1, values.ndim)), mean=True)
        count = _sum(sw) if sample_weight is not None else \
            np.float32(values.shape[0] if values.ndim else 1)
        self.total = np.float32(self.total + _sum(values))
        self.count = np.float32(self.count + count)

    def result(self):
        return scalar(0.0 if self.count == 0 else self.total / self.count)

    def reset_state(self):
        self.total = np.float32(0.0)
        self.count = np.float32(0.0)

    def methods(self):
        return {"update_state": self.update_state, "result": self.result, "reset_state": self.reset_state,
                "reset_states": self.reset_state}

    def attributes(self):
        return {"name": self.name, "total": lambda: scalar(self.total), "count": lambda: scalar(self.count)}

    def call(self, interp, args, kwargs, node):
        self.update_state(*args, **kwargs)
        return self.result()


class SparseCategoricalAccuracy(Mean):
    default_name = "sparse_categorical_accuracy"

    def values_of(self, args, kwargs):
        y_true = args[0] if args else kwargs.pop("y_true", None)
        y_pred = args[1] if len(args) > 1 else kwargs.pop("y_pred", None)
        if y_true is None or y_pred is None:
            raise TdfTypeError("update_state takes (y_true, y_pred, sample_weight=None)")
        return self.matches(np.asarray(tensor(y_true, "y_true").value), np.asarray(tensor(y_pred, "y_pred").value))

    def matches(self, y_true, y_pred):
        if y_true.ndim == y_pred.ndim and y_true.ndim > 0 and y_true.shape[-1] == 1:
            y_true = y_true.reshape(y_true.shape[:-1])
        if y_true.shape != y_pred.shape[:-1]:
            raise ShapeError(f"y_true has shape {list(y_true.shape)} and y_pred has shape {list(y_pred.shape)}: "
                             "y_true must have the shape of y_pred without its last axis")
        return (y_true.astype(np.float32) == np.argmax(y_pred, axis=-1).astype(np.float32)).astype(np.float32)


class CategoricalAccuracy(SparseCategoricalAccuracy):
    default_name = "categorical_accuracy"

    def matches(self, y_true, y_pred):
        if y_true.shape != y_pred.shape:
            raise ShapeError(f"y_true has shape {list(y_true.shape)} and y_pred has shape {list(y_pred.shape)}, "
                             "which do not match")
        return (np.argmax(y_true, axis=-1) == np.argmax(y_pred, axis=-1)).astype(np.float32)


class BinaryAccuracy(SparseCategoricalAccuracy):
    default_name = "binary_accuracy"

    def __init__(self, name=None, dtype=None, threshold=0.5):
        super().__init__(name, dtype)
        self.threshold = float(np.asarray(tensor(threshold, "threshold").value)) if not isinstance(
            threshold, (int, float)) else float(threshold)

    def matches(self, y_true, y_pred):
        if y_true.ndim == y_pred.ndim - 1:
            y_true = y_true[..., None]
        pred = (y_pred > np.asarray(self.threshold, y_pred.dtype)).astype(np.float32)
        return (y_true.astype(np.float32) == pred).astype(np.float32)     # Mean averages the last axis


METRICS = [Mean, SparseCategoricalAccuracy, CategoricalAccuracy, BinaryAccuracy]


class _LossMean(Mean):
    """Keras's MeanMetricWrapper around a loss function: the mean of its per-sample values."""

    fn = None
    options: dict = {}

    def values_of(self, args, kwargs):
        y_true = args[0] if args else kwargs.pop("y_true", None)
        y_pred = args[1] if len(args) > 1 else kwargs.pop("y_pred", None)
        if y_true is None or y_pred is None:
            raise TdfTypeError("update_state takes (y_true, y_pred, sample_weight=None)")
        return np.asarray(type(self).fn(y_true, y_pred, **self.options).value, dtype=np.float32)


def _loss_metric(class_name, fn_name, **defaults):
    """A metric class named ``class_name`` whose values are the loss function ``fn_name``'s, with Keras's
    keyword arguments and defaults."""
    from tapecli.library.keras import losses

    def __init__(self, name=fn_name, dtype=None, **options):
        Mean.__init__(self, name, dtype)
        unknown = sorted(set(options) - set(defaults))
        if unknown:
            raise TdfTypeError(f"{class_name}() got an unexpected keyword argument '{unknown[0]}'")
        self.options = {**defaults, **options}
    import inspect
    __init__.__signature__ = inspect.Signature(
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD),
         inspect.Parameter("name", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=fn_name),
         inspect.Parameter("dtype", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None)] +
        [inspect.Parameter(k, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=v) for k, v in defaults.items()])
    fn = {**losses.FUNCTIONS, **losses.QUALIFIED_FUNCTIONS}[fn_name]
    return type(class_name, (_LossMean,), {"fn": staticmethod(fn), "__init__": __init__,
                                           "default_name": fn_name})


LOSS_METRICS = [
    _loss_metric("MeanSquaredError", "mean_squared_error"),
    _loss_metric("MeanAbsoluteError", "mean_absolute_error"),
    _loss_metric("BinaryCrossentropy", "binary_crossentropy", from_logits=False, label_smoothing=0.0),
    _loss_metric("CategoricalCrossentropy", "categorical_crossentropy", from_logits=False, label_smoothing=0.0,
                 axis=-1),
    _loss_metric("SparseCategoricalCrossentropy", "sparse_categorical_crossentropy", from_logits=False, axis=-1),
    _loss_metric("Hinge", "hinge"), _loss_metric("SquaredHinge", "squared_hinge"),
    _loss_metric("CategoricalHinge", "categorical_hinge"), _loss_metric("KLDivergence", "kl_divergence"),
    _loss_metric("LogCoshError", "logcosh"), _loss_metric("Poisson", "poisson"),
    _loss_metric("MeanAbsolutePercentageError", "mean_absolute_percentage_error"),
    _loss_metric("MeanSquaredLogarithmicError", "mean_squared_logarithmic_error"),
    _loss_metric("CosineSimilarity", "cosine_similarity", axis=-1),      # the loss's negation, below
]


LOSS_METRICS[-1].fn = staticmethod(lambda y_true, y_pred, axis=-1: _negated_cosine(y_true, y_pred, axis))


def _negated_cosine(y_true, y_pred, axis):
    """keras.metrics' cosine_similarity: +sum(normalized y_true * normalized y_pred)."""
    from tapecli.library.keras import losses
    return ops.neg(losses.cosine_similarity(y_true, y_pred, axis))


class RootMeanSquaredError(Mean):
    """The square root of the mean (over samples, then batches) of the squared errors."""
    default_name = "root_mean_squared_error"

    def values_of(self, args, kwargs):
        from tapecli.library.keras import losses
        y_true = args[0] if args else kwargs.pop("y_true", None)
        y_pred = args[1] if len(args) > 1 else kwargs.pop("y_pred", None)
        y_true, y_pred = losses.same_rank(tensor(y_true, "y_true"), tensor(y_pred, "y_pred"))
        return np.square(np.asarray(y_pred.value, np.float32) - np.asarray(y_true.value, np.float32))

    def result(self):
        return scalar(0.0 if self.count == 0 else np.sqrt(np.float32(self.total / self.count)))


class Sum(Mean):
    default_name = "sum"

    def result(self):
        return scalar(self.total)


class Accuracy(SparseCategoricalAccuracy):
    default_name = "accuracy"

    def matches(self, y_true, y_pred):
        return (y_true.astype(np.float32) == y_pred.astype(np.float32)).astype(np.float32)


METRICS += [RootMeanSquaredError, Sum, Accuracy]


def accuracy_function(cls):
    """keras.metrics.binary_accuracy and the like: the per-sample values of the metric."""
    def fn(y_true, y_pred, **options):
        return Tensor(cls(**options).values_of([y_true, y_pred], {}))
    fn.__name__ = cls.default_name
    return fn


ACCURACY_FUNCTIONS = {"binary_accuracy": accuracy_function(BinaryAccuracy),
                      "categorical_accuracy": accuracy_function(CategoricalAccuracy),
                      "sparse_categorical_accuracy": accuracy_function(SparseCategoricalAccuracy)}
