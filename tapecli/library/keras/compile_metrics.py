"""Keras 3's ``CompileMetrics`` for a model of one output (keras/src/trainers/compile_utils.py): the metrics of
``compile(metrics=..., weighted_metrics=...)``, made on the first update (``"accuracy"`` depends on the shapes).
A metric is a name Keras's ``metrics.get`` knows, a metric object (tapecli's or a program's Metric subclass) or
a function of (y_true, y_pred), whose mean it tracks. ``metrics`` are updated without the sample weights,
``weighted_metrics`` with them. Their results are named as Keras names them: a metric's name (the name given, or
the object's own), a repeated one ``name_1``, ``name_2``, ..., a weighted metric whose name an unweighted one
has ``weighted_name``."""
from __future__ import annotations

from tapecli.errors import TdfTypeError, TdfValueError
from tapecli.interpreter.objects import Function
from tapecli.library.keras import bases, getters, metrics_more
from tapecli.library.keras import metrics as metrics_mod
from tapecli.library.keras.common import KerasObject, MetricObject, snake_case, tensor
from tapecli.runtime.tape import type_word


def _listed(value, what) -> list:
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):
        raise TdfValueError(f"Expected `{what}` argument to be a list, tuple, or dict. Received instead: "
                            f"{what} of type {type_word(value)}")
    return list(value)


def get_metric(interp, value, y, y_pred):
    """Keras's get_metric: "accuracy" (or "acc", in any case) the accuracy the shapes call for, another name the
    class Keras's metrics.get finds, a metric object itself, a function the mean of its values."""
    if isinstance(value, str) and value.lower() in ("accuracy", "acc"):
        if y_pred.shape[-1] == 1:
            cls = metrics_mod.BinaryAccuracy
        elif y.ndim < y_pred.ndim or y.shape[-1] == 1 and y_pred.shape[-1] > 1:
            cls = metrics_mod.SparseCategoricalAccuracy
        else:
            cls = metrics_mod.CategoricalAccuracy
        return cls(name=value)
    if isinstance(value, str):
        metric = getters.metric(value)
        metric.name = value
        return metric
    if isinstance(value, MetricObject):
        return value
    name = _function_name(value)
    if name is not None:
        return metrics_more.mean_metric_wrapper(interp, value, snake_case(name))
    raise TdfTypeError(f"Could not interpret metric identifier: {type_word(value)}",
                       hint="compile(metrics=[...]) takes metric names, metric objects and functions")


def _function_name(value) -> str | None:
    """The ``__name__`` of a function, the program's (on either runner) or the library's; None for another value."""
    if isinstance(value, Function):
        return value.name
    if getattr(value, "is_builtin", False):
        return value.__name__
    fn = getattr(value, "fn", None)     # (CPython's run: the program's own function, execution/tf_values.py)
    return getattr(fn, "__name__", None) if callable(fn) else None


def _numbered(name, counts) -> str:
    """``name`` the first time, then ``name_1``, ``name_2``, ... (``counts``: how often each was given)."""
    counts[name] = counts.get(name, 0) + 1
    return name if counts[name] == 1 else f"{name}_{counts[name] - 1}"


class CompileMetrics(KerasObject):
    """The compiled metrics as one entry of ``model.metrics``, named ``compile_metrics``."""

    kind_word = "a metric"

    def __init__(self, interp, metrics, weighted_metrics):
        # (a program's Metric subclass instance takes the part of a metric object)
        self.specs = [[bases.program_metric(interp, m) or m for m in _listed(given, what)]
                      for given, what in ((metrics, "metrics"), (weighted_metrics, "weighted_metrics"))]
        self.interp, self.unweighted, self.weighted, self.name = interp, None, None, "compile_metrics"

    @property
    def metrics(self) -> list:
        return (self.unweighted or []) + (self.weighted or [])

    def update_state(self, y, y_pred, sample_weight=None):
        if self.unweighted is None:
            self.unweighted, self.weighted = ([get_metric(self.interp, m, tensor(y), tensor(y_pred)) for m in specs]
                                              for specs in self.specs)
        for m in self.unweighted:
            m.update_state(y, y_pred)
        for m in self.weighted:
            m.update_state(y, y_pred, **({} if sample_weight is None else {"sample_weight": sample_weight}))

    def result(self) -> dict:
        counts: dict = {}
        results = {_numbered(m.name, counts): m.result() for m in self.unweighted or []}
        for m in self.weighted or []:
            results[_numbered(m.name if m.name not in counts else f"weighted_{m.name}", counts)] = m.result()
        return results

    def reset_state(self):
        for m in self.metrics:
            m.reset_state()

    def methods(self):
        return {"update_state": self.update_state, "result": self.result, "reset_state": self.reset_state}

    def attributes(self):
        return {"name": self.name, "metrics": lambda: self.metrics}
