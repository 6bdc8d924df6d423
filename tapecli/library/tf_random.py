"""tf.random beyond normal/uniform/truncated_normal: categorical, shuffle, gamma, poisson, split, fold_in and the
stateless samplers. stateless_normal, stateless_uniform, stateless_truncated_normal, stateless_categorical, split,
fold_in and a seeded TensorFlow program's shuffle, gamma and poisson give TensorFlow's own numbers (its Philox
streams, kernels/tf_random.py and tf_random_samplers.py); the others come from NumPy's generators: their shapes,
dtypes, supports and distributions are TensorFlow's."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.kernels import tf_random, tf_random_samplers, tf_sums
from tapecli.errors import ShapeError, TdfTypeError, TdfValueError
from tapecli.library.core import _check_size, _float_dtype, _rng, to_dtype, to_float, to_int, to_shape
from tapecli.interpreter.registry import builtin
from tapecli.library.draws import tensorflow_stream
from tapecli.runtime.values import Tensor, dtype_name


def _stateless(seed) -> np.random.Generator:
    s = ops.to_tensor(seed)
    if s.shape != (2,) or s.dtype.kind not in "iu":
        raise TdfValueError(f"a stateless seed must be a shape [2] integer tensor, got shape {list(s.shape)}")
    return np.random.default_rng([int(v) % 2**63 for v in s.value])


def _logits(logits, num_samples):
    z = ops.to_tensor(logits)
    z = ops.materialize(z) if z.weak else z
    if z.ndim != 2:
        raise ShapeError(f"categorical needs [batch, classes] logits, got shape {list(z.shape)}")
    n = to_int(num_samples, "num_samples")
    _check_size((z.shape[0], n))
    return z, n


def _multinomial(z: Tensor, n: int, key: int, counter: int, dtype) -> Tensor:
    out = tf_random_samplers.multinomial(np.asarray(z.value), n, key, counter, tf_sums.POOL_THREADS)
    return Tensor(out.astype(np.int64 if dtype is None else to_dtype(dtype)))


@builtin(interp=True)
def categorical(interp, logits, num_samples, dtype=None, seed=None, name=None):
    """Multinomial's draws: TensorFlow's where a seed makes them reproducible (its kernel's Philox state, one per
    seed pair and dtypes, moves on by each call's samples), NumPy's elsewhere."""
    z, n = _logits(logits, num_samples)
    state = tensorflow_stream(seed)
    if state is None:
        logp = z.value.astype(np.float64)
        p = np.exp(logp - logp.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        rng = _rng(interp, seed)
        out = np.stack([rng.choice(z.shape[1], size=n, p=row) for row in p]) if z.shape[0] else np.zeros((0, n))
        return Tensor(out.astype(np.int64 if dtype is None else to_dtype(dtype)))
    op_seed = None if seed is None else to_int(seed, "seed")
    out_dtype = np.dtype(np.int64) if dtype is None else to_dtype(dtype)
    samples = -(-n // 4) * 4 * 2            # (ReserveRandomOutputs: the samples to a multiple of 4, two words each)
    key, counter = state.reserve(f"Multinomial:{out_dtype.name}", z.dtype, state.get_seed(op_seed),
                                 z.shape[0] * samples * 256)
    return _multinomial(z, n, key, counter, out_dtype)


@builtin()
def stateless_categorical(logits, num_samples, seed, dtype=None, name=None):
    """StatelessMultinomial's draws (kernels/tf_random_samplers.multinomial)."""
    _stateless(seed)
    z, n = _logits(logits, num_samples)
    key, counter = tf_random.stateless_key_counter(ops.to_tensor(seed).value)
    return _multinomial(z, n, key, counter, dtype)


@builtin(interp=True)
def shuffle(interp, value, seed=None, name=None):
    """A permutation along the first axis."""
    t = ops.to_tensor(value)
    if t.ndim == 0:
        raise ShapeError("tf.random.shuffle needs at least one dimension")
    state = tensorflow_stream(seed)
    if state is None:
        order = _rng(interp, seed).permutation(t.shape[0])
    else:       # (TensorFlow's RandomShuffle: its kernel's state moves only for more than one row and element)
        op_seed = None if seed is None else to_int(seed, "seed")
        order = state.shuffle(np.arange(t.shape[0]) if t.size > 1 else np.zeros(t.size, np.int64), op_seed)
        order = order if t.size > 1 else np.arange(t.shape[0])
    return ops.gather(t, Tensor(np.asarray(order, np.int64)))


def converted(value, dtype=None, dtype_hint=None) -> np.ndarray:
    """The array of ``tf.convert_to_tensor(value, dtype, dtype_hint)``, as the samplers' Python code converts
    their parameters (tf_math's family loads at the first sampler call, not with tf.random)."""
    from tapecli.library.tf_math import convert_to_tensor
    return convert_to_tensor(value, dtype, dtype_hint).value


def _sampled(what: str, sample):
    """``sample()``, a TensorFlow sampler kernel's values; its refusals (kernels/tf_random_samplers) as
    tapecli's errors."""
    try:
        return sample()
    except ValueError as e:
        raise TdfValueError(f"{what}: {e}") from None


def _gamma_dtype(dtype) -> np.dtype:
    want = _float_dtype(dtype)
    if want.kind != "f":
        raise TdfTypeError(f"a gamma sample's dtype is float16, float32 or float64, not {dtype_name(want)}")
    return want


@builtin(interp=True)
def gamma(interp, shape, alpha, beta=None, dtype=None, seed=None, name=None):
    """Samples of Gamma(alpha, rate beta), shape ``shape + broadcast(alpha, beta).shape``: TensorFlow's
    (RandomGamma, then ``maximum(tiny, samples / beta)``) where a seed makes them reproducible."""
    want = _gamma_dtype(dtype)
    a = converted(alpha, want)
    b = converted(1 if beta is None else beta, want)
    params = np.broadcast_shapes(a.shape, b.shape)
    sample_shape = to_shape(shape)
    _check_size(sample_shape + params)
    state = tensorflow_stream(seed)
    if state is None:
        out_shape = sample_shape + params
        rnd = _rng(interp, seed).gamma(np.broadcast_to(a, out_shape).astype(np.float64), 1.0, size=out_shape)
        return Tensor(np.maximum(np.finfo(want).tiny, rnd.astype(want) / b))
    op_seed = None if seed is None else to_int(seed, "seed")
    rnd = tf_random_samplers.random_gamma(state, sample_shape, np.broadcast_to(a, params), op_seed)
    return Tensor(np.maximum(np.finfo(want).tiny, rnd / b))


@builtin(interp=True)
def poisson(interp, shape, lam, dtype=None, seed=None, name=None):
    """Samples of Poisson(lam), shape ``shape + lam.shape``, in ``dtype`` (float32 unless given): TensorFlow's
    (RandomPoissonV2, lam in its own dtype) where a seed makes them reproducible."""
    want = _float_dtype(dtype)
    rates = converted(lam)
    sample_shape = to_shape(shape)
    _check_size(sample_shape + rates.shape)
    state = tensorflow_stream(seed)
    if state is None:
        out_shape = sample_shape + rates.shape
        draws = _rng(interp, seed).poisson(np.broadcast_to(rates.astype(np.float64), out_shape), size=out_shape)
        return Tensor(draws.astype(want))
    op_seed = None if seed is None else to_int(seed, "seed")
    return Tensor(_sampled("tf.random.poisson", lambda: tf_random_samplers.random_poisson(
        state, sample_shape, rates, want, op_seed)))


def _seed_pair(seed) -> tuple[int, int]:
    s = ops.to_tensor(seed)
    if s.shape != (2,) or s.dtype.kind not in "iu":
        raise TdfValueError(f"a stateless seed must be a shape [2] integer tensor, got shape {list(s.shape)}")
    return int(s.value[0]), int(s.value[1])


@builtin()
def stateless_normal(shape, seed, mean=0.0, stddev=1.0, dtype=None, name=None, alg="auto_select"):
    """TensorFlow's numbers (Philox, kernels/tf_random.py), bit for bit."""
    shape = to_shape(shape)
    _check_size(shape)
    return Tensor(tf_random.stateless_normal(_seed_pair(seed), shape, _float_dtype(dtype), to_float(mean),
                                             to_float(stddev)))


@builtin()
def stateless_uniform(shape, seed, minval=0, maxval=None, dtype=None, name=None, alg="auto_select"):
    """TensorFlow's numbers (Philox, kernels/tf_random.py), bit for bit; an integer dtype needs maxval, or
    neither bound for its full range."""
    shape = to_shape(shape)
    _check_size(shape)
    want = _float_dtype(dtype)
    if want.kind in "iu":
        if (minval is None) != (maxval is None) and maxval is None:
            raise TdfValueError("tf.random.stateless_uniform: an integer dtype needs maxval")
        bounds = (None, None) if maxval is None else (to_int(minval, "minval"), to_int(maxval, "maxval"))
        if bounds[0] is not None and not bounds[0] < bounds[1]:
            raise TdfValueError(f"Need minval < maxval, got {bounds[0]} >= {bounds[1]}")
        return Tensor(tf_random.stateless_uniform(_seed_pair(seed), shape, want, *bounds))
    hi = 1.0 if maxval is None else to_float(maxval)
    return Tensor(tf_random.stateless_uniform(_seed_pair(seed), shape, want, to_float(minval), hi))


@builtin()
def stateless_truncated_normal(shape, seed, mean=0.0, stddev=1.0, dtype=None, name=None, alg="auto_select"):
    """TensorFlow's numbers (Philox, kernels/tf_random.py), bit for bit."""
    shape = to_shape(shape)
    _check_size(shape)
    return Tensor(tf_random.stateless_truncated_normal(_seed_pair(seed), shape, _float_dtype(dtype), to_float(mean),
                                                       to_float(stddev)))


@builtin("random.split")
def random_split(seed, num=2, alg="auto_select"):
    """tf.random.split: ``num`` new [2] seeds of the seed's dtype, the full-range integers
    stateless_uniform draws from the seed (TensorFlow's numbers)."""
    s = ops.to_tensor(seed)
    s = ops.materialize(s) if s.weak else s
    if s.shape != (2,) or s.dtype.kind not in "iu":
        raise TdfValueError(f"tf.random.split: seed must be a [2] integer tensor, got shape {list(s.shape)}")
    n = to_int(num, "num")
    return Tensor(tf_random.stateless_uniform(s.value, (n, 2), s.dtype, None, None))


@builtin("random.fold_in")
def fold_in(seed, data, alg="auto_select"):
    """[a full-range integer of data's dtype that stateless_uniform draws from ``seed``, data]: TensorFlow's."""
    s = ops.to_tensor(seed)
    s = ops.materialize(s) if s.weak else s
    d = ops.to_tensor(data)
    d = ops.materialize(d) if d.weak else d
    first = tf_random.stateless_uniform(s.value, (), d.dtype, None, None)
    return Tensor(np.stack([np.asarray(first, d.dtype), np.asarray(d.value)]))
