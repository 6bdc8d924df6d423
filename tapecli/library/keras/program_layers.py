"""A program's Keras layer (an instance of its ``keras.layers.Layer`` or ``keras.Model`` subclass) where the
library's models hold layers: in a functional graph, in a Sequential model."""
from __future__ import annotations

import numpy as np

from tapecli.interpreter.classes import KERAS, Instance
from tapecli.library.keras import training
from tapecli.library.keras.common import float_dtype
from tapecli.library.keras.layers import KerasTensor, Layer
from tapecli.runtime.values import PythonBool, Tensor


class ProgramLayer(Layer):
    """An instance of a program's Layer (or Model) subclass as a node of a functional graph: its weights
    are the instance's variables, its losses what its ``add_loss`` collected in the last call, and applying
    it calls the instance."""

    def __init__(self, interp, instance):      # (no automatic name: the instance has its label)
        self.interp, self.instance = interp, instance
        self.given = self.bound = self.path = self.input_shape = None
        self.weights_, self.built, self.trainable, self.rng = {}, True, True, interp.rng

    def as_program(self):
        return self.instance

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
        return self.instance.call(self.interp, [KerasTensor(tuple(shape), float_dtype())], {}, None).shape

    @property
    def weights(self):
        own = self.instance.owned_variables()
        return [v for v in own if v.trainable] + [v for v in own if not v.trainable]

    def set_trainable(self, value: bool) -> None:
        """Set as a layer held by a model: the instance's trainable, which its weights and layers follow."""
        self.trainable = value
        self.instance.set_attribute(self.interp, "trainable", PythonBool(np.array(value)), None)

    def own_losses(self) -> list:         # (a program's layer: its add_loss values and its layers' losses)
        return training.adapter(self.interp, self.instance).added_losses()

    def weight_penalties(self) -> list:
        return []

    def apply(self, interp, x, training_=None):
        return self.apply_spread(interp, [x], training_)

    def apply_spread(self, interp, xs, training_=None):
        kwargs = {} if training_ is None else {"training": Tensor(np.array(bool(training_)))}
        return self.instance.call(interp, list(xs), kwargs, None)


def keras_layer(interp, value):
    """A program's Layer (or Model) instance as the library's models hold it, its ProgramLayer (made once);
    any other value as it is."""
    if not (isinstance(value, Instance) and value.cls.framework == KERAS and value.cls.role is None):
        return value
    layer = getattr(value, "keras_layer", None)
    if layer is None:
        layer = value.keras_layer = ProgramLayer(interp, value)
    return layer
