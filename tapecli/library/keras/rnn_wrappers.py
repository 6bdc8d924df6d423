"""Keras 3's layer wrappers of keras/src/layers/rnn: Bidirectional (a recurrent layer and its copy running backwards,
their outputs merged) and TimeDistributed (a layer applied to every timestep)."""
from __future__ import annotations

from tapecli import ops
from tapecli.errors import TdfValueError
from tapecli.interpreter.registry import BUILTINS
from tapecli.library.keras.common import name_scope, scalar, tensor
from tapecli.library.keras.configs import deserialize_layer, layer_config, serialize_held
from tapecli.library.keras.layers import Layer
from tapecli.library.keras.recurrent import _Recurrent
from tapecli.runtime.tape import type_word
from tapecli.runtime.values import PythonTuple

_MERGE_MODES = ("sum", "mul", "ave", "concat", None)


def _remade(interp, made, **changes):
    """A layer (or cell) made again from the arguments it was made with (Keras's deserialized config), cells
    included, so that it shares nothing with the original."""
    arguments = dict(made.given_arguments)
    for key in ("cell", "cells"):
        if key in arguments:
            cells = arguments[key]
            arguments[key] = [_remade(interp, c) for c in cells] if isinstance(cells, (list, tuple)) else \
                _remade(interp, cells)
    arguments["name"] = made.given or made.auto
    arguments.update(changes)
    return BUILTINS[type(made).__name__](interp, **arguments)


def _wrapped(interp, layer, wrapper):
    if isinstance(layer, dict):             # (a serialized layer: from_config's)
        layer = deserialize_layer(interp, layer)
    if not isinstance(layer, Layer):
        raise TdfValueError(f"Please initialize `{wrapper}` layer with a `keras.layers.Layer` instance. Received: "
                            f"{type_word(layer)}")
    return layer


class Bidirectional(Layer):
    prefix = "bidirectional"
    replayable = True
    takes_mask = True
    supports_masking = True

    def __init__(self, interp, layer, merge_mode="concat", backward_layer=None, **kw):
        layer = _wrapped(interp, layer, "Bidirectional")
        if isinstance(backward_layer, dict):
            backward_layer = deserialize_layer(interp, backward_layer)
        if not isinstance(layer, _Recurrent):
            raise TdfValueError(f"tapecli's Bidirectional wraps a recurrent layer (SimpleRNN, LSTM, GRU, RNN), got "
                                f"{type(layer).__name__}")
        if backward_layer is not None and not isinstance(backward_layer, Layer):
            raise TdfValueError(f"`backward_layer` need to be a `keras.layers.Layer` instance. Received: "
                                f"{type_word(backward_layer)}")
        if merge_mode not in _MERGE_MODES:
            raise TdfValueError(f"Invalid merge mode. Received: {merge_mode}. Merge mode should be one of "
                                '{"sum", "mul", "ave", "concat", None}')
        super().__init__(interp, **kw)
        # (made again from the layer's arguments, as Keras's from its config: they share no state with it)
        name = layer.given or layer.auto
        self.forward_layer = _remade(interp, layer, name=f"forward_{name.removeprefix('forward_')}")
        self.backward_layer = backward_layer if backward_layer is not None else _remade(
            interp, layer, name=f"backward_{name.removeprefix('backward_')}", go_backwards=not layer.go_backwards)
        if self.forward_layer.go_backwards == self.backward_layer.go_backwards:
            raise TdfValueError(f"Forward layer and backward layer should have different `go_backwards` value. "
                                f"Received: forward_layer.go_backwards {self.forward_layer.go_backwards}, "
                                f"backward_layer.go_backwards={self.backward_layer.go_backwards}")
        for a in ("return_sequences", "return_state"):
            f, b = getattr(self.forward_layer, a), getattr(self.backward_layer, a)
            if f != b:
                raise TdfValueError(f'Forward layer and backward layer are expected to have the same value for '
                                    f'attribute "{a}", got "{f}" for forward layer and "{b}" for backward layer')
        for half in (self.forward_layer, self.backward_layer):      # (Keras's: zero outputs where masked)
            half.zero_output_for_mask = half.return_sequences
        self.merge_mode = merge_mode
        self.return_sequences, self.return_state = layer.return_sequences, layer.return_state
        if self.return_state or merge_mode is None:
            self.replayable = False        # (a list of results)

    @property
    def weights(self):
        return self.forward_layer.weights + self.backward_layer.weights

    def sublayers(self) -> list:
        return [self.forward_layer, self.backward_layer]

    def attributes(self):
        return {**super().attributes(), "forward_layer": lambda: self.forward_layer,
                "backward_layer": lambda: self.backward_layer, "merge_mode": lambda: self.merge_mode}

    def rename(self):
        self.forward_layer.rename()
        self.backward_layer.rename()

    def get_config(self):
        return {**layer_config(self), "layer": serialize_held(self.forward_layer),
                "backward_layer": serialize_held(self.backward_layer)}

    def check_input(self, x):
        self.forward_layer.check_input(x, self.given or self.auto)

    def build(self, shape, dtype):
        with name_scope(self.interp, self.given or self.auto):
            self.forward_layer.build_for(shape, dtype)
            self.backward_layer.build_for(shape, dtype)

    def output_shape(self, shape):
        if self.return_state or self.merge_mode is None:
            raise TdfValueError("this Bidirectional layer gives several outputs: call it on a Keras tensor of a "
                                "functional model, or on a tensor")
        return self.output_shapes(shape)[0]

    def output_shapes(self, shape) -> list:
        """Its outputs' shapes (Keras's compute_output_shape): the merged output (or both), then the states."""
        out, *states = self.forward_layer.output_shapes(shape)
        outputs = [out, out] if self.merge_mode is None else \
            [(*out[:-1], 2 * out[-1]) if self.merge_mode == "concat" else out]
        return outputs + states + states

    def compute_mask(self, x, mask):
        """Keras's: the mask of the merged output (of each of the two without merge_mode), where it returns
        sequences; its states have none."""
        mask = mask[0] if isinstance(mask, (list, tuple)) else mask
        out = mask if self.return_sequences else None
        return out if self.merge_mode is not None else PythonTuple([out, out])

    # (its mask= and initial_state=, as a recurrent layer's)
    call, symbolic_call, replay_kind = _Recurrent.call, _Recurrent.symbolic_call, _Recurrent.replay_kind

    def forward(self, interp, x, training, mask=None, initial_state=None):
        halves = (None, None)
        if initial_state is not None:       # (the forward layer's states, then the backward layer's)
            half = len(initial_state) // 2
            halves = (initial_state[:half], initial_state[half:])
        y = self.forward_layer.apply(interp, x, training, mask=mask, initial_state=halves[0])
        y_rev = self.backward_layer.apply(interp, x, training, mask=mask, initial_state=halves[1])
        states = []
        if self.return_state:
            states, y, y_rev = y[1:] + y_rev[1:], y[0], y_rev[0]
        if self.return_sequences:
            y_rev = ops.reverse(y_rev, [1])
        if self.merge_mode == "concat":
            output = [ops.concat([y, y_rev], axis=-1)]
        elif self.merge_mode == "sum":
            output = [ops.add(y, y_rev)]
        elif self.merge_mode == "ave":
            output = [ops.div(ops.add(y, y_rev), scalar(2.0, y.dtype))]
        elif self.merge_mode == "mul":
            output = [ops.mul(y, y_rev)]
        else:
            output = [y, y_rev]
        return output + states if len(output) + len(states) > 1 else output[0]


class TimeDistributed(Layer):
    prefix = "time_distributed"
    replayable = True
    supports_masking = True

    def __init__(self, interp, layer, **kw):
        self.layer = _wrapped(interp, layer, "TimeDistributed")
        super().__init__(interp, **kw)
        self.replayable = getattr(layer, "replayable", False)

    @property
    def weights(self):
        return self.layer.weights

    def sublayers(self) -> list:
        return [self.layer]

    def attributes(self):
        return {**super().attributes(), "layer": lambda: self.layer.as_program()}

    def rename(self):
        self.layer.rename()

    def get_config(self):
        return {**layer_config(self), "layer": serialize_held(self.layer)}

    @staticmethod
    def child_shape(shape):
        if len(shape) < 3:
            raise TdfValueError(f"`TimeDistributed` Layer should be passed an `input_shape` with at least 3 "
                             f"dimensions, received: {tuple(shape)}")
        return (shape[0], *shape[2:])

    def check_input(self, x):
        self.child_shape(x.shape)

    def build(self, shape, dtype):
        with name_scope(self.interp, self.given or self.auto):
            self.layer.build_for(self.child_shape(shape), dtype)

    def output_shape(self, shape):
        child = self.layer.output_shape(self.child_shape(shape))
        return (child[0], shape[1], *child[1:])

    takes_mask = True               # (Keras's: a wrapped layer that takes one gets each timestep's)

    def forward(self, interp, x, training, mask=None):
        if mask is not None:
            mask = tensor(mask)
            if mask.ndim < 2:
                raise TdfValueError("The `mask` passed to the `TimeDistributed` layer must be at least 2D (e.g., "
                                    f"`(batch_size, timesteps)`), but it has {mask.ndim} dimension(s) with shape "
                                    f"{mask.shape}.")
            if mask.shape[:2] != x.shape[:2]:
                raise TdfValueError(f"The `mask` passed to the `TimeDistributed` layer has a shape {mask.shape} that "
                                    f"is incompatible with the input shape {x.shape}. The first two dimensions of "
                                    "the mask (batch size and timesteps) must match the input's first two "
                                    f"dimensions. Expected mask shape prefix: ({x.shape[0]}, {x.shape[1]}).")

        def step(t):
            given = {"mask": ops.getitem(mask, (slice(None), t))} if mask is not None and self.layer.takes_mask \
                else {}
            return self.layer.apply(interp, ops.getitem(x, (slice(None), t)), training, **given)
        # (one call per timestep, stacked: Keras's loop where the number of timesteps is known)
        return ops.stack([step(t) for t in range(x.shape[1])], axis=1)


LAYERS = [Bidirectional, TimeDistributed]
