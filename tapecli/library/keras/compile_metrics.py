"""Keras 3's ``CompileMetrics`` (keras/src/trainers/compile_utils.py): the metrics of ``compile(metrics=...,
weighted_metrics=...)``, made on the first update (``"accuracy"`` depends on the shapes). A metric is a name Keras's
``metrics.get`` knows, a metric object (tapecli's or a program's Metric subclass), a metric class (made with its
defaults) or a function of (y_true, y_pred), whose mean it tracks. ``metrics`` are updated without the sample
weights, ``weighted_metrics`` with them. A model of one output takes every metric given (a dict's or nested list's
flattened); a model of several outputs takes a list with an entry per output or a dict by output names (an entry a
metric, a list of them or None), anything else Keras's ValueError. Results are named as Keras names them: a
metric's name (the name given, or the object's own), after its output's name and ``_`` for a model of several
outputs (``cls_accuracy``), a repeated one ``name_1``, ``name_2``, ..., a weighted metric whose name an unweighted
one has ``weighted_name``."""
from __future__ import annotations

from tapecli.errors import TdfTypeError, TdfValueError
from tapecli.interpreter.objects import Function
from tapecli.interpreter.printing import python_repr, python_str
from tapecli.library.keras import bases, getters, losses
from tapecli.library.keras import metrics as metrics_mod
from tapecli.library.keras.common import KerasObject, MetricObject, snake_case, tensor
from tapecli.runtime.tape import type_word
from tapecli.runtime.values import Tensor


def _checked(value, what):
    """Keras's check of ``metrics``/``weighted_metrics``: a list, a tuple or a dict (or nothing)."""
    if value and not isinstance(value, (list, tuple, dict)):
        from tapecli.library.python import python_class
        kind = python_class(value)
        raise TdfValueError(f"Expected `{what}` argument to be a list, tuple, or dict. Received instead: "
                            f"{what}={python_str(value)} of type " + (f"<class '{kind}'>" if kind else type_word(value)))
    return value or None


def _flat(value) -> list:
    """Keras's tree.flatten: nested lists and tuples item by item, a dict's values by sorted key."""
    if isinstance(value, dict):
        return [m for k in sorted(value, key=str) for m in _flat(value[k])]
    if isinstance(value, (list, tuple)):
        return [m for v in value for m in _flat(v)]
    return [value]


def get_metric(interp, value, y, y_pred):
    """Keras's get_metric: "accuracy" (or "acc", in any case) the accuracy the shapes call for, another name the
    class Keras's metrics.get finds, a metric object itself, a metric class one made with its defaults, a function
    the mean of its values."""
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
    made = getattr(value, "makes", None)
    if isinstance(made, type) and issubclass(made, MetricObject):       # (Keras's metrics.get: cls())
        return interp.call_value(value, [])
    name = function_name(value)
    if name is not None:
        return metrics_mod.mean_metric_wrapper(interp, value, snake_case(name))
    raise TdfTypeError(f"Could not interpret metric identifier: {type_word(value)}",
                       hint="compile(metrics=[...]) takes metric names, metric objects and functions")


def function_name(value) -> str | None:
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


def _as_tuples(value):
    """A value as Keras's tree.lists_to_tuples makes it (its error messages show them so)."""
    if isinstance(value, (list, tuple)):
        return tuple(_as_tuples(v) for v in value)
    if isinstance(value, dict):
        return {k: _as_tuples(v) for k, v in value.items()}
    return value


def _tuple_text(value) -> str:
    if isinstance(value, tuple):
        return "(" + ", ".join(_tuple_text(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_tuple_text(v)}" for k, v in value.items()) + "}"
    return python_repr(value)


def per_output(given, names: list | None, count: int, what: str) -> list:
    """Keras's _build_metrics_set for ``count`` outputs: the metrics of each output, a list (empty: none)."""
    if isinstance(given, (list, tuple)) and len(given) == count:
        entries = list(given)
    elif names and isinstance(given, dict) and set(given) <= set(names):
        entries = [given.get(name) for name in names]
    else:           # (Keras's tree.map_structure_up_to of the metrics over the outputs' list, and its error)
        tuples = _as_tuples(given)
        problem = (f"tuple arity mismatch; expected: {count}, got: {len(tuples)}; tuple: {_tuple_text(tuples)}."
                   if isinstance(tuples, tuple) else f"Expected an instance of tuple, got {_tuple_text(tuples)}.")
        model = f"the output names of the functional model {names} or " if names else ""
        raise TdfValueError(f"{problem}\nInvalid `{what}`. `{what}` should contain metrics objects and either be a "
                            f"dict or a list matching {model}match the output structure of the model: "
                            f"{['X'] * count}.\nReceived: {what}={python_str(given)}")
    return [[] if e is None else list(e) if isinstance(e, (list, tuple)) else [e] for e in entries]


class CompileMetrics(KerasObject):
    """The compiled metrics as one entry of ``model.metrics``, named ``compile_metrics``."""

    kind_word = "a metric"

    def __init__(self, interp, metrics, weighted_metrics, output_names=None):
        self.given = [_checked(metrics, "metrics"), _checked(weighted_metrics, "weighted_metrics")]
        self.interp, self.output_names, self.name = interp, output_names, "compile_metrics"
        self.unweighted = self.weighted = None      # each: (output name or None, [metric, ...]) per output

    @property
    def metrics(self) -> list:
        return [m for _, ms in (self.unweighted or []) + (self.weighted or []) for m in ms]

    def _build(self, ys, preds, many, output_names):
        built = []
        for given, what in zip(self.given, ("metrics", "weighted_metrics")):
            if not given:
                built.append([])
                continue
            # (a program's Metric subclass instance takes the part of a metric object)
            specs = per_output(given, output_names, len(preds), what) if many else [_flat(given)]
            names = output_names if many and output_names else [None] * len(preds)
            built.append([(name, [get_metric(self.interp, bases.program_metric(self.interp, m) or m, tensor(y),
                                             tensor(p)) for m in ms])
                          for name, ms, y, p in zip(names, specs, ys, preds)])
        self.unweighted, self.weighted = built

    def update_state(self, y, y_pred, sample_weight=None):
        names = self.output_names
        if isinstance(y_pred, dict):        # (a subclass's dict of outputs: by its keys, sorted unless they are the names)
            if not (names and set(y_pred) == set(names)):
                names = sorted(y_pred, key=str)
            ys = [y[k] for k in names] if isinstance(y, dict) else _flat(y)
            y, y_pred = (ys[0], y_pred[names[0]]) if len(names) == 1 else (ys, [y_pred[k] for k in names])
        many = isinstance(y_pred, list)
        preds = y_pred if many else [y_pred]
        ys = (y if isinstance(y, list) else [y]) if many else [y]
        if self.unweighted is None:
            self._build(ys, preds, many, names)
        for (_, ms), yt, yp in zip(self.unweighted, ys, preds):
            for m in ms:
                m.update_state(yt, yp, **self._masked(m, yp, None))
        if isinstance(sample_weight, (list, tuple, dict)):     # (an output's own, by name or position; else the first)
            weights = [sample_weight[k] for k in names] if isinstance(sample_weight, dict) and names else \
                _flat(sample_weight)
            weights = weights if len(weights) >= len(preds) else [weights[0]] * len(preds)
        else:
            weights = [sample_weight] * len(preds)
        for (_, ms), yt, yp, sw in zip(self.weighted, ys, preds, weights):
            for m in ms:
                m.update_state(yt, yp, **self._masked(m, yp, sw))

    def _masked(self, metric, y_pred, sample_weight) -> dict:
        """The sample_weight keyword of a metric's update: a MeanMetricWrapper's (an accuracy, a loss metric)
        takes the predictions' mask too (Keras's apply_mask for a sum: the mask's 0s and 1s)."""
        from tapecli.library.keras.layers import eager_mask
        mask = eager_mask(self.interp, y_pred) if isinstance(metric, metrics_mod.Mean) and \
            type(metric) not in (metrics_mod.Mean, metrics_mod.Sum) and isinstance(y_pred, Tensor) else None
        if mask is not None:
            sample_weight = losses.apply_mask(sample_weight, mask, mean=False)
        return {} if sample_weight is None else {"sample_weight": sample_weight}

    def result(self) -> dict:
        counts: dict = {}
        results = {}
        for output, ms in self.unweighted or []:
            for m in ms:
                results[_numbered(f"{output}_{m.name}" if output else m.name, counts)] = m.result()
        for output, ms in self.weighted or []:
            for m in ms:
                name = f"{output}_{m.name}" if output else m.name
                if name in counts:
                    name = f"{output}_weighted_{m.name}" if output else f"weighted_{m.name}"
                results[_numbered(name, counts)] = m.result()
        return results

    def reset_state(self):
        for m in self.metrics:
            m.reset_state()

    def methods(self):
        return {"update_state": self.update_state, "result": self.result, "reset_state": self.reset_state}

    def attributes(self):
        # (Keras's variables: its metrics', once the first batch built them)
        return {"name": self.name, "metrics": lambda: self.metrics,
                "variables": lambda: [v for m in self.metrics for v in m.keras_variables()]}
