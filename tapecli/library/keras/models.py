"""Sequential and functional models, and ``Input``."""
from __future__ import annotations

from tapecli import ops
from tapecli.errors import TdfError, TdfTypeError, TdfValueError
from tapecli.interpreter.classes import KERAS_MODEL, LAYER, Instance
from tapecli.interpreter.conversions import to_int, truth
from tapecli.interpreter.objects import PURE
from tapecli.library.core import to_dtype
from tapecli.library.keras import model_json, training
from tapecli.library.keras.common import auto_name, dims, flag, float_dtype, integer, layer_name, model_input, \
    name_scope, tensor
from tapecli.library.keras.configs import (CALL_TRAINING, deserialize_layer, dtype_policy, keras_name,
                                          serialize_layer)
from tapecli.library.keras.layers import (InputLayer, Layer, eager_mask, forget_mask, input_config, keep_mask,
                                          shape_tuple)
from tapecli.library.keras.keras_tensor import KerasTensor, mask_at
from tapecli.library.keras.program_layers import keras_layer
from tapecli.interpreter.printing import python_str
from tapecli.runtime.context import current
from tapecli.runtime.tape import type_word
from tapecli.runtime.values import PythonTuple, Tensor, dtype_name


def make_input(interp, shape=None, batch_size=None, name=None, batch_shape=None, dtype=None):
    """keras.Input: a symbolic tensor of shape (batch_size, *shape), floatx unless ``dtype`` says, named ``name``
    or as Keras names a Keras tensor (KerasTensor.named)."""
    if batch_shape is not None:
        full = dims(batch_shape, "batch_shape")
    elif shape is not None:
        full = (None if batch_size is None else integer(batch_size, "batch_size"), *dims(shape, "shape"))
    else:
        raise TdfValueError("Input needs a shape: Input(shape=[d])")
    out = KerasTensor(full, float_dtype() if dtype is None else to_dtype(dtype))
    out.name = KerasTensor.named(interp) if name is None else name
    return out


def program_input(interp, shape=None, batch_size=None, name=None, batch_shape=None, dtype=None):
    """A program's keras.Input: its InputLayer made (and named) now, as Keras's is."""
    out = make_input(interp, shape, batch_size, name, batch_shape, dtype)
    out.input_layer = input_layer(interp, out, name)
    return out


def program_input_layer(interp, shape=None, batch_size=None, dtype=None, sparse=None, ragged=None, batch_shape=None,
                        input_tensor=None, optional=False, name=None, input_shape=None, batch_input_shape=None):
    """keras.layers.InputLayer made by a program: the layer of a new Input (or of ``input_tensor``), as Keras's
    Input makes one; a Sequential model takes it as its Input. (``input_shape``: Keras 2's, deprecated.)"""
    if input_shape is not None:
        current().settings.warn("Argument `input_shape` is deprecated. Use `shape` instead.")
        shape = input_shape
    batch_shape = batch_input_shape if batch_input_shape is not None else batch_shape
    if input_tensor is not None:
        if not isinstance(input_tensor, KerasTensor):
            raise TdfValueError(f"Argument `input_tensor` must be a KerasTensor. Received invalid type: "
                                f"input_tensor={python_str(input_tensor)} (of type {type_word(input_tensor)})")
        out = input_tensor
    else:
        if shape is not None and batch_shape is not None:
            raise TdfValueError("You cannot pass both `shape` and `batch_shape` at the same time.")
        if batch_size is not None and batch_shape is not None:
            raise TdfValueError("You cannot pass both `batch_size` and `batch_shape` at the same time.")
        if shape is None and batch_shape is None:
            raise TdfValueError("You must pass a `shape` argument.")
        out = make_input(interp, shape, batch_size, name, batch_shape, dtype)
    layer = out.input_layer = InputLayer(interp, name=name, optional=flag(optional))
    layer.symbolic = ([], out)
    return layer


def get_source_inputs(tensor):
    """keras.utils.get_source_inputs: the Inputs a Keras tensor is computed from, each once, in the order of its
    graph's inputs; anything else as it is."""
    if not isinstance(tensor, KerasTensor):
        return tensor
    if tensor.layer is None:
        return [tensor]
    found = []
    for given in tensor.inputs:
        for source in get_source_inputs(given):
            if all(source is not seen for seen in found):
                found.append(source)
    return found


def input_layer(interp, tensor: KerasTensor, name) -> InputLayer:
    """The InputLayer of a Keras input tensor: its ``output`` is that tensor and its ``input`` an empty list, as
    Keras gives them."""
    layer = InputLayer(interp, name=name)
    layer.symbolic = ([], tensor)
    return layer


class Model(Layer):
    """What Sequential and functional models share: their layers' weights, summary, naming."""

    kind_word = "a model"
    prefix = "model"
    computes_mixed = True
    keras_bases = (LAYER, KERAS_MODEL)
    derivable = False           # (a program's model derives from keras.Model)

    def python_class(self) -> str | None:
        """``type(model)``: keras.src.models.sequential.Sequential, keras.src.models.functional.Functional."""
        return f"keras.src.models.{type(self).__name__.lower()}.{type(self).__name__}"

    many_inputs = False

    def __init__(self, interp, name=None, trainable=True):
        super().__init__(interp, name=name, trainable=trainable)
        self.layers: list[Layer] = []
        self.trainer = None           # compile() sets it (training.py)

    # what training.Trainer asks of a model
    def forward(self, x, training):
        return self.apply(self.interp, x, training)

    def weights_to_train(self):
        return self.trainable_weights

    def added_losses(self):
        return self.regularization_losses()

    # model.losses (Layer.regularization_losses): every layer's own losses (activity regularizers'), then every
    # layer's weight penalties, the order the training loss adds them in
    def own_losses(self):
        return [loss for layer in self.layers for loss in layer.own_losses()]

    def weight_penalties(self):
        return [loss for layer in self.layers for loss in layer.weight_penalties()]

    def own_metrics(self):
        return []

    def step(self, name):
        return None

    def method(self, name):
        return None

    def replay_kind(self, args, kwargs, tracked):
        layers = self.layers
        return PURE if self.built and layers and all(
            isinstance(la, Layer) and la.replay_kind(args, kwargs, tracked) is PURE for la in layers) else None

    def sublayers(self) -> list:
        return self.layers

    def rename(self):
        named = self.given or self.bound
        for i, layer in enumerate(self.layers):
            layer.path = f"{named}.layers[{i}]" if named else None
            layer.rename()

    @property
    def weights(self):
        return _distinct(v for layer in self.layers for v in layer.weights)

    @property
    def variables(self):
        return _distinct(v for layer in self.layers for v in layer.variables)

    @property
    def trainable_weights(self):
        if not self.trainable:
            return []
        out = []
        for layer in self.layers:
            out += [v for v in layer.trainable_weights if v not in out]
        return out

    def attributes(self):
        out = super().attributes()
        out["layers"] = lambda: [layer.as_program() for layer in self.layers]
        out.update(training.attributes(self))
        return out

    def methods(self):
        out = super().methods()
        out.update(training.methods(self.interp, self))
        out["summary"] = self.summary
        out["get_layer"] = self.get_layer
        out["build"] = lambda input_shape: self.build_for(dims(input_shape), float_dtype())
        out["to_json"] = lambda **options: model_json.to_json(self, **options)
        return out

    def get_config(self):
        raise TdfValueError(f"tapecli does not write the config of a {type(self).__name__} model yet")

    def get_layer(self, name=None, index=None):
        if index is not None:
            index = integer(index, "index")
            if len(self.layers) <= index:       # (Keras's check: a negative index is Python's)
                raise TdfValueError(f"Was asked to retrieve layer at index {index} but model only has "
                                    f"{len(self.layers)} layers.")
            return self.layers[index].as_program()
        for layer in self.layers:
            if layer.display() == name or getattr(layer, "auto", None) == name:
                return layer.as_program()
        raise TdfValueError(f"No such layer: {name}. Existing layers are: {[la.display() for la in self.layers]}.")

    def layer_shapes(self) -> list:
        """Each layer's output shape, None where unknown (a layer not built yet)."""
        shape, out = self.known_input_shape(), []
        for layer in self.layers:
            shape = layer.output_shape(shape) if shape is not None and layer.built else None
            out.append(shape)
        return out

    def set_attribute(self, interp, attr, value, node):
        if attr in training.STOP_FLAGS:        # (a callback ends fit after the epoch, evaluate or predict)
            setattr(self, attr, truth(value))
            return
        super().set_attribute(interp, attr, value, node)

    def summary(self, line_length=None, positions=None, print_fn=None, expand_nested=False, show_trainable=False,
                layer_range=None):
        """Keras 3's summary (summary.py): written to the output, or given whole to ``print_fn``."""
        from tapecli.library.keras.summary import summary_text
        text = summary_text(self, line_length, positions)
        if print_fn is not None:
            self.interp.call_value(print_fn, [text])
        else:
            self.interp.output.write(text)

    def known_input_shape(self):
        return None


class Sequential(Model):
    prefix = "sequential"

    def __init__(self, interp, layers=None, name=None, trainable=True):
        super().__init__(interp, name=name, trainable=trainable)
        self.input_spec = self.input_name = self.given_input = None
        for layer in ([] if layers is None else self._list(layers)):
            self.add(layer, rebuild=False)
        self.rebuild()

    @staticmethod
    def _list(layers):
        if not isinstance(layers, (list, tuple)):
            raise TdfTypeError(f"Sequential takes a list of layers, got {type_word(layers)}")
        return list(layers)

    def add(self, layer, rebuild=True):
        if isinstance(layer, InputLayer):           # (Keras's Sequential takes an InputLayer as its Input)
            layer = layer.symbolic[1]
        if isinstance(layer, KerasTensor) and layer.layer is None:
            if self.layers or self.input_spec is not None:
                raise TdfValueError("an Input can only be the first entry of a Sequential model")
            self.input_spec, self.given_input = layer.shape, layer
            made = getattr(layer, "input_layer", None)          # (its InputLayer's name)
            self.input_name = keras_name(made) if made is not None else layer.name or auto_name(self.interp,
                                                                                            "input_layer")
            return
        from tapecli.library.keras.program_layers import keras_layer
        layer = keras_layer(self.interp, layer)
        if not isinstance(layer, Layer):
            raise TdfTypeError(f"Only instances of `keras.Layer` can be added to a Sequential model. "
                               f"Received: {type_word(layer)}")
        if any(la.display() == layer.display() for la in self.layers) or layer in self.layers:
            raise TdfValueError(f'All layers added to a Sequential model should have unique names. Name '
                                f'"{layer.display()}" is already the name of a layer in this model.')
        if not self.layers and self.input_spec is None and layer.input_shape is not None:
            self.input_spec = layer.input_shape
            self.input_name = auto_name(self.interp, "input_layer")
        self.layers.append(layer)
        self.rename()
        if flag(rebuild):
            self.rebuild()

    def rebuild(self):
        """Keras's _maybe_rebuild: a model of known input shape and some layer is built again; one whose first
        layer is a model of known input shape (a built Sequential, a functional model of one input), once a layer
        follows it, is built for that shape."""
        if self.input_spec is not None and self.layers:
            self.keras_build(self.input_spec)
        elif len(self.layers) > 1 and (shape := _model_input_shape(self.layers[0])) is not None:
            self.keras_build(shape)

    def keras_build(self, shape):
        """Keras's Sequential.build for ``shape``: an InputLayer where it has none (named now), its layers built,
        and its graph, of which Keras makes a functional model (named now too: later models count it)."""
        shape = tuple(shape)
        if self.input_spec is None:
            self.input_spec, self.input_name = shape, auto_name(self.interp, "input_layer")
        elif shape != tuple(self.input_spec):
            raise TdfValueError(f"Sequential model '{keras_name(self)}' has already been configured to use input "
                                f"shape {tuple(self.input_spec)}. You cannot build it with input_shape {shape}")
        if not self.layers:
            raise TdfValueError(f"Sequential model {keras_name(self)} cannot be built because it has no layers. "
                                "Call `model.add(layer)`.")
        auto_name(self.interp, "functional")
        self.build_for(self.input_spec, float_dtype())
        self.trace()

    def forward(self, x, training):
        if self.input_spec is None and self.layers and isinstance(x, Tensor):     # (fit's build: any batch)
            self.keras_build((None, *x.shape[1:]))
        return super().forward(x, training)

    def trace(self):
        """A Sequential model of known input shape is a functional graph too (Keras 3): its ``inputs``,
        ``outputs`` and each layer's ``input`` / ``output`` are that graph's Keras tensors. (A layer that
        cannot be called on Keras tensors leaves the model without them.)"""
        # (the program's Input where it gave one, as Keras's graph starts from its InputLayer's tensor; else one
        # Keras makes now)
        x = self.given_input or make_input(self.interp, batch_shape=self.input_spec)
        self.symbolic_ends = None
        try:
            ends = [x]
            with name_scope(self.interp, self.given or self.auto):
                for layer in self.layers:
                    x = layer.call(self.interp, [x], {}, None)
            self.symbolic_ends = ends + [x]
        except TdfError:
            pass

    def attributes(self):
        out = super().attributes()
        out["inputs"] = lambda: [self.symbolic_end(0)]
        out["outputs"] = lambda: [self.symbolic_end(1)]
        out["input"] = lambda: self.symbolic_end(0)
        out["output"] = lambda: self.symbolic_end(1)
        out["input_shape"] = lambda: _shapes([self.symbolic_end(0).shape], False)
        out["output_shape"] = lambda: _shapes([self.symbolic_end(1).shape], False)
        return out

    def get_config(self) -> dict:
        """Keras 3.15's config of a Sequential model: its layers serialized (after an InputLayer where its input
        is known), each built one with its build_config."""
        entries = []
        if self.input_spec is not None:
            entries.append({"module": "keras.layers", "class_name": "InputLayer", "config": input_config(
                KerasTensor(self.input_spec, float_dtype()), self.input_name), "registered_name": None})
        entries.extend(_serialized_with_build(layer) for layer in self.layers)
        out = {"name": self.given or self.auto, "trainable": self.trainable, "dtype": dtype_policy(), "layers": entries}
        if self.input_spec is not None:
            out["build_input_shape"] = _shapes([self.input_spec], False)
        return out

    def symbolic_end(self, which: int):
        ends = getattr(self, "symbolic_ends", None)
        if ends is None:
            raise TdfValueError(f"Sequential model '{self.display()}' has no defined {('input', 'output')[which]}",
                                hint="give it an Input or an input_shape")
        return ends[which]

    def methods(self):
        out = super().methods()
        out["add"] = self.add
        out["pop"] = self.pop
        out["build"] = lambda input_shape=None: self.keras_build(dims(input_shape))
        return out

    def pop(self):
        if not self.layers:
            raise TdfValueError("There are no layers in the model.")
        layer = self.layers.pop()
        self.rebuild()
        return layer.as_program()

    def known_input_shape(self):
        return self.input_spec

    def output_shape(self, shape):
        """Its output's shape for an input of ``shape`` (a model as a layer of another): its layers' in turn."""
        for layer in self.layers:
            shape = layer.output_shape(shape)
        return shape

    def build_for(self, shape, dtype):
        if not self.layers:
            raise TdfValueError(f"Sequential model '{self.display()}' has no layers and cannot be built or called",
                                hint="add layers: Sequential([Dense(4), ...]) or model.add(Dense(4))")
        with name_scope(self.interp, self.given or self.auto):
            for layer in self.layers:
                layer.build_for(shape, dtype)
                shape = layer.output_shape(shape)
        self.built = True

    def apply(self, interp, x, training=None):
        if not self.layers:
            self.build_for(None, None)
        if self.input_spec is None and not isinstance(x, KerasTensor):     # (Keras's build at the first call)
            self.keras_build(tensor(x).shape)
        if isinstance(x, KerasTensor):
            for layer in self.layers:
                x = layer.call(interp, [x], {}, None)
            return x
        x = model_input(x)
        if self.input_spec is not None:     # (no check of its shape: Keras's Sequential runs its layers on the data,
            x = ranked_as(x, self.input_spec)   # which check what they take: a sequence of another length passes)
        if self.built:
            return self.run_layers(interp, x, training)
        with name_scope(interp, self.given or self.auto):       # (the layers built now)
            x = self.run_layers(interp, x, training)
        self.built = True
        return x

    def run_layers(self, interp, x, training):
        # (a layer's mask reaches the next layer: Embedding(mask_zero=True), Masking; each tensor carries its own, as
        # Keras's do, for the layers a program's layer calls on it and for the loss)
        mask = eager_mask(interp, x)
        for layer in self.layers:
            x, computed = layer.masked(interp, x, training, mask)
            own = eager_mask(interp, x)
            mask = computed if own is None else own
            keep_mask(interp, x, mask)
        return x

    def call(self, interp, args, kwargs, node):
        if args and isinstance(args[0], KerasTensor):
            return self.symbolic_call(args[0])
        return super().call(interp, args, kwargs, node)

    def symbolic_call(self, x: KerasTensor) -> KerasTensor:
        """The model called on a Keras tensor: one layer of that graph, as Keras keeps a model called in another
        (its layers, weights and trainable its own), built first for the tensor's shape where it had no input
        (Keras's Sequential.build); its output's shape is its own graph's. A model whose layers cannot be called
        on Keras tensors has no graph: its layers are then called on the tensor one by one."""
        if self.input_spec is None and self.layers:
            self.keras_build(x.shape)
        ends = getattr(self, "symbolic_ends", None)
        if ends is None:
            return self.apply(self.interp, x)
        want, got = self.input_spec[1:], x.shape[1:]
        if len(want) != len(got) or any(w is not None and g is not None and w != g for w, g in zip(want, got)):
            raise TdfValueError(f'Input 0 of layer "{self.layers[0].display()}" is incompatible with the layer: '
                                f"expected shape={self.input_spec}, found shape={x.shape}")
        out = KerasTensor((x.shape[0], *ends[1].shape[1:]), ends[1].dtype, self, [x])
        self.symbolic = (x, out)
        return out


def sequential_from_config(interp, config, custom_objects=None):
    """keras.Sequential.from_config: its layers made from their configs (an InputLayer's as an Input)."""
    layers = []
    for entry in config["layers"]:
        if entry["class_name"] == "InputLayer":
            layers.append(make_input(interp, batch_shape=entry["config"]["batch_shape"], name=entry["config"]["name"]))
        else:
            layers.append(deserialize_layer(interp, entry, custom_objects))
    return Sequential(interp, layers, name=config.get("name"), trainable=config.get("trainable", True))


def serialize(layer) -> dict:
    """keras.layers.serialize: the layer's class and config, with its build_config once built (a program's layer:
    its class's get_config)."""
    return _serialized_with_build(keras_layer(layer.interp, layer) if isinstance(layer, Instance) else layer)


def deserialize(interp, config, custom_objects=None):
    """keras.layers.deserialize: the layer of a serialized config, as the program holds it."""
    made = deserialize_layer(interp, config, custom_objects)
    return made.as_program() if isinstance(made, Layer) else made


def _serialized_with_build(layer) -> dict:
    """keras.layers.serialize of a model's layer, with its build_config where Keras writes one (a Keras layer that
    makes no weights has no build of its own: it is built when made, without one)."""
    entry = serialize_layer(layer)
    program = getattr(layer, "program_object", None) is not None       # (built by its first call: Keras's record)
    if layer.built and getattr(layer, "build_shape", None) is not None and (program or type(layer).build
                                                                             is not Layer.build):
        shape = layer.build_shape           # (a merging layer's: a list of its inputs' shapes)
        entry["build_config"] = {"input_shape": _shapes(shape, True) if isinstance(shape, list) else
                                 _shapes([shape], False)}
    return entry


def functional_from_config(interp, config, custom_objects=None):
    """keras.Model.from_config of a functional model's config: its layers made from their configs and called
    again as the config's nodes say, on the Keras tensors their histories name."""
    return _functional_graph(interp, config, lambda entry: deserialize_layer(interp, entry, custom_objects),
                             lambda layer, args, kwargs: layer.call(interp, args, kwargs, None))


def _functional_graph(interp, config, make, call, input_tensors=None, trainable=None):
    """A functional model of a config's graph: each layer entry's layer ``make(entry)`` called again as its nodes
    say (``call(layer, args, kwargs)``) on the Keras tensors their histories name, from new Inputs (or
    ``input_tensors``, in the config's input order)."""
    made: dict = {}             # (layer name, call): the Keras tensor it made (a list of several)
    given = iter(input_tensors) if input_tensors is not None else None

    def made_by(name, call_index, index):
        out = made[(name, to_int(call_index, "keras_history"))]
        return out[to_int(index, "keras_history")] if isinstance(out, (list, tuple)) else out

    def tensor(arg):
        if isinstance(arg, (list, tuple)):
            return [tensor(a) for a in arg]
        if isinstance(arg, dict) and arg.get("class_name") == "__keras_tensor__":
            return made_by(*arg["config"]["keras_history"])
        return arg
    for entry in config["layers"]:
        if entry["class_name"] == "InputLayer":
            options = entry["config"]
            made[(entry["name"], 0)] = next(given) if given is not None else \
                make_input(interp, batch_shape=options["batch_shape"], name=options["name"], dtype=options.get("dtype"))
            continue
        layer = make(entry)
        own = not isinstance(layer, Layer) or getattr(layer, "program_object", None) is not None   # (a program's)
        for call_index, node in enumerate(entry.get("inbound_nodes", [])):
            made[(entry["name"], call_index)] = call(layer, [tensor(a) for a in node["args"]],
                                                     dict(node.get("kwargs", {})) if own else {})

    def ends(found):
        if isinstance(found, dict):
            return {k: made_by(*history) for k, history in found.items()}
        many = bool(found) and isinstance(found[0], (list, tuple))
        out = [made_by(*history) for history in (found if many else [found])]
        return out if many else out[0]
    return Functional(interp, ends(config["input_layers"]), ends(config["output_layers"]), name=config.get("name"),
                      trainable=config.get("trainable", True) if trainable is None else trainable)


def clone_model(interp, model, input_tensors=None, clone_function=None, call_function=None, recursive=False,
                cache=None):
    """keras.models.clone_model (keras/src/models/cloning.py): a Sequential or functional model made again of its
    layers, each cloned once: by ``clone_function`` where given, else from its config (new weights); a functional
    graph called again (through ``call_function`` where given) on new Inputs or ``input_tensors``; with
    ``recursive``, the models among its layers cloned alike."""
    cache = {} if cache is None else cache

    def clone(layer):
        if id(layer) not in cache:
            if recursive and isinstance(layer, (Sequential, Functional)):
                cache[id(layer)] = clone_model(interp, layer, None, clone_function,
                                               call_function if isinstance(layer, Functional) else None, True, cache)
            elif clone_function is not None:
                cache[id(layer)] = interp.call_value(clone_function, [layer.as_program()])
            else:       # (Keras's: layer.__class__.from_config(layer.get_config()))
                cache[id(layer)] = deserialize_layer(interp, serialize_layer(layer))
        return cache[id(layer)]
    if isinstance(model, Sequential):
        if call_function is not None:
            raise TdfValueError("`call_function` argument is not supported with Sequential models.  In a Sequential "
                                "model, layers aren't called at model-construction time (they're merely listed). Use "
                                "`call_function` with Functional models only.")
        made = Sequential(interp, [*_sequential_input(model, input_tensors), *map(clone, model.layers)],
                          name=model.given or model.auto, trainable=model.trainable)
        model_json.compile_like(interp, made, model)
        return made
    if not isinstance(model, Functional):
        raise TdfValueError("tapecli clones a Sequential or functional model (Keras clones a subclassed one from "
                            "its config)")
    if input_tensors is not None:
        given = list(input_tensors) if isinstance(input_tensors, (list, tuple)) else [input_tensors]
        if not all(isinstance(t, KerasTensor) for t in given):
            raise TdfValueError("All entries in `input_tensors` must be KerasTensors. Received invalid values: "
                                f"inputs_tensors={[type_word(t) for t in given]}")
        if len(given) != len(model.inputs):
            raise TdfValueError(f"`input_tensors` must have the same structure as model.input: {len(model.inputs)} "
                                f"Keras tensors, got {len(given)}")
        input_tensors = given
    else:       # (Keras's: an Input like each of the model's, named as its Keras tensor is: keras_tensor, ...)
        input_tensors = [make_input(interp, batch_shape=t.shape, dtype=t.dtype, name=t.name) for t in model.inputs]
    originals = {keras_name(layer): layer for layer in model.layers}
    for t in model.order:       # (Keras clones them as it runs the graph: its layers' seeds drawn in that order)
        clone(t.layer)

    def call(layer, args, kwargs):
        if call_function is None:
            return layer.call(interp, args, kwargs, None)
        return interp.call_value(call_function, [layer.as_program() if isinstance(layer, Layer) else layer, *args],
                                 kwargs)
    made = _functional_graph(interp, model.get_config(), lambda entry: clone(originals[entry["name"]]), call,
                             input_tensors, trainable=True)
    model_json.compile_like(interp, made, model)
    return made


def _sequential_input(model, input_tensors) -> list:
    """The Input a Sequential model's clone starts with: ``input_tensors``' one Keras tensor, else one of the
    model's input shape where it has one."""
    if input_tensors is not None:
        given = list(input_tensors) if isinstance(input_tensors, (list, tuple)) else [input_tensors]
        if len(given) != 1:
            raise TdfValueError("Argument `input_tensors` must contain a single tensor.")
        if not isinstance(given[0], KerasTensor):
            raise TdfValueError(f"Argument `input_tensors` must be a KerasTensor. Received invalid value: "
                                f"input_tensors={type_word(given[0])}")
        return given
    if model.input_spec is None:
        return []
    return [make_input(model.interp, batch_shape=model.input_spec, name=model.input_name)]


def keras_order(inputs, outputs) -> list:
    """A functional model's layers in Keras 3's order (keras/src/ops/function.py, map_graph): by depth from
    the outputs, deepest (the inputs) first, and within a depth in the order a depth-first walk from the
    outputs first reaches them; inputs no output depends on come last."""
    def layer_of(t):
        return t.layer if t.layer is not None else t.input_layer
    first: dict = {}            # id(layer): when the walk first reaches it (before its inputs)
    walked: list = []           # the graph's tensors, each after its inputs
    done: set = set()

    def walk(t):
        if id(t) in done:
            return
        first.setdefault(id(layer_of(t)), len(first))
        for parent in t.inputs if t.layer is not None else []:
            walk(parent)
        done.add(id(t))
        walked.append(t)
    for t in outputs:
        walk(t)
    depth: dict = {}
    layer_depth: dict = {}
    layers: dict = {}
    for t in reversed(walked):
        layer = layer_of(t)
        d = max(depth.setdefault(id(t), 0), layer_depth.get(id(layer), 0))
        layer_depth[id(layer)], depth[id(t)], layers[id(layer)] = d, d, layer
        for parent in t.inputs if t.layer is not None else []:
            depth[id(parent)] = max(d + 1, depth.get(id(parent), 0))
    for k in inputs:                # an input no output depends on
        if id(k.input_layer) not in layers:
            layers[id(k.input_layer)], layer_depth[id(k.input_layer)], first[id(k.input_layer)] = k.input_layer, 0, -1
    return sorted(layers.values(), key=lambda la: (-layer_depth[id(la)], first[id(la)]))


def run_order(outputs) -> list:
    """A functional graph's layer calls (their Keras tensors) in the order Keras 3 runs them (keras/src/ops/
    function.py: _run_through_graph over map_graph's nodes_by_depth): deepest first, and within a depth in the
    order map_graph first gives them one; a call of several outputs is one node. (MultiHeadAttention deletes its
    inputs' masks: the calls after it read none.)"""
    def key(t):
        return id(t.siblings) if t.siblings is not None else id(t)
    members: dict = {}          # a node's tensors the graph reaches
    walked: list = []           # its nodes, each after its inputs' (Keras's nodes_in_decreasing_depth)

    def walk(t):
        if t.layer is None:
            return
        k = key(t)
        if k in members:
            if not any(m is t for m in members[k]):
                members[k].append(t)
            return
        members[k] = [t]
        for parent in t.inputs:
            walk(parent)
        walked.append(t)
    for t in outputs:
        walk(t)
    depth: dict = {}
    layer_depth: dict = {}      # (a layer called more than once: its later nodes no shallower than its first)
    for t in reversed(walked):
        d = max(depth.setdefault(key(t), 0), layer_depth.get(id(t.layer), 0))
        layer_depth[id(t.layer)] = depth[key(t)] = d
        for parent in t.inputs:
            if parent.layer is not None:
                depth[key(parent)] = max(d + 1, depth.get(key(parent), 0))
    return [t for k in sorted(depth, key=lambda k: -depth[k]) for t in members[k]]


def _model_input_shape(layer):
    """The input shape of a model whose input is known (Keras's ``input_shape``, which a layer lacks), or None."""
    if isinstance(layer, Sequential):
        return layer.input_spec
    if isinstance(layer, Functional) and not layer.many_in:
        return layer.inputs[0].shape
    return None


class Functional(Model):
    """keras.Model(inputs, outputs): the graph of layer calls recorded from Input tensors."""

    prefix = "functional"
    replay_lists = True         # a list of inputs is taken as tensors, each its own (not packed in Python)

    def __init__(self, interp, inputs, outputs, name=None, trainable=True):
        super().__init__(interp, name=name, trainable=trainable)
        # dicts of Keras tensors (Keras 3): the model takes and gives dicts by those keys, which it flattens
        # (tree.flatten) in sorted order: its inputs, outputs, output_names and layers follow that order
        self.input_keys = _flattened_keys(inputs) if isinstance(inputs, dict) else None
        self.output_keys = _flattened_keys(outputs) if isinstance(outputs, dict) else None
        self.given_output_keys = list(outputs) if isinstance(outputs, dict) else None     # (the dict it returns)
        inputs = [inputs[k] for k in self.input_keys] if self.input_keys is not None else inputs
        outputs = [outputs[k] for k in self.output_keys] if self.output_keys is not None else outputs
        self.many_in = isinstance(inputs, (list, tuple))
        # what fit's data adapter asks: several inputs, by the names a dict of data gives them in
        self.many_inputs = self.input_keys or ([getattr(k, "name", None) for k in inputs] if self.many_in else False)
        self.many_out = isinstance(outputs, (list, tuple))
        self.inputs = list(inputs) if self.many_in else [inputs]
        self.outputs = list(outputs) if self.many_out else [outputs]
        for t in self.inputs + self.outputs:
            if not isinstance(t, KerasTensor):
                raise TdfTypeError(f"Model(inputs, outputs) takes Keras tensors from Input(...) and layer calls, "
                                   f"got {type_word(t)}")
        seen: set = set()

        def visit(t):
            if id(t) in seen:
                return
            seen.add(id(t))
            if t.layer is None:
                if not any(t is i for i in self.inputs):
                    raise TdfValueError("an output depends on an Input that is not in the model's inputs")
                return
            for parent in t.inputs:
                visit(parent)
        for t in self.outputs:
            visit(t)
        self.order = run_order(self.outputs)
        for k in self.inputs:           # Keras lists an InputLayer per input (not a Sequential's)
            if getattr(k, "input_layer", None) is None:
                k.input_layer = input_layer(interp, k, getattr(k, "name", None))
        self.layers = [la for la in keras_order(self.inputs, self.outputs) if not getattr(la, "is_operation", False)]
        self.built = True
        self.rename()

    def keras_histories(self):
        """Each layer's calls in the graph (the first Keras tensor each made, in order, by id(layer)), and each Keras
        tensor's ``_keras_history``: the name of the layer that made it, which of its calls, which output."""
        calls: dict = {}
        for t in self.order:
            made = calls.setdefault(id(t.layer), [])
            first = t if t.siblings is None else t.siblings[0]
            if not any(u is first for u in made):
                made.append(first)

        def history(t) -> list:
            if t.layer is None:
                return [keras_name(t.input_layer), 0, 0]
            first = t if t.siblings is None else t.siblings[0]
            return [keras_name(t.layer), next(n for n, u in enumerate(calls[id(t.layer)]) if u is first), t.index]
        return calls, history

    def get_config(self) -> dict:
        """Keras 3.15's config of a functional model: each layer serialized with its calls in the graph (its
        ``inbound_nodes``: the Keras tensors each call took, each known by the layer, call and output that made
        it), and the layers whose outputs are the model's inputs and outputs."""
        calls, history = self.keras_histories()

        def tensor(t) -> dict:
            return {"class_name": "__keras_tensor__", "config": {
                "shape": _shapes([t.shape], False), "dtype": dtype_name(t.dtype), "keras_history": history(t)}}
        entries = []
        for layer in self.layers:
            if isinstance(layer, InputLayer):
                k = next(k for k in self.inputs if k.input_layer is layer)
                entries.append({"module": "keras.layers", "class_name": "InputLayer", "config": input_config(
                    k, keras_name(layer), layer.optional), "registered_name": None, "name": keras_name(layer),
                    "inbound_nodes": []})
                continue
            entry = _serialized_with_build(layer)
            entry["name"] = keras_name(layer)
            entry["inbound_nodes"] = [
                {"args": PythonTuple([[tensor(p) for p in t.inputs]] if t.listed else [tensor(p) for p in t.inputs]),
                 "kwargs": t.call_kwargs if t.call_kwargs is not None else {"mask": None} if isinstance(layer, Model)
                 else {} if type(layer).__name__ not in CALL_TRAINING else
                 {"training": CALL_TRAINING[type(layer).__name__]}}     # (a model's call: its mask)
                for t in calls.get(id(layer), [])]
            entries.append(entry)

        def ends(ts, many):
            found = [history(t) for t in ts]
            return found if many else found[0]
        outputs = ends(self.outputs, self.many_out)
        if self.output_keys is not None:         # (a dict of outputs: Keras's config keeps the dict, as given)
            by_key = dict(zip(self.output_keys, outputs))
            outputs = {k: by_key[k] for k in self.given_output_keys}
        return {"name": keras_name(self), "trainable": self.trainable, "layers": entries,
                "input_layers": ends(self.inputs, self.many_in), "output_layers": outputs}

    def attributes(self):
        out = super().attributes()
        out["inputs"] = lambda: list(self.inputs)
        out["outputs"] = lambda: list(self.outputs)
        out["input"] = lambda: list(self.inputs) if self.many_in else self.inputs[0]
        out["output"] = lambda: list(self.outputs) if self.many_out else self.outputs[0]
        out["input_shape"] = lambda: _shapes([k.shape for k in self.inputs], self.many_in)
        out["output_shape"] = lambda: _shapes([t.shape for t in self.outputs], self.many_out)
        out["output_names"] = lambda: [layer_name(t.layer or t.input_layer) for t in self.outputs]
        return out

    def output_shape(self, shape):
        """Its output's shape for an input of ``shape`` (a model as a layer of another): its graph's."""
        return (shape[0], *self.outputs[0].shape[1:])

    def layer_shapes(self):
        shapes = {id(k.input_layer): k.shape for k in self.inputs}
        for t in self.order:
            shapes[id(t.layer)] = t.shape if t.siblings is None else [o.shape for o in t.siblings]
        return [shapes.get(id(layer)) for layer in self.layers]

    def keyed(self, outs):
        """The outputs as the program gets them: a dict by the model's output keys where it was made with one."""
        if not self.output_keys or not isinstance(outs, list):
            return outs
        by_key = dict(zip(self.output_keys, outs))
        return {k: by_key[k] for k in self.given_output_keys}

    def apply(self, interp, x, training=None):
        if self.input_keys and isinstance(x, dict):
            x = [x[k] for k in self.input_keys]
        xs = list(x) if self.many_in and isinstance(x, (list, tuple)) else [x]
        if len(xs) != len(self.inputs):
            raise TdfValueError(f"this model takes {len(self.inputs)} inputs, got {len(xs)}")
        values = {id(k): ranked_as(model_input(v), k.shape) for k, v in zip(self.inputs, xs)}
        # A tensor's Keras mask (the next layer's input mask: an input's own too); where a layer deleted it
        # (MultiHeadAttention), the mask its graph computed for it, which Keras's node gives a layer called on it
        # alone that takes one
        masks: dict = {id(k): eager_mask(interp, v) for k, v in zip(self.inputs, xs)}
        deleted: dict = {}

        def settle(t):
            """t's value keeps a mask it has of its own (a model's output, called as a layer), as Keras's; else it
            carries t's mask, for the layers a program's layer calls on it."""
            own = eager_mask(interp, values[id(t)])
            if own is not None:
                masks[id(t)] = own
            elif masks.get(id(t)) is not None:
                keep_mask(interp, values[id(t)], masks[id(t)])

        def graph_mask(k):
            return deleted[id(k)] if id(k) in deleted else masks.get(id(k))

        def follow(t, compute):
            """The graph's mask of t's output where one of its inputs' masks was deleted (``compute`` of a lookup)."""
            if any(id(p) in deleted for p in t.inputs):
                found = compute(graph_mask)
                if found is not masks.get(id(t)):
                    deleted[id(t)] = found

        def run_arguments(t):
            """A layer's call with several arguments (once for all its outputs), its output's mask found before the
            call, as Keras's; the masks the call deletes (MultiHeadAttention's) deleted."""
            if id(t.arguments) not in values:
                def found(lookup):
                    return t.layer.arguments_mask(t.arguments, lambda k: values[id(k)], lookup)
                masks[id(t.arguments)] = found(lambda k: masks.get(id(k)))
                follow(t, found)
                values[id(t.arguments)] = t.layer.run_bound(interp, t.arguments, values, training, masks)
                for name in t.layer.clears_masks:
                    k = t.arguments.get(name)
                    if isinstance(k, KerasTensor) and masks.get(id(k)) is not None:
                        deleted.setdefault(id(k), masks.pop(id(k)))
                        forget_mask(interp, values[id(k)])
            got = values[id(t.arguments)]
            values[id(t)] = got if t.siblings is None else got[t.index]
            masks[id(t)] = None if t.index else masks[id(t.arguments)]
            if not t.index and id(t.arguments) in deleted:
                deleted[id(t)] = deleted[id(t.arguments)]

        for i, k in enumerate(self.inputs):
            got, want = values[id(k)].shape, k.shape
            if len(got) != len(want) or any(w is not None and w != g for w, g in zip(want, got)):
                made = getattr(k, "input_layer", None)
                raise TdfValueError(f"Input {i} with name '{keras_name(made) if made is not None else k.name}' of layer "
                                    f"'{keras_name(self)}' is incompatible with the layer: expected shape={want}, "
                                    f"found shape={tuple(got)}")
            keep_mask(interp, values[id(k)], masks[id(k)])
        for t in self.order:
            if t.call_kwargs:           # a program layer called with keywords: called with them again (Keras's node)
                self.apply_with_keywords(interp, t, values, masks, training)
            elif t.arguments is not None:
                run_arguments(t)
            elif t.spread:              # a program layer called on several Keras tensors: call(a, b)
                values[id(t)] = t.layer.apply_spread(interp, [values[id(p)] for p in t.inputs], training)
            elif t.siblings is not None and isinstance(t.layer, Functional):    # a model of several outputs
                if id(t.siblings) not in values:
                    xs = [values[id(p)] for p in t.inputs]
                    values[id(t.siblings)] = t.layer.apply(interp, xs if t.listed else xs[0], training)
                values[id(t)] = values[id(t.siblings)][t.index]
            elif t.listed:          # (a merging layer's: its inputs' masks, one each)
                xs = [values[id(p)] for p in t.inputs]
                values[id(t)], masks[id(t)] = t.layer.masked(interp, xs, training, [masks.get(id(p)) for p in t.inputs])
                follow(t, lambda lookup, t=t, xs=xs: t.layer.output_mask(xs, [lookup(p) for p in t.inputs]))
            elif t.siblings is not None or len(t.inputs) > 1:   # a recurrent call's states: given, or several outputs
                self.apply_recurrent(interp, t, values, masks, training)
            else:
                x = t.inputs[0]
                values[id(t)], masks[id(t)] = t.layer.masked(
                    interp, values[id(x)], training, graph_mask(x) if t.layer.takes_mask else masks.get(id(x)))
                follow(t, lambda lookup, t=t, x=x: t.layer.output_mask(values[id(x)], lookup(x)))
            settle(t)
        outs = [keep_mask(interp, values[id(t)], masks.get(id(t))) for t in self.outputs]    # (for the loss)
        return outs if self.many_out else outs[0]

    @staticmethod
    def apply_with_keywords(interp, t, values, masks, training):
        """A program layer's call of a graph made with keyword arguments: with them (and its input's mask where its
        call takes one), its output's mask as Layer.masked finds it."""
        xs = [values[id(p)] for p in t.inputs]
        first = t.inputs[0]
        mask = masks.get(id(first)) if t.layer.takes_mask and not t.listed else None
        values[id(t)] = t.layer.apply_spread(interp, [xs] if t.listed else xs, training, mask, keywords=t.call_kwargs)
        if not t.listed and len(xs) == 1:
            masks[id(t)] = t.layer.output_mask(xs[0], masks.get(id(first)))

    @staticmethod
    def apply_recurrent(interp, t, values, masks, training):
        """A recurrent layer's call of a graph given initial states (its inputs after the first), or giving its final
        states too (return_state: each output a Keras tensor of the one call, computed once)."""
        key = id(t.siblings if t.siblings is not None else t)
        if key not in values:
            x = t.inputs[0]
            values[key] = t.layer.apply(interp, values[id(x)], training, mask=masks.get(id(x)),
                                        initial_state=[values[id(p)] for p in t.inputs[1:]] or None)
            masks[key] = t.layer.output_mask(values[id(x)], masks.get(id(x)))
        values[id(t)] = values[key] if t.siblings is None else values[key][t.index]
        masks[id(t)] = mask_at(masks[key], t.index)

    def call(self, interp, args, kwargs, node):
        kwargs = dict(kwargs)
        training = kwargs.pop("training", None)
        x = args[0] if args else kwargs.pop("inputs", None)
        if x is None or len(args) > 1 or kwargs:
            raise TdfTypeError("a model is called with its inputs: model(x) or model(x, training=True)")
        xs = list(x) if self.many_in and isinstance(x, (list, tuple)) else [x]
        if self.input_keys and isinstance(x, dict) and all(isinstance(x.get(k), KerasTensor) for k in self.input_keys):
            x = xs = [x[k] for k in self.input_keys]       # (a dict of Keras tensors, by the model's input keys)
        if all(isinstance(v, KerasTensor) for v in xs):    # a model as a layer of a graph
            if len(xs) != len(self.inputs):
                raise TdfValueError(f"this model takes {len(self.inputs)} inputs, got {len(xs)}")
            outs = [KerasTensor((xs[0].shape[0], *t.shape[1:]), t.dtype, self, xs, listed=self.many_in)
                    for t in self.outputs]
            if self.many_out:       # (its outputs: one call of the model, run once for all: Functional.apply)
                for i, o in enumerate(outs):
                    o.index, o.siblings = i, tuple(outs)
            self.symbolic = (x, outs if self.many_out else outs[0])
            return self.keyed(outs) if self.many_out else outs[0]
        return self.keyed(self.apply(interp, x, None if training is None else flag(training)))


def ranked_as(x: Tensor, shape: tuple) -> Tensor:
    """An input of one rank more or less than its Input's, made of its rank where the extra axis is 1 (Keras's
    Functional._adjust_input_rank): a 1-D array fed to a model whose Input is (None, 1) gains that axis."""
    if x.ndim == len(shape) + 1 and x.shape[-1] == 1:
        return ops.reshape(x, x.shape[:-1])
    if x.ndim == len(shape) - 1 and shape[-1] == 1:
        return ops.reshape(x, (*x.shape, 1))
    return x


def _flattened_keys(structure: dict) -> list:
    """A dict's keys in the order Keras's tree.flatten takes its values: sorted, or as inserted where they do not
    sort (keys of several types)."""
    try:
        return sorted(structure)
    except TypeError:
        return list(structure)


def _shapes(shapes: list, many: bool):
    """A model's input_shape or output_shape: a shape (a tuple, None for an unknown dimension), a list of
    them for several."""
    out = [shape_tuple(shape) for shape in shapes]
    return out if many else out[0]


def _distinct(variables) -> list:
    """The variables in order, each once (a layer shared by two places of a model holds its weights once)."""
    out, seen = [], set()
    for v in variables:
        if v.id not in seen:
            seen.add(v.id)
            out.append(v)
    return out
