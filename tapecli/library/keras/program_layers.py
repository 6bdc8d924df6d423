"""A program's Keras layer (an instance of its ``keras.layers.Layer`` or ``keras.Model`` subclass) where the
library's models hold layers: in a functional graph, in a Sequential model."""
from __future__ import annotations

import numpy as np

from tapecli.interpreter.classes import KERAS, Instance, call_method
from tapecli.interpreter.conversions import truth
from tapecli.interpreter.objects import Function
from tapecli.library.keras import training
from tapecli.library.keras.common import dims, float_dtype
from tapecli.library.keras.layers import Layer
from tapecli.library.keras.keras_tensor import KerasTensor, probing
from tapecli.runtime.values import PythonBool, Tensor


class ProgramLayer(Layer):
    """An instance of a program's Layer (or Model) subclass as a node of a functional graph: its weights
    are the instance's variables, its losses what its ``add_loss`` collected in the last call, and applying
    it calls the instance."""

    def __init__(self, interp, instance):      # (no automatic name: the instance has its label)
        self.interp, self.instance = interp, instance
        self.given = self.bound = self.path = None
        self.input_shape = getattr(instance, "keras_input_shape", None)     # (its input_shape=: subclassing.init)
        self.weights_, self.built, self.trainable, self.rng = {}, True, True, interp.rng

    def as_program(self):
        return self.instance

    @property
    def program_object(self) -> Instance:
        """The layer as its config is written from it (its class's get_config)."""
        return self.instance

    @property
    def build_shape(self):
        """The shape the layer was built for (a list of them for a list of inputs), as its build_config writes it."""
        shape = getattr(self.instance, "keras_build_shape", None)
        if isinstance(shape, list) and shape and all(isinstance(s, (list, tuple)) for s in shape):
            return [dims(s, "input_shape") for s in shape]
        return dims(shape, "input_shape")

    def display(self) -> str:
        return self.instance.keras_name or self.instance.label

    def rename(self) -> None:
        pass

    def call(self, interp, args, kwargs, node):
        out = self.instance.call(interp, args, kwargs, node)
        x = args[0] if args else kwargs.get("inputs")
        if isinstance(x, KerasTensor) and isinstance(out, KerasTensor):     # (its input and output, as a graph's)
            self.symbolic = (x, out)
        return out

    def build_for(self, shape, dtype) -> None:
        self.output_shape(shape)

    def output_shape(self, shape) -> tuple:
        """Found as Keras finds it, by calling the layer on a Keras tensor of that shape (which builds it)."""
        with probing(self.interp):
            return self.instance.call(self.interp, [KerasTensor(tuple(shape), float_dtype())], {}, None).shape

    @property
    def weights(self):
        own = self.instance.owned_variables()
        return [v for v in own if v.trainable] + [v for v in own if not v.trainable]

    def set_trainable(self, value: bool) -> None:
        """Set as a layer held by a model: the instance's trainable, which its weights and layers follow."""
        self.trainable = value
        self.instance.set_attribute(self.interp, "trainable", PythonBool(np.array(value)), None)

    def own_losses(self) -> list:         # (a program's layer: its add_loss values and its layers' activity losses)
        return training.adapter(self.interp, self.instance).own_losses()

    def weight_penalties(self) -> list:
        return training.adapter(self.interp, self.instance).weight_penalties()

    def apply(self, interp, x, training_=None, mask=None):
        return self.apply_spread(interp, [x], training_, mask)

    def apply_spread(self, interp, xs, training_=None, mask=None, keywords=None):
        """The instance called on values (``keywords``: those of its call in the graph, Keras's node's)."""
        kwargs = dict(keywords or {})
        if training_ is not None:           # (the model's call's training wins over its node's, as Keras's)
            kwargs["training"] = Tensor(np.array(bool(training_)))
        if mask is not None:
            kwargs["mask"] = mask
        return self.instance.call(interp, list(xs), kwargs, None)

    # masks, as Keras's Layer.__call__ passes them to a program's layer
    @property
    def takes_mask(self) -> bool:
        return takes_mask(self.instance)

    def output_mask(self, x, mask):
        return program_mask(self.interp, self.instance, x, mask)


def takes_mask(instance) -> bool:
    """Whether a program layer's ``call`` takes ``mask=`` (Keras then passes it its input's mask)."""
    call = instance.cls.find("call")[0]
    return isinstance(call, Function) and any(p.name == "mask" for p in call.node.params)


def program_mask(interp, instance, x, mask):
    """The mask of a program layer's output (Keras's ``_set_mask_metadata``): its class's compute_mask where it
    writes one, else its input's mask where it supports masking (``self.supports_masking = True``), else none."""
    found, owner = instance.cls.find("compute_mask")
    if isinstance(found, Function):
        return call_method(interp, found, owner, instance, [x, mask], {}, None)
    return mask if truth(instance.attrs.get("supports_masking", False)) else None


def keras_layer(interp, value):
    """A program's Layer (or Model) instance as the library's models hold it, its ProgramLayer (made once);
    any other value as it is."""
    if not (isinstance(value, Instance) and value.cls.framework == KERAS and value.cls.role is None):
        return value
    layer = getattr(value, "keras_layer", None)
    if layer is None:
        layer = value.keras_layer = ProgramLayer(interp, value)
    return layer
