"""tapecli/kernels/tf_random.py against TensorFlow's and Keras's random numbers, recorded bit for bit by
benchmarks/record_tf_random.py (TensorFlow 2.21, Keras 3.15, CPU) in tests/data/tf_random_bits.json.
No TensorFlow here: every expectation is read from the recording."""
from __future__ import annotations

import ctypes
import hashlib
import json
import math
import random
from pathlib import Path

import numpy as np
import pytest

from tapecli.kernels import tf_random as R
from tapecli.kernels import tf_random_samplers as S

DATA = json.loads((Path(__file__).parents[1] / "data" / "tf_random_bits.json").read_text())
F32 = np.float32


def check(got, expected: dict, what: str = "") -> None:
    """``got`` has the recorded shape, dtype and bytes (for a large array: its first values and digest)."""
    got = np.ascontiguousarray(np.asarray(got))
    dtype = np.dtype(expected["dtype"])
    assert got.dtype == dtype, f"{what}: dtype {got.dtype}, TensorFlow {dtype}"
    assert list(got.shape) == expected["shape"], f"{what}: shape {got.shape}, TensorFlow {expected['shape']}"
    if "hex" in expected:
        want = np.frombuffer(bytes.fromhex(expected["hex"]), dtype=dtype).reshape(got.shape)
        differ = got.view(np.uint8).reshape(-1, dtype.itemsize) != want.view(np.uint8).reshape(-1, dtype.itemsize)
        bad = np.flatnonzero(differ.any(axis=1))
        assert bad.size == 0, (f"{what}: {bad.size} of {got.size} values differ from TensorFlow's, first at "
                               f"{bad[0]}: {got.reshape(-1)[bad[0]]!r} against {want.reshape(-1)[bad[0]]!r}")
    else:
        head = np.frombuffer(bytes.fromhex(expected["head"]), dtype=dtype)
        assert got.reshape(-1)[:head.size].tobytes() == head.tobytes(), f"{what}: first values differ"
        assert hashlib.sha256(got.tobytes()).hexdigest() == expected["sha256"], f"{what}: the values differ"


def _id(case: dict) -> str:
    extra = "".join(f",{k}={v}" for k, v in case.get("kwargs", {}).items())
    return f"{case['op']}-{case['dtype']}-{case['seed']}-{case['shape']}{extra}"


# ---------------------------------------------------------------------------------------------- the generator

@pytest.mark.parametrize("case", DATA["philox"], ids=lambda c: f"key={c['key']:#x}")
def test_philox_outputs(case):
    counter = case["counter"][0] | case["counter"][1] << 64
    check(R.philox_uint32(case["key"], counter, 12), case["values"], "Philox4x32-10")


def test_philox_in_pythons_integers_gives_the_words_of_numpys_rounds():
    """philox_blocks makes fewer than PYTHON_BLOCKS outputs in Python's integers (the recorded cases above take
    that way, 3 blocks, and the larger draws NumPy's): the same words as NumPy's rounds, across the counter's
    64-bit carry and its 128-bit wrap."""
    rng = random.Random(3)
    n = R.PYTHON_BLOCKS - 1
    for counter in [0, 2**64 - 2, 2**128 - 3, *(rng.getrandbits(128) for _ in range(30))]:
        key = rng.getrandbits(64)
        words = R._philox_words(*R._counter_words(counter, np.arange(n, dtype=np.uint64)), key)
        assert np.array_equal(R.philox_blocks(key, counter, n), words) and R.philox_blocks(key, counter, n).dtype == np.uint32


@pytest.mark.parametrize("case", DATA["key_counter"], ids=lambda c: f"{c['seed']}-{c['seed_dtype']}")
def test_stateless_key_counter(case):
    key, counter = R.stateless_key_counter(case["seed"])
    assert key == case["key"]
    assert [counter & (2**64 - 1), counter >> 64] == case["counter"]


def test_counter_skip_carries_as_tensorflow():
    # PhiloxRandom::Skip: a 128-bit addition of a 64-bit count ...
    assert R.counter_skip(2**32 - 1, 1) == 2**32
    assert R.counter_skip(2**64 - 1, 1) == 2**64
    assert R.counter_skip(2**128 - 1, 1) == 0
    assert R.counter_skip(5 << 64, 2**63 + 7) == (5 << 64) + 2**63 + 7
    assert R.counter_skip(2**32 + 1, 2**64 - 2**32) == 2**64 + 1
    # ... but for a carry out of the low word when the high word is all ones: TensorFlow loses it (1 + 2**64 - 1)
    assert R.counter_skip(1, 2**64 - 1) == 0


# ---------------------------------------------------------------------------------------------- stateless ops

STATELESS = {"uniform": R.stateless_uniform, "normal": R.stateless_normal,
             "truncated_normal": R.stateless_truncated_normal}


@pytest.mark.parametrize("case", DATA["stateless"], ids=_id)
def test_stateless(case):
    got = STATELESS[case["op"]](case["seed"], case["shape"], case["dtype"], **case["kwargs"])
    check(got, case["values"], _id(case))


def test_stateless_covers_what_it_claims():
    cases = DATA["stateless"]
    assert {c["op"] for c in cases} == set(STATELESS)
    assert {c["dtype"] for c in cases} >= {"float32", "float64", "int32", "int64", "uint32", "uint64"}
    sizes = {math.prod(c["shape"]) for c in cases}
    assert {1, 3, 5, 7, 1001, 262147, 1000000} <= sizes


# ---------------------------------------------------------------------------------------------- stateful ops

def _shuffle_value(spec):
    return np.arange(spec["n"]).astype(spec["dtype"]).reshape(spec.get("shape", [spec["n"]]))


def run_program(program):
    state = R.StatefulRandom(program["global_seed"])
    out = []
    for call in program["calls"]:
        op = call["op"]
        if op == "set_seed":
            state.set_seed(call["seed"])
            out.append(None)
            continue
        if op == "shuffle":
            out.append(state.shuffle(_shuffle_value(call["value"]), seed=call.get("seed")))
            continue
        if op == "poisson":
            lam = np.asarray(call["lam"], call.get("lam_dtype", "float32"))
            out.append(S.random_poisson(state, call["shape"], lam, np.dtype(call.get("dtype", "float32")),
                                        call.get("seed")))
            continue
        if op == "gamma":
            out.append(_gamma_op(S.random_gamma(state, call["shape"], np.asarray(call["alpha"], call.get("dtype", "float32")),
                                                call.get("seed"))))
            continue
        kw = {k: call[k] for k in ("minval", "maxval", "mean", "stddev", "seed") if k in call}
        fn = {"uniform": state.uniform, "normal": state.normal, "truncated_normal": state.truncated_normal}[op]
        out.append(fn(call["shape"], dtype=call.get("dtype", "float32"), **kw))
    return out


@pytest.mark.parametrize("program", DATA["stateful"], ids=lambda p: p["name"])
def test_stateful_program(program):
    for i, (call, got, want) in enumerate(zip(program["calls"], run_program(program), program["values"])):
        if want is not None:
            check(got, want, f"call {i} {call}")


def test_repeated_calls_differ_and_set_seed_restarts():
    program = next(p for p in DATA["stateful"] if p["name"] == "same op seed twice")
    first, second = program["values"][:2]
    assert first["hex"] != second["hex"]          # TensorFlow: the kernel's state moved on
    reset = next(p for p in DATA["stateful"] if p["name"] == "set_seed resets")["values"]
    assert reset[0]["hex"] == reset[2]["hex"] != reset[5]["hex"]


def test_get_seed():
    state = R.StatefulRandom()
    assert state.get_seed(None) == (None, None)
    assert state.get_seed(5) == (R.DEFAULT_GRAPH_SEED, 5)
    assert state.get_seed(-7) == (R.DEFAULT_GRAPH_SEED, 2**31 - 8)
    state.set_seed(0)
    assert state.get_seed(0) == (0, 2**31 - 1)
    state.set_seed(2**31 - 1)
    assert state.get_seed(2**31 - 1) == (0, 2**31 - 1)
    state.set_seed(1234)
    assert state.get_seed(None) == (1234, random.Random(1234).randint(0, 2**31 - 1))


def test_without_seeds_the_kernel_is_random():
    a = R.StatefulRandom().normal([4])
    b = R.StatefulRandom().normal([4])
    assert not np.array_equal(a, b)


def test_fisher_yates_is_the_loop():
    rng = np.random.default_rng(3)
    for n in [2, 3, 4, 5, 9, 64, 1000, 20000] * 3:
        targets = np.arange(n - 1) + rng.integers(0, 2**32, n - 1) % np.arange(n, 1, -1)
        perm = list(range(n))
        for i, k in enumerate(targets.tolist()):
            perm[i], perm[k] = perm[k], perm[i]
        assert R.fisher_yates(targets, n).tolist() == perm


@pytest.mark.parametrize("case", DATA["dataset_shuffle"], ids=lambda c: f"{c['n']}-{c['buffer']}-{c['reshuffle']}")
def test_dataset_shuffle(case):
    state = R.StatefulRandom(case["global_seed"])
    seed, seed2 = state.get_seed(case["seed"])
    assert [seed, seed2] == case["seeds"]
    for i, order in enumerate(case["orders"]):
        got = list(R.dataset_shuffle(range(case["n"]), case["buffer"], seed, seed2, i, case["reshuffle"]))
        assert got == order, f"pass {i}"


# ---------------------------------------------------------------------------------------------- samplers

def _gamma_op(rnd):
    """tf.random.gamma / stateless_gamma with beta 1: maximum(tiny, kernel / 1)."""
    return np.maximum(np.finfo(rnd.dtype).tiny, rnd / rnd.dtype.type(1))


def _sampler_id(case: dict) -> str:
    params = {k: case[k] for k in ("lam", "alpha", "counts", "probs") if k in case}
    return f"{case['op']}-{case['dtype']}-{case['seed']}-{case['shape']}-{params}"


def sample(case: dict) -> np.ndarray:
    if case["op"] == "poisson":
        return S.stateless_poisson(case["seed"], case["shape"], np.asarray(case["lam"], case["lam_dtype"]),
                                   np.dtype(case["dtype"]))
    if case["op"] == "gamma":
        return _gamma_op(S.stateless_gamma(case["seed"], case["shape"], np.asarray(case["alpha"], case["dtype"])))
    t = case["param_dtype"]
    return S.stateless_binomial(case["seed"], case["shape"], np.asarray(case["counts"], t),
                                np.asarray(case["probs"], t), np.dtype(case["dtype"]))


@pytest.mark.parametrize("case", DATA["samplers"], ids=_sampler_id)
def test_stateless_samplers(case):
    check(sample(case), case["values"], _sampler_id(case))


def test_samplers_cover_both_algorithms_of_each():
    cases = DATA["samplers"]
    rates = {float(r) for c in cases if c["op"] == "poisson" for r in np.ravel(c["lam"])}
    alphas = {float(a) for c in cases if c["op"] == "gamma" for a in np.ravel(c["alpha"])}
    means = {float(n) * float(p) for c in cases if c["op"] == "binomial"
             for n, p in zip(*np.broadcast_arrays(np.ravel(c["counts"])[:1], np.ravel(c["probs"])))}
    assert min(rates) < 10 <= max(rates) and min(alphas) < 1 < max(alphas) and 1.0 in alphas
    assert min(m for m in means if m > 0) < 10 <= max(means)
    assert {c["dtype"] for c in cases} >= {"float16", "float32", "float64", "int32", "int64"}


@pytest.mark.parametrize("case", DATA["generator_binomial"], ids=lambda c: str(c["seed"]))
def test_generator_binomial(case):
    state = [case["seed"] & (2**64 - 1), 0, 0]          # (create_rng_state: [counter low, counter high, key])
    for i, call in enumerate(case["calls"]):
        key, counter = state[2], state[0] | state[1] << 64
        counts, probs = np.asarray(call["counts"], np.float32), np.asarray(call["probs"], np.float32)
        params = np.broadcast_shapes(counts.shape, probs.shape)
        got = S.binomial(key, counter, counts, probs, math.prod(call["shape"]) // math.prod(params),
                         np.dtype(call["dtype"])).reshape(call["shape"])
        check(got, call["values"], f"call {i}")
        after = R.counter_skip(counter, 256 * S.binomial_skip(call["shape"], params))
        state = [after & (2**64 - 1), after >> 64, key]
        assert np.array(state, np.uint64).view(np.int64).tolist() == call["state"], f"call {i}: the state"


def test_sampler_refusals():
    with pytest.raises(ValueError, match="must end with"):
        S.stateless_poisson([1, 2], [3, 2], np.float32([1, 2, 3]), np.dtype(np.int32))
    with pytest.raises(ValueError, match="never returns"):
        S.stateless_poisson([1, 2], [2], np.float32([1, np.nan]), np.dtype(np.int32))
    with pytest.raises(ValueError, match="no defined value"):
        S.stateless_binomial([1, 2], [2], np.float32(np.inf), np.float32(0.5), np.dtype(np.int32))
    with pytest.raises(ValueError, match="NaN probability"):
        S.stateless_binomial([1, 2], [2], np.float32(5), np.float32(np.nan), np.dtype(np.int32))


# ---------------------------------------------------------------------------------------------- the C library

def _glibc():
    try:
        libm = ctypes.CDLL("libm.so.6")
        libc = ctypes.CDLL("libc.so.6")
        libc.gnu_get_libc_version.restype = ctypes.c_char_p
        major, minor = (int(v) for v in libc.gnu_get_libc_version().decode().split(".")[:2])
    except (OSError, AttributeError, ValueError):
        return None
    return libm if (major, minor) >= (2, 28) else None


GLIBC = _glibc()


def _box_muller_arguments(k):
    u = R.uint32_to_float(k)
    u1 = np.maximum(u, F32(1e-7))
    v1 = (np.float64(2 * math.pi) * u.astype(np.float64)).astype(np.float32)
    return u1, v1


@pytest.mark.skipif(GLIBC is None, reason="glibc 2.28 or later")
def test_logf_and_sincosf_are_glibcs():
    rng = np.random.default_rng(0)
    k = np.concatenate([np.arange(2048, dtype=np.uint32), np.arange(2**23 - 2048, 2**23, dtype=np.uint32),
                        rng.integers(0, 2**23, 20000).astype(np.uint32)])
    u1, v1 = _box_muller_arguments(k)
    u1 = np.concatenate([u1, rng.integers(0x00800000, 0x7F800000, 5000, dtype=np.uint32).view(np.float32),
                         (1 + rng.uniform(-0.05, 0.05, 5000)).astype(np.float32)])
    v1 = np.concatenate([v1, rng.uniform(-119.9, 119.9, 10000).astype(np.float32)])
    logf = GLIBC.logf
    logf.restype, logf.argtypes = ctypes.c_float, [ctypes.c_float]
    sincosf = GLIBC.sincosf
    sincosf.argtypes = [ctypes.c_float, ctypes.POINTER(ctypes.c_float), ctypes.POINTER(ctypes.c_float)]
    s, c = ctypes.c_float(), ctypes.c_float()
    want_log = np.array([logf(float(v)) for v in u1], dtype=np.float32)
    want_sin, want_cos = [], []
    for v in v1.tolist():
        sincosf(v, ctypes.byref(s), ctypes.byref(c))
        want_sin.append(s.value)
        want_cos.append(c.value)
    got_sin, got_cos = R.glibc_sincosf(v1)
    assert np.array_equal(R.glibc_logf(u1).view(np.uint32), want_log.view(np.uint32))
    assert np.array_equal(got_sin.view(np.uint32), np.array(want_sin, np.float32).view(np.uint32))
    assert np.array_equal(got_cos.view(np.uint32), np.array(want_cos, np.float32).view(np.uint32))


@pytest.mark.skipif(GLIBC is None, reason="glibc 2.28 or later")
def test_c_log_is_the_c_librarys():
    rng = np.random.default_rng(1)
    x = np.maximum(R.uint64_to_double(rng.integers(0, 2**32, 50000, dtype=np.uint64).astype(np.uint32),
                                      rng.integers(0, 2**32, 50000, dtype=np.uint64).astype(np.uint32)), 1e-7)
    log = GLIBC.log
    log.restype, log.argtypes = ctypes.c_double, [ctypes.c_double]
    want = np.array([log(v) for v in x.tolist()])
    assert np.array_equal(R.c_log(x), want)


# ---------------------------------------------------------------------------------------------- Keras 3

KERAS = DATA["keras"]
KERAS_SEED_MOD = 2**31 - 2          # _cast_seed: floormod(seed, tf.int32.max - 1)


def keras_seed(seed: int, counter: int = 0) -> tuple[int, int]:
    """keras.random's stateless seed for an int seed: draw_seed -> [seed, 0] int64 -> _cast_seed."""
    return seed % KERAS_SEED_MOD, counter % KERAS_SEED_MOD


def variance_scaling(py: random.Random, shape, scale: float, mode: str, distribution: str, seed=None):
    """keras.initializers.VarianceScaling: its seed drawn at construction (make_default_seed: randint(1, 1e9)
    of Python's random), then keras.random.{uniform, truncated_normal} with it when called."""
    seed = py.randint(1, int(1e9)) if seed is None else seed
    if len(shape) == 2:
        fan_in, fan_out = shape
    else:
        field = math.prod(shape[:-2])
        fan_in, fan_out = shape[-2] * field, shape[-1] * field
    scale /= max(1.0, {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[mode])
    if distribution == "truncated_normal":
        stddev = math.sqrt(scale) / 0.87962566103423978
        return R.stateless_truncated_normal(keras_seed(seed), shape, np.float32, 0.0, stddev)
    limit = math.sqrt(3.0 * scale)
    return R.stateless_uniform(keras_seed(seed), shape, np.float32, F32(-limit), F32(limit))


def test_keras_dense_kernel():
    case = KERAS["dense"]
    py = random.Random(case["seed"])                       # keras.utils.set_random_seed: random.seed(seed)
    kernel = variance_scaling(py, (4, 3), 1.0, "fan_avg", "uniform")   # Dense(3): GlorotUniform()
    check(kernel, case["kernel"], "Dense(3) kernel")
    assert py.random() == case["random_after"]


def test_keras_layers_draw_their_seeds_when_constructed():
    case = KERAS["layers"]
    py = random.Random(case["seed"])
    emb_seed = py.randint(1, int(1e9))                     # Embedding: RandomUniform(-0.05, 0.05)
    conv = variance_scaling(py, (3, 3, 3, 2), 2.0, "fan_in", "truncated_normal")   # Conv2D he_normal
    lstm = variance_scaling(py, (3, 8), 1.0, "fan_avg", "uniform")   # LSTMCell: kernel (glorot_uniform),
    py.randint(1, int(1e9))                                          # recurrent (orthogonal),
    py.randint(1, int(1e9))                                          # its dropout SeedGenerator
    drop_seed = py.randint(1, int(1e9))                    # Dropout: SeedGenerator(None); BatchNormalization: none
    for _ in range(3):                                     # GRUCell: kernel, recurrent, SeedGenerator
        py.randint(1, int(1e9))
    dense = variance_scaling(py, (7, 5), 1.0, "fan_avg", "truncated_normal")   # Dense glorot_normal
    assert py.random() == case["random_after"]
    check(R.stateless_uniform(keras_seed(emb_seed), (10, 4), np.float32, F32(-0.05), F32(0.05)), case["embedding"])
    check(conv, case["conv2d_he_normal"], "Conv2D he_normal")
    check(lstm, case["lstm_kernel"], "LSTM kernel")
    check(dense, case["dense_glorot_normal"], "Dense glorot_normal")
    # Dropout(0.3) in training: SeedGenerator.next() gives [seed, k] (k = 0, 1, ...), then stateless_dropout:
    # x * float32(1 / 0.7) where stateless_uniform(seed) >= 0.3, else 0
    x = np.ones((2, 6), np.float32)
    for k, want in enumerate(case["dropout"]):
        keep = R.stateless_uniform(keras_seed(drop_seed, k), x.shape, np.float32) >= F32(0.3)
        check(np.where(keep, x * F32(1 / (1 - 0.3)), F32(0)), want, f"Dropout call {k}")
    assert case["dropout_state"] == [drop_seed, 2]


def test_keras_random():
    case = KERAS["random"]
    check(R.stateless_normal(keras_seed(42), (3, 4)), case["normal_int_seed"])
    # keras.random.uniform casts minval and maxval to dtype with tf.cast (a Python number: through float32)
    check(R.stateless_uniform(keras_seed(2**31 + 5), (5,), np.float32, F32(-1), F32(2)), case["uniform_large_seed"])
    check(R.stateless_uniform(keras_seed(9), (4,), np.float64, np.float64(F32(-0.1)), np.float64(F32(0.3))),
          case["uniform_float64"])
    for k, want in enumerate(case["truncated_generator"]):     # SeedGenerator(7).next(): [7, 0], [7, 1]
        check(R.stateless_truncated_normal(keras_seed(7, k), (6,)), want)
    # seed None: the global SeedGenerator, made at the first use (make_default_seed), next(ordered=False):
    # the state, then state = (state + 1) * 5387 % 933199
    state = [random.Random(case["seed"]).randint(1, int(1e9)), 0]
    for want in case["normal_global"]:
        check(R.stateless_normal(keras_seed(*state), (3,)), want)
        state = [(s + 1) * 5387 % 933199 for s in state]


@pytest.mark.parametrize("case", KERAS["fit_shuffle"], ids=lambda c: f"seed={c['seed']}")
def test_keras_fit_shuffles_with_one_permutation(case):
    # ArrayDataAdapter: tf.random.shuffle(tf.range(n)) inside a tf.data map: graph seeds (global seed, 0) (the
    # first op of its function graph), a fresh kernel each epoch, so every epoch has the same order
    n = int(case["n"] * (1 - case["validation_split"]))   # validation_split: the last 25% held out, unshuffled
    seed, seed2 = R.truncate_seed(case["seed"]), 0
    if (seed, seed2) == (0, 0):                             # get_seed: (0, 0) -> (0, 2**31 - 1)
        seed2 = R.MAXINT32
    perm = R.shuffle_permutation(*R.stateful_key_counter(seed, seed2), n).tolist()
    batches = [perm[i:i + case["batch_size"]] for i in range(0, n, case["batch_size"])]
    assert case["batches"] == batches * case["epochs"]


def test_keras_fit_dropout_state():
    # Dropout's SeedGenerator: [randint(1, 1e9), 0] when constructed, one next() per training step in fit
    case = KERAS["fit_dropout_state"]
    assert case["state"] == [random.Random(4).randint(1, int(1e9)), case["steps"]]


def test_multinomial_runs_its_rows_in_tensorflows_shards():
    # TensorFlow 2.21's tf.random.stateless_categorical of 500 rows of 10 classes, 20 samples, seed [1, 2], on a
    # pool of 2 threads, recorded: Eigen's blocks of 63 rows, each block's generator skipped by first_row * 23 // 4
    logits = np.log(np.random.default_rng(0).uniform(0.1, 1.0, (500, 10)).astype(F32))
    key, counter = R.stateless_key_counter(np.array([1, 2]))
    out = S.multinomial(logits, 20, key, counter, threads=2)
    assert hashlib.sha256(out.tobytes()).hexdigest() == "260a38995434d8e46e103d5b37bd7f7b8934ea17b080951ea904c0f41cfa89dc"
    assert out[-1, :8].tolist() == [6, 0, 4, 3, 4, 7, 1, 2] and out[0, :8].tolist() == [8, 9, 2, 9, 6, 6, 8, 4]
    one_shard = S.multinomial(logits, 20, key, counter, threads=1)
    assert (one_shard[:63] == out[:63]).all() and (one_shard[63:] != out[63:]).any()
