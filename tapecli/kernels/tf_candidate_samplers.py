"""TensorFlow's range candidate samplers (``candidate_sampler_ops.cc``, ``range_sampler.cc``), bit for bit.

A sampler op's kernel holds a ``GuardedPhiloxRandom``: each call reads a ``SimplePhilox`` over the state it
finds and skips that state by ``2048 * num_sampled`` 32-bit samples. ``UniformSampler`` draws ``Uniform64``
(exact rejection over 64-bit words), ``LogUniformSampler`` ``int64(exp(RandDouble() * log1p(range))) - 1``.
With ``unique`` a value already drawn is drawn again, and the expected counts use the number of tries it took
(``ExpectedCountHelper``, in float: ``-expm1f(tries * log1pf(-p))``). The C library's functions are the ones
TensorFlow's kernel calls (ctypes), NumPy's only where none loads.
"""
from __future__ import annotations

import math

import numpy as np

from tapecli.kernels.tf_random import _draws, libm_function, uint64_to_double

_F32 = np.float32


def _float_call(name: str, numpy_function, x) -> np.float32:
    f = libm_function(name, single=True)
    return _F32(f(float(x))) if f is not None else numpy_function(_F32(x))


def reserved_samples(num_sampled: int) -> int:
    """The Philox outputs (128 bits each) a call skips its kernel's state by: ``ReserveSamples32(2048 * n)``."""
    return (2048 * num_sampled + 3) // 4


class _SimplePhilox:
    def __init__(self, key: int, counter: int):
        self._words = _draws(key, counter, blocks=16)

    def rand64(self) -> int:
        lo, hi = next(self._words), next(self._words)
        return lo | hi << 32

    def rand_double(self) -> float:
        x0, x1 = next(self._words), next(self._words)
        return float(uint64_to_double(x0, x1))

    def uniform64(self, n: int) -> int:
        """``ExactUniformInt<uint64>``: a power of two masked, else words below ``2**64 % n`` rejected."""
        if n & (n - 1) == 0:
            return self.rand64() & (n - 1)
        rem = ((2**64 - 1) % n) + 1
        while (word := self.rand64()) < rem:
            pass
        return word % n


class _Uniform:
    def __init__(self, range_max: int):
        self.range = range_max
        self.inv_range = _F32(1.0 / range_max)

    def sample(self, rnd: _SimplePhilox) -> int:
        return rnd.uniform64(self.range)

    def probability(self, value: int) -> np.float32:
        return self.inv_range


class _LogUniform:
    def __init__(self, range_max: int):
        self.range = range_max
        self.log_range = math.log1p(range_max)

    def sample(self, rnd: _SimplePhilox) -> int:
        return (int(math.exp(rnd.rand_double() * self.log_range)) - 1) % self.range

    def probability(self, value: int) -> np.float32:
        return _F32(math.log((value + 2.0) / (value + 1.0)) / self.log_range)


SAMPLERS = {"uniform": _Uniform, "log_uniform": _LogUniform}


def _expected_count(p: np.float32, batch_size: int, num_tries: int) -> np.float32:
    if num_tries == batch_size:
        return _F32(p * _F32(batch_size))
    return -_float_call("expm1f", np.expm1, _F32(num_tries) * _float_call("log1pf", np.log1p, -p))


def sample(kind: str, key: int, counter: int, true_classes: np.ndarray, num_sampled: int, unique: bool,
           range_max: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The kernel's three outputs: sampled candidates (int64), the true classes' expected counts and the
    sampled ones' (float32), from the Philox state (key, counter) the call reads."""
    sampler, rnd = SAMPLERS[kind](range_max), _SimplePhilox(key, counter)
    batch: list[int] = []
    if unique:
        used: set[int] = set()
        num_tries = 0
        while len(batch) < num_sampled:
            num_tries += 1
            value = sampler.sample(rnd)
            if value not in used:
                used.add(value)
                batch.append(value)
    else:
        batch = [sampler.sample(rnd) for _ in range(num_sampled)]
        num_tries = num_sampled
    counts = [_expected_count(sampler.probability(v), num_sampled, num_tries) for v in batch]
    true_counts = [_expected_count(sampler.probability(int(v)), num_sampled, num_tries)
                   for v in true_classes.reshape(-1).tolist()]
    return (np.array(batch, dtype=np.int64), np.array(true_counts, dtype=_F32).reshape(true_classes.shape),
            np.array(counts, dtype=_F32))
