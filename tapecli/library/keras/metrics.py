"""Keras 3 metrics Mean, SparseCategoricalAccuracy and CategoricalAccuracy: float32 totals and counts,
updated as state (nothing is recorded); the loss metrics; F1Score/FBetaScore and R2Score (``ConfusionMetric``'s
machinery); top-k accuracies, Pearson and concordance correlations and MeanMetricWrapper."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import ShapeError, TdfTypeError, TdfValueError
from tapecli.kernels import tf_sums
from tapecli.library.core import to_dtype
from tapecli.library.keras.common import (MetricObject, float_dtype, integer, num, scalar, state_value, state_variable,
                                         tensor)
from tapecli.library.keras.confusion import EPSILON, FirstBatchShaped, same_rank
from tapecli.runtime.values import Tensor


def _sum(x, axis=None, mean=False):
    """ops.sum (ops.mean with ``mean``) of a float array as TensorFlow adds (kernels/tf_sums.py), NumPy's where
    that does not follow TensorFlow."""
    out = tf_sums.reduce_sum(x, axis, mean=mean)
    if out is None:
        out = (np.mean if mean else np.sum)(x, axis=axis, dtype=x.dtype)
    return x.dtype.type(out) if out.ndim == 0 else out


class Mean(MetricObject):
    """Keras's Mean (and the metrics it is the base of): ``total`` and ``count``, variables of its dtype (Keras's
    floatx where none is given: float64 after set_floatx("float64"))."""

    default_name = "mean"
    listed = ("total", "count")         # its variables, as Keras's class has them
    total, count = state_value("total"), state_value("count")
    values_taken = 1                    # update_state's arguments before sample_weight (y_true, y_pred: 2)

    def __init__(self, name=None, dtype=None):
        self.name = name or self.default_name
        self.dtype = np.dtype(float_dtype() if dtype is None else to_dtype(dtype))
        self.state = {k: state_variable(self.name, k, self.dtype.type(0.0)) for k in ("total", "count")}

    def keras_variables(self) -> list:
        return [self.state[k] for k in self.listed]

    def values_of(self, args, kwargs):
        values = args[0] if args else kwargs.pop("values", None)
        if values is None:
            raise TdfTypeError("update_state takes values: metric.update_state(values, sample_weight=None)")
        return np.asarray(tensor(values).value, dtype=self.dtype)

    def update_state(self, *args, **kwargs):
        args = list(args)
        if len(args) > self.values_taken:           # (sample_weight given by position, as Keras takes it)
            if len(args) > self.values_taken + 1:
                raise TdfTypeError(f"update_state takes {self.values_taken + 1} positional arguments at most, got "
                                   f"{len(args)}")
            if "sample_weight" in kwargs:
                raise TdfTypeError("update_state got multiple values for argument 'sample_weight'")
            kwargs["sample_weight"] = args.pop()
        sample_weight = kwargs.pop("sample_weight", None)
        values = self.values_of(args, kwargs)
        if kwargs:
            raise TdfTypeError(f"update_state got unexpected arguments {sorted(kwargs)}")
        self.add(values, sample_weight)

    def add(self, values, sample_weight):
        """Keras's reduce_to_samplewise_values, then total += sum(values), count += the weights' sum
        (or the number of samples)."""
        values = np.asarray(values, self.dtype)
        if sample_weight is not None:
            sw = np.asarray(tensor(sample_weight, "sample_weight").value, dtype=self.dtype)
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
        kind = self.dtype.type
        count = _sum(sw) if sample_weight is not None else kind(values.shape[0] if values.ndim else 1)
        self.total = kind(self.total + _sum(values))
        self.count = kind(self.count + count)

    def result(self):
        return scalar(0.0 if self.count == 0 else self.total / self.count, self.dtype)

    def reset_state(self):
        self.total = self.dtype.type(0.0)
        self.count = self.dtype.type(0.0)

    def methods(self):
        return {"update_state": self.update_state, "result": self.result, "reset_state": self.reset_state,
                "reset_states": self.reset_state}

    def attributes(self):
        return {"name": self.name, "total": lambda: self.state["total"], "count": lambda: self.state["count"]}

    def call(self, interp, args, kwargs, node):
        self.update_state(*args, **kwargs)
        return self.result()


class SparseCategoricalAccuracy(Mean):
    default_name = "sparse_categorical_accuracy"
    values_taken = 2

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
    values_taken = 2

    def values_of(self, args, kwargs):
        y_true = args[0] if args else kwargs.pop("y_true", None)
        y_pred = args[1] if len(args) > 1 else kwargs.pop("y_pred", None)
        if y_true is None or y_pred is None:
            raise TdfTypeError("update_state takes (y_true, y_pred, sample_weight=None)")
        return np.asarray(type(self).fn(y_true, y_pred, **self.options).value, dtype=self.dtype)


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
    _loss_metric("BinaryCrossentropy", "binary_crossentropy", from_logits=False, label_smoothing=0),   # (Keras's 0)
    _loss_metric("CategoricalCrossentropy", "categorical_crossentropy", from_logits=False, label_smoothing=0,
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
    values_taken = 2

    def values_of(self, args, kwargs):
        from tapecli.library.keras import losses
        y_true = args[0] if args else kwargs.pop("y_true", None)
        y_pred = args[1] if len(args) > 1 else kwargs.pop("y_pred", None)
        y_true, y_pred = losses.same_rank(tensor(y_true, "y_true"), tensor(y_pred, "y_pred"))
        return np.square(np.asarray(y_pred.value, self.dtype) - np.asarray(y_true.value, self.dtype))

    def result(self):
        return scalar(0.0 if self.count == 0 else np.sqrt(self.dtype.type(self.total / self.count)), self.dtype)


class Sum(Mean):
    default_name = "sum"
    listed = ("total",)

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


# ------------------------------------------------------------------ F-scores and R2 (ConfusionMetric's machinery)
class FBetaScore(FirstBatchShaped):
    """Per-class (average=None) or averaged ('micro', 'macro', 'weighted') F-beta of thresholded predictions
    (threshold None: each row's maximum is the positive class)."""

    kinds = ("tp", "fp", "fn", "weights")
    state_names = {"tp": "true_positives", "fp": "false_positives", "fn": "false_negatives",
                   "weights": "intermediate_weights"}

    def __init__(self, average=None, beta=1.0, threshold=None, name="fbeta_score", dtype=None):
        if average not in (None, "micro", "macro", "weighted"):
            raise TdfValueError("average must be one of None, 'micro', 'macro', 'weighted', got "
                                f"average={average!r}")
        self.average = average
        self.beta = np.float32(num(beta, "beta"))
        if self.beta <= 0:
            raise TdfValueError(f"beta must be > 0, got {float(self.beta)}")
        self.threshold = None if threshold is None else num(threshold, "threshold")
        if self.threshold is not None and not 0 < self.threshold <= 1:
            raise TdfValueError(f"threshold must be in (0, 1], got {self.threshold}")
        super().__init__(name)

    def count(self, y_true, y_pred, sample_weight):
        if y_true.ndim != 2 or y_pred.ndim != 2:
            raise ShapeError(f"{type(self).__name__} expects 2-D y_true and y_pred (batch, classes), got shapes "
                             f"{list(y_true.shape)} and {list(y_pred.shape)}")
        if self.threshold is None:
            pred = ((y_pred >= np.max(y_pred, axis=-1, keepdims=True)) & (np.abs(y_pred) > 1e-9))
        else:
            pred = y_pred > np.float32(self.threshold)
        pred = pred.astype(np.float32)
        axis = None if self.average == "micro" else 0

        def weighted(values):
            if sample_weight is not None:
                values = values * np.expand_dims(sample_weight, 1)
            return np.sum(values, axis=axis, dtype=np.float32)
        one = np.float32(1)
        return {"tp": weighted(pred * y_true), "fp": weighted(pred * (one - y_true)),
                "fn": weighted((one - pred) * y_true), "weights": weighted(y_true)}

    def result(self):
        c = self.counts
        if not c:
            return scalar(0.0)
        eps, b2 = np.float32(EPSILON), self.beta ** 2
        precision = c["tp"] / (c["tp"] + c["fp"] + eps)
        recall = c["tp"] / (c["tp"] + c["fn"] + eps)
        f = precision * recall / (b2 * precision + recall + eps) * (np.float32(1) + b2)
        if self.average == "weighted":
            f = np.sum(f * (c["weights"] / (np.sum(c["weights"], dtype=np.float32) + eps)), dtype=np.float32)
        elif self.average is not None:
            f = np.mean(f, dtype=np.float32)
        return scalar(f)


class F1Score(FBetaScore):
    def __init__(self, average=None, threshold=None, name="f1_score", dtype=None):
        super().__init__(average, 1.0, threshold, name, dtype)


class R2Score(FirstBatchShaped):
    """The coefficient of determination per output, aggregated ('uniform_average', 'variance_weighted_average'
    or None), adjusted for ``num_regressors``."""

    kinds = ("num_samples", "squared_sum", "sum", "total_mse", "count")
    state_names = {"num_samples": "num_samples", "squared_sum": "squared_sum", "sum": "sum", "total_mse": "residual",
                   "count": "count"}

    def __init__(self, class_aggregation="uniform_average", num_regressors=0, name="r2_score", dtype=None):
        if class_aggregation not in (None, "uniform_average", "variance_weighted_average"):
            raise TdfValueError("class_aggregation must be one of None, 'uniform_average', "
                                f"'variance_weighted_average', got {class_aggregation!r}")
        self.aggregation = class_aggregation
        self.regressors = integer(num_regressors, "num_regressors")
        if self.regressors < 0:
            raise TdfValueError(f"num_regressors must be >= 0, got {self.regressors}")
        super().__init__(name)

    def count(self, y_true, y_pred, sample_weight):
        y_true, y_pred = same_rank(y_true, y_pred)
        if y_true.ndim != 2 or y_pred.ndim != 2:
            raise ShapeError(f"R2Score expects 2-D y_true and y_pred (samples, outputs), got shapes "
                             f"{list(y_true.shape)} and {list(y_pred.shape)}")
        sw = np.float32(1) if sample_weight is None else sample_weight
        sw = sw[:, None] if np.ndim(sw) == 1 else sw
        sw = np.broadcast_to(np.asarray(sw, np.float32), y_true.shape)
        weighted = y_true * sw
        return {"sum": np.sum(weighted, axis=0, dtype=np.float32),
                "squared_sum": np.sum(y_true * weighted, axis=0, dtype=np.float32),
                "total_mse": np.sum((y_true - y_pred) ** 2 * sw, axis=0, dtype=np.float32),
                "count": np.sum(sw, axis=0, dtype=np.float32), "num_samples": np.float32(y_true.size)}

    def zeros(self) -> dict:
        """``num_samples`` (Keras makes it at init; the others at the first batch)."""
        return {"num_samples": np.float32(0)}

    def result(self):
        c = self.counts
        if "sum" not in c:
            return scalar(0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            mean = c["sum"] / c["count"]
            total = c["squared_sum"] - c["sum"] * mean
            raw = np.float32(1) - c["total_mse"] / total
        raw = np.where(np.isinf(raw), np.float32(0), raw).astype(np.float32)
        if self.aggregation == "uniform_average":
            r2 = np.mean(raw, dtype=np.float32)
        elif self.aggregation == "variance_weighted_average":
            r2 = np.float32(np.sum(total * raw, dtype=np.float32) / np.sum(total, dtype=np.float32))
        else:
            r2 = raw
        n = int(c["num_samples"])
        if self.regressors and self.regressors < n - 1:
            r2 = np.float32(1) - (np.float32(1) - r2) * np.float32(n - 1) / np.float32(n - self.regressors - 1)
        return scalar(r2)


# ------------------------------------------------------------------ per-sample metric functions
def _pair(y_true, y_pred):
    y_pred = np.asarray(tensor(y_pred, "y_pred").value)
    y_pred = y_pred.astype(np.float32) if y_pred.dtype.kind != "f" else y_pred
    return np.asarray(tensor(y_true, "y_true").value).astype(y_pred.dtype), y_pred


def _in_top_k(targets, predictions, k):
    """ops.in_top_k: the target's prediction is finite and fewer than k predictions are above it."""
    rows = np.arange(predictions.shape[0])
    target = predictions[rows, targets]
    above = np.sum(predictions > target[:, None], axis=-1)
    return np.isfinite(target) & (above < k)


def top_k_categorical_accuracy(y_true, y_pred, k=5):
    y_true, y_pred = _pair(y_true, y_pred)
    labels = np.argmax(y_true, axis=-1)
    return _top_k_matches(labels, y_pred, integer(k, "k"))


def sparse_top_k_categorical_accuracy(y_true, y_pred, k=5, from_sorted_ids=False):
    y_pred = np.asarray(tensor(y_pred, "y_pred").value)
    labels = np.asarray(tensor(y_true, "y_true").value)
    k = integer(k, "k")
    if from_sorted_ids:
        shape = labels.shape
        flat = y_pred.reshape(-1, y_pred.shape[-1]) if y_pred.ndim > 2 else y_pred
        matches = np.any(labels.reshape(-1)[:, None].astype(flat.dtype) == flat[:, :k], axis=1)
        return Tensor(matches.astype(np.float32).reshape(shape))
    return _top_k_matches(labels.astype(np.int32), y_pred, k)


def _top_k_matches(labels, y_pred, k):
    shape = labels.shape
    flat = y_pred.reshape(-1, y_pred.shape[-1]) if y_pred.ndim > 2 else y_pred
    labels = labels.reshape(-1)
    if labels.shape[0] != flat.shape[0]:
        raise ShapeError(f"y_true gives {labels.shape[0]} labels for {flat.shape[0]} rows of y_pred")
    return Tensor(_in_top_k(labels, flat, k).astype(np.float32).reshape(shape))


def pearson_correlation(y_true, y_pred, axis=-1):
    y_true, y_pred = same_rank(*_pair(y_true, y_pred))
    axis = integer(axis, "axis")
    t = y_true - np.mean(y_true, axis=axis, keepdims=True, dtype=y_true.dtype)
    p = y_pred - np.mean(y_pred, axis=axis, keepdims=True, dtype=y_pred.dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = t / np.std(t, axis=axis, keepdims=True, dtype=t.dtype)
        p = p / np.std(p, axis=axis, keepdims=True, dtype=p.dtype)
    return Tensor(np.mean(t * p, axis=axis, dtype=t.dtype))


def concordance_correlation(y_true, y_pred, axis=-1):
    """Keras's formula as written (its covariance centres y_true on y_pred's mean)."""
    y_true, y_pred = same_rank(*_pair(y_true, y_pred))
    axis = integer(axis, "axis")
    t_mean = np.mean(y_true, axis=axis, keepdims=True, dtype=y_true.dtype)
    p_mean = np.mean(y_pred, axis=axis, keepdims=True, dtype=y_pred.dtype)
    t_var = np.var(y_true - t_mean, axis=axis, keepdims=True, dtype=y_true.dtype)
    p_var = np.var(y_pred - p_mean, axis=axis, keepdims=True, dtype=y_pred.dtype)
    covar = (y_true - p_mean) * (y_pred - p_mean)
    norm = t_var + p_var + np.square(t_mean - p_mean)
    return Tensor(np.mean(2 * covar / (norm + y_true.dtype.type(EPSILON)), axis=axis, dtype=y_true.dtype))


SAMPLE_FUNCTIONS = {"top_k_categorical_accuracy": top_k_categorical_accuracy,
             "sparse_top_k_categorical_accuracy": sparse_top_k_categorical_accuracy,
             "pearson_correlation": pearson_correlation, "concordance_correlation": concordance_correlation}


class MeanMetricWrapper(Mean):
    """The mean of ``fn(y_true, y_pred, **kwargs)``'s per-sample values (``fn`` a builtin or the program's)."""
    values_taken = 2

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        super().__init__(name or getattr(fn, "__name__", None) or "mean_metric_wrapper", dtype)
        self.fn = fn
        self.options = kwargs
        self.interp = None

    def values_of(self, args, kwargs):
        y_true = args[0] if args else kwargs.pop("y_true", None)
        y_pred = args[1] if len(args) > 1 else kwargs.pop("y_pred", None)
        if y_true is None or y_pred is None:
            raise TdfTypeError("update_state takes (y_true, y_pred, sample_weight=None)")
        if self.interp is None:            # one of the wrappers below: a Python function of this module
            values = self.fn(y_true, y_pred, **self.options)
        else:
            values = self.interp.call_value(self.fn, [y_true, y_pred], dict(self.options), None)
        return np.asarray(tensor(values, "the function's values").value, dtype=np.float32)


def _wrapped(class_name, fn, default_name, **defaults):
    """A MeanMetricWrapper of ``fn`` with Keras's keyword arguments (PearsonCorrelation, TopK...)."""
    import inspect

    def __init__(self, *args, **kwargs):
        bound = sig.bind(self, *args, **kwargs)
        bound.apply_defaults()
        values = dict(bound.arguments)
        del values["self"]
        MeanMetricWrapper.__init__(self, fn, values.pop("name"), values.pop("dtype"), **values)
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)] + [
        inspect.Parameter(k, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=v)
        for k, v in {**{k: v for k, v in defaults.items() if k != "_first"}, "name": default_name,
                     "dtype": None}.items()]
    if defaults.get("_first"):
        params = [params[0], *params[-2:], *params[1:-2]]
    sig = inspect.Signature(params)
    __init__.__signature__ = sig
    return type(class_name, (MeanMetricWrapper,), {"__init__": __init__, "default_name": default_name})


def mean_metric_wrapper(interp, fn, name=None, dtype=None, **kwargs):
    """keras.metrics.MeanMetricWrapper(fn, ...): ``fn`` is called as the program calls it."""
    metric = MeanMetricWrapper(fn, name, dtype, **kwargs)
    metric.interp = interp
    return metric


SCORE_METRICS = [FBetaScore, F1Score, R2Score,
           _wrapped("TopKCategoricalAccuracy", top_k_categorical_accuracy, "top_k_categorical_accuracy", k=5),
           _wrapped("SparseTopKCategoricalAccuracy", sparse_top_k_categorical_accuracy,
                    "sparse_top_k_categorical_accuracy", k=5, from_sorted_ids=False),
           _wrapped("PearsonCorrelation", pearson_correlation, "pearson_correlation", axis=-1, _first=True),
           _wrapped("ConcordanceCorrelation", concordance_correlation, "concordance_correlation", axis=-1,
                    _first=True)]
