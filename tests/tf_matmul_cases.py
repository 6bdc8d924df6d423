"""The operands of the recorded matrix products (benchmarks/record_tf_matmul.py writes tests/data/tf_matmul_bits.json,
tests/kernels/test_tf_matmul.py reads it): drawn again from the seed and the case's index, so the JSON holds no inputs."""
from __future__ import annotations

import hashlib

import numpy as np

SEED = 2026
FIELDS = ["index", "batch_a", "batch_b", "m", "k", "n", "ta", "tb", "sha256", "first"]


def operands(case):
    """The case's operands as TensorFlow receives them (a transposed one stored transposed) and as tapecli's
    kernel sees them (a transposed view of that: what tf.matmul's flags and the gradients give it)."""
    rng = np.random.default_rng([SEED, case["index"]])
    m, k, n = case["m"], case["k"], case["n"]
    stored_a = rng.standard_normal(tuple(case["batch_a"]) + ((k, m) if case["ta"] else (m, k))).astype(np.float32)
    stored_b = rng.standard_normal(tuple(case["batch_b"]) + ((n, k) if case["tb"] else (k, n))).astype(np.float32)
    seen_a = np.swapaxes(stored_a, -1, -2) if case["ta"] else stored_a
    seen_b = np.swapaxes(stored_b, -1, -2) if case["tb"] else stored_b
    return stored_a, stored_b, seen_a, seen_b


def digest(x: np.ndarray) -> str:
    """The first 16 hex digits of the SHA-256 of the result's float32 bits (C order)."""
    return hashlib.sha256(np.ascontiguousarray(x, np.float32).tobytes()).hexdigest()[:16]
