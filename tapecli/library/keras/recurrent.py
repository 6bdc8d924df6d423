"""Keras 3 SimpleRNN, LSTM and GRU (one layer, zero initial state, ``return_sequences``, ``return_state``),
composed from recorded ops so gradients flow as TensorFlow's do."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import ShapeError, TdfValueError
from tapecli.library.keras import initializers
from tapecli.library.keras.common import flag, integer, scalar
from tapecli.library.keras.layers import Layer, activation_fn
from tapecli.runtime.values import Tensor

_ALL = slice(None)


class _RNN(Layer):
    replayable = True
    gates = 1

    def __init__(self, interp, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal", bias_initializer="zeros",
                 return_sequences=False, return_state=False, **kw):
        super().__init__(interp, **kw)
        self.return_state = flag(return_state)
        if self.return_state:
            self.replayable = False        # (a list of results: a loop plan takes one tensor from a layer)
        self.units = integer(units, "units")
        if self.units <= 0:
            raise TdfValueError(f"{type(self).__name__} needs a positive number of units, got {self.units}")
        self.activation = activation_fn(activation, interp)
        self.recurrent_activation = activation_fn(recurrent_activation, interp)
        self.use_bias, self.return_sequences = flag(use_bias), flag(return_sequences)
        self.inits = [initializers.get(i) for i in (kernel_initializer, recurrent_initializer, bias_initializer)]

    def weight_names(self):
        return ("kernel", "recurrent_kernel", "bias")

    def check_input(self, x):
        if x.ndim != 3:
            raise ShapeError(f"{type(self).__name__} takes inputs of shape [batch, timesteps, features], "
                             f"got shape {list(x.shape)}")

    def bias_shape(self):
        return (self.gates * self.units,)

    def build(self, shape, dtype):
        g = self.gates * self.units
        self.add_weight("kernel", (shape[-1], g), self.inits[0], dtype)
        self.add_weight("recurrent_kernel", (self.units, g), self.inits[1], dtype)
        if self.use_bias:
            self.add_weight("bias", self.bias_shape(), self.inits[2], dtype)

    def output_shape(self, shape):
        if self.return_state:
            raise TdfValueError(f"{type(self).__name__}(return_state=True) in a functional model is not supported "
                                "yet", hint="call the layer on a tensor")
        return (shape[0], shape[1], self.units) if self.return_sequences else (shape[0], self.units)

    def act(self, f, x):
        return x if f is None else f(x)

    def forward(self, interp, x, training):
        state = self.initial_state(x)
        outputs = []
        for t in range(x.shape[1]):
            h, state = self.step(ops.getitem(x, (_ALL, t)), state)
            outputs.append(h)
        if not outputs:
            raise ShapeError(f"{type(self).__name__} needs at least one timestep")
        output = ops.stack(outputs, axis=1) if self.return_sequences else outputs[-1]
        if self.return_state:           # the output, then the final state (an LSTM's: h, then the carry c)
            return [output, *(state if isinstance(state, tuple) else (state,))]
        return output

    def initial_state(self, x):
        return Tensor(np.zeros((x.shape[0], self.units), dtype=x.dtype))


class SimpleRNN(_RNN):
    prefix = "simple_rnn"

    def step(self, x_t, h):
        w = self.weights_
        z = ops.matmul(x_t, w["kernel"])
        if self.use_bias:
            z = ops.add(z, w["bias"])
        out = self.act(self.activation, ops.add(z, ops.matmul(h, w["recurrent_kernel"])))
        return out, out


class LSTM(_RNN):
    prefix = "lstm"
    gates = 4

    def __init__(self, interp, units, unit_forget_bias=True, **kw):
        super().__init__(interp, units, **kw)
        self.unit_forget_bias = flag(unit_forget_bias)

    def build(self, shape, dtype):
        super().build(shape, dtype)
        if self.use_bias and self.unit_forget_bias:
            b = self.weights_["bias"]
            value = b.read().value.copy()
            value[self.units:2 * self.units] = 1
            b.assign(value)

    def initial_state(self, x):
        zero = super().initial_state(x)
        return (zero, zero)

    def step(self, x_t, state):
        h, c = state
        w, u = self.weights_, self.units
        z = ops.add(ops.matmul(x_t, w["kernel"]), ops.matmul(h, w["recurrent_kernel"]))
        if self.use_bias:
            z = ops.add(z, w["bias"])
        z0, z1, z2, z3 = (ops.getitem(z, (_ALL, slice(k * u, (k + 1) * u))) for k in range(4))
        ra = self.recurrent_activation
        i, f, o = self.act(ra, z0), self.act(ra, z1), self.act(ra, z3)
        c = ops.add(ops.mul(f, c), ops.mul(i, self.act(self.activation, z2)))
        h = ops.mul(o, self.act(self.activation, c))
        return h, (h, c)


class GRU(_RNN):
    prefix = "gru"
    gates = 3

    def __init__(self, interp, units, reset_after=True, **kw):
        super().__init__(interp, units, **kw)
        self.reset_after = flag(reset_after)

    def bias_shape(self):
        return (2, 3 * self.units) if self.reset_after else (3 * self.units,)

    def step(self, x_t, h):
        w, u = self.weights_, self.units

        def cols(t, k, n=1):
            return ops.getitem(t, (_ALL, slice(k * u, (k + n) * u)))
        mx = ops.matmul(x_t, w["kernel"])
        rk = w["recurrent_kernel"]
        rec_bias = None
        if self.use_bias:
            if self.reset_after:
                mx = ops.add(mx, ops.getitem(w["bias"], 0))
                rec_bias = ops.getitem(w["bias"], 1)
            else:
                mx = ops.add(mx, w["bias"])
        if self.reset_after:
            inner = ops.matmul(h, rk)
            if rec_bias is not None:
                inner = ops.add(inner, rec_bias)
        else:
            inner = ops.matmul(h, ops.getitem(rk, (_ALL, slice(0, 2 * u))))
        ra = self.recurrent_activation
        z = self.act(ra, ops.add(cols(mx, 0), cols(inner, 0)))
        r = self.act(ra, ops.add(cols(mx, 1), cols(inner, 1)))
        if self.reset_after:
            rh = ops.mul(r, cols(inner, 2))
        else:
            rh = ops.matmul(ops.mul(r, h), ops.getitem(rk, (_ALL, slice(2 * u, 3 * u))))
        hh = self.act(self.activation, ops.add(cols(mx, 2), rh))
        one = scalar(1.0, hh.dtype)
        new = ops.add(ops.mul(z, h), ops.mul(ops.sub(one, z), hh))
        return new, new


LAYERS = [SimpleRNN, LSTM, GRU]
