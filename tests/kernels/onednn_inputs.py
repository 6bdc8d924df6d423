"""The float32 inputs of tests/data/tf_onednn_eltwise_bits.json, built from the recipe recorded there (shared by
benchmarks/record_tf_onednn_eltwise.py, which records TensorFlow's outputs for them, and the test)."""
from __future__ import annotations

import numpy as np


def inputs(recipe: dict) -> np.ndarray:
    """Every ``stride``-th float32 bit pattern (every exponent, both signs, infinities and NaN), evenly spaced
    grids, the ``around`` neighbours on either side of each edge (bit patterns), and the special values."""
    parts = [np.arange(0, 2 ** 32, recipe["stride"], dtype=np.uint64).astype(np.uint32).view(np.float32)]
    parts += [np.linspace(lo, hi, n, dtype=np.float32) for lo, hi, n in recipe["grids"]]
    k = recipe["around"]
    for edge in recipe["edges"]:
        bits = np.uint32(int(edge, 16))
        parts.append((np.arange(-k, k + 1, dtype=np.int64) + int(bits)).astype(np.uint32).view(np.float32))
    parts.append(np.array([int(h, 16) for h in recipe["special"]], np.uint32).view(np.float32))
    return np.concatenate(parts)


def pre_activation(x: np.ndarray) -> np.ndarray:
    """What the fused kernel's post-op reads of x: ``x * 1.0 + 0.0`` as oneDNN computes it, subnormal numbers read
    as zeros (so -0 and a negative subnormal become +0, a signalling NaN a quiet one)."""
    bits = x.view(np.uint32)
    flushed = np.where((bits & 0x7FFFFFFF) < 0x00800000, bits & 0x80000000, bits).astype(np.uint32).view(np.float32)
    with np.errstate(invalid="ignore"):
        return flushed + np.float32(0)
