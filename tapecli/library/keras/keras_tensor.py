"""Keras's KerasTensor: the symbolic tensor of a functional model's graph (its shape, dtype, name and the layer
call that made it), its operators as keras.ops calls, and the masks the layers before it give."""
from __future__ import annotations

import contextlib

import numpy as np

from tapecli.errors import NoAttribute, TdfTypeError
from tapecli.interpreter.classes import Namespace
from tapecli.interpreter.objects import ProgramObject
from tapecli.library.keras.common import auto_name
from tapecli.runtime.values import Tensor

KERAS_MASK = "_keras_mask"      # the one private attribute of a tensor a program reads (its Keras mask)


def mask_at(mask, index: int):
    """The mask of a layer's output ``index`` from its compute_mask's (Keras's: a list of one per output, or the
    first output's alone)."""
    if isinstance(mask, (list, tuple)):
        return mask[index] if index < len(mask) else None
    return mask if index == 0 else None


class KerasTensor(ProgramObject):
    """A symbolic tensor of a functional model: a shape, and the layer call that made it. A program reads its
    ``shape`` (a tuple, None for the batch), ``dtype`` (a name) and ``ndim``, as Keras's KerasTensor has them."""

    kind_word = "a Keras tensor"

    @staticmethod
    def python_class() -> str:
        return "keras.src.backend.common.keras_tensor.KerasTensor"

    # one of the outputs of a layer call that gives several (a recurrent layer's with return_state, an attention
    # layer's scores): its place, and the call's outputs, computed once (None: the call's only output)
    index, siblings = 0, None
    # the keyword arguments of a program layer's call that made it, as Keras's node keeps them (its config's
    # inbound_nodes: what from_config calls the layer with again); None: a built-in layer's call
    call_kwargs = None
    # Keras's name: an Input's given one, else keras_tensor, keras_tensor_1, ... in the order Keras makes them (an
    # Input, each output of a layer call, a mask a layer computes with ops: KerasTensor.named); None: a tensor
    # tapecli makes to find a shape, which Keras does not make
    name = None

    def __init__(self, shape, dtype, layer=None, inputs=None, listed=False):
        self.shape, self.dtype, self.layer, self.inputs = tuple(shape), dtype, layer, inputs or []
        self.listed = listed          # the layer takes its inputs as one list (merging layers)
        self.spread = False           # the layer takes its inputs as positional arguments (a program's layer)
        self.arguments = None         # a call of a layer with several arguments (Layer.call_arguments): them
        if layer is not None:         # (an output of a layer's call)
            self.name = KerasTensor.named(layer.interp)

    @staticmethod
    def named(interp) -> str | None:
        """The name Keras gives the next Keras tensor it makes without one (its auto_name, counted per run as a
        layer's are: keras.backend.clear_session starts it again); None while tapecli calls a layer on Keras
        tensors only to find a shape (``probing``), where Keras makes none."""
        if getattr(interp, "keras_probing", 0):
            return None
        return auto_name(interp, "keras_tensor")

    def python_text(self) -> str:
        """Keras's repr (and str) of a KerasTensor."""
        shape = "(" + ", ".join(str(d) for d in self.shape) + ("," if len(self.shape) == 1 else "") + ")"
        dtype = getattr(self.dtype, "name", self.dtype) or "float32"
        return f"<KerasTensor shape={shape}, dtype={dtype}, sparse=False, ragged=False, name={self.name}>"

    def probe(self) -> Tensor:
        """Ones of this shape, a batch of one: what a layer is called on to find its output's shape, as Keras's
        compute_output_spec finds it by calling the layer."""
        return Tensor(np.ones([1 if d is None else d for d in self.shape], dtype=self.dtype))

    def probe_mask(self):
        """The mask of :meth:`probe` where the layers before this tensor give one (Keras passes a Keras tensor's
        mask to a layer's call as it does a tensor's), else None."""
        if self.layer is None or self.spread:
            return None
        if self.arguments is not None:
            return mask_at(self.layer.arguments_mask(self.arguments, KerasTensor.probe, KerasTensor.probe_mask),
                           self.index)
        if self.listed:
            masks = [x.probe_mask() for x in self.inputs]
            return None if all(m is None for m in masks) else \
                mask_at(self.layer.output_mask([x.probe() for x in self.inputs], masks), self.index)
        x = self.inputs[0]      # (a recurrent layer's states given after it)
        return mask_at(self.layer.output_mask(x.probe(), x.probe_mask()), self.index)

    def get_attribute(self, interp, attr: str, node):
        if attr == "shape":
            return tuple(None if d is None else int(d) for d in self.shape)
        if attr == "dtype":
            return str(getattr(self.dtype, "name", self.dtype) or "float32")
        if attr == "ndim":
            return Tensor(np.array(len(self.shape), dtype=np.int64), weak=True)
        if attr == KERAS_MASK:        # (Keras's Keras tensor has one where the layers before it give a mask)
            mask = self.probe_mask()
            if mask is None:
                raise NoAttribute(f"'KerasTensor' object has no attribute '{KERAS_MASK}'")
            return KerasTensor((self.shape[0], *mask.shape[1:]), np.dtype(np.bool_))
        if attr == "name" and self.name is not None:
            return self.name
        return super().get_attribute(interp, attr, node)

    def operator(self, op: str, other, reflected: bool):
        """``h + Dense(8)(h)``, ``2.0 * h``...: a node of the keras.ops function Keras's KerasTensor operator calls
        (interpreter/objects.py's object_operator); ``==`` is Python's identity, as Keras defines no __eq__."""
        name = _OPERATOR_OPS.get(op)
        if name is None:
            return NotImplemented
        return self.keras_op(name, *((other, self) if reflected else (self, other)))

    def negated(self):
        return self.keras_op("negative", self)

    def getitem(self, key: tuple):
        return self.keras_op("get_item", self, key[0] if len(key) == 1 else key)

    def keras_op(self, name: str, *args):
        made = self.layer if self.layer is not None else getattr(self, "input_layer", None)
        if made is None:
            raise TdfTypeError(f"tapecli computes keras.ops.{name} of a Keras tensor of a functional model's graph "
                               "only (one a layer or keras.Input made)")
        return Namespace("keras.ops").get_attribute(made.interp, name, None)(made.interp, *args)


@contextlib.contextmanager
def probing(interp):
    """A layer called on Keras tensors only to find its output's shape (Keras finds it without making any): the
    Keras tensors made meanwhile take no names (KerasTensor.named)."""
    interp.keras_probing = getattr(interp, "keras_probing", 0) + 1
    try:
        yield
    finally:
        interp.keras_probing -= 1


# The keras.ops function of each operator of Keras's KerasTensor (keras/src/backend/common/keras_tensor.py)
_OPERATOR_OPS = {"+": "add", "-": "subtract", "*": "multiply", "/": "true_divide", "//": "floor_divide",
                 "%": "mod", "**": "power", "@": "matmul", "<": "less", "<=": "less_equal", ">": "greater",
                 ">=": "greater_equal", "!=": "not_equal", "&": "logical_and", "|": "logical_or",
                 "^": "logical_xor"}
