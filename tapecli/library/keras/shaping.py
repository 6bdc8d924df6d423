"""Keras 3's activation layers (ReLU, LeakyReLU, ELU, Softmax), shape layers (Identity, Reshape, Permute,
RepeatVector), global and average pooling, composed from recorded ops as Keras's ``call`` does."""
from __future__ import annotations

import math


from tapecli import ops
from tapecli.errors import ShapeError, TdfValueError
from tapecli.library.keras import activations, initializers
from tapecli.library.keras.common import axis_value, flag, integer, num, opt_num, tensor
from tapecli.library.keras.layers import Layer
from tapecli.library.keras.losses import l2_normalize
from tapecli.runtime.context import current
from tapecli.library.keras.recurrent import _pair, _padding, _patches, _windows


class Identity(Layer):
    replayable = True
    prefix = "identity"


class ReLU(Layer):
    replayable = True
    prefix = "re_lu"

    def __init__(self, interp, max_value=None, negative_slope=0.0, threshold=0.0, **kw):
        super().__init__(interp, **kw)
        self.max_value, self.slope = opt_num(max_value, "max_value"), num(negative_slope, "negative_slope")
        self.threshold = num(threshold, "threshold")
        if self.max_value is not None and self.max_value < 0 or self.slope < 0 or self.threshold < 0:
            raise TdfValueError("ReLU: max_value, negative_slope and threshold cannot be negative")

    def forward(self, interp, x, training):
        return activations.relu(x, self.slope, self.max_value, self.threshold)


class LeakyReLU(Layer):
    replayable = True
    prefix = "leaky_re_lu"

    def __init__(self, interp, negative_slope=0.3, **kw):
        super().__init__(interp, **kw)
        self.slope = num(negative_slope, "negative_slope")
        if self.slope < 0:
            raise TdfValueError(f"The negative_slope value of a Leaky ReLU layer cannot be None or negative value. "
                                f"Expected a float. Received: negative_slope={self.slope}")

    def forward(self, interp, x, training):
        return activations.leaky_relu(x, self.slope)


class ELU(Layer):
    replayable = True
    prefix = "elu"

    def __init__(self, interp, alpha=1.0, **kw):
        super().__init__(interp, **kw)
        self.alpha = num(alpha, "alpha")

    def forward(self, interp, x, training):
        return activations.elu(x, self.alpha)


class _AlongAxis(Layer):
    """A layer of one ``axis=-1`` argument (an int or a list of ints)."""
    replayable = True

    def __init__(self, interp, axis=-1, **kw):
        super().__init__(interp, **kw)
        self.axis = axis_value(axis)


class Softmax(_AlongAxis):
    prefix = "softmax"

    def forward(self, interp, x, training):
        if isinstance(self.axis, tuple) and len(self.axis) > 1:
            return ops.exp(ops.sub(x, ops.reduce_logsumexp(x, axis=self.axis, keepdims=True)))
        return activations.softmax(x, self.axis[0] if isinstance(self.axis, tuple) else self.axis)


class Reshape(Layer):
    replayable = True
    prefix = "reshape"

    def __init__(self, interp, target_shape, **kw):
        super().__init__(interp, **kw)
        self.target = [-1 if d == -1 else d for d in (integer(v, "target_shape") for v in target_shape)]

    def resolved(self, shape):
        known = [d for d in self.target if d != -1]
        if self.target.count(-1) > 1:
            raise TdfValueError("There must be at most one unknown dimension in output_shape.")
        size = None if None in shape[1:] else math.prod(shape[1:])
        if -1 in self.target and size is not None:
            return tuple(size // max(1, math.prod(known)) if d == -1 else d for d in self.target)
        if size is not None and size != math.prod(known):
            raise ShapeError(f"The total size of the tensor must be unchanged. Received: input_shape={tuple(shape)}, "
                             f"target_shape={tuple(self.target)}")
        return tuple(None if d == -1 else d for d in self.target)

    def output_shape(self, shape):
        return (shape[0], *self.resolved(shape))

    def forward(self, interp, x, training):
        return ops.reshape(x, (x.shape[0], *self.resolved(x.shape)))


class Permute(Layer):
    replayable = True
    prefix = "permute"

    def __init__(self, interp, dims, **kw):
        super().__init__(interp, **kw)
        self.dims = [integer(d, "dims") for d in dims]
        if sorted(self.dims) != list(range(1, len(self.dims) + 1)):
            raise TdfValueError(f"Invalid permutation argument `dims` for Permute Layer. The set of indices in "
                                f"`dims` must be consecutive and start from 1. Received dims={self.dims}")

    def output_shape(self, shape):
        return (shape[0], *(shape[d] for d in self.dims))

    def forward(self, interp, x, training):
        return ops.transpose(x, (0, *self.dims))


class RepeatVector(Layer):
    replayable = True
    prefix = "repeat_vector"

    def __init__(self, interp, n, **kw):
        super().__init__(interp, **kw)
        self.n = integer(n, "n")

    def output_shape(self, shape):
        return (shape[0], self.n, shape[1])

    def forward(self, interp, x, training):
        if x.ndim != 2:
            raise ShapeError(f"RepeatVector takes inputs of shape [batch, features], got {list(x.shape)}")
        return ops.tile(ops.reshape(x, (x.shape[0], 1, x.shape[1])), (1, self.n, 1))


class _GlobalPooling(Layer):
    replayable = True
    rank = 2
    reduce = staticmethod(ops.reduce_mean)

    def __init__(self, interp, data_format=None, keepdims=False, **kw):
        super().__init__(interp, **kw)
        if data_format not in (None, "channels_last"):
            raise TdfValueError(f"{type(self).__name__}: tapecli supports data_format='channels_last' only")
        self.keepdims = flag(keepdims)

    def axes(self):
        return tuple(range(1, self.rank + 1))

    def output_shape(self, shape):
        if self.keepdims:
            return (shape[0], *([1] * self.rank), shape[-1])
        return (shape[0], shape[-1])

    def forward(self, interp, x, training):
        if x.ndim != self.rank + 2:
            raise ShapeError(f"{type(self).__name__} takes inputs of rank {self.rank + 2}, got {list(x.shape)}")
        return self.reduce(x, axis=self.axes(), keepdims=self.keepdims)


class GlobalAveragePooling1D(_GlobalPooling):
    prefix, rank = "global_average_pooling1d", 1


class GlobalAveragePooling2D(_GlobalPooling):
    prefix, rank = "global_average_pooling2d", 2


class GlobalMaxPooling1D(_GlobalPooling):
    prefix, rank, reduce = "global_max_pooling1d", 1, staticmethod(ops.reduce_max)


class GlobalMaxPooling2D(_GlobalPooling):
    prefix, rank, reduce = "global_max_pooling2d", 2, staticmethod(ops.reduce_max)


class GlobalAveragePooling3D(_GlobalPooling):
    prefix, rank = "global_average_pooling3d", 3


class GlobalMaxPooling3D(_GlobalPooling):
    prefix, rank, reduce = "global_max_pooling3d", 3, staticmethod(ops.reduce_max)


class AveragePooling2D(Layer):
    """TensorFlow's avg_pool: with SAME padding each window averages only the values inside the input."""
    prefix = "average_pooling2d"
    replayable = True

    def __init__(self, interp, pool_size, strides=None, padding="valid", data_format=None, **kw):
        super().__init__(interp, **kw)
        if data_format not in (None, "channels_last"):
            raise TdfValueError("AveragePooling2D: tapecli supports data_format='channels_last' only")
        self.pool_size = _pair(pool_size, "pool_size")
        self.strides = self.pool_size if strides is None else _pair(strides, "strides")
        self.padding = _padding(padding)

    def output_shape(self, shape):
        oh = _windows(shape[1], self.pool_size[0], self.strides[0], self.padding)[0]
        ow = _windows(shape[2], self.pool_size[1], self.strides[1], self.padding)[0]
        return (shape[0], oh, ow, shape[3])

    def forward(self, interp, x, training):
        if x.ndim != 4:
            raise ShapeError(f"AveragePooling2D takes inputs of shape [batch, height, width, channels], "
                             f"got {list(x.shape)}")
        total, _, _ = _patches(x, self.pool_size, self.strides, self.padding, 0.0)
        ones = ops.ones_like(ops.getitem(x, (slice(0, 1), slice(None), slice(None), slice(0, 1))))
        count, _, _ = _patches(ones, self.pool_size, self.strides, self.padding, 0.0)
        return ops.div(ops.reduce_sum(total, axis=3), ops.reduce_sum(count, axis=3))


class PReLU(Layer):
    """relu(x) - alpha * relu(-x), alpha of the input's shape without its batch axis (1 along shared_axes)."""
    replayable = True
    prefix = "p_re_lu"

    def __init__(self, interp, alpha_initializer="zeros", alpha_regularizer=None, alpha_constraint=None,
                 shared_axes=None, **kw):
        super().__init__(interp, **kw)
        if alpha_regularizer is not None or alpha_constraint is not None:
            raise TdfValueError("PReLU: alpha_regularizer and alpha_constraint are not supported by tapecli")
        self.init = initializers.get(alpha_initializer)
        self.shared = [] if shared_axes is None else [integer(a, "shared_axes") for a in (
            shared_axes if isinstance(shared_axes, (list, tuple)) else [shared_axes])]

    def weight_names(self):
        return ("alpha",)

    def build(self, shape, dtype):
        self.add_weight("alpha", tuple(1 if i + 1 in self.shared else d for i, d in enumerate(shape[1:])),
                        self.init, dtype)

    def forward(self, interp, x, training):
        neg = ops.mul(ops.neg(self.weights_["alpha"]), ops.relu(ops.neg(x)))
        return ops.add(ops.relu(x), neg)


class Rescaling(Layer):
    replayable = True
    prefix = "rescaling"

    def __init__(self, interp, scale, offset=0.0, **kw):
        super().__init__(interp, **kw)
        self.scale, self.offset = tensor(scale, "scale"), tensor(offset, "offset")

    def forward(self, interp, x, training):
        if x.dtype.kind != "f":
            x = ops.cast(x, current().settings.float_dtype)
        return ops.add(ops.mul(x, ops.cast(self.scale, x.dtype)), ops.cast(self.offset, x.dtype))


class UnitNormalization(_AlongAxis):
    prefix = "unit_normalization"

    def forward(self, interp, x, training):
        return l2_normalize(x, self.axis, 1e-12)


LAYERS = [PReLU, Rescaling, UnitNormalization, ReLU, LeakyReLU, ELU, Softmax, Reshape, Permute, RepeatVector,
          GlobalAveragePooling1D, GlobalAveragePooling2D, GlobalAveragePooling3D, GlobalMaxPooling1D,
          GlobalMaxPooling2D, GlobalMaxPooling3D, AveragePooling2D]
# names a TensorFlow function also has (tf.identity): registered as "layers.NAME"
QUALIFIED = {"Identity": Identity}
ALIASES = {"GlobalAvgPool1D": GlobalAveragePooling1D, "GlobalAvgPool2D": GlobalAveragePooling2D,
           "GlobalMaxPool1D": GlobalMaxPooling1D, "GlobalMaxPool2D": GlobalMaxPooling2D,
           "GlobalAvgPool3D": GlobalAveragePooling3D, "GlobalMaxPool3D": GlobalMaxPooling3D,
           "AvgPool2D": AveragePooling2D}
