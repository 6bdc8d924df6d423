"""The Keras base classes a program derives from: ``keras.metrics.Metric`` (its instances, called, update their
state and give their result; ``add_variable`` makes state, ``reset_state`` zeroes it), ``keras.losses.Loss``
(called, its ``call``'s values are reduced as Keras reduces them, with ``sample_weight`` and the ``reduction``
given to ``super().__init__``), ``keras.utils.PyDataset`` (epochs.py), and the initializer, regularizer,
constraint and learning-rate schedule bases, whose subclasses define ``__call__`` themselves."""
from __future__ import annotations

import numpy as np

from tapecli.errors import TdfTypeError, TdfValueError
from tapecli.interpreter.classes import KERAS, FrameworkBase, module_name
from tapecli.interpreter.objects import BoundMethod
from tapecli.interpreter.registry import register
from tapecli.library.keras.common import MetricObject, auto_name, tensor
from tapecli.library.keras.epochs import py_dataset_attribute
from tapecli.library.keras.losses import REDUCTIONS, reduce

BASES = {"metrics.Metric": "metric", "keras.Metric": "metric", "losses.Loss": "loss", "keras.Loss": "loss",
         "initializers.Initializer": "initializer", "keras.Initializer": "initializer",
         "regularizers.Regularizer": "regularizer", "keras.Regularizer": "regularizer",
         "constraints.Constraint": "constraint", "schedules.LearningRateSchedule": None,
         "callbacks.Callback": "callback", "utils.PyDataset": "py_dataset",
         "utils.Sequence": "py_dataset"}      # (Keras 3's Sequence is PyDataset)
for _name, _role in BASES.items():
    register(_name, FrameworkBase(f"keras.{_name.rpartition('.')[2]}", KERAS, _role))


def _bound(name, fn):
    return BoundMethod(name, fn)


def attribute(interp, instance, attr):
    """What a program's Metric or Loss subclass inherits (None: nothing of that name)."""
    role = instance.cls.role
    if role == "metric":
        return _metric_attribute(interp, instance, attr)
    if role == "loss":
        return _loss_attribute(interp, instance, attr)
    if role == "callback":
        return _callback_attribute(interp, instance, attr)
    if role == "py_dataset":
        return py_dataset_attribute(interp, instance, attr)
    if role in ("initializer", "regularizer", "constraint"):
        return _serializable_attribute(instance, attr)
    return None


def _serializable_attribute(instance, attr):
    """What a program's Initializer, Regularizer or Constraint subclass inherits: an ``__init__`` that sets
    nothing up, and Keras's get_config (an initializer's and a constraint's: no arguments; a regularizer's is the
    subclass's to write)."""
    if attr == "super().__init__":
        return _bound("__init__", lambda node: None)
    if attr == "get_config" and instance.cls.role == "regularizer":
        def refuse(node):
            raise TdfTypeError(f"{instance.cls.name} does not implement get_config() (Keras's Regularizer leaves it "
                               "to the subclass)")
        return _bound(attr, refuse)
    if attr == "get_config":
        return _bound(attr, lambda node: {})
    return None


# What Keras's Callback calls (each does nothing unless the subclass defines it).
CALLBACK_METHODS = frozenset(f"on_{when}" for when in (
    "train_begin", "train_end", "epoch_begin", "epoch_end", "train_batch_begin", "train_batch_end", "batch_begin",
    "batch_end", "test_begin", "test_end", "test_batch_begin", "test_batch_end", "predict_begin", "predict_end",
    "predict_batch_begin", "predict_batch_end"))


def _callback_attribute(interp, instance, attr):
    """What a program's keras.callbacks.Callback subclass inherits: methods that do nothing (but the train batch
    hooks, which call ``on_batch_begin`` and ``on_batch_end`` as Keras's do), and the ``model`` and ``params``
    fit, evaluate and predict give it."""
    if attr in ("on_train_batch_begin", "on_train_batch_end"):
        older = attr.replace("_train", "")
        return _bound(attr, lambda node, batch, logs=None: _call(interp, instance, older, node, [batch],
                                                                  {"logs": logs}))
    if attr in CALLBACK_METHODS or attr == "super().__init__":
        return _bound(attr, lambda node, *args, **kwargs: None)
    if attr in ("model", "params"):
        return instance.attrs.get(f"keras_{attr}")
    return None


def _call(interp, instance, name, node, args, kwargs):
    return interp.call_value(instance.get_attribute(interp, name, node), list(args), kwargs, node)


def _metric_attribute(interp, instance, attr):
    if attr == "__call__":
        def call(node, *args, **kwargs):
            _call(interp, instance, "update_state", node, args, kwargs)
            return _call(interp, instance, "result", node, [], {})
        return _bound(attr, call)
    if attr == "add_variable":
        def add_variable(node, shape=None, initializer="zeros", dtype=None, aggregation="sum", name=None):
            add = instance.get_attribute(interp, "add_weight", node)
            return add.fn(node, name=name, shape=shape, initializer=initializer, dtype=dtype, trainable=False)
        return _bound(attr, add_variable)
    if attr in ("reset_state", "reset_states"):
        def reset(node):
            for v in instance.owned_variables():
                v.assign(np.zeros(v.shape, v.dtype))
        return _bound(attr, reset)
    if attr == "super().__init__":
        def init(node, name=None, dtype=None):
            if name is not None:
                instance.attrs["name"] = name           # metric.name, the name fit's logs give its result
            # Keras's Metric.__init__: the name given, else the class's in snake case (its variables' paths)
            instance.keras_name = name or auto_name(interp, module_name(instance.cls.name))
        return _bound("__init__", init)
    return None


class ProgramMetric(MetricObject):
    """A program's Metric subclass instance among a model's compiled metrics: its own update_state, result
    and reset_state (or the inherited ones), its result as a tensor."""

    def __init__(self, interp, instance):
        self.interp, self.instance = interp, instance

    @property
    def name(self):
        return self.instance.get_attribute(self.interp, "name", None)

    def update_state(self, y_true, y_pred, sample_weight=None):
        _call(self.interp, self.instance, "update_state", None, [y_true, y_pred],
              {} if sample_weight is None else {"sample_weight": sample_weight})

    def result(self):
        return tensor(_call(self.interp, self.instance, "result", None, [], {}), "a metric's result")

    def reset_state(self):
        _call(self.interp, self.instance, "reset_state", None, [], {})

    def methods(self):
        return {"update_state": self.update_state, "result": self.result, "reset_state": self.reset_state}

    def attributes(self):
        return {"name": lambda: self.name}

    def keras_variables(self) -> list:
        return self.instance.owned_variables()


def program_metric(interp, value):
    """A program's Metric subclass instance as a compiled metric, None for anything else."""
    cls = getattr(value, "cls", None)
    return ProgramMetric(interp, value) if cls is not None and cls.role == "metric" else None


def _loss_attribute(interp, instance, attr):
    options = instance.__dict__.setdefault("keras_loss", {"reduction": "sum_over_batch_size", "name": None})
    if attr in ("super().__init__", "__init__"):
        def init(node, name=None, reduction="sum_over_batch_size", dtype=None):
            if reduction not in REDUCTIONS:
                raise TdfValueError(f"Invalid value for argument `reduction`. Expected one of {list(REDUCTIONS)}. "
                                    f"Received: reduction={reduction!r}")
            # Keras's Loss.__init__: the name given, else the class's in snake case, counted per run (my_huber_1)
            options.update(name=name or auto_name(interp, module_name(instance.cls.name)), reduction=reduction)
            instance.keras_name = options["name"]           # (loss.name)
        return _bound("__init__", init)
    if attr == "get_config":
        return _bound(attr, lambda node: {"name": options["name"], "reduction": options["reduction"]})
    if attr == "__call__":
        def call(node, y_true=None, y_pred=None, sample_weight=None):
            if y_true is None or y_pred is None:
                raise TdfTypeError("a loss is called as loss(y_true, y_pred, sample_weight=None)")
            values = _call(interp, instance, "call", node, [y_true, y_pred], {})
            return reduce(tensor(values, "the values of call"), sample_weight, options["reduction"])
        return _bound(attr, call)
    return options["reduction"] if attr == "reduction" else None
