"""A program's ``keras.Model`` subclass built as a functional model, as Keras 3 builds it:
``CustomModel(inputs, outputs)`` (a subclass without ``__init__``) or ``super().__init__(inputs, outputs)``
in the subclass's ``__init__`` makes a functional model of that graph, whose methods the subclass may
override (``train_step``, ``test_step``, ``metrics``). The instance holds it as its ``inner`` object
(interpreter/classes.py): calling the instance runs the graph, its weights come first in its variables,
and it answers ``layers``, ``get_layer``, ``get_weights``, ``set_weights``, ``summary``, ``inputs``, ...
A subclass's ``super().__init__()`` without inputs and outputs (a Layer's, or a Model's that defines
``call``) sets nothing up, as before. A program's layer called on a Keras tensor is a node of a functional
graph (``layer_call``)."""
from __future__ import annotations

import numpy as np

from tapecli.errors import TdfTypeError
from tapecli.interpreter.conversions import truth
from tapecli.interpreter.objects import BoundMethod
from tapecli.library.keras import mixed_precision, models, training
from tapecli.interpreter.classes import KERAS, KERAS_MODEL, FrameworkBase, module_name
from tapecli.interpreter.objects import Function
from tapecli.library.keras.common import auto_name, call_argument, call_training, dims, method, name_scope
from tapecli.library.keras.configs import dtype_policy
from tapecli.library.keras.initializers import SeedGenerator
from tapecli.library.keras.input_spec import check_inputs
from tapecli.library.keras.layers import Layer, eager_mask, keep_mask
from tapecli.library.keras.keras_tensor import KerasTensor
from tapecli.library.keras.program_layers import keras_layer, program_mask, takes_mask
from tapecli.library.keras.stateless import stateless_values
from tapecli.runtime.context import current
from tapecli.runtime.tape import type_word
from tapecli.runtime.values import PythonBool, Tensor, Variable


def program_attribute(interp, instance, attr):
    """HOOKS["keras_model"]: the base's ``__init__``, else what training.program_attribute answers."""
    if attr == "__init__" and instance.cls.role is None:
        return method(attr, lambda *args, **kwargs: init(interp, instance, *args, **kwargs))
    if attr in ("input", "output") and instance.inner is None and instance.cls.role is None:
        return keras_layer(interp, instance).symbolic_end(attr == "output")     # (Keras's error where never called)
    if attr == "trainable" and instance.cls.role is None:        # (one never set: Keras's default)
        return PythonBool(np.array(True))
    if attr == "get_config" and instance.cls.role is None:       # Layer.get_config: what from_config passes back
        return method(attr, lambda: layer_config(interp, instance))
    if attr == "stateless_call" and instance.cls.role is None:
        return BoundMethod(attr, lambda node, *args, **kwargs: _stateless_call(interp, instance, node, *args,
                                                                               **kwargs))
    return training.program_attribute(interp, instance, attr)


def _stateless_call(interp, instance, node, trainable_variables, non_trainable_variables, *args, return_losses=False,
                    **kwargs):
    """Keras's ``stateless_call`` of a program's layer or model: its ``call`` with the values given standing in
    for its variables (stateless.py)."""
    def listed(name):
        return list(instance.get_attribute(interp, name, node))

    def call():
        outputs = interp.call_value(instance.get_attribute(interp, "call", node), list(args), kwargs, node)
        return outputs, (listed("losses") if return_losses else None)
    (outputs, losses), new = stateless_values(
        instance.cls.name, bool(getattr(instance, "keras_built", False)), listed("trainable_variables"),
        listed("non_trainable_variables"), trainable_variables, non_trainable_variables, call)
    return (outputs, new, losses) if return_losses else (outputs, new)


# Keras's Layer.__init__ keywords, with their defaults (the automatic config of a layer whose class has no __init__)
_LAYER_INIT = {"activity_regularizer": None, "trainable": PythonBool(np.array(True)), "dtype": None,
               "autocast": PythonBool(np.array(True))}


def layer_config(interp, instance) -> dict:
    """Keras's Layer.get_config of a program's layer: its name, then (where its class writes no get_config of its
    own) the arguments it was made with, then ``trainable`` and ``dtype``."""
    config = {"name": instance.keras_name or instance.label}
    if not isinstance(instance.cls.find("get_config")[0], Function):
        init = instance.cls.find("__init__")[0]
        found = _arguments(interp, instance, init)
        if found is None:
            raise TdfTypeError(f"Layer {instance.cls.name} was created with arguments Keras cannot put in a config "
                               "(other than str, int, float, bool and None): override get_config() and "
                               "from_config() to make it serializable")
        config.update(found)
        names = {p.name: p.kind for p in init.node.params} if isinstance(init, Function) else {"kwargs": "**"}
        if "name" not in names and names.get("kwargs") != "**":     # (Keras asks for a ``**kwargs`` by that name)
            config.pop("name")          # (the constructor cannot take it back)
    trainable = instance.attrs.get("trainable", PythonBool(np.array(True)))
    return {**config, "trainable": PythonBool(np.array(truth(trainable))), "dtype": dtype_policy()}


def _arguments(interp, instance, init) -> dict | None:
    """The arguments the layer was made with, as Keras's Operation keeps them: bound to its class's ``__init__``
    with its defaults (Keras's Layer's where the class has none), ``**kwargs`` spread, without ``self`` and
    ``name``; None where one is not a str, number, bool or None, or came through ``*args``."""
    model = instance.cls.derives_from(FrameworkBase(KERAS_MODEL, KERAS))
    # (Keras's Model is made without its arguments reaching Operation: a model's automatic config has the defaults)
    args, kwargs = ([], {}) if model else getattr(instance, "keras_arguments", ([], {}))
    if not isinstance(init, Function):
        found = {} if model else {**_LAYER_INIT, **kwargs}
    else:
        local: dict = {}
        init.bind(local, [instance, *args], kwargs, interp.eval)
        found = {}
        for p in init.node.params[1:]:
            if p.kind == "**":
                found.update(local[p.name])
            elif p.kind == "*" and local[p.name]:
                return None
            elif p.kind != "*":
                found[p.name] = local[p.name]
    found.pop("name", None)
    return found if all(_plain(v) for v in found.values()) else None


def _plain(value) -> bool:
    """Whether Keras puts the value in an automatic config: a str, Python number, bool or None, or a list, tuple or
    dict of them."""
    if isinstance(value, (list, tuple)):
        return all(_plain(v) for v in value)
    if isinstance(value, dict):
        return all(_plain(v) for v in value.values())
    return value is None or isinstance(value, (str, PythonBool)) or isinstance(value, Tensor) and value.weak \
        and value.ndim == 0


def _call_default(interp, instance, name: str):
    """The default of the program layer's ``call`` parameter ``name``, None where it has none."""
    call = instance.cls.find("call")[0]
    param = next((p for p in call.node.params if p.name == name), None) if isinstance(call, Function) else None
    return None if param is None or param.default is None else interp.eval(param.default, call.closure)


def set_trainable(interp, instance, value) -> None:
    """HOOKS["keras_trainable"]: Keras's trainable setter of a program's layer or model: the weights it made
    trainable (add_weight) and the layers it holds (its functional model's too) follow it."""
    on = bool(truth(value))
    made = getattr(instance, "keras_trainable_made", ())
    stack = list(instance.attrs.values()) + ([instance.inner] if instance.inner is not None else [])
    while stack:
        held = stack.pop()
        if isinstance(held, (list, tuple)):
            stack.extend(held)
        elif isinstance(held, Variable) and held.id in made:
            held.trainable = on
        elif isinstance(keras_layer(interp, held), Layer):
            keras_layer(interp, held).set_trainable(on)


def init(interp, instance, *args, inputs=None, outputs=None, name=None, trainable=True, input_shape=None, **ignored):
    """keras.Layer.__init__ and keras.Model.__init__: the name, given or Keras's automatic one (the class's in
    snake case, counted per run); ``input_shape`` (a Sequential's first layer's: the model's input); with inputs
    and outputs, a functional model; otherwise nothing to set up (the keywords a Layer takes, such as ``dtype`` or
    ``autocast``, change nothing here)."""
    if input_shape is not None:
        instance.keras_input_shape = (None, *dims(input_shape, "input_shape"))
    if instance.keras_name is None:
        if name is not None and not isinstance(name, str):
            raise TdfTypeError(f"name must be a string, got {type_word(name)}")
        instance.keras_name = name if name is not None else auto_name(interp, module_name(instance.cls.name))
    if not truth(trainable) and "trainable" not in instance.attrs:         # (Layer.__init__'s trainable=False)
        instance.set_attribute(interp, "trainable", PythonBool(np.array(False)), None)
    if len(args) > 2:
        raise TdfTypeError(f"Model.__init__ takes inputs and outputs, got {len(args)} positional arguments")
    inputs = args[0] if args else inputs
    outputs = args[1] if len(args) > 1 else outputs
    if inputs is None and outputs is None:
        mixed_precision.refuse_program_class(ignored.get("dtype"), instance.cls.name)
        return None
    if inputs is None or outputs is None:
        raise TdfTypeError("a functional model takes both inputs and outputs: Model(inputs, outputs)")
    instance.inner = models.Functional(interp, inputs, outputs, name=name, trainable=trainable)
    instance.keras_built = True
    return None


def _seed_generators(instance) -> list:
    """The SeedGenerators a program layer holds (in its attributes, its layers' and their lists'), and Keras's
    global one if the run has made it."""
    found, seen, stack = [], set(), [instance]
    while stack:
        value = stack.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, SeedGenerator):
            found.append(value)
        elif isinstance(value, (list, tuple)):
            stack.extend(value)
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif hasattr(value, "attrs") and hasattr(value, "cls"):          # a program object (Instance)
            stack.extend(value.attrs.values())
        elif isinstance(value, Layer):          # (a library layer's own: a Dropout's)
            found.extend(v for v in vars(value).values() if isinstance(v, SeedGenerator))
    if current().keras_seed_generator is not None:
        found.append(current().keras_seed_generator)
    return found


def _holds_layers(instance) -> bool:
    """Whether a program's layer holds layers (attributes, in lists too): Keras then builds it, where its class
    has no ``build``, by running its call (Layer._build_by_run)."""
    return any(isinstance(item, Layer) or (getattr(item, "cls", None) is not None and hasattr(item, "attrs"))
               for value in instance.attrs.values() for item in (value if isinstance(value, list) else [value]))


def layer_call(interp, instance, args, kwargs, node, run):
    """HOOKS["keras_call"]: Keras's ``Layer.__call__`` around a program layer's ``call`` (``run``): called on
    a Keras tensor (a functional model's graph) it gives the Keras tensor of its output, its shape found as
    Keras's compute_output_spec finds it, by calling the layer (here on ones, the batch of one); an outermost
    call first clears the ``add_loss`` values of the layer and the layers it holds, so ``layer.losses`` holds
    those of the last call."""
    spec = instance.attrs.get("input_spec")
    if spec and args:
        check_inputs(spec, args[0], keras_layer(interp, instance).display())
    # (a list of Keras tensors as the one argument: call(self, inputs) reads inputs[0], inputs[1])
    listed = len(args) == 1 and isinstance(args[0], (list, tuple)) and bool(args[0]) \
        and all(isinstance(a, KerasTensor) for a in args[0])
    symbolic = listed or bool(args) and all(isinstance(a, KerasTensor) for a in args)
    keras_args = list(args[0]) if listed else list(args)
    given = dict(kwargs)            # (Keras's node keeps them: the config's inbound_nodes)
    # Keras passes the first input's mask to a call that takes mask= (a Keras tensor's, or a tensor's _keras_mask)
    first = keras_args[0] if keras_args else None
    previous = kwargs.get("mask")
    if previous is None and not listed:
        previous = first.probe_mask() if symbolic else eager_mask(interp, first)
        if previous is not None and takes_mask(instance):
            kwargs = {**kwargs, "mask": previous}
    # (a layer first built here is built for the Keras tensor's shape, not its probe's: its build_config)
    built_for = None if not symbolic or getattr(instance, "keras_built", False) else \
        [a.shape for a in keras_args] if listed else first.shape
    if symbolic:
        probes = [a.probe() for a in keras_args]
        args = [probes] if listed else probes
    else:
        args, kwargs = call_argument(list(args)), call_argument(kwargs)
    depth = getattr(interp, "keras_call_depth", 0)
    if depth == 0 or symbolic:
        for part in training.adapter(interp, instance).nested():
            part.losses = []
    # Keras calls a layer on Keras tensors symbolically: nothing changes. The probe's changes to the variables
    # the layer holds and its draws from the run's generator are undone.
    saved = [(v, v.read().value.copy()) for v in instance.owned_variables()] if symbolic else []
    drawn = interp.rng.bit_generator.state if symbolic else None
    # (and its seed generators', and Keras's global one's: Keras traces a call in a StatelessScope)
    seeds = [(g, list(g.state)) for g in _seed_generators(instance)] if symbolic else []
    resolved = call_training(interp, depth, kwargs.get("training"))
    if resolved is not None and kwargs.get("training") is None:        # (its call context's, as Keras passes it)
        kwargs = {**kwargs, "training": PythonBool(np.array(resolved))}
    if "training" not in given:         # (its context's, else its call's default, as Keras's node records it)
        found = kwargs.get("training", _call_default(interp, instance, "training"))
        if found is not None:
            given["training"] = found
    interp.keras_call_depth = depth + 1
    try:
        with name_scope(interp, instance.keras_name or instance.label):
            out = run(interp, args, kwargs, node)
    finally:
        interp.keras_call_depth = depth
        for v, value in saved:
            v.assign(value)
        if drawn is not None:
            interp.rng.bit_generator.state = drawn
        for generator, state in seeds:
            generator.state = state
        if built_for is not None:
            instance.keras_build_shape = built_for
    if not symbolic:            # (an output with a mask keeps it: Keras's _set_mask_metadata)
        if not isinstance(out, Tensor) or eager_mask(interp, out) is not None:
            return out
        return keep_mask(interp, out, program_mask(interp, instance, first, previous))
    for part in training.adapter(interp, instance).nested():
        part.losses = []
    if not isinstance(out, (Tensor, Variable)):
        raise TdfTypeError(f"{instance.cls.name}.call on a Keras tensor must return one tensor, got {type_word(out)}")
    layer = keras_layer(interp, instance)
    if built_for is not None and instance.cls.find("build")[0] is None and _holds_layers(instance):
        KerasTensor.named(interp)       # (Keras builds it by running its call on a Keras tensor: one more named)
    x = keras_args[0]
    out = KerasTensor((x.shape[0], *out.shape[1:]), out.dtype, layer, keras_args, listed=listed)
    out.spread = not listed and len(keras_args) > 1
    out.call_kwargs = given
    layer.symbolic = (x if len(keras_args) == 1 else keras_args, out)     # (layer.input and layer.output)
    return out
