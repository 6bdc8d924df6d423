"""tf.random.Generator and its companions (get/set_global_generator, create_rng_state, Algorithm), the stateless
binomial/gamma/poisson/parameterized truncated normal samplers and the candidate samplers (all, uniform,
log-uniform).

A Generator keeps TensorFlow's Philox state in a tf.Variable and draws normal, uniform, truncated normal,
full-range integers and binomials as TensorFlow's kernels do, so its numbers are TensorFlow's (kernels/tf_random.py,
kernels/tf_random_samplers.py), as are stateless_binomial's, stateless_gamma's and stateless_poisson's. The
parameterized truncated normal draws from NumPy's generator seeded with the seed: its shape, dtype, support and
distribution are TensorFlow's, and one seed gives one sequence (docs/tf-surface.md). What is deterministic in
TensorFlow — create_rng_state, the algorithm numbers, all_candidate_sampler — is exact; the uniform and
log-uniform candidate samplers draw TensorFlow's numbers (kernels/tf_candidate_samplers.py)."""
from __future__ import annotations

import math

import numpy as np

from tapecli import ops
from tapecli.errors import KernelValueError, NoAttribute, TdfTypeError, TdfValueError
from tapecli.interpreter.objects import BoundMethod, ProgramObject
from tapecli.interpreter.registry import builtin, register
from tapecli.kernels import tf_candidate_samplers, tf_random, tf_random_samplers
from tapecli.library.core import NamedResult, _check_size, to_dtype, to_float, to_int, to_shape
from tapecli.interpreter.conversions import truth
from tapecli.library.draws import tf_random_state
from tapecli.library.tf_random import _gamma_dtype, _sampled, _seed_pair, _stateless, converted
from tapecli.runtime.values import Tensor, Variable, dtype_name

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
        raise NoAttribute(f"Algorithm.{self.name} has no attribute {attr}")


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
    return Tensor(_seed_state(seed, _alg(alg)))


class Generator(ProgramObject):
    """A Philox generator whose state is a tf.Variable ``StateVar`` [counter low, counter high, key] (int64), as
    TensorFlow's: each draw of n values reads the state and moves its 128-bit counter by 256 n (RngReadAndSkip),
    then draws as the stateless v2 kernels do from that key and counter, so its numbers are TensorFlow's; a
    binomial draws as StatefulRandomBinomial does."""

    kind_word = "a tf.random.Generator"

    def __init__(self, state, alg=1):
        self.alg = alg
        values = np.asarray(ops.to_tensor(state).value if not isinstance(state, np.ndarray) else state)
        size = 2 if alg == 2 else 3
        if values.shape != (size,):
            raise TdfValueError(f"Shapes {list(values.shape)} and [{size}] are incompatible")
        self.state = Variable("StateVar", values.astype(np.int64), trainable=False, tf_name="StateVar")

    def _skip(self, count: int) -> tuple[int, int]:
        """RngReadAndSkip: the key and counter before, the counter moved on by 256 * count."""
        if self.alg == 2:
            raise TdfValueError("Non-XLA devices don't support the ThreeFry algorithm.")
        words = [int(w) & tf_random._M64 for w in self.state.read().value]
        key, counter = words[2], words[0] | words[1] << 64
        after = tf_random.counter_skip(counter, 256 * count)
        self.state.assign(np.array([after & tf_random._M64, after >> 64, key], np.uint64).view(np.int64))
        return key, counter

    def _fill(self, kind, shape, dtype, minval=None, maxval=None):
        shape = to_shape(shape)
        _check_size(shape, dtype)
        size = math.prod(shape)
        key, counter = self._skip(size)
        return tf_random.philox_fill(kind, dtype, key, counter, size, minval, maxval).reshape(shape)

    def normal(self, shape, mean=0.0, stddev=1.0, dtype=None, name=None):
        want = to_dtype(dtype) if dtype is not None else np.dtype(np.float32)
        rnd = self._fill("normal", shape, want)
        return Tensor(np.asarray(rnd * want.type(to_float(stddev)) + want.type(to_float(mean))))

    def truncated_normal(self, shape, mean=0.0, stddev=1.0, dtype=None, name=None):
        want = to_dtype(dtype) if dtype is not None else np.dtype(np.float32)
        rnd = self._fill("truncated_normal", shape, want)
        return Tensor(np.asarray(rnd * want.type(to_float(stddev)) + want.type(to_float(mean))))

    def uniform(self, shape, minval=0, maxval=None, dtype=None, name=None):
        want = to_dtype(dtype) if dtype is not None else np.dtype(np.float32)
        if want.kind in "iu":
            if (minval is None) != (maxval is None):
                raise TdfValueError(f"For integer dtype {_tf_dtype(want)}, minval and maxval must be both `None` "
                                    f"or both non-`None`; got minval={minval} and maxval={maxval}")
            if minval is None:
                return self.uniform_full_int(shape, want)
            lo, hi = to_int(minval, "minval"), to_int(maxval, "maxval")
            if lo >= hi:
                raise TdfValueError(f"Need minval < maxval, got {lo} >= {hi}")
            return Tensor(self._fill("uniform_int", shape, want, lo, hi))
        lo, hi = want.type(to_float(minval)), want.type(1.0 if maxval is None else to_float(maxval))
        rnd = self._fill("uniform", shape, want)
        return Tensor(np.asarray(rnd * (hi - lo) + lo))

    def uniform_full_int(self, shape, dtype=None, name=None):
        return Tensor(self._fill("full_int", shape, np.dtype(np.uint64) if dtype is None else to_dtype(dtype)))

    def binomial(self, shape, counts, probs, dtype=None, name=None):
        """StatefulRandomBinomial: its counter moves by 256 times the kernel's reservation
        (tf_random_samplers.binomial_skip), its values TensorFlow's."""
        shape = to_shape(shape)
        _check_size(shape)
        n, p = _params(converted(counts), converted(probs), "Generator.binomial")
        params = np.broadcast_shapes(n.shape, p.shape)
        if tuple(shape[len(shape) - len(params):]) != params or len(params) > len(shape):
            raise TdfValueError("Shape passed in must end with broadcasted shape.")
        want = np.dtype(np.int32) if dtype is None else to_dtype(dtype)
        key, counter = self._skip(tf_random_samplers.binomial_skip(shape, params))
        return Tensor(_sampled("Generator.binomial", lambda: tf_random_samplers.binomial(
            key, counter, n, p, math.prod(shape) // max(math.prod(params), 1), want).reshape(shape)))

    def make_seeds(self, count=1):
        keys = self.uniform_full_int([to_int(count, "count")], np.int64).value
        return Tensor(np.stack([keys, np.zeros_like(keys)]))

    def split(self, count=1):
        keys = self.uniform_full_int([to_int(count, "count")], np.int64).value
        return [Generator(np.array([0] * (1 if self.alg == 2 else 2) + [k], np.int64), self.alg) for k in keys]

    def skip(self, delta):
        key, counter = self._skip(to_int(delta, "delta"))
        return Tensor(np.array([counter & tf_random._M64, counter >> 64, key], np.uint64).view(np.int64))

    def reset(self, state):
        self.state.assign(np.asarray(ops.to_tensor(state).value).astype(np.int64))

    def reset_from_seed(self, seed):
        self.state.assign(_seed_state(seed, self.alg))

    def reset_from_key_counter(self, key, counter):
        self.state.assign(_key_counter_state(key, counter, self.alg))

    def get_attribute(self, interp, attr, node):
        if attr == "algorithm":
            return self.alg
        if attr == "state":
            return self.state
        if attr == "key":
            return Tensor(self.state.read().value[-1])
        methods = {"normal": self.normal, "uniform": self.uniform, "truncated_normal": self.truncated_normal,
                   "uniform_full_int": self.uniform_full_int, "binomial": self.binomial,
                   "make_seeds": self.make_seeds, "split": self.split, "skip": self.skip, "reset": self.reset,
                   "reset_from_seed": self.reset_from_seed, "reset_from_key_counter": self.reset_from_key_counter}
        if attr in methods:
            fn = methods[attr]
            return BoundMethod(attr, lambda call_node, *a, **k: fn(*a, **k))
        raise NoAttribute(f"tf.random.Generator has no attribute {attr} in tapecli",
                           hint="it has algorithm, state, key, " + ", ".join(methods))


def _tf_dtype(dtype) -> str:
    return f"<dtype: '{dtype_name(dtype)}'>"


def _seed_state(seed, alg) -> np.ndarray:
    """create_rng_state: an integer seed cut into 64-bit words, lowest first, as many as the state has."""
    size = 2 if alg == 2 else 3
    if isinstance(seed, (Tensor, Variable)) and ops.to_tensor(seed).ndim == 1:
        words = [int(w) for w in ops.to_tensor(seed).value][:size]
        return np.array([0] * (size - len(words)) + words, np.uint64).view(np.int64)
    value = to_int(seed, "seed")
    return np.array([(value >> (64 * i)) & tf_random._M64 for i in range(size)], np.uint64).view(np.int64)


def _key_counter_state(key, counter, alg) -> np.ndarray:
    words = [int(w) & tf_random._M64 for w in np.atleast_1d(ops.to_tensor(counter).value)]
    if len(words) != (1 if alg == 2 else 2):
        raise TdfValueError(f"Shapes [{len(words)}] and [{1 if alg == 2 else 2}] are incompatible")
    return np.array(words + [to_int(key, "key") & tf_random._M64], np.uint64).view(np.int64)


def from_seed(seed, alg=None):
    number = _alg(alg)
    return Generator(_seed_state(seed, number), number)


def _random_state(interp, alg) -> np.ndarray:
    """from_non_deterministic_state's state: int64 words from the run's generator."""
    return interp.rng.integers(-2**63, 2**63 - 1, size=2 if alg == 2 else 3, dtype=np.int64, endpoint=True)


class GeneratorClass(ProgramObject):
    """``tf.random.Generator``: its constructors ``from_seed``, ``from_key_counter``,
    ``from_non_deterministic_state``, ``from_state``; called with ``copy_from=`` a generator (a copy of its state)
    or ``state=`` and ``alg=``."""

    kind_word = "the class tf.random.Generator"

    def call(self, interp, args, kwargs, node):
        copy_from = kwargs.pop("copy_from", args[0] if args else None)
        state, alg = kwargs.pop("state", None), kwargs.pop("alg", None)
        if kwargs:
            raise TdfTypeError(f"tf.random.Generator got an unexpected keyword argument '{next(iter(kwargs))}'")
        if isinstance(copy_from, Generator):
            return Generator(copy_from.state.read().value.copy(), copy_from.alg)
        if state is None or alg is None:
            raise TdfTypeError("tf.random.Generator(...) is made with copy_from=generator, or state= and alg=")
        number = _alg(alg)
        return Generator(np.asarray(ops.to_tensor(state).value).astype(np.int64), number)

    def get_attribute(self, interp, attr, node):
        if attr == "from_seed":
            return BoundMethod(attr, lambda call_node, *a, **k: from_seed(*a, **k))
        if attr == "from_key_counter":
            return BoundMethod(attr, lambda call_node, key, counter, alg: Generator(
                _key_counter_state(key, counter, _alg(alg)), _alg(alg)))
        if attr == "from_state":
            return BoundMethod(attr, lambda call_node, state, alg: Generator(
                np.asarray(ops.to_tensor(state).value).astype(np.int64), _alg(alg)))
        if attr == "from_non_deterministic_state":
            return BoundMethod(attr, lambda call_node, alg=None: Generator(_random_state(interp, _alg(alg)),
                                                                          _alg(alg)))
        raise TdfTypeError(f"tf.random.Generator has no constructor {attr} in tapecli",
                           hint="use Generator.from_seed(seed), from_key_counter(key, counter, alg), "
                                "from_state(state, alg) or from_non_deterministic_state()")


register("random.Generator", GeneratorClass())
register("random.Algorithm", Algorithm())


@builtin("random.get_global_generator", interp=True)
def get_global_generator(interp):
    """The run's global generator (seeded from tf.random.set_seed's stream when first asked for)."""
    found = getattr(interp, "tf_global_generator", None)
    if found is None:
        found = interp.tf_global_generator = Generator(_random_state(interp, 1))
    return found


@builtin("random.set_global_generator", interp=True)
def set_global_generator(interp, generator):
    if not isinstance(generator, Generator):
        raise TdfTypeError("set_global_generator takes a tf.random.Generator")
    interp.tf_global_generator = generator


def _params(counts, probs, what: str) -> tuple[np.ndarray, np.ndarray]:
    """Counts and probs of one floating dtype (the binomial kernels' T)."""
    if counts.dtype != probs.dtype or probs.dtype.kind != "f":
        raise TdfTypeError(f"{what}: counts and probs must be float tensors of one dtype, got "
                           f"{dtype_name(counts.dtype)} and {dtype_name(probs.dtype)}",
                           hint="pass float counts, e.g. 10.0")
    return counts, probs


@builtin()
def stateless_binomial(shape, seed, counts, probs, output_dtype=None, name=None):
    """StatelessRandomBinomial: TensorFlow's numbers (kernels/tf_random_samplers.py)."""
    shape = to_shape(shape)
    _check_size(shape)
    p = converted(probs, dtype_hint=np.float32)
    n = converted(counts, dtype_hint=p.dtype)
    n, p = _params(n, p, "tf.random.stateless_binomial")
    want = np.dtype(np.int32) if output_dtype is None else to_dtype(output_dtype)
    return Tensor(_sampled("tf.random.stateless_binomial", lambda: tf_random_samplers.stateless_binomial(
        _seed_pair(seed), shape, n, p, want)))


@builtin()
def stateless_gamma(shape, seed, alpha, beta=None, dtype=None, name=None):
    """StatelessRandomGammaV3, then ``maximum(tiny, samples / beta)``: TensorFlow's numbers."""
    want = _gamma_dtype(dtype)
    a = converted(alpha, want)
    b = converted(1 if beta is None else beta, want)
    out_shape = to_shape(shape)
    _check_size(out_shape)
    params = np.broadcast_shapes(a.shape, b.shape)
    rnd = _sampled("tf.random.stateless_gamma", lambda: tf_random_samplers.stateless_gamma(
        _seed_pair(seed), out_shape, np.broadcast_to(a, params)))
    return Tensor(np.maximum(np.finfo(want).tiny, rnd / b))


@builtin()
def stateless_poisson(shape, seed, lam, dtype=None, name=None):
    """StatelessRandomPoisson (lam in its own dtype): TensorFlow's numbers."""
    out_shape = to_shape(shape)
    _check_size(out_shape)
    rates = converted(lam)
    want = np.dtype(np.int32) if dtype is None else to_dtype(dtype)
    return Tensor(_sampled("tf.random.stateless_poisson", lambda: tf_random_samplers.stateless_poisson(
        _seed_pair(seed), out_shape, rates, want)))


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


def _range_candidates(kind: str, op: str, true_classes, num_true, num_sampled, unique, range_max, seed):
    """TensorFlow's ``op`` kernel (kernels/tf_candidate_samplers): one kernel per attribute set, as eager's
    kernel cache keeps it, whose Philox state each call moves on."""
    t = ops.to_tensor(true_classes)
    t = ops.materialize(t, np.int64) if t.weak else t
    if t.dtype != np.int64:
        raise KernelValueError(f"cannot compute {op} as input #0(zero-based) was expected to be a int64 tensor but "
                               f"is a {dtype_name(t.dtype)} tensor")
    num_true, num_sampled = to_int(num_true, "num_true"), to_int(num_sampled, "num_sampled")
    unique, range_max = truth(unique), to_int(range_max, "range_max")
    if range_max <= 0:
        raise KernelValueError("range_max must be positive")
    if t.ndim != 2:
        raise KernelValueError("true_classes must be a matrix")
    if t.shape[1] != num_true:
        raise KernelValueError(f"true_classes must have num_true columns, expected: {t.shape[1]} was: {num_true}")
    if unique and num_sampled > range_max:
        raise KernelValueError("Sampler's range is too small.")
    bad = t.value[(t.value < 0) | (t.value >= range_max)]
    if bad.size:
        raise KernelValueError(f"`true_candidate` out of range [0, {range_max}), received {int(bad[0])}")
    state = tf_random_state()
    attributes = f"{op}/{num_true}/{num_sampled}/{unique}/{range_max}"
    key, counter = state.reserve(attributes, np.int64, state.get_seed(None if seed is None else to_int(seed, "seed")),
                                 tf_candidate_samplers.reserved_samples(num_sampled))
    sampled, true_counts, sampled_counts = tf_candidate_samplers.sample(kind, key, counter, t.value, num_sampled,
                                                                        unique, range_max)
    return NamedResult(("sampled_candidates", "true_expected_count", "sampled_expected_count"),
                       [Tensor(sampled), Tensor(true_counts), Tensor(sampled_counts)])


@builtin("log_uniform_candidate_sampler")
def log_uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, seed=None, name=None):
    """Classes drawn from the log-uniform (Zipfian) distribution over [0, range_max): TensorFlow's draws."""
    return _range_candidates("log_uniform", "LogUniformCandidateSampler", true_classes, num_true, num_sampled,
                             unique, range_max, seed)


@builtin("uniform_candidate_sampler")
def uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, seed=None, name=None):
    """Classes drawn uniformly from [0, range_max): TensorFlow's draws."""
    return _range_candidates("uniform", "UniformCandidateSampler", true_classes, num_true, num_sampled, unique,
                             range_max, seed)


for _sampler in (log_uniform_candidate_sampler, uniform_candidate_sampler):
    _sampler.literals = "true_classes are converted to int64"      # (interpreter/registry.py: call_builtin)
