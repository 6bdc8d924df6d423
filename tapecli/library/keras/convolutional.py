"""Keras 3's convolution layers (keras/src/layers/convolutional), channels last, composed from recorded ops (every
window gathered, then one product with the kernel) so gradients flow as TensorFlow's do. A transposed convolution is
the ordinary one over the input spread out by its strides, with the kernel flipped and its channels swapped."""
from __future__ import annotations

from tapecli import ops
from tapecli.errors import TdfValueError
from tapecli.library.keras import initializers
from tapecli.library.keras.common import add, dims, flag, integer
from tapecli.library.keras.layers import Layer, activation_fn
from tapecli.library.keras.spatial import _rank
from tapecli.ops.nn import _pads
from tapecli.runtime.values import Tensor


def per_axis(value, rank, what):
    """Keras's standardize_tuple: one integer for every spatial axis, or one per axis."""
    single = isinstance(value, (int, float)) or (isinstance(value, Tensor) and value.ndim == 0)
    d = dims([value] * rank if single else value, what)
    if len(d) != rank:
        raise TdfValueError(f"The `{what}` argument must be a tuple of {rank} integers. Received {what}={list(d)}")
    return d


def padding_mode(value, causal=False):
    """Keras's standardize_padding ("causal" for Conv1D only)."""
    value = str(value).lower()
    if value not in ("valid", "same") + (("causal",) if causal else ()):
        raise TdfValueError(f'padding must be "valid" or "same"{"" if not causal else " or causal"}, got {value!r}')
    return value


def window_geometry(n, k, s, padding, d=1):
    """Output size and (before, after) padding of one spatial dimension of size n, as TensorFlow's."""
    out, before, after = _pads(n, k, s, d, padding.upper())
    return out, (before, after)


def _channels_last(data_format, cls):
    if data_format not in (None, "channels_last"):
        raise TdfValueError(f"{cls}: tapecli supports data_format='channels_last' only")


class _Windowed(Layer):
    """What Keras's convolutions share: a kernel's windows over the spatial axes, then bias, then activation."""
    replayable = True
    rank = 2
    causal = False          # whether padding may be "causal" (Conv1D's)

    def setup(self, kernel_size, strides, padding, data_format, dilation_rate, activation, use_bias, inits):
        _channels_last(data_format, type(self).__name__)
        self.kernel_size = per_axis(kernel_size, self.rank, "kernel_size")
        self.strides = per_axis(strides, self.rank, "strides")
        self.dilation_rate = per_axis(dilation_rate, self.rank, "dilation_rate")
        self.padding = padding_mode(padding, self.causal)
        if not all(self.kernel_size):
            raise TdfValueError(f"The argument `kernel_size` cannot contain 0. Received kernel_size={self.kernel_size}.")
        if not all(self.strides):
            raise TdfValueError(f"The argument `strides` cannot contains 0. Received strides={self.strides}")
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise TdfValueError("`strides > 1` not supported in conjunction with `dilation_rate > 1`. Received: "
                                f"strides={self.strides} and dilation_rate={self.dilation_rate}")
        self.activation = activation_fn(activation, self.interp)
        self.use_bias = flag(use_bias)
        self.inits = [initializers.get(i, interp=self.interp) for i in inits]

    def weight_names(self):
        return ("kernel", "bias")

    def check_input(self, x):
        _rank(self, x, self.rank + 2)

    def spatial_out(self, shape):
        mode = "same" if self.padding == "causal" else self.padding       # (causal keeps the length, as same does)
        return tuple(None if n is None else window_geometry(n, k, s, mode, d)[0] for n, k, s, d in
                     zip(shape[1:-1], self.kernel_size, self.strides, self.dilation_rate))

    def output_shape(self, shape):
        return (shape[0], *self.spatial_out(shape), self.filters)

    def pads(self, x):
        if self.padding == "causal":        # left padding of the dilated kernel's span, then a valid convolution
            return [(self.dilation_rate[0] * (self.kernel_size[0] - 1), 0)]
        return [window_geometry(n, k, s, self.padding, d)[1] for n, k, s, d in
                zip(x.shape[1:-1], self.kernel_size, self.strides, self.dilation_rate)]

    def finish(self, y):
        if self.use_bias:
            y = add(y, self.weights_["bias"])
        return y if self.activation is None else self.activation(y)


class _Conv(_Windowed):
    """Keras's BaseConv: kernel [*kernel_size, channels / groups, filters]."""

    def __init__(self, interp, filters, kernel_size, strides=1, padding="valid", data_format=None, dilation_rate=1,
                 groups=1, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", **kw):
        super().__init__(interp, **kw)
        self.setup(kernel_size, strides, padding, data_format, dilation_rate, activation, use_bias,
                   (kernel_initializer, bias_initializer))
        self.filters, self.groups = _positive(filters, "filters"), integer(groups, "groups")
        if self.groups <= 0:
            raise TdfValueError(f"The number of groups must be a positive integer. Received: groups={self.groups}.")
        if self.filters % self.groups:
            raise TdfValueError("The number of filters must be evenly divisible by the number of groups. "
                                f"Received: groups={self.groups}, filters={self.filters}.")

    def build(self, shape, dtype):
        if shape[-1] % self.groups:
            raise TdfValueError("The number of input channels must be evenly divisible by the number of groups. "
                                f"Received groups={self.groups}, but the input has {shape[-1]} channels (full "
                                f"input shape is {tuple(shape)}).")
        self.add_weight("kernel", (*self.kernel_size, shape[-1] // self.groups, self.filters), self.inits[0], dtype)
        if self.use_bias:
            self.add_weight("bias", (self.filters,), self.inits[1], dtype)

    def forward(self, interp, x, training):
        pads, kernel = self.pads(x), self.weights_["kernel"]
        if self.padding == "causal":    # Keras pads the input, then convolves it with VALID padding: so TensorFlow's
            x, pads = ops.pad(x, [[0, 0], list(pads[0]), [0, 0]]), [(0, 0)]        # input gradient sums its way
        if self.groups == 1 and max(self.dilation_rate) > 1:    # keras.ops.conv: tf.nn.convolution's space-to-batch
            from tapecli.library.tf_nn_losses import _with_space_to_batch
            return self.finish(_with_space_to_batch(x, kernel, self.dilation_rate,
                                                    "SAME" if self.padding == "same" else "VALID"))
        return self.finish(ops.convolution(x, kernel, self.strides, self.dilation_rate, pads, self.groups))


def _positive(value, what):
    n = integer(value, what)
    if n <= 0:
        raise TdfValueError(f"Invalid value for argument `{what}`. Expected a strictly positive value. "
                            f"Received {what}={n}.")
    return n


class Conv1D(_Conv):
    prefix, rank, causal = "conv1d", 1, True


class Conv2D(_Conv):
    prefix, rank = "conv2d", 2


class Conv3D(_Conv):
    prefix, rank = "conv3d", 3


class _ConvTranspose(_Windowed):
    """Keras's BaseConvTranspose (tf.nn.conv_transpose): kernel [*kernel_size, filters, channels]."""

    def __init__(self, interp, filters, kernel_size, strides=1, padding="valid", output_padding=None,
                 data_format=None, dilation_rate=1, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", **kw):
        super().__init__(interp, **kw)
        self.setup(kernel_size, strides, padding, data_format, dilation_rate, activation, use_bias,
                   (kernel_initializer, bias_initializer))
        self.filters = _positive(filters, "filters")
        self.output_padding = None if output_padding is None else per_axis(output_padding, self.rank,
                                                                            "output_padding")
        for i, (op, s) in enumerate(zip(self.output_padding or (), self.strides)):
            if op >= s:
                raise TdfValueError("`output_padding` must be strictly less than `strides` for all dimensions. "
                                    f"At dimension {i}, `output_padding` is {op} but `strides` is {s}. Received: "
                                    f"output_padding={self.output_padding}, strides={self.strides}")

    def build(self, shape, dtype):
        self.add_weight("kernel", (*self.kernel_size, self.filters, shape[-1]), self.inits[0], dtype)
        if self.use_bias:
            self.add_weight("bias", (self.filters,), self.inits[1], dtype)

    def spatial_out(self, shape):
        """Keras's compute_conv_transpose_output_shape."""
        out = []
        for i, n in enumerate(shape[1:-1]):
            k = (self.kernel_size[i] - 1) * self.dilation_rate[i] + 1
            s, op = self.strides[i], None if self.output_padding is None else self.output_padding[i]
            if n is None:
                out.append(None)
            elif self.padding == "valid":
                out.append((n - 1) * s + k + (max(k, s) - k if op is None else op))
            else:
                out.append(n * s if op is None else (n - 1) * s + k % 2 + op)
        return tuple(out)

    def forward(self, interp, x, training):
        befores = [0 if self.padding == "valid" else max(0, (n - 1) * s + (k - 1) * d + 1 - o) // 2 for n, o, k, s, d
                   in zip(x.shape[1:-1], self.spatial_out(x.shape), self.kernel_size, self.strides, self.dilation_rate)]
        return self.finish(ops.conv_transpose(x, self.weights_["kernel"], self.spatial_out(x.shape), self.strides,
                                              self.dilation_rate, befores))


class Conv1DTranspose(_ConvTranspose):
    prefix, rank = "conv1d_transpose", 1


class Conv2DTranspose(_ConvTranspose):
    prefix, rank = "conv2d_transpose", 2


class Conv3DTranspose(_ConvTranspose):
    prefix, rank = "conv3d_transpose", 3


class _DepthwiseConv(_Windowed):
    """Keras's BaseDepthwiseConv: kernel [*kernel_size, channels, depth_multiplier], each channel convolved with its
    own depth_multiplier filters (channel c's outputs c * depth_multiplier + m): a convolution of one channel per
    group."""

    def __init__(self, interp, kernel_size, strides=1, padding="valid", depth_multiplier=1, data_format=None,
                 dilation_rate=1, activation=None, use_bias=True, depthwise_initializer="glorot_uniform",
                 bias_initializer="zeros", **kw):
        super().__init__(interp, **kw)
        self.setup(kernel_size, strides, padding, data_format, dilation_rate, activation, use_bias,
                   (depthwise_initializer, bias_initializer))
        self.depth_multiplier = _positive(depth_multiplier, "depth_multiplier")

    def build(self, shape, dtype):
        self.filters = shape[-1] * self.depth_multiplier
        self.add_weight("kernel", (*self.kernel_size, shape[-1], self.depth_multiplier), self.inits[0], dtype)
        if self.use_bias:
            self.add_weight("bias", (self.filters,), self.inits[1], dtype)

    def depthwise(self, x, kernel):
        grouped = ops.reshape(kernel, (*self.kernel_size, 1, x.shape[-1] * self.depth_multiplier))
        return ops.convolution(x, grouped, self.strides, self.dilation_rate, self.pads(x), x.shape[-1])

    def forward(self, interp, x, training):
        return self.finish(self.depthwise(x, self.weights_["kernel"]))


class DepthwiseConv1D(_DepthwiseConv):
    prefix, rank = "depthwise_conv1d", 1


class DepthwiseConv2D(_DepthwiseConv):
    prefix, rank = "depthwise_conv2d", 2


class _SeparableConv(_DepthwiseConv):
    """Keras's BaseSeparableConv: a depthwise convolution (depthwise_kernel), then a 1x1 one (pointwise_kernel
    [1, ..., channels * depth_multiplier, filters]), then bias and activation."""

    def __init__(self, interp, filters, kernel_size, strides=1, padding="valid", data_format=None, dilation_rate=1,
                 depth_multiplier=1, activation=None, use_bias=True, depthwise_initializer="glorot_uniform",
                 pointwise_initializer="glorot_uniform", bias_initializer="zeros", **kw):
        super().__init__(interp, kernel_size, strides, padding, depth_multiplier, data_format, dilation_rate,
                         activation, use_bias, depthwise_initializer, bias_initializer, **kw)
        self.filters = _positive(filters, "filters")
        self.inits.append(initializers.get(pointwise_initializer))

    def weight_names(self):
        return ("depthwise_kernel", "pointwise_kernel", "bias")

    def build(self, shape, dtype):
        depth = shape[-1] * self.depth_multiplier
        self.add_weight("depthwise_kernel", (*self.kernel_size, shape[-1], self.depth_multiplier), self.inits[0],
                        dtype)
        self.add_weight("pointwise_kernel", (*(1,) * self.rank, depth, self.filters), self.inits[2], dtype)
        if self.use_bias:
            self.add_weight("bias", (self.filters,), self.inits[1], dtype)

    def forward(self, interp, x, training):
        w = self.weights_
        pointwise = ops.reshape(w["pointwise_kernel"], w["pointwise_kernel"].shape[-2:])
        return self.finish(ops.matmul(self.depthwise(x, w["depthwise_kernel"]), pointwise))


class SeparableConv1D(_SeparableConv):
    prefix, rank = "separable_conv1d", 1


class SeparableConv2D(_SeparableConv):
    prefix, rank = "separable_conv2d", 2


LAYERS = [Conv1D, Conv2D, Conv3D, Conv1DTranspose, Conv2DTranspose, Conv3DTranspose, DepthwiseConv1D,
          DepthwiseConv2D, SeparableConv1D, SeparableConv2D]
ALIASES = {"Convolution1D": Conv1D, "Convolution2D": Conv2D, "Convolution3D": Conv3D,
           "Convolution1DTranspose": Conv1DTranspose, "Convolution2DTranspose": Conv2DTranspose,
           "Convolution3DTranspose": Conv3DTranspose, "SeparableConvolution1D": SeparableConv1D,
           "SeparableConvolution2D": SeparableConv2D}
