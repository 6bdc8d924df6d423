"""Record TensorFlow's float32 bits for reduce_sum and reduce_mean, which tapecli's NumPy kernels compute as
TensorFlow's CPU kernels add (tapecli/kernels/tf_sums.py), for tests/kernels/test_tf_sums.py.

Run it with the python of a development venv that has TensorFlow (never tapecli's runtime):

    TF_CPP_MIN_LOG_LEVEL=3 TFVENV/bin/python benchmarks/record_tf_sums.py [--rates]

It writes tests/tf_sums_bits.json: per case, the shape, axis, keepdims, the op, the inputs' seed and
TensorFlow's outputs as float32 bit patterns (hex). The inputs are made by :func:`inputs` from the seed (an
integer hash, the same bits on every machine and NumPy), uniform, normal-like or spread over 2^-10 to 2^10.
With --rates it also prints, per kind of reduction, what share of cases (and of outputs) the NumPy kernels of
the tapecli on PYTHONPATH give TensorFlow's bits for (run it from an older checkout for the rates before).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent.parent / "tests" / "tf_sums_bits.json"


def inputs(shape, seed: int) -> np.ndarray:
    """float32 values of ``shape`` from ``seed``: kind ``seed % 3``: uniform in [-1, 1), a sum of four
    uniforms (normal-like), or uniform times 2^e, e in [-10, 10] (magnitudes far apart)."""
    n = int(np.prod(shape, dtype=np.int64))
    i = np.arange(4 * n + 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        h = (i + np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15)) * np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(31)
        h *= np.uint64(0x94D049BB133111EB)
        h ^= h >> np.uint64(29)
    u = (h >> np.uint64(40)).astype(np.float64) / 2.0 ** 24 * 2 - 1        # [-1, 1), 24 bits
    kind = seed % 3
    if kind == 0:
        x = u[:n]
    elif kind == 1:
        x = u[:4 * n].reshape(4, n).sum(axis=0) * 0.8
    else:
        x = u[:n] * np.exp2((h[n:2 * n] % np.uint64(21)).astype(np.float64) - 10)
    return x.astype(np.float32).reshape(shape)


FULL = [1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 255, 256, 1000, 1023, 1024, 1025,
        4095, 4096, 8191, 8192, 8193, 8200, 10000, 16384, 16385, 20001, 32768, 50000, 65537, 100000, 108387]
LAST = [(2, 3), (5, 9), (3, 33), (4, 100), (32, 10), (7, 1000), (2, 8193), (3, 9001), (2, 20001), (3, 16387)]
FIRST = [(3, 2), (17, 5), (16, 8), (20, 9), (33, 17), (100, 3), (100, 24), (1000, 10), (64, 64), (15, 16),
         (128, 10), (32, 1), (9000, 7), (30001, 3)]
MIDDLE = [(2, 3, 4), (3, 17, 5), (2, 20, 9), (3, 33, 17), (4, 16, 8), (5, 40, 12), (2, 100, 3), (8, 64, 9),
          (3, 1000, 10)]


def cases():
    """(kind, shape, axis, keepdims) of every recorded reduction."""
    out = [("full", (n,), None, False) for n in FULL]
    out += [("full", s, None, k) for s, k in [((4, 8), False), ((3, 5, 7), True), ((10, 1), False), ((1, 1), False),
                                               ((128, 784), False)]]
    out += [("last axis", s, 1, False) for s in LAST]
    out += [("last axis", (4, 5, 6), -1, True), ("last axis", (4, 5, 6), (1, 2), False)]
    out += [("first axis", s, 0, False) for s in FIRST] + [("first axis", (4, 5, 6), (0, 1), True)]
    out += [("middle axis", s, 1, False) for s in MIDDLE] + [("middle axis", (4, 17, 1, 30), (1, 2), True)]
    out += [("first and last", s, (0, 2), False) for s in [(2, 3, 4), (3, 17, 5), (20, 3, 9), (8, 4, 40)]]
    out += [("four or more", s, a, False) for s, a in [((2, 3, 4, 5), (0, 2)), ((2, 3, 4, 5), (1, 3)),
                                                      ((3, 4, 5, 6, 7), (0, 2, 4)), ((4, 1, 5, 6), (0, 3)),
                                                      ((6, 17, 3, 30), (1, 3))]]
    return out


PROGRAM = """import tensorflow as tf
import keras
y_true = tf.constant({y_true}, dtype=tf.float32)
y_pred = tf.constant({y_pred}, dtype=tf.float32)
print(float(keras.losses.MeanSquaredError()(y_true, y_pred)))
print(float(keras.losses.MeanAbsoluteError()(y_true, y_pred)))
print(float(tf.reduce_mean(tf.square(y_true - y_pred))))
print(float(tf.reduce_sum(y_pred)))
print(tf.reduce_sum(y_pred, axis=0).numpy().tolist())
print(tf.reduce_mean(y_pred, axis=-1).numpy().tolist())
m = keras.metrics.Mean()
m.update_state(y_true - y_pred)
m.update_state(tf.square(y_pred))
print(float(m.result()))
"""


def programs():
    """TensorFlow programs (Keras losses and the Mean metric on float32 batches) with the inputs written out."""
    out = []
    for k, shape in enumerate([(32, 1), (64, 10), (100, 3), (20, 33)]):
        y_true = inputs(shape, 500 + 2 * k)
        y_pred = inputs(shape, 501 + 2 * k)
        out.append(PROGRAM.format(y_true=y_true.tolist(), y_pred=y_pred.tolist()))
    return out


def hexes(a):
    return [format(int(v), "08x") for v in np.asarray(a, np.float32).reshape(-1).view(np.uint32)]


def record():
    import tensorflow as tf
    table = []
    seed = 0
    for kind, shape, axis, keepdims in cases():
        for op in ("sum", "mean"):
            for _ in range(3):          # one of each kind of inputs
                seed += 1
                f = tf.reduce_sum if op == "sum" else tf.reduce_mean
                y = f(tf.constant(inputs(shape, seed)), axis=axis, keepdims=keepdims).numpy()
                table.append({"kind": kind, "op": op, "shape": list(shape), "axis": axis, "keepdims": keepdims,
                              "seed": seed, "out_shape": list(y.shape), "out": hexes(y)})
    import contextlib
    import io
    runs = []
    for source in programs():
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(source, "prog.py", "exec"), {})
        runs.append({"source": source, "output": printed.getvalue().splitlines()})
    OUT.write_text(json.dumps({"tensorflow": tf.__version__, "cases": table, "programs": runs},
                              separators=(",", ":")) + "\n")
    print(f"wrote {OUT} ({len(table)} cases)")


def rates(trials=40):
    """Share of random inputs per kind of reduction whose bits tapecli's NumPy kernels give as TensorFlow."""
    import tensorflow as tf
    from tapecli import kernels, ops  # noqa: F401
    tally: dict = {}
    seed = 10_000
    for kind, shape, axis, keepdims in cases():
        if kind == "full":
            n = int(np.prod(shape))
            kind = "full, " + ("< 8" if n < 8 else "8-8192" if n <= 8192 else "8193-108387")
        for op in ("sum", "mean"):
            for _ in range(trials if np.prod(shape) < 20000 else trials // 4):
                seed += 1
                x = inputs(shape, seed)
                f = tf.reduce_sum if op == "sum" else tf.reduce_mean
                want = f(tf.constant(x), axis=axis, keepdims=keepdims).numpy()
                with kernels.quiet():
                    got = np.asarray(kernels.RAW_NUMPY_KERNELS[op](x, axis=axis, keepdims=keepdims), np.float32)
                same = got.shape == want.shape and got.view(np.uint32).tolist() == want.view(np.uint32).tolist()
                outs = (got.view(np.uint32) == want.view(np.uint32)) if got.shape == want.shape else np.zeros(1, bool)
                t = tally.setdefault((kind, op), [0, 0, 0, 0])
                t[0] += same
                t[1] += 1
                t[2] += int(outs.sum())
                t[3] += outs.size
    for (kind, op), (s, n, so, no) in tally.items():
        print(f"{kind:22s} {op:5s} cases {100 * s / n:6.2f}% of {n:4d}   outputs {100 * so / no:6.2f}% of {no}")
    s = sum(t[0] for t in tally.values())
    n = sum(t[1] for t in tally.values())
    print(f"{'all':28s} cases {100 * s / n:6.2f}% of {n}")


if __name__ == "__main__":
    if "--rates" in sys.argv:
        rates()
    else:
        record()
