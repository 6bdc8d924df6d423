"""Keras 3's regularization layers beyond Dropout and the noise layers (spatial.py): ActivityRegularization, whose
L1/L2 penalty of its input goes to ``layer.losses`` (and a model's) as any layer's ``activity_regularizer=``, and
AlphaDropout, an identity at inference that keeps SELU's mean and variance in training."""
from __future__ import annotations

import numpy as np

from tapecli import kernels, ops
from tapecli.errors import TdfValueError
from tapecli.interpreter.conversions import python_number
from tapecli.library.keras import penalties
from tapecli.library.keras.common import dims, num, scalar
from tapecli.library.keras.layers import Layer, keras_dropout_keep, seed_generator
from tapecli.library.keras.spatial import _RateNoise
from tapecli.runtime.values import Tensor

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


class ActivityRegularization(Layer):
    """The identity, with the activity regularizer L1L2(l1, l2) (Layer.apply adds its loss of each call)."""

    built_at_init = True
    prefix = "activity_regularization"
    supports_masking = True

    def __init__(self, interp, l1=0.0, l2=0.0, **kw):
        super().__init__(interp, **kw)
        self.activity_regularizer = penalties.L1L2(l1, l2)
        self.l1, self.l2 = num(l1, "l1"), num(l2, "l2")


class AlphaDropout(_RateNoise):
    """In training, a dropped unit becomes SELU's negative saturation -alpha * scale, then a * x + b keeps the mean
    and variance (Keras's formula); ``noise_shape`` broadcasts the draws as Dropout's. tf.keras's AlphaDropout is
    Keras 3's legacy class (its type, its config of rate and seed); the rate is checked as Keras 3's own layer
    checks it."""

    prefix = "alpha_dropout"

    def __init__(self, interp, rate, noise_shape=None, seed=None, **kw):
        super().__init__(interp, rate, seed, **kw)
        if self.generator is None:          # (the legacy class makes its SeedGenerator at any rate)
            self.generator = seed_generator(seed)
        if not 0.0 <= self.rate <= 1.0:
            raise TdfValueError(f"Invalid value received for argument `rate`. Expected a float value between 0 "
                                f"and 1. Received: rate={self.rate}")
        self.noise_shape = dims(noise_shape, "noise_shape")

    def python_class(self) -> str:
        return "keras.src.legacy.layers.AlphaDropout"

    def config(self):
        return {"rate": lambda: python_number(float(self.rate))}

    def noise(self, x):
        shape = x.shape if self.noise_shape is None else tuple(
            x.shape[i] if d is None else d for i, d in enumerate(self.noise_shape))
        kept = ops.cast(Tensor(kernels.drawn(keras_dropout_keep, self.generator, shape, self.rate,
                                             np.dtype(np.float32))), x.dtype)       # (keras.random.uniform's floatx)
        if self.rate == 1.0:        # (Keras's a = 0.0 ** -0.5)
            raise TdfValueError("AlphaDropout with rate=1 in training: 0.0 cannot be raised to a negative power")
        alpha_p = -_SELU_ALPHA * _SELU_SCALE
        a = ((1 - self.rate) * (1 + self.rate * alpha_p ** 2)) ** -0.5
        b = -a * alpha_p * self.rate
        dropped = ops.mul(scalar(alpha_p, x.dtype), ops.sub(scalar(1.0, x.dtype), kept))
        return ops.add(ops.mul(scalar(a, x.dtype), ops.add(ops.mul(x, kept), dropped)), scalar(b, x.dtype))


LAYERS = [ActivityRegularization, AlphaDropout]
