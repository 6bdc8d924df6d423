"""Keras's callbacks that ``fit`` runs here, each an instance of ``keras.callbacks.Callback`` of Keras's class in
its module: ``EarlyStopping`` (Keras 3's ``callbacks/early_stopping.py``: the monitored value of each epoch's logs
compared with the best so far, less ``min_delta``; after ``patience`` epochs without improvement, training stops,
and the best weights come back at the end with ``restore_best_weights``), ``ReduceLROnPlateau``
(``reduce_lr_on_plateau.py``: after ``patience`` epochs without improvement, the learning rate times ``factor``,
then ``cooldown`` epochs of rest), ``LearningRateScheduler`` (``learning_rate_scheduler.py``: before each epoch, the
program's ``schedule(epoch, lr)`` sets the optimizer's learning rate, which each epoch's logs record),
``TerminateOnNaN`` (a NaN or infinite batch loss ends training), ``LambdaCallback`` and ``History`` (what fit
returns: each epoch's logs). Callbacks that write files (checkpoints, CSV logs) are out of scope (scope.py).

A callback is first given the model and the loop's params (``bind``, Keras's set_model and set_params), then hears
``on_train_begin(trainer, params)``, ``on_epoch_begin(epoch, trainer)``, with ``hears_batches``
``on_batch_begin(batch)`` and ``on_batch_end(batch, logs)``, ``on_epoch_end(epoch, logs, trainer)``, which may add
to the epoch's logs and returns whether training stops, and ``on_train_end(logs)``; evaluate's and predict's hooks
(``on_test_begin``, ``on_test_batch_end``, ``on_predict_end``, ...) come through ``hear(hook, *args)``. A program's
own Callback subclass (ProgramCallback) hears each of them."""
from __future__ import annotations

import math

import numpy as np

from tapecli.errors import TapeError, TdfTypeError, TdfValueError
from tapecli.interpreter.conversions import python_number
from tapecli.interpreter.conversions import to_float as num
from tapecli.interpreter.printing import python_str
from tapecli.library.keras.common import KerasObject, flag, integer
from tapecli.runtime.context import current as current_context
from tapecli.runtime.values import NumpyArray, Tensor

# The hooks of each batch of fit and evaluate: a program's callback that defines none of them hears no batch
BATCH_HOOKS = ("on_batch_begin", "on_batch_end", "on_train_batch_begin", "on_train_batch_end", "on_test_batch_begin",
               "on_test_batch_end")

# The direction of a metric that ``mode="auto"`` reads from its name (Keras reads the metric's ``_direction``).
_RISING = ("acc", "auc", "precision", "recall")
_FALLING = ("loss", "error", "crossentropy", "mae", "mse", "mape", "msle", "hinge", "divergence", "poisson")


class Callback(KerasObject):
    """What the library's callbacks share: each hook does nothing unless the callback says otherwise."""

    keras_bases = ("keras.Callback",)
    module = ""                 # Keras's module of the class (keras.src.callbacks.<module>)
    hears_batches = False

    def python_class(self) -> str:
        """``type(callback)``: Keras's class, in its own module."""
        return f"keras.src.callbacks.{self.module}.{type(self).__name__}"

    def bind(self, model, params: dict) -> None:
        pass

    def hear(self, hook: str, *args) -> None:
        """One of evaluate's or predict's hooks (``on_test_begin``, ...), with its arguments."""

    def on_train_begin(self, trainer=None, params=None) -> None:
        pass

    def on_epoch_begin(self, epoch: int, trainer) -> None:
        pass

    def on_batch_begin(self, batch: int) -> None:
        pass

    def on_batch_end(self, batch: int, logs: dict) -> None:
        pass

    def on_epoch_end(self, epoch: int, logs: dict, trainer) -> bool:
        return False

    def on_train_end(self, logs: dict) -> None:
        pass


class _Monitor(Callback):
    """Keras's MonitorCallback: a monitored value's improvement over a reference, in the direction ``mode`` gives
    (``"auto"``: from the metric's name), by more than ``min_delta``; Keras compares them as float32 tensors."""

    def __init__(self, monitor, mode, min_delta):
        if mode not in ("auto", "min", "max"):
            current_context().settings.warn_once(f"{type(self).__name__} mode '{python_str(mode)}' is unknown, "
                                                 "fallback to auto mode.")
            mode = "auto"
        self.monitor, self.mode = monitor, mode
        self.min_delta = abs(num(min_delta, "min_delta"))
        self.falling = None         # (Keras's monitor_op, chosen at the first epoch's end)

    def set_monitor_op(self) -> None:
        if self.falling is not None:
            return
        self.falling = self._falling()
        if self.falling:            # (Keras's min_delta, negated for a falling metric)
            self.min_delta *= -1

    def is_improvement(self, value, reference) -> bool:
        if reference is None:
            return True
        moved, reference = np.float32(value - self.min_delta), np.float32(reference)
        return bool(moved < reference if self.falling else moved > reference)

    def _falling(self) -> bool:
        if self.mode != "auto":
            return self.mode == "min"
        name = self.monitor.removeprefix("val_")
        if name == "loss" or any(part in name for part in _FALLING):
            return True
        if any(part in name for part in _RISING):
            return False
        raise TdfValueError(f"{type(self).__name__} callback received monitor={self.monitor}, but Keras isn't able "
                            "to automatically determine whether that metric should be maximized or minimized. Pass "
                            "`mode='max'` in order to monitor based on the highest metric value, or pass "
                            "`mode='min'` in order to use the lowest value.")


class EarlyStopping(_Monitor):
    kind_word = "an EarlyStopping callback"
    module = "early_stopping"

    def __init__(self, monitor="val_loss", min_delta=0, patience=0, verbose=0, mode="auto", baseline=None,
                 restore_best_weights=False, start_from_epoch=0):
        super().__init__(monitor, mode, min_delta)
        self.patience = integer(patience, "patience")
        self.verbose = integer(verbose, "verbose")
        self.baseline = None if baseline is None else num(baseline, "baseline")
        self.restore_best_weights = flag(restore_best_weights)
        self.start_from_epoch = integer(start_from_epoch, "start_from_epoch")
        self.wait = self.stopped_epoch = self.best_epoch = 0
        self.best = self.best_weights = self.trainer = None

    def attributes(self):
        return {"monitor": lambda: self.monitor, "patience": lambda: self.patience,
                "stopped_epoch": lambda: self.stopped_epoch, "best_epoch": lambda: self.best_epoch,
                "wait": lambda: self.wait, "best": lambda: self.best, "min_delta": lambda: self.min_delta,
                "verbose": lambda: self.verbose, "baseline": lambda: self.baseline,
                "restore_best_weights": lambda: self.restore_best_weights}

    def on_train_begin(self, trainer=None, params=None) -> None:
        self.wait = self.stopped_epoch = self.best_epoch = 0
        self.best, self.best_weights, self.trainer = None, None, trainer

    def on_epoch_end(self, epoch: int, logs: dict, trainer) -> bool:
        """After an epoch (its logs): whether training stops."""
        self.set_monitor_op()
        current = logs.get(self.monitor)
        if current is None:         # (Keras's warning, and no stop)
            current_context().settings.warn_once(
                f"Early stopping conditioned on metric `{self.monitor}` which is not available. Available metrics "
                f"are: {','.join(logs)}")
            return False
        if epoch < self.start_from_epoch:
            return False
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights, self.best_epoch = _weights_now(trainer), epoch
        self.wait += 1
        if self.is_improvement(current, self.best):
            self.best, self.best_epoch = current, epoch
            if self.restore_best_weights:
                self.best_weights = _weights_now(trainer)
            if self.baseline is None or self.is_improvement(current, self.baseline):
                self.wait = 0
            return False
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            return True
        return False

    def on_train_end(self, logs: dict) -> None:
        output = self.trainer.interp.output if self.trainer is not None else None
        if self.stopped_epoch > 0 and self.verbose > 0:
            output.append(f"Epoch {self.stopped_epoch + 1}: early stopping")
        if self.restore_best_weights and self.best_weights is not None:
            if self.verbose > 0:
                output.append(f"Restoring model weights from the end of the best epoch: {self.best_epoch + 1}.")
            for v, value in zip(self.trainer.all_weights(), self.best_weights):
                v.assign(value)


def _weights_now(trainer) -> list:
    """Copies of the model's weights, trainable and not (Keras's get_weights)."""
    return [v.read().value.copy() for v in trainer.all_weights()]


class ReduceLROnPlateau(_Monitor):
    """Keras's rule: a better value resets ``wait``; else, out of cooldown, ``wait`` counts up to ``patience``,
    when the learning rate becomes ``max(lr * factor, min_lr)`` (unless already at ``min_lr``) and a cooldown of
    ``cooldown`` epochs begins, during which ``wait`` stays 0. Each epoch's logs record the learning rate before
    any reduction."""

    kind_word = "a ReduceLROnPlateau callback"
    module = "reduce_lr_on_plateau"

    def __init__(self, monitor="val_loss", factor=0.1, patience=10, verbose=0, mode="auto", min_delta=1e-4,
                 cooldown=0, min_lr=0.0, **kwargs):
        super().__init__(monitor, mode, min_delta)
        self.factor = num(factor, "factor")
        if self.factor >= 1.0:
            raise TdfValueError(f"ReduceLROnPlateau does not support a factor >= 1.0. Received "
                                f"factor={python_str(factor)}")
        self.min_lr = num(min_lr, "min_lr")
        self.patience = integer(patience, "patience")
        self.verbose = integer(verbose, "verbose")
        self.cooldown = integer(cooldown, "cooldown")
        self.cooldown_counter = self.wait = 0
        self.best = None

    def attributes(self):
        return {"monitor": lambda: self.monitor, "factor": lambda: self.factor, "min_lr": lambda: self.min_lr,
                "patience": lambda: self.patience, "verbose": lambda: self.verbose, "mode": lambda: self.mode,
                "cooldown": lambda: self.cooldown, "cooldown_counter": lambda: self.cooldown_counter,
                "wait": lambda: self.wait, "best": lambda: self.best, "min_delta": lambda: self.min_delta}

    def on_train_begin(self, trainer=None, params=None) -> None:
        self.best, self.cooldown_counter, self.wait = None, 0, 0        # (Keras's _reset)

    def on_epoch_end(self, epoch: int, logs: dict, trainer) -> bool:
        self.set_monitor_op()
        logs["learning_rate"] = float(trainer.optimizer.current_lr())
        current = logs.get(self.monitor)
        if current is None:
            current_context().settings.warn_once(
                f"Learning rate reduction is conditioned on metric `{self.monitor}` which is not available. "
                f"Available metrics are: {','.join(logs)}.")
            return False
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.wait = 0
        if self.is_improvement(current, self.best):
            self.best, self.wait = current, 0
        elif self.cooldown_counter <= 0:
            self.wait += 1
            if self.wait >= self.patience and self._reduce(trainer, epoch):
                self.cooldown_counter, self.wait = self.cooldown, 0
        return False

    def _reduce(self, trainer, epoch: int) -> bool:
        """Keras's _reduce_optimizer_lr: the rate a Python float, times the factor, written into the optimizer."""
        old = float(trainer.optimizer.current_lr())
        if not old > np.float32(self.min_lr):
            return False
        new = max(old * self.factor, self.min_lr)
        trainer.optimizer.set_learning_rate(Tensor(np.array(new), weak=True))
        if self.verbose > 0:
            trainer.interp.output.append("")
            trainer.interp.output.append(f"Epoch {epoch + 1}: ReduceLROnPlateau reducing learning rate to {new!r}.")
        return True


class TerminateOnNaN(Callback):
    """A batch whose loss is NaN or infinite stops training after it (``raise_error``: raises instead)."""

    kind_word = "a TerminateOnNaN callback"
    module = "terminate_on_nan"
    hears_batches = True

    def __init__(self, raise_error=False):
        self.raise_error = flag(raise_error)
        self.trainer = None

    def attributes(self):
        return {"raise_error": lambda: self.raise_error}

    def on_train_begin(self, trainer=None, params=None) -> None:
        self.trainer = trainer

    def on_batch_end(self, batch: int, logs: dict) -> None:
        loss = logs.get("loss")
        if loss is None or math.isfinite(loss):
            return
        if self.raise_error:
            raise _RuntimeError(f"NaN or Inf loss encountered at batch {batch}. Loss value: {loss!r}. Terminating "
                                "training immediately.")
        self.trainer.interp.output.append(f"Batch {batch}: Invalid loss, terminating training")
        self.trainer.set_stop_training(True)


class _RuntimeError(TapeError):
    """Keras's RuntimeError: a program catches it as one, as it catches a TapeError (execution/tf_errors.py)."""
    kind = "RuntimeError"


class History(Callback):
    """What fit returns: ``history`` (each log's values, epoch by epoch, kept across fits), ``epoch`` (the
    epochs of the last fit) and ``params``. A History among fit's callbacks is the one fit records into."""

    kind_word = "a History"
    module = "history"

    def __init__(self):
        self.history: dict = {}
        self.epoch: list = []
        self.params: dict = {}

    def attributes(self):
        return {"history": lambda: self.history, "epoch": lambda: list(self.epoch), "params": lambda: self.params}

    def on_train_begin(self, trainer=None, params=None) -> None:
        self.epoch, self.params = [], dict(params or {})

    def on_epoch_end(self, epoch: int, logs: dict, trainer) -> bool:
        self.epoch.append(epoch)
        for k, v in logs.items():
            self.history.setdefault(k, []).append(v)
        trainer.model.history = self            # (Keras's model.history, from the first epoch's end on)
        return False


class LearningRateScheduler(Callback):
    kind_word = "a LearningRateScheduler callback"
    module = "learning_rate_scheduler"

    def __init__(self, schedule, verbose=0):
        self.schedule = schedule
        self.verbose = integer(verbose, "verbose")

    def attributes(self):
        return {"schedule": lambda: self.schedule, "verbose": lambda: self.verbose}

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

    def on_epoch_end(self, epoch: int, logs: dict, trainer) -> bool:
        logs["learning_rate"] = float(trainer.optimizer.current_lr())
        return False


def keep_added(args, given) -> None:
    """What a program's hook added to a dict of logs among ``args``, as it was ``given`` them, added to that dict:
    Keras's CallbackList hands its callbacks one dict of an epoch's logs, so the callbacks after it (History
    among them, last) see what it added (``logs["lr"] = ...``)."""
    for logs, seen in zip(args, given):
        if logs.__class__ is dict and isinstance(seen, dict) and seen is not logs:
            for key, value in seen.items():
                if key not in logs:
                    logs[key] = value.value.item() if isinstance(value, Tensor) and value.weak and not value.ndim \
                        else value


class CallbackHooks:
    """Keras's CallbackList's calls of a callback, each to ``_hook(name, *args)`` (the logs of Python floats; an
    epoch's, one dict for every callback: ``keep_added``)."""

    hears_batches = True

    def hear(self, hook: str, *args) -> None:
        self._hook(hook, *args)

    def on_epoch_begin(self, epoch: int, trainer) -> None:
        self._hook("on_epoch_begin", epoch, {})

    def on_batch_begin(self, batch: int) -> None:
        self._hook("on_train_batch_begin", batch, {})

    def on_batch_end(self, batch: int, logs: dict) -> None:
        self._hook("on_train_batch_end", batch, dict(logs))

    def on_epoch_end(self, epoch: int, logs: dict, trainer) -> bool:
        self._hook("on_epoch_end", epoch, logs)
        return False

    def on_train_end(self, logs: dict) -> None:
        self._hook("on_train_end", dict(logs))


class LambdaCallback(CallbackHooks, Callback):
    """``keras.callbacks.LambdaCallback``: the program's functions called as a Callback's methods would be
    (``on_epoch_begin(epoch, logs)``, ``on_epoch_end(epoch, logs)``, ``on_train_begin(logs)``,
    ``on_train_end(logs)``, ``on_train_batch_begin(batch, logs)``, ``on_train_batch_end(batch, logs)``, and any other
    hook given by its name, as Keras's keyword arguments set them: ``on_test_end``, ``on_batch_begin``, ...)."""

    kind_word = "a LambdaCallback"
    module = "lambda_callback"

    def __init__(self, interp, on_epoch_begin=None, on_epoch_end=None, on_train_begin=None, on_train_end=None,
                 on_train_batch_begin=None, on_train_batch_end=None, **hooks):
        self.interp = interp
        self.hooks = {"on_epoch_begin": on_epoch_begin, "on_epoch_end": on_epoch_end,
                      "on_train_begin": on_train_begin, "on_train_end": on_train_end,
                      "on_train_batch_begin": on_train_batch_begin, "on_train_batch_end": on_train_batch_end, **hooks}
        self.model = self.params = None

    def attributes(self):
        out = {k: v for k, v in self.hooks.items() if v is not None}
        out.update(model=lambda: self.model, params=lambda: python_number(self.params or {}))
        return out

    def _hook(self, name: str, *args) -> None:
        fn = self.hooks.get(name)
        if fn is None and name.startswith("on_train_batch_"):       # (Keras's Callback: the older batch hooks)
            fn = self.hooks.get(name.replace("_train", ""))
        if fn is not None:
            given = [python_number(a) for a in args]
            self.interp.call_value(fn, given)
            keep_added(args, given)

    @property
    def hears_batches(self) -> bool:
        return any(self.hooks.get(name) is not None for name in BATCH_HOOKS)

    def bind(self, model, params: dict) -> None:
        self.model, self.params = model, params

    def on_train_begin(self, trainer=None, params=None) -> None:
        self._hook("on_train_begin", {})



CALLBACKS = [EarlyStopping, ReduceLROnPlateau, LearningRateScheduler, TerminateOnNaN, LambdaCallback, History]


class ProgramCallback(CallbackHooks):
    """A program's ``keras.callbacks.Callback`` subclass instance among fit's callbacks: its ``on_*`` methods (the
    inherited ones do nothing) called as Keras's CallbackList calls them, with logs of Python floats; its
    ``self.model`` is the model fitted, whose ``stop_training`` it may set to stop after the epoch."""

    def __init__(self, interp, instance):
        self.interp, self.instance = interp, instance

    @property
    def hears_batches(self) -> bool:
        """Whether its class defines a hook of each batch (those it inherits do nothing)."""
        return any(self.instance.cls.find(name)[0] is not None for name in BATCH_HOOKS)

    def _hook(self, name: str, *args) -> None:
        given = [python_number(a) for a in args]
        self.interp.call_value(self.instance.get_attribute(self.interp, name, None), given)
        keep_added(args, given)

    def bind(self, model, params: dict) -> None:
        self.instance.attrs["keras_model"] = model
        self.instance.attrs["keras_params"] = python_number(params)

    def on_train_begin(self, trainer=None, params=None) -> None:
        self._hook("on_train_begin", {})



def program_callback(interp, value):
    """A program's Callback subclass instance as fit runs it, None for anything else."""
    cls = getattr(value, "cls", None)
    return ProgramCallback(interp, value) if cls is not None and cls.role == "callback" else None
