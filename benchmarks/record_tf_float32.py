"""Record TensorFlow's float32 bits for the elementwise math that tapecli computes as TensorFlow's CPU kernels
do (tapecli/kernels/tf_float32.py, tf_pow.py): on tensors of fewer than 8 elements (Eigen's scalar path), and for
exp, log, sin, cos, tanh, sigmoid, softplus, elu, selu and pow on tensors of 8 elements and more (Eigen's packets of 8 and
the scalar path on the last size % 8), for tests/kernels/test_tf_float32.py.

Run it with the python of a development venv that has TensorFlow (never tapecli's runtime):

    TF_CPP_MIN_LOG_LEVEL=3 TFVENV/bin/python benchmarks/record_tf_float32.py [--rates]

It writes tests/tf_float32_bits.json: per op, cases of inputs and TensorFlow's outputs as float32 bit patterns
(hex), for scalars and tensors of 3 and 7 elements (and 8, 9, 16, 100 and 257 for the packet ops, and 2-D
ones), random and special values; for pow also broadcast exponents (a case's ``arg_shapes``), negative bases with
integer exponents and bases and exponents of a wide range. With --rates it prints instead what share of random inputs per op and
size tapecli's NumPy kernels give TensorFlow's bits for: 2,000 tensors of 1, 3 and 7 elements, at least
40,000 elements at 8 to 16,384 for the packet ops (run from a checkout whose tapecli imports with that
python's NumPy: set PYTHONPATH to it), and each kernel's time against NumPy's function with --cost.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent.parent / "tests" / "tf_float32_bits.json"
SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30, 1e-45, -1e-45, 1e-39, 0.5, -1.0, 88.7, 88.72, 88.73,
           89.0, -87.0, -87.4, -103.9, -104.5, 7.9, 7.91, 8.1, -8.1, 16.6, 16.7, 13.9, -13.95, 1e30, -1e30, 3.4e38]
# A subnormal argument reaches the C library's powf, whose arithmetic then reads it as a zero (TensorFlow runs
# with DAZ): tapecli does not follow that (tf_float32.py; it follows logf's), so pow's special values go to its
# packets (Eigen's generic_pow, which tapecli follows) and not to its scalar tail
NO_SUBNORMAL = {"pow"}


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
    if op in ("elu", "selu"):
        return (u(-8, 4),)
    if op == "expm1":
        return (u(-5, 5),)
    if op == "log1p":
        return (u(-0.99, 10),)
    if op == "pow":
        return (np.exp(u(-4, 4)).astype(np.float32), u(-4, 4))
    raise KeyError(op)


OPS = ["exp", "log", "sin", "cos", "tan", "atan", "tanh", "sigmoid", "softplus", "expm1", "log1p", "pow", "elu",
       "selu"]
# The ops whose tensors of 8 elements or more take Eigen's packet algorithms in tf_float32.py, and the sizes
# recorded for them (rows of each): whole packets, a tail, several packets, a 2-D tensor
PACKET_OPS = ["exp", "log", "sin", "cos", "tanh", "sigmoid", "softplus", "expm1", "log1p", "elu", "pow", "selu"]
PACKET_SIZES = ((8, 4), (9, 4), (16, 2), (100, 2), (257, 1))
PACKET_SHAPES = [(3, 5), (6, 37)]
LOG_SOFTMAX_SHAPES = [(5,), (3, 7), (4, 37), (9, 40), (2, 100)]


def special_places(op, n, rng):
    """Random places for SPECIAL in a tensor of n elements (in its packets alone for NO_SUBNORMAL's ops)."""
    return rng.choice(n - n % 8 if op in NO_SUBNORMAL else n, len(SPECIAL), replace=False)


def pow_operands(rng):
    """pow's further operands: bases of either sign (and special values) to broadcast exponents (x ** 2.0),
    negative bases to integer exponents, bases and exponents of a wide range (results that overflow and
    underflow), and broadcasts of 2-D tensors."""
    for n in (9, 100):
        for exponent in (2.0, 3.0, -1.0, 0.5, -2.0, 1.0, 0.0, np.nan, np.inf):
            x = rng.uniform(-5, 5, n).astype(np.float32)
            if n >= len(SPECIAL):
                x[special_places("pow", n, rng)] = SPECIAL
            yield x, np.float32(exponent)
    yield -np.exp(rng.uniform(-4, 4, 100)).astype(np.float32), rng.integers(-5, 6, 100).astype(np.float32)
    for n in (100, 257):
        yield np.exp(rng.uniform(-20, 20, n)).astype(np.float32), rng.uniform(-10, 10, n).astype(np.float32)
    yield np.exp(rng.uniform(-4, 4, (6, 37))).astype(np.float32), rng.uniform(-4, 4, 37).astype(np.float32)
    yield np.exp(rng.uniform(-4, 4, (5, 1))).astype(np.float32), rng.uniform(-4, 4, (1, 20)).astype(np.float32)


def pow_cases(f, rng):
    import tensorflow as tf
    cases = []
    for x, e in pow_operands(rng):
        y = f(tf.constant(x), tf.constant(e)).numpy()
        cases.append({"shape": list(y.shape), "arg_shapes": [list(np.shape(x)), list(np.shape(e))],
                      "args": [hexes(x), hexes(e)], "out": hexes(y)})
    return cases


def tf_functions():
    import tensorflow as tf
    return {"exp": tf.exp, "log": tf.math.log, "sin": tf.sin, "cos": tf.cos, "tan": tf.tan, "atan": tf.atan,
            "tanh": tf.tanh, "sigmoid": tf.sigmoid, "softplus": tf.nn.softplus, "expm1": tf.math.expm1,
            "log1p": tf.math.log1p, "pow": tf.pow, "elu": tf.nn.elu, "selu": tf.nn.selu}


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
        if op in PACKET_OPS:
            for n, rows in PACKET_SIZES:
                xs = inputs(op, rows, n, rng)
                if n >= len(SPECIAL):           # special values at random places, in packets and in the tail
                    for x in xs:
                        x[0, special_places(op, n, rng)] = SPECIAL
                for i in range(rows):
                    y = f(*[tf.constant(x[i]) for x in xs]).numpy()
                    cases.append({"shape": [n], "args": [hexes(x[i]) for x in xs], "out": hexes(y)})
            for shape in PACKET_SHAPES:
                xs = inputs(op, 1, int(np.prod(shape)), rng)
                for x in xs:
                    if x.size >= len(SPECIAL):
                        x[0, special_places(op, x.size, rng)] = SPECIAL
                xs = [x.reshape(shape) for x in xs]
                y = f(*[tf.constant(x) for x in xs]).numpy()
                cases.append({"shape": list(shape), "args": [hexes(x) for x in xs], "out": hexes(y)})
        if op == "pow":
            cases += pow_cases(f, rng)
        special = np.array([v for v in SPECIAL if not (op in NO_SUBNORMAL and 0 < abs(v) < 1.2e-38)], np.float32)
        for v in special:
            args = [v, np.float32(0.5)] if op == "pow" else [v]
            y = f(*[tf.constant(a) for a in args]).numpy()
            cases.append({"shape": [], "args": [hexes(a) for a in args], "out": hexes(y)})
        table[op] = cases
    # log_softmax: TensorFlow's LogSoftmax functor, whose row sums follow Eigen's reduction order (a row of
    # 37 or more elements reaches its four accumulators), rows with -inf (masked) entries among them
    cases = []
    for shape in LOG_SOFTMAX_SHAPES:
        x = (rng.standard_normal(shape) * 5).astype(np.float32)
        x.reshape(-1)[rng.choice(x.size, x.size // 5, replace=False)] = -np.inf
        x.reshape(-1, shape[-1])[:, 0] = 0.0        # (no row all -inf)
        for v in (x, (rng.standard_normal(shape) * 20).astype(np.float32)):
            y = tf.nn.log_softmax(tf.constant(v)).numpy()
            cases.append({"shape": list(shape), "args": [hexes(v)], "out": hexes(y)})
    table["log_softmax"] = cases
    OUT.write_text(json.dumps({"tensorflow": tf.__version__, "ops": table}, indent=None, separators=(",", ":"))
                   + "\n")
    print(f"wrote {OUT}")


def _same(got, want):
    return (got.view(np.uint32) == want.view(np.uint32)) | (np.isnan(got) & np.isnan(want))


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
            line.append(f"n={n}: {100 * _same(got, want).mean():6.2f}%")
        if op in PACKET_OPS:
            for n in (8, 9, 16, 100, 1000, 4096, 16384):
                xs = inputs(op, max(10, 40000 // n), n, np.random.default_rng(n))
                want = np.stack([functions[op](*[tf.constant(x[i]) for x in xs]).numpy() for i in range(len(xs[0]))])
                with kernels.quiet():
                    got = np.stack([kernels.RAW_NUMPY_KERNELS[op](*[x[i] for x in xs]) for i in range(len(xs[0]))])
                line.append(f"n={n}: {100 * _same(got, want).mean():6.2f}%")
        print(f"{op:9s}", "  ".join(line))
    line = []
    for exponent in (2.0, 3.0, -1.0, 0.5):       # x ** 2.0: a broadcast exponent, bases of either sign
        for n in (9, 100, 1000):
            x = np.random.default_rng(n).uniform(-5, 5, (max(10, 40000 // n), n)).astype(np.float32)
            want = np.stack([tf.pow(tf.constant(v), np.float32(exponent)).numpy() for v in x])
            with kernels.quiet():
                got = np.stack([kernels.RAW_NUMPY_KERNELS["pow"](v, np.float32(exponent)) for v in x])
            line.append(f"x**{exponent:g} n={n}: {100 * _same(got, want).mean():6.2f}%")
    print("pow", "  ".join(line))
    line = []
    for shape in ((1, 10), (3, 7), (8, 10), (32, 10), (4, 37), (16, 100), (4, 1000), (2, 8192)):
        x = (np.random.default_rng(shape[1]).standard_normal((max(2, 20000 // (shape[0] * shape[1])),) + shape)
             * 5).astype(np.float32)
        want = np.stack([tf.nn.log_softmax(tf.constant(v)).numpy() for v in x])
        with kernels.quiet():
            got = np.stack([kernels.RAW_NUMPY_KERNELS["log_softmax"](v) for v in x])
        line.append(f"{shape[0]}x{shape[1]}: {100 * _same(got, want).mean():6.2f}%")
    print("log_softmax", "  ".join(line))


def cost():
    """Microseconds per call of tapecli's kernel and of NumPy's function (what tapecli ran before) per size."""
    import timeit
    from tapecli import kernels, ops  # noqa: F401
    e = lambda x: np.exp(-np.abs(x))  # noqa: E731
    numpy = {"exp": np.exp, "log": np.log, "sin": np.sin, "cos": np.cos, "tanh": np.tanh,
             "sigmoid": lambda x: np.where(x >= 0, 1 / (1 + e(x)), e(x) / (1 + e(x))),
             "softplus": lambda x: np.maximum(x, 0) + np.log1p(e(x)),
             "elu": lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0))), "pow": np.power,
             "selu": lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(np.minimum(x, 0)))}
    sizes = (7, 8, 9, 100, 1000, 4096, 16384)
    numpy["log_softmax"] = lambda x: (lambda s: s - np.log(np.sum(np.exp(s), axis=-1, keepdims=True)))(
        x - np.max(x, axis=-1, keepdims=True))
    rows = {100: (10, 10), 1000: (10, 100), 4096: (64, 64), 16384: (128, 128)}     # (log_softmax's shapes)
    print("µs: tapecli / NumPy", "".join(f"{n:>15d}" for n in sizes))
    for op in PACKET_OPS + ["log_softmax"]:
        cells = []
        for n in sizes:
            xs = [x[0] for x in inputs("tanh" if op == "log_softmax" else op, 1, n, np.random.default_rng(n))]
            if op == "log_softmax":
                xs = [xs[0].reshape(rows.get(n, (n,)))]
            with kernels.quiet():
                t = [min(timeit.repeat(lambda: f(*xs), number=200, repeat=5)) / 200 * 1e6
                     for f in (kernels.RAW_NUMPY_KERNELS[op], numpy[op])]
            cells.append(f"{t[0]:.1f} / {t[1]:.1f}")
        print(f"{op:19s}", "".join(f"{c:>15s}" for c in cells))


if __name__ == "__main__":
    if "--cost" in sys.argv:
        cost()
    elif "--rates" in sys.argv:
        rates()
    else:
        record()
