"""Keras 3's training API on in-memory data: ``compile``, ``fit``, ``evaluate``, ``predict``,
``train_on_batch``, ``test_on_batch`` and ``metrics``, as keras/src/backend/tensorflow/trainer.py runs them.

One train step: ``y_pred = model(x, training=True)`` on a tape; the loss is the compiled loss plus the
model's ``add_loss`` values; the loss tracker (a Mean) is updated with the loss weighted by the batch
size; the optimizer applies the gradients of the trainable weights; the compiled metrics are updated;
the step's logs are every metric's result. ``fit`` resets the metrics at each epoch, so an epoch's
``history.history["loss"]`` is the batch losses' mean weighted by batch size; batches are consecutive
slices of ``batch_size`` (default 32) rows. A program's model subclass may define ``train_step(data)``
(and ``test_step``): fit then calls it and takes the dict it returns as the step's logs."""
from __future__ import annotations

import itertools
import math

import numpy as np

from tapecli import ops
from tapecli.kernels import tf_random
from tapecli.library.draws import tf_random_state
from tapecli.errors import TdfTypeError, TdfValueError
from tapecli.interpreter.classes import KERAS, LAYER
from tapecli.library.keras import compile_loss, fit_plans, getters, mixed_precision
from tapecli.library.keras.callbacks import CALLBACKS, CallbackHooks, History, program_callback
from tapecli.library.keras.compile_metrics import CompileMetrics
from tapecli.library.keras.utilities import unpack_x_y_sample_weight
from tapecli.library.keras.epochs import EpochIterator, GeneratorData, GeneratorSource, InterpretedPyDataset, \
    PyDatasetData, PyDatasetSource, check_data_cardinality
from tapecli.library.keras import losses as losses_mod
from tapecli.library.keras import metrics as metrics_mod
from tapecli.library.keras.common import KerasObject, flag, float_dtype, graph_step, integer, layer_name, num, tensor
from tapecli.interpreter.conversions import truth
from tapecli.runtime.context import current
from tapecli.runtime.limits import tick
from tapecli.runtime.tape import Tape, recording, type_word
from tapecli.runtime.values import NumpyArray, PythonBool, PythonTuple, Tensor, Variable

_LOSS_CLASSES = {"mse": "MeanSquaredError", "mean_squared_error": "MeanSquaredError", "mae": "MeanAbsoluteError",
                 "mean_absolute_error": "MeanAbsoluteError", "huber": "Huber",
                 "binary_crossentropy": "BinaryCrossentropy", "categorical_crossentropy": "CategoricalCrossentropy",
                 "sparse_categorical_crossentropy": "SparseCategoricalCrossentropy"}

def _rows(data, begin, end):
    if isinstance(data, (list, tuple)):
        return [_rows(d, begin, end) for d in data]
    if isinstance(data, dict):
        return {k: _rows(d, begin, end) for k, d in data.items()}
    return None if data is None else Tensor(np.ascontiguousarray(data.value[begin:end]))


def _data(value, what, many=False):
    """The data as a tensor, or (for a model of several inputs) a list of tensors; floats of another dtype
    than floatx are cast to it, as Keras's array data adapter does (NumPy's float64 arrays train float32)."""
    if value is None:
        return None
    if isinstance(many, list) and isinstance(value, dict):     # {input or output name: data}, as Keras maps them
        unknown = sorted(set(value) - set(many), key=str)
        if unknown:
            raise TdfValueError(f"{what}: a dict of data names the model's inputs or outputs {many}, got "
                                f"{sorted(value, key=str)}")
        value = [value.get(name) for name in many]
    if isinstance(value, (list, tuple)) and (many or value and all(
            isinstance(v, (Tensor, dict, list)) and getattr(v, "ndim", 1) for v in value)):
        return [_data(v, what) for v in value]          # (arrays of several inputs or outputs: Keras's structure)
    if isinstance(value, dict):         # (a subclassed model's: its call takes the dict, each entry batched)
        return {k: _data(v, what) for k, v in value.items()}
    t = tensor(value, what)
    return Tensor(t.value.astype(float_dtype())) if t.dtype.kind == "f" and t.dtype != float_dtype() else t


def _sample_weights(sample_weight, y):
    """The sample weights as data: one array of a weight per sample for every output, or one array per output in
    the structure of ``y`` (as Keras's array data adapter checks them)."""
    def structure(v):
        return sorted(v, key=str) if isinstance(v, dict) else f"a list of {len(v)}"

    several = isinstance(sample_weight, (list, tuple, dict))
    if several and isinstance(y, (list, tuple, dict)) and (
            isinstance(y, dict) != isinstance(sample_weight, dict) or
            (set(y) != set(sample_weight) if isinstance(y, dict) else len(y) != len(sample_weight))):
        raise TdfValueError("You should provide one `sample_weight` array per output in `y`. The two structures did "
                            f"not match: y is {structure(y)}, sample_weight {structure(sample_weight)}")
    if sample_weight is not None and not several and isinstance(y, (list, tuple, dict)) and len(y) > 1:
        shape = tensor(sample_weight, "sample_weight").shape
        if not (len(shape) == 1 or len(shape) == 2 and shape[1] == 1):
            raise TdfValueError("For a model with multiple outputs, when providing a single `sample_weight` array, it "
                                "should only have one scalar score per sample (i.e. shape `(num_samples,)`). If you "
                                "want to use non-scalar sample weights, pass a `sample_weight` argument with one "
                                "array per model output.")
    return _data(sample_weight, "sample_weight")


def _outputs(model):
    """What fit's data adapter asks of y: several outputs, by the names a dict of targets gives them in."""
    return compile_loss.output_names(model) or False


def _count(x):
    first = x[0] if isinstance(x, list) else next(iter(x.values())) if isinstance(x, dict) else x
    return first.shape[0]


class Trainer:
    """The compiled state of one model, and its loops. ``model`` answers forward(x, training),
    weights_to_train(), added_losses() and step(name) (a program's train_step/test_step or None)."""

    def __init__(self, interp, model, optimizer="rmsprop", loss=None, loss_weights=None, metrics=None,
                 weighted_metrics=None, run_eagerly=False, steps_per_execution=1, jit_compile="auto",
                 auto_scale_loss=True):
        names = compile_loss.output_names(model)       # a functional model's of several outputs
        self.interp, self.model = interp, model
        self.optimizer = getters.optimizer_of(interp, optimizer)
        # (Keras's compile config: the arguments as given, the optimizer made, jit_compile as a CPU resolves "auto")
        self.given = {"optimizer": self.optimizer, "loss": loss, "loss_weights": loss_weights, "metrics": metrics,
                      "weighted_metrics": weighted_metrics, "run_eagerly": run_eagerly,
                      "steps_per_execution": steps_per_execution,
                      "jit_compile": jit_compile is not None and jit_compile != "auto" and flag(jit_compile)
                      and not flag(run_eagerly)}
        if flag(auto_scale_loss):
            self.optimizer = mixed_precision.auto_scaled(interp, getattr(model, "policy", current().keras_dtype_policy),
                                                         self.optimizer)
        self.given_loss = loss          # (Keras's model.loss: what compile was given)
        self.loss = None if loss is None else \
            compile_loss.CompileLoss(self._loss, loss, loss_weights, compile_loss.functional_output_names(model))
        self.compile_metrics = CompileMetrics(interp, metrics, weighted_metrics, names) \
            if metrics or weighted_metrics else None
        self.loss_tracker = metrics_mod.Mean(name="loss")
        self.run_eagerly = flag(run_eagerly)
        # compiled in a tf.distribute strategy's scope (library/tf_distribute.py): fit and evaluate build the model
        # on a first batch of their data before their epochs, as Keras's _maybe_symbolic_build does
        self.distributed = (distribution := current().distribution) is not None and distribution.entered()

    def _loss(self, loss):
        if isinstance(loss, str) and loss in _LOSS_CLASSES:
            return losses_mod.make(_LOSS_CLASSES[loss])()
        if isinstance(loss, str):
            raise TdfValueError(f"Could not interpret loss identifier: {loss}")
        if isinstance(loss, losses_mod.Loss):
            return loss
        # (Keras's LossFunctionWrapper: the labels and predictions brought to one rank first)
        return losses_mod.Loss(lambda yt, yp: self.interp.call_value(loss, list(losses_mod.same_rank(yt, yp))), "loss")

    @property
    def metrics(self) -> list:
        """model.metrics: the loss tracker, then compile_metrics."""
        return [self.loss_tracker] + ([self.compile_metrics] if self.compile_metrics else []) + \
            self.output_losses() + self.model.own_metrics()


    def output_losses(self) -> list:
        """The Mean of each output's loss, for a model of several outputs compiled with several losses."""
        return list(getattr(self.loss, "trackers", []))

    def metrics_or_logs(self, logs):
        """Keras's _get_metrics_result_or_logs: the metrics' results when a step's logs name the same, else the
        logs as the step returned them."""
        results = self.logs()
        return results if isinstance(logs, dict) and set(logs) == set(results) else logs

    def results_or(self, logs) -> dict:
        """What Keras's callbacks are given of those: pythonify_logs's (by sorted name, a dict's entries in its
        place: a custom train_step's ``compile_metrics`` sorts as its name)."""
        return _plain(self.metrics_or_logs(logs))

    def reset(self):
        for m in self.metrics:
            m.reset_state()

    # ------------------------------------------------------------------ steps
    def compute_loss(self, x, y, y_pred, sample_weight, training=True):
        """The loss fit's and evaluate's steps take: a program's own ``compute_loss`` where its model defines one
        (Keras calls it with keywords, ``training`` where it takes one), else the compiled loss and the added
        losses."""
        custom = self.model.method("compute_loss")
        if custom is not None:
            flag = {"training": PythonBool(np.array(training))} if custom.takes_keyword("training") else {}
            return tensor(custom([], {"x": x, "y": y, "y_pred": y_pred, "sample_weight": sample_weight, **flag}))
        return self.default_loss(x, y, y_pred, sample_weight)

    def default_loss(self, x, y, y_pred, sample_weight):
        parts = []
        if self.loss is not None:
            parts.append(self.loss.call(self.interp, [y, y_pred], {} if sample_weight is None else
                                        {"sample_weight": sample_weight}, None))
        parts += [ops.reduce_sum(tensor(v)) for v in self.model.added_losses()]
        if not parts:
            raise TdfValueError("No loss to compute. Provide a `loss` argument in `compile()`.")
        total = parts[0]
        for p in parts[1:]:
            total = ops.add(total, p)
        return total

    def update_metrics(self, y, y_pred, sample_weight):
        self.update_compiled_metrics(y, y_pred, sample_weight)
        return self.logs()

    def update_compiled_metrics(self, y, y_pred, sample_weight) -> None:
        if self.compile_metrics is not None:
            if self.loss is not None and isinstance(y_pred, list):     # (several outputs: y as one entry each)
                y = self.loss.targets(y, len(y_pred))
            self.compile_metrics.update_state(y, y_pred, sample_weight)

    def track_loss(self, loss, x) -> None:
        """The loss tracker's update: the batch's loss weighted by its size."""
        self.loss_tracker.add(np.asarray(loss.value), Tensor(self.loss_tracker.dtype.type(_count(x))))

    def logs(self) -> dict:
        """Every metric's result by its name, a Python float (compile_metrics' by the names it gives them)."""
        results = {}
        for m in self.metrics:
            found = m.result()
            results.update(found if isinstance(found, dict) else {m.name: found})
        return {k: float(v.value) for k, v in results.items()}

    def train_step(self, x, y, sample_weight):
        custom = self.model.step("train_step")
        if custom is not None:
            return custom(_packed(x, y, sample_weight))
        self.train_updates(x, y, sample_weight)
        return self.logs()

    def train_updates(self, x, y, sample_weight, calls=fit_plans.AS_WRITTEN) -> None:
        """Keras's default train_step but its logs, each call through ``calls`` (a planned epoch's BatchPlans:
        fit_plans.py)."""
        tape = Tape("fit")
        with recording(tape):
            y_pred = fit_plans.forward(calls, self, x, True)
            loss = fit_plans.loss(calls, self, x, y, y_pred, sample_weight, True)
        calls.effect(Trainer.track_loss, self.track_loss, loss, x)
        if isinstance(self.optimizer, mixed_precision.LossScaleOptimizer):    # (never planned: planned_batches)
            with recording(tape):
                loss = self.optimizer.scale_loss(loss)
        weights = list(self.model.weights_to_train())
        if weights:
            # (an Embedding's table gets TensorFlow's IndexedSlices, whose rows the optimizer squares: apply;
            # through apply_gradients, as Keras's train_step, which a program's optimizer class may override)
            from tapecli.autodiff.gradients import gradient
            from tapecli.library.tf_indexed_slices import IndexedSlices
            grads = gradient(tape, loss, weights, rows=IndexedSlices)[0]
            calls.effect(self.applying(), self.optimizer.apply_gradients, list(zip(grads, weights)))
        calls.effect(Trainer.update_compiled_metrics, self.update_compiled_metrics, y, y_pred, sample_weight)

    def applying(self):
        """What names the optimizer's apply_gradients to a plan: the library's method (whose plan's call is
        faster), or a program's override of it (its own function)."""
        override = vars(self.optimizer).get("apply_gradients")
        return override if override is not None else self.optimizer.get_attribute(self.interp, "apply_gradients",
                                                                                   None)

    def test_step(self, x, y, sample_weight):
        custom = self.model.step("test_step")
        if custom is not None:
            return custom(_packed(x, y, sample_weight))
        self.test_updates(x, y, sample_weight)
        return self.logs()

    def test_updates(self, x, y, sample_weight, calls=fit_plans.AS_WRITTEN) -> None:
        """Keras's default test_step but its logs (see train_updates)."""
        y_pred = fit_plans.forward(calls, self, x, False)
        loss = fit_plans.loss(calls, self, x, y, y_pred, sample_weight, False)
        calls.effect(Trainer.track_loss, self.track_loss, loss, x)
        calls.effect(Trainer.update_compiled_metrics, self.update_compiled_metrics, y, y_pred, sample_weight)

    def planned_batches(self, count, step_name: str, callbacks) -> fit_plans.BatchPlans | None:
        """An epoch's BatchPlans (``count`` batches) where no callback hears each batch (one could change what the
        step's calls are between them): of Keras's default step, or of the program's own, whose code the runner of
        the program's loop plans judges (its model's ``plan_runner``); else None."""
        if any(c.hears_batches for c in callbacks) or \
                isinstance(self.optimizer, mixed_precision.LossScaleOptimizer):     # (its dynamic scale decides)
            return None
        runner = getattr(self.model, "plan_runner", lambda: None)()     # (a program's model: its code's)
        own_step = self.model.step(step_name) is not None
        return None if own_step and runner is None else fit_plans.BatchPlans(count, runner, own_step)

    def planned_step(self, name: str, x, y, sample_weight, plans):
        """A batch of a planned epoch: the program's own step ``name`` (its logs), else the library's updates (no
        logs: an epoch's are its metrics' results, read once at its end)."""
        custom = self.model.step(name)
        if custom is not None:
            return plans.program(self.model.own_function(name), lambda: custom(_packed(x, y, sample_weight)))
        (self.train_updates if name == "train_step" else self.test_updates)(x, y, sample_weight, plans)
        return None

    # ------------------------------------------------------------------ loops
    def symbolic_build(self, x, source) -> None:
        """A distributed model's build on its data's first batch, of a pass of a tf.data.Dataset started for it (a
        shuffle's next order drawn, as TensorFlow's); arrays' batches draw no order for it."""
        if self.distributed and source is None and _dataset(x):
            next(iter(x.source()), None)

    def batches(self, x, y, sample_weight, batch_size, shuffle=False):
        if _dataset(x):
            return dataset_batches(x, self.model.many_inputs, _outputs(self.model))
        return batches(self.interp, x, y, sample_weight, batch_size, shuffle)

    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose="auto", callbacks=None, validation_split=0.0,
            validation_data=None, shuffle=True, class_weight=None, sample_weight=None, initial_epoch=0,
            steps_per_epoch=None, validation_steps=None, validation_batch_size=None, validation_freq=1):
        callbacks = _callbacks(self.interp, callbacks)
        history = next((c for c in callbacks if isinstance(c, History)), None)
        if history is None:         # (Keras's CallbackList adds one, last, unless given one)
            history = History()
            callbacks.append(history)
        source = _adapted(self.interp, x, y, sample_weight, flag(shuffle), class_weight)
        dataset = source is not None or _dataset(x, y, sample_weight)
        x, y, sw = (x, None, None) if dataset else (
            _data(x, "x", self.model.many_inputs), _data(y, "y", _outputs(self.model)),
            _sample_weights(sample_weight, y))
        split = num(validation_split, "validation_split")     # the literal's own value, as Keras's Python float
        if split and dataset:
            raise TdfValueError("`validation_split` is only supported for Tensors or NumPy arrays, found a dataset")
        if split and validation_data is None:
            cut = int(_count(x) * (1.0 - split))
            validation_data = tuple(_rows(d, cut, None) for d in (x, y, sw))
            x, y, sw = (_rows(d, 0, cut) for d in (x, y, sw))
        if not dataset:
            check_data_cardinality(x, y, sw)
        if class_weight is not None and not dataset:
            sw = class_weights(class_weight, y, sw)
        self.symbolic_build(x, source)
        iterator = None         # (a tf.data.Dataset's epochs without steps_per_epoch: a pass each)
        if source is not None:
            iterator = EpochIterator(source.passes, source.num_batches, steps_per_epoch, source)
            iterator.reset()
        elif not dataset:
            size = 32 if batch_size is None else integer(batch_size, "batch_size")
            iterator = EpochIterator(lambda: batches(self.interp, x, y, sw, size, flag(shuffle)),
                                     _num_batches(x, size, None), steps_per_epoch)
        elif steps_per_epoch is not None:       # (Keras's TFDatasetAdapter: its cardinality, None where not known)
            iterator = EpochIterator(lambda: dataset_batches(x, self.model.many_inputs, _outputs(self.model)),
                                     _num_batches(x, None, None), steps_per_epoch)
        params = {"verbose": verbose, "epochs": integer(epochs, "epochs"),
                  "steps": _num_batches(x, None, None) if iterator is None else iterator.count}
        _bind(callbacks, self.program_model(), params)
        self.set_stop_training(False)
        # a tf.data.Dataset whose size TensorFlow does not know ahead (a filter's, a flat_map's), run to its end
        unsized = iterator is None and source is None and dataset and getattr(x, "unknown", False) \
            and not getattr(x, "infinite", False)
        for c in callbacks:
            c.on_train_begin(self, params)
        batch_hooks = [c for c in callbacks if c.hears_batches]
        logs: dict = {}
        training_logs: dict = {}
        validation = None
        for epoch in range(integer(initial_epoch, "initial_epoch"), integer(epochs, "epochs")):
            tick()                  # an epoch is a step of the run, as each batch is (batches)
            self.reset()
            for c in callbacks:
                c.on_epoch_begin(epoch, self)
            epoch_batches = self.batches(x, y, sw, batch_size) if iterator is None else iterator.epoch()
            plans = self.planned_batches(params["steps"], "train_step", callbacks)
            for step, (bx, by, bw) in enumerate(epoch_batches):
                for c in batch_hooks:
                    c.on_batch_begin(step)
                with graph_step(self.run_eagerly):
                    if plans is None:
                        logs = self.train_step(bx, by, bw)
                    else:       # (a planned batch's logs: None, its metrics' results read once at the epoch's end)
                        logs = plans.run(step, (bx, by, bw),
                                         lambda: self.planned_step("train_step", bx, by, bw, plans))
                if batch_hooks:
                    heard = self.results_or(logs)
                    for c in batch_hooks:
                        c.on_batch_end(step, heard)
                if self.stop_training():
                    break
            else:
                if unsized:     # (Keras's TensorFlow trainer counts one more optimizer step, whose call found no batch)
                    self.optimizer.counted()
            epoch_logs = dict(self.logs() if logs is None else self.metrics_or_logs(logs))
            if validation_data is not None and (epoch + 1) % integer(validation_freq, "validation_freq") == 0:
                # (Keras's evaluate with fit's callbacks, which hear its test hooks; its iterator reset each time:
                # ``validation_steps`` batches from the data's start)
                if _adaptable(validation_data):     # (Keras keeps a PyDataset's or generator's iterator)
                    if validation is None:
                        validation, _ = self.evaluation(validation_data, None, None, None, validation_steps)
                    val = self.evaluated(validation, validation_steps, True, callbacks)
                else:
                    vx, vy, vw = (validation_data, None, None) if _dataset(validation_data) else \
                        unpack_x_y_sample_weight(list(validation_data))
                    val_batches, count = self.evaluation(vx, vy, vw, validation_batch_size or batch_size,
                                                         validation_steps)
                    val = self.evaluated(val_batches, validation_steps, True, callbacks, count)
                epoch_logs.update({f"val_{k}": v for k, v in val.items()})
            # Keras's CallbackList gives its callbacks pythonify_logs's copy of the logs: what they add to it
            # (ReduceLROnPlateau's and LearningRateScheduler's learning_rate) a History after them records,
            # on_train_end never sees
            training_logs = epoch_logs
            heard = _plain(epoch_logs)
            for c in callbacks:     # (EarlyStopping sets the model's stop_training, as Keras's: the callbacks after
                if c.on_epoch_end(epoch, heard, self):      # it, on_train_end and the program read it)
                    self.set_stop_training(True)
            if self.stop_training():
                break
        if integer(epochs, "epochs") > 0:      # (Keras's: an optimizer's moving averages become the weights)
            self.optimizer.finalize_variable_values(list(self.model.weights_to_train()))
        for c in callbacks:
            c.on_train_end(_plain(training_logs))
        return history

    def program_model(self):
        """The model as the program holds it (a program's subclass: its instance)."""
        return getattr(self.model, "instance", self.model)

    def all_weights(self) -> list:
        """The model's weights, trainable and not (what Keras's get_weights gives, and restore_best_weights
        restores)."""
        return self.model.all_weights() if hasattr(self.model, "all_weights") else self.model.weights

    def set_stop_training(self, value: bool) -> None:
        set_stop(self.program_model(), "stop_training", value)

    def stop_training(self) -> bool:
        return stopped(self.program_model(), "stop_training")

    def evaluate(self, x=None, y=None, batch_size=None, verbose="auto", sample_weight=None, steps=None,
                 callbacks=None, return_dict=False):
        batches, count = self.evaluation(x, y, sample_weight, batch_size, steps)
        listeners = _callbacks(self.interp, callbacks)
        _bind(listeners, self.program_model(), {"verbose": verbose, "epochs": 1, "steps": count})
        return self.evaluated(batches, steps, return_dict, listeners, count)

    def evaluation(self, x, y, sample_weight, batch_size, steps):
        """What evaluate reads its batches from (an EpochIterator of a PyDataset, else the batches) and their
        number (Keras's num_batches: ``steps`` where given, None where not known)."""
        source = _adapted(self.interp, x, y, sample_weight)
        self.symbolic_build(x, source)
        if source is not None:
            iterator = EpochIterator(source.passes, source.num_batches, steps, source)
            return iterator, iterator.count
        x, y, sw = (x, None, None) if _dataset(x, y, sample_weight) else (
            _data(x, "x", self.model.many_inputs), _data(y, "y", _outputs(self.model)),
            _sample_weights(sample_weight, y))
        check_data_cardinality(x, y, sw)
        return self.batches(x, y, sw, batch_size), _num_batches(x, batch_size, steps)

    def evaluated(self, batches, steps, return_dict, callbacks, count=None):
        """evaluate's logs of ``batches`` (an EpochIterator, reset and run for an epoch, as Keras's evaluate), its
        ``callbacks`` hearing its test hooks."""
        if isinstance(batches, EpochIterator):
            count = batches.count
            batches.reset()
            batches = batches.epoch()
        else:
            batches = _first(batches, steps)
        held = self.program_model()
        set_stop(held, "stop_evaluating", False)
        _hear(callbacks, "on_test_begin", {})
        self.reset()
        logs: dict = {}
        plans = self.planned_batches(count, "test_step", callbacks)
        for step, (bx, by, bw) in enumerate(batches):
            _hear(callbacks, "on_test_batch_begin", step, {})
            with graph_step(self.run_eagerly):
                if plans is None:
                    logs = self.test_step(bx, by, bw)
                else:       # (its callbacks hear no batch: planned_batches)
                    logs = plans.run(step, (bx, by, bw), lambda: self.planned_step("test_step", bx, by, bw, plans))
            if callbacks and plans is None:
                _hear(callbacks, "on_test_batch_end", step, self.results_or(logs))
            if stopped(held, "stop_evaluating"):
                break
        logs = self.results_or(self.logs() if logs is None else logs)
        _hear(callbacks, "on_test_end", logs)
        return logs if flag(return_dict) else self.flat(logs)

    def flat(self, logs):
        """Keras's _flatten_metrics_in_order: the logs in the order of the metrics' names (compile_metrics' own
        names, a name given twice twice), then the rest by name."""
        names = [sub.name for m in self.metrics for sub in (m.metrics if m is self.compile_metrics else [m])]
        out = [logs[n] for n in names if n in logs] + [logs[k] for k in sorted(logs) if k not in names]
        return out[0] if len(out) == 1 else out

    def on_batch(self, step, x, y=None, sample_weight=None, class_weight=None, return_dict=False):
        self.reset()
        y, sw = _data(y, "y", _outputs(self.model)), _sample_weights(sample_weight, y)
        if class_weight is not None:        # (train_on_batch's: its samples weighted by their classes, as fit's)
            sw = class_weights(class_weight, y, sw)
        with graph_step(self.run_eagerly):
            logs = self.results_or(step(_data(x, "x", self.model.many_inputs), y, sw))
        return logs if flag(return_dict) else self.flat(logs)


def class_weights(class_weight, y, sample_weight):
    """fit(class_weight={class: weight}): each training sample weighted by its class's weight (1 for a
    class not named), as Keras's class_weight_to_sample_weights reads the classes from y (the argmax of
    one-hot rows, else the rounded labels)."""
    if sample_weight is not None:
        raise TdfValueError("You cannot `class_weight` and `sample_weight` at the same time.")
    if not isinstance(class_weight, dict):
        raise TdfTypeError("fit(class_weight=...) takes a dict of class indices to weights")
    if y is None or isinstance(y, list):
        raise TdfValueError("`class_weight` is only supported for Models with a single output.")
    labels = np.asarray(y.value)
    if labels.ndim > 1:
        labels = np.argmax(labels, axis=-1) if labels.shape[-1] != 1 else np.squeeze(labels, axis=-1)
    labels = np.round(labels).astype(np.int32)
    weights = {int(num(k, "a class")): num(v, "a class weight") for k, v in class_weight.items()}
    return Tensor(np.array([weights.get(int(c), 1.0) for c in labels], dtype=float_dtype()))


# Keras's flags a callback sets on the model to end fit after the epoch, evaluate or predict after the batch
STOP_FLAGS = ("stop_training", "stop_evaluating", "stop_predicting")


def set_stop(held, name: str, value: bool) -> None:
    """Set one of STOP_FLAGS on the model as the program holds it (a program's subclass: its instance)."""
    if hasattr(held, "attrs"):
        held.attrs[name] = PythonBool(np.array(value))
    else:
        setattr(held, name, value)


def stopped(held, name: str) -> bool:
    found = held.attrs.get(name) if hasattr(held, "attrs") else getattr(held, name, False)
    return bool(truth(found)) if found is not None else False


def _bind(callbacks, model, params: dict) -> None:
    """Keras's CallbackList's set_model and set_params: each callback given the model and the loop's params."""
    for c in callbacks:
        c.bind(model, params)


def _hear(callbacks, hook: str, *args) -> None:
    for c in callbacks:
        c.hear(hook, *args)


def _num_batches(x, batch_size, steps):
    """Keras's EpochIterator's num_batches of arrays or a tf.data.Dataset: ``steps`` where given, else the
    batches of the data (a dataset's cardinality, None where not known)."""
    if steps is not None:
        return integer(steps, "steps")
    if _dataset(x):
        return None if x.infinite or x.unknown else x.length()
    return -(-_count(x) // (32 if batch_size is None else integer(batch_size, "batch_size")))


def _callbacks(interp, given) -> list:
    """fit's, evaluate's or predict's callbacks: those tapecli runs (callbacks.py) and a program's Callback
    subclasses, each other one refused by name."""
    listed = [] if given is None else list(given) if isinstance(given, (list, tuple)) else [given]
    out = []
    for c in listed:
        found = c if isinstance(c, (*CALLBACKS, CallbackHooks)) else program_callback(interp, c)
        if found is None:
            raise TdfValueError(f"fit: the callback {type_word(c)} is not supported by tapecli",
                                hint="tapecli's fit runs " + ", ".join(f"keras.callbacks.{k.__name__}" for k in CALLBACKS)
                                + " and a program's subclasses of keras.callbacks.Callback")
        out.append(found)
    return out


def _adaptable(x) -> bool:
    """Whether ``x`` is a program's keras.utils.PyDataset (the interpreter's instance, or CPython's view of one) or
    a Python generator (CPython's view of one)."""
    return isinstance(x, (PyDatasetData, GeneratorData)) or getattr(getattr(x, "cls", None), "role", None) == \
        "py_dataset"


def _adapted(interp, x, y, sample_weight, shuffle=False, class_weight=None):
    """A program's keras.utils.PyDataset or generator ``x`` as data (epochs.py), None for any other ``x``."""
    if not _adaptable(x):
        return None
    kind = "generator" if isinstance(x, GeneratorData) else "PyDataset"
    for given, name, what in ((y, "y", "the targets"), (sample_weight, "sample_weights", "the sample weights")):
        if given is not None:
            raise TdfValueError(f"When providing `x` as a {kind}, `{name}` should not be passed. Instead, {what} "
                                f"should be included as part of the {kind}.")
    if isinstance(x, GeneratorData):
        if class_weight is not None:
            raise TdfValueError("Argument `class_weight` is not supported for Python generator inputs.")
        if shuffle:
            current().settings.warn("`shuffle=True` was passed, but will be ignored since the data `x` was provided "
                                    "as a generator. The generator is expected to yield already-shuffled data.")
        return GeneratorSource(x)
    weigh = None if class_weight is None else lambda by: class_weights(class_weight, tensor(by), None)
    dataset = x if isinstance(x, PyDatasetData) else InterpretedPyDataset(interp, x)
    return PyDatasetSource(dataset, shuffle, weigh)


def _dataset(x, y=None, sample_weight=None) -> bool:
    """Whether fit/evaluate/predict read their data from a tf.data.Dataset (its elements are the batches, as
    Keras takes them: ``(x, y)`` or ``(x, y, sample_weight)``, or ``x`` alone); ``y`` then comes from it."""
    from tapecli.library.data import Dataset
    if not isinstance(x, Dataset):
        return False
    if y is not None or sample_weight is not None:
        raise TdfValueError("`y` and `sample_weight` arguments are not supported when using a dataset as input: its "
                            "elements hold them")
    return True


def dataset_batches(dataset, many_inputs, outputs):
    """A pass over a dataset, started now (as TensorFlow's iterator is when made: a shuffle's order drawn), its
    elements as batches (x, y, sample_weight), each a step of the run, as the dataset's source charges it
    (data.py). An x of several tensors stays their list, for any model: a dataset's structure is the one Keras
    hands the model (a subclassed model's ``call((target, context))``). Where TensorFlow knows the dataset's size,
    a pass that gave every element starts the next one, as Keras's EpochIterator makes its next iterator when an
    epoch has taken every batch."""
    elements = dataset.source()

    def taken():
        for element in elements:
            parts = element if isinstance(element, list) and len(element) in (2, 3) else [element]
            bx, by, bw = (list(parts) + [None, None])[:3]
            yield _data(bx, "x", many_inputs or isinstance(bx, list)), _data(by, "y", outputs), _data(bw, "sample_weight")
        if not (dataset.infinite or dataset.unknown):
            dataset.source()
    return taken()


def batches(interp, x, y, sample_weight, batch_size, shuffle=False):
    """Consecutive slices of ``batch_size`` rows (32 by default), or of a permutation with ``shuffle``: each
    a step of the run (limits.tick), so fit, evaluate and predict end at --max-steps and TAPECLI_MAX_SECONDS."""
    n = _count(x)
    size = 32 if batch_size is None else integer(batch_size, "batch_size")
    order = _shuffled(interp, n) if shuffle else np.arange(n)

    def pick(d, idx):
        if d is None:
            return None
        if isinstance(d, dict):
            return {k: pick(v, idx) for k, v in d.items()}
        return [pick(v, idx) for v in d] if isinstance(d, list) else Tensor(np.ascontiguousarray(d.value[idx]))
    for begin in range(0, n, size):
        tick()
        idx = order[begin:begin + size]
        yield pick(x, idx), pick(y, idx), pick(sample_weight, idx)


def _shuffled(interp, n: int) -> np.ndarray:
    """fit's order of the rows of an epoch. With TensorFlow's global seed set, Keras's: its array adapter's
    tf.random.shuffle(tf.range(n)) in a function graph, seeds (global seed, 0) and a kernel made again at each
    epoch, so every epoch has the same order (kernels/tf_random.py); else the run's generator's."""
    state = tf_random_state() if current().settings.python_spelling else None
    if state is None or state.global_seed is None:
        return interp.rng.permutation(n)
    seeds = (tf_random.truncate_seed(state.global_seed), 0)
    if seeds == (0, 0):
        seeds = (0, tf_random.MAXINT32)
    return tf_random.shuffle_permutation(*tf_random.stateful_key_counter(*seeds), n)


def _first(chunks, steps):
    """The batches ``steps`` asks for (Keras's steps of evaluate and predict): the first ones, or all (None)."""
    return chunks if steps is None else itertools.islice(chunks, integer(steps, "steps"))


def predict(interp, model, x, batch_size=None, verbose="auto", steps=None, callbacks=None):
    """model.predict: the outputs of the batches, concatenated (inference mode); its callbacks hear Keras's
    predict hooks, each batch's end with its outputs."""
    source = _adapted(interp, x, None, None)
    if source is not None:           # (Keras's predict does not reset its iterator: no epoch ends first)
        iterator = EpochIterator(source.passes, source.num_batches, steps, source)
        count = iterator.count
        chunks = ((_data(bx, "x", model.many_inputs), None, None) for bx, _, _ in iterator.epoch())
        steps = None
    else:
        if not _dataset(x):
            x = _data(x, "x", model.many_inputs)
        count = _num_batches(x, batch_size, steps)
        chunks = dataset_batches(x, model.many_inputs, _outputs(model)) if _dataset(x) else \
            batches(interp, x, None, None, batch_size)
    listeners, held = _callbacks(interp, callbacks), getattr(model, "instance", model)
    _bind(listeners, held, {"verbose": verbose, "epochs": 1, "steps": count})
    set_stop(held, "stop_predicting", False)
    _hear(listeners, "on_predict_begin", {})
    outs = []
    custom = model.step("predict_step") if hasattr(model, "step") else None     # (a program's override)
    for step, (bx, _, _) in enumerate(_first(chunks, steps)):
        _hear(listeners, "on_predict_batch_begin", step, {})
        with graph_step(getattr(getattr(model, "trainer", None), "run_eagerly", False)):
            outs.append(model.forward(bx, False) if custom is None else custom(_packed(bx, None, None)))
        if listeners:
            _hear(listeners, "on_predict_batch_end", step, _plain_outputs(outs[-1], model))
        if stopped(held, "stop_predicting"):
            break
    _hear(listeners, "on_predict_end", {})
    if custom is not None:
        return _concatenated(outs)
    if isinstance(outs[0], list):           # (NumPy arrays, as Keras's predict gives; a dict by a model's keys)
        arrays = [NumpyArray(np.concatenate([tensor(o[i]).value for o in outs])) for i in range(len(outs[0]))]
        return model.keyed(arrays) if hasattr(model, "keyed") else arrays
    return NumpyArray(np.concatenate([tensor(o).value for o in outs]))


def _concatenated(outs):
    """What a program's predict_step gave for each batch, concatenated leaf by leaf as NumPy arrays (Keras's
    predict: its structure as the step returns it, a dict in its keys' order)."""
    first = outs[0]
    if isinstance(first, dict):
        return {k: _concatenated([o[k] for o in outs]) for k in first}
    if isinstance(first, (list, tuple)):        # (a PythonTuple is a list: the step's tuple)
        parts = [_concatenated([o[i] for o in outs]) for i in range(len(first))]
        return PythonTuple(parts) if first.__class__ is PythonTuple or isinstance(first, tuple) else parts
    return NumpyArray(np.concatenate([np.atleast_1d(tensor(o).value) for o in outs]))


def _plain_outputs(out, model) -> dict:
    """A predict batch's logs, ``{"outputs": outputs}``, as Keras's pythonify_logs gives them: a tensor as a NumPy
    array (a Python float where it is a scalar), a dict of outputs in place of the entry, by sorted key, a
    list as it is."""
    out = model.keyed(out) if hasattr(model, "keyed") else out

    def plain(value):
        if not isinstance(value, Tensor):
            return value
        return float(value.value) if value.ndim == 0 else NumpyArray(value.value)
    if isinstance(out, dict):
        return {k: plain(v) for k, v in sorted(out.items())}
    return {"outputs": plain(out)}


def _plain(logs):
    """Keras's pythonify_logs: the values as Python floats, by sorted name, a dict's entries (the
    ``compile_metrics`` result) in place of the dict."""
    if not isinstance(logs, dict):
        raise TdfTypeError("train_step must return a dict of metric names to values")
    out = {}
    for k, v in sorted(logs.items()):
        if isinstance(v, dict):
            out.update(_plain(v))
        else:
            out[k] = float(np.asarray(tensor(v).value)) if isinstance(v, (Tensor, Variable)) else v
    return out


def methods(interp, owner) -> dict:
    """The training methods of a model. ``owner`` holds ``trainer`` (None before compile) and answers
    Trainer.s model interface (forward, weights_to_train, added_losses, step, many_inputs)."""
    def compile_(*args, **kwargs):
        previous, owner.trainer = owner.trainer, Trainer(interp, owner, *args, **kwargs)
        if previous is not None:         # Keras keeps the compiled loss and metrics a new compile does not give
            if kwargs.get("loss", args[1] if len(args) > 1 else None) is None:
                owner.trainer.loss = previous.loss
            if kwargs.get("metrics", args[3] if len(args) > 3 else None) is None and \
                    kwargs.get("weighted_metrics", args[4] if len(args) > 4 else None) is None:
                owner.trainer.compile_metrics = previous.compile_metrics

    def need():
        if owner.trainer is None:
            raise TdfValueError("You must call `compile()` before using the model.")
        return owner.trainer

    def compute_loss(x=None, y=None, y_pred=None, sample_weight=None, training=True):
        return need().default_loss(x, y, y_pred, sample_weight)     # (super().compute_loss of an override too)

    def compiled_loss(y, y_pred, sample_weight=None, regularization_losses=None):
        current().settings.warn_once("`model.compiled_loss()` is deprecated. Instead, use "
                                     "`model.compute_loss(x, y, y_pred, sample_weight, training)`.")
        return compute_loss(None, y, y_pred, sample_weight)

    def loss_kind(labels_at: int):
        """What a call of the compiled loss (its labels the argument at ``labels_at``, or ``y``) is to a loop plan
        (a program's train_step's): the library's step's (fit_plans.loss_kind)."""
        def kind(args, kwargs, tracked):
            labels = args[labels_at] if len(args) > labels_at else kwargs.get("y")
            return None if owner.trainer is None else fit_plans.loss_kind(owner.trainer, labels)(tracked)
        return kind
    compute_loss.replay_kind, compiled_loss.replay_kind = loss_kind(1), loss_kind(0)
    return {
        "compiled_loss": compiled_loss,
        "compile": compile_,
        "fit": lambda *a, **k: need().fit(*a, **k),
        "evaluate": lambda *a, **k: need().evaluate(*a, **k),
        "predict": lambda *a, **k: predict(interp, owner, *a, **k),
        "train_on_batch": lambda *a, **k: need().on_batch(need().train_step, *a, **k),
        "test_on_batch": lambda *a, **k: need().on_batch(need().test_step, *a, **k),
        "predict_on_batch": lambda x: predict_on_batch(owner, x),
        "compute_loss": compute_loss,
        "compute_metrics": lambda x, y, y_pred, sample_weight=None: need().update_metrics(y, y_pred, sample_weight),
        "reset_metrics": lambda: need().reset(),
    }


def predict_on_batch(model, x):
    with graph_step(getattr(getattr(model, "trainer", None), "run_eagerly", False)):
        return _as_numpy(model.forward(_data(x, "x", model.many_inputs), False))


def _as_numpy(outputs):
    """A model's outputs as predict_on_batch gives them: each a NumPy array (Keras maps np.array over them)."""
    from tapecli.library.control import flatten, pack_as
    return pack_as(outputs, [NumpyArray(tensor(t).value) for t in flatten(outputs)])


class CompiledMetrics(KerasObject):
    """Keras 3's ``model.compiled_metrics`` (a deprecated shim of Keras 2's): ``update_state(y, y_pred)``
    updates every metric of ``model.metrics``, a Mean (the loss tracker) with ``y_pred`` itself, as Keras 3's
    TensorFlow trainer does."""

    kind_word = "the compiled metrics"

    def __init__(self, trainer):
        self.trainer = trainer

    def update_state(self, y, y_pred, sample_weight=None):
        current().settings.warn_once("`model.compiled_metrics()` is deprecated. Instead, use e.g.: for metric in "
                                     "self.metrics: metric.update_state(y, y_pred)")
        for metric in self.trainer.metrics:
            if isinstance(metric, metrics_mod.Mean):
                metric.update_state(y_pred, sample_weight=sample_weight)
            else:
                metric.update_state(y, y_pred, sample_weight=sample_weight)

    def methods(self):
        return {"update_state": self.update_state}


def attributes(owner) -> dict:
    out = {"compiled_metrics": lambda: None if owner.trainer is None else CompiledMetrics(owner.trainer),
           **{name: (lambda name=name: PythonBool(np.array(bool(getattr(owner, name, False)))))
              for name in STOP_FLAGS},
           "metrics": lambda: [] if owner.trainer is None else list(owner.trainer.metrics),
           "metrics_names": lambda: [] if owner.trainer is None else [m.name for m in owner.trainer.metrics],
           "optimizer": lambda: None if owner.trainer is None else owner.trainer.optimizer,
           "loss": lambda: None if owner.trainer is None else owner.trainer.given_loss}
    history = getattr(owner, "history", None)       # (Keras's model.history: none before fit)
    if history is not None:
        out["history"] = lambda: history
    return out


class ProgramModel:
    """Trainer's model interface for an instance of a program's ``keras.Model`` subclass; it also holds
    the values its ``add_loss`` collects during a call."""

    def __init__(self, interp, instance):
        self.interp, self.instance, self.trainer = interp, instance, None
        self.losses: list = []
        self.many_inputs = False

    def nested(self):
        out = [self]
        for value in self.instance.attrs.values():
            for item in value if isinstance(value, list) else [value]:
                if getattr(item, "cls", None) is not None and hasattr(item, "attrs"):
                    out += adapter(self.interp, item).nested()
        return out

    def forward(self, x, training):
        for part in self.nested():
            part.losses = []
        return self.instance.call(self.interp, [x], {"training": Tensor(np.array(bool(training)))}, None)

    def weights_to_train(self):
        return [v for v in self.instance.owned_variables() if v.trainable]

    def all_weights(self) -> list:
        return self.instance.owned_variables()

    def layers(self) -> list:
        """The layers the instance holds (its attributes, in the order assigned, lists item by item), the library's
        and the program's, as Keras tracks them."""
        return [item for value in self.instance.attrs.values() for item in (value if isinstance(value, list) else
                                                                            [value]) if LAYER in _bases_of(item)]

    def own_metrics(self):
        return [v for v in self.instance.attrs.values() if isinstance(v, (metrics_mod.Mean, CompileMetrics))]

    def added_losses(self):
        """``layer.losses`` as Keras gives them: the add_loss values of this layer and the program layers it holds,
        and the activity losses of the library layers they hold; then their trainable weights' regularizers (add_weight's
        and the library layers')."""
        return self.own_losses() + self.weight_penalties()

    def own_losses(self) -> list:
        return [loss for part in self.walked() for loss in (
            part.losses if isinstance(part, ProgramModel) else part.own_losses())]

    def weight_penalties(self) -> list:
        from tapecli.library.keras import penalties
        out = []
        for part in self.walked():
            if isinstance(part, ProgramModel):
                out += [penalties.regularizer(given, self.interp).apply(v)
                        for v, given in getattr(part.instance, "weight_regularizers", []) if v.trainable]
            else:
                out += part.weight_penalties()
        return out

    def walked(self) -> list:
        """This layer, then the layers it holds depth first, in the order assigned (Keras's _flatten_layers): a
        program's layer as its ProgramModel, a library layer as it is."""
        out = [self]
        for value in self.instance.attrs.values():
            for item in value if isinstance(value, list) else [value]:
                if getattr(item, "cls", None) is not None and hasattr(item, "attrs"):
                    out += adapter(self.interp, item).walked()
                elif hasattr(item, "regularization_losses"):
                    out.append(item)
        return out

    def step(self, name):
        found = self.method(name)
        return None if found is None else lambda data: found([data], {})

    def own_function(self, name):
        """The program's function its method ``name`` runs (what a loop plan lets in), or None."""
        fn, _ = self.instance.cls.find(name)
        return fn if hasattr(fn, "node") else None

    def plan_runner(self):
        """The runner of the program's loop plans (the interpreter): a planned epoch's, of its step."""
        return self.interp

    def method(self, name):
        """The program's own method ``name`` of this model, called as ``method(args, kwargs)``, or None."""
        fn, owner = self.instance.cls.find(name)
        if fn is None or not hasattr(fn, "node"):
            return None
        from tapecli.interpreter.classes import call_method
        from tapecli.interpreter.objects import takes_keyword

        def call(args, kwargs):
            return call_method(self.interp, fn, owner, self.instance, args, kwargs, None)
        call.takes_keyword = lambda keyword: takes_keyword(fn, keyword)
        return call


def _packed(x, y, sample_weight):
    """A step's data as Keras packs it (data_adapter_utils.pack_x_y_sample_weight): x alone where there is no
    y, else the list of those given."""
    if y is None and sample_weight is None:
        return x
    return [x] + ([] if y is None else [y]) + ([] if sample_weight is None else [sample_weight])


def _bases_of(value) -> tuple:
    """The Keras bases a value is an instance of: a library layer's, or a program's Layer or Model subclass's."""
    cls = getattr(value, "cls", None)
    if cls is not None and getattr(cls, "framework", None) == KERAS and cls.role is None:
        return (LAYER,)
    return getattr(value, "keras_bases", ())


def adapter(interp, instance) -> ProgramModel:
    found = getattr(instance, "keras_model", None)
    if found is None:
        found = instance.keras_model = ProgramModel(interp, instance)
    return found


def _get_layer(layers: list, name, index):
    """Keras's Model.get_layer of a program's model: the layer at ``index``, or the one named ``name``."""
    if index is not None and name is not None:
        raise TdfValueError(f"Provide only a layer name or a layer index. Received: index={index}, name={name}.")
    if index is not None:
        i = integer(index, "index")
        if len(layers) <= i:
            raise TdfValueError(f"Was asked to retrieve layer at index {i} but model only has {len(layers)} layers.")
        return layers[i]
    if name is None:
        raise TdfValueError("Provide either a layer name or layer index at `get_layer`.")
    names = [layer_name(layer) for layer in layers]
    if name in names:
        return layers[names.index(name)]
    raise TdfValueError(f"No such layer: {name}. Existing layers are: {names}.")


def count_params(instance) -> Tensor:
    """Keras's Layer.count_params of a program's layer or model: its weights' sizes summed, once it is built."""
    if not getattr(instance, "keras_built", False):
        raise TdfValueError(f"You tried to call `count_params` on layer '{instance.keras_name or instance.label}', "
                            "but the layer isn't built. You can build it manually via: `layer.build(input_shape)`.")
    return Tensor(np.array(sum(math.prod(v.shape) for v in instance.owned_variables()), dtype=np.int64), weak=True)


def program_attribute(interp, instance, attr):
    """The Keras methods and attributes a program's Layer or Model subclass inherits (None: not one)."""
    from tapecli.library.keras.common import method
    if instance.cls.role is not None:                  # a Metric or Loss subclass
        from tapecli.library.keras import bases
        return bases.attribute(interp, instance, attr)
    model = adapter(interp, instance)
    if attr == "add_loss":
        return method(attr, lambda value: model.losses.append(value))
    if attr == "losses":
        return model.added_losses()
    if attr == "layers" and instance.inner is None:     # (a functional subclass: its graph's, answered there)
        return model.layers()
    if attr in ("get_weights", "set_weights") and instance.inner is None:
        from tapecli.library.keras import layers as layers_mod
        if attr == "get_weights":
            return method(attr, lambda: layers_mod.get_weights(instance.owned_variables()))
        return method(attr, lambda values: layers_mod.set_weights(instance.owned_variables(), values,
                                                                  instance.keras_name or instance.label))
    if attr == "get_layer" and instance.inner is None:
        return method(attr, lambda name=None, index=None: _get_layer(model.layers(), name, index))
    if attr == "count_params" and instance.inner is None:
        return method(attr, lambda: count_params(instance))
    table = methods(interp, model)
    if attr in table:
        return method(attr, table[attr], getattr(table[attr], "replay_kind", None))
    attrs = attributes(model)
    return attrs[attr]() if attr in attrs else None


