"""Keras 3 SimpleRNN, LSTM and GRU (one layer, zero initial state, ``return_sequences``, ``return_state``), and Conv2D /
MaxPooling2D (channels last), composed from recorded ops so gradients flow as TensorFlow's do."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import ShapeError, TdfValueError
from tapecli.library.keras import initializers
from tapecli.library.keras.common import dims, flag, integer, scalar
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


def _pair(value, what):
    d = dims([value, value] if isinstance(value, (int, float)) or (isinstance(value, Tensor) and value.ndim == 0)
             else value, what)
    if len(d) != 2:
        raise TdfValueError(f"{what} must be one integer or two, got {list(d)}")
    return d


def _padding(value):
    value = str(value).lower()
    if value not in ("valid", "same"):
        raise TdfValueError(f'padding must be "valid" or "same", got {value!r}')
    return value


def _windows(n, k, s, padding):
    """Output size and (before, after) padding of one spatial dimension, as TensorFlow's."""
    if padding == "valid":
        return (n - k + s) // s, (0, 0)
    out = (n + s - 1) // s
    need = max(0, (out - 1) * s + k - n)
    return out, (need // 2, need - need // 2)


def _patches(x, k, s, padding, fill):
    """Every window of x ([N, H, W, C]) as a tensor [N, OH, OW, kh*kw, C] made of recorded slices."""
    (oh, ph), (ow, pw) = _windows(x.shape[1], k[0], s[0], padding), _windows(x.shape[2], k[1], s[1], padding)
    if any(ph) or any(pw):
        n, h, w, c = x.shape
        pad = np.full((n, ph[0], w, c), fill, dtype=x.dtype), np.full((n, ph[1], w, c), fill, dtype=x.dtype)
        x = ops.concat([Tensor(pad[0]), x, Tensor(pad[1])], axis=1)
        h = x.shape[1]
        pad = np.full((n, h, pw[0], c), fill, dtype=x.dtype), np.full((n, h, pw[1], c), fill, dtype=x.dtype)
        x = ops.concat([Tensor(pad[0]), x, Tensor(pad[1])], axis=2)
    if oh <= 0 or ow <= 0:
        raise ShapeError(f"a window of {list(k)} does not fit inputs of shape {list(x.shape)}")
    w = ops.windows(x, tuple(k), tuple(s))
    return ops.reshape(w, (w.shape[0], oh, ow, k[0] * k[1], w.shape[5])), oh, ow


class Conv2D(Layer):
    replayable = True
    prefix = "conv2d"

    def __init__(self, interp, filters, kernel_size, strides=(1, 1), padding="valid", activation=None,
                 use_bias=True, kernel_initializer="glorot_uniform", bias_initializer="zeros", **kw):
        super().__init__(interp, **kw)
        self.filters = integer(filters, "filters")
        self.kernel_size, self.strides = _pair(kernel_size, "kernel_size"), _pair(strides, "strides")
        self.padding = _padding(padding)
        self.activation = activation_fn(activation, interp)
        self.use_bias = flag(use_bias)
        self.inits = [initializers.get(kernel_initializer), initializers.get(bias_initializer)]

    def weight_names(self):
        return ("kernel", "bias")

    def check_input(self, x):
        if x.ndim != 4:
            raise ShapeError(f"Conv2D takes inputs of shape [batch, height, width, channels], got {list(x.shape)}")

    def build(self, shape, dtype):
        self.add_weight("kernel", (*self.kernel_size, shape[-1], self.filters), self.inits[0], dtype)
        if self.use_bias:
            self.add_weight("bias", (self.filters,), self.inits[1], dtype)

    def output_shape(self, shape):
        oh = None if shape[1] is None else _windows(shape[1], self.kernel_size[0], self.strides[0], self.padding)[0]
        ow = None if shape[2] is None else _windows(shape[2], self.kernel_size[1], self.strides[1], self.padding)[0]
        return (shape[0], oh, ow, self.filters)

    def forward(self, interp, x, training):
        p, oh, ow = _patches(x, self.kernel_size, self.strides, self.padding, 0.0)
        kh, kw = self.kernel_size
        # every window a row: one product (and the kernel's gradient one product), not one per image row
        cols = ops.reshape(p, (x.shape[0] * oh * ow, kh * kw * x.shape[3]))
        kernel = ops.reshape(self.weights_["kernel"], (kh * kw * x.shape[3], self.filters))
        y = ops.reshape(ops.matmul(cols, kernel), (x.shape[0], oh, ow, self.filters))
        if self.use_bias:
            y = ops.add(y, self.weights_["bias"])
        return y if self.activation is None else self.activation(y)


class MaxPooling2D(Layer):
    replayable = True
    prefix = "max_pooling2d"

    def __init__(self, interp, pool_size=(2, 2), strides=None, padding="valid", **kw):
        super().__init__(interp, **kw)
        self.pool_size = _pair(pool_size, "pool_size")
        self.strides = self.pool_size if strides is None else _pair(strides, "strides")
        self.padding = _padding(padding)

    def output_shape(self, shape):
        oh = None if shape[1] is None else _windows(shape[1], self.pool_size[0], self.strides[0], self.padding)[0]
        ow = None if shape[2] is None else _windows(shape[2], self.pool_size[1], self.strides[1], self.padding)[0]
        return (shape[0], oh, ow, shape[3])

    def check_input(self, x):
        if x.ndim != 4:
            raise ShapeError(f"MaxPooling2D takes inputs of shape [batch, height, width, channels], "
                             f"got {list(x.shape)}")

    def forward(self, interp, x, training):
        return ops.max_pool2d(x, self.pool_size, self.strides, self.padding.upper())


LAYERS = [SimpleRNN, LSTM, GRU, Conv2D, MaxPooling2D]
