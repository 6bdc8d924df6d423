"""tf.image's random adjustments: brightness, contrast, hue, saturation, flips and crops, each by its draws of
tf.random.uniform (a seed pair: the stateless op; else the run's stateful draws) in TensorFlow's shapes and order,
then the adjustment tf.image does with them (image_ops_impl.py, random_crop_ops.py)."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import TdfValueError
from tapecli.interpreter.registry import builtin
from tapecli.library.core import to_float, to_shape, uniform
from tapecli.library.tf_image import adjust_brightness, adjust_contrast, adjust_hue, adjust_saturation, _axes, _image
from tapecli.library.tf_random import stateless_uniform
from tapecli.runtime.values import Tensor

_INT32_MAX = int(np.iinfo(np.int32).max)


def _stateless(seed):
    return lambda shape, minval, maxval, dtype=None: stateless_uniform(shape, seed, minval, maxval, dtype)


def _stateful(interp, seed):
    return lambda shape, minval, maxval, dtype=None: uniform(interp, shape, minval, maxval, seed=seed, dtype=dtype)


def _brightness(image, max_delta, draw):
    max_delta = to_float(max_delta)
    if max_delta < 0:
        raise TdfValueError("max_delta must be non-negative.")
    return adjust_brightness(image, draw([], -max_delta, max_delta))


def _bounded(lower, upper) -> tuple[float, float]:
    lower, upper = to_float(lower), to_float(upper)
    if upper <= lower:
        raise TdfValueError("upper must be > lower.")
    if lower < 0:
        raise TdfValueError("lower must be non-negative.")
    return lower, upper


@builtin("image.stateless_random_brightness")
def stateless_random_brightness(image, max_delta, seed):
    return _brightness(image, max_delta, _stateless(seed))


@builtin("image.random_brightness", interp=True)
def random_brightness(interp, image, max_delta, seed=None):
    return _brightness(image, max_delta, _stateful(interp, seed))


@builtin("image.stateless_random_contrast")
def stateless_random_contrast(image, lower, upper, seed):
    return adjust_contrast(image, _stateless(seed)([], *_bounded(lower, upper)))


@builtin("image.random_contrast", interp=True)
def random_contrast(interp, image, lower, upper, seed=None):
    return adjust_contrast(image, _stateful(interp, seed)([], *_bounded(lower, upper)))


@builtin("image.stateless_random_hue")
def stateless_random_hue(image, max_delta, seed):
    max_delta = to_float(max_delta)
    if max_delta > 0.5:
        raise TdfValueError("max_delta must be <= 0.5.")
    if max_delta < 0:
        raise TdfValueError("max_delta must be non-negative.")
    return adjust_hue(image, stateless_uniform([], seed, -max_delta, max_delta))


@builtin("image.stateless_random_saturation")
def stateless_random_saturation(image, lower, upper, seed=None):
    return adjust_saturation(image, stateless_uniform([], seed, *_bounded(lower, upper)))


def _flip(image, axis: int, draw, what: str):
    """_random_flip: one image reversed where a uniform draw is < 0.5; a batch blended by its draws [N] rounded
    (flips * reversed + (1 - flips) * image)."""
    x = _image(image, what)
    axis = _axes(x)[axis]
    if x.ndim == 3:
        return ops.reverse(x, [axis]) if float(draw([], 0, 1.0).value) < 0.5 else x
    flips = ops.cast(ops.round_(ops.reshape(draw([x.shape[0]], 0, 1.0), (x.shape[0], 1, 1, 1))), x.dtype)
    one = Tensor(np.ones((), x.dtype))
    return ops.add(ops.mul(flips, ops.reverse(x, [axis])), ops.mul(ops.sub(one, flips), x))


@builtin("image.stateless_random_flip_left_right")
def stateless_random_flip_left_right(image, seed):
    return _flip(image, 1, _stateless(seed), "stateless_random_flip_left_right")


@builtin("image.stateless_random_flip_up_down")
def stateless_random_flip_up_down(image, seed):
    return _flip(image, 0, _stateless(seed), "stateless_random_flip_up_down")


@builtin("image.random_flip_left_right", interp=True)
def random_flip_left_right(interp, image, seed=None):
    return _flip(image, 1, _stateful(interp, seed), "random_flip_left_right")


@builtin("image.random_flip_up_down", interp=True)
def random_flip_up_down(interp, image, seed=None):
    return _flip(image, 0, _stateful(interp, seed), "random_flip_up_down")


def _crop(value, size, draw):
    """A window of ``size`` at offsets drawn as int32 in [0, int32 max) modulo the room on each axis."""
    x = ops.to_tensor(value)
    size = to_shape(size)
    if len(size) != x.ndim or any(s > d for s, d in zip(size, x.shape)):
        raise TdfValueError(f"Need value.shape >= size, got {list(x.shape)} {list(size)}")
    drawn = np.asarray(draw([x.ndim], 0, _INT32_MAX, "int32").value)
    offset = [int(o) % (d - s + 1) for o, d, s in zip(drawn, x.shape, size)]
    return ops.getitem(x, tuple(slice(o, o + s) for o, s in zip(offset, size)))


@builtin("image.stateless_random_crop")
def stateless_random_crop(value, size, seed, name=None):
    return _crop(value, size, _stateless(seed))


@builtin("image.random_crop", interp=True)
def random_crop(interp, value, size, seed=None, name=None):
    return _crop(value, size, _stateful(interp, seed))
