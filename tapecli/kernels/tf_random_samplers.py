"""TensorFlow's Poisson, gamma and binomial samplers on the CPU, bit for bit, in NumPy and Python floats.

The kernels (TensorFlow 2.21: ``random_poisson_op.cc`` for RandomPoissonV2 and StatelessRandomPoisson,
``random_op.cc``'s RandomGamma and ``stateless_random_gamma_op.cc``, ``random_binomial_op.cc`` for
StatelessRandomBinomial and StatefulRandomBinomial) draw each output from its own copy of the op's Philox
generator, skipped to ``counter + stride * output_index`` (stride 256; 42 for binomial inversion), where it reads
Philox outputs one after another for as long as its rejection loop runs (so an output may read into the next
one's range, as TensorFlow's does). A Philox output is two doubles, ``UniformDistribution<double>``'s
``Uint64ToDouble`` pairs or ``NormalDistribution<double>``'s Box-Muller pair, taken last first (the kernels'
``UNIFORM`` macro and ``RandomSampleBuffer``). Output ``i`` counts rate-major (``rate_index * samples + sample``)
and lands at ``sample * rates + rate_index``.

Every sample's arithmetic is in double, as the kernels compute it (IEEE doubles, no fused multiply-add: the
kernels are compiled without contraction, as measured), with the C library's ``log``, ``log1p``, ``exp``,
``pow``, ``sin``, ``cos`` (Python's math module calls them; ``tf_random.c_log`` gives the same bits on arrays)
and ``lgamma`` (through ctypes: Python's own ``math.lgamma`` is not the C library's). Every output's first
attempt runs at once in NumPy, the same operations in the same order; an output it does not settle (a
rejection, a Knuth product or inversion sum that runs past the outputs made ahead) runs again from its start,
one by one, in Python floats."""
from __future__ import annotations

import functools
import math
import operator

import numpy as np

from tapecli.kernels import tf_random, tf_sums

_RESERVED_PER_OUTPUT = 256          # kReservedSamplesPerOutput
_INVERSION_RESERVED = 42            # binomial inversion's reservation per output

_NAN = math.nan


# ----------------------------------------------------------------------------------------------------------
# C semantics for Python floats: math raises where C returns an infinity or a NaN
# ----------------------------------------------------------------------------------------------------------

def _c(scalar, vector, *args) -> float:
    """``scalar(*args)`` (the C library's function through Python's math), or where math refuses an argument
    C takes (a log of 0, a square root of -1, an overflow), NumPy's ``vector`` of it, which follows C."""
    try:
        return scalar(*args)
    except (ValueError, OverflowError, ZeroDivisionError):
        with np.errstate(all="ignore"):
            return float(vector(*(np.float64(a) for a in args)))


def _log(x: float) -> float:
    return _c(math.log, np.log, x)


def _log1p(x: float) -> float:
    return _c(math.log1p, np.log1p, x)


def _div(x: float, y: float) -> float:
    return _c(operator.truediv, np.divide, x, y)


def _floor(x: float) -> float:
    return float(math.floor(x)) if math.isfinite(x) else x


def _ceil(x: float) -> float:
    return float(math.ceil(x)) if math.isfinite(x) else x


@functools.cache
def _lgamma(x: float) -> float:
    """The C library's ``lgamma`` (the kernels' ``Eigen::numext::lgamma``), cached: its arguments are whole."""
    f = tf_random.libm_function("lgamma")
    return f(x) if f is not None else math.lgamma(x)


# ----------------------------------------------------------------------------------------------------------
# Each output's Philox stream
# ----------------------------------------------------------------------------------------------------------

class _Streams:
    """The Philox outputs each output's generator copy reads, from ``counter + starts[i]`` on, as pairs of
    doubles: ``UniformDistribution<double>``'s and (with ``normals``) ``NormalDistribution<double>``'s. The
    first ``ahead`` of every output are made at once (``pairs``: kind -> (outputs, ahead, 2)), later ones as a
    rejection loop asks."""

    def __init__(self, key: int, counter: int, starts: np.ndarray, ahead: int, normals: bool = False):
        self.key, self.counter = key, counter
        self.starts = np.asarray(starts, dtype=np.uint64)
        self.ahead, self.normals = ahead, normals
        made = self._pairs((self.starts[:, None] + np.arange(ahead, dtype=np.uint64)[None, :]).reshape(-1))
        self.pairs = {kind: pairs.reshape(self.starts.size, ahead, 2) for kind, pairs in made.items()}

    def _pairs(self, offsets: np.ndarray) -> dict:
        """The Philox outputs at counter + offsets as pairs: {kind: (len(offsets), 2)}."""
        b = tf_random.philox_at(self.key, self.counter, offsets)
        out = {"uniform": np.stack([tf_random.uint64_to_double(b[:, 0], b[:, 1]),
                                    tf_random.uint64_to_double(b[:, 2], b[:, 3])], axis=1)}
        if self.normals:
            out["normal"] = np.stack(tf_random.box_muller_double(b[:, 0], b[:, 1], b[:, 2], b[:, 3]), axis=1)
        return out

    def uniforms(self) -> np.ndarray:
        """Each output's first ``2 ahead`` uniforms in the order a lone ``UNIFORM`` reads them: (outputs, 2 ahead)."""
        return self.pairs["uniform"][:, :, ::-1].reshape(self.starts.size, -1)

    def first(self, i: int, kind: str) -> list:
        """Output i's first ``ahead`` Philox outputs as pairs of ``kind`` ("uniform" or "normal"), flat."""
        return self.pairs[kind][i].reshape(-1).tolist()

    def more(self, i: int, j: int) -> dict:
        """Output i's Philox outputs j to j + 7, each kind as ``first`` gives it."""
        return {kind: pairs.reshape(-1).tolist()
                for kind, pairs in self._pairs(np.arange(j, j + 8, dtype=np.uint64) + self.starts[i]).items()}


class _Reader:
    """One output's generator copy, read through a buffer per kind (the ``UNIFORM`` macro, RandomSampleBuffer):
    an empty buffer refills from the next Philox output and hands out its pair's second value first."""

    def __init__(self, streams: _Streams, i: int):
        self.streams, self.i, self.used = streams, i, 0
        self.made = {kind: streams.first(i, kind) for kind in streams.pairs}
        self.buffers = {"normal": [], "uniform": []}

    def next(self, kind: str) -> float:
        buffer = self.buffers[kind]
        if not buffer:
            made = self.made[kind]
            if 2 * self.used >= len(made):
                more = self.streams.more(self.i, len(made) // 2)
                for k, values in self.made.items():
                    values.extend(more[k])
            buffer.extend(made[2 * self.used:2 * self.used + 2])
            self.used += 1
        return buffer.pop()

    def uniforms(self):
        while True:
            yield self.next("uniform")


def _ahead(means) -> int:
    """Philox outputs to make ahead for samplers that read about ``mean + 1`` uniforms (two an output) for the
    largest of ``means``, with room for four standard deviations; four (four attempts) for the rejection ones."""
    mean = max([m for m in means if m > 0], default=0.0)
    return max(4, math.ceil((mean + 1 + 4 * math.sqrt(mean)) / 2))


def _output_order(num_params: int, per_param: int):
    """(output index, flat position) of each output: rate-major indices, sample-major positions."""
    index = np.arange(num_params * per_param, dtype=np.int64)
    param, sample = np.divmod(index, per_param)
    return index, sample * num_params + param


# ----------------------------------------------------------------------------------------------------------
# Poisson (PoissonFunctor)
# ----------------------------------------------------------------------------------------------------------

def _highest(dtype: np.dtype) -> float:
    """``Eigen::NumTraits<U>::highest()`` as a double."""
    return float(np.iinfo(dtype).max) if dtype.kind in "iu" else float(np.finfo(dtype).max)


def _knuth(uniforms, exp_neg_rate: float, highest: float) -> float:
    """Knuth's algorithm: the count of uniforms multiplied before the product falls to exp(-rate)."""
    prod, x = 1.0, 0.0
    for u in uniforms:
        prod = prod * u
        if prod <= exp_neg_rate and x <= highest:
            return x
        x += 1


def _ptrs_constants(rate: float) -> tuple:
    """PTRS's a, b and v_r (its box: |u| < 0.43, v below v_r) for a rate."""
    b = 0.931 + 2.53 * math.sqrt(rate)
    return -0.059 + 0.02483 * b, b, 0.9277 - 3.6224 / (b - 2)


def _hormann_poisson(uniforms, rate: float, highest: float) -> float:
    """Hormann's transformed rejection (PTRS) for rate >= 10, as the kernel words it."""
    log_rate = math.log(rate)
    a, b, v_r = _ptrs_constants(rate)
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    while True:
        u = next(uniforms) - 0.5
        v = next(uniforms)
        us = 0.5 - abs(u)
        k = _floor((_div(2 * a, us) + b) * u + rate + 0.43)
        if k > highest:
            continue
        if us >= 0.07 and v <= v_r:
            return k
        if k < 0 or (us < 0.013 and v > us):
            continue
        s = _log(v * inv_alpha / (a / (us * us) + b))
        t = -rate + k * log_rate - _lgamma(k + 1)
        if s <= t:
            return k


def poisson(key: int, counter: int, rates, per_rate: int, dtype) -> np.ndarray:
    """``PoissonFunctor``'s samples of dtype ``dtype`` (float16/32/64, int32/64) from the generator at (key,
    counter): ``per_rate`` samples of each rate (the rate tensor's values, any dtype, as doubles), flat,
    sample-major (``[samples, rates]``). Knuth's algorithm below rate 10, Hormann's rejection from 10."""
    dtype = np.dtype(dtype)
    rates = np.asarray(rates).reshape(-1)
    values = rates.astype(np.float64).tolist()
    if not all(math.isfinite(r) for r in values if r >= 10 or r != r):
        raise ValueError("TensorFlow's Poisson sampler never returns for an infinite or NaN rate")
    highest = _highest(dtype)
    index, position = _output_order(len(values), per_rate)
    streams = _Streams(key, counter, index * _RESERVED_PER_OUTPUT, ahead=_ahead([r for r in values if r < 10]))
    exp_neg = [_c(math.exp, np.exp, -r) for r in values]
    param = index // per_rate
    rate = np.array(values)[param]
    out, done = np.zeros(index.size), np.zeros(index.size, dtype=bool)
    # the first attempt of every output at once, each step the kernel's: Knuth's running products
    # (multiply.accumulate multiplies in order) where they fall to exp(-rate) within the uniforms made ahead,
    # PTRS's box on its first pair; the rest loop as the kernel does
    seq = streams.uniforms()
    small = np.flatnonzero(rate < 10)
    hit = np.multiply.accumulate(seq[small], axis=1) <= np.array(exp_neg)[param[small], None]
    found = hit.any(axis=1)
    out[small[found]], done[small[found]] = hit[found].argmax(axis=1), True
    large = np.flatnonzero(rate >= 10)
    a, b, v_r = (np.array(c)[param[large]] for c in zip(*[_ptrs_constants(r) if r >= 10 else (0.0,) * 3
                                                             for r in values])) if large.size else (0.0,) * 3
    u, v = seq[large, 0] - 0.5, seq[large, 1]
    us = 0.5 - np.abs(u)
    with np.errstate(divide="ignore", invalid="ignore"):
        k = np.floor((2 * a / us + b) * u + rate[large] + 0.43)
    boxed = (k <= highest) & (us >= 0.07) & (v <= v_r)
    out[large[boxed]], done[large[boxed]] = k[boxed], True
    for i in np.flatnonzero(~done).tolist():
        r = values[param[i]]
        uniforms = _Reader(streams, i).uniforms()
        out[i] = _knuth(uniforms, exp_neg[param[i]], highest) if r < 10 else _hormann_poisson(uniforms, r, highest)
    result = np.empty(index.size)
    result[position] = out
    return _cast(result, dtype)


# ----------------------------------------------------------------------------------------------------------
# Gamma (RandomGamma, StatelessRandomGammaV2/V3)
# ----------------------------------------------------------------------------------------------------------

def _marsaglia_tsang_constants(alpha: float) -> tuple:
    """d and c of Marsaglia-Tsang for an alpha (from alpha + 1 below 1)."""
    d = alpha + (2.0 / 3 if alpha < 1 else -1.0 / 3)
    return d, _div(1.0 / 3, _c(math.sqrt, np.sqrt, d))


def _marsaglia_tsang(reader: _Reader, alpha: float) -> float:
    """Marsaglia and Tsang's squeeze-and-reject; below alpha 1 from alpha + 1, times uniform^(1/alpha)."""
    boost = alpha < 1
    d, c = _marsaglia_tsang_constants(alpha)
    while True:
        x = reader.next("normal")
        v = 1 + c * x
        if v <= 0:
            continue
        v = v * v * v
        u = reader.next("uniform")
        if u < 1 - 0.0331 * (x * x) * (x * x) or _log(u) < 0.5 * x * x + d * (1 - v + _log(v)):
            res = d * v
            if boost:
                res *= _c(math.pow, np.power, reader.next("uniform"), _div(1, alpha))
            return res


def gamma(key: int, counter: int, alphas, per_alpha: int, dtype) -> np.ndarray:
    """The gamma kernels' samples (before the Python wrapper divides by beta) of dtype ``dtype`` from the
    generator at (key, counter): ``per_alpha`` samples of each alpha, flat, sample-major. Alpha 1 is
    ``-log1p(-u)``; any other is Marsaglia-Tsang, normals and uniforms buffered apart."""
    dtype = np.dtype(dtype)
    values = np.asarray(alphas).reshape(-1).astype(np.float64).tolist()
    index, position = _output_order(len(values), per_alpha)
    streams = _Streams(key, counter, index * _RESERVED_PER_OUTPUT, ahead=4, normals=True)
    param = index // per_alpha
    alpha = np.array(values)[param]
    out, done = np.zeros(index.size), np.zeros(index.size, dtype=bool)
    normals, uniforms = streams.pairs["normal"], streams.pairs["uniform"]
    # alpha 1: -log1p(-u) of the first uniform (the C library's log1p, one by one)
    ones = np.flatnonzero(alpha == 1.0)
    out[ones], done[ones] = [-math.log1p(-u) for u in uniforms[ones, 0, 1].tolist()], True
    # every other output's first attempt at once, each step the kernel's: the normal x (the first Philox
    # output's), the uniform u (the second's), accepted by the squeeze; below alpha 1 times b^(1/alpha), b the
    # second's other uniform (the C library's pow, one by one); the rest loop as the kernel does
    others = np.flatnonzero(alpha != 1.0)
    d, c = (np.array(v)[param[others]] for v in zip(*[_marsaglia_tsang_constants(a) for a in values]))
    x, u = normals[others, 0, 1], uniforms[others, 1, 1]
    with np.errstate(invalid="ignore", over="ignore"):
        v = 1 + c * x
        cubed = v * v * v
        squeezed = (v > 0) & (u < 1 - 0.0331 * (x * x) * (x * x))
    res = d * cubed
    boost = squeezed & (alpha[others] < 1)
    res[boost] *= [_c(math.pow, np.power, b, _div(1, a)) for b, a in zip(uniforms[others[boost], 1, 0].tolist(),
                                                        alpha[others[boost]].tolist())]
    out[others[squeezed]], done[others[squeezed]] = res[squeezed], True
    for i in np.flatnonzero(~done).tolist():
        out[i] = _marsaglia_tsang(_Reader(streams, i), values[param[i]])
    result = np.empty(index.size)
    result[position] = out
    return _cast(result, dtype)


# ----------------------------------------------------------------------------------------------------------
# Binomial (RandomBinomialFunctor)
# ----------------------------------------------------------------------------------------------------------

_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
                  0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
                  0.00925546218271273, 0.00833056343336287)


def _stirling_tail(k: float) -> float:
    if k <= 9:
        return _STIRLING_TAIL[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


def _inversion(uniforms, count: float, prob: float) -> float:
    """Geometric variates summed until they pass ``count``: how many fit."""
    geom_sum, num_geom = 0.0, 0
    log_q = _log1p(-prob)
    for u in uniforms:
        geom_sum += _ceil(_div(_log(u), log_q))
        if geom_sum > count:
            return float(num_geom)
        num_geom += 1


def _btrs_constants(count: float, prob: float) -> tuple:
    """BTRS's standard deviation, a, b, c and v_r (its box: |u| < 0.43, v below v_r)."""
    stddev = math.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    return stddev, -0.0873 + 0.0248 * b + 0.01 * prob, b, count * prob + 0.5, 0.92 - 4.2 / b


def _btrs(uniforms, count: float, prob: float) -> float:
    """Hormann's BTRS, as the kernel words it (its log of v included)."""
    stddev, a, b, c, v_r = _btrs_constants(count, prob)
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = _floor((count + 1) * prob)
    while True:
        u = next(uniforms)
        v = next(uniforms)
        u = u - 0.5
        us = 0.5 - abs(u)
        k = _floor((_div(2 * a, us) + b) * u + c)
        if us >= 0.07 and v <= v_r:
            return k
        if k < 0 or k > count:
            continue
        v = _log(v * alpha / (a / (us * us) + b))
        upperbound = ((m + 0.5) * _log((m + 1) / (r * (count - m + 1)))
                      + (count + 1) * _log((count - m + 1) / (count - k + 1))
                      + (k + 0.5) * _log(r * (count - k + 1) / (k + 1))
                      + _stirling_tail(m) + _stirling_tail(count - m) - _stirling_tail(k) - _stirling_tail(count - k))
        if v <= upperbound:
            return k


def binomial(key: int, counter: int, counts, probs, per_batch: int, dtype) -> np.ndarray:
    """``RandomBinomialFunctor``'s samples of dtype ``dtype`` from the generator at (key, counter): ``counts``
    and ``probs`` (one floating dtype T, broadcast to the batch shape) give ``per_batch`` samples each, flat,
    sample-major. Its tests run in T (``count * prob >= 10``, ``q = 1 - prob``), the draws in double: inversion
    (stride 42) below 10 successes expected, BTRS (stride 256) from 10, of the likelier side's probability."""
    dtype = np.dtype(dtype)
    counts, probs = np.broadcast_arrays(np.asarray(counts), np.asarray(probs))
    t = counts.dtype.type
    counts_t, probs_t = counts.reshape(-1).tolist(), probs.reshape(-1).tolist()
    index, position = _output_order(len(counts_t), per_batch)
    plans = []
    for count, prob in zip(counts_t, probs_t):
        count_t, prob_t = t(count), t(prob)
        if count <= 0 or prob_t <= 0:
            plans.append(("constant", 0.0))
        elif prob_t >= 1:
            plans.append(("constant", float(count)))
        elif prob_t <= 0.5:
            plans.append(("btrs" if count_t * prob_t >= 10 else "inversion", False, float(count), float(prob_t)))
        elif prob_t > 0.5:
            q = t(1) - prob_t
            plans.append(("btrs" if count_t * q >= 10 else "inversion", True, float(count), float(q)))
        else:
            plans.append(("constant", _NAN))
    for plan in plans:
        if plan[0] != "constant" and not math.isfinite(plan[2]):
            raise ValueError(f"TensorFlow's binomial sampler has no defined value for count {plan[2]}")
        if plan[0] == "constant" and plan[1] != plan[1] and dtype.kind in "iu":
            raise ValueError("TensorFlow's binomial sampler has no defined integer value for a NaN probability")
    strides = np.array([_INVERSION_RESERVED if plans[i // per_batch][0] == "inversion" else _RESERVED_PER_OUTPUT
                        for i in index.tolist()], dtype=np.int64)
    streams = _Streams(key, counter, index * strides,
                       ahead=_ahead([p[2] * p[3] for p in plans if p[0] == "inversion"]))
    param = index // per_batch
    kind = np.array([p[0] for p in plans])[param]
    out, done = np.zeros(index.size), np.zeros(index.size, dtype=bool)
    constant = np.flatnonzero(kind == "constant")
    out[constant], done[constant] = [plans[j][1] for j in param[constant].tolist()], True
    # every sampled output's first attempt at once, each step the kernel's: inversion's running sums of
    # ceil(log(u) / log1p(-p)) (the C library's log, c_log; add.accumulate adds in order) where they pass the
    # count within the uniforms made ahead, BTRS's box on its first pair; the rest loop as the kernel does
    seq = streams.uniforms()
    inverted = np.flatnonzero((kind == "inversion") & (seq > 0).all(axis=1))
    if inverted.size:
        count, log_q = (np.array(v)[param[inverted]] for v in zip(*[
            (p[2], _log1p(-p[3])) if p[0] == "inversion" else (0.0, -1.0) for p in plans]))
        sums = np.add.accumulate(np.ceil(tf_random.c_log(seq[inverted]) / log_q[:, None]), axis=1)
        over = sums > count[:, None]
        found = over.any(axis=1)
        out[inverted[found]], done[inverted[found]] = over[found].argmax(axis=1), True
    rejected = np.flatnonzero(kind == "btrs")
    if rejected.size:
        a, b, c, v_r = (np.array(v)[param[rejected]] for v in zip(*[
            _btrs_constants(p[2], p[3])[1:] if p[0] == "btrs" else (0.0,) * 4 for p in plans]))
        u, v = seq[rejected, 0] - 0.5, seq[rejected, 1]
        us = 0.5 - np.abs(u)
        with np.errstate(divide="ignore", invalid="ignore"):
            k = np.floor((2 * a / us + b) * u + c)
        boxed = (us >= 0.07) & (v <= v_r)
        out[rejected[boxed]], done[rejected[boxed]] = k[boxed], True
    for i in np.flatnonzero(~done).tolist():
        _, _, count, p = plans[param[i]]
        out[i] = (_btrs if kind[i] == "btrs" else _inversion)(_Reader(streams, i).uniforms(), count, p)
    sampled = np.flatnonzero(kind != "constant")
    flipped = sampled[[plans[j][1] for j in param[sampled].tolist()]] if sampled.size else sampled
    out[flipped] = np.array([plans[j][2] for j in param[flipped].tolist()]) - out[flipped]
    result = np.empty(index.size)
    result[position] = out
    return _cast(result, dtype)


def _cast(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``static_cast<U>`` of the doubles: an integer type truncates (a NaN becomes its lowest value, as x86's
    conversion gives), half rounds through float (Eigen's ``half(double)``)."""
    if dtype.kind in "iu":
        lowest = np.iinfo(dtype).min
        with np.errstate(invalid="ignore"):
            return np.where(np.isnan(values), lowest, np.trunc(np.nan_to_num(values, nan=0.0))).astype(dtype)
    if dtype == np.float16:
        return values.astype(np.float32).astype(np.float16)
    return values.astype(dtype)


# ----------------------------------------------------------------------------------------------------------
# The ops
# ----------------------------------------------------------------------------------------------------------

def _trailing(shape: tuple, params_shape: tuple) -> int:
    """Samples per parameter where ``shape`` ends with ``params_shape`` (the stateless kernels' demand)."""
    if tuple(shape[len(shape) - len(params_shape):]) != tuple(params_shape) or len(params_shape) > len(shape):
        raise ValueError("Shape passed in must end with broadcasted shape.")
    return math.prod(shape) // max(math.prod(params_shape), 1)


def stateless_poisson(seed, shape, lam, dtype) -> np.ndarray:
    """``tf.random.stateless_poisson`` (StatelessRandomPoisson): ``shape`` ends with ``lam``'s shape."""
    shape, lam = tuple(shape), np.asarray(lam)
    per_rate = _trailing(shape, lam.shape)
    if math.prod(shape) == 0:
        return np.zeros(shape, dtype)
    key, counter = tf_random.stateless_key_counter(seed)
    return poisson(key, counter, lam, per_rate, dtype).reshape(shape)


def stateless_gamma(seed, shape, alpha) -> np.ndarray:
    """``StatelessRandomGammaV3`` with the key and counter of ``seed``: ``shape`` ends with ``alpha``'s shape;
    the samples in alpha's dtype (tf.random.stateless_gamma then divides by beta)."""
    shape, alpha = tuple(shape), np.asarray(alpha)
    per_alpha = _trailing(shape, alpha.shape)
    if math.prod(shape) == 0:
        return np.zeros(shape, alpha.dtype)
    key, counter = tf_random.stateless_key_counter(seed)
    return gamma(key, counter, alpha, per_alpha, alpha.dtype).reshape(shape)


def stateless_binomial(seed, shape, counts, probs, dtype) -> np.ndarray:
    """``tf.random.stateless_binomial`` (StatelessRandomBinomial): ``shape`` ends with the broadcast shape of
    ``counts`` and ``probs`` (one floating dtype)."""
    shape = tuple(shape)
    counts, probs = np.broadcast_arrays(np.asarray(counts), np.asarray(probs))
    per_batch = _trailing(shape, counts.shape)
    if math.prod(shape) == 0:
        return np.zeros(shape, dtype)
    key, counter = tf_random.stateless_key_counter(seed)
    return binomial(key, counter, counts, probs, per_batch, dtype).reshape(shape)


def binomial_skip(shape, params_shape) -> int:
    """How far StatefulRandomBinomial moves its generator's counter (``num_batches * 2 * 100 *
    (samples_per_batch + 3) / 4`` Philox outputs)."""
    batches = math.prod(params_shape)
    return batches * 2 * 100 * (math.prod(shape) // max(batches, 1) + 3) // 4


def random_poisson(state: tf_random.StatefulRandom, shape, lam, dtype, seed=None) -> np.ndarray:
    """``tf.random.poisson`` (RandomPoissonV2, its kernel cached per rate dtype): ``shape + lam.shape``."""
    shape, lam = tuple(shape), np.asarray(lam)
    seeds = state.get_seed(seed)
    num_samples = math.prod(shape)
    if num_samples == 0:
        return np.zeros(shape + lam.shape, dtype)
    key, counter = state.reserve(f"RandomPoissonV2/{lam.dtype.name}", dtype, seeds,
                                 num_samples * lam.size * _RESERVED_PER_OUTPUT)
    return poisson(key, counter, lam, num_samples, dtype).reshape(shape + lam.shape)


def random_gamma(state: tf_random.StatefulRandom, shape, alpha, seed=None) -> np.ndarray:
    """RandomGamma, what ``tf.random.gamma`` divides by beta: ``shape + alpha.shape`` in alpha's dtype."""
    shape, alpha = tuple(shape), np.asarray(alpha)
    seeds = state.get_seed(seed)
    num_samples = math.prod(shape)
    if num_samples * alpha.size == 0:
        return np.zeros(shape + alpha.shape, alpha.dtype)
    key, counter = state.reserve("RandomGamma", alpha.dtype, seeds, num_samples * alpha.size * _RESERVED_PER_OUTPUT)
    return gamma(key, counter, alpha, num_samples, alpha.dtype).reshape(shape + alpha.shape)


# ----------------------------------------------------------------------------------------------------------
# Multinomial (tf.random.categorical) and StatelessMultinomial
# ----------------------------------------------------------------------------------------------------------

def multinomial(logits: np.ndarray, num_samples: int, key: int, counter: int, threads: int) -> np.ndarray:
    """``multinomial_op.cc``'s CPU draws [batch, num_samples] (int64) from the Philox generator at (key, counter):
    each row's unnormalized CDF, the running total of exp(logit - max) over its finite logits in double, each
    sample the first class whose running total exceeds ``RandDouble() * total`` (a SimplePhilox: two uint32 a
    double). The rows run in shards (``Shard``: Eigen's parallelFor with a cost of 50 (samples log2(classes) +
    classes) a row over ``threads``): each shard's generator skipped by ``first_row * (num_samples + 3) / 4``
    Philox outputs, its rows one after another."""
    batch, classes = logits.shape
    out = np.zeros((batch, num_samples), np.int64)
    if out.size == 0:
        return out
    cost = int(50 * (num_samples * math.log(classes) / math.log(2) + classes))
    for start, stop in _shards(batch, cost, threads):
        skip = start * (num_samples + 3) // 4
        words = tf_random.philox_uint32(key, tf_random.counter_skip(counter, skip), 2 * num_samples * (stop - start))
        uniform = tf_random.uint64_to_double(words[0::2], words[1::2]).reshape(stop - start, num_samples)
        for b in range(start, stop):
            row = logits[b]
            finite = np.isfinite(row)
            top = float(row[finite].max()) if finite.any() else float(np.finfo(row.dtype).min)
            cdf = np.cumsum(np.where(finite, np.exp(row.astype(np.float64) - top), 0.0))     # (a running total)
            out[b] = np.searchsorted(cdf, uniform[b - start] * cdf[-1], side="right")
    return out


def _shards(total: int, cost: int, threads: int) -> list:
    """The row ranges ``Shard`` (work_sharder.cc: the pool's ``ParallelFor``) gives its work: one range where
    Eigen's cost model keeps it on one thread, else its blocks."""
    work_threads = min(threads, max(1, int((total * cost - 100_000) / 100_000 + 0.9)))
    if total <= 1 or threads == 1 or work_threads == 1:
        return [(0, total)]
    step = tf_sums.parallel_for_block(total, cost, threads)
    return [(first, min(total, first + step)) for first in range(0, total, step)]
