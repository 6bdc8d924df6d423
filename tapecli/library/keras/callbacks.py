"""Keras's callbacks that ``fit`` runs here: ``keras.callbacks.EarlyStopping`` (Keras 3's
``callbacks/early_stopping.py``: the monitored value of each epoch's logs compared with the best so far, less
``min_delta``; after ``patience`` epochs without improvement, training stops, and the best weights come back with
``restore_best_weights``) and ``keras.callbacks.LearningRateScheduler`` (``learning_rate_scheduler.py``: before each
epoch, the program's ``schedule(epoch, lr)`` sets the optimizer's learning rate, which each epoch's logs record).

A callback hears ``on_train_begin(trainer, params)``, ``on_epoch_begin(epoch, trainer)`` and ``on_epoch_end(epoch,
logs, weights, trainer)``, which may add to the epoch's logs and returns whether training stops; a program's own
Callback subclass (ProgramCallback) hears each batch and the end of training too."""
from __future__ import annotations

import math

import numpy as np

from tapecli.errors import TdfTypeError, TdfValueError
from tapecli.interpreter.conversions import python_number
from tapecli.interpreter.conversions import to_float as num
from tapecli.interpreter.printing import python_str
from tapecli.library.keras.common import KerasObject, check_choice, flag, integer
from tapecli.runtime.context import current as current_context
from tapecli.runtime.values import NumpyArray, Tensor

# The direction of a metric that ``mode="auto"`` reads from its name (Keras reads the metric's ``_direction``).
_RISING = ("acc", "auc", "precision", "recall")
_FALLING = ("loss", "error", "crossentropy", "mae", "mse", "mape", "msle", "hinge", "divergence", "poisson")


class EarlyStopping(KerasObject):
    kind_word = "an EarlyStopping callback"

    def __init__(self, monitor="val_loss", min_delta=0, patience=0, verbose=0, mode="auto", baseline=None,
                 restore_best_weights=False, start_from_epoch=0):
        self.monitor = monitor
        self.min_delta = abs(num(min_delta, "min_delta"))
        self.patience = integer(patience, "patience")
        self.mode = check_choice(mode, ("auto", "min", "max"), "mode")
        self.baseline = None if baseline is None else num(baseline, "baseline")
        self.restore_best_weights = flag(restore_best_weights)
        self.start_from_epoch = integer(start_from_epoch, "start_from_epoch")
        self.rising = None
        self.wait = self.stopped_epoch = self.best_epoch = 0
        self.best = self.best_weights = None

    def attributes(self):
        return {"monitor": lambda: self.monitor, "patience": lambda: self.patience,
                "stopped_epoch": lambda: self.stopped_epoch, "best_epoch": lambda: self.best_epoch,
                "wait": lambda: self.wait}

    def on_train_begin(self, trainer=None, params=None) -> None:
        self.wait = self.stopped_epoch = self.best_epoch = 0
        self.best, self.best_weights = None, None

    def on_epoch_begin(self, epoch: int, trainer) -> None:
        pass

    def on_epoch_end(self, epoch: int, logs: dict, weights, trainer) -> bool:
        """After an epoch (its logs, the model's weights): whether training stops."""
        current = logs.get(self.monitor)
        if current is None:         # (Keras's warning, and no stop)
            current_context().settings.warn_once(
                f"Early stopping conditioned on metric `{self.monitor}` which is not available. Available metrics "
                f"are: {','.join(logs)}")
            return False
        if epoch < self.start_from_epoch:
            return False
        if self.rising is None:
            self.rising = self._direction()
            self.best = -math.inf if self.rising else math.inf
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights = [v.read().value.copy() for v in weights]
        self.wait += 1
        if self._improves(current, self.best):
            self.best, self.best_epoch = current, epoch
            if self.restore_best_weights:
                self.best_weights = [v.read().value.copy() for v in weights]
            if self.baseline is None or self._improves(current, self.baseline):
                self.wait = 0
            return False
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            if self.restore_best_weights and self.best_weights is not None:
                for v, value in zip(weights, self.best_weights):
                    v.assign(value)
            return True
        return False

    def _improves(self, value, reference) -> bool:
        return value - self.min_delta > reference if self.rising else value + self.min_delta < reference

    def _direction(self) -> bool:
        if self.mode != "auto":
            return self.mode == "max"
        name = self.monitor.removeprefix("val_")
        if name == "loss" or any(part in name for part in _FALLING):
            return False
        if any(part in name for part in _RISING):
            return True
        raise TdfValueError(f"EarlyStopping callback received monitor={self.monitor} but Keras isn't able to "
                            "automatically determine whether that metric should be maximized or minimized. Pass "
                            "`mode='max'` in order to do early stopping based on the highest metric value, or pass "
                            "`mode='min'` in order to use the lowest value.")


class LearningRateScheduler(KerasObject):
    kind_word = "a LearningRateScheduler callback"

    def __init__(self, schedule, verbose=0):
        self.schedule = schedule
        self.verbose = integer(verbose, "verbose")

    def attributes(self):
        return {"schedule": lambda: self.schedule, "verbose": lambda: self.verbose}

    def on_train_begin(self, trainer=None, params=None) -> None:
        pass

    def on_epoch_begin(self, epoch: int, trainer) -> None:
        interp = trainer.interp
        at = Tensor(np.array(epoch, dtype=np.int64), weak=True)
        rate = Tensor(np.array(float(trainer.optimizer.current_lr())), weak=True)     # the float32 rate, as a float
        try:
            chosen = interp.call_value(self.schedule, [at, rate])
        except (TdfTypeError, TypeError):       # Keras's older form: schedule(epoch)
            chosen = interp.call_value(self.schedule, [at])
        if not (isinstance(chosen, Tensor) and chosen.ndim == 0 and chosen.dtype.kind == "f"
                and (chosen.weak or isinstance(chosen, NumpyArray))):
            strong = isinstance(chosen, Tensor) and not chosen.weak and chosen.size == 1     # (a tensor: its value)
            shown = repr(float(chosen.value)) if strong else python_str(chosen)
            raise TdfValueError(f"The output of the `schedule` function should be a float. Got: {shown}")
        trainer.optimizer.set_learning_rate(chosen)
        if self.verbose > 0:
            interp.output.append("")
            interp.output.append(f"Epoch {epoch + 1}: LearningRateScheduler setting learning rate to "
                                 f"{python_str(chosen)}.")

    def on_epoch_end(self, epoch: int, logs: dict, weights, trainer) -> bool:
        logs["learning_rate"] = float(trainer.optimizer.current_lr())
        return False


class _Hooks:
    """Keras's CallbackList's calls of a callback, each to ``_hook(name, *args)`` (the logs of Python floats)."""

    def on_epoch_begin(self, epoch: int, trainer) -> None:
        self._hook("on_epoch_begin", epoch, {})

    def on_batch_begin(self, batch: int) -> None:
        self._hook("on_train_batch_begin", batch, {})

    def on_batch_end(self, batch: int, logs: dict) -> None:
        self._hook("on_train_batch_end", batch, dict(logs))

    def on_epoch_end(self, epoch: int, logs: dict, weights, trainer) -> bool:
        self._hook("on_epoch_end", epoch, dict(logs))
        return False

    def on_train_end(self, logs: dict) -> None:
        self._hook("on_train_end", dict(logs))


class LambdaCallback(_Hooks, KerasObject):
    """``keras.callbacks.LambdaCallback``: the program's functions called as a Callback's methods would be
    (``on_epoch_begin(epoch, logs)``, ``on_epoch_end(epoch, logs)``, ``on_train_begin(logs)``,
    ``on_train_end(logs)``, ``on_train_batch_begin(batch, logs)``, ``on_train_batch_end(batch, logs)``)."""

    kind_word = "a LambdaCallback"

    def __init__(self, interp, on_epoch_begin=None, on_epoch_end=None, on_train_begin=None, on_train_end=None,
                 on_train_batch_begin=None, on_train_batch_end=None):
        self.interp = interp
        self.hooks = {"on_epoch_begin": on_epoch_begin, "on_epoch_end": on_epoch_end,
                      "on_train_begin": on_train_begin, "on_train_end": on_train_end,
                      "on_train_batch_begin": on_train_batch_begin, "on_train_batch_end": on_train_batch_end}
        self.model = self.params = None

    def attributes(self):
        out = {k: v for k, v in self.hooks.items() if v is not None}
        out.update(model=lambda: self.model, params=lambda: python_number(self.params or {}))
        return out

    def _hook(self, name: str, *args) -> None:
        fn = self.hooks[name]
        if fn is not None:
            self.interp.call_value(fn, [python_number(a) for a in args])

    def on_train_begin(self, trainer=None, params=None) -> None:
        self.model = trainer.program_model() if trainer is not None else None
        self.params = params
        self._hook("on_train_begin", {})



CALLBACKS = [EarlyStopping, LearningRateScheduler, LambdaCallback]


class ProgramCallback(_Hooks):
    """A program's ``keras.callbacks.Callback`` subclass instance among fit's callbacks: its ``on_*`` methods (the
    inherited ones do nothing) called as Keras's CallbackList calls them, with logs of Python floats; its
    ``self.model`` is the model fitted, whose ``stop_training`` it may set to stop after the epoch."""

    def __init__(self, interp, instance):
        self.interp, self.instance = interp, instance

    def _hook(self, name: str, *args) -> None:
        self.interp.call_value(self.instance.get_attribute(self.interp, name, None), [python_number(a) for a in args])

    def on_train_begin(self, trainer=None, params=None) -> None:
        self.instance.attrs["keras_model"] = trainer.program_model() if trainer is not None else None
        self.instance.attrs["keras_params"] = python_number(params or {})
        self._hook("on_train_begin", {})



def program_callback(interp, value):
    """A program's Callback subclass instance as fit runs it, None for anything else."""
    cls = getattr(value, "cls", None)
    return ProgramCallback(interp, value) if cls is not None and cls.role == "callback" else None
