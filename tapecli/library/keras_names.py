"""The Keras-lite names: layers, models, losses, optimizers, metrics, initializers and schedules
(``tapecli/library/keras``). Constructors check their arguments against the Keras signature."""
from __future__ import annotations

import inspect

from tapecli.errors import TdfTypeError
from tapecli.library.keras import (activations, adafactor, attention, augmentation, callbacks, configs, confusion,
                                   conv_recurrent, convolutional, einsum_dense, hashing, initializers, input_spec,
                                   iou_metrics,
                                   layers, losses, merging, metrics, mixed_precision, model_json, models,
                                   normalization, optimizer_base, optimizers, penalties, pooling, preprocessing,
                                   recurrent, regularization, rnn_wrappers, saving, schedules, shaping, spatial,
                                   utilities, vocabulary)
from tapecli.interpreter.classes import KERAS, KERAS_MODEL, FrameworkBase
from tapecli.interpreter.registry import BUILTINS, builtin, hook, register
from tapecli.library.python import class_named
from tapecli.library.keras.common import MetricObject
from tapecli.library.keras import (getters, operations, ops_arrays, ops_control, ops_fft, ops_keras_binary,
                                   ops_keras_linalg, ops_keras_more, ops_keras_numpy, ops_math, ops_nn, ops_numpy,
                                   ops_stats, random_ops, subclassing)
from tapecli.library.keras import bases  # (also registers the Keras base classes a program derives from)

_LAYER_OPTIONS = ("name", "input_shape", "trainable", "seed", "dtype")
_OPTIMIZER_OPTIONS = ("weight_decay", "clipnorm", "clipvalue", "global_clipnorm", "name")


def _usage(params) -> str:
    return "(" + ", ".join(str(p) for p in params if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)) + ")"


def _parameters(make) -> list:
    """The parameters of a function, or of a class's __init__ and those its ``**kw`` forwards to."""
    if not isinstance(make, type):
        return list(inspect.signature(make).parameters.values())
    out, names, first = [], set(), True
    for cls in make.__mro__:
        init = cls.__dict__.get("__init__")
        if init is None:
            continue
        params = list(inspect.signature(init).parameters.values())[1:]
        for p in params:
            if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL) and p.name not in names:
                names.add(p.name)
                out.append(p if first else p.replace(kind=p.KEYWORD_ONLY))
        first = False
        if not any(p.kind is p.VAR_KEYWORD for p in params):
            break
    positional = [p for p in out if p.kind is not p.KEYWORD_ONLY]
    return positional + [p.replace(kind=p.KEYWORD_ONLY) if p.kind is not p.KEYWORD_ONLY else p
                         for p in out if p.kind is p.KEYWORD_ONLY]


def _checker(make, extra, with_interp) -> tuple[inspect.Signature, str]:
    """The signature arguments are bound to (``make``'s plus the keywords ``extra``), and its usage text."""
    params = _parameters(make)[1 if with_interp else 0:]
    named = [p for p in params if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
    usage = _usage(named) if not extra else _usage(named)[:-1] + ", " * bool(named) + \
        ", ".join(f"{e}=..." for e in extra) + ")"
    check = inspect.Signature(named + [inspect.Parameter(e, inspect.Parameter.KEYWORD_ONLY, default=None)
                                       for e in extra if e not in {p.name for p in named}])
    return check, usage


def _register(name, make, extra=(), with_interp=True):
    """Register ``name``: arguments are checked against ``make``'s signature plus the keywords ``extra``.
    The check is made on the first call: making all of them at import cost every run's start-up. A layer keeps
    the arguments it was made with (its get_config is written from them), and its class has ``from_config``."""
    made = []

    def checker():
        if not made:
            made.extend(_checker(make, extra, with_interp))
        return made

    def construct(interp, *args, **kwargs):
        check, usage = checker()
        try:
            bound = check.bind(*args, **kwargs)
        except TypeError as e:
            raise TdfTypeError(f"{name}(): {e}", hint=f"usage: {name}{usage}") from None
        out = make(interp, *args, **kwargs) if with_interp else make(*args, **kwargs)
        if isinstance(out, (layers.Layer, MetricObject)):       # (a metric's get_config is written from them too)
            bound.apply_defaults()
            out.given_arguments = bound.arguments
        return out

    def from_config(interp, config):
        return construct(interp, **configs.constructor_arguments(make, checker()[0].parameters, config))
    construct.__name__ = name
    construct.makes = make          # the class Keras has of this name (isinstance: classes.is_instance)
    construct.literals = "Keras keeps the Python values it is given"      # (interpreter/registry.py: call_builtin)
    if isinstance(make, type) and (issubclass(make, layers.Layer) and not issubclass(make, models.Model)
                                   or issubclass(make, (penalties.Regularizer, penalties.Constraint,
                                                        optimizers.Schedule))):
        construct.class_methods = {"from_config": from_config}
    builtin(name, interp=True)(construct)


for _cls in (layers.LAYERS + recurrent.LAYERS + merging.LAYERS + shaping.LAYERS + spatial.LAYERS + einsum_dense.LAYERS
             + attention.LAYERS):
    _register(_cls.__name__, _cls, _LAYER_OPTIONS)
for _cls in rnn_wrappers.LAYERS + normalization.LAYERS:
    _register(_cls.__name__, _cls, _LAYER_OPTIONS)
for _cls in preprocessing.LAYERS + augmentation.LAYERS + regularization.LAYERS + vocabulary.LAYERS + hashing.LAYERS:
    _register(_cls.__name__, _cls, _LAYER_OPTIONS)
BUILTINS["Discretization"].class_methods = {
    "from_config": preprocessing.discretization_from_config(BUILTINS["Discretization"].class_methods["from_config"])}
for _cls in convolutional.LAYERS + conv_recurrent.LAYERS + pooling.LAYERS:
    _register(_cls.__name__, _cls, _LAYER_OPTIONS)
for _name, _cls in {**shaping.ALIASES, **convolutional.ALIASES, **pooling.ALIASES, **attention.ALIASES}.items():
    _register(_name, _cls, _LAYER_OPTIONS)
for _name, _cls in shaping.QUALIFIED.items():
    _register(f"layers.{_name}", _cls, _LAYER_OPTIONS)
for _name, _cls in merging.FUNCTIONS.items():
    builtin(f"layers.{_name}", interp=True)(merging.functional(_cls))
_register("Sequential", models.Sequential)
BUILTINS["Sequential"].class_methods = {"from_config": models.sequential_from_config}
builtin("layers.serialize")(models.serialize)
builtin("layers.deserialize", interp=True)(models.deserialize)
builtin("models.clone_model", interp=True)(models.clone_model)
builtin("models.model_from_json", interp=True)(model_json.model_from_json)
_register("Model", models.Functional)
BUILTINS["Model"].makes = FrameworkBase(KERAS_MODEL, KERAS)         # (isinstance: any model is a keras.Model)
BUILTINS["Model"].class_methods = {"from_config": models.functional_from_config}
_register("Input", models.program_input)
_register("InputLayer", models.program_input_layer)
_register("InputSpec", input_spec.InputSpec, with_interp=False)
builtin("utils.get_source_inputs")(models.get_source_inputs)
BUILTINS["keras.InputSpec"] = BUILTINS["InputSpec"]
BUILTINS["InputLayer"].makes = layers.InputLayer
_SCHEDULES = {cls.__name__: cls for cls in [optimizers.ExponentialDecay] + schedules.SCHEDULES}
for _cls in optimizers.OPTIMIZERS + adafactor.OPTIMIZERS:
    _register(_cls.__name__, _cls, _OPTIMIZER_OPTIONS)
    BUILTINS[_cls.__name__].class_methods = {"from_config": optimizers.from_config(BUILTINS[_cls.__name__],
                                                                                   _SCHEDULES)}
for _name in ("optimizers.Optimizer", "keras.Optimizer"):        # (the base a program's optimizer derives from)
    _register(_name, optimizer_base.BaseOptimizer)
for _cls in _SCHEDULES.values():
    _register(_cls.__name__, _cls, with_interp=False)
for _name in losses.CLASS_NAMES:
    builtin(_name)(losses.make(_name))       # checks its own keywords
for _name, _fn in losses.FUNCTIONS.items():
    builtin(_name)(_fn)
for _name in losses.QUALIFIED_CLASS_NAMES:
    builtin(f"losses.{_name}")(losses.make(_name))
for _name, _fn in losses.QUALIFIED_FUNCTIONS.items():        # keras.metrics has all but cosine_similarity
    builtin(f"losses.{_name}", *([f"metrics.{_name}"] if _name != "cosine_similarity" else []))(_fn)
for _name, _fn in losses.KERAS3_FUNCTIONS.items():       # keras.metrics has the focal crossentropies too
    builtin(f"losses.{_name}", *([f"metrics.{_name}"] if "focal" in _name else []))(_fn)
for _name, _make in losses.KERAS3_CLASSES.items():
    builtin(_name)(_make)
for _name, _fn in metrics.ACCURACY_FUNCTIONS.items():
    builtin(f"metrics.{_name}")(_fn)
for _cls in metrics.METRICS:
    _register(_cls.__name__, _cls, with_interp=False)
for _cls in confusion.METRICS + metrics.SCORE_METRICS + iou_metrics.METRICS:
    _register(_cls.__name__, _cls, with_interp=False)
for _name, _fn in metrics.SAMPLE_FUNCTIONS.items():
    builtin(f"metrics.{_name}")(_fn)
builtin("MeanMetricWrapper", interp=True)(metrics.mean_metric_wrapper)
for _cls in callbacks.CALLBACKS:     # (a LambdaCallback takes any hook of a Callback by its name)
    _lambda = _cls is callbacks.LambdaCallback
    _register(f"callbacks.{_cls.__name__}", _cls, extra=sorted(bases.CALLBACK_METHODS) if _lambda else (),
              with_interp=_lambda)
for _cls in metrics.LOSS_METRICS:      # keras.metrics.MeanSquaredError is a metric, keras.losses' a loss
    _register(f"metrics.{_cls.__name__}", _cls, with_interp=False)
for _cls in initializers.CLASSES:
    _register(_cls.keras_name, _cls, with_interp=False)
for _cls in initializers.TENSORFLOW_INITIALIZERS:
    _register(_cls.keras_name, _cls, with_interp=False)
for _name, _cls in initializers.ALIASES.items():
    _register(f"initializers.{_name}", _cls, with_interp=False)
for _name, _fn in activations.FUNCTIONS.items():
    builtin(f"activations.{_name}")(_fn)
for _name in ("get", "serialize", "deserialize"):
    builtin(f"activations.{_name}")(getattr(activations, _name))
for _name, _fn in random_ops.FUNCTIONS.items():     # (keras.random's, not tf.random's: their seeds differ)
    builtin(f"keras.random.{_name}")(_fn)
register("keras.KerasTensor", class_named(layers.KerasTensor.python_class()))     # (the class, for type() and is)
_register("keras.random.SeedGenerator", initializers.SeedGenerator, with_interp=False)
for _name, _cls in penalties.REGULARIZERS.items():
    _register(f"regularizers.{_name}", _cls, with_interp=False)
for _name, _cls in penalties.CONSTRAINTS.items():
    _register(f"constraints.{_name}", _cls, with_interp=False)
for _name, _cls in mixed_precision.CLASSES.items():
    _register(_name, _cls, with_interp=False)
for _name, _cls in mixed_precision.OPTIMIZERS.items():
    _register(_name, _cls)
for _name, _fn in {**utilities.FUNCTIONS, **ops_numpy.FUNCTIONS, **mixed_precision.FUNCTIONS}.items():
    builtin(_name)(_fn)
for _name, _fn in {**ops_math.FUNCTIONS, **ops_arrays.FUNCTIONS, **ops_stats.FUNCTIONS, **ops_control.FUNCTIONS,
                   **ops_nn.FUNCTIONS, **ops_fft.FUNCTIONS, **ops_keras_numpy.FUNCTIONS, **ops_keras_linalg.FUNCTIONS,
                   **ops_keras_more.FUNCTIONS, **ops_keras_binary.FUNCTIONS,
                   **{f"ops.{name}": activations.FUNCTIONS[name] for name in activations.KERAS_OPS}}.items():
    builtin(_name)(_fn)
builtin("keras.ops.nn.gelu")(ops_nn.gelu)     # (not tf.nn.gelu, which keras.ops.nn's flat name would give)
for _name, _fn in {**utilities.WITH_INTERP, **ops_control.WITH_INTERP, **ops_keras_linalg.WITH_INTERP}.items():
    builtin(_name, interp=True)(_fn)
for _name, _fn in {"losses.get": getters.loss, "metrics.get": getters.metric, "initializers.get": getters.initializer,
                  "regularizers.get": getters.regularizer, "constraints.get": getters.constraint}.items():
    builtin(_name)(_fn)
builtin("optimizers.get", interp=True)(getters.optimizer)
for _name, _fn in saving.FUNCTIONS.items():
    builtin(f"saving.{_name}", f"utils.{_name}")(_fn)
hook("keras_model")(subclassing.program_attribute)  # a program's keras.Model subclass: compile, fit, add_loss, ...
hook("keras_trainable")(subclassing.set_trainable)    # a program's layer or model set trainable
hook("keras_call")(subclassing.layer_call)    # Layer.__call__ of a program's layer: losses, Keras tensors
hook("keras_op")(operations.keras_op)      # keras.ops' functions: on Keras tensors, a functional graph's node
hook("initializer")(initializers.get)      # add_weight of a program's Layer subclass (interpreter/classes.py)
hook("weight_constraint")(penalties.hold_constraint)      # and its constraint=
