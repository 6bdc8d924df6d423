"""tf.random.Generator and its companions (get/set_global_generator, create_rng_state, Algorithm), the stateless
binomial/gamma/poisson/parameterized truncated normal samplers and all_candidate_sampler.

TensorFlow's Generator draws from Philox streams, which tapecli does not reproduce: a Generator here draws from
NumPy's generator seeded with the seed, so its numbers differ from TensorFlow's while their shapes, dtypes,
supports and distributions are TensorFlow's, and one seed gives one sequence (docs/tf-surface.md). What is
deterministic in TensorFlow — create_rng_state, the algorithm numbers, all_candidate_sampler — is exact."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import TdfTypeError, TdfValueError
from tapecli.interpreter.objects import BoundMethod, ProgramObject
from tapecli.interpreter.registry import builtin, register
from tapecli.library.core import NamedResult, _check_size, _float_dtype, to_dtype, to_float, to_int, to_shape
from tapecli.library.tf_random import _stateless
from tapecli.runtime.values import Tensor

ALGORITHMS = {"PHILOX": 1, "THREEFRY": 2, "AUTO_SELECT": 3}


def _alg(value) -> int:
    if value is None:
        return 1
    if isinstance(value, AlgorithmMember):
        return value.value
    if isinstance(value, str) and value.upper() in ALGORITHMS:
        return ALGORITHMS[value.upper()]
    number = to_int(value, "alg")
    if number not in ALGORITHMS.values():
        raise TdfValueError(f"unknown random algorithm {value!r}: use 'philox', 'threefry' or 'auto_select'")
    return number


class AlgorithmMember(ProgramObject):
    kind_word = "a random algorithm"

    def __init__(self, name):
        self.name, self.value = name, ALGORITHMS[name]

    def get_attribute(self, interp, attr, node):
        if attr in ("name", "value"):
            return getattr(self, attr)
        raise TdfTypeError(f"Algorithm.{self.name} has no attribute {attr}")


class Algorithm(ProgramObject):
    """tf.random.Algorithm: PHILOX (1), THREEFRY (2), AUTO_SELECT (3)."""

    kind_word = "an enum"

    def call(self, interp, args, kwargs, node):
        """Algorithm(1): the member of that value."""
        if len(args) != 1 or kwargs:
            raise TdfTypeError("tf.random.Algorithm(value) takes one value: 1, 2 or 3")
        number = to_int(args[0], "value")
        names = {v: k for k, v in ALGORITHMS.items()}
        if number not in names:
            raise TdfValueError(f"{number} is not a valid tf.random.Algorithm")
        return AlgorithmMember(names[number])

    def get_attribute(self, interp, attr, node):
        if attr in ALGORITHMS:
            return AlgorithmMember(attr)
        raise TdfTypeError(f"tf.random.Algorithm has no member {attr}", hint="PHILOX, THREEFRY, AUTO_SELECT")


@builtin("create_rng_state")
def create_rng_state(seed, alg):
    """The generator state TensorFlow makes of a seed: [seed, 0, 0] for Philox, [seed, 0] for ThreeFry."""
    size = 2 if _alg(alg) == 2 else 3
    state = np.zeros(size, np.int64)
    state[0] = to_int(seed, "seed")
    return Tensor(state)


class Generator(ProgramObject):
    kind_word = "a tf.random.Generator"

    def __init__(self, rng: np.random.Generator, alg=1):
        self.rng, self.alg = rng, alg

    def normal(self, shape, mean=0.0, stddev=1.0, dtype=None, name=None):
        shape = to_shape(shape)
        _check_size(shape)
        return Tensor(self.rng.normal(to_float(mean), to_float(stddev), size=shape).astype(_float_dtype(dtype)))

    def uniform(self, shape, minval=0, maxval=None, dtype=None, name=None):
        shape = to_shape(shape)
        _check_size(shape)
        want = _float_dtype(dtype)
        if want.kind in "iu":
            if maxval is None:
                raise TdfValueError("Generator.uniform: an integer dtype needs maxval")
            return Tensor(self.rng.integers(to_int(minval, "minval"), to_int(maxval, "maxval"), size=shape)
                          .astype(want))
        return Tensor(self.rng.uniform(to_float(minval), 1.0 if maxval is None else to_float(maxval), size=shape)
                      .astype(want))

    def truncated_normal(self, shape, mean=0.0, stddev=1.0, dtype=None, name=None):
        shape = to_shape(shape)
        _check_size(shape)
        return Tensor(ops.truncated_normal_values(self.rng, shape, to_float(mean), to_float(stddev))
                      .astype(_float_dtype(dtype)))

    def binomial(self, shape, counts, probs, dtype=None, name=None):
        shape = to_shape(shape)
        _check_size(shape)
        draws = self.rng.binomial(np.asarray(ops.to_tensor(counts).value, np.int64),
                                  np.asarray(ops.to_tensor(probs).value, np.float64), size=shape)
        return Tensor(draws.astype(np.int32 if dtype is None else to_dtype(dtype)))

    def make_seeds(self, count=1):
        return Tensor(self.rng.integers(0, 2**63 - 1, size=(2, to_int(count, "count"))).astype(np.int64))

    def split(self, count=1):
        return [Generator(np.random.default_rng(self.rng.integers(0, 2**63 - 1)), self.alg)
                for _ in range(to_int(count, "count"))]

    def reset_from_seed(self, seed):
        self.rng = np.random.default_rng(to_int(seed, "seed") % 2**63)

    def get_attribute(self, interp, attr, node):
        if attr == "algorithm":
            return self.alg
        methods = {"normal": self.normal, "uniform": self.uniform, "truncated_normal": self.truncated_normal,
                   "binomial": self.binomial, "make_seeds": self.make_seeds, "split": self.split,
                   "reset_from_seed": self.reset_from_seed}
        if attr in methods:
            fn = methods[attr]
            return BoundMethod(attr, lambda call_node, *a, **k: fn(*a, **k))
        raise TdfTypeError(f"tf.random.Generator has no attribute {attr} in tapecli",
                           hint="it has algorithm, " + ", ".join(methods) + " (its Philox state is not kept)")


def from_seed(seed, alg=None):
    return Generator(np.random.default_rng(to_int(seed, "seed") % 2**63), _alg(alg))


class GeneratorClass(ProgramObject):
    """``tf.random.Generator``: its constructors ``from_seed``, ``from_non_deterministic_state``; called with
    ``copy_from=`` a generator, a copy."""

    kind_word = "the class tf.random.Generator"

    def call(self, interp, args, kwargs, node):
        copy_from = kwargs.pop("copy_from", args[0] if args else None)
        if not isinstance(copy_from, Generator) or kwargs:
            raise TdfTypeError("tf.random.Generator(...) is made with Generator.from_seed(seed) or "
                               "Generator(copy_from=generator) in tapecli")
        copy = Generator(np.random.default_rng(), copy_from.alg)
        copy.rng.bit_generator.state = copy_from.rng.bit_generator.state
        return copy

    def get_attribute(self, interp, attr, node):
        if attr == "from_seed":
            return BoundMethod(attr, lambda call_node, *a, **k: from_seed(*a, **k))
        if attr == "from_non_deterministic_state":
            return BoundMethod(attr, lambda call_node, alg=None: Generator(np.random.default_rng(), _alg(alg)))
        raise TdfTypeError(f"tf.random.Generator has no constructor {attr} in tapecli",
                           hint="use Generator.from_seed(seed) or Generator.from_non_deterministic_state()")


register("random.Generator", GeneratorClass())
register("random.Algorithm", Algorithm())


@builtin("random.get_global_generator", interp=True)
def get_global_generator(interp):
    """The run's global generator (seeded from tf.random.set_seed's stream when first asked for)."""
    found = getattr(interp, "tf_global_generator", None)
    if found is None:
        found = interp.tf_global_generator = Generator(np.random.default_rng(interp.rng.integers(0, 2**63 - 1)))
    return found


@builtin("random.set_global_generator", interp=True)
def set_global_generator(interp, generator):
    if not isinstance(generator, Generator):
        raise TdfTypeError("set_global_generator takes a tf.random.Generator")
    interp.tf_global_generator = generator


@builtin()
def stateless_binomial(shape, seed, counts, probs, output_dtype=None, name=None):
    shape = to_shape(shape)
    _check_size(shape)
    draws = _stateless(seed).binomial(np.asarray(ops.to_tensor(counts).value, np.int64),
                                      np.asarray(ops.to_tensor(probs).value, np.float64), size=shape)
    return Tensor(draws.astype(np.int32 if output_dtype is None else to_dtype(output_dtype)))


@builtin()
def stateless_gamma(shape, seed, alpha, beta=None, dtype=None, name=None):
    a = np.asarray(ops.to_tensor(alpha).value, np.float64)
    b = np.ones_like(a) if beta is None else np.asarray(ops.to_tensor(beta).value, np.float64)
    out_shape = to_shape(shape)
    _check_size(out_shape)
    draws = _stateless(seed).gamma(np.broadcast_to(a, out_shape), 1.0, size=out_shape) / np.broadcast_to(b, out_shape)
    return Tensor(draws.astype(_float_dtype(dtype)))


@builtin()
def stateless_poisson(shape, seed, lam, dtype=None, name=None):
    out_shape = to_shape(shape)
    _check_size(out_shape)
    lam = np.broadcast_to(np.asarray(ops.to_tensor(lam).value, np.float64), out_shape)
    return Tensor(_stateless(seed).poisson(lam, size=out_shape).astype(np.int32 if dtype is None else to_dtype(dtype)))


@builtin()
def stateless_parameterized_truncated_normal(shape, seed, means=0.0, stddevs=1.0, minvals=-2.0, maxvals=2.0,
                                             name=None):
    out_shape = to_shape(shape)
    _check_size(out_shape)
    values = [np.broadcast_to(np.asarray(ops.to_tensor(v).value, np.float64), out_shape)
              for v in (means, stddevs, minvals, maxvals)]
    mean, std, lo, hi = values
    rng = _stateless(seed)
    out = rng.normal(mean, std)
    bad = (out < lo) | (out > hi)
    while bad.any():                      # redraw what falls outside [minval, maxval]
        out = np.where(bad, rng.normal(mean, std), out)
        bad = (out < lo) | (out > hi)
    dtype = ops.to_tensor(means).dtype
    return Tensor(out.astype(dtype if dtype.kind == "f" and not ops.to_tensor(means).weak else np.float32))


@builtin("all_candidate_sampler")
def all_candidate_sampler(true_classes, num_true, num_sampled, unique, seed=None, name=None):
    """Every class id 0..num_sampled-1 (deterministic), with expected counts of one."""
    t = ops.to_tensor(true_classes)
    if t.ndim != 2 or t.shape[1] != to_int(num_true, "num_true"):
        raise TdfValueError(f"true_classes must be [batch, num_true], got shape {list(t.shape)}")
    n = to_int(num_sampled, "num_sampled")
    if ((t.value < 0) | (t.value >= n)).any():
        raise TdfValueError(f"all_candidate_sampler: a true class is out of range [0, {n})")
    return NamedResult(("sampled_candidates", "true_expected_count", "sampled_expected_count"),
                       [Tensor(np.arange(n, dtype=np.int64)), Tensor(np.ones(t.shape, np.float32)),
                        Tensor(np.ones(n, np.float32))])
