"""Keras 3's convolution layers (keras/src/layers/convolutional), channels last, composed from recorded ops (every
window gathered, then one product with the kernel) so gradients flow as TensorFlow's do."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import ShapeError, TdfValueError
from tapecli.library.keras import initializers
from tapecli.library.keras.common import dims, flag, integer
from tapecli.library.keras.layers import Layer, activation_fn
from tapecli.library.keras.spatial import _rank
from tapecli.runtime.values import Tensor


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


def _one(value, what):
    v = value[0] if isinstance(value, (list, tuple)) and len(value) == 1 else value
    return integer(v, what)



class _As2D:
    """A 1-D layer run as its 2-D twin on inputs [N, 1, L, C]."""

    def check_input(self, x):
        _rank(self, x, 3)

    def output_shape(self, shape):
        out = super().output_shape((shape[0], 1, *shape[1:]))
        return (out[0], *out[2:])

    def forward(self, interp, x, training):
        y = super().forward(interp, ops.reshape(x, (x.shape[0], 1, *x.shape[1:])), training)
        return ops.reshape(y, (y.shape[0], *y.shape[2:]))


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


class Conv1D(_As2D, Conv2D):
    prefix = "conv1d"

    def __init__(self, interp, filters, kernel_size, strides=1, padding="valid", data_format=None, dilation_rate=1,
                 groups=1, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", **kw):
        if _one(dilation_rate, "dilation_rate") != 1 or integer(groups, "groups") != 1 or \
                data_format not in (None, "channels_last"):
            raise TdfValueError("Conv1D: tapecli supports dilation_rate=1, groups=1 and channels_last only")
        causal = str(padding).lower() == "causal"
        super().__init__(interp, filters, (1, _one(kernel_size, "kernel_size")), (1, _one(strides, "strides")),
                         "valid" if causal else padding, activation=activation, use_bias=use_bias,
                         kernel_initializer=kernel_initializer, bias_initializer=bias_initializer, **kw)
        self.causal = causal

    def build(self, shape, dtype):
        self.add_weight("kernel", (self.kernel_size[1], shape[-1], self.filters), self.inits[0], dtype)
        if self.use_bias:
            self.add_weight("bias", (self.filters,), self.inits[1], dtype)

    def forward(self, interp, x, training):
        if self.causal:           # left padding of kernel_size - 1, then a valid convolution
            x = ops.pad(x, [[0, 0], [self.kernel_size[1] - 1, 0], [0, 0]])
        return super().forward(interp, x, training)     # Conv2D reshapes the kernel [k, C, F] to [k * C, F]


LAYERS = [Conv1D, Conv2D]
ALIASES = {"Convolution1D": Conv1D, "Convolution2D": Conv2D}
