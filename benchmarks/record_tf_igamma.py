"""Record TensorFlow's bits for tf.math.igamma, tf.math.igammac, IgammaGradA (igamma's gradient in a),
tf.math.betainc, tf.math.lgamma (of the a's) and tf.math.digamma (of points of its own), float32 and float64, for
tests/kernels/test_tf_igamma.py (tapecli/kernels/tf_igamma.py).

Run it with the python of a development venv that has TensorFlow (never tapecli's runtime):

    TF_CPP_MIN_LOG_LEVEL=3 TFVENV/bin/python benchmarks/record_tf_igamma.py

It writes tests/tf_igamma_bits.json: per dtype, the inputs and TensorFlow's outputs, each array as the base64 of its
little-endian bytes. The points: every pair of a grid of special and spread values (0, subnormals, tiny, around 1,
large, inf, nan, negatives: each branch of Eigen's code, its domain errors and its edges), then random a over
[1e-3, 1e3] with x around a (the series and the continued fraction near their boundary x = a); betainc's b a
permutation of those x, its x uniform in [0, 1] and log-uniform down to 1e-17 (float32) or 1e-87 (float64).
digamma's points: a grid over [-20, 20] in steps of 1/20 (its poles, halves), a few ulps either side of each pole
down to -30, random negative non-integers, and tiny to huge magnitudes of either sign (subnormals, the series'
cut-offs 1e8 and 1e17, the recurrence's 10), inf and nan.
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
DIGAMMA_RANDOM = 1000


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


def digamma_points(dtype, rng):
    highest = np.floor(np.log10(np.finfo(dtype).max))
    lowest = np.log10(np.finfo(dtype).smallest_subnormal)
    poles = -np.arange(31).astype(dtype)
    ulps = [np.nextafter(poles, np.asarray(direction, dtype)) for direction in (-np.inf, np.inf)]
    near = np.concatenate(ulps + [np.nextafter(u, np.asarray(d, dtype)) for u, d in zip(ulps, (-np.inf, np.inf))])
    magnitudes = np.concatenate([10.0 ** np.linspace(lowest, highest, 400),
                                 [1e8, 1e17, 10.0, 9.999999, 10.000001, 0.5, 1.5, 99999999.0, 100000001.0]])
    randoms = [-rng.uniform(0, 60, DIGAMMA_RANDOM // 2),
               np.exp(rng.uniform(np.log(1e-6), np.log(1e6), DIGAMMA_RANDOM // 2))]
    x = np.concatenate([np.arange(-400, 401) / 20, near, magnitudes, -magnitudes, *randoms,
                        [0.0, -0.0, np.inf, -np.inf, np.nan, -1e10 - 0.5, -2 ** 23 + 0.5]])
    return x.astype(dtype)


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
    digamma_rng = np.random.default_rng(2027)       # (its own stream: the points above stay as they were)
    for dtype in (np.float32, np.float64):
        x = digamma_points(dtype, digamma_rng)
        out[np.dtype(dtype).name].update(digamma_x=_encode(x), digamma=_encode(tf.math.digamma(x).numpy()))
    OUT.write_text(json.dumps({"tensorflow": tf.__version__, **out}, indent=1) + "\n")
    print(f"{OUT}: {sum(len(np.frombuffer(base64.b64decode(v['a']), 'u1')) for v in out.values())} bytes of a")


if __name__ == "__main__":
    main()
