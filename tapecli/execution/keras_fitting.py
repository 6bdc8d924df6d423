"""``compile``, ``fit``, ``evaluate``, ``predict`` (and ``train_on_batch``, ``metrics``, ``optimizer``...) of a
program's ``keras.Model`` subclass that CPython runs (keras_classes.py): the library's Trainer
(library/keras/training.py) runs them, given the model through :class:`FittedModel`, the Trainer's model
interface for a CPython instance (as training.ProgramModel is for the interpreter's). The program's overrides
(``train_step``, ``test_step``, ``predict_step``, ``compute_loss``, a ``metrics`` property) are called back on the
program's side, with the program's values; ``super().compute_loss`` and ``self.compiled_loss`` are the Trainer's. A
program's RNN cell, which the bridge leaves to the interpreter, keeps a program off CPython (``refusal``, read from
its text)."""
from __future__ import annotations

import ast
import inspect
import types

from tapecli.execution.tf_values import ProgramCallable, as_tensorflow, library_value, program_side, run_view, \
    to_library, to_program
from tapecli.runtime.context import current


def refusal(tree: ast.Module, keras_class) -> str | None:
    """Why a program that derives from Keras's classes stays off CPython: it defines an RNN cell (a state_size).
    ``keras_class`` gives the bridge's Keras class a base class's expression names (None: none)."""
    classes = [node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]
    if not any(keras_class(b) is not None for node in classes for b in node.bases):
        return None
    for node in ast.walk(tree):
        name = node.attr if isinstance(node, ast.Attribute) else node.name if isinstance(node, ast.FunctionDef) \
            else None
        if name == "state_size":
            return (f"line {node.lineno} gives a class derived from Keras's a state_size: keras.layers.RNN runs a "
                    "program's cell on tapecli's interpreter")
    return None


class FittedModel:
    """Trainer's model interface for an instance of a program's Model subclass: its forward pass, weights, losses
    and metrics read on the program's side; its own methods where its class overrides Keras's."""

    many_inputs = False

    def __init__(self, run, instance):
        self.interp, self.instance, self.trainer = run, instance, None
        self.eager = current().eager
        from tapecli.library.keras.training import methods
        self.table = methods(run, self)

    def _program_side(self, f, *args, **kwargs):
        with program_side(self.eager):
            return f(*args, **kwargs)

    def forward(self, x, training):
        return to_library(self._program_side(self.instance, to_program(x), training=bool(training)))

    def weights_to_train(self) -> list:
        return list(self._program_side(lambda: self.instance.trainable_weights))

    def all_weights(self) -> list:
        return list(self._program_side(lambda: self.instance.weights))

    def added_losses(self) -> list:
        return [to_library(loss) for loss in self._program_side(lambda: self.instance.losses)]

    def own_metrics(self) -> list:
        """The Keras Means the model holds (a custom train_step's loss tracker), as the interpreter's model
        gives them (training.ProgramModel.own_metrics)."""
        from tapecli.library.keras import metrics as metrics_mod
        from tapecli.library.keras.compile_metrics import CompileMetrics
        return [library_value(v) for v in list(vars(self.instance).values())
                if isinstance(library_value(v), (metrics_mod.Mean, CompileMetrics))]

    def step(self, name: str):
        found = self.method(name)
        return None if found is None else lambda data: found([data], {})

    def own_function(self, name: str):
        """The function of the program's class that its method ``name`` runs (what a loop plan lets in), or None."""
        found = inspect.getattr_static(type(self.instance), name, None)
        return found if found.__class__ is types.FunctionType and found is not getattr(Fitting, name, None) else None

    def plan_runner(self):
        """The runner of the program's loop plans (planned_loops.ProgramLoops): a planned epoch's, of its step."""
        return self.eager.run.loops

    def method(self, name: str):
        """The program's own method ``name`` (one its class overrides), called as ``method(args, kwargs)`` with
        the library's values, or None."""
        if getattr(type(self.instance), name, None) is getattr(Fitting, name, None):
            return None
        callback = ProgramCallable(getattr(self.instance, name))

        def call(args, kwargs):
            return callback.call(self.interp, args, kwargs, None)
        call.takes_keyword = callback.takes_keyword
        return call


def fitted(model) -> FittedModel:
    """The Trainer's view of a program's model, one per instance (kept by the run)."""
    return run_view(current().eager.run, "keras_models", model, FittedModel)


def _called(f, args, kwargs):
    """``f`` of the program's arguments, converted on the program's side (a Loss's or Callback's view holds the
    run's Eager)."""
    return _crossed(f, [to_library(a) for a in args], {k: to_library(v) for k, v in kwargs.items()})


@as_tensorflow
def _crossed(f, args, kwargs):
    return to_program(f(*args, **kwargs))


def _trainer_method(name: str):
    def method(self, *args, **kwargs):
        current().eager._line()
        return _called(fitted(self).table[name], args, kwargs)

    def replay_kind(model, args, kwargs, tracked):
        """What a call of it is to a loop plan (planned_loops.ProgramLoops.call_kind): the Trainer's method's."""
        kind = getattr(fitted(model).table[name], "replay_kind", None)
        return None if kind is None else kind([to_library(a) for a in args],
                                              {k: to_library(v) for k, v in kwargs.items()}, tracked)
    method.__name__ = method.__qualname__ = name
    method.replay_kind = replay_kind
    return method


def _trainer_attribute(name: str, doc: str):
    def read(self):
        from tapecli.library.keras.training import attributes
        found = attributes(fitted(self)).get(name)
        if found is None:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        return as_tensorflow(lambda: to_program(found()))()
    return property(read, doc=doc)


class Fitting:
    """Keras's training API of a Model, each method the Trainer's (training.methods) of the model's FittedModel."""

    stop_training = stop_evaluating = stop_predicting = False     # (set by a callback: fit ends after the epoch)

    compile = _trainer_method("compile")
    fit = _trainer_method("fit")
    evaluate = _trainer_method("evaluate")
    predict = _trainer_method("predict")
    train_on_batch = _trainer_method("train_on_batch")
    test_on_batch = _trainer_method("test_on_batch")
    predict_on_batch = _trainer_method("predict_on_batch")
    compute_loss = _trainer_method("compute_loss")
    compiled_loss = _trainer_method("compiled_loss")
    compute_metrics = _trainer_method("compute_metrics")
    reset_metrics = _trainer_method("reset_metrics")

    metrics = _trainer_attribute("metrics", "The loss tracker, the compiled metrics, the Means the model holds.")
    metrics_names = _trainer_attribute("metrics_names", "The names of the metrics.")
    compiled_metrics = _trainer_attribute("compiled_metrics", "Keras 2's compiled metrics (deprecated).")
    optimizer = _trainer_attribute("optimizer", "The compiled optimizer (None before compile).")

    @property
    def history(self):
        """The History of the last fit (Keras sets it from the first epoch's end on)."""
        found = getattr(fitted(self), "history", None)
        if found is None:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute 'history'")
        return to_program(found)

    def get_layer(self, name=None, index=None):
        """Keras's Model.get_layer: the layer at ``index``, or the one named ``name``."""
        layers = self.layers
        if index is not None and name is not None:
            raise ValueError(f"Provide only a layer name or a layer index. Received: index={index}, name={name}.")
        if index is not None:
            if len(layers) <= index:
                raise ValueError(f"Was asked to retrieve layer at index {index} but model only has {len(layers)} "
                                 "layers.")
            return layers[index]
        if name is None:
            raise ValueError("Provide either a layer name or layer index at `get_layer`.")
        names = [layer.name for layer in layers]
        if name in names:
            return layers[names.index(name)]
        raise ValueError(f"No such layer: {name}. Existing layers are: {names}.")

