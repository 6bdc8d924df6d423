"""Conversions and the base class shared by the Keras-lite objects."""
from __future__ import annotations

import contextlib
import re

import numpy as np

from tapecli import ops
from tapecli.errors import NoAttribute, TdfTypeError, TdfValueError
from tapecli.interpreter.conversions import python_number
from tapecli.interpreter.conversions import to_float as num   # a Python number from a number or a one-element tensor
from tapecli.interpreter.objects import EFFECT, BoundMethod, ProgramObject
from tapecli.library.keras.stateless import metric_method
from tapecli.runtime.context import current
from tapecli.runtime.tape import as_tensor, type_word
from tapecli.runtime.values import NumpyArray, PythonTuple, Tensor, Variable


def opt_num(value, what):
    return None if value is None else num(value, what)


def integer(value, what="this argument") -> int:
    x = num(value, what)
    if x != int(x):
        raise TdfTypeError(f"{what} must be an integer, got {x}")
    return int(x)


def seed_value(value):
    """A seed: None, or a non-negative integer."""
    if value is None:
        return None
    n = num(value, "seed")
    if n < 0 or n != int(n):
        raise TdfValueError(f"a seed must be a non-negative integer, got {value if isinstance(value, str) else n:g}")
    return int(n)


def call_training(interp, depth: int, given):
    """Keras's Layer.__call__ (its step 4): the ``training`` a layer's call runs with, the one it was given, else
    its call context's (the value the calls around it ran with: a custom layer's ``self.bn(x)`` inside a model
    that fit calls with training=True), which the context then keeps for the calls it makes. ``depth``: how many
    layer calls are under way (0: an outermost call, a fresh context). True, False or None."""
    outer = getattr(interp, "keras_training", None) if depth else None
    resolved = flag(given) if given is not None else outer
    interp.keras_training = resolved
    return resolved


def flag(value) -> bool:
    if value is None or isinstance(value, bool):
        return bool(value)
    if isinstance(value, (Tensor, Variable)):
        t = as_tensor(value)
        if t.size == 1:
            return bool(t.value.reshape(()))
    raise TdfTypeError(f"expected True or False, got {type_word(value)}")


def dims(value, what="shape") -> tuple:
    """A tuple of ints (None kept) from an int, a list or a 1-D integer tensor."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        out = tuple(None if v is None else integer(v, f"a dimension of {what}") for v in value)
    else:
        t = as_tensor(value) if isinstance(value, (Tensor, Variable)) else None
        if t is None or t.dtype.kind not in "iuf" or t.ndim > 1:
            raise TdfTypeError(f"{what} must be a list of integers, got {type_word(value)}")
        out = tuple(integer(Tensor(np.asarray(v)), f"a dimension of {what}") for v in np.atleast_1d(t.value))
    if any(d is not None and d < 0 for d in out):
        from tapecli.errors import ShapeError
        raise ShapeError(f"{what} cannot have negative dimensions: {list(out)}")
    return out


def axis_value(value, what="axis"):
    """An axis argument: an int, or a tuple of ints from a list or a 1-D tensor (negative allowed)."""
    if isinstance(value, int):
        return value
    if isinstance(value, (list, tuple)) and all(type(a) is int for a in value):     # (a config's, as Keras keeps it)
        return tuple(value)
    axes = [int(a) for a in np.atleast_1d(np.asarray(tensor(value, what).value))]
    return tuple(axes) if isinstance(value, (list, tuple)) or tensor(value).ndim else axes[0]


def converted(x, what="the input") -> Tensor:
    """Keras's ``ops.convert_to_tensor``: a materialized tensor, a NumPy array's dtype kept (lists of tensors
    stacked)."""
    if isinstance(x, list):         # (as TensorFlow packs it: its Python numbers one literal, its tensors stacked)
        x = ops.to_tensor(x) if x else Tensor(np.zeros(0, np.float32))
    if type(x) in (int, float):     # (a config's number, as Keras keeps it: Rescaling's scale)
        x = ops.to_tensor(x)
    if not isinstance(x, (Tensor, Variable)) and getattr(x, "as_dense_tensor", None) is None:   # (tf.IndexedSlices)
        raise TdfTypeError(f"{what} must be a tensor, got {type_word(x)}")
    return ops.materialize(ops.to_tensor(x))


def tensor(x, what="the input", floats=None) -> Tensor:
    """A layer's input as Keras takes it: ``converted``, a NumPy array of floats as ``floats`` (the layer's
    compute dtype), by default floatx."""
    t = converted(x, what)
    want = float_dtype() if floats is None else floats
    if isinstance(t, NumpyArray) and t.dtype.kind == "f" and t.dtype != want:
        t = Tensor(t.value.astype(want))      # Keras converts a NumPy array of floats to its compute dtype
    return t


def call_argument(value):
    """An argument of a layer's call as Keras's ``Layer.__call__`` converts it (``DTypePolicy.convert_input``): a
    NumPy array becomes a tensor, of floatx where it holds floats, and a float tensor of another float dtype is
    cast to floatx (on the tape, so its gradient flows back); Python numbers, strings, variables and other values
    pass as they are, and lists, tuples and dicts item by item."""
    kind = value.__class__
    if kind is list or kind is PythonTuple or kind is tuple:
        return kind(call_argument(v) for v in value)
    if kind is dict:
        return {k: call_argument(v) for k, v in value.items()}
    if kind is NumpyArray:
        return Tensor(value.value.astype(float_dtype()) if value.dtype.kind == "f" else value.value)
    if kind is Tensor and not value.weak and value.dtype.kind == "f" and value.dtype != float_dtype():
        return ops.cast(value, float_dtype())
    return value


def model_input(x) -> Tensor:
    """A model's input as Keras's call converts it (convert_to_tensor, at the model's compute dtype): a tensor
    (a program's layer first in a model sees one)."""
    t = tensor(x)
    return Tensor(t.value) if isinstance(t, NumpyArray) else t


def written(x, what) -> float:
    """A Python number argument as the program wrote it: where CPython runs a program, its literal 0.01 reaches
    the library as a float32 scalar, whose float is 0.009999999776482582; Keras keeps the Python float."""
    if isinstance(x, Tensor) and not x.weak and x.dtype == np.float32 and x.ndim == 0:
        return float(str(x.value))
    return num(x, what)


def float_dtype():
    """Keras's floatx: keras.config.set_floatx's, else the run's float dtype."""
    ctx = current()
    return ctx.settings.float_dtype if ctx.keras_floatx is None else ctx.keras_floatx


def snake_case(name: str) -> str:
    """Keras's to_snake_case: ``RMSprop`` -> ``rm_sprop``, ``AdamW`` -> ``adam_w``, ``SGD`` -> ``sgd``,
    ``<lambda>`` -> ``lambda``."""
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", re.sub(r"\W+", "", name))
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()


def auto_name(interp, prefix: str) -> str:
    """Keras's automatic names: dense, dense_1, dense_2, ... counted per run."""
    counts = getattr(interp, "keras_names", None)
    if counts is None:
        counts = {}
        interp.keras_names = counts
    n = counts.get(prefix, 0)
    counts[prefix] = n + 1
    return prefix if n == 0 else f"{prefix}_{n}"


@contextlib.contextmanager
def name_scope(interp, name):
    """Keras's name scope of a layer or model while it builds and calls the layers it holds: the start of the
    ``path`` of the weights they make (``sequential/dense/kernel``)."""
    scopes = getattr(interp, "keras_scopes", None)
    if scopes is None:
        scopes = interp.keras_scopes = []
    scopes.append(name)
    try:
        yield
    finally:
        scopes.pop()


def layer_name(layer) -> str:
    """A layer's Keras name: a library layer's given or automatic one, a program layer's (or its adapter's)
    instance's, or on CPython the program's layer's."""
    if hasattr(layer, "auto"):
        return layer.given or layer.auto
    instance = getattr(layer, "instance", layer)
    if not hasattr(instance, "keras_name"):        # (CPython's view of a program's layer: the layer's own name)
        return layer.display()
    return instance.keras_name or instance.label


def weight_path(interp, layer_name, short) -> str:
    """A new weight's ``path``: the scopes open, the layer's name, the weight's."""
    scopes = list(getattr(interp, "keras_scopes", ()))
    if not scopes or scopes[-1] != layer_name:          # (a layer building inside its own call: its scope is open)
        scopes.append(layer_name)
    return "/".join([*scopes, short])


def check_choice(value, allowed, what):
    if value not in allowed:
        raise TdfValueError(f'{what} must be one of {", ".join(repr(a) for a in allowed)}, got {value!r}')
    return value


def method(name, fn, replay=None, planned=None):
    """A bound method whose body takes (*args, **kwargs) without the call node (``replay`` and ``planned``:
    what it is to a loop plan, ``BoundMethod``)."""
    return BoundMethod(name, lambda node, *args, **kwargs: python_number(fn(*args, **kwargs)), replay, planned)


class KerasObject(ProgramObject):
    """A Keras-lite object: ``attributes()`` names the readable attributes, ``methods()`` the methods."""

    kind_word = "a Keras object"
    keras_bases: tuple = ()         # the Keras base classes it is an instance of (FrameworkBase.has_instance)
    replay_methods: dict = {}       # method name: what calling it is to a loop plan (BoundMethod.replay)
    # The methods Keras calls on the object itself that the library calls by their names with Keras's arguments
    # (a program's class derived from this one overrides them: execution/keras_derived.py), and those Keras calls
    # that the library does not call back (an override of one is refused)
    called_back: frozenset = frozenset()
    not_called_back: frozenset = frozenset()
    # whether a program's class may derive from this one, on CPython: one whose overrides the library calls back,
    # or a layer (a program's layer holding the library's: execution/keras_derived.py)
    derivable = False
    planned_methods: dict = {}      # method name: the name of the method giving its plan's call (.planned)

    def attributes(self) -> dict:
        return {}

    def methods(self) -> dict:
        return {}

    def python_class_name(self) -> str:
        """Keras's name of its class (``Dense``), as its repr writes it."""
        found = getattr(self, "python_class", None)
        qualified = found() if found is not None else None
        return qualified.rpartition(".")[2] if qualified else type(self).__name__

    def attribute_value(self, name: str):
        value = self.attributes()[name]
        return value() if callable(value) and not isinstance(value, ProgramObject) else value

    def get_attribute(self, interp, attr, node):
        # an object's methods are fixed once it is made: built once (a training loop reads them every step)
        methods = self.__dict__.get("_methods")
        if methods is None:
            methods = self._methods = self.methods()
        if attr in methods:
            planned = self.planned_methods.get(attr)
            return method(attr, methods[attr], self.replay_methods.get(attr),
                          getattr(self, planned) if planned is not None else None)
        attrs = self.attributes()
        if attr in attrs:
            return python_number(self.attribute_value(attr))
        names = sorted(set(attrs) | set(methods))
        raise NoAttribute(f"{self.kind_word} has no attribute {attr}",
                           hint=("it has " + ", ".join(names)) if names else None)


class MetricObject(KerasObject):
    """A metric: its updates change its state from the values given (Python numbers, nothing recorded), so a
    loop plan makes each update call again at every iteration; what ``result()`` reads of that state is not a
    plan's: the call is made again as an effect's, its result dropped (a loop that reads it, in a kernel or in
    Python, runs as written; one that only returns or keeps it, a ``train_step``'s logs, is planned: loop_plans)."""

    kind_word = "a metric"
    keras_bases = ("keras.Metric",)
    called_back = frozenset({"update_state", "result", "reset_state"})
    derivable = True
    replay_methods = {"update_state": EFFECT, "reset_state": EFFECT, "reset_states": EFFECT, "result": EFFECT}

    def python_text(self) -> str:
        """``print(metric)``: Keras 3's repr of a metric."""
        return f"<{self.python_class_name()} name={self.attribute_value('name')}>"

    def python_class(self) -> str | None:
        """``type(metric)``: Keras's class of a metric, in its module (Keras 3's)."""
        name = type(self).__name__
        module = next((m for m, names in _METRIC_MODULES.items() if name in names.split()), None)
        return None if module is None else f"keras.src.metrics.{module}.{name}"

    def replay_kind(self, args, kwargs, tracked):
        return EFFECT               # metric(values): an update, then its result

    def keras_variables(self) -> list:
        """``metric.variables``: the Keras variables that hold its state, in Keras's order."""
        return list(self.state.values())

    def get_attribute(self, interp, attr, node):
        if attr == "variables":
            return self.keras_variables()
        if attr == "get_config" and self.__dict__.get("given_arguments") is not None:
            return method(attr, self.get_config)
        stateless = metric_method(self, attr)
        if stateless is not None:
            return method(attr, stateless)
        return super().get_attribute(interp, attr, node)


    def get_config(self) -> dict:
        """Keras's config of a built-in metric: its name and dtype, then the arguments it was made with (keras_names
        keeps them, defaults filled in) in its constructor's order; a class whose get_config orders or leaves out
        keys otherwise (the IoU metrics, the X-at-Y ones, AUC, CosineSimilarity) by its own list (METRIC_CONFIGS)."""
        given = {k: v for k, v in self.given_arguments.items() if k not in ("name", "dtype", "kwargs")}
        dtype = getattr(self, "dtype", None) or self.given_arguments.get("dtype") or float_dtype()
        name = getattr(dtype, "name", None)        # (a NumPy dtype, tapecli's DType, or the name given)
        values = {"name": self.name, "dtype": name if isinstance(name, str) else str(dtype), **given}
        if "target_class_ids" in values:       # (the IoU metrics keep a list of them)
            ids = values["target_class_ids"]
            values["target_class_ids"] = ids.value.tolist() if isinstance(ids, Tensor) else list(ids)
        keys = METRIC_CONFIGS.get(type(self).__name__, ["name", "dtype", *given])
        return {k: values.get(k) for k in keys}


# The metrics whose get_config differs from name, dtype and their constructor's arguments (Keras 3.15)
_AT = ["name", "dtype", "class_id", "num_thresholds"]
METRIC_CONFIGS = {
    "AUC": ["name", "dtype", "num_thresholds", "curve", "summation_method", "multi_label", "num_labels",
            "label_weights", "from_logits"],
    "BinaryIoU": ["target_class_ids", "threshold", "name", "dtype"],
    "CosineSimilarity": ["name", "dtype"],
    "MeanIoU": ["num_classes", "name", "dtype", "ignore_class", "sparse_y_true", "sparse_y_pred", "axis"],
    "OneHotIoU": ["num_classes", "target_class_ids", "name", "dtype", "ignore_class", "sparse_y_pred", "axis"],
    "OneHotMeanIoU": ["num_classes", "name", "dtype", "ignore_class", "sparse_y_pred", "axis"],
    "PrecisionAtRecall": [*_AT, "recall"], "RecallAtPrecision": [*_AT, "precision"],
    "SensitivityAtSpecificity": [*_AT, "specificity"], "SpecificityAtSensitivity": [*_AT, "sensitivity"],
    "SparseTopKCategoricalAccuracy": ["name", "dtype", "k"],
    "SparseCategoricalCrossentropy": ["name", "dtype", "from_logits", "ignore_class", "axis"],    # (None)
}


def state_variable(metric_name: str, name: str, value) -> Variable:
    """A metric's state as Keras holds it: a non-trainable Keras variable ``name`` under the metric's name (its
    path ``mean/total``). It stays out of the run's variables: to loop plans and traces a metric's update is an
    effect they make again (MetricObject), not a variable they carry."""
    v = Variable(f"{metric_name}/{name}", np.asarray(value), False, tf_name=name, keras=f"{metric_name}/{name}")
    current().variables.discard(v)
    return v


def state_value(name: str) -> property:
    """A metric's scalar state entry ``name`` (its ``state`` variable of that name, of the variable's dtype), read
    and written as a NumPy scalar."""
    return property(lambda metric: metric.state[name].read().value[()],
                    lambda metric, value: metric.state[name].assign(np.asarray(value, metric.state[name].dtype)))


def add(x1, x2) -> Tensor:
    """keras.ops.add of two tensors as Keras's TensorFlow backend computes it: where ``x2`` looks like a bias
    (one dimension above 1, of the size of ``x1``'s last, ``x1`` of rank 2 or more) tf.nn.bias_add, whose
    gradient to the bias is BiasAddGrad's (its own order of the rows); otherwise tf.add. (Keras's channels-first
    bias, the size of ``x1``'s second dimension only, is added by tf.add here.)"""
    x1, x2 = ops.to_tensor(x1), ops.to_tensor(x2)
    sizes = [n for n in x2.shape if n > 1]
    if len(sizes) == 1 and x1.ndim > 1 and x1.shape[-1] == sizes[0] and x1.dtype == x2.dtype:
        return ops.bias_add(x1, x2 if x2.ndim == 1 else ops.reshape(x2, sizes))
    return ops.add(x1, x2)


def scalar(x, dtype=np.float32) -> Tensor:
    return Tensor(np.asarray(x, dtype=dtype))


# Keras 3's modules of its metric classes (type() names them)
_METRIC_MODULES = {
    "accuracy_metrics": "Accuracy BinaryAccuracy CategoricalAccuracy SparseCategoricalAccuracy "
                        "SparseTopKCategoricalAccuracy TopKCategoricalAccuracy",
    "confusion_metrics": "AUC FalseNegatives FalsePositives Precision PrecisionAtRecall Recall RecallAtPrecision "
                         "SensitivityAtSpecificity SpecificityAtSensitivity TrueNegatives TruePositives",
    "correlation_metrics": "ConcordanceCorrelation PearsonCorrelation",
    "f_score_metrics": "F1Score FBetaScore",
    "hinge_metrics": "CategoricalHinge Hinge SquaredHinge",
    "iou_metrics": "BinaryIoU IoU MeanIoU OneHotIoU OneHotMeanIoU",
    "probabilistic_metrics": "BinaryCrossentropy CategoricalCrossentropy KLDivergence Poisson "
                             "SparseCategoricalCrossentropy",
    "reduction_metrics": "Mean MeanMetricWrapper Sum",
    "regression_metrics": "CosineSimilarity LogCoshError MeanAbsoluteError MeanAbsolutePercentageError "
                          "MeanSquaredError MeanSquaredLogarithmicError R2Score RootMeanSquaredError",
}


@contextlib.contextmanager
def graph_step(run_eagerly: bool):
    """Keras's fit, evaluate, predict and its on_batch methods run each step as a tf.function (but under
    compile(run_eagerly=True) or tf.config.run_functions_eagerly(True)): inside it the run computes as
    TensorFlow's graph does (tf.inside_function(), a recurrent layer's loop, the order of AddN's gradients, the
    activations Grappler fuses into a MatMul)."""
    ctx = current()
    graph = not run_eagerly and not ctx.functions_eagerly
    ctx.functions += graph
    try:
        yield
    finally:
        ctx.functions -= graph
