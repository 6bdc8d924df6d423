"""Keras 3's F1Score/FBetaScore, R2Score, IoU family, top-k accuracies, Pearson and concordance correlations and
MeanMetricWrapper: float32 state updated as Keras updates it (``ConfusionMetric``'s machinery), Keras's
result formulas."""
from __future__ import annotations

import numpy as np

from tapecli.errors import ShapeError, TdfTypeError, TdfValueError
from tapecli.library.keras.common import integer, num, scalar, tensor
from tapecli.library.keras.confusion import EPSILON, ConfusionMetric, floats, same_rank
from tapecli.library.keras.metrics import Mean
from tapecli.runtime.limits import admit
from tapecli.runtime.values import Tensor


class _Built(ConfusionMetric):
    """A metric whose state the first batch shapes (``kinds`` start absent)."""

    def __init__(self, name):
        super().__init__(name, [0.5], evenly=False)

    def reset_state(self):
        self.counts = {}

    def attributes(self):
        return {"name": self.name}


class FBetaScore(_Built):
    """Per-class (average=None) or averaged ('micro', 'macro', 'weighted') F-beta of thresholded predictions
    (threshold None: each row's maximum is the positive class)."""

    kinds = ("tp", "fp", "fn", "weights")

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


class R2Score(_Built):
    """The coefficient of determination per output, aggregated ('uniform_average', 'variance_weighted_average'
    or None), adjusted for ``num_regressors``."""

    kinds = ("sum", "squared_sum", "total_mse", "count", "num_samples")

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
                "count": np.sum(sw, axis=0, dtype=np.float32), "num_samples": np.int32(y_true.size)}

    def result(self):
        c = self.counts
        if not c:
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


def _class_count(num_classes) -> int:
    """num_classes, at least 1, its confusion matrix weighed before anything of that size is made."""
    n = integer(num_classes, "num_classes")
    if n < 1:
        raise TdfValueError(f"num_classes must be at least 1, got {n}")
    admit(n * n, 8, f"a {n:,} x {n:,} confusion matrix")
    return n


class IoU(_Built):
    """Intersection over union from a weighted confusion matrix of class ids (int32 unless ``dtype``, as
    Keras's: float weights are truncated then), averaged over ``target_class_ids``."""

    kinds = ("cm",)

    def __init__(self, num_classes, target_class_ids, name=None, dtype=None, ignore_class=None, sparse_y_true=True,
                 sparse_y_pred=True, axis=-1):
        self.num_classes = _class_count(num_classes)
        self.targets = [int(v) for v in floats(target_class_ids, "target_class_ids")]
        if max(self.targets) >= self.num_classes:
            raise TdfValueError(f"target class id {max(self.targets)} is out of range [0, {self.num_classes})")
        self.ignore_class = None if ignore_class is None else integer(ignore_class, "ignore_class")
        self.sparse = (bool(sparse_y_true), bool(sparse_y_pred))
        self.axis = integer(axis, "axis")
        self.dtype = np.dtype(np.int32) if dtype is None else np.dtype(getattr(dtype, "np", dtype))
        snake = "".join("_" + ch.lower() if ch.isupper() else ch for ch in type(self).__name__).lstrip("_")
        super().__init__(name or snake.replace("i_o_u", "iou"))

    def reset_state(self):
        self.counts = {"cm": np.zeros((self.num_classes, self.num_classes), self.dtype)}

    def classes(self, y_true, y_pred):
        if not self.sparse[0]:
            y_true = np.argmax(y_true, axis=self.axis)
        if not self.sparse[1]:
            y_pred = np.argmax(y_pred, axis=self.axis)
        return y_true.astype(self.dtype).reshape(-1), y_pred.astype(self.dtype).reshape(-1)

    def count(self, y_true, y_pred, sample_weight):
        y_true, y_pred = self.classes(y_true, y_pred)
        sw = np.ones((), self.dtype) if sample_weight is None else sample_weight.astype(self.dtype).reshape(
            -1 if sample_weight.ndim > 1 else sample_weight.shape)
        try:
            sw = np.broadcast_to(sw, y_true.shape)
        except ValueError:
            raise ShapeError(f"sample_weight of shape {list(np.shape(sample_weight))} does not broadcast to "
                             f"{list(y_true.shape)}") from None
        n = self.num_classes
        keep = (y_true >= 0) & (y_true < n) & (y_pred >= 0) & (y_pred < n)
        if self.ignore_class is not None:
            keep &= y_true != self.ignore_class
        y_true, y_pred = np.where(keep, y_true, 0), np.where(keep, y_pred, 0)
        cm = np.zeros((n, n), self.dtype)
        np.add.at(cm, (y_true.astype(np.int64), y_pred.astype(np.int64)), np.where(keep, sw, 0).astype(self.dtype))
        return {"cm": cm}

    def result(self):
        cm = self.counts["cm"]
        tp = np.diag(cm)
        denominator = (np.sum(cm, axis=0) + np.sum(cm, axis=1) - tp)[self.targets].astype(np.float32)
        tp = tp[self.targets].astype(np.float32)
        valid = denominator > np.float32(1e-9)
        iou = np.where(valid, tp / (denominator + np.float32(EPSILON)), np.float32(0))
        return scalar(np.sum(iou, dtype=np.float32) / (np.float32(np.sum(valid)) + np.float32(EPSILON)))


class BinaryIoU(IoU):
    def __init__(self, target_class_ids=(0, 1), threshold=0.5, name=None, dtype=None):
        self.threshold = np.float32(num(threshold, "threshold"))
        super().__init__(2, target_class_ids, name, dtype)

    def classes(self, y_true, y_pred):
        return super().classes(y_true, (y_pred >= self.threshold).astype(np.float32))


class MeanIoU(IoU):
    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None, sparse_y_true=True,
                 sparse_y_pred=True, axis=-1):
        n = _class_count(num_classes)
        super().__init__(n, list(range(n)), name, dtype, ignore_class, sparse_y_true, sparse_y_pred, axis)


class OneHotIoU(IoU):
    def __init__(self, num_classes, target_class_ids, name=None, dtype=None, ignore_class=None,
                 sparse_y_pred=False, axis=-1):
        super().__init__(num_classes, target_class_ids, name, dtype, ignore_class, False, sparse_y_pred, axis)


class OneHotMeanIoU(MeanIoU):
    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None, sparse_y_pred=False, axis=-1):
        super().__init__(num_classes, name, dtype, ignore_class, False, sparse_y_pred, axis)


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


FUNCTIONS = {"top_k_categorical_accuracy": top_k_categorical_accuracy,
             "sparse_top_k_categorical_accuracy": sparse_top_k_categorical_accuracy,
             "pearson_correlation": pearson_correlation, "concordance_correlation": concordance_correlation}


class MeanMetricWrapper(Mean):
    """The mean of ``fn(y_true, y_pred, **kwargs)``'s per-sample values (``fn`` a builtin or the program's)."""

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


METRICS = [FBetaScore, F1Score, R2Score, IoU, BinaryIoU, MeanIoU, OneHotIoU, OneHotMeanIoU,
           _wrapped("TopKCategoricalAccuracy", top_k_categorical_accuracy, "top_k_categorical_accuracy", k=5),
           _wrapped("SparseTopKCategoricalAccuracy", sparse_top_k_categorical_accuracy,
                    "sparse_top_k_categorical_accuracy", k=5, from_sorted_ids=False),
           _wrapped("PearsonCorrelation", pearson_correlation, "pearson_correlation", axis=-1, _first=True),
           _wrapped("ConcordanceCorrelation", concordance_correlation, "concordance_correlation", axis=-1,
                    _first=True)]
