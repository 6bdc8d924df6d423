"""Keras 3's pooling layers (keras/src/layers/pooling), channels last, as TensorFlow's max_pool / avg_pool (tf_nn.pool_nd:
one or three axes pooled by the two-axis pooling)."""
from __future__ import annotations

from tapecli import ops
from tapecli.runtime.values import PythonTuple
from tapecli.library.keras.convolutional import (_channels_last, padding_mode, per_axis,
                                                 window_geometry)
from tapecli.errors import TdfValueError
from tapecli.library.keras.layers import Layer
from tapecli.library.keras.ops_nn import ADAPTIVE_POOLS
from tapecli.library.tf_nn import pool_nd
from tapecli.library.keras.spatial import _rank


class _Pooling(Layer):
    built_at_init = True
    replayable = True
    rank = 2

    def __init__(self, interp, pool_size, strides=None, padding="valid", data_format=None, **kw):
        super().__init__(interp, **kw)
        _channels_last(data_format, type(self).__name__)
        self.pool_size = per_axis(pool_size, self.rank, "pool_size")
        self.strides = self.pool_size if strides is None else per_axis(strides, self.rank, "strides")
        self.padding = padding_mode(padding)

    def output_shape(self, shape):
        return (shape[0], *(None if n is None else window_geometry(n, k, s, self.padding)[0]
                            for n, k, s in zip(shape[1:-1], self.pool_size, self.strides)), shape[-1])

    def check_input(self, x):
        _rank(self, x, self.rank + 2)

    def forward(self, interp, x, training):
        return pool_nd(self.pool, x, self.pool_size, self.strides, self.padding.upper())


class _MaxPooling(_Pooling):
    pool = staticmethod(ops.max_pool2d)


class _AveragePooling(_Pooling):
    """TensorFlow's avg_pool: with SAME padding each window averages only the values inside the input."""
    pool = staticmethod(ops.avg_pool2d)


class MaxPooling1D(_MaxPooling):
    prefix, rank = "max_pooling1d", 1

    def __init__(self, interp, pool_size=2, strides=None, padding="valid", data_format=None, **kw):
        super().__init__(interp, pool_size, strides, padding, data_format, **kw)


class MaxPooling2D(_MaxPooling):
    prefix, rank = "max_pooling2d", 2

    def __init__(self, interp, pool_size=(2, 2), strides=None, padding="valid", data_format=None, **kw):
        super().__init__(interp, pool_size, strides, padding, data_format, **kw)


class MaxPooling3D(_MaxPooling):
    prefix, rank = "max_pooling3d", 3

    def __init__(self, interp, pool_size=(2, 2, 2), strides=None, padding="valid", data_format=None, **kw):
        super().__init__(interp, pool_size, strides, padding, data_format, **kw)


class AveragePooling1D(_AveragePooling):
    prefix, rank = "average_pooling1d", 1


class AveragePooling2D(_AveragePooling):
    prefix, rank = "average_pooling2d", 2


class AveragePooling3D(_AveragePooling):
    prefix, rank = "average_pooling3d", 3


class _AdaptivePooling(Layer):
    """Keras 3's adaptive pooling layers: keras.ops' adaptive pools (ops_nn) to ``output_size`` bins per axis."""

    built_at_init = True
    replayable = True

    def __init__(self, interp, output_size, data_format=None, **kw):
        super().__init__(interp, **kw)
        self.output_size = per_axis(output_size, self.rank, "output_size")
        self.data_format = "channels_last" if data_format is None else data_format
        if self.data_format not in ("channels_first", "channels_last"):
            raise TdfValueError(f"Invalid data_format: {self.data_format}. Expected 'channels_first' or "
                                "'channels_last'.")

    def config_values(self):
        return {"output_size": PythonTuple(self.output_size), "data_format": self.data_format}

    def attributes(self):
        return {**super().attributes(), "output_size": lambda: PythonTuple(self.output_size),
                "data_format": lambda: self.data_format}

    def output_shape(self, shape):
        if self.data_format == "channels_last":
            return (shape[0], *self.output_size, shape[-1])
        return (shape[0], shape[1], *self.output_size)

    def check_input(self, x):
        _rank(self, x, self.rank + 2)

    def forward(self, interp, x, training):
        return self.pool(x, self.output_size, data_format=self.data_format)


def _adaptive_layer(kind: str, rank: int):
    pool = ADAPTIVE_POOLS[f"ops.adaptive_{'average' if kind == 'Average' else 'max'}_pool"]
    name = f"Adaptive{kind}Pooling{rank}D"
    return type(name, (_AdaptivePooling,), {"rank": rank, "pool": staticmethod(pool),
                                            "prefix": f"adaptive_{kind.lower()}_pooling{rank}d"})


ADAPTIVE = [_adaptive_layer(kind, rank) for kind in ("Average", "Max") for rank in (1, 2, 3)]
LAYERS = [MaxPooling1D, MaxPooling2D, MaxPooling3D, AveragePooling1D, AveragePooling2D, AveragePooling3D, *ADAPTIVE]
ALIASES = {"MaxPool1D": MaxPooling1D, "MaxPool2D": MaxPooling2D, "MaxPool3D": MaxPooling3D,
           "AvgPool1D": AveragePooling1D, "AvgPool2D": AveragePooling2D, "AvgPool3D": AveragePooling3D}
