"""Keras 3's pooling layers (keras/src/layers/pooling), channels last, as TensorFlow's max_pool / avg_pool."""
from __future__ import annotations

from tapecli import ops
from tapecli.errors import ShapeError, TdfValueError
from tapecli.library.keras.convolutional import _As2D, _one, _pair, _padding, _windows
from tapecli.library.keras.layers import Layer


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
        return ops.avg_pool2d(x, self.pool_size, self.strides, self.padding.upper())     # (tf.nn.avg_pool's)


class MaxPooling1D(_As2D, MaxPooling2D):
    prefix = "max_pooling1d"

    def __init__(self, interp, pool_size=2, strides=None, padding="valid", data_format=None, **kw):
        p = _one(pool_size, "pool_size")
        super().__init__(interp, (1, p), (1, p if strides is None else _one(strides, "strides")), padding, **kw)


class AveragePooling1D(_As2D, AveragePooling2D):
    prefix = "average_pooling1d"

    def __init__(self, interp, pool_size, strides=None, padding="valid", data_format=None, **kw):
        p = _one(pool_size, "pool_size")
        super().__init__(interp, (1, p), (1, p if strides is None else _one(strides, "strides")), padding,
                         data_format, **kw)


LAYERS = [MaxPooling1D, MaxPooling2D, AveragePooling1D, AveragePooling2D]
ALIASES = {"MaxPool1D": MaxPooling1D, "MaxPool2D": MaxPooling2D, "AvgPool1D": AveragePooling1D,
           "AvgPool2D": AveragePooling2D}
