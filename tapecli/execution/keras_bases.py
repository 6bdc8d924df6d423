"""Keras's ``Loss``, ``Metric``, ``Callback``, ``LearningRateSchedule``, ``Regularizer``, ``Constraint``,
``Initializer`` and ``PyDataset`` (also ``keras.utils.Sequence``) as Python classes a TensorFlow program that
CPython runs derives from (execution/tensorflow.py), with what Keras 3's give a subclass: a loss called reduces
its ``call``'s values (``reduction``, ``sample_weight``); a metric makes its state with ``add_variable``, is reset
by ``reset_state`` and, called, updates and gives its result; a callback's hooks do nothing until the subclass
defines them, and fit gives it ``model`` and ``params``; a schedule is called with the optimizer's step; a
regularizer or a constraint is called with a weight, an initializer with a weight's shape and dtype; a PyDataset
gives fit, evaluate and predict its batches. The library takes an instance as its view of it
(tf_values.to_library): a loss, a metric, a callback, a schedule, a regularizer, a constraint, an initializer or a
PyDataset of the library's, whose calls call the instance back on the program's side."""
from __future__ import annotations

import itertools

import numpy as np

from tapecli import ops
from tapecli.execution.keras_classes import KerasClass, made_weight
from tapecli.execution.tf_values import VIEWS, KerasBase, ProgramCallable, ProgramView, as_tensorflow, program_side, \
    to_library, to_program
from tapecli.interpreter.classes import module_name
from tapecli.interpreter.conversions import python_number
from tapecli.library.keras import losses as losses_mod
from tapecli.library.keras.callbacks import BATCH_HOOKS, CallbackHooks, keep_added
from tapecli.library.keras.common import MetricObject, auto_name, converted, tensor
from tapecli.library.keras.epochs import PyDatasetData, super_not_called
from tapecli.library.keras.initializers import ProgramInitializer
from tapecli.library.keras.optimizers import ProgramSchedule
from tapecli.library.keras.penalties import ProgramConstraint, ProgramRegularizer
from tapecli.runtime.context import current


def _automatic_name(instance) -> str:
    """Keras's automatic name of a loss or metric: its class's in snake case, counted per run (my_loss_1)."""
    return auto_name(current().eager.run, module_name(type(instance).__name__))


# ------------------------------------------------------------------ keras.losses.Loss
class Loss(KerasBase, metaclass=KerasClass):
    """``keras.losses.Loss``: called as ``loss(y_true, y_pred, sample_weight=None)``, its ``call``'s values (of
    both converted to float32, as Keras converts them) reduced as ``reduction`` asks."""

    base = "keras.Loss"

    def __init__(self, name=None, reduction="sum_over_batch_size", dtype=None):
        if reduction not in losses_mod.REDUCTIONS:
            raise ValueError(f"Invalid value for argument `reduction`. Expected one of "
                             f"{list(losses_mod.REDUCTIONS)}. Received: reduction={reduction!r}")
        self.name = name or _automatic_name(self)
        self.reduction = reduction

    def __call__(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred = _float32(y_true), _float32(y_pred)
        values = self.call(y_true, y_pred)
        return _reduced(values, sample_weight, self.reduction)

    def call(self, y_true, y_pred):
        raise NotImplementedError

    def get_config(self) -> dict:
        return {"name": self.name, "reduction": self.reduction}

    @classmethod
    def from_config(cls, config: dict):
        return cls(**config)


@as_tensorflow
def _float32_of(value):
    found = converted(to_library(value))
    return to_program(found if found.dtype == np.float32 else ops.cast(found, np.dtype(np.float32)))


def _float32(value):
    return _float32_of(value)


@as_tensorflow
def _reduced(values, sample_weight, reduction):
    return to_program(losses_mod.reduce(tensor(to_library(values), "the values of call"),
                                        None if sample_weight is None else to_library(sample_weight), reduction))


class LossView(ProgramView, losses_mod.Loss):
    """A program's Loss as compile's loss: called on the program's side."""

    def __init__(self, instance: Loss):
        self.instance, self.fn, self.options = instance, None, {}
        self.reduction, self.dtype = instance.reduction, np.dtype(np.float32)

    @property
    def name(self) -> str:
        return self.instance.name

    def call(self, interp, args, kwargs, node):
        return ProgramCallable(self.instance).call(self.eager.run, args, kwargs, node)


# ------------------------------------------------------------------ keras.metrics.Metric
class Metric(KerasBase, metaclass=KerasClass):
    """``keras.metrics.Metric``: its state the variables ``add_variable`` makes (not trainable), zeroed by
    ``reset_state``; called, it updates its state and gives its result."""

    base = "keras.Metric"

    def __init__(self, name=None, dtype=None):
        self.name = name or _automatic_name(self)
        self._state: list = []

    def add_variable(self, shape=(), initializer="zeros", dtype=None, aggregation="sum", name=None):
        if "_state" not in vars(self):
            raise TypeError(f"{type(self).__name__}.__init__ must call super().__init__() before add_variable")
        made = made_weight(current().eager.run, self, shape, initializer, dtype, False, name)
        self._state.append(made)
        return made

    def add_weight(self, shape=(), initializer="zeros", dtype=None, aggregation="sum", name=None):
        return self.add_variable(shape, initializer, dtype, aggregation, name)

    @property
    def variables(self) -> list:
        return list(self._state)

    def reset_state(self) -> None:
        for v in self._state:
            v.assign(np.zeros(v.shape, v.dtype))

    def update_state(self, *args, **kwargs):
        raise NotImplementedError

    def result(self):
        raise NotImplementedError

    def __call__(self, *args, **kwargs):
        self.update_state(*args, **kwargs)
        return self.result()

    def get_config(self) -> dict:
        return {"name": self.name, "dtype": "float32"}


class MetricView(ProgramView, MetricObject):
    """A program's Metric among compile's metrics: its update_state, result and reset_state on the program's
    side, its result a tensor."""

    def __init__(self, instance: Metric):
        self.instance = instance

    @property
    def name(self) -> str:
        return self.instance.name

    def _program(self, name: str, *args, **kwargs):
        with program_side(self.eager):
            found = getattr(self.instance, name)(*(to_program(a) for a in args),
                                                  **{k: to_program(v) for k, v in kwargs.items()})
        return to_library(found)

    def update_state(self, y_true, y_pred, sample_weight=None):
        self._program("update_state", y_true, y_pred, **({} if sample_weight is None else
                                                         {"sample_weight": sample_weight}))

    def result(self):
        return tensor(self._program("result"), "a metric's result")

    def reset_state(self):
        self._program("reset_state")

    def methods(self):
        return {"update_state": self.update_state, "result": self.result, "reset_state": self.reset_state}

    def attributes(self):
        return {"name": lambda: self.name}

    def keras_variables(self) -> list:
        return list(self.instance.variables)


# ------------------------------------------------------------------ keras.callbacks.Callback
_HOOKS = ("on_train_begin", "on_train_end", "on_epoch_begin", "on_epoch_end", "on_test_begin", "on_test_end",
          "on_predict_begin", "on_predict_end", "on_batch_begin", "on_batch_end", "on_test_batch_begin",
          "on_test_batch_end", "on_predict_batch_begin", "on_predict_batch_end")


class Callback(KerasBase, metaclass=KerasClass):
    """``keras.callbacks.Callback``: hooks that do nothing (the train batch hooks call ``on_batch_begin`` and
    ``on_batch_end``, as Keras's do); ``model`` and ``params``, which fit, evaluate and predict set."""

    base = "keras.Callback"

    model = None
    params: dict = {}

    def __init__(self):
        pass

    def set_model(self, model) -> None:
        self.model = model

    def set_params(self, params: dict) -> None:
        self.params = params

    def on_train_batch_begin(self, batch, logs=None):
        self.on_batch_begin(batch, logs=logs)

    def on_train_batch_end(self, batch, logs=None):
        self.on_batch_end(batch, logs=logs)


for _hook in _HOOKS:
    setattr(Callback, _hook, lambda self, *args, **kwargs: None)


class LambdaCallback(Callback):
    """``keras.callbacks.LambdaCallback`` as Keras writes it: the functions given become the instance's hooks (any
    other hook by its keyword), so a program's function hears the epoch's one dict of logs and what it adds
    (``logs.update(...)``) reaches the callbacks after it and History, as any Callback's does (CallbackView)."""

    def __init__(self, on_epoch_begin=None, on_epoch_end=None, on_train_begin=None, on_train_end=None,
                 on_train_batch_begin=None, on_train_batch_end=None, **kwargs):
        super().__init__()
        self.__dict__.update(kwargs)
        given = {"on_epoch_begin": on_epoch_begin, "on_epoch_end": on_epoch_end, "on_train_begin": on_train_begin,
                 "on_train_end": on_train_end, "on_train_batch_begin": on_train_batch_begin,
                 "on_train_batch_end": on_train_batch_end}
        self.__dict__.update({hook: fn for hook, fn in given.items() if fn is not None})


class CallbackView(ProgramView, CallbackHooks):
    """A program's Callback among fit's callbacks: each hook called as Keras's CallbackList calls it, with logs
    of Python floats."""

    def __init__(self, instance: Callback):
        self.instance = instance

    @property
    def hears_batches(self) -> bool:
        """Whether it has a hook of each batch of its own, its class's or its instance's (LambdaCallback's): those
        it inherits do nothing."""
        cls = type(self.instance)
        return any(name in vars(self.instance) or getattr(cls, name) is not getattr(Callback, name)
                   for name in BATCH_HOOKS)

    def _hook(self, name: str, *args) -> None:
        given = [to_program(python_number(a)) for a in args]
        ProgramCallable(getattr(self.instance, name)).call_as_held(self.eager, given, {})
        keep_added(args, given)

    def bind(self, model, params: dict) -> None:
        with program_side(self.eager):
            self.instance.set_model(to_program(model))
            self.instance.set_params(to_program(python_number(params)))

    def on_train_begin(self, trainer=None, params=None) -> None:
        self._hook("on_train_begin", {})


# ------------------------------------------------------------------ keras.optimizers.schedules.LearningRateSchedule
class LearningRateSchedule(KerasBase, metaclass=KerasClass):
    """``keras.optimizers.schedules.LearningRateSchedule``: a subclass defines ``__call__(step)`` (the optimizer's
    iterations, an int64 tensor) and ``get_config``."""

    base = "keras.LearningRateSchedule"

    def __call__(self, step):
        raise NotImplementedError(f"Learning rate schedule '{type(self).__name__}' must override `__call__(self, "
                                  "step)`.")

    def get_config(self):
        raise NotImplementedError(f"Learning rate schedule '{type(self).__name__}' must override `get_config()` "
                                  "in order to be serializable.")

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class ScheduleView(ProgramView, ProgramSchedule):
    """A program's schedule as an optimizer's learning rate: called with the step on the program's side."""

    def __init__(self, instance: LearningRateSchedule):
        self.instance = instance

    @property
    def interp(self):
        return self.eager.run

    def callee(self):
        return ProgramCallable(self.instance)


# ------------------------------------------------------------------ keras.regularizers.Regularizer, keras.constraints
class Regularizer(KerasBase, metaclass=KerasClass):
    """``keras.regularizers.Regularizer``: called with a weight, its penalty (0.0 until a subclass says more)."""

    base = "keras.Regularizer"

    def __call__(self, x):
        return 0.0

    @classmethod
    def from_config(cls, config: dict):
        return cls(**config)

    def get_config(self) -> dict:
        raise NotImplementedError(f"{self} does not implement get_config()")


class Initializer(KerasBase, metaclass=KerasClass):
    """``keras.initializers.Initializer``: called with a weight's shape and dtype, its initial value (a subclass
    defines ``__call__``)."""

    base = "keras.Initializer"

    def __call__(self, shape, dtype=None):
        raise NotImplementedError("Initializer subclasses must implement the `__call__()` method.")

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config: dict):
        return cls(**config)


class Constraint(KerasBase, metaclass=KerasClass):
    """``keras.constraints.Constraint``: called with a weight, its projection (the weight itself until a subclass
    says more)."""

    base = "keras.Constraint"

    def __call__(self, w):
        return w

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config: dict):
        return cls(**config)


# ------------------------------------------------------------------ keras.utils.PyDataset
def _parallel_setting(name: str) -> property:
    """One of Keras's PyDataset settings of parallel reading (kept, never acted on: batches are read in order), as
    its property: reading it warns where the subclass did not call ``super().__init__``."""
    def get(self):
        self._warn_if_super_not_called()
        return getattr(self, f"_{name}")

    def set(self, value):
        setattr(self, f"_{name}", value)
    return property(get, set)


class PyDataset(KerasBase):
    """``keras.utils.PyDataset`` (Keras 3's ``keras.utils.Sequence``): a subclass defines ``__len__`` (or a
    ``num_batches`` property) and ``__getitem__(index)``, a batch ``x``, ``(x, y)`` or ``(x, y, sample_weight)``;
    ``on_epoch_begin`` and ``on_epoch_end`` do nothing until it defines them. ``workers``, ``use_multiprocessing``
    and ``max_queue_size`` are kept but change nothing: fit reads the batches in order, one at a time."""

    def __init__(self, workers=1, use_multiprocessing=False, max_queue_size=10):
        self._workers = workers
        self._use_multiprocessing = use_multiprocessing
        self._max_queue_size = max_queue_size

    def _warn_if_super_not_called(self) -> None:
        missing = [name for name in ("_workers", "_use_multiprocessing", "_max_queue_size") if not hasattr(self, name)]
        if missing:
            self._workers = getattr(self, "_workers", 1)
            self._use_multiprocessing = getattr(self, "_use_multiprocessing", False)
            self._max_queue_size = getattr(self, "_max_queue_size", 10)
            super_not_called()

    workers = _parallel_setting("workers")
    use_multiprocessing = _parallel_setting("use_multiprocessing")
    max_queue_size = _parallel_setting("max_queue_size")

    def __getitem__(self, index):
        raise NotImplementedError

    def __iter__(self):
        try:
            count = self.num_batches
        except NotImplementedError:         # (Keras's: no length, batches until __getitem__ ends them)
            count = None
        for index in range(count) if count is not None else itertools.count():
            yield self[index]

    @property
    def num_batches(self):
        if hasattr(self, "__len__"):        # (Keras's: ``__len__`` for Sequence's sake)
            return len(self)
        raise NotImplementedError("You need to implement the `num_batches` property:\n\n"
                                  "@property\ndef num_batches(self):\n  return ...")

    def on_epoch_begin(self):
        pass

    def on_epoch_end(self):
        pass


class PyDatasetView(ProgramView, PyDatasetData):
    """A program's PyDataset as fit's, evaluate's and predict's data: its length, batches and epoch hooks read on
    the program's side."""

    def __init__(self, instance: PyDataset):
        self.instance = instance

    def _call(self, method, *args):
        return self.eager.run.call_value(ProgramCallable(method), list(args))

    def batch_count(self):
        with program_side(self.eager):
            self.instance.workers           # (Keras's adapter reads it first: the warning of a missing super call)
            return to_library(self.instance.num_batches)

    def item(self, i: int):
        return self._call(self.instance.__getitem__, i)

    def hook(self, name: str) -> None:
        self._call(getattr(self.instance, name))


def _penalty_view(kind):
    """A program's Regularizer, Constraint or Initializer as a layer's: called on the program's side."""
    return lambda instance: kind(ProgramCallable(instance), current().bridge.run)


VIEWS.update({Loss: LossView, Metric: MetricView, Callback: CallbackView, LearningRateSchedule: ScheduleView,
              Regularizer: _penalty_view(ProgramRegularizer), Constraint: _penalty_view(ProgramConstraint),
              Initializer: _penalty_view(ProgramInitializer),
              PyDataset: PyDatasetView})
