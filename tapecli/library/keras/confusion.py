"""Keras 3's confusion-matrix metrics: TruePositives, FalsePositives, TrueNegatives, FalseNegatives,
Precision, Recall and AUC. Their state is float32 counts per threshold, updated as Keras's
``update_confusion_matrix_variables`` does (a prediction above a threshold is positive; labels cast to bool;
weights broadcast to the predictions), and their results are Keras's formulas on those counts."""
from __future__ import annotations

import numpy as np

from tapecli.errors import ShapeError, TdfTypeError, TdfValueError
from tapecli.library.keras.common import MetricObject, flag, integer, num, scalar, state_variable, tensor
from tapecli.runtime.limits import LIST_SLOT, admit
from tapecli.runtime.values import Tensor

EPSILON = 1e-7          # keras.backend.epsilon()
NEG_INF = -1e10         # metrics_utils.NEG_INF: every prediction is above it (top_k)
KINDS = ("tp", "fp", "tn", "fn")
# Keras's names of the state variables of the kinds of counts
STATE_NAMES = {"tp": "true_positives", "fp": "false_positives", "tn": "true_negatives", "fn": "false_negatives"}


def same_rank(x1, x2, expand_rank_1=True):
    """Keras's squeeze_or_expand_to_same_rank on arrays."""
    if x1.ndim == x2.ndim + 1 and x1.shape[-1] == 1:
        if x2.ndim == 1 and expand_rank_1:
            x2 = x2[..., None]
        else:
            x1 = x1[..., 0]
    if x2.ndim == x1.ndim + 1 and x2.shape[-1] == 1:
        if x1.ndim == 1 and expand_rank_1:
            x1 = x1[..., None]
        else:
            x2 = x2[..., 0]
    return x1, x2


def arrays(args, kwargs):
    """(y_true, y_pred, sample_weight) of update_state as float32 arrays (sample_weight None or an array)."""
    names = ("y_true", "y_pred", "sample_weight")
    values = dict(zip(names, args))
    for k in list(kwargs):
        if k not in names or k in values:
            raise TdfTypeError(f"update_state got an unexpected or repeated argument '{k}'",
                               hint="update_state(y_true, y_pred, sample_weight=None)")
        values[k] = kwargs.pop(k)
    if len(args) > 3 or values.get("y_true") is None or values.get("y_pred") is None:
        raise TdfTypeError("update_state takes (y_true, y_pred, sample_weight=None)")
    sw = values.get("sample_weight")
    return (np.asarray(tensor(values["y_true"], "y_true").value, np.float32),
            np.asarray(tensor(values["y_pred"], "y_pred").value, np.float32),
            None if sw is None else np.asarray(tensor(sw, "sample_weight").value, np.float32))


def thresholds_of(value, default):
    """parse_init_thresholds: a float or a list of floats in [0, 1] (None: ``default``)."""
    if value is None:
        return [default]
    values = floats(value, "thresholds")
    if any(not 0 <= v <= 1 for v in values):
        raise TdfValueError(f"thresholds must be in the range [0, 1], got {values}")
    return values


def floats(value, what) -> list:
    """A number or a list (or 1-D tensor) of numbers as Python floats."""
    if isinstance(value, (list, tuple)):
        return [num(v, what) for v in value]
    return [float(v) for v in np.atleast_1d(np.asarray(tensor(value, what).value, np.float64))]


def _filter_top_k(x, k):
    """metrics_utils._filter_top_k: values outside each row's top k become NEG_INF."""
    order = np.argsort(-x, axis=-1, kind="stable")[..., :k]
    mask = np.zeros_like(x)
    np.put_along_axis(mask, order, 1.0, axis=-1)
    return (x * mask + np.float32(NEG_INF) * (1 - mask)).astype(np.float32)


def evenly_spaced(thresholds) -> bool:
    """metrics_utils.is_evenly_distributed_thresholds: Keras then counts by buckets, on predictions clipped
    to [0, 1] (which the comparison below reproduces by clipping them too)."""
    n = len(thresholds)
    return n >= 3 and np.allclose(thresholds, np.arange(n, dtype=np.float32) / (n - 1), atol=EPSILON)


def confusion(y_true, y_pred, sample_weight, thresholds, top_k=None, class_id=None, multi_label=False,
              label_weights=None, clip=False) -> dict:
    """The weighted counts of each kind for each threshold: shape (T,), or (T, labels) with multi_label;
    ``clip``: evenly spaced thresholds (predictions clipped to [0, 1])."""
    y_pred, y_true = same_rank(y_pred, y_true)
    if y_pred.shape != y_true.shape:
        raise ShapeError(f"y_true has shape {list(y_true.shape)} and y_pred has shape {list(y_pred.shape)}, "
                         "which do not match")
    if sample_weight is not None:
        _, sample_weight = same_rank(y_true, sample_weight[..., None], expand_rank_1=False)
    if top_k is not None:
        y_pred = _filter_top_k(y_pred, top_k)
    if class_id is not None:
        if y_pred.ndim == 1:
            raise TdfValueError("when class_id is given, y_pred must be 2-D (num_samples, num_classes), "
                                f"got shape {list(y_pred.shape)}")
        y_true, y_pred = y_true[..., class_id, None], y_pred[..., class_id, None]
    thr = np.asarray(thresholds, np.float32)
    if clip:
        y_pred = np.clip(y_pred, np.float32(0), np.float32(1))
    if multi_label:
        if y_pred.ndim != 2:
            raise TdfValueError(f"y_pred must have rank 2 when multi_label=True, got shape {list(y_pred.shape)}")
        pred_pos = y_pred[None] > thr[:, None, None]
        labels = (y_true != 0)[None]
    else:
        pred_pos = y_pred.reshape(1, -1) > thr[:, None]
        labels = (y_true != 0).reshape(1, -1)
    weights = None
    try:
        if sample_weight is not None:
            weights = np.broadcast_to(sample_weight, y_pred.shape).reshape(labels.shape)
        if label_weights is not None and not multi_label:
            lw = np.broadcast_to(np.asarray(label_weights, np.float32)[None], y_pred.shape).reshape(labels.shape)
            weights = lw if weights is None else weights * lw
    except ValueError:
        raise ShapeError(f"sample_weight of shape {list(sample_weight.shape)} does not broadcast to y_pred's "
                         f"shape {list(y_pred.shape)}") from None
    out = {}
    for kind, (label, pred) in {"tp": (labels, pred_pos), "fp": (~labels, pred_pos),
                                "tn": (~labels, ~pred_pos), "fn": (labels, ~pred_pos)}.items():
        hits = (label & pred).astype(np.float32)
        if weights is not None:
            hits = hits * weights
        out[kind] = np.sum(hits, axis=1, dtype=np.float32)
    return out


def divide_no_nan(a, b):
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(b == 0, np.float32(0), a / np.where(b == 0, np.float32(1), b)).astype(np.float32)


def _inner_thresholds(n: int) -> list:
    """Keras' ``num_thresholds`` evenly spaced thresholds inside (0, 1), weighed before they are built (a slot,
    a Python float and, as the metric keeps them, an array element each)."""
    admit(n, LIST_SLOT + 24 + 8, "num_thresholds' thresholds")
    return [(i + 1) * 1.0 / (n - 1) for i in range(n - 2)]


class ConfusionMetric(MetricObject):
    """The base of Keras's stateful metrics here: ``count`` gives what a batch adds to each state array of
    ``kinds`` (per threshold, zero at the start; a state that the first batch shapes starts absent). The state
    is held in Keras variables (``metric.variables``), each named as Keras names it (``state_names``)."""

    kinds: tuple = KINDS
    state_names: dict = STATE_NAMES

    def __init__(self, name, thresholds, evenly=None):
        self.name = name
        self.thresholds = thresholds
        self.evenly = evenly_spaced(thresholds) if evenly is None else evenly
        self.state: dict = {}
        self.store(self.zeros())

    def zeros(self) -> dict:
        """The state at the start: zeros per threshold of each kind."""
        return {k: np.zeros(len(self.thresholds), np.float32) for k in self.kinds}

    @property
    def counts(self) -> dict:
        """The state's values by kind (none before a first batch shapes them)."""
        return {k: v.read().value for k, v in self.state.items()}

    def store(self, counts: dict) -> None:
        """Each kind's new values into its variable (made where it is not yet, or had another shape)."""
        for k, value in counts.items():
            held = self.state.get(k)
            if held is None or held.shape != value.shape:
                self.state[k] = state_variable(self.name, self.state_names[k], value)
            else:
                held.assign(np.asarray(value, held.dtype))

    def reset_state(self):
        """Keras's reset_state: every variable zeroed (they keep their shapes)."""
        self.store({k: np.zeros(v.shape, v.dtype) for k, v in self.state.items()})

    def count(self, y_true, y_pred, sample_weight):
        return confusion(y_true, y_pred, sample_weight, self.thresholds, clip=self.evenly)

    def update_state(self, *args, **kwargs):
        found = self.count(*arrays(list(args), kwargs))
        counts = self.counts
        self.store({k: counts[k] + found[k] if k in counts else found[k] for k in self.kinds})

    def methods(self):
        return {"update_state": self.update_state, "result": self.result, "reset_state": self.reset_state,
                "reset_states": self.reset_state}

    def attributes(self):
        return {"name": self.name, "thresholds": list(self.thresholds)}

    def call(self, interp, args, kwargs, node):
        self.update_state(*args, **kwargs)
        return self.result()

    def per_threshold(self, values) -> Tensor:
        return scalar(values[0] if len(self.thresholds) == 1 else values)


def _condition_count(class_name, kind, default_name):
    def __init__(self, thresholds=None, name=None, dtype=None):
        ConfusionMetric.__init__(self, name or default_name, thresholds_of(thresholds, 0.5))

    def result(self):
        return self.per_threshold(self.counts[kind])
    return type(class_name, (ConfusionMetric,), {"__init__": __init__, "result": result, "kinds": (kind,),
                                                 "state_names": {kind: "accumulator"}})


TruePositives = _condition_count("TruePositives", "tp", "true_positives")
FalsePositives = _condition_count("FalsePositives", "fp", "false_positives")
TrueNegatives = _condition_count("TrueNegatives", "tn", "true_negatives")
FalseNegatives = _condition_count("FalseNegatives", "fn", "false_negatives")


class Precision(ConfusionMetric):
    """tp / (tp + fp) per threshold (0 where nothing is predicted positive)."""

    kinds = ("tp", "fp")
    other = "fp"

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None):
        self.top_k = None if top_k is None else integer(top_k, "top_k")
        self.class_id = None if class_id is None else integer(class_id, "class_id")
        super().__init__(name or type(self).__name__.lower(),
                         thresholds_of(thresholds, 0.5 if top_k is None else NEG_INF))

    def count(self, y_true, y_pred, sample_weight):
        return confusion(y_true, y_pred, sample_weight, self.thresholds, self.top_k, self.class_id, clip=self.evenly)

    def result(self):
        tp = self.counts["tp"]
        return self.per_threshold(divide_no_nan(tp, tp + self.counts[self.other]))


class Recall(Precision):
    """tp / (tp + fn) per threshold."""

    kinds = ("tp", "fn")
    other = "fn"


class AUC(ConfusionMetric):
    """The area under the ROC or PR curve, from counts at ``num_thresholds`` thresholds (Keras's Riemann
    sums; the PR curve with interpolation is Davis & Goadrich's)."""

    def __init__(self, num_thresholds=200, curve="ROC", summation_method="interpolation", name=None, dtype=None,
                 thresholds=None, multi_label=False, num_labels=None, label_weights=None, from_logits=False):
        self.curve = str(curve).upper()
        if self.curve not in ("ROC", "PR"):
            raise TdfValueError(f"AUC: curve must be 'ROC' or 'PR' in tapecli, got {curve!r}")
        self.summation = str(summation_method).lower()
        if self.summation not in ("interpolation", "minoring", "majoring"):
            raise TdfValueError("AUC: summation_method must be 'interpolation', 'minoring' or 'majoring', "
                                f"got {summation_method!r}")
        if thresholds is not None:
            inner = sorted(floats(thresholds, "thresholds"))
        else:
            n = integer(num_thresholds, "num_thresholds")
            if n <= 1:
                raise TdfValueError(f"AUC: num_thresholds must be an integer > 1, got {n}")
            inner = _inner_thresholds(n)
        self.multi_label = flag(multi_label)
        if num_labels is not None and not self.multi_label:
            raise TdfValueError("AUC: num_labels is needed only when multi_label is True")
        self.label_weights = None if label_weights is None else np.asarray(
            tensor(label_weights, "label_weights").value, np.float32)
        self.from_logits = flag(from_logits)
        self.labels = None if num_labels is None else integer(num_labels, "num_labels")
        super().__init__(name or "auc", [0.0 - EPSILON] + inner + [1.0 + EPSILON],
                         evenly=thresholds is None or evenly_spaced([0.0] + inner + [1.0]))

    def zeros(self) -> dict:
        """Zeros per threshold (and per label, multi_label), none before the first batch gives the labels."""
        if self.multi_label and self.labels is None:
            return {}
        shape = (len(self.thresholds),) if not self.multi_label else (len(self.thresholds), self.labels)
        return {k: np.zeros(shape, np.float32) for k in self.kinds}

    def count(self, y_true, y_pred, sample_weight):
        if self.multi_label and self.labels is None:       # built by the first batch, as Keras's
            self.labels = y_pred.shape[-1] if y_pred.ndim == 2 else 1
            self.store(self.zeros())
        if self.from_logits:
            y_pred = (1 / (1 + np.exp(-y_pred))).astype(np.float32)
        return confusion(y_true, y_pred, sample_weight, self.thresholds, multi_label=self.multi_label,
                         label_weights=None if self.multi_label else self.label_weights, clip=self.evenly)

    def _by_label(self, terms):
        if not self.multi_label:
            return scalar(np.sum(terms, dtype=np.float32))
        by_label = np.sum(terms, axis=0, dtype=np.float32)
        if self.label_weights is None:
            return scalar(np.mean(by_label, dtype=np.float32))
        return scalar(divide_no_nan(np.sum(by_label * self.label_weights, dtype=np.float32),
                                    np.sum(self.label_weights, dtype=np.float32)))

    def result(self):
        c = self.counts
        tp, fp, tn, fn = c["tp"], c["fp"], c["tn"], c["fn"]
        if self.curve == "PR" and self.summation == "interpolation":
            return self._interpolated_pr(tp, fp, fn)
        recall = divide_no_nan(tp, tp + fn)
        x, y = (divide_no_nan(fp, fp + tn), recall) if self.curve == "ROC" else (recall, divide_no_nan(tp, tp + fp))
        if self.summation == "interpolation":
            heights = (y[:-1] + y[1:]) / np.float32(2.0)
        else:
            heights = (np.minimum if self.summation == "minoring" else np.maximum)(y[:-1], y[1:])
        return self._by_label(((x[:-1] - x[1:]) * heights).astype(np.float32))

    def _interpolated_pr(self, tp, fp, fn):
        dtp = tp[:-1] - tp[1:]
        p = tp + fp
        dp = p[:-1] - p[1:]
        slope = divide_no_nan(dtp, np.maximum(dp, 0))
        intercept = tp[1:] - slope * p[1:]
        ratio = np.where((p[:-1] > 0) & (p[1:] > 0), divide_no_nan(p[:-1], np.maximum(p[1:], 0)),
                         np.ones_like(p[1:]))
        increment = divide_no_nan(slope * (dtp + intercept * np.log(ratio)), np.maximum(tp[1:] + fn[1:], 0))
        return self._by_label(increment)

    def attributes(self):
        return {"name": self.name, "thresholds": list(self.thresholds),
                **{name: (lambda k=k: self.state[k]) for k, name in STATE_NAMES.items() if k in self.state}}


class _AtValue(ConfusionMetric):
    """SensitivitySpecificityBase: counts at ``num_thresholds`` evenly spaced thresholds in [0, 1]; the
    result is the largest ``dependent`` where ``constrained`` >= the value (0 if none)."""

    value_name = ""

    def __init__(self, value, num_thresholds=200, class_id=None, name=None, dtype=None):
        self.value = num(value, self.value_name)
        if not 0 <= self.value <= 1:
            raise TdfValueError(f"{type(self).__name__}: {self.value_name} must be in the range [0, 1], "
                                f"got {self.value}")
        n = integer(num_thresholds, "num_thresholds")
        if n <= 0:
            raise TdfValueError(f"{type(self).__name__}: num_thresholds must be an integer > 0, got {n}")
        self.class_id = None if class_id is None else integer(class_id, "class_id")
        thresholds = [0.5] if n == 1 else [0.0] + _inner_thresholds(n) + [1.0]
        snake = "".join("_" + ch.lower() if ch.isupper() else ch for ch in type(self).__name__).lstrip("_")
        super().__init__(name or snake, thresholds, evenly=n > 1)

    def count(self, y_true, y_pred, sample_weight):
        return confusion(y_true, y_pred, sample_weight, self.thresholds, class_id=self.class_id, clip=self.evenly)

    def rates(self):
        c = self.counts
        return {"sensitivity": divide_no_nan(c["tp"], c["tp"] + c["fn"]),
                "specificity": divide_no_nan(c["tn"], c["tn"] + c["fp"]),
                "precision": divide_no_nan(c["tp"], c["tp"] + c["fp"])}

    def result(self):
        rates = self.rates()
        constrained, dependent = rates[self.pair[0]], rates[self.pair[1]]
        return scalar(np.max(np.where(constrained >= np.float32(self.value), dependent, np.float32(0)), initial=0))


class SensitivityAtSpecificity(_AtValue):
    value_name, pair = "specificity", ("specificity", "sensitivity")


class SpecificityAtSensitivity(_AtValue):
    value_name, pair = "sensitivity", ("sensitivity", "specificity")


class PrecisionAtRecall(_AtValue):
    value_name, pair = "recall", ("sensitivity", "precision")


class RecallAtPrecision(_AtValue):
    value_name, pair = "precision", ("precision", "sensitivity")


class FirstBatchShaped(ConfusionMetric):
    """A metric whose state the first batch shapes (``kinds`` start absent)."""

    def __init__(self, name):
        super().__init__(name, [0.5], evenly=False)

    def zeros(self) -> dict:
        return {}

    def attributes(self):
        return {"name": self.name}


def _named_value(cls):
    """The class's constructor with its value named as Keras names it (``specificity``, ``recall``...)."""
    import inspect

    def __init__(self, *args, **kwargs):
        bound = sig.bind(self, *args, **kwargs)
        bound.apply_defaults()
        _AtValue.__init__(*bound.arguments.values())
    sig = inspect.signature(_AtValue.__init__)
    params = list(sig.parameters.values())
    sig = sig.replace(parameters=[params[0], params[1].replace(name=cls.value_name), *params[2:]])
    __init__.__signature__ = sig
    cls.__init__ = __init__
    return cls


for _cls in (SensitivityAtSpecificity, SpecificityAtSensitivity, PrecisionAtRecall, RecallAtPrecision):
    _named_value(_cls)

METRICS = [TruePositives, FalsePositives, TrueNegatives, FalseNegatives, Precision, Recall, AUC,
           SensitivityAtSpecificity, SpecificityAtSensitivity, PrecisionAtRecall, RecallAtPrecision]
