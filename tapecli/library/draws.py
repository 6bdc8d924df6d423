"""Random draws that a loop plan makes again (``kernels.drawn``): functions of a generator, or of the seed of a
generator made for the call, and of the draw's parameters, which a plan compares from one traced iteration to
the next (the function by identity: module-level, not a closure made at each call)."""
from __future__ import annotations

import numpy as np

from tapecli import kernels, ops
from tapecli.runtime.context import current
from tapecli.runtime.values import Tensor


def generator(source) -> np.random.Generator:
    """``source`` itself, a generator, or a generator made from it, a seed."""
    return source if isinstance(source, np.random.Generator) else np.random.default_rng(source)


def normal_values(source, mean, stddev, shape) -> np.ndarray:
    return generator(source).normal(mean, stddev, size=shape)


def uniform_values(source, low, high, shape) -> np.ndarray:
    return generator(source).uniform(low, high, size=shape)


def drawn(sample, dtype, *params) -> Tensor:
    """``sample(*params)`` as a tensor of ``dtype``: drawn through ``kernels.drawn``, converted by a kernel."""
    return ops.cast(Tensor(kernels.drawn(sample, *params)), dtype)


def tensorflow_stream(seed):
    """TensorFlow's seeded random ops (kernels/tf_random.StatefulRandom: its Philox streams, bit for bit) where a
    TensorFlow program's draw is reproducible in TensorFlow too, with a global seed set (tf.random.set_seed,
    keras.utils.set_random_seed) or an op seed given; None elsewhere (the run's own generator: TensorFlow's
    unseeded draws differ on every run, and TDF's seeded ones are tapecli's)."""
    if not current().settings.python_spelling:
        return None
    state = tf_random_state()
    return state if state.global_seed is not None or seed is not None else None


def tf_random_state():
    """The run's TensorFlow global seed and its seeded ops' kernel states (kernels/tf_random.StatefulRandom),
    made at the first use."""
    from tapecli.kernels.tf_random import run_state
    return run_state()


def tf_op_values(state, op: str, seed, dtype, shape, *params) -> np.ndarray:
    """One call of TensorFlow's stateful op ``op`` ("normal", "uniform", "truncated_normal") of ``state``."""
    return getattr(state, op)(shape, *params, dtype=dtype, seed=seed)
