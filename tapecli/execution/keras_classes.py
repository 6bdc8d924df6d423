"""Keras's ``Layer`` and ``Model`` as Python classes a TensorFlow program that CPython runs derives from
(execution/tensorflow.py), for the custom training loops of the GradientTape guides: calling a layer builds it
once (its ``build(input_shape)``, the first input's shape as a tuple) and calls its ``call`` (``training=`` passed
where ``call`` takes it); ``add_weight`` makes a Keras weight with the library's initializers; ``add_loss``
collects losses, cleared at each outermost call. Weights are collected as Keras 3 collects them: a layer's own
(trainable ones first, in the order made), then those of the layers it holds in the order they were assigned
(the library's Keras layers too), each once; a ``tf.Variable`` assigned to an attribute is collected with them,
as on the interpreter (docs/tf-surface.md, "Known differences"). A Model's ``compile``/``fit`` are the library's
Trainer's (keras_fitting.py); a functional subclass (``super().__init__(inputs, outputs)``) holds the library's
functional model of its graph (its call, weights and layers).

``tf.keras.Model(inputs, outputs)`` itself still makes the library's functional model; a program's layer called
on its Keras tensors is a node of it (GraphLayer). Masks pass as Keras passes them: a call that takes ``mask=`` gets
its input's, and a layer that supports masking gives its output one."""
from __future__ import annotations

import inspect
import math

import numpy as np

from tapecli.execution.keras_fitting import Fitting, fitted
from tapecli.execution.tf_values import VIEWS, KerasBase, LibraryObject, ProgramCallable, as_tensorflow, \
    library_value, program_side, run_view, to_library, to_program
from tapecli.interpreter.classes import KERAS, KERAS_MODEL, LAYER, FrameworkBase, is_instance, module_name
from tapecli.library.keras import mixed_precision, penalties
from tapecli.library.keras.common import call_argument, call_training
from tapecli.library.keras.initializers import SeedGenerator
from tapecli.library.keras.input_spec import check_inputs
from tapecli.library.keras.layers import Layer as LibraryLayer, eager_mask, keep_mask
from tapecli.library.keras.keras_tensor import KerasTensor, probing
from tapecli.library.keras.stateless import stateless_values
from tapecli.runtime.context import current
from tapecli.runtime.values import Tensor, Variable


class KerasClass(type):
    """``isinstance(v, keras.layers.Layer)`` of a program's layer, and of the library's layers and models (of the
    library's losses, metrics... for the Keras base class ``base``: keras_bases.py)."""

    def __instancecheck__(cls, value):
        if type.__instancecheck__(cls, value):
            return True
        # (the library's objects are instances of Keras's base classes, never of a program's class derived from one)
        return "base" in vars(cls) and not _program_layer(value) and bool(
            is_instance(library_value(value), FrameworkBase(cls.base, KERAS)))


class Layer(KerasBase, metaclass=KerasClass):
    """``keras.layers.Layer`` (the library takes an instance as its GraphLayer: a Sequential's layer)."""

    base = LAYER
    keras_bases = (LAYER,)

    def __new__(cls, *args, **kwargs):
        made = super().__new__(cls)
        made._auto_config = _auto_config(cls, args, kwargs)
        build = made.build

        def build_wrapper(*args, **kwargs):     # (Keras's: a layer whose build the program calls is built by it)
            build(*args, **kwargs)
            made.built = True
            shape = args[0] if args else kwargs.get("input_shape")      # (its build_config, as Keras records it)
            made._build_shape = None if shape is None else _recorded_shape(shape)
        made.build = build_wrapper
        return made

    def __init__(self, *, activity_regularizer=None, trainable=True, dtype=None, autocast=True, name=None, **kwargs):
        if getattr(self, "_functional", None) is None:
            mixed_precision.refuse_program_class(to_library(dtype), type(self).__name__)
        self.built = False
        # (Keras's input_shape= of a Sequential's first layer, among its kwargs as Keras 3's: the model's input)
        shape = kwargs.get("input_shape")
        self._input_shape_arg = None if shape is None else (None, *(None if d is None else int(d) for d in shape))
        self.trainable = trainable
        self._name = name if name is not None else _automatic_name(type(self).__name__)
        self._own_weights: list = []
        self._regularized: list = []
        self._added_losses: list = []

    @property
    def name(self) -> str:
        return self._name

    @property
    def input(self):
        """Keras's Layer.input: the Keras tensor the layer was last called on in a graph."""
        return to_program(graph_layer(self).symbolic_end(0))

    @property
    def output(self):
        return to_program(graph_layer(self).symbolic_end(1))

    def count_params(self) -> int:
        """Keras's Layer.count_params: the weights' sizes summed, once the layer is built."""
        if not self.built:
            raise ValueError(f"You tried to call `count_params` on layer '{self.name}', but the layer isn't built. "
                             "You can build it manually via: `layer.build(input_shape)`.")
        return sum(math.prod(v.shape) for v in self.weights)

    @property
    def trainable(self) -> bool:
        return self.__dict__.get("_trainable", True)

    @trainable.setter
    def trainable(self, value) -> None:
        """Keras's setter: the weights the layer made trainable and the layers it holds follow it."""
        self._trainable = bool(value)
        made = self.__dict__.get("_trainable_made", set())
        for v in self.__dict__.get("_own_weights", []):
            if id(v) in made:
                v.trainable = self._trainable
        for held in _sublayers(self):
            if _program_layer(held):
                held.trainable = self._trainable
            else:
                _library_layer(held).set_trainable(self._trainable)

    # ---- calling
    def __call__(self, *args, **kwargs):
        if "_own_weights" not in vars(self):
            raise TypeError(f"{type(self).__name__}.__init__ must call super().__init__() before the layer is used")
        run = current().eager.run
        depth = getattr(run, "keras_call_depth", 0)
        if depth == 0:              # an outermost call: the losses of the last one are dropped, as in Keras
            for layer in _program_layers(self):
                layer._added_losses = []
        from tapecli.library.keras.common import name_scope
        spec = self.__dict__.get("input_spec")
        if spec and args:           # (Keras checks its first argument before building the layer)
            as_tensorflow(check_inputs)(to_library(spec), to_library(args[0]), self.name)
        with name_scope(run, self.name):
            if not self.built:
                if _symbolic(args) and type(self).build is Layer.build and _sublayers(self):
                    KerasTensor.named(run)      # (Keras builds it by running its call on a Keras tensor: one more)
                self.build(_shape(args[0]) if args else None)
                self.built = True
            training = call_training(run, depth, to_library(kwargs.get("training")))
            if not _takes(self.call, "training"):
                kwargs.pop("training", None)
            elif training is not None and kwargs.get("training") is None:   # (its call context's, as Keras's)
                kwargs["training"] = training
            run.keras_call_depth = depth + 1
            try:
                if _symbolic(args):      # (a functional model's graph: its Keras tensor)
                    made = _symbolic_call(self, self.call, args, kwargs)
                    for layer in _program_layers(self):
                        layer._added_losses = []
                    return made
                # Keras passes the input's mask (its _keras_mask) to a call that takes mask=, and keeps the output's
                previous = kwargs.get("mask")
                if previous is None and args:
                    previous = eager_mask(run, args[0])
                    if previous is not None and _takes(self.call, "mask"):
                        kwargs["mask"] = previous
                out = self.call(*call_arguments(args), **call_arguments(kwargs))
                if not args or eager_mask(run, out) is not None:      # (an output with a mask keeps it)
                    return out
                return keep_mask(run, out, output_mask(self, args[0], previous))
            finally:
                run.keras_call_depth = depth

    def build(self, input_shape):
        self.built = True

    def compute_mask(self, inputs, mask=None):
        return mask

    # ---- configs (Keras 3's Operation and Layer)
    def get_config(self) -> dict:
        """The layer's name, then (where the program's class does not write its own get_config) the arguments
        it was made with, then ``trainable`` and ``dtype``, as Keras 3 gives them."""
        config = {"name": self.name}
        if type(self).get_config is Layer.get_config:
            if self._auto_config is None:
                raise NotImplementedError(f"Layer {type(self).__name__} was created with arguments Keras cannot "
                                          "put in a config (other than str, int, float, bool and None): override "
                                          "get_config() and from_config() to make it serializable")
            config.update(self._auto_config)
            parameters = inspect.signature(self.__init__).parameters
            if "name" not in parameters and not ("kwargs" in parameters and parameters["kwargs"].kind
                                                 is inspect.Parameter.VAR_KEYWORD):
                config.pop("name", None)        # (the constructor cannot take it back)
        return {**config, "trainable": self.trainable, "dtype": dict(FLOAT32_POLICY)}

    @classmethod
    def from_config(cls, config: dict):
        return cls(**config)

    def call(self, *args, **kwargs):
        raise NotImplementedError(f"Layer {type(self).__name__} does not have a `call()` method implemented.")

    # ---- weights
    def add_weight(self, shape=None, initializer="glorot_uniform", dtype=None, trainable=True, name=None,
                   regularizer=None, constraint=None, **options):
        weight = made_weight(current().eager.run, self, shape, initializer, dtype, trainable, name)
        self._own_weights.append(weight)
        if weight.trainable:            # (it follows the layer's trainable)
            self.__dict__.setdefault("_trainable_made", set()).add(id(weight))
        if regularizer is not None:
            self._regularized.append((weight, regularizer))
        penalties.hold_constraint(weight, to_library(constraint))     # (applied after each optimizer step)
        return weight

    @property
    def weights(self) -> list:
        return _weights(self)

    @property
    def variables(self) -> list:
        return _weights(self, variables=True)

    @property
    def trainable_weights(self) -> list:
        return [v for v in _weights(self) if v.trainable] if self.trainable else []

    trainable_variables = trainable_weights

    @property
    def non_trainable_weights(self) -> list:
        trainable = {id(v) for v in self.trainable_weights}
        return [v for v in _weights(self) if id(v) not in trainable]

    @property
    def non_trainable_variables(self) -> list:
        trainable = {id(v) for v in self.trainable_weights}
        return [v for v in self.variables if id(v) not in trainable]

    def stateless_call(self, trainable_variables, non_trainable_variables, *args, return_losses=False, **kwargs):
        """Keras's: ``call`` with the values given standing in for the layer's variables, and the new values of its
        non-trainable ones (library/keras/stateless.py)."""
        eager = current().eager

        def call():
            with program_side(eager):
                return self.call(*args, **kwargs), (self.losses if return_losses else None)
        (outputs, losses), new = _stateless_values(type(self).__name__, self.built, self.trainable_variables,
                                                   self.non_trainable_variables, trainable_variables,
                                                   non_trainable_variables, call)
        return (outputs, new, losses) if return_losses else (outputs, new)

    def get_weights(self) -> list:
        return [np.array(v.read().value) for v in _weights(self)]

    def set_weights(self, values) -> None:
        weights = _weights(self)
        if len(values) != len(weights):
            raise ValueError(f"You called `set_weights(weights)` on layer '{self.name}' with a weight list of length "
                             f"{len(values)}, but the layer was expecting {len(weights)} weights.")
        for v, value in zip(weights, values):
            v.assign(np.asarray(value, dtype=v.dtype).reshape(v.shape))

    # ---- losses and layers
    def add_loss(self, loss) -> None:
        self._added_losses.append(loss)

    @property
    def losses(self) -> list:
        return added_losses(self) + weight_penalties(self)

    @property
    def layers(self) -> list:
        return _sublayers(self)


class Model(Fitting, Layer):
    """``keras.Model`` as a base class (its training API: keras_fitting.py); ``keras.Model(inputs, outputs)`` the
    library's functional model."""

    base = KERAS_MODEL
    keras_bases = (LAYER, KERAS_MODEL)

    def __new__(cls, *args, **kwargs):
        if cls is Model:            # (not a subclass: the functional API, the library's model)
            return current().eager.functional_model(*args, **kwargs)
        return super().__new__(cls)         # (Keras's Model keeps no arguments for its config: the defaults)

    @classmethod
    def from_config(cls, config: dict, custom_objects=None):
        """keras.Model.from_config of a functional model's config: the library's (models.functional_from_config);
        a program's subclass, Keras's automatic one."""
        if cls is Model:
            from tapecli.library.keras.models import functional_from_config
            run = current().eager.run
            return to_program(as_tensorflow(lambda: functional_from_config(run, to_library(config),
                                                                           to_library(custom_objects)))())
        return super().from_config(config)

    def __init__(self, *args, **kwargs):
        """A functional subclass (``super().__init__(inputs, outputs)``, or the class called with them) holds the
        library's functional model of its graph: its call, weights and layers are that model's, as Keras's
        Functional is the subclass's base."""
        graph = {k: kwargs.pop(k) for k in ("inputs", "outputs") if k in kwargs}
        if args or graph:
            self._functional = current().eager.functional_model(*args, **graph, name=kwargs.get("name"))
        super().__init__(**kwargs)

    def call(self, *args, **kwargs):
        functional = vars(self).get("_functional")
        if functional is None:
            return super().call(*args, **kwargs)
        return functional(*args, **kwargs)

    @property
    def layers(self) -> list:
        functional = vars(self).get("_functional")
        return _sublayers(self) if functional is None else functional.layers

    @property
    def input(self):
        functional = vars(self).get("_functional")
        return super().input if functional is None else functional.input

    @property
    def output(self):
        functional = vars(self).get("_functional")
        return super().output if functional is None else functional.output

    def summary(self, line_length=None, positions=None, print_fn=None, expand_nested=False, show_trainable=False,
                layer_range=None):
        """Keras's Model.summary (library/keras/summary.py), given whole to ``print_fn`` or written out: a
        functional subclass's is its graph's; another's lists the layers it holds in order, as Keras takes a
        subclassed model."""
        from tapecli.library.keras.summary import summary_text, table_text
        functional = vars(self).get("_functional")
        if functional is not None:
            text = as_tensorflow(summary_text)(library_value(functional), line_length, positions, title=self.name)
        else:
            text = as_tensorflow(table_text)(
                self.name, [_summary_row(layer) for layer in self.layers], [to_library(v) for v in self.trainable_weights],
                [to_library(v) for v in self.non_trainable_weights], fitted(self).trainer, line_length, positions)
        if print_fn is None:
            current().eager.run.output.write(text)
        else:
            print_fn(text)

    def __getattr__(self, name: str):
        """A functional subclass's ``inputs``, ``outputs`` and ``get_layer``: its graph's."""
        functional = vars(self).get("_functional")
        if functional is None or name not in _GRAPH_ATTRIBUTES:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        return getattr(functional, name)


_GRAPH_ATTRIBUTES = frozenset({"inputs", "outputs", "get_layer"})


# Keras 3's serialized float32 DTypePolicy, a layer's ``dtype`` in its config.
FLOAT32_POLICY = {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": None}
_CONFIG_TYPES = (str, int, float, bool, type(None))


def _summary_row(layer):
    """A subclassed model's layer as its summary lists it: its output shape is that of the input shape it was built
    for (Keras's _build_shapes_dict), where its class computes one (the library's layers do), else unknown."""
    from tapecli.library.keras.summary import LayerRow, library_row
    of = _library_layer(layer)
    if of is not None:
        shape = getattr(of, "build_shape", None)
        return as_tensorflow(library_row)(of, None if shape is None or not of.built else
                                          as_tensorflow(of.output_shape)(shape))
    built_for, computes = vars(layer).get("_build_shape"), getattr(layer, "compute_output_shape", None)
    shape = None
    if built_for is not None and computes is not None:
        try:
            shape = _plain_shape(computes(built_for))
        except NotImplementedError:         # (Keras's "?")
            pass
    return LayerRow(layer.name, type(layer).__name__, shape,
                    [to_library(v) for v in layer.weights] if layer.built else None)


def _plain_shape(shape):
    """A shape a program computed as a tuple of ints and None (several outputs': a list of them)."""
    dims = list(shape)
    if all(d is None or np.ndim(d) == 0 for d in dims):
        return tuple(None if d is None else int(d) for d in dims)
    return [_plain_shape(s) for s in dims]


def _recorded_shape(shape):
    """The shape a layer was built for as Keras records it: a tuple of ints and None, or a list of them (a list
    of inputs)."""
    dims = list(shape)
    if any(d is not None and not isinstance(d, (int, np.integer)) and hasattr(d, "__iter__") for d in dims):
        return [_recorded_shape(d) for d in dims]
    return tuple(None if d is None else int(d) for d in dims)


def _auto_config(cls, args, kwargs) -> dict | None:
    """The arguments a layer was made with, as Keras's Operation.__new__ keeps them for its config: bound to the
    class's ``__init__`` with its defaults, ``**kwargs`` spread, without ``self`` and ``name``; None where one is
    not a str, number, bool or None (or was passed through ``*args``), as Keras refuses to guess."""
    signature = inspect.signature(cls.__init__)
    try:
        bound = signature.bind(None, *args, **kwargs)
    except TypeError:
        return None
    parameters = list(signature.parameters.values())
    if any(p.kind is p.POSITIONAL_ONLY for p in parameters[1:]):
        return None
    bound.apply_defaults()
    found = dict(bound.arguments)
    found.pop(parameters[0].name)
    for p in parameters:
        if p.kind is p.VAR_KEYWORD:
            found |= found.pop(p.name, {})
        elif p.kind is p.VAR_POSITIONAL and found.pop(p.name, ()):
            return None
    found.pop("name", None)
    return found if all(isinstance(v, _CONFIG_TYPES) for v in _leaves(found)) else None


def added_losses(layer: Layer) -> list:
    """``layer.losses`` begins with the add_loss values of the layer and the layers it holds (a library layer's
    activity losses), as Keras orders them."""
    return [loss for held in _walked(layer) for loss in (
        held._added_losses if _program_layer(held) else _library_losses(held, "own_losses"))]


def weight_penalties(layer: Layer) -> list:
    """``layer.losses`` ends with the regularizers of the trainable weights of the layer and the layers it holds."""
    out = []
    for held in _walked(layer):
        out += [_penalty(regularizer, weight) for weight, regularizer in held._regularized if weight.trainable] \
            if _program_layer(held) else _library_losses(held, "weight_penalties")
    return out


def output_mask(layer: Layer, x, mask):
    """The mask of a layer's output (Keras's _set_mask_metadata): its compute_mask's where it supports masking (it
    writes compute_mask, or sets ``supports_masking = True``), else none."""
    supports = vars(layer).get("supports_masking", type(layer).compute_mask is not Layer.compute_mask)
    return layer.compute_mask(x, mask) if supports else None


# ------------------------------------------------------------------ collecting
def _weights(layer: Layer, variables: bool = False) -> list:
    """The layer's weights: its own (trainable first), then those of what it holds, in the order assigned; with
    ``variables``, Keras's variables: the states of the SeedGenerators it holds after its own weights, and its
    layers' variables (a Dropout's seed state) for their weights."""
    own = layer._own_weights
    out = [v for v in own if v.trainable] + [v for v in own if not v.trainable]
    leaves = [leaf for value in list(vars(layer).values()) for leaf in _leaves(value)]
    if variables:
        out += [library_value(leaf).variable() for leaf in leaves if isinstance(library_value(leaf), SeedGenerator)]
    seen = {id(v) for v in out}
    for leaf in leaves:
        for v in ([leaf] if isinstance(leaf, Variable) else _weights(leaf, variables) if _program_layer(leaf)
                  else _library_weights(leaf, variables)):
            if id(v) not in seen:
                seen.add(id(v))
                out.append(v)
    return out


def _sublayers(layer: Layer) -> list:
    """The layers a layer holds (its attributes, in the order assigned; in lists and dicts too): the program's
    and the library's (but the library layer that a layer derived from it holds: keras_derived.DerivedLayer)."""
    return [leaf for key, value in list(vars(layer).items()) if key != "_keras_held" for leaf in _leaves(value)
            if (_program_layer(leaf) and leaf is not layer) or _library_layer(leaf) is not None]


def _program_layers(layer: Layer) -> list:
    """The layer and the program's layers it holds, at any depth."""
    out = [layer]
    for held in _sublayers(layer):
        if _program_layer(held):
            out += _program_layers(held)
    return out


def _walked(layer: Layer) -> list:
    """The layer, then the layers it holds depth first (Keras's _flatten_layers): the program's and the library's."""
    out = [layer]
    for held in _sublayers(layer):
        out += _walked(held) if _program_layer(held) else [held]
    return out


def _program_layer(value) -> bool:
    """Whether ``value`` is a program's layer (its class derives from Layer: not the library's, which
    ``isinstance(value, Layer)`` also takes)."""
    return type.__instancecheck__(Layer, value)


_stateless_values = as_tensorflow(stateless_values)


def _library_layer(value):
    if type(value) is not LibraryObject:
        return None
    of = library_value(value)
    return of if LAYER in getattr(of, "keras_bases", ()) else None


def _library_weights(value, variables: bool = False) -> list:
    of = _library_layer(value)
    return [] if of is None else list(of.variables if variables else of.weights)


@as_tensorflow
def _library_losses(value, part: str) -> list:
    """A library layer's ``own_losses`` (its activity losses) or ``weight_penalties``."""
    return [to_program(loss) for loss in getattr(_library_layer(value), part)()]


def _leaves(value):
    if isinstance(value, (list, tuple)):
        for item in value:
            yield from _leaves(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    else:
        yield value


# ------------------------------------------------------------------ making weights
def _automatic_name(class_name: str) -> str:
    """Keras's automatic name of a layer: its class's in snake case, numbered from the second (my_layer_1)."""
    from tapecli.library.keras.common import auto_name
    return auto_name(current().eager.run, module_name(class_name))


@as_tensorflow
def made_weight(run, layer, shape, initializer, dtype, trainable, name) -> Variable:
    from tapecli.library.keras import initializers
    from tapecli.runtime.values import DType
    dims = [] if shape is None else [int(d) for d in (shape if isinstance(shape, (list, tuple)) else [shape])]
    want = np.dtype(DType(dtype).np) if isinstance(dtype, str) else np.dtype(dtype.np) if dtype is not None \
        else current().settings.float_dtype
    value = initializers.get(to_library(initializer)).make(dims, run.rng, want)
    from tapecli.library.keras.common import weight_path
    return Variable(f"{run.label(layer)}.{name or 'weight'}", value, trainable=bool(trainable),
                    tf_name=name or "variable", keras=weight_path(run, layer.name, name or "variable"))


@as_tensorflow
def _penalty(regularizer, weight):
    return to_program(penalties.regularizer(to_library(regularizer)).apply(weight))


def _shape(value) -> tuple | list | None:
    """The shape Keras's build gets for a call's input: a list of them for a list of inputs."""
    if isinstance(value, (list, tuple)):
        return [_shape(v) for v in value]
    shape = getattr(library_value(value), "shape", None)       # (a Keras tensor's: None where unknown)
    return None if shape is None else tuple(None if d is None else int(d) for d in shape)


def _default(method, name: str):
    """The default of ``method``'s parameter ``name``, None where it has none."""
    try:
        found = inspect.signature(method).parameters.get(name)
    except (TypeError, ValueError):
        return None
    return None if found is None or found.default is inspect.Parameter.empty else found.default


def _takes(method, name: str) -> bool:
    try:
        parameters = inspect.signature(method).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == name or p.kind is p.VAR_KEYWORD for p in parameters)


# ------------------------------------------------------------------ in a functional model's graph
# A program's layer called on Keras tensors runs once on probes (ones, a batch of one, as Keras's compute_output_spec
# calls it; the probe's changes to its variables and draws are undone) and gives the Keras tensor of a node of the
# library's graph, whose call calls the layer with its input's mask where ``call`` takes ``mask=``.
def _symbolic(args) -> bool:
    """Whether a layer's call takes Keras tensors (a functional model's graph), or one list of them."""
    listed = _listed(args)
    return bool(listed or args) and all(isinstance(library_value(a), KerasTensor) for a in (listed or args))


def _listed(args) -> list | None:
    """The Keras tensors of a call on one list of them (``Sampling()([z_mean, z_log_var])``), else None."""
    return list(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) and args[0] else None


def _symbolic_call(layer, call, args, kwargs):
    """``layer(*keras_tensors)``, the layer built: the Keras tensor of its output, from ``call`` (its ``call``) on
    probes, given the probe's mask where the layers before give one and ``call`` takes ``mask=``."""
    run = current().eager.run
    listed = _listed(args)
    keras_args = [library_value(a) for a in (listed or args)]
    given = dict(kwargs)            # (Keras's node keeps them, and the default of a training= that has one)
    if "training" not in given:
        default = _default(call, "training")
        if default is not None:
            given["training"] = default
    if kwargs.get("mask") is None and not listed and _takes_mask(layer):
        mask = as_tensorflow(keras_args[0].probe_mask)()
        if mask is not None:
            kwargs = {**kwargs, "mask": mask}
    saved = [(v, v.read().value.copy()) for v in layer.weights]
    drawn = run.rng.bit_generator.state
    seeds = [(generator, list(generator.state)) for generator in _seed_generators(layer)]
    try:
        probes = [k.probe() for k in keras_args]
        out = call(*([probes] if listed else probes), **kwargs)
    finally:
        for v, value in saved:
            v.assign(value)
        run.rng.bit_generator.state = drawn
        for generator, state in seeds:
            generator.state = state
    made = KerasTensor((keras_args[0].shape[0], *out.shape[1:]), out.dtype, graph_layer(layer), keras_args,
                       listed=bool(listed))
    made.spread = not listed and len(keras_args) > 1
    made.call_kwargs = {k: to_library(v) for k, v in given.items()}
    graph_layer(layer).symbolic = (keras_args[0] if len(keras_args) == 1 else keras_args, made)    # (its input, output)
    return to_program(made)


def _seed_generators(layer) -> list:
    """The Keras SeedGenerators a probe may draw from: those the layer and the layers it holds hold (the program's
    and the library's: a Dropout's), and Keras's global one where the run has made it."""
    from tapecli.library.keras.initializers import SeedGenerator
    holders = [vars(held) for held in _program_layers(layer)]
    holders += [vars(library) for values in holders for leaf in _leaves(list(values.values()))
                if (library := _library_layer(leaf)) is not None]
    found = [library_value(leaf) for values in holders for leaf in _leaves(list(values.values()))
             if isinstance(library_value(leaf), SeedGenerator)]
    return found + ([current().keras_seed_generator] if current().keras_seed_generator is not None else [])


def _takes_mask(layer) -> bool:
    return _takes(layer.call, "mask")


def graph_layer(layer) -> GraphLayer:
    """The library's view of a program's layer (one per layer and run): a node of a functional graph, a layer of a
    Sequential model (tf_values.VIEWS)."""
    return run_view(current().bridge.run, "keras_graph_layers", layer, GraphLayer)


class GraphLayer(LibraryLayer):
    """The library's view of a program's layer in a functional graph: its weights and losses are the layer's, and
    applying it calls the layer on the program's side."""

    def __init__(self, run, layer):         # (no automatic name: the layer has its own)
        self.interp, self.layer = run, layer
        self.given = self.bound = self.path = None
        self.input_shape = vars(layer).get("_input_shape_arg")
        self.weights_, self.built, self.trainable, self.rng = {}, True, True, run.rng
        self.eager = current().bridge

    def as_program(self):
        return self.layer

    @property
    def program_object(self) -> ProgramCallable:
        """The layer as its config is written from it (its class's get_config, on the program's side)."""
        return ProgramCallable(self.layer)

    @property
    def build_shape(self):
        return vars(self.layer).get("_build_shape")

    def display(self) -> str:
        return self.layer.name

    @property
    def auto(self) -> str:
        """Its name where the library's layer's is automatic (a summary's): the layer's own."""
        return self.layer.name

    def python_class_name(self) -> str:
        return type(self.layer).__name__

    def rename(self) -> None:
        pass

    @property
    def weights(self):
        return list(self.layer.weights)

    def own_losses(self) -> list:
        return [to_library(loss) for loss in self._program_side(added_losses, self.layer)]

    def weight_penalties(self) -> list:
        return [to_library(loss) for loss in self._program_side(weight_penalties, self.layer)]

    @property
    def takes_mask(self) -> bool:
        return _takes_mask(self.layer)

    def output_mask(self, x, mask):
        found = self._program_side(output_mask, self.layer, to_program(x), to_program(mask))
        return None if found is None else to_library(found)

    def apply(self, interp, x, training_=None, mask=None):
        return self.apply_spread(interp, [x], training_, mask)

    def call(self, interp, args, kwargs, node):
        """The layer called in the library's graph (a Sequential model's trace): its own call on the program's
        side, whose Keras tensor (from _symbolic_call) has this view as its node; its ends are the layer's
        ``input`` and ``output``."""
        out = to_library(self._program_side(self.layer, *(to_program(a) for a in args),
                                            **{k: to_program(v) for k, v in kwargs.items()}))
        if isinstance(out, KerasTensor):
            self.symbolic = (args[0] if len(args) == 1 else list(args), out)
        return out

    def build_for(self, shape, dtype) -> None:
        pass                # (the layer builds itself at its first call, as Keras's does)

    def set_trainable(self, value: bool) -> None:
        """Keras's setter reaching the layer from a library model that holds it (``inner.trainable = False``):
        the layer's own setter, whose weights follow it."""
        self.trainable = value
        self._program_side(setattr, self.layer, "trainable", value)

    def output_shape(self, shape) -> tuple:
        with probing(self.interp):
            return self.call(self.interp, [KerasTensor(tuple(shape), current().settings.float_dtype)], {}, None).shape

    def apply_spread(self, interp, xs, training_=None, mask=None, keywords=None):
        """The layer's call on values (``keywords``: those of its call in the graph, Keras's node's)."""
        kwargs = {k: to_program(v) for k, v in (keywords or {}).items()}
        if training_ is not None:           # (the model's call's training wins over its node's, as Keras's)
            kwargs["training"] = bool(training_)
        if mask is not None:
            kwargs["mask"] = to_program(mask)
        out = self._program_side(self.layer, *(to_program(x) for x in xs), **kwargs)
        return to_library(out)

    def _program_side(self, f, *args, **kwargs):
        with program_side(self.eager):
            return f(*args, **kwargs)

    def replay_kind(self, args, kwargs, tracked):
        return None


VIEWS[Layer] = graph_layer


def call_arguments(values):
    """The program's arguments of a layer's call (a tuple or a dict of them) as Keras converts them (common.py
    call_argument): its NumPy arrays tensors, its float tensors of floatx."""
    if isinstance(values, dict):
        return {k: to_program(call_argument(to_library(v))) if _converts(v) else v for k, v in values.items()}
    return [to_program(call_argument(to_library(v))) if _converts(v) else v for v in values]


def _converts(value) -> bool:
    """Whether Keras's call converts ``value`` or items of it (a NumPy array, a tensor, a list or tuple of them)."""
    if isinstance(value, (list, tuple)):
        return any(_converts(v) for v in value)
    return isinstance(value, (np.ndarray, np.generic)) or type(value) is Tensor
