"""Keras 3.15's random image augmentation layers on the TensorFlow backend (keras.src.layers.preprocessing.
image_preprocessing): RandomFlip, RandomRotation, RandomZoom, RandomTranslation, RandomContrast,
RandomBrightness and RandomCrop. Each holds a SeedGenerator made with the layer (its seed drawn from Python's
random where none is given); a training call draws from it with keras.random.uniform (TensorFlow's stateless
draws of the generator's next seed, bit for bit), in Keras's order and shapes, and transforms the images with
the ops Keras's TensorFlow backend runs: rotations, zooms and translations through affine_transform, that is
ImageProjectiveTransformV3 (kernels/tf_image_transform.py). A call's ``training`` left None is the call
signature's True, as in Keras; an inference call passes the images through."""
from __future__ import annotations

import math

import numpy as np

from tapecli import kernels, ops
from tapecli.errors import TdfTypeError, TdfValueError
from tapecli.library.keras import initializers
from tapecli.library.keras.common import float_dtype, integer, num, seed_value, tensor
from tapecli.library.keras.initializers import keras_uniform
from tapecli.library.keras.optimizers import plain
from tapecli.library.keras.layers import Layer
from tapecli.library.keras.preprocessing import keras_resize
from tapecli.runtime.values import Tensor

_F = np.dtype(np.float32)
_FILL_MODES = ("reflect", "wrap", "constant", "nearest")
_INTERPOLATIONS = ("nearest", "bilinear")


def _uniform(generator, shape, minval=0.0, maxval=1.0, dtype=None) -> Tensor:
    """keras.random.uniform of the generator's next seed, of floatx by default (a module-level draw: a loop plan
    makes it again)."""
    dtype = float_dtype() if dtype is None else dtype
    return Tensor(kernels.drawn(_drawn_uniform, generator, tuple(shape), minval, maxval, dtype))


def _drawn_uniform(generator, shape, minval, maxval, dtype):
    return keras_uniform(generator.next(), shape, dtype, minval, maxval)


def _f32(value, dtype=_F) -> Tensor:
    """A constant of float32 (or of ``dtype``: Keras's floatx where it computes in it)."""
    return Tensor(np.asarray(value, dtype))


def _checked_choice(value, allowed, what: str):
    if value not in allowed:
        raise TdfValueError(f"Unknown `{what}` {value}. Expected of one {allowed}.")
    return value


class _Augmentation(Layer):
    """An image [H, W, C] or a batch [N, H, W, C] (channels last), a SeedGenerator of its own."""

    def __init__(self, interp, seed=None, data_format=None, **kw):
        super().__init__(interp, **kw)
        if data_format not in (None, "channels_last"):
            raise TdfValueError(f"{type(self).__name__}: tapecli supports channels_last only")
        self.seed = None if seed is None else seed_value(seed)
        self.generator = initializers.SeedGenerator(self.seed)

    def images(self, x) -> Tensor:
        if x.ndim not in (3, 4):
            raise TdfValueError(f"Expected image tensor to have rank 3 (single image) or 4 (batch of images). "
                                f"Received: data.shape={tuple(x.shape)}")
        return x

    def call(self, interp, args, kwargs, node):
        """An explicit ``training=None`` passes the images through: Keras's call then runs with None, not with
        its signature's True (which a call without ``training``, or a model's, resolves to)."""
        if "training" in kwargs and kwargs["training"] is None:
            kwargs = {**kwargs, "training": False}
        return super().call(interp, args, kwargs, node)

    def apply(self, interp, x, training=None):
        """Layer's apply, but ``training`` None is True (Keras's call signature's default), and no cast of the
        input here: each layer casts as Keras's does."""
        x = self.images(tensor(x))
        self.build_for(x.shape, float_dtype())
        batched = x.ndim == 4
        images = x if batched else ops.reshape(x, (1, *x.shape))
        out = self.augment(images, True if training is None else bool(training))
        return out if batched else ops.reshape(out, out.shape[1:])

    def augment(self, images: Tensor, training: bool) -> Tensor:
        raise NotImplementedError


class _Geometric(_Augmentation):
    """Keras's BaseImagePreprocessingLayer: the images cast to the compute dtype, then transformed in training."""

    def augment(self, images, training):
        images = ops.cast(images, float_dtype())
        return self.transformed(images) if training else images


class RandomFlip(_Geometric):
    """Each image flipped where a uniform draw [N, 1, 1, 1] is <= 0.5: left-right, up-down, or both (by the same
    draw)."""

    prefix = "random_flip"

    def __init__(self, interp, mode="horizontal_and_vertical", seed=None, data_format=None, **kw):
        super().__init__(interp, seed, data_format, **kw)
        self.mode = _checked_choice(mode, ("horizontal", "vertical", "horizontal_and_vertical"), "mode")

    def config(self):
        return {"mode": lambda: self.mode}

    def transformed(self, images):
        draw = _uniform(self.generator, (images.shape[0], 1, 1, 1))
        flips = ops.less_equal(draw, _f32(0.5, draw.dtype))
        for axis, word in ((2, "horizontal"), (1, "vertical")):
            if word in self.mode:
                images = ops.where(flips, ops.reverse(images, [axis]), images)
        return images


class _Affine(_Geometric):
    """The images moved by affine_transform (ImageProjectiveTransformV3 of float32 transforms [N, 8])."""

    def __init__(self, interp, fill_mode="reflect", interpolation="bilinear", seed=None, fill_value=0.0,
                 data_format=None, **kw):
        super().__init__(interp, seed, data_format, **kw)
        self.fill_mode = _checked_choice(fill_mode, _FILL_MODES, "fill_mode")
        self.interpolation = _checked_choice(interpolation, _INTERPOLATIONS, "interpolation")
        self.fill_value = num(fill_value, "fill_value")

    def config(self):
        return {"fill_mode": lambda: self.fill_mode, "interpolation": lambda: self.interpolation}

    def transformed(self, images):
        transforms = ops.cast(self.transforms(images.shape[0], images.shape[1], images.shape[2]), _F)
        return ops.projective_transform(images, transforms, self.interpolation.upper(), self.fill_mode.upper(),
                                        self.fill_value)

    def transforms(self, n: int, height: int, width: int) -> Tensor:
        raise NotImplementedError


def _column(x) -> Tensor:
    return ops.reshape(x, (-1, 1))


def _rotation_matrix(angle: Tensor, height: int, width: int) -> Tensor:
    """Keras's _compute_affine_matrix about the image's center, no translation, scale 1, no shear: its ops in the
    angle's dtype (floatx) as it writes them (the zero shear's terms too)."""
    n, dtype = angle.shape[0], angle.dtype
    radians = _f32(math.pi / 180.0, dtype)
    angle = ops.mul(angle, radians)
    zeros, ones = _f32(np.zeros(n), dtype), _f32(np.ones(n), dtype)
    shear = ops.tan(ops.mul(zeros, radians))
    half, one = _f32(0.5, dtype), _f32(1, dtype)
    cx, cy = ops.mul(half, ops.sub(_f32(width, dtype), one)), ops.mul(half, ops.sub(_f32(height, dtype), one))
    cos, sin = ops.cos(angle), ops.sin(angle)
    a0 = ops.mul(ones, ops.add(cos, ops.mul(shear, sin)))
    a1 = ops.mul(ones, ops.add(ops.neg(sin), ops.mul(shear, cos)))
    a2 = ops.sub(ops.sub(ops.add(zeros, cx), ops.mul(cx, a0)), ops.mul(cy, a1))
    b0 = ops.mul(ones, ops.add(ops.mul(shear, cos), sin))
    b1 = ops.mul(ones, ops.add(ops.mul(shear, ops.neg(sin)), cos))
    b2 = ops.sub(ops.sub(ops.add(zeros, cy), ops.mul(cx, b0)), ops.mul(cy, b1))
    return ops.concat([*map(_column, (a0, a1, a2, b0, b1, b2)), _f32(np.zeros((n, 2)), dtype)], 1)


def _shown(value) -> str:
    """A factor as Keras's message prints it (Python's repr of the numbers given)."""
    if isinstance(value, (list, tuple)):
        inner = ", ".join(map(_shown, value))
        return f"[{inner}]" if isinstance(value, list) else f"({inner}{',' if len(value) == 1 else ''})"
    return repr(value.value.item()) if isinstance(value, Tensor) and value.ndim == 0 else str(value)


def _symmetric_factor(factor, what: str, bounds=(-1.0, 1.0)) -> tuple[float, float]:
    """BaseImagePreprocessingLayer._set_factor: a number f is (max(-|f|, low), |f|), a pair is sorted."""
    message = (f"The `{what}` argument should be a number (or a list of two numbers) in the range "
               f"[{_bound(bounds[0])}, {_bound(bounds[1])}]. Received: {what}={_shown(factor)}")
    factor = _pair(factor)
    if isinstance(factor, (list, tuple)):
        if len(factor) != 2:
            raise TdfValueError(message)
        lower, upper = sorted(num(f, what) for f in factor)
        if lower > bounds[1] or upper < bounds[0]:
            raise TdfValueError(message)
        return lower, upper
    if isinstance(factor, bool) or not isinstance(factor, (int, float, Tensor)):
        raise TdfValueError(message)
    value = num(factor, what)
    if value < bounds[0] or value > bounds[1]:
        raise TdfValueError(message)
    return max(-abs(value), bounds[0]), abs(value)


def _pair(factor):
    """A list of numbers as the program wrote it (a program's list reaches a layer as a tensor): its numbers."""
    return plain(factor) if isinstance(factor, Tensor) and factor.ndim == 1 else factor


def _config_factor(given, low):
    """The factor Keras keeps and writes in its config (BaseImagePreprocessingLayer._set_factor) of the given one,
    the program's Python numbers kept: a pair sorted, a number f ``(max(-|f|, low), |f|)``, ``low`` its bound."""
    value = plain(given)
    if isinstance(value, (list, tuple)):
        return tuple(sorted(value))
    return max(-abs(value), low), abs(value)


def _bound(value: float) -> str:
    return str(int(value)) if value == int(value) else str(value)


class RandomRotation(_Affine):
    """Each image rotated about its center by an angle drawn uniformly from factor * 360 degrees."""

    prefix = "random_rotation"

    def __init__(self, interp, factor, fill_mode="reflect", interpolation="bilinear", seed=None, fill_value=0.0,
                 data_format=None, **kw):
        super().__init__(interp, fill_mode, interpolation, seed, fill_value, data_format, **kw)
        self.factor = _symmetric_factor(factor, "factor")

    def config_values(self):
        return {"factor": _config_factor(self.given_arguments["factor"], -1)}

    def transforms(self, n, height, width):
        angle = _uniform(self.generator, (n,), self.factor[0] * 360.0, self.factor[1] * 360.0)
        return _rotation_matrix(angle, height, width)


def _range_factor(factor, what: str, above_minus_one: bool) -> tuple[float, float]:
    """RandomZoom's and RandomTranslation's _set_factor: a number f is (-|f|, |f|), a pair is sorted, each in
    [-1, 1] (a zoom's above -1)."""
    message = ("The `height_factor` and `width_factor` arguments should be a number (or a list of two numbers) "
               "in the range [-1.0, 1.0]. " if not above_minus_one else
               "The `height_factor` and `width_factor` arguments should be a number (or a list of two numbers) "
               "in the range (-1.0, 1.0]. ")

    def checked(given):
        value = num(given, what)
        if value > 1.0 or value < -1.0 or (above_minus_one and value == -1.0):
            raise TdfValueError(message + f"Received: input_number={_shown(given)}")
        return value

    factor = _pair(factor)
    if isinstance(factor, (list, tuple)):
        if len(factor) != 2:
            raise TdfValueError(message + f"Received: {what}={_shown(factor)}")
        lower, upper = sorted(checked(f) for f in factor)
        return lower, upper
    if isinstance(factor, bool) or not isinstance(factor, (int, float, Tensor)):
        raise TdfValueError(message + f"Received: {what}={_shown(factor)}")
    value = abs(checked(factor))
    return -value, value


class RandomZoom(_Affine):
    """Each image zoomed about its center by 1 + a factor drawn uniformly (height, then width: its own draw
    where ``width_factor`` is given, else the height's)."""

    prefix = "random_zoom"

    def __init__(self, interp, height_factor, width_factor=None, fill_mode="reflect", interpolation="bilinear",
                 seed=None, fill_value=0.0, data_format=None, **kw):
        super().__init__(interp, fill_mode, interpolation, seed, fill_value, data_format, **kw)
        self.height_range = _range_factor(height_factor, "height_factor", True)
        self.width_range = None if width_factor is None else _range_factor(width_factor, "width_factor", True)

    def transforms(self, n, height, width):
        zoom_y = _uniform(self.generator, (n, 1), 1.0 + self.height_range[0], 1.0 + self.height_range[1])
        zoom_x = zoom_y if self.width_range is None else \
            _uniform(self.generator, (n, 1), 1.0 + self.width_range[0], 1.0 + self.width_range[1])
        zoom_x, zoom_y = ops.cast(zoom_x, _F), ops.cast(zoom_y, _F)       # (Keras's zooms: float32)
        x_offset = ops.mul(ops.div(ops.sub(_f32(width), _f32(1)), _f32(2)), ops.sub(_f32(1), zoom_x))
        y_offset = ops.mul(ops.div(ops.sub(_f32(height), _f32(1)), _f32(2)), ops.sub(_f32(1), zoom_y))
        zeros = _f32(np.zeros((n, 1)))
        return ops.concat([zoom_x, zeros, x_offset, zeros, zoom_y, y_offset, _f32(np.zeros((n, 2)))], 1)


class RandomTranslation(_Affine):
    """Each image moved by a fraction of its height, then of its width, each drawn uniformly."""

    prefix = "random_translation"

    def __init__(self, interp, height_factor, width_factor, fill_mode="reflect", interpolation="bilinear", seed=None,
                 fill_value=0.0, data_format=None, **kw):
        super().__init__(interp, fill_mode, interpolation, seed, fill_value, data_format, **kw)
        self.height_range = _range_factor(height_factor, "height_factor", False)
        self.width_range = _range_factor(width_factor, "width_factor", False)

    def transforms(self, n, height, width):
        dy = _uniform(self.generator, (n, 1), *self.height_range)
        dy = ops.mul(dy, _f32(height, dy.dtype))
        dx = _uniform(self.generator, (n, 1), *self.width_range)
        dx = ops.cast(ops.mul(dx, _f32(width, dx.dtype)), _F)
        zeros, ones = _f32(np.zeros((n, 1))), _f32(np.ones((n, 1)))
        return ops.concat([ones, zeros, ops.neg(dx), zeros, ones, ops.neg(ops.cast(dy, _F)),
                           _f32(np.zeros((n, 2)))], 1)


class _ValueAugmentation(_Augmentation):
    """RandomContrast and RandomBrightness: a factor [N, 1, 1, 1] drawn, the result clipped to ``value_range``.
    Keras keeps an integer image's dtype through its sums; tapecli takes float images."""

    def __init__(self, interp, factor, value_range=(0, 255), seed=None, **kw):
        super().__init__(interp, seed, None, **kw)
        if not isinstance(value_range, (list, tuple)) or len(value_range) != 2:
            raise TdfValueError(f"The `value_range` argument should be a list of two numbers. Received: "
                                f"value_range={value_range}")
        self.value_range = [num(v, "value_range") for v in value_range]
        self.factor = _symmetric_factor(factor, "factor", self.factor_bounds)

    def images(self, x):
        x = super().images(x)
        if x.dtype.kind != "f":
            raise TdfTypeError(f"{type(self).__name__}: tapecli takes float images, got {x.dtype.name}")
        return ops.cast(x, float_dtype())

    def augment(self, images, training):
        if not training:
            return images
        low, high = (Tensor(np.asarray(v, images.dtype)) for v in self.value_range)
        return ops.clip(self.adjusted(images), low, high)


class RandomContrast(_ValueAugmentation):
    """Each image's distance from its mean (over height, then width) scaled by a factor drawn from
    [1 - lower, 1 + upper]."""

    prefix = "random_contrast"
    factor_bounds = (0.0, 1.0)

    def config_values(self):
        return {"factor": _config_factor(self.given_arguments["factor"], 0)}

    def adjusted(self, images):
        dtype = images.dtype
        factor = _uniform(self.generator, (images.shape[0], 1, 1, 1), 1.0 - self.factor[0], 1.0 + self.factor[1],
                          dtype)
        mean = ops.reduce_mean(ops.reduce_mean(images, (1,), True), (2,), True)
        return ops.add(ops.mul(ops.sub(images, mean), factor), mean)


class RandomBrightness(_ValueAugmentation):
    """Each image shifted by a delta drawn from the factor's range times the value range's width."""

    prefix = "random_brightness"
    factor_bounds = (-1.0, 1.0)

    def __init__(self, interp, factor, value_range=(0, 255), seed=None, **kw):
        super().__init__(interp, factor, value_range, seed, **kw)
        self.value_range = sorted(self.value_range)

    def config_values(self):
        return {"factor": _config_factor(self.given_arguments["factor"], -1),
                "value_range": sorted(plain(self.given_arguments["value_range"]))}

    def adjusted(self, images):
        delta = _uniform(self.generator, (images.shape[0], 1, 1, 1), *self.factor)
        delta = ops.mul(delta, _f32(self.value_range[1] - self.value_range[0], delta.dtype))
        return ops.add(images, ops.cast(delta, images.dtype))


class RandomCrop(_Augmentation):
    """A height x width window at offsets drawn uniformly (one for the whole batch); an image not larger than
    the window in both dimensions is sliced from the offsets of its centered window of the target's aspect
    ratio, and what the slice holds resized (bilinear) to height x width, as Keras does."""

    prefix = "random_crop"

    def __init__(self, interp, height, width, seed=None, data_format=None, **kw):
        super().__init__(interp, seed, data_format, **kw)
        if seed is None:        # (Keras's: a seed drawn for its config first, then its SeedGenerator's own)
            self.seed, self.generator = self.generator.state[0], initializers.SeedGenerator(name=self.generator.name)
        self.height, self.width = integer(height, "height"), integer(width, "width")

    def config_values(self):
        return {"seed": int(self.seed)}

    def output_shape(self, shape):
        return (*shape[:-3], self.height, self.width, shape[-1])

    def augment(self, images, training):
        if not training:
            return images
        images = ops.cast(images, float_dtype())
        h, w = images.shape[1], images.shape[2]
        if h > self.height and w > self.width:
            top = int(self._offset(h - self.height + 1))
            left = int(self._offset(w - self.width + 1))
        else:       # (Keras's offsets of the window of the target's aspect ratio; the slice is of the target's size)
            crop_h = max(min(h, int(float(w * self.height) / self.width)), 1)
            crop_w = max(min(w, int(float(h * self.width) / self.height)), 1)
            top, left = int(float(h - crop_h) / 2), int(float(w - crop_w) / 2)
        out = ops.getitem(images, (slice(None), slice(top, top + self.height), slice(left, left + self.width),
                                   slice(None)))
        if out.shape[1:3] != (self.height, self.width):
            out = ops.cast(keras_resize(out, self.height, self.width), images.dtype)
        return out

    def _offset(self, bound: int):
        """A uniform draw from [0, bound) of floatx, truncated to int32 (Keras's cast)."""
        return _uniform(self.generator, (), 0.0, float(bound)).value


LAYERS = [RandomFlip, RandomRotation, RandomZoom, RandomTranslation, RandomContrast, RandomBrightness, RandomCrop]
