"""Record TensorFlow's bits for tf.math.igamma, tf.math.igammac, IgammaGradA (igamma's gradient in a),
tf.math.betainc and tf.math.lgamma (of the a's), float32 and float64, for tests/kernels/test_tf_igamma.py
(tapecli/kernels/tf_igamma.py).

Run it with the python of a development venv that has TensorFlow (never tapecli's runtime):

    TF_CPP_MIN_LOG_LEVEL=3 TFVENV/bin/python benchmarks/record_tf_igamma.py

It writes tests/tf_igamma_bits.json: per dtype, the inputs and TensorFlow's outputs, each array as the base64 of its
little-endian bytes. The points: every pair of a grid of special and spread values (0, subnormals, tiny, around 1,
large, inf, nan, negatives: each branch of Eigen's code, its domain errors and its edges), then random a over
[1e-3, 1e3] with x around a (the series and the continued fraction near their boundary x = a); betainc's b a
permutation of those x, its x uniform in [0, 1] and log-uniform down to 1e-17 (float32) or 1e-87 (float64).
"""
from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent.parent / "tests" / "tf_igamma_bits.json"
GRID = [0.0, 1e-40, 1e-38, 1e-30, 1e-10, 1e-5, 0.001, 0.01, 0.1, 0.3, 0.5, 0.9, 0.99, 1.0, 1.01, 1.5, 2.0, 2.5, 3.0,
        5.0, 7.3, 10.0, 11.5, 20.0, 33.3, 50.0, 100.0, 170.0, 300.0, 1000.0, 1e4, 1e5, 1e6, 1e8, 1e20, np.inf, np.nan,
        -1.0, -0.5]
GRID64 = [1e-310, 1e-300, 1e-200, 1e30, 1e300]
EDGES = [0.0, 1.0, -0.1, 1.1, np.nan, 0.5, 1e-38, 1 - 2 ** -24, 0.95, 0.96]
RANDOM = 1500


def _encode(v: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(v).astype(v.dtype.newbyteorder("<")).tobytes()).decode()


def points(dtype, rng):
    grid = np.array(GRID + (GRID64 if dtype == np.float64 else []))
    a, x = (v.ravel() for v in np.meshgrid(grid, grid, indexing="ij"))
    ra = np.exp(rng.uniform(np.log(1e-3), np.log(1e3), RANDOM))
    rx = ra * np.exp(rng.normal(0, 0.7, RANDOM))
    a, x = np.concatenate([a, ra]).astype(dtype), np.concatenate([x, rx]).astype(dtype)
    low = -40 if dtype == np.float32 else -200
    xb = np.concatenate([rng.uniform(0, 1, a.size // 2), np.exp(rng.uniform(low, 0, a.size - a.size // 2))])
    xb[:len(EDGES) * 4] = EDGES * 4
    xb = xb.astype(dtype)
    b = rng.permutation(x)
    if dtype == np.float32:
        # TensorFlow's kernel never returns here: incbps's t = x / (1 - x) is inf after the swap (x below 2^-25
        # and above the mean a / (a + b)), and its series runs on while b, not whole, steps below zero
        with np.errstate(all="ignore"):
            hang = (xb > a / (a + b)) & (np.float32(1) - xb == 1) & (a > 10)
        xb[hang] = np.float32(0.5)
    return a, x, b, xb


def main() -> None:
    import tensorflow as tf
    rng = np.random.default_rng(2026)
    out = {}
    for dtype in (np.float32, np.float64):
        a, x, b, xb = points(dtype, rng)
        out[np.dtype(dtype).name] = {name: _encode(v) for name, v in (
            ("a", a), ("x", x), ("b", b), ("betainc_x", xb),
            ("igamma", tf.math.igamma(a, x).numpy()), ("igammac", tf.math.igammac(a, x).numpy()),
            ("igamma_grad_a", tf.raw_ops.IgammaGradA(a=a, x=x).numpy()),
            ("betainc", tf.math.betainc(a, b, xb).numpy()), ("lgamma", tf.math.lgamma(a).numpy()))}
    OUT.write_text(json.dumps({"tensorflow": tf.__version__, **out}, indent=1) + "\n")
    print(f"{OUT}: {sum(len(np.frombuffer(base64.b64decode(v['a']), 'u1')) for v in out.values())} bytes of a")


if __name__ == "__main__":
    main()
