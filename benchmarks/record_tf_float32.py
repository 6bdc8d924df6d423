"""Record TensorFlow's float32 bits for the elementwise math that tapecli computes as TensorFlow's CPU kernels
do on tensors of fewer than 8 elements (tapecli/kernels/tf_float32.py), for tests/test_tf_float32.py.

Run it with the python of a development venv that has TensorFlow (never tapecli's runtime):

    TF_CPP_MIN_LOG_LEVEL=3 TFVENV/bin/python benchmarks/record_tf_float32.py [--rates]

It writes tests/tf_float32_bits.json: per op, cases of inputs and TensorFlow's outputs as float32 bit patterns
(hex), for scalars and tensors of 3 and 7 elements, random and special values. With --rates it also prints
what share of 2,000 random inputs per op and size tapecli's NumPy kernels give TensorFlow's bits for (run
from a checkout whose tapecli imports with that python's NumPy: set PYTHONPATH to it).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent.parent / "tests" / "tf_float32_bits.json"
SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30, 1e-45, 0.5, -1.0, 88.7, 89.0, -87.4, -103.9, -104.5,
           7.9, 7.91, 8.1, -8.1, 16.6, 16.7, 13.9, -13.95, 1e30, -1e30, 3.4e38]
# A subnormal argument reaches the C library's logf/powf, whose arithmetic then reads it as a zero (TensorFlow
# runs with DAZ): tapecli does not follow that (tf_float32.py)
NO_SUBNORMAL = {"log", "pow"}


def inputs(op, rows, n, rng):
    u = lambda lo, hi: rng.uniform(lo, hi, (rows, n)).astype(np.float32)
    if op == "exp":
        return (u(-20, 20),)
    if op == "log":
        return (np.exp(u(-20, 20)).astype(np.float32),)
    if op in ("sin", "cos", "tan", "atan"):
        return (u(-10, 10),)
    if op == "tanh":
        return ((rng.standard_normal((rows, n)) * 3).astype(np.float32),)
    if op in ("sigmoid", "softplus"):
        return (u(-20, 20),)
    if op == "expm1":
        return (u(-5, 5),)
    if op == "log1p":
        return (u(-0.99, 10),)
    if op == "pow":
        return (np.exp(u(-4, 4)).astype(np.float32), u(-4, 4))
    raise KeyError(op)


OPS = ["exp", "log", "sin", "cos", "tan", "atan", "tanh", "sigmoid", "softplus", "expm1", "log1p", "pow"]


def tf_functions():
    import tensorflow as tf
    return {"exp": tf.exp, "log": tf.math.log, "sin": tf.sin, "cos": tf.cos, "tan": tf.tan, "atan": tf.atan,
            "tanh": tf.tanh, "sigmoid": tf.sigmoid, "softplus": tf.nn.softplus, "expm1": tf.math.expm1,
            "log1p": tf.math.log1p, "pow": tf.pow}


def hexes(a):
    return [format(int(v), "08x") for v in np.asarray(a, np.float32).reshape(-1).view(np.uint32)]


def record():
    import tensorflow as tf
    functions = tf_functions()
    rng = np.random.default_rng(20250101)
    table = {}
    for op in OPS:
        f = functions[op]
        cases = []
        for n, rows in ((0, 40), (3, 20), (7, 10)):
            xs = inputs(op, rows, max(n, 1), rng)
            for i in range(rows):
                args = [x[i] if n else x[i, 0] for x in xs]
                y = f(*[tf.constant(a) for a in args]).numpy()
                cases.append({"shape": list(np.shape(y)), "args": [hexes(a) for a in args], "out": hexes(y)})
        special = np.array([v for v in SPECIAL if not (op in NO_SUBNORMAL and 0 < abs(v) < 1.2e-38)], np.float32)
        for v in special:
            args = [v, np.float32(0.5)] if op == "pow" else [v]
            y = f(*[tf.constant(a) for a in args]).numpy()
            cases.append({"shape": [], "args": [hexes(a) for a in args], "out": hexes(y)})
        table[op] = cases
    OUT.write_text(json.dumps({"tensorflow": tf.__version__, "ops": table}, indent=None, separators=(",", ":"))
                   + "\n")
    print(f"wrote {OUT}")


def rates(rows=2000):
    """Share of random inputs per op and size whose bits tapecli's NumPy kernels give as TensorFlow does."""
    import tensorflow as tf
    from tapecli import kernels, ops  # noqa: F401
    functions = tf_functions()
    for op in OPS:
        line = []
        for n in (1, 3, 7):
            xs = inputs(op, rows, n, np.random.default_rng(n))
            want = np.stack([functions[op](*[tf.constant(x[i]) for x in xs]).numpy() for i in range(rows)])
            with kernels.quiet():
                got = np.stack([np.asarray(kernels.RAW_NUMPY_KERNELS[op](*[x[i] for x in xs]), np.float32)
                                for i in range(rows)])
            same = (got.view(np.uint32) == want.view(np.uint32)) | (np.isnan(got) & np.isnan(want))
            line.append(f"n={n}: {100 * same.mean():6.2f}%")
        print(f"{op:9s}", "  ".join(line))


if __name__ == "__main__":
    if "--rates" in sys.argv:
        rates()
    else:
        record()
