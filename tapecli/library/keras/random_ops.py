"""keras.random on the TensorFlow backend: its draws are TensorFlow's stateless ops of the seed Keras draws
(``draw_seed``: an int seed's [seed, 0], a SeedGenerator's next state, else Keras's global SeedGenerator's,
made at the first unseeded draw), so the numbers are Keras's, bit for bit (kernels/tf_random.py)."""
from __future__ import annotations

import numpy as np

from tapecli import kernels, ops
from tapecli.errors import TdfValueError
from tapecli.kernels import tf_random
from tapecli.library.core import _float_dtype, to_dtype, to_shape
from tapecli.library.keras.common import converted, integer, num
from tapecli.library.keras.initializers import SeedGenerator, keras_seed, keras_uniform
from tapecli.runtime.context import current
from tapecli.runtime.values import Tensor


def draw_seed(seed) -> tuple[int, int]:
    """Keras's draw_seed, as the stateless seed TensorFlow takes."""
    if isinstance(seed, SeedGenerator):
        return seed.next()
    if seed is None:
        ctx = current()
        if ctx.keras_seed_generator is None:
            ctx.keras_seed_generator = SeedGenerator()
        return ctx.keras_seed_generator.next(ordered=False)
    if isinstance(seed, Tensor) and seed.dtype.kind in "iu" and seed.ndim == 0:
        return keras_seed(integer(seed, "seed"))
    raise TdfValueError(f"Argument `seed` must be either an integer or an instance of `SeedGenerator`. Received: "
                        f"seed={seed}")


def drawn_values(op, seed, dtype, shape, *params):
    """One draw (module-level: a loop plan makes it again, kernels.drawn), its seed drawn at each call."""
    return op(draw_seed(seed), shape, dtype, *params)


def _draw(op, seed, dtype, shape, *params) -> Tensor:
    return Tensor(kernels.drawn(drawn_values, op, seed, dtype, tuple(shape), *params))


def normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    return _draw(tf_random.stateless_normal, seed, _float_dtype(dtype), to_shape(shape), num(mean, "mean"),
                 num(stddev, "stddev"))


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    return _draw(tf_random.stateless_truncated_normal, seed, _float_dtype(dtype), to_shape(shape), num(mean, "mean"),
                 num(stddev, "stddev"))


def uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    return _draw(keras_uniform, seed, _float_dtype(dtype), to_shape(shape), num(minval, "minval"), num(maxval, "maxval"))


def randint(shape, minval, maxval, dtype="int32", seed=None):
    """Keras's: int32 or int64 drawn (another integer dtype through int64), then cast."""
    want = to_dtype(dtype)
    drawn = _draw(tf_random.stateless_uniform, seed, want if want.name in ("int32", "int64") else np.dtype(np.int64),
                  to_shape(shape), integer(minval, "minval"), integer(maxval, "maxval"))
    return drawn if drawn.dtype == want else ops.cast(drawn, want)


def dropout(inputs, rate, noise_shape=None, seed=None):
    """TensorFlow's stateless_dropout: x * (1 / (1 - rate)) where a uniform draw is >= rate, else 0."""
    x = converted(inputs, "inputs")
    rate = num(rate, "rate")
    if rate == 1.0:
        return Tensor(np.zeros(x.shape, x.dtype))
    if rate == 0.0:
        return x
    shape = x.shape if noise_shape is None else tuple(
        x.shape[i] if d is None else integer(d, "noise_shape") for i, d in enumerate(noise_shape))
    keep = Tensor(kernels.drawn(drawn_values, tf_random.stateless_uniform, seed, np.dtype(x.dtype), shape) >=
                  x.dtype.type(rate))
    scaled = ops.mul(x, Tensor(np.asarray(1.0 / (1.0 - rate), x.dtype)))
    return ops.where(ops.broadcast_to(keep, x.shape), scaled, Tensor(np.zeros((), x.dtype)))


def shuffle(x, axis=0, seed=None):
    """Keras's: the order of a stateless uniform draw (argsort), taken along ``axis``."""
    t = converted(x, "x")
    axis = integer(axis, "axis")
    draw = kernels.drawn(drawn_values, tf_random.stateless_uniform, seed, np.dtype(np.float32), (t.shape[axis],))
    return ops.gather(t, Tensor(np.argsort(draw, kind="stable").astype(np.int64)), axis=axis)


FUNCTIONS = {"normal": normal, "truncated_normal": truncated_normal, "uniform": uniform, "randint": randint,
             "dropout": dropout, "shuffle": shuffle}
