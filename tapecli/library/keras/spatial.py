"""Keras 3's one-dimensional convolution and pooling (as the 2-D ones on a height of 1, as TensorFlow
computes them), padding, cropping and nearest upsampling layers, Lambda, and the noise layers (which,
like Dropout, act only with ``training=True``; their draws are Keras's, TensorFlow's stateless ops of their seed
generators). Channels last."""
from __future__ import annotations

import math

import numpy as np

from tapecli import kernels, ops
from tapecli.errors import ShapeError, TdfTypeError, TdfValueError
from tapecli.library.keras.common import call_argument, dims, float_dtype, integer, num, scalar, tensor
from tapecli.library.keras.layers import Layer, activation_fn, keras_dropout, keras_normal_values, seed_generator
from tapecli.library.keras.keras_tensor import KerasTensor, probing
from tapecli.interpreter.objects import Function
from tapecli.library.keras.compile_metrics import function_name
from tapecli.library.keras.configs import base_config, program_serialized
from tapecli.library.keras.saving import registered_object
from tapecli.runtime.context import current
from tapecli.runtime.values import Tensor

_ALL = slice(None)


def _rank(layer, x, rank):
    if x.ndim != rank:
        raise ShapeError(f"{type(layer).__name__} takes inputs of rank {rank} (channels last), got {list(x.shape)}")


def _pairs(value, n, what):
    """Keras's padding/cropping argument: an int, a pair, or n pairs (one per spatial axis)."""
    if isinstance(value, (int, float)) or isinstance(value, Tensor) and value.ndim == 0:
        v = integer(value, what)
        return [(v, v)] * n
    items = list(value)
    if n == 1:
        return [(integer(items[0], what), integer(items[1], what))]
    out = []
    for item in items:
        if isinstance(item, (list, tuple)):
            out.append((integer(item[0], what), integer(item[1], what)))
        else:
            v = integer(item, what)
            out.append((v, v))
    return out


class _Spatial(Layer):
    rank = 1

    def check_input(self, x):
        _rank(self, x, self.rank + 2)


class _ZeroPadding(_Spatial):
    replayable = True

    def __init__(self, interp, padding, data_format=None, **kw):
        super().__init__(interp, **kw)
        self.pads = _pairs(padding, self.rank, "padding")

    def output_shape(self, shape):
        return (shape[0], *(None if d is None else d + a + b for d, (a, b) in zip(shape[1:-1], self.pads)), shape[-1])

    def forward(self, interp, x, training):
        return ops.pad(x, [[0, 0], *[list(p) for p in self.pads], [0, 0]])


class ZeroPadding1D(_ZeroPadding):
    prefix = "zero_padding1d"

    def __init__(self, interp, padding=1, data_format=None, **kw):
        super().__init__(interp, padding, data_format, **kw)


class ZeroPadding2D(_ZeroPadding):
    prefix, rank = "zero_padding2d", 2

    def __init__(self, interp, padding=(1, 1), data_format=None, **kw):
        super().__init__(interp, padding, data_format, **kw)


class ZeroPadding3D(_ZeroPadding):
    prefix, rank = "zero_padding3d", 3

    def __init__(self, interp, padding=((1, 1), (1, 1), (1, 1)), data_format=None, **kw):
        super().__init__(interp, padding, data_format, **kw)


class _Cropping(_Spatial):
    replayable = True

    def __init__(self, interp, cropping, **kw):
        super().__init__(interp, **kw)
        self.crops = _pairs(cropping, self.rank, "cropping")

    def output_shape(self, shape):
        return (shape[0], *(None if d is None else d - a - b for d, (a, b) in zip(shape[1:-1], self.crops)), shape[-1])

    def forward(self, interp, x, training):
        if any(a + b >= d for d, (a, b) in zip(x.shape[1:-1], self.crops)):
            raise ShapeError(f"{type(self).__name__}: cropping {self.crops} leaves nothing of shape {list(x.shape)}")
        return ops.getitem(x, (_ALL, *(slice(a, d - b) for d, (a, b) in zip(x.shape[1:-1], self.crops)), _ALL))


class Cropping1D(_Cropping):
    prefix = "cropping1d"

    def __init__(self, interp, cropping=(1, 1), **kw):
        super().__init__(interp, cropping, **kw)


class Cropping2D(_Cropping):
    prefix, rank = "cropping2d", 2

    def __init__(self, interp, cropping=((0, 0), (0, 0)), data_format=None, **kw):
        super().__init__(interp, cropping, **kw)


class Cropping3D(_Cropping):
    prefix, rank = "cropping3d", 3

    def __init__(self, interp, cropping=((1, 1), (1, 1), (1, 1)), data_format=None, **kw):
        super().__init__(interp, cropping, **kw)


class _UpSampling(_Spatial):
    replayable = True

    def output_shape(self, shape):
        return (shape[0], *(None if d is None else d * s for d, s in zip(shape[1:-1], self.sizes)), shape[-1])

    def forward(self, interp, x, training):
        for axis, s in enumerate(self.sizes, start=1):      # each row repeated s times along its axis
            shape = x.shape
            x = ops.reshape(x, (*shape[:axis + 1], 1, *shape[axis + 1:]))
            x = ops.tile(x, [1] * (axis + 1) + [s] + [1] * (len(shape) - axis - 1))
            x = ops.reshape(x, (*shape[:axis], shape[axis] * s, *shape[axis + 1:]))
        return x


class UpSampling1D(_UpSampling):
    prefix = "up_sampling1d"

    def __init__(self, interp, size=2, **kw):
        super().__init__(interp, **kw)
        self.sizes = [integer(size, "size")]


class UpSampling2D(_UpSampling):
    prefix, rank = "up_sampling2d", 2

    def __init__(self, interp, size=(2, 2), data_format=None, interpolation="nearest", **kw):
        super().__init__(interp, **kw)
        if data_format not in (None, "channels_last"):
            raise TdfValueError("UpSampling2D: tapecli supports channels_last only")
        if not isinstance(interpolation, str):
            raise TdfTypeError(f"interpolation must be a string, got {interpolation!r}")
        self.interpolation = interpolation.lower()
        self.sizes = [p[0] for p in _pairs(size, 2, "size")]

    def forward(self, interp, x, training):
        """Keras's: the rows repeated for "nearest", else ops.image.resize to the scaled size."""
        if self.interpolation == "nearest":
            return super().forward(interp, x, training)
        from tapecli.library.keras.preprocessing import keras_resize
        return keras_resize(x, x.shape[1] * self.sizes[0], x.shape[2] * self.sizes[1], self.interpolation)


class UpSampling3D(_UpSampling):
    prefix, rank = "up_sampling3d", 3

    def __init__(self, interp, size=(2, 2, 2), data_format=None, **kw):
        super().__init__(interp, **kw)
        if data_format not in (None, "channels_last"):
            raise TdfValueError("UpSampling3D: tapecli supports channels_last only")
        self.sizes = [p[0] for p in _pairs(size, 3, "size")]


def _takes_mask(function) -> bool:
    """Whether a Lambda's function takes ``mask`` (Keras's call then passes it its input's mask)."""
    if isinstance(function, Function):
        return any(p.name == "mask" for p in function.node.params)
    return "mask" in getattr(function, "parameter_names", tuple)()      # (CPython's run: the program's function)


def _function_config(interp, fn) -> dict:
    """Keras's Lambda._serialize_function_to_config: a Python lambda as ``__lambda__`` (its code a name kept in the
    run, from which only this run's from_config makes it again), another function as keras.saving serializes it."""
    if function_name(fn) != "<lambda>":
        return program_serialized(fn, interp)
    ctx = current()
    if ctx.keras_lambdas is None:
        ctx.keras_lambdas = {}
    code = next((code for code, known in ctx.keras_lambdas.items() if known is fn), None)
    if code is None:
        code = f"<tapecli lambda {len(ctx.keras_lambdas) + 1}>"
        ctx.keras_lambdas[code] = fn
    return {"class_name": "__lambda__", "config": {"code": code, "defaults": None, "closure": None}}


def _function_of_config(interp, config: dict):
    """Keras's Lambda.from_config of a config's function: a Python lambda only where unsafe deserialization is on
    (and, in tapecli, only one of this run's Lambda configs), another by its registered name."""
    if config.get("class_name") == "__lambda__":
        if not current().keras_unsafe:
            raise TdfValueError(
                "Requested the deserialization of a `Lambda` layer whose `function` is a Python lambda. This carries a "
                "potential risk of arbitrary code execution and thus it is disallowed by default. If you trust the "
                "source of the artifact, you can override this error by passing `safe_mode=False` to the loading "
                "function, or calling `keras.config.enable_unsafe_deserialization().")
        found = (current().keras_lambdas or {}).get((config.get("config") or {}).get("code"))
        if found is None:
            raise TdfValueError("tapecli makes a Lambda's Python lambda again only from a config of its own run")
        return found
    name = config.get("config")
    found = registered_object(name, None) if isinstance(name, str) else None
    if found is None:
        raise TdfTypeError(f"Could not locate function '{name}'. Make sure custom classes and functions are decorated "
                           "with `@keras.saving.register_keras_serializable()`. If they are already decorated, make "
                           "sure they are all imported so that the decorator is run before trying to load them. Full "
                           f"object config: {config}")
    return found


class Lambda(Layer):
    prefix = "lambda"
    takes_mask = True

    def __init__(self, interp, function, output_shape=None, mask=None, arguments=None, **kw):
        super().__init__(interp, **kw)
        # its output's mask: mask(inputs, input_mask) where mask is a function, else the mask given (Keras's)
        self.mask, self.supports_masking = mask, mask is not None
        if isinstance(function, dict):          # (from_config: a config's function, as get_config writes it)
            function = _function_of_config(interp, function)
        if isinstance(function, str):
            raise TdfTypeError("Lambda takes a function")
        self.function_value, self.fn = function, activation_fn(function, interp)
        self.function_takes_mask = _takes_mask(function)
        self.arguments = dict(arguments or {})
        self.given_shape = None if output_shape is None else dims(output_shape, "output_shape")

    def output_shape(self, shape):
        with probing(self.interp):
            return self.probed_shape([KerasTensor(shape, float_dtype())], listed=False)

    def symbolic_shape(self, x):
        return self.probed_shape([x], listed=False)

    def get_config(self) -> dict:
        """Keras's: the base config, the function's (a Python lambda's code stands for it: not CPython's marshal
        bytes, which Keras writes, but a name of it in this run), the output shape where given, the arguments."""
        out = base_config(self)
        out["function"] = _function_config(self.interp, self.function_value)
        if self.given_shape is not None:
            out["output_shape"] = tuple(self.given_shape)
        out["arguments"] = dict(self.arguments)
        return out

    def compute_mask(self, x, mask):
        if self.mask is None or isinstance(self.mask, (Tensor, np.ndarray, list)):
            return None if self.mask is None else tensor(self.mask)
        return self.interp.call_value(self.mask, [x, mask])

    def probed_shape(self, xs: list, listed: bool) -> tuple:
        """The output's shape: the given one, else found as Keras finds it, by calling the function (on ones;
        Keras calls it on Keras tensors of the inputs' shapes, and makes one of its result's: named as it names
        them, before the output)."""
        if self.given_shape is not None:
            return (xs[0].shape[0], *self.given_shape)
        for _ in range(len(xs) + 1):
            KerasTensor.named(self.interp)
        probes = [x.probe() for x in xs]
        masks = [x.probe_mask() for x in xs] if self.function_takes_mask else [None] * len(xs)
        out = self.forward(self.interp, probes if listed else probes[0], False, masks if listed else masks[0])
        return (xs[0].shape[0], *tensor(out).shape[1:])

    def listed_call(self, interp, xs):
        out = KerasTensor(self.probed_shape(xs, listed=True), float_dtype(), self, xs, listed=True)
        self.symbolic = (xs, out)
        return out

    def apply(self, interp, x, training=None, **given):
        # (a list of tensors reaches the function as a list, as Keras passes it; a NumPy array as a tensor)
        return self.forward(interp, call_argument(list(x)), bool(training), **given) if isinstance(x, (list, tuple)) \
            else super().apply(interp, call_argument(x), training, **given)

    def forward(self, interp, x, training, mask=None):
        given = {**self.arguments, "mask": mask} if self.function_takes_mask else self.arguments
        if given:
            return interp.call_value(self.function_value, [x], given)
        return self.fn(x)


class _Noise(Layer):
    """Identity at inference; with training=True, ``noise(x)``, drawn from the layer's SeedGenerator (Keras's, made
    with the layer where the rate is positive) as Keras's TensorFlow backend draws."""

    built_at_init = True
    replayable = True           # (its draws are a plan's: kernels.drawn)
    supports_masking = True
    rate = 0.0

    def seeded(self, rate: float, seed) -> None:
        """Its rate (a GaussianNoise's stddev), and its generator where that is positive."""
        self.rate = rate
        self.generator = seed_generator(seed) if rate > 0 else None

    def forward(self, interp, x, training):
        return self.noise(x) if training and self.rate > 0 else x


class GaussianNoise(_Noise):
    prefix = "gaussian_noise"

    def __init__(self, interp, stddev, seed=None, **kw):
        super().__init__(interp, seed=seed, **kw)
        self.seeded(num(stddev, "stddev"), seed)

    def noise(self, x):
        return ops.add(x, Tensor(kernels.drawn(keras_normal_values, self.generator, x.shape, 0.0, self.rate,
                                               np.dtype(x.dtype))))


class _RateNoise(_Noise):
    def __init__(self, interp, rate, seed=None, **kw):
        super().__init__(interp, seed=seed, **kw)
        self.seeded(num(rate, "rate"), seed)


class GaussianDropout(_RateNoise):
    prefix = "gaussian_dropout"

    def noise(self, x):
        if self.rate == 1.0:
            raise TdfValueError("GaussianDropout with rate=1 in training: Keras's stddev divides by 1 - rate = 0")
        std = math.sqrt(self.rate / (1.0 - self.rate))
        return ops.mul(x, Tensor(kernels.drawn(keras_normal_values, self.generator, x.shape, 1.0, std,
                                               np.dtype(x.dtype))))


class _SpatialDropout(_RateNoise):
    """Keras's dropout of whole channels: one draw per sample and channel (channels last, or first)."""

    channels_first = False

    def noise(self, x):
        if self.rate == 1.0:
            return ops.mul(x, scalar(0.0, x.dtype))
        inner = [1] * (x.ndim - 2)
        shape = (x.shape[0], x.shape[1], *inner) if self.channels_first else (x.shape[0], *inner, x.shape[-1])
        return keras_dropout(x, self.generator, shape, self.rate)


class SpatialDropout1D(_SpatialDropout):
    prefix = "spatial_dropout1d"


class SpatialDropout2D(_SpatialDropout):
    prefix = "spatial_dropout2d"

    def __init__(self, interp, rate, data_format=None, seed=None, **kw):
        super().__init__(interp, rate, seed, **kw)
        self.channels_first = data_format == "channels_first"


class SpatialDropout3D(SpatialDropout2D):
    prefix = "spatial_dropout3d"


LAYERS = [ZeroPadding1D, ZeroPadding2D, ZeroPadding3D, Cropping1D, Cropping2D,
          Cropping3D, UpSampling1D, UpSampling2D, UpSampling3D, Lambda, GaussianNoise, GaussianDropout, SpatialDropout1D,
          SpatialDropout2D, SpatialDropout3D]
