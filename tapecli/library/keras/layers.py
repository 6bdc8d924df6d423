"""Keras-style layers, built on their first call (or from a model's input shape) as in Keras 3.

A layer's variables are named ``NAME.kernel``: NAME is the layer's ``name=``, else the name it was
first bound to (``layer = Dense(2)``), else its place in a bound model (``model.layers[0]``), else
Keras's automatic name (``dense``, ``dense_1``, ...)."""
from __future__ import annotations

import inspect
import math
import re

import numpy as np

from tapecli import kernels, ops
from tapecli.kernels import tf_random
from tapecli.errors import LimitError, ShapeError, TdfTypeError, TdfValueError
from tapecli.library.draws import uniform_values
from tapecli.library.keras import activations, initializers, mixed_precision, penalties
from tapecli.library.keras.configs import attribute_keys, config_entry, keras_name, layer_config
from tapecli.library.keras.keras_tensor import KerasTensor
from tapecli.library.keras.stateless import stateless_call
from tapecli.library.keras.common import (KerasObject, add, auto_name, call_training, dims, flag, float_dtype, integer, num,
                                              scalar, seed_value, tensor, weight_path)
from tapecli.interpreter.conversions import python_number
from tapecli.interpreter.classes import LAYER
from tapecli.interpreter.objects import PURE, BoundMethod, Function, ProgramObject
from tapecli.runtime.context import current
from tapecli.runtime.tape import type_word
from tapecli.runtime.values import NumpyArray, PythonBool, PythonTuple, Tensor, Variable, dtype_name

ACTIVATIONS = {name: (None if name == "linear" else fn) for name, fn in activations.FUNCTIONS.items()}


def activation_fn(value, interp):
    """A Python function of one tensor from an activation name, a program function or a builtin."""
    if value is None:
        return None
    if isinstance(value, str):
        if value not in ACTIVATIONS:
            raise TdfValueError(f"Could not interpret activation function identifier: {value}",     # Keras's words
                                hint="use one of " + ", ".join(f'"{a}"' for a in ACTIVATIONS))
        return ACTIVATIONS[value]
    if isinstance(value, (Function, ProgramObject, BoundMethod)) or getattr(value, "is_builtin", False):
        return lambda y: interp.call_value(value, [y])
    raise TdfTypeError(f"activation must be a name or a function, got {type_word(value)}")


# Keras 3's packages of its layers (keras.src.layers.<package>.<module>.<Class>), for type(layer).
_LAYER_PACKAGES = {
    "core": "Dense Embedding InputLayer Identity Masking Lambda EinsumDense",
    "activations": "Activation ReLU LeakyReLU PReLU ELU Softmax",
    "regularization": "Dropout SpatialDropout1D SpatialDropout2D SpatialDropout3D GaussianNoise GaussianDropout "
                      "AlphaDropout ActivityRegularization",
    "reshaping": "Flatten Reshape Permute RepeatVector Cropping1D Cropping2D Cropping3D ZeroPadding1D ZeroPadding2D "
                 "ZeroPadding3D UpSampling1D UpSampling2D UpSampling3D",
    "normalization": "BatchNormalization LayerNormalization UnitNormalization GroupNormalization "
                     "SpectralNormalization RMSNormalization",
    "convolutional": "Conv1D Conv2D Conv3D Conv1DTranspose Conv2DTranspose Conv3DTranspose DepthwiseConv1D "
                     "DepthwiseConv2D SeparableConv1D SeparableConv2D",
    "pooling": "MaxPooling1D MaxPooling2D MaxPooling3D AveragePooling1D AveragePooling2D AveragePooling3D "
               "GlobalAveragePooling1D "
               "GlobalAveragePooling2D GlobalAveragePooling3D GlobalMaxPooling1D GlobalMaxPooling2D GlobalMaxPooling3D "
               "AdaptiveAveragePooling1D AdaptiveAveragePooling2D AdaptiveAveragePooling3D AdaptiveMaxPooling1D "
               "AdaptiveMaxPooling2D AdaptiveMaxPooling3D",
    "rnn": "SimpleRNN LSTM GRU RNN SimpleRNNCell LSTMCell GRUCell StackedRNNCells Bidirectional TimeDistributed "
           "ConvLSTM1D ConvLSTM2D ConvLSTM3D",
    "attention": "Attention AdditiveAttention MultiHeadAttention GroupedQueryAttention",
    "merging": "Add Subtract Multiply Average Maximum Minimum Concatenate Dot",
    "preprocessing": "Rescaling Normalization CategoryEncoding Discretization StringLookup IntegerLookup "
                     "TextVectorization Hashing HashedCrossing",
    "preprocessing.image_preprocessing": "Resizing CenterCrop RandomFlip RandomRotation RandomZoom RandomTranslation "
                                         "RandomContrast RandomBrightness RandomCrop",
}
_LAYER_MODULES = {"Conv1DTranspose": "conv1d_transpose", "Conv2DTranspose": "conv2d_transpose",
                  "Conv3DTranspose": "conv3d_transpose", "ReLU": "relu",
                  "LeakyReLU": "leaky_relu", "PReLU": "prelu", "Lambda": "lambda_layer",
                  "SimpleRNNCell": "simple_rnn", "LSTMCell": "lstm", "GRUCell": "gru",
                  "StackedRNNCells": "stacked_rnn_cells",
                  **dict.fromkeys(("SpatialDropout1D", "SpatialDropout2D", "SpatialDropout3D"), "spatial_dropout")}
# (the rest: snake case)


def get_weights(weights) -> list:
    """Keras's get_weights: a NumPy array of each weight's value."""
    return [NumpyArray(v.read().value.copy()) for v in weights]


def set_weights(weights, values, name) -> None:
    """Keras's set_weights: as many values as weights, each of its weight's shape."""
    if isinstance(values, (Tensor, Variable)) and tensor(values).ndim > 0:
        values = [ops.getitem(tensor(values), i) for i in range(tensor(values).shape[0])]
    values = list(values) if isinstance(values, (list, tuple)) else None
    if values is None or len(values) != len(weights):
        n = "?" if values is None else len(values)
        raise TdfValueError(f"You called `set_weights(weights)` on layer '{name}' with a weight list "
                            f"of length {n}, but the layer was expecting {len(weights)} weights.")
    for v, value in zip(weights, values):
        t = tensor(value, "a weight")
        if t.shape != v.shape:
            raise TdfValueError(f"Layer {name} weight shape {tuple(v.shape)} is not compatible with provided "
                                f"weight shape {tuple(t.shape)}.")
        v.assign(np.asarray(t.value, dtype=v.dtype))


class Layer(KerasObject):
    kind_word = "a layer"
    keras_bases = (LAYER,)
    derivable = True

    def python_class(self) -> str | None:
        """``type(layer)``: Keras's class of a layer, in its module (Keras 3's)."""
        name = type(self).__name__
        package = next((p for p, names in _LAYER_PACKAGES.items() if name in names.split()), None)
        module = _LAYER_MODULES.get(name) or re.sub(r"(?<=[a-z])(?=[A-Z])", "_", name).lower()
        return None if package is None else f"keras.src.layers.{package}.{module}.{name}"
    def python_text(self) -> str:
        """``print(layer)``: Keras 3's repr of a layer or a model."""
        return f"<{self.python_class_name()} name={self.attribute_value('name')}, built={bool(self.built)}>"

    prefix = "layer"
    # a built layer of this class computes its output by ops from its input and weights, decides nothing from
    # values and changes nothing (no draws, no state): a loop plan may replace its calls (ProgramObject.replay_kind)
    replayable = False

    regularizers: dict = {}
    constraints: dict = {}
    activity_losses: list = []
    # Keras's compute_output_spec: a layer's symbolic output is of its compute dtype (floatx, floats being cast to
    # it), but a layer that only moves its input's elements (Flatten, Reshape, Permute, Identity) keeps an int or
    # bool input's dtype
    keeps_dtype = False
    # Keras's _build_at_init: a layer that makes no weights is built when made (where its class keeps the default
    # build), so its first call records no input shape (its summary's output shape is unknown)
    built_at_init = False

    def __init__(self, interp, name=None, input_shape=None, trainable=True, seed=None, input_dim=None,
                 activity_regularizer=None, dtype=None):
        self.auto = auto_name(interp, self.prefix) if name is None else name     # (Keras counts unnamed layers only)
        if name is not None and not isinstance(name, str):
            raise TdfTypeError(f"name must be a string, got {type_word(name)}")
        self.given, self.bound, self.path = name, None, None
        self.weights_: dict[str, Variable] = {}
        self.built = self.built_at_init and type(self).build is Layer.build
        self.trainable = flag(trainable)
        if input_dim is not None and input_shape is None:          # Keras's older spelling of a 1-D input_shape
            input_shape = [integer(input_dim, "input_dim")]
        self.input_shape = None if input_shape is None else (None, *dims(input_shape, "input_shape"))
        self.rng = np.random.default_rng(seed_value(seed)) if seed is not None else interp.rng
        self.interp = interp
        self.activity_regularizer = penalties.regularizer(activity_regularizer, interp)
        self.policy = mixed_precision.layer_policy(dtype)
        if self.policy is not None and self.policy.mixed and not self.computes_mixed:
            raise TdfValueError(f"{type(self).__name__} under the mixed precision policy {self.policy.name!r} is "
                                "not in tapecli yet: its layers of mixed precision are Dense, Activation, Flatten "
                                "and Dropout", hint='give this layer dtype="float32"')

    # whether the layer computes under a mixed policy as Keras's does (its ops checked in float16 and bfloat16);
    # a model holds layers, whose own policies decide
    computes_mixed = False

    # Keras's dtype policy (its ``dtype=``, else the global policy a program set): the float types a layer
    # computes in and makes its weights in; None, the run's floatx for both
    policy = None

    @property
    def compute_dtype(self) -> np.dtype:
        return float_dtype() if self.policy is None else self.policy.compute_dtype

    @property
    def variable_dtype(self) -> np.dtype:
        return float_dtype() if self.policy is None else self.policy.variable_dtype

    def as_program(self):
        """The layer as the program holds it (a program's own layer is its instance, not the adapter)."""
        return self

    # ---------------------------------------------------------------- names and weights
    def display(self) -> str:
        return self.given or self.bound or self.path or self.auto

    def bind_name(self, name: str) -> None:
        if self.bound is None:
            self.bound = name
            self.rename()

    def rename(self) -> None:
        for short, v in self.weights_.items():
            v.name = f"{self.display()}.{short}"

    def add_weight(self, short, shape, init, dtype, trainable=True) -> Variable:
        size = math.prod(shape)
        limit = current().settings.max_elements
        if size > limit:
            raise LimitError(f"this {type(self).__name__} layer's {short} would have {size:,} elements, over the "
                             f"limit of {limit:,}", hint="make the layer smaller, or raise --max-elements")
        made = initializers.get(init, interp=self.interp).make(shape, self.rng, dtype)
        # (Keras's: a weight made trainable follows the layer's trainable, now and whenever it is set)
        v = Variable(f"{self.display()}.{short}", made, trainable and self.trainable,
                     tf_name=short, keras=weight_path(self.interp, self.given or self.auto, short))
        if trainable:
            self.__dict__.setdefault("trainable_made", set()).add(v.id)
        self.weights_[short] = v
        if self.constraints.get(short) is not None:
            current().constraints[v.id] = self.constraints[short]
        return v

    @property
    def weights(self) -> list[Variable]:
        own = list(self.weights_.values())
        return [v for v in own if v.trainable] + [v for v in own if not v.trainable]

    @property
    def trainable_weights(self) -> list[Variable]:
        return [v for v in self.weights if v.trainable] if self.trainable else []

    def seed_generators(self) -> list:
        """The layer's Keras SeedGenerators (a Dropout's), whose states are among its variables."""
        found = getattr(self, "generator", None)
        return [found] if isinstance(found, initializers.SeedGenerator) else []

    @property
    def variables(self) -> list[Variable]:
        """Keras's ``layer.variables``: its weights, then its seed generators' states."""
        return self.weights + [g.variable() for g in self.seed_generators()]

    def layer_variables(self) -> list:
        return self.variables

    def non_trainable_variables(self) -> list[Variable]:
        trained = {v.id for v in self.trainable_weights}
        return [v for v in self.variables if v.id not in trained]

    def owned_variables(self) -> list:
        return self.weights

    def regularization_losses(self) -> list:
        """layer.losses in Keras's order: the own losses of the layer and the layers it holds (an activity
        regularizer's loss of the last call's output), then their weights' regularizers applied to the weights
        now (recorded, so tapes see them)."""
        return self.own_losses() + self.weight_penalties()

    def own_losses(self) -> list:
        return list(self.activity_losses)

    def weight_penalties(self) -> list:
        return [reg.apply(self.weights_[short]) for short, reg in self.regularizers.items()
                if reg is not None and short in self.weights_]

    def get_weights(self):
        return get_weights(self.weights)

    def set_weights(self, values):
        set_weights(self.weights, values, self.display())

    def attributes(self):
        out = {"name": lambda: self.given or self.auto, "built": lambda: PythonBool(np.array(self.built)),
               "weights": lambda: self.weights, "variables": lambda: self.variables,
               "trainable_weights": lambda: self.trainable_weights,
               "trainable_variables": lambda: self.trainable_weights,
               "non_trainable_weights": lambda: [v for v in self.weights if v not in self.trainable_weights],
               "non_trainable_variables": self.non_trainable_variables,
               "trainable": lambda: PythonBool(np.array(self.trainable)),
               "losses": self.regularization_losses, "input": lambda: self.symbolic_end(0),
               "output": lambda: self.symbolic_end(1)}
        for short in self.weight_names():
            out[short] = lambda s=short: self.weight(s)
        # (kernel_regularizer, bias_constraint: the object given, a program's own as the program made it)
        for kind, table in (("regularizer", getattr(self, "regularizers", {})), ("constraint", self.constraints)):
            for short, held in table.items():
                out[f"{short}_{kind}"] = lambda h=held: h.fn if isinstance(h, penalties.ProgramPenalty) else h
        for generator in self.seed_generators():       # (Keras's attribute of a layer that draws: a Dropout's)
            out["seed_generator"] = generator
        out["supports_masking"] = lambda: PythonBool(np.array(self.supports_masking))
        out["dtype"] = out["variable_dtype"] = lambda: dtype_name(self.variable_dtype)
        out["compute_dtype"] = lambda: dtype_name(self.compute_dtype)
        out["dtype_policy"] = lambda: self.policy or mixed_precision.DTypePolicy(dtype_name(float_dtype()))
        given = getattr(self, "given_arguments", None)
        if given is not None:
            # (layer.epsilon, layer.use_bias: the arguments Keras keeps, as its config writes them)
            for key in attribute_keys(type(self).__name__):
                out[key] = lambda k=key: config_entry(self, k)
        for key in ("activation", "recurrent_activation"):        # Keras's function (keras.activations.get)
            if key in (given or {}):
                out[key] = lambda k=key: activations.get(given[k])
        out.update(self.config())
        return out

    def set_attribute(self, interp, attr, value, node):
        if attr == "trainable":
            self.set_trainable(flag(value))
            return
        if attr == "supports_masking":      # (Keras's setter: its output then keeps its compute_mask's mask)
            self.supports_masking = flag(value)
            return
        super().set_attribute(interp, attr, value, node)

    trainable_made: frozenset = frozenset()     # the ids of the weights made trainable (add_weight)

    def set_trainable(self, value: bool) -> None:
        """Keras's trainable setter: the layer's flag, its weights made trainable and its sublayers' flags."""
        self.trainable = value
        for v in self.weights_.values():
            if v.id in self.trainable_made:
                v.trainable = value
        for layer in self.sublayers():
            layer.set_trainable(value)

    def sublayers(self) -> list:
        """The layers this layer holds (a model's)."""
        return []

    def methods(self):
        return {"get_weights": self.get_weights, "set_weights": self.set_weights, "count_params": self.count_params,
                "build": lambda shape: self.build_for(dims(_first_shape(shape)), self.compute_dtype),
                "get_config": self.get_config,
                "compute_mask": self.program_compute_mask,
                "compute_output_shape": lambda input_shape: shape_tuple(self.output_shape(dims(input_shape))),
                "stateless_call": lambda trainable_variables, non_trainable_variables, *args, **kwargs: stateless_call(
                    self, self.interp, None, trainable_variables, non_trainable_variables, args, kwargs)}

    def get_config(self) -> dict:
        return layer_config(self)

    def program_compute_mask(self, inputs, mask=None):
        """layer.compute_mask(inputs, mask): of Keras tensors, the Keras tensor of its mask (Keras's symbolic one,
        its shape found on probes)."""
        if not any(isinstance(t, KerasTensor) for t in _leaves([inputs, mask])):
            return self.compute_mask(inputs, mask)
        probes = _bind({"inputs": inputs, "mask": mask}, KerasTensor.probe)
        found = self.compute_mask(probes["inputs"], probes["mask"])

        def symbolic(m):
            return None if m is None else KerasTensor((None, *tensor(m).shape[1:]), np.dtype(np.bool_))
        return type(found)(symbolic(m) for m in found) if isinstance(found, list) else symbolic(found)   # (one each)

    def count_params(self):
        if not self.built:
            raise TdfValueError(f"You tried to call `count_params` on layer '{self.display()}', but the layer isn't "
                                "built. You can build it manually via: `layer.build(input_shape)`.")
        return Tensor(np.array(sum(math.prod(v.shape) for v in self.weights), dtype=np.int64), weak=True)

    def weight(self, short):
        if short not in self.weights_:
            if not self.built:
                raise TdfValueError(f"layer {self.display()} has no {short} yet: it is built by its first call")
            raise TdfValueError(f"layer {self.display()} has no {short}")
        return self.weights_[short]

    def weight_names(self) -> tuple:
        return ()

    def config(self) -> dict:
        return {}

    def config_values(self) -> dict:
        """The config's values Keras writes from what the layer made of its arguments (not as given)."""
        return {}

    # ---------------------------------------------------------------- building and calling
    def build_for(self, shape, dtype) -> None:
        if not self.built:
            self.build(tuple(shape), dtype if self.policy is None else self.policy.variable_dtype)
            self.built = True
            self.build_shape = tuple(shape)          # (its config's build_config)

    def build(self, shape, dtype) -> None:
        pass

    def output_shape(self, shape) -> tuple:
        return shape

    def symbolic_shape(self, x: KerasTensor) -> tuple:
        """The shape of its output for the Keras tensor ``x``."""
        return self.output_shape(x.shape)

    def output_dtype(self, dtype):
        """The dtype of its symbolic output for an input of ``dtype``."""
        kept = self.keeps_dtype and np.dtype(dtype).kind not in "fc"
        return dtype if kept else self.compute_dtype

    def replay_kind(self, args, kwargs, tracked):
        # (``training`` is read into Python, and so is a Keras mask an input carries)
        return PURE if self.replayable and self.built and self.activity_regularizer is None \
            and not any(map(tracked, kwargs.values())) \
            and not any(eager_mask(self.interp, a) is not None for a in _leaves(args)) else None

    def call(self, interp, args, kwargs, node):
        if self.run is not None:
            return self.call_arguments(interp, args, kwargs)
        kwargs = dict(kwargs)
        x = args[0] if args else kwargs.pop("inputs", None)
        training = call_training(interp, getattr(interp, "keras_call_depth", 0), kwargs.pop("training", None))
        given_mask = kwargs.pop("mask", None) if self.takes_mask else None     # (Keras's call(x, mask=...))
        if (not args and x is None) or len(args) > 1 or kwargs:
            raise TdfTypeError("a layer is called with one input: layer(x) or layer(x, training=True)")
        if isinstance(x, (list, tuple)) and x and all(isinstance(t, KerasTensor) for t in x):
            return self.listed_call(interp, list(x))
        if isinstance(x, KerasTensor):
            self.build_for(x.shape, self.compute_dtype)
            out = KerasTensor(self.symbolic_shape(x), self.output_dtype(x.dtype), self, [x])
            for _ in range(self.mask_ops):      # (Keras computes the mask after the output, with keras.ops)
                KerasTensor.named(interp)
            self.symbolic = (x, out)
            return out
        out, mask = self.masked(interp, x, training, eager_mask(interp, x) if given_mask is None else tensor(given_mask))
        # (an output that has a mask keeps it, as Keras's _set_mask_metadata: a layer that gives its input back)
        return out if eager_mask(interp, out) is not None else keep_mask(interp, out, mask)

    def listed_call(self, interp, xs: list) -> KerasTensor:
        """The layer called on a list of Keras tensors: a layer of one input refuses it."""
        raise TdfTypeError(f"{type(self).__name__} is called with one input, got a list of {len(xs)} Keras tensors")

    # A layer whose call takes several tensors or options besides ``training`` (Keras's call(query, value,
    # key=None, ..., training=None)) defines ``run(interp, <its call's parameters>)``: its calls bind to it
    run = None

    def call_arguments(self, interp, args, kwargs):
        """A call of a layer with ``run``. Called on Keras tensors (anywhere in its arguments, a list's items
        too) its output's shapes are found as subclassing.layer_call finds a program layer's, by running it on
        ones (a batch of one); the Keras tensors it gives keep the arguments, which the model's apply binds to
        values (``run_bound``)."""
        try:
            bound = inspect.signature(self.run).bind(interp, *args, **kwargs)
        except TypeError as e:
            raise TdfTypeError(f"{type(self).__name__}.call(): {e}") from None
        arguments = dict(list(bound.arguments.items())[1:])
        if "training" in inspect.signature(self.run).parameters:
            training = call_training(interp, getattr(interp, "keras_call_depth", 0), arguments.get("training"))
            if training is not None:
                arguments["training"] = training
        symbolic = [t for t in _leaves(arguments.values()) if isinstance(t, KerasTensor)]
        if not symbolic:
            def mask_of(x):
                return eager_mask(interp, x)
            given = self.with_masks(arguments, Tensor, mask_of)
            mask = self.arguments_mask(arguments, lambda x: x, mask_of)
            for name in self.clears_masks:
                forget_mask(interp, arguments.get(name))
            out = self.run_regularized(interp, given)
            first = out[0] if isinstance(out, tuple) else out
            if eager_mask(interp, first) is None:       # (an output with a mask keeps it, as Keras's)
                keep_mask(interp, first, mask)
            return out
        probe = _bind(arguments, lambda t: Tensor(np.ones([1 if d is None else d for d in t.shape], t.dtype)))
        out = self.run(interp, **probe)
        many = isinstance(out, tuple)
        outs = tuple(KerasTensor((symbolic[0].shape[0], *o.shape[1:]), self.compute_dtype, self, symbolic)
                     for o in (out if many else (out,)))
        for i, o in enumerate(outs):
            o.arguments = arguments
            if many:
                o.index, o.siblings = i, outs
        self.symbolic = (symbolic[0] if len(symbolic) == 1 else symbolic, outs if many else outs[0])
        return PythonTuple(outs) if many else outs[0]      # (a tuple as the program holds one)

    def with_masks(self, arguments: dict, kind: type, mask_of) -> dict:
        """Keras's Layer.__call__ (its step 6): the mask arguments a call was not given, from its tensors' Keras
        masks (``mask_of``): ``mask`` of its one tensor argument (a list's, one each), or each ``NAME_mask`` of
        several tensor arguments."""
        def masks(value):
            return [masks(v) for v in value] if isinstance(value, (list, tuple)) else mask_of(value)

        tensors = {k: v for k, v in arguments.items() if any(_is_tensor(t, kind) for t in _leaves([v]))}
        wanted = {"mask": next(iter(tensors.values()))} if len(tensors) == 1 else \
            {f"{k}_mask": v for k, v in tensors.items()}
        parameters = inspect.signature(self.run).parameters
        found = {k: masks(v) for k, v in wanted.items() if k in parameters and arguments.get(k) is None}
        found = {k: m for k, m in found.items() if any(x is not None for x in _leaves([m]))}
        return {**arguments, **found} if found else arguments

    # the arguments whose tensors' Keras masks the call deletes (MultiHeadAttention's: it reads them first)
    clears_masks: tuple = ()

    def arguments_mask(self, arguments: dict, value_of, mask_of):
        """The mask of the (first) output of a call with ``run``, as Keras's Layer.__call__ sets it: where the layer
        supports masking, its compute_mask of the first argument and the call's ``mask`` (given, or found from its
        tensors' masks), else the first argument's own mask."""
        kind = KerasTensor if any(isinstance(t, KerasTensor) for t in _leaves(arguments.values())) else Tensor

        def masks(value):
            return [masks(v) for v in value] if isinstance(value, (list, tuple)) else \
                mask_of(value) if isinstance(value, kind) else None

        first = next(iter(arguments.values()))
        previous = self.with_masks(arguments, kind, mask_of).get("mask")
        previous = masks(first) if previous is None else previous
        if all(m is None for m in _leaves([previous])):
            return None
        return self.output_mask(_bind({"x": first}, value_of)["x"], previous)

    def run_bound(self, interp, arguments, values, training, masks):
        """The layer run on a model's values for the Keras tensors among its ``arguments`` (its call's), the
        model's ``training`` passed on where the call left it None (as Keras's Layer.__call__ does)."""
        given = _bind(self.with_masks(arguments, KerasTensor, lambda t: masks.get(id(t))), lambda t: values[id(t)])
        if "training" in given and given["training"] is None:
            given["training"] = training
        return self.run_regularized(interp, given)

    def run_regularized(self, interp, arguments):
        """``run``, then its activity regularizer's loss of each of its outputs (Keras's Layer.__call__)."""
        out = self.run(interp, **arguments)
        if self.activity_regularizer is not None:
            self.activity_losses = [penalties.activity_loss(self.activity_regularizer, o)
                                    for o in (out if isinstance(out, tuple) else (out,))]
        return out

    @property
    def symbolic(self):
        """The Keras tensors its first call in a functional graph took and gave (None: it has had none)."""
        return self.__dict__.get("first_symbolic")

    @symbolic.setter
    def symbolic(self, ends):
        # (Keras's layer.input and layer.output: its first call's, however often a graph calls it again)
        self.__dict__.setdefault("first_symbolic", ends)

    def symbolic_end(self, which: int):
        """layer.input / layer.output: the Keras tensors of its first call in a functional graph."""
        ends = self.symbolic
        if ends is None:
            raise TdfValueError(f"The layer {self.display()} has never been called and thus has no defined "
                                f"{('input', 'output')[which]}.")
        return ends[which]

    def apply(self, interp, x, training=None, **given):
        """The layer's output for x (``given``: a mask, an initial state, for a layer that takes them)."""
        compute = self.compute_dtype
        x = tensor(x, floats=compute)
        if x.__class__ is NumpyArray:       # (Keras's __call__ converts it: a layer that passes it on gives a tensor)
            x = Tensor(x.value)
        self.check_input(x)
        self.build_for(x.shape, compute)
        # Keras's layers cast a float input to their compute dtype (floatx), its ops an int one to their weights'
        if x.dtype != compute and (x.dtype.kind == "f" or self.weights_):
            x = ops.cast(x, compute)
        if self.policy is not None and self.policy.mixed:
            out = self.autocast_forward(interp, x, bool(training), given)
        else:
            out = self.forward(interp, x, bool(training), **given)
        if self.activity_regularizer is not None:
            self.activity_losses = [penalties.activity_loss(self.activity_regularizer, out)]
        return out

    def autocast_forward(self, interp, x, training, given):
        """forward with the layer's float variables read as its compute dtype (Keras's AutocastScope: a cast
        of each, through which their gradients flow back to the variables)."""
        kept = self.weights_
        self.weights_ = {k: ops.cast(v, x.dtype) if v.dtype.kind == "f" else v for k, v in kept.items()}
        try:
            return self.forward(interp, x, training, **given)
        finally:
            self.weights_ = kept

    def check_input(self, x) -> None:
        pass

    def forward(self, interp, x, training):
        return x

    # ---------------------------------------------------------------- masks (Keras's _keras_mask, passed on by models)
    supports_masking = False        # its output keeps its input's mask (Keras's layers that set supports_masking)
    mask_ops = 0                    # the keras.ops calls of its compute_mask on a Keras tensor (each makes one)
    takes_mask = False              # its forward reads the mask (Keras's call(..., mask=None))

    def compute_mask(self, x, mask):
        """Keras's Layer.compute_mask: the input's mask (a layer that makes or drops one writes its own)."""
        return mask

    def output_mask(self, x, mask):
        """Its output's mask, as Keras's __call__ sets it: its compute_mask's where it supports masking."""
        return self.compute_mask(x, mask) if self.supports_masking else None

    def masked(self, interp, x, training, mask):
        """Apply the layer in a model: its output and the mask the next layer sees."""
        if isinstance(mask, list) and all(m is None for m in mask):       # (a list of inputs none of which has one)
            mask = None
        out = self.apply(interp, x, training, mask=mask) if self.takes_mask and mask is not None else \
            self.apply(interp, x, training)
        return out, self.output_mask(x, mask)


def _first_shape(shape):
    """The shape a layer builds for: of a layer of several inputs, given a list of their shapes (Attention's
    ``build([query_shape, value_shape])``), the first's."""
    if isinstance(shape, Tensor) and shape.ndim == 2:       # (CPython's: a list of tuples of ints, one literal)
        return [int(d) for d in shape.value[0]]
    return shape[0] if isinstance(shape, list) and shape and not isinstance(shape[0], (int, Tensor)) and \
        shape[0] is not None else shape



# How many eager outputs' masks a run keeps (Keras's _keras_mask of a tensor): the next layer reads its input's
_EAGER_MASKS = 256


def eager_mask(interp, x):
    """The mask Keras attached to ``x``, a masking layer's output called on data (``rnn(embedding(ids))``): also
    what a program reads as ``x._keras_mask``."""
    return getattr(interp, "keras_masks", {}).get(getattr(x, "id", None))


def forget_mask(interp, x) -> None:
    """``x``'s Keras mask deleted (Keras's set_keras_mask(x, None))."""
    getattr(interp, "keras_masks", {}).pop(getattr(x, "id", None), None)


def keep_mask(interp, out, mask):
    """``out``, its mask kept for the next layer called on it (the run's last few)."""
    if mask is not None and isinstance(out, Tensor):
        masks = getattr(interp, "keras_masks", None)
        if masks is None:
            masks = interp.keras_masks = {}
        masks[out.id] = mask
        if len(masks) > _EAGER_MASKS:
            del masks[next(iter(masks))]
    return out


def _leaves(values):
    for v in values:
        if isinstance(v, (list, tuple)):
            yield from _leaves(v)
        elif isinstance(v, dict):
            yield from _leaves(v.values())
        else:
            yield v


def _is_tensor(value, kind: type) -> bool:
    """Whether a call's argument is a tensor as Keras's CallSpec counts them (a Python bool or number is not)."""
    return isinstance(value, kind) and not isinstance(value, PythonBool) and not (
        isinstance(value, Tensor) and value.weak and value.ndim == 0)


def _bind(arguments: dict, value_of) -> dict:
    """The arguments with each Keras tensor (a list's or a dict's items too) replaced by ``value_of`` it."""
    def bound(v):
        if isinstance(v, (list, tuple)):
            return (type(v) if isinstance(v, list) else tuple)(bound(x) for x in v)     # (a program's tuple too)
        if isinstance(v, dict):
            return {k: bound(x) for k, x in v.items()}
        return value_of(v) if isinstance(v, KerasTensor) else v
    return {k: bound(v) for k, v in arguments.items()}


class Dense(Layer):
    computes_mixed = True
    replayable = True
    supports_masking = True
    prefix = "dense"

    def __init__(self, interp, units, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, seed=None, **kw):
        super().__init__(interp, seed=seed, **kw)
        self.regularizers = {"kernel": penalties.regularizer(kernel_regularizer, interp),
                             "bias": penalties.regularizer(bias_regularizer, interp)}
        self.constraints = {"kernel": penalties.constraint(kernel_constraint, interp),
                            "bias": penalties.constraint(bias_constraint, interp)}
        self.units = integer(units, "units")
        if self.units <= 0:
            raise TdfValueError("Received an invalid value for `units`, expected a positive integer. Received: "
                                f"units={self.units}")
        self.activation = activation_fn(activation, interp)
        self.use_bias = flag(use_bias)
        self.kernel_init = initializers.get(kernel_initializer, interp=interp)
        self.bias_init = initializers.get(bias_initializer, interp=interp)

    def weight_names(self):
        return ("kernel", "bias")

    @property
    def kernel(self):
        return self.weights_.get("kernel")

    @property
    def bias(self):
        return self.weights_.get("bias")

    def config(self):
        return {"units": lambda: Tensor(np.array(self.units, np.int64), weak=True)}

    def check_input(self, x):
        if x.ndim < 1:
            raise ShapeError("a Dense layer needs inputs with at least one dimension, got a scalar")
        if self.built and x.shape[-1] != self.weights_["kernel"].shape[0]:      # (Keras's InputSpec check)
            raise TdfValueError(f"Input 0 with name 'None' of layer '{keras_name(self)}' is incompatible with the layer: "
                                f"expected axis -1 of input shape to have value {self.weights_['kernel'].shape[0]}, "
                                f"but received input with shape {tuple(x.shape)}")

    def build(self, shape, dtype):
        if shape[-1] is None:
            raise ShapeError("a Dense layer needs a known last input dimension")
        self.add_weight("kernel", (shape[-1], self.units), self.kernel_init, dtype)
        if self.use_bias:
            self.add_weight("bias", (self.units,), self.bias_init, dtype)

    def output_shape(self, shape):
        return (*shape[:-1], self.units)

    def forward(self, interp, x, training):
        y = ops.matmul(x, self.weights_["kernel"])
        if self.use_bias:
            y = add(y, self.weights_["bias"])
        return y if self.activation is None else self.activation(y)


class Activation(Layer):
    built_at_init = True
    computes_mixed = True
    replayable = True
    supports_masking = True
    prefix = "activation"

    def __init__(self, interp, activation, **kw):
        super().__init__(interp, **kw)
        self.activation = activation_fn(activation, interp)

    def forward(self, interp, x, training):
        return x if self.activation is None else self.activation(x)


class Flatten(Layer):
    computes_mixed = True
    replayable = True
    keeps_dtype = True
    prefix = "flatten"

    def output_shape(self, shape):
        rest = shape[1:]
        return (shape[0], None if None in rest else int(np.prod(rest)))

    def forward(self, interp, x, training):
        if x.ndim == 0:
            raise ShapeError("Flatten needs inputs with a batch dimension, got a scalar")
        return ops.reshape(x, (x.shape[0], int(np.prod(x.shape[1:]))))


def dropout_mask(x, rng, shape, rate) -> Tensor:
    """x * (1 / (1 - rate)) * keep, keep 1 where a uniform draw (of ``shape``, broadcast to x's) is >= rate, as
    tf.nn.dropout: the draws by ``kernels.drawn``, the rest by kernels."""
    keep = ops.cast(ops.greater_equal(Tensor(kernels.drawn(uniform_values, rng, 0.0, 1.0, shape)), rate), x.dtype)
    return ops.mul(ops.mul(x, Tensor(np.asarray(1.0 / (1.0 - rate), x.dtype))), keep)


def seed_generator(seed):
    """Keras's SeedGenerator of a layer that draws, made (its seed drawn where none is given) with the layer."""
    return initializers.SeedGenerator(seed_value(seed) if seed is not None else None)


def keras_normal_values(generator, shape, mean, stddev, dtype) -> np.ndarray:
    """keras.random.normal of a layer's generator: TensorFlow's stateless_normal of its next seed (a module-level
    draw: a loop plan makes it again, kernels.drawn)."""
    return tf_random.stateless_normal(generator.next(), shape, dtype, mean, stddev)


def keras_dropout_keep(generator, shape, rate, dtype) -> np.ndarray:
    """Keras's dropout mask of one training call: tf.nn.experimental.stateless_dropout's uniform draw of the
    generator's next seed, kept where >= rate (a module-level draw: a loop plan makes it again, kernels.drawn)."""
    return tf_random.stateless_uniform(generator.next(), shape, dtype) >= dtype.type(rate)


def keras_dropout(x, generator, shape, rate) -> Tensor:
    """Keras's Dropout in training on the TensorFlow backend: x * (1 / (1 - rate)) where the mask keeps, 0
    elsewhere (a select: TensorFlow's stateless_dropout), bit for bit."""
    keep = Tensor(kernels.drawn(keras_dropout_keep, generator, shape, rate, np.dtype(x.dtype)))
    if keep.shape != x.shape:
        keep = ops.broadcast_to(keep, x.shape)
    scaled = ops.mul(x, Tensor(np.asarray(1.0 / (1.0 - rate), x.dtype)))
    return ops.where(keep, scaled, Tensor(np.zeros((), x.dtype)))


class Dropout(Layer):
    built_at_init = True
    computes_mixed = True
    replayable = True           # (its draws are a plan's: kernels.drawn)
    supports_masking = True
    prefix = "dropout"

    def __init__(self, interp, rate, noise_shape=None, seed=None, **kw):
        super().__init__(interp, seed=seed, **kw)
        self.rate = num(rate, "rate")
        if not 0.0 <= self.rate <= 1.0:
            raise TdfValueError(f"Invalid value received for argument `rate`. Expected a float value between 0 "
                                f"and 1. Received: rate={self.rate}")
        self.noise_shape = dims(noise_shape, "noise_shape")
        self.generator = seed_generator(seed) if self.rate > 0 else None     # (Keras's: where the rate is positive)

    def config(self):
        return {"rate": lambda: python_number(float(self.rate))}      # (Keras keeps the Python float)

    def forward(self, interp, x, training):
        if not training or self.rate == 0.0:
            return x
        if self.rate == 1.0:
            return ops.mul(x, scalar(0.0, x.dtype))
        shape = x.shape if self.noise_shape is None else tuple(
            x.shape[i] if d is None else d for i, d in enumerate(self.noise_shape))
        return keras_dropout(x, self.generator, shape, self.rate)


class Embedding(Layer):
    prefix = "embedding"

    def __init__(self, interp, input_dim, output_dim, embeddings_initializer="uniform", embeddings_regularizer=None,
                 embeddings_constraint=None, mask_zero=False, **kw):
        super().__init__(interp, **kw)
        self.regularizers = {"embeddings": penalties.regularizer(embeddings_regularizer, interp)}
        self.constraints = {"embeddings": penalties.constraint(embeddings_constraint, interp)}
        self.input_dim, self.output_dim = integer(input_dim, "input_dim"), integer(output_dim, "output_dim")
        self.init = initializers.get(embeddings_initializer, interp=interp)
        self.mask_zero = flag(mask_zero)
        self.supports_masking = self.mask_zero
        self.mask_ops = int(self.mask_zero)         # (ops.not_equal)

    def compute_mask(self, x, mask):
        """With ``mask_zero``: False where an id is 0 (padding), for the layers after it."""
        return ops.not_equal(tensor(x), 0) if self.mask_zero else None

    def weight_names(self):
        return ("embeddings",)

    def config(self):
        return {"input_dim": lambda: Tensor(np.array(self.input_dim, np.int64), weak=True),
                "output_dim": lambda: Tensor(np.array(self.output_dim, np.int64), weak=True),
                "mask_zero": lambda: PythonBool(np.array(self.mask_zero))}

    def build(self, shape, dtype):
        self.add_weight("embeddings", (self.input_dim, self.output_dim), self.init, self.compute_dtype)

    def output_shape(self, shape):
        return (*shape, self.output_dim)

    def apply(self, interp, x, training=None):
        x = tensor(x)
        self.build_for(x.shape, None)
        ids = np.asarray(x.value)
        if ids.dtype.kind == "f":
            ids = ids.astype(np.int32)
        if ids.size and (ids.min() < 0 or ids.max() >= self.input_dim):
            bad = int(ids[(ids < 0) | (ids >= self.input_dim)].flat[0])
            raise TdfValueError(f"Embedding: index {bad} is outside the valid range [0, {self.input_dim})")
        out = ops.gather(self.weights_["embeddings"], Tensor(ids.astype(np.int64)))   # (its gradient: IndexedSlices)
        if self.activity_regularizer is not None:
            self.activity_losses = [penalties.activity_loss(self.activity_regularizer, out)]
        return out


class Masking(Layer):
    built_at_init = True
    """Zeroes the timesteps whose features all equal ``mask_value``, and masks them for the layers after it (the
    mask is read from the input's values: no loop plan replays it)."""
    supports_masking = True
    mask_ops = 2                    # (ops.not_equal, then ops.any)
    prefix = "masking"

    def __init__(self, interp, mask_value=0.0, **kw):
        super().__init__(interp, **kw)
        self.mask_value = num(mask_value, "mask_value")

    def config(self):
        return {"mask_value": lambda: python_number(float(self.mask_value))}

    def kept(self, x) -> np.ndarray:
        return np.any(np.asarray(tensor(x).value) != self.mask_value, axis=-1)

    def compute_mask(self, x, mask):
        return Tensor(self.kept(x))

    def forward(self, interp, x, training):
        return ops.mul(x, Tensor(self.kept(x)[..., None].astype(x.dtype)))


class InputLayer(Layer):
    """The layer of an Input: a functional model's first layers, one per Input (Keras lists them in
    ``model.layers``); one a program makes is an Input a Sequential model takes (models.program_input_layer)."""

    computes_mixed = True
    prefix = "input_layer"
    replayable = True

    def __init__(self, interp, name=None, optional=False):
        super().__init__(interp, name=name)
        self.built = True
        self.optional = optional

    def attributes(self):
        tensor = self.symbolic[1]
        return {**super().attributes(), "batch_shape": lambda: shape_tuple(tensor.shape),
                "dtype": lambda: dtype_name(tensor.dtype), "sparse": lambda: PythonBool(np.array(False)),
                "ragged": lambda: PythonBool(np.array(False)), "optional": lambda: PythonBool(np.array(self.optional))}

    def get_config(self) -> dict:
        return input_config(self.symbolic[1], keras_name(self), self.optional)


def input_config(tensor: KerasTensor, name: str, optional: bool = False) -> dict:
    """Keras 3.15's config of the InputLayer of ``tensor``."""
    return {"batch_shape": shape_tuple(tensor.shape), "dtype": dtype_name(tensor.dtype), "sparse": False,
            "ragged": False, "name": name, "optional": optional}


def shape_tuple(shape) -> PythonTuple:
    """A shape as Keras gives one to a program: a tuple of Python ints, None for an unknown dimension."""
    return PythonTuple(None if d is None else Tensor(np.array(d, dtype=np.int64), weak=True) for d in shape)


LAYERS = [Dense, Activation, Flatten, Dropout, Embedding, Masking]
