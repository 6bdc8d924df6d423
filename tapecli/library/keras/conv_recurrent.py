"""Keras 3's convolutional LSTMs (keras/src/layers/rnn/conv_lstm.py): ConvLSTMCell, an LSTMCell whose gates are
convolutions of a step's input (its kernel, with the layer's strides, padding and dilation) and of the state h (its
recurrent kernel, stride 1 and padding "same"); ConvLSTM1D/2D/3D, an RNN of that cell over [batch, timesteps,
*spatial, channels]. Composed from the convolution op so gradients flow as TensorFlow's do."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import TdfValueError
from tapecli.library.keras.common import flag, num
from tapecli.library.keras.convolutional import (_channels_last, padding_mode, per_axis,
                                                 window_geometry)
from tapecli.library.keras.layers import Layer
from tapecli.library.keras.recurrent import LSTMCell, _Recurrent
from tapecli.runtime.values import Tensor

_ALL = slice(None)


class ConvLSTMCell(LSTMCell):
    prefix = "conv_lstm_cell"

    def __init__(self, interp, rank, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias=True, dropout=0.0, recurrent_dropout=0.0, seed=None, **kw):
        Layer.__init__(self, interp, **kw)      # (not LSTMCell's: Keras's ConvLSTMCell takes its own arguments)
        _channels_last(data_format, f"ConvLSTM{rank}D")
        if num(dropout, "dropout") > 0 or num(recurrent_dropout, "recurrent_dropout") > 0:
            raise TdfValueError(f"ConvLSTM{rank}D: tapecli has no dropout or recurrent_dropout in a ConvLSTM",
                                hint="leave dropout and recurrent_dropout at 0 (a Dropout layer may follow it)")
        self.rank = rank
        self._setup(filters, activation, recurrent_activation, use_bias,
                    (kernel_initializer, recurrent_initializer, bias_initializer), seed, generator_first=True,
                    what="filters")
        self.kernel_size = per_axis(kernel_size, rank, "kernel_size")
        self.strides = per_axis(strides, rank, "strides")
        self.padding = padding_mode(padding)
        self.dilation_rate = per_axis(dilation_rate, rank, "dilation_rate")
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise TdfValueError(f"Specifying `strides > 1` is not compatible with `dilation_rate > 1`. Please provide "
                                f"`strides=1` or `dilation_rate=1`. Received: strides={self.strides} and "
                                f"dilation_rate={self.dilation_rate}")
        self.unit_forget_bias = flag(unit_forget_bias)
        self.step_shape = None          # a state's shape without its batch: the input convolution's output

    def spatial_out(self, spatial) -> tuple:
        return tuple(window_geometry(n, k, s, self.padding, d)[0] for n, k, s, d in
                     zip(spatial, self.kernel_size, self.strides, self.dilation_rate))

    def kernel_shapes(self, shape):
        if None in shape[1:-1]:
            raise TdfValueError(f"ConvLSTM layers only support static input shapes for the spatial dimension. "
                                f"Received invalid input shape: input_shape={tuple(shape)}")
        if shape[-1] is None:
            raise TdfValueError(f"The channel dimension of the inputs (last axis) should be defined. Found None. Full "
                                f"input shape received: input_shape={tuple(shape)}")
        self.step_shape = (*self.spatial_out(shape[1:-1]), self.units)
        g = 4 * self.units
        return (*self.kernel_size, shape[-1], g), (*self.kernel_size, self.units, g)

    def zero_state(self, batch, dtype) -> list:
        return [Tensor(np.zeros((batch, *self.step_shape), dtype=dtype)) for _ in range(2)]

    def step(self, x_t, states):
        h, c = states
        w, f = self.weights_, self.units
        same = [window_geometry(n, k, 1, "same")[1] for n, k in zip(h.shape[1:-1], self.kernel_size)]
        valid = [window_geometry(n, k, s, self.padding, d)[1] for n, k, s, d in
                 zip(x_t.shape[1:-1], self.kernel_size, self.strides, self.dilation_rate)]
        ones = (1,) * self.rank

        def gates(kernel):          # (Keras splits its kernels and bias in four, one convolution per gate)
            return [ops.getitem(kernel, (*[_ALL] * (self.rank + 1), slice(k * f, (k + 1) * f))) for k in range(4)]
        # (the four convolutions of an input share its windows, gathered once: the same products)
        xs = ops.convolutions(x_t, gates(w["kernel"]), self.strides, self.dilation_rate, valid)
        hs = ops.convolutions(h, gates(w["recurrent_kernel"]), ones, ones, same)
        z = []
        for k, (x_k, h_k) in enumerate(zip(xs, hs)):
            if self.use_bias:       # (its `+=` of the bias reshaped: tf.add, not a bias_add)
                x_k = ops.add(x_k, ops.reshape(ops.getitem(w["bias"], slice(k * f, (k + 1) * f)), (1, *ones, f)))
            z.append(ops.add(x_k, h_k))
        return self.update(z, c)


class _ConvLSTM(_Recurrent):
    """Keras's ConvLSTM: an RNN of a ConvLSTMCell, its input [batch, timesteps, *spatial, channels]."""
    rank = 2

    def __init__(self, interp, filters, kernel_size, strides=1, padding="valid", data_format=None, dilation_rate=1,
                 activation="tanh", recurrent_activation="sigmoid", use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros", unit_forget_bias=True, dropout=0.0,
                 recurrent_dropout=0.0, seed=None, return_sequences=False, return_state=False, go_backwards=False,
                 stateful=False, **kw):
        self.cell = ConvLSTMCell(interp, self.rank, filters, kernel_size, strides, padding, data_format,
                                 dilation_rate, activation, recurrent_activation, use_bias, kernel_initializer,
                                 recurrent_initializer, bias_initializer, unit_forget_bias, dropout, recurrent_dropout,
                                 seed, name="conv_lstm_cell")
        self.ndim = self.rank + 3
        super().__init__(interp, return_sequences=return_sequences, return_state=return_state,
                         go_backwards=go_backwards, stateful=stateful, **kw)

    def config(self):
        """The recurrent layer's attributes, less its units (it has none: its filters and the cell's other arguments
        are the attributes its config has)."""
        return {k: v for k, v in super().config().items() if k != "units"}

    def output_shapes(self, shape) -> list:
        """Its output's shape and, with return_state, its final states' (h and c)."""
        step = (*self.cell.spatial_out(shape[2:-1]), self.cell.units)
        out = (shape[0], shape[1], *step) if self.return_sequences else (shape[0], *step)
        return [out, (shape[0], *step), (shape[0], *step)] if self.return_state else [out]


class ConvLSTM1D(_ConvLSTM):
    prefix = "conv_lstm1d"
    rank = 1


class ConvLSTM2D(_ConvLSTM):
    prefix = "conv_lstm2d"
    rank = 2


class ConvLSTM3D(_ConvLSTM):
    prefix = "conv_lstm3d"
    rank = 3


LAYERS = [ConvLSTM1D, ConvLSTM2D, ConvLSTM3D]
