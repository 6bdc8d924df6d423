"""Record TensorFlow's and Keras's random numbers for tests/kernels/test_tf_random_bits.py (tapecli/kernels/tf_random.py).

Run it with the python of a development venv that has TensorFlow and Keras 3 (never tapecli's runtime):

    TF_CPP_MIN_LOG_LEVEL=3 TFVENV/bin/python benchmarks/record_tf_random.py

It writes tests/data/tf_random_bits.json: for each case its arguments and TensorFlow's values as raw
little-endian bytes in hex (float32 as its bit patterns, float64 as its), or, for arrays of more than FULL
elements, the SHA-256 of those bytes and the first 16 values. Cases: Philox outputs at given keys and counters
(StatelessRandomUniformFullIntV2, alg Philox), StatelessRandomGetKeyCounter, tf.random.stateless_uniform /
normal / truncated_normal over seeds, dtypes and shapes, programs of eager stateful calls (tf.random.set_seed,
uniform, normal, truncated_normal, shuffle, poisson, gamma), tf.data.Dataset.shuffle orders, the Poisson, gamma
and binomial samplers (tf.random.stateless_poisson / stateless_gamma / stateless_binomial over seeds, dtypes and
small and large parameters; tf.random.Generator.binomial and its state), and Keras 3's initial weights,
keras.random draws, Dropout masks and model.fit's batch order after keras.utils.set_random_seed.
"""
from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "tf_random_bits.json"
FULL = 256

SEEDS = [[1, 2], [0, 0], [-1, 7], [2**31 - 1, -2**31], [123456789012, -98765432109]]
SHAPES = [[], [1], [3], [5], [7], [2, 3], [4, 5, 3], [1001]]


def encode(a) -> dict:
    a = np.ascontiguousarray(np.asarray(a))
    d = {"shape": list(a.shape), "dtype": a.dtype.name}
    raw = a.tobytes()
    if a.size <= FULL:
        d["hex"] = raw.hex()
    else:
        d["sha256"] = hashlib.sha256(raw).hexdigest()
        d["head"] = a.reshape(-1)[:16].tobytes().hex()
    return d


def philox_cases(tf):
    from tensorflow.python.ops import gen_stateless_random_ops_v2 as v2
    cases = []
    for key, counter in [(0, [0, 0]), (2**64 - 1, [2**64 - 1, 2**64 - 1]), (0x0123456789ABCDEF, [2**64 - 2, 5]),
                         (10413732777507651514, [0, 17830669156045600267])]:
        bits = v2.stateless_random_uniform_full_int_v2(
            shape=[12], key=tf.constant([key], tf.uint64), counter=tf.constant(counter, tf.uint64), alg=1,
            dtype=tf.uint32)
        cases.append({"key": key, "counter": counter, "values": encode(bits.numpy())})
    return cases


def key_counter_cases(tf):
    from tensorflow.python.ops import gen_stateless_random_ops_v2 as v2
    cases = []
    for seed, dtype in [([1, 2], "int32"), ([-1, 7], "int32"), ([0, 0], "int32"), ([2**31 - 1, -2**31], "int32"),
                        ([123456789012, -98765432109], "int64"), ([-1, -1], "int64"), ([5, 6], "int64")]:
        key, counter = v2.stateless_random_get_key_counter(tf.constant(seed, getattr(tf, dtype)))
        cases.append({"seed": seed, "seed_dtype": dtype, "key": int(key.numpy()[0]),
                      "counter": [int(c) for c in counter.numpy()]})
    return cases


def stateless_cases(tf):
    fns = {"uniform": tf.random.stateless_uniform, "normal": tf.random.stateless_normal,
           "truncated_normal": tf.random.stateless_truncated_normal}
    cases = []

    def add(op, seed, shape, dtype, **kw):
        value = fns[op](shape, seed=seed, dtype=getattr(tf, dtype), **kw).numpy()
        cases.append({"op": op, "seed": seed, "shape": shape, "dtype": dtype, "kwargs": kw, "values": encode(value)})

    for op in fns:
        for dtype in ("float32", "float64"):
            for seed in SEEDS:
                for shape in SHAPES:
                    add(op, seed, shape, dtype)
            add(op, [5, 6], [1000003] if op == "uniform" else [1000000] if op == "normal" else [262147], dtype)
    add("uniform", [3, 4], [4, 7], "float32", minval=-2.5, maxval=7.25)
    add("uniform", [3, 4], [9], "float64", minval=-1e-3, maxval=1e3)
    add("normal", [3, 4], [2, 5], "float32", mean=3.5, stddev=0.1)
    add("normal", [3, 4], [5], "float64", mean=-2.0, stddev=1e-3)
    add("truncated_normal", [3, 4], [2, 5], "float32", mean=-1.0, stddev=2.0)
    add("truncated_normal", [3, 4], [5], "float64", mean=0.5, stddev=3.0)
    add("uniform", [9, 9], [7], "int32", minval=-5, maxval=17)
    add("uniform", [9, 9], [9], "int32", minval=-2**31, maxval=2**31 - 1)
    add("uniform", [9, 9], [5], "int64", minval=-10**12, maxval=10**15)
    add("uniform", [9, 9], [7], "int64", minval=-2**63, maxval=2**63 - 1)
    for dtype in ("int32", "int64", "uint32", "uint64"):
        add("uniform", [9, 9], [6], dtype, minval=None, maxval=None)
    return cases


# Stateful programs: each runs after tf.random.set_seed(program["global_seed"]) in a fresh kernel cache
PROGRAMS = [
    {"name": "same op seed twice", "global_seed": 1, "calls": [
        {"op": "normal", "shape": [3], "seed": 1}, {"op": "normal", "shape": [3], "seed": 1},
        {"op": "uniform", "shape": [3], "seed": 1}, {"op": "normal", "shape": [3], "seed": 1},
        {"op": "truncated_normal", "shape": [5], "seed": 1}, {"op": "uniform", "shape": [3], "seed": 1}]},
    {"name": "op seed None", "global_seed": 1234, "calls": [
        {"op": "normal", "shape": [3]}, {"op": "normal", "shape": [3]}, {"op": "uniform", "shape": [2, 2]},
        {"op": "shuffle", "value": {"n": 10, "dtype": "int32"}}, {"op": "shuffle", "value": {"n": 10, "dtype": "int32"}},
        {"op": "truncated_normal", "shape": [4]}, {"op": "uniform", "shape": [3], "dtype": "float64"}]},
    {"name": "no global seed", "global_seed": None, "calls": [
        {"op": "normal", "shape": [3], "seed": 5}, {"op": "normal", "shape": [3], "seed": 5},
        {"op": "uniform", "shape": [5], "seed": 7}, {"op": "shuffle", "value": {"n": 6, "dtype": "int32"}, "seed": 5}]},
    {"name": "zero seeds", "global_seed": 0, "calls": [
        {"op": "normal", "shape": [3], "seed": 0}, {"op": "normal", "shape": [3]}, {"op": "uniform", "shape": [3], "seed": 0},
        {"op": "normal", "shape": [3], "seed": 2**31 - 1}]},
    {"name": "large and negative seeds", "global_seed": 2**40 + 3, "calls": [
        {"op": "normal", "shape": [4], "seed": -7},
        {"op": "uniform", "shape": [3], "seed": 2**35, "minval": -1.5, "maxval": 2.5},
        {"op": "uniform", "shape": [3], "seed": 2**35, "maxval": 10},
        {"op": "uniform", "shape": [3], "seed": 2**35, "minval": 0.0, "maxval": 10.0},
        {"op": "uniform", "shape": [3], "seed": 2**35, "minval": 1, "maxval": 3}]},
    {"name": "negative global seed", "global_seed": -5, "calls": [
        {"op": "normal", "shape": [3], "seed": 3}, {"op": "normal", "shape": [3]}]},
    {"name": "dtypes keep their own kernels", "global_seed": 7, "calls": [
        {"op": "normal", "shape": [3], "seed": 1}, {"op": "normal", "shape": [3], "seed": 1, "dtype": "float64"},
        {"op": "normal", "shape": [3], "seed": 1},
        {"op": "uniform", "shape": [6], "seed": 2, "dtype": "int32", "minval": -5, "maxval": 5},
        {"op": "uniform", "shape": [6], "seed": 2, "dtype": "int32", "minval": 0, "maxval": 1000},
        {"op": "uniform", "shape": [4], "seed": 2, "dtype": "int64", "minval": -10**12, "maxval": 10**12},
        {"op": "truncated_normal", "shape": [5], "seed": 1, "dtype": "float64"},
        {"op": "truncated_normal", "shape": [5], "seed": 1, "dtype": "float64"},
        {"op": "uniform", "shape": [5], "seed": 1, "dtype": "float64"}]},
    {"name": "shuffles", "global_seed": 3, "calls": [
        {"op": "shuffle", "value": {"n": 24, "shape": [6, 4], "dtype": "int32"}, "seed": 9},
        {"op": "shuffle", "value": {"n": 24, "shape": [6, 4], "dtype": "int32"}, "seed": 9},
        {"op": "shuffle", "value": {"n": 1000, "dtype": "int32"}, "seed": 9},
        {"op": "shuffle", "value": {"n": 5, "dtype": "float32"}, "seed": 9},
        {"op": "shuffle", "value": {"n": 1, "dtype": "int32"}, "seed": 9},
        {"op": "shuffle", "value": {"n": 7, "dtype": "int32"}, "seed": 9},
        {"op": "shuffle", "value": {"n": 12, "shape": [1, 12], "dtype": "int32"}, "seed": 9},
        {"op": "shuffle", "value": {"n": 30, "shape": [5, 3, 2], "dtype": "float64"}, "seed": 9},
        {"op": "shuffle", "value": {"n": 7, "dtype": "int32"}, "seed": 9}]},
    {"name": "large tensors", "global_seed": 5, "calls": [
        {"op": "normal", "shape": [1000, 7], "seed": 3}, {"op": "normal", "shape": [5], "seed": 3},
        {"op": "truncated_normal", "shape": [4097], "seed": 3}, {"op": "truncated_normal", "shape": [3], "seed": 3},
        {"op": "uniform", "shape": [3, 333], "seed": 3}, {"op": "uniform", "shape": [2], "seed": 3}]},
    {"name": "set_seed resets", "global_seed": 11, "calls": [
        {"op": "normal", "shape": [3], "seed": 1}, {"op": "set_seed", "seed": 11},
        {"op": "normal", "shape": [3], "seed": 1}, {"op": "normal", "shape": [3]}, {"op": "set_seed", "seed": 12},
        {"op": "normal", "shape": [3], "seed": 1}, {"op": "normal", "shape": [3]}]},
    {"name": "poisson and gamma", "global_seed": 21, "calls": [
        {"op": "poisson", "shape": [5], "lam": [0.5, 3.0, 12.0], "seed": 1},
        {"op": "poisson", "shape": [5], "lam": [0.5, 3.0, 12.0], "seed": 1},
        {"op": "normal", "shape": [3], "seed": 1},
        {"op": "poisson", "shape": [4], "lam": 250.0, "dtype": "int32", "seed": 1},
        {"op": "poisson", "shape": [2, 3], "lam": [[1.0, 40.0]], "lam_dtype": "float64", "dtype": "int64"},
        {"op": "poisson", "shape": [3], "lam": [2, 20], "lam_dtype": "int32", "dtype": "float64", "seed": 4},
        {"op": "gamma", "shape": [6], "alpha": [0.2, 1.0, 4.5], "seed": 1},
        {"op": "gamma", "shape": [6], "alpha": [0.2, 1.0, 4.5], "seed": 1},
        {"op": "gamma", "shape": [3, 2], "alpha": [[0.7], [30.0]], "dtype": "float64"},
        {"op": "gamma", "shape": [0], "alpha": 2.0, "seed": 2}, {"op": "gamma", "shape": [2], "alpha": 2.0, "seed": 2}]},
    {"name": "means and bounds", "global_seed": 2, "calls": [
        {"op": "normal", "shape": [5], "mean": 2.0, "stddev": 0.5, "seed": 4},
        {"op": "truncated_normal", "shape": [5], "mean": -1.0, "stddev": 3.0, "seed": 4},
        {"op": "uniform", "shape": [4], "minval": -0.5, "maxval": 0.5, "seed": 4, "dtype": "float64"},
        {"op": "normal", "shape": [2, 3], "mean": 1.0, "stddev": 2.0, "dtype": "float64"}]},
]


def shuffle_value(spec):
    return np.arange(spec["n"]).astype(spec["dtype"]).reshape(spec.get("shape", [spec["n"]]))


def run_program(tf, program):
    tf.random.set_seed(program["global_seed"])
    values = []
    for call in program["calls"]:
        op = call["op"]
        kw = {"seed": call.get("seed")}
        if op == "set_seed":
            tf.random.set_seed(call["seed"])
            values.append(None)
            continue
        if op == "shuffle":
            values.append(encode(tf.random.shuffle(tf.constant(shuffle_value(call["value"])), **kw).numpy()))
            continue
        dtype = getattr(tf, call.get("dtype", "float32"))
        if op == "poisson":
            lam = tf.constant(call["lam"], getattr(tf, call.get("lam_dtype", "float32")))
            values.append(encode(tf.random.poisson(call["shape"], lam, dtype=dtype, **kw).numpy()))
            continue
        if op == "gamma":
            values.append(encode(tf.random.gamma(call["shape"], call["alpha"], dtype=dtype, **kw).numpy()))
            continue
        for name in ("minval", "maxval", "mean", "stddev"):
            if name in call:
                kw[name] = call[name]
        fn = {"uniform": tf.random.uniform, "normal": tf.random.normal, "truncated_normal": tf.random.truncated_normal}[op]
        values.append(encode(fn(call["shape"], dtype=dtype, **kw).numpy()))
    return values


def sampler_cases(tf):
    """tf.random.stateless_poisson / stateless_gamma / stateless_binomial: each parameter set over seeds."""
    cases = []
    poisson = [([0.5, 2.5, 9.99], "float32", "int32", [40, 3]), (3.0, "float32", "float32", [7]),
               ([10.0, 15.5, 100.0, 1e4, 1e7], "float64", "int64", [25, 5]), ([0.0, 30.0], "float64", "float64", [9, 2]),
               ([[1, 12], [5, 60]], "int32", "int32", [3, 2, 2]), (0.3, "float32", "float16", [12]),
               ([-2.0, 1e-5], "float32", "int32", [5, 2]), (4.0, "float32", "int32", [1000]),
               ([12.0, 45.0, 3000.0], "float32", "int32", [400, 3])]
    gamma = [(1.0, "float32", [9]), ([0.3, 0.9, 2.5], "float32", [30, 3]), ([1.0, 0.05, 7.0, 300.0], "float64", [20, 4]),
             ([[1e-3], [1e4]], "float64", [5, 2, 1]), ([0.0, -1.0, 0.5], "float32", [4, 3]), (2.0, "float16", [8]),
             (0.8, "float32", [1000])]
    binomial = [(10.0, 0.3, "float32", "int32", [12]), ([5.0, 40.0, 200.0], [0.5, 0.7, 0.02], "float32", "int32", [30, 3]),
                ([100.0, 1000.0], [0.9, 0.4], "float64", "float64", [20, 2]), (1e6, 0.5, "float64", "int64", [10]),
                ([[0.0], [7.0]], [0.0, 1.0, 0.999, 1e-4], "float32", "float32", [3, 2, 4]),
                (25.0, 0.5, "float32", "int32", [500]), ([60.0, 2000.0], [0.4, 0.75], "float64", "int64", [300, 2]),
                ([40.0, 3.0], 0.95, "float64", "int32", [25, 2]), (12.0, [0.2, float("nan")], "float32", "float32", [3, 2])]
    for seed in SEEDS[:4]:
        for lam, lam_dtype, dtype, shape in poisson:
            value = tf.random.stateless_poisson(shape, seed, tf.constant(lam, getattr(tf, lam_dtype)),
                                                dtype=getattr(tf, dtype))
            cases.append({"op": "poisson", "seed": seed, "shape": shape, "lam": lam, "lam_dtype": lam_dtype,
                          "dtype": dtype, "values": encode(value.numpy())})
        for alpha, dtype, shape in gamma:
            value = tf.random.stateless_gamma(shape, seed, alpha, dtype=getattr(tf, dtype))
            cases.append({"op": "gamma", "seed": seed, "shape": shape, "alpha": alpha, "dtype": dtype,
                          "values": encode(value.numpy())})
        for counts, probs, param_dtype, dtype, shape in binomial:
            t = getattr(tf, param_dtype)
            value = tf.random.stateless_binomial(shape, seed, tf.constant(counts, t), tf.constant(probs, t),
                                                 output_dtype=getattr(tf, dtype))
            cases.append({"op": "binomial", "seed": seed, "shape": shape, "counts": counts, "probs": probs,
                          "param_dtype": param_dtype, "dtype": dtype, "values": encode(value.numpy())})
    return cases


def generator_binomial_cases(tf):
    """tf.random.Generator.from_seed(seed).binomial calls in turn: values and the state after each."""
    out = []
    for seed, calls in [(5, [([3], 10.0, 0.5, "int32"), ([4, 2], [10.0, 100.0], [0.5, 0.9], "int32"),
                             ([6], 50.0, 0.3, "float64")]),
                        (2**40 + 1, [([2, 3], [[2.0], [30.0]], [0.1, 0.5, 0.8], "int64")])]:
        g = tf.random.Generator.from_seed(seed)
        values = []
        for shape, counts, probs, dtype in calls:
            v = g.binomial(shape, tf.constant(counts, tf.float32), tf.constant(probs, tf.float32), dtype=getattr(tf, dtype))
            values.append({"shape": shape, "counts": counts, "probs": probs, "dtype": dtype,
                           "values": encode(v.numpy()), "state": [int(s) for s in g.state.numpy()]})
        out.append({"seed": seed, "calls": values})
    return out


DATASET_CASES = [
    {"global_seed": 1, "seed": 5, "n": 10, "buffer": 4, "reshuffle": True, "passes": 3},
    {"global_seed": 1, "seed": 5, "n": 10, "buffer": 4, "reshuffle": False, "passes": 2},
    {"global_seed": 77, "seed": 12345, "n": 100, "buffer": 7, "reshuffle": True, "passes": 2},
    {"global_seed": 77, "seed": 3, "n": 20, "buffer": 50, "reshuffle": True, "passes": 2},
    {"global_seed": 77, "seed": 3, "n": 9, "buffer": 1, "reshuffle": True, "passes": 1},
    {"global_seed": None, "seed": 8, "n": 30, "buffer": 10, "reshuffle": True, "passes": 2},
]


def dataset_cases(tf):
    from tensorflow.python.framework import random_seed
    out = []
    for case in DATASET_CASES:
        tf.random.set_seed(case["global_seed"])
        seeds = random_seed.get_seed(case["seed"])
        ds = tf.data.Dataset.range(case["n"]).shuffle(case["buffer"], seed=case["seed"],
                                                      reshuffle_each_iteration=case["reshuffle"])
        orders = [[int(v) for v in ds] for _ in range(case["passes"])]
        out.append({**case, "seeds": list(seeds), "orders": orders})
    return out


def keras_cases(tf):
    import keras
    res = {"keras": keras.__version__}

    keras.utils.set_random_seed(1)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
    res["dense"] = {"seed": 1, "kernel": encode(model.layers[0].kernel.numpy()), "random_after": random.random()}

    keras.utils.set_random_seed(3)
    emb = keras.layers.Embedding(10, 4)
    conv = keras.layers.Conv2D(2, 3, kernel_initializer="he_normal")
    lstm = keras.layers.LSTM(2)
    drop = keras.layers.Dropout(0.3)
    keras.layers.BatchNormalization()
    keras.layers.GRU(2)
    dense = keras.layers.Dense(5, kernel_initializer="glorot_normal")
    after = random.random()
    emb.build((None, 3))
    conv.build((None, 5, 5, 3))
    lstm.build((None, 2, 3))
    dense.build((None, 7))
    x = tf.ones((2, 6))
    res["layers"] = {
        "seed": 3, "random_after": after,
        "embedding": encode(emb.embeddings.numpy()), "conv2d_he_normal": encode(conv.kernel.numpy()),
        "lstm_kernel": encode(lstm.cell.kernel.numpy()), "dense_glorot_normal": encode(dense.kernel.numpy()),
        "dropout": [encode(drop(x, training=True).numpy()) for _ in range(2)],
        "dropout_state": drop.seed_generator.state.numpy().tolist()}

    keras.utils.set_random_seed(5)
    gen = keras.random.SeedGenerator(7)
    res["random"] = {
        "seed": 5,
        "normal_int_seed": encode(keras.random.normal((3, 4), seed=42).numpy()),
        "uniform_large_seed": encode(keras.random.uniform((5,), minval=-1, maxval=2, seed=2**31 + 5).numpy()),
        "truncated_generator": [encode(keras.random.truncated_normal((6,), seed=gen).numpy()) for _ in range(2)],
        "normal_global": [encode(keras.random.normal((3,)).numpy()) for _ in range(2)],
        "uniform_float64": encode(keras.random.uniform((4,), minval=-0.1, maxval=0.3, dtype="float64", seed=9).numpy()),
    }

    fits = []
    for seed in (1, 0):
        got = []

        class Capture(keras.Model):
            def train_step(self, data):
                xb, _ = data
                tf.py_function(lambda t: got.append(t.numpy().ravel().astype(int).tolist()) or 0, [xb], tf.int32)
                return {"loss": tf.constant(0.0)}

        keras.utils.set_random_seed(seed)
        inp = keras.Input((1,))
        model = Capture(inp, keras.layers.Dense(1)(inp))
        model.compile(optimizer="sgd", loss="mse")
        xs = np.arange(12, dtype=np.float32).reshape(12, 1)
        model.fit(xs, np.zeros((12, 1), np.float32), batch_size=5, epochs=3, shuffle=True, verbose=0,
                  validation_split=0.25)
        fits.append({"seed": seed, "n": 12, "validation_split": 0.25, "batch_size": 5, "epochs": 3, "batches": got})
    res["fit_shuffle"] = fits

    keras.utils.set_random_seed(4)
    inp = keras.Input((4,))
    drop = keras.layers.Dropout(0.5)
    model = keras.Model(inp, keras.layers.Dense(1)(drop(inp)))
    model.compile(optimizer="sgd", loss="mse")
    model.fit(np.ones((6, 4), np.float32), np.zeros((6, 1), np.float32), batch_size=2, epochs=2, verbose=0)
    res["fit_dropout_state"] = {"steps": 6, "state": drop.seed_generator.state.numpy().tolist()}
    return res


def main():
    import tensorflow as tf
    table = {"tensorflow": tf.__version__, "numpy": np.__version__,
             "philox": philox_cases(tf), "key_counter": key_counter_cases(tf), "stateless": stateless_cases(tf)}
    table["stateful"] = [{**program, "values": run_program(tf, program)} for program in PROGRAMS]
    table["samplers"] = sampler_cases(tf)
    table["generator_binomial"] = generator_binomial_cases(tf)
    table["dataset_shuffle"] = dataset_cases(tf)
    table["keras"] = keras_cases(tf)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(table, indent=None, separators=(",", ":")) + "\n")
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
